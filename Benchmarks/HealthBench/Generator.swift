import ContextProviderKit
import Foundation

/// Writes realistic Apple Health exports (`export.xml`) and metric CSV files, deterministically
/// from a seed: several sources (iPhone, Watch, a scale, a sleep app) with overlapping step and
/// distance counts, heart-rate records with `MetadataEntry` children, sleep stages, types the
/// provider ignores, `Correlation`, `Workout` and `ActivitySummary` elements, and the DOCTYPE with
/// its internal DTD that real exports start with.
struct ExportGenerator {
    /// SplitMix64: small, fast and the same on every platform.
    typealias Random = SplitMix64

    static let dtd = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT ExportDate EMPTY>
        <!ATTLIST ExportDate
          value CDATA #REQUIRED
        >
        <!ELEMENT Me EMPTY>
        <!ATTLIST Me
          HKCharacteristicTypeIdentifierDateOfBirth         CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBiologicalSex       CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBloodType           CDATA #REQUIRED
          HKCharacteristicTypeIdentifierFitzpatrickSkinType CDATA #REQUIRED
          HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          \(Self.sampleAttributes(width: 14))
        >
        <!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
        <!ELEMENT Correlation ((MetadataEntry|Record)*)>
        <!ATTLIST Correlation
          type          CDATA #REQUIRED
          \(Self.sampleAttributes(width: 14))
        >
        <!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
        <!ATTLIST Workout
          workoutActivityType   CDATA #REQUIRED
          duration              CDATA #IMPLIED
          durationUnit          CDATA #IMPLIED
          \(Self.sampleAttributes(width: 22))
        >
        <!ELEMENT WorkoutStatistics EMPTY>
        <!ATTLIST WorkoutStatistics
          type                       CDATA #REQUIRED
          startDate                  CDATA #REQUIRED
          endDate                    CDATA #REQUIRED
          average                    CDATA #IMPLIED
          minimum                    CDATA #IMPLIED
          maximum                    CDATA #IMPLIED
          sum                        CDATA #IMPLIED
          unit                       CDATA #IMPLIED
        >
        <!ELEMENT ActivitySummary EMPTY>
        <!ATTLIST ActivitySummary
          dateComponents           CDATA #IMPLIED
          activeEnergyBurned       CDATA #IMPLIED
          activeEnergyBurnedGoal   CDATA #IMPLIED
          activeEnergyBurnedUnit   CDATA #IMPLIED
          appleExerciseTime        CDATA #IMPLIED
          appleExerciseTimeGoal    CDATA #IMPLIED
          appleStandHours          CDATA #IMPLIED
          appleStandHoursGoal      CDATA #IMPLIED
        >
        <!ELEMENT MetadataEntry EMPTY>
        <!ATTLIST MetadataEntry
          key   CDATA #REQUIRED
          value CDATA #REQUIRED
        >
        ]>

        """

    /// The attributes every sample element (`Record`, `Correlation`, `Workout`) has, names padded
    /// to `width` columns as in a real export's DTD.
    static func sampleAttributes(width: Int) -> String {
        let attributes = [
            ("sourceName", "REQUIRED"), ("sourceVersion", "IMPLIED"), ("device", "IMPLIED"), ("creationDate", "IMPLIED"),
            ("startDate", "REQUIRED"), ("endDate", "REQUIRED"),
        ]
        return attributes.map { name, use in name.padding(toLength: width, withPad: " ", startingAt: 0) + "CDATA #" + use }
            .joined(separator: "\n  ")
    }

    static let phone = (
        name: "Jane’s iPhone", version: "17.2.1",
        device: "&lt;&lt;HKDevice: 0x283f9c3c0&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.2.1&gt;")
    static let watch = (
        name: "Jane’s Apple Watch", version: "10.2",
        device: "&lt;&lt;HKDevice: 0x283f9d1a0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:10.2&gt;")
    static let scale = (name: "Withings &amp; Health Mate", version: "6.4.0", device: "")
    static let sleepApp = (name: "AutoSleep", version: "7.1", device: "")

    let seed: UInt64
    /// The first day, as days since 1970-01-01.
    let firstDay: Int
    /// The UTC offset written in timestamps, in minutes.
    let offsetMinutes: Int

    /// Watch-wearer density (samples every 5–10 minutes, as real exports of a few years reaching
    /// a gigabyte have) instead of hourly samples.
    let dense: Bool

    init(seed: UInt64, firstDay: Int = 19_723 /* 2024-01-01 */, offsetMinutes: Int = 60, dense: Bool = false) {
        self.seed = seed
        self.dense = dense
        self.firstDay = firstDay
        self.offsetMinutes = offsetMinutes
    }

    // MARK: Dates

    static func civil(_ day: Int) -> (Int, Int, Int) {
        let date = GregorianDays.date(days: day)
        return (date.year, date.month, date.day)
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    func dateString(_ day: Int) -> String {
        let (y, m, d) = Self.civil(day)
        return "\(y)-\(Self.two(m))-\(Self.two(d))"
    }

    /// `2024-01-02 08:00:00 +0100` for a day and a second of that day (may overflow into the next).
    func timestamp(_ day: Int, _ second: Int) -> String {
        let carry = second >= 0 ? second / 86_400 : (second - 86_399) / 86_400
        let d = day + carry
        let s = second - carry * 86_400
        let offset = abs(offsetMinutes)
        return "\(dateString(d)) \(Self.two(s / 3600)):\(Self.two(s / 60 % 60)):\(Self.two(s % 60)) \(offsetMinutes < 0 ? "-" : "+")\(Self.two(offset / 60))\(Self.two(offset % 60))"
    }

    // MARK: Export

    /// Writes an export of `days` days, or, with `targetBytes`, as many days as needed to reach
    /// that size. Calls `write` with pieces of the file.
    func writeExport(days: Int?, targetBytes: Int? = nil, write: (String) -> Void) -> (days: Int, bytes: Int) {
        var random = Random(state: seed)
        var bytes = 0
        func emit(_ text: String) {
            bytes += text.utf8.count
            write(text)
        }
        emit(Self.dtd)
        emit("<HealthData locale=\"en_US\">\n")
        emit(" <ExportDate value=\"\(timestamp(firstDay + (days ?? 3650), 9 * 3600))\"/>\n")
        emit(" <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1988-04-12\" HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexFemale\" HKCharacteristicTypeIdentifierBloodType=\"HKBloodTypeNotSet\" HKCharacteristicTypeIdentifierFitzpatrickSkinType=\"HKFitzpatrickSkinTypeNotSet\" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=\"None\"/>\n")
        var summaries: [String] = []
        var day = firstDay
        var weight = 68.0
        while true {
            if let days, day - firstDay >= days { break }
            if let targetBytes, bytes >= targetBytes - 200 { break }
            var piece = ""
            dayRecords(day, &random, &weight, into: &piece)
            emit(piece)
            if summaries.count < 4000 {
                let (y, m, d) = Self.civil(day)
                summaries.append(" <ActivitySummary dateComponents=\"\(y)-\(Self.two(m))-\(Self.two(d))\" activeEnergyBurned=\"\(random.int(280...760))\" activeEnergyBurnedGoal=\"500\" activeEnergyBurnedUnit=\"Cal\" appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"\(random.int(5...70))\" appleExerciseTimeGoal=\"30\" appleStandHours=\"\(random.int(8...14))\" appleStandHoursGoal=\"12\"/>\n")
            }
            day += 1
        }
        for summary in summaries { emit(summary) }
        emit("</HealthData>\n")
        return (day - firstDay, bytes)
    }

    func record(
        _ type: String, _ source: (name: String, version: String, device: String), unit: String?, start: Int, end: Int,
        day: Int, value: String, children: [String] = [], into out: inout String
    ) {
        out += " <Record type=\"\(type)\" sourceName=\"\(source.name)\" sourceVersion=\"\(source.version)\""
        if !source.device.isEmpty { out += " device=\"\(source.device)\"" }
        if let unit { out += " unit=\"\(unit)\"" }
        out += " creationDate=\"\(timestamp(day, end + 120))\" startDate=\"\(timestamp(day, start))\" endDate=\"\(timestamp(day, end))\" value=\"\(value)\""
        if children.isEmpty {
            out += "/>\n"
        } else {
            out += ">\n"
            for child in children { out += "  \(child)\n" }
            out += " </Record>\n"
        }
    }

    func dayRecords(_ day: Int, _ random: inout Random, _ weight: inout Double, into out: inout String) {
        let weekend = (day + 3) % 7 >= 5
        let activity = max(0.3, random.gauss(weekend ? 1.15 : 0.95, 0.25))
        // Sleep: the night ending this morning, from the Watch (stages) and iPhone (in bed).
        let bedtime = -3600 * 1 - random.int(0...5400)  // 21:30–23:00 the evening before
        var cursor = bedtime + random.int(600...1500)
        record("HKCategoryTypeIdentifierSleepAnalysis", Self.phone, unit: nil, start: bedtime, end: 7 * 3600 + random.int(0...2400), day: day, value: "HKCategoryValueSleepAnalysisInBed", into: &out)
        let wake = 6 * 3600 + random.int(0...5400)
        let stages = ["HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepDeep", "HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepREM", "HKCategoryValueSleepAnalysisAwake"]
        var stage = 0
        while cursor < wake {
            let length = min(wake - cursor, random.int(900...3000))
            let (startDay, startSecond) = cursor < 0 ? (day - 1, cursor + 86_400) : (day, cursor)
            record("HKCategoryTypeIdentifierSleepAnalysis", Self.watch, unit: nil, start: startSecond, end: startSecond + length, day: startDay, value: stages[stage % stages.count], into: &out)
            cursor += length
            stage += 1
        }
        if dense {
            denseDay(day, &random, activity, into: &out)
        }
        // Steps, distance and flights per hour from the iPhone; the Watch counts a bit more.
        var hour = dense ? 22 : 7
        while hour < 22 {
            let base = max(0, random.gauss(620 * activity, 260))
            if base > 30 {
                let start = hour * 3600 + random.int(0...900)
                let end = start + random.int(600...2400)
                let phoneSteps = Int(base)
                let watchSteps = Int(base * 1.06)
                record("HKQuantityTypeIdentifierStepCount", Self.phone, unit: "count", start: start, end: end, day: day, value: "\(phoneSteps)", into: &out)
                record("HKQuantityTypeIdentifierStepCount", Self.watch, unit: "count", start: start, end: end, day: day, value: "\(watchSteps)", into: &out)
                let km = Double(phoneSteps) * 0.000_74
                record("HKQuantityTypeIdentifierDistanceWalkingRunning", Self.phone, unit: "km", start: start, end: end, day: day, value: String(format: "%.5f", km), into: &out)
                record("HKQuantityTypeIdentifierDistanceWalkingRunning", Self.watch, unit: "km", start: start, end: end, day: day, value: String(format: "%.5f", km * 1.05), into: &out)
                if random.unit() < 0.35 {
                    record("HKQuantityTypeIdentifierFlightsClimbed", Self.phone, unit: "count", start: start, end: end, day: day, value: "\(random.int(1...4))", into: &out)
                }
                record("HKQuantityTypeIdentifierActiveEnergyBurned", Self.watch, unit: "kcal", start: start, end: end, day: day, value: String(format: "%.3f", base * 0.045), into: &out)
                record("HKQuantityTypeIdentifierBasalEnergyBurned", Self.watch, unit: "kcal", start: start, end: end, day: day, value: String(format: "%.3f", 60 + random.unit() * 8), into: &out)
            }
            // Heart rate twice an hour, with the motion context as metadata.
            for half in 0..<2 {
                let at = hour * 3600 + half * 1800 + random.int(0...600)
                let bpm = max(48, random.gauss(72 + 18 * (base / 900), 8))
                record("HKQuantityTypeIdentifierHeartRate", Self.watch, unit: "count/min", start: at, end: at, day: day, value: String(format: "%.0f", bpm), children: ["<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(random.int(0...1))\"/>"], into: &out)
            }
            hour += 1
        }
        record("HKQuantityTypeIdentifierRestingHeartRate", Self.watch, unit: "count/min", start: 60, end: 86_000, day: day, value: String(format: "%.0f", random.gauss(58, 2.5)), into: &out)
        record("HKQuantityTypeIdentifierHeadphoneAudioExposure", Self.phone, unit: "dBASPL", start: 18 * 3600, end: 18 * 3600 + 1800, day: day, value: String(format: "%.1f", random.gauss(68, 5)), into: &out)
        if random.unit() < 0.4 {
            weight += random.gauss(-0.02, 0.25)
            record("HKQuantityTypeIdentifierBodyMass", Self.scale, unit: "kg", start: 7 * 3600 + 600, end: 7 * 3600 + 600, day: day, value: String(format: "%.2f", weight), into: &out)
        }
        if random.unit() < 0.1 {
            // A manual entry in pounds from the iPhone.
            record("HKQuantityTypeIdentifierBodyMass", Self.phone, unit: "lb", start: 20 * 3600, end: 20 * 3600, day: day, value: String(format: "%.1f", (weight + 0.6) / 0.453_592_37), into: &out)
        }
        if random.unit() < 0.15 {
            let at = 8 * 3600
            let systolic = random.int(108...128)
            let diastolic = random.int(68...82)
            out += " <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"\(Self.scale.name)\" sourceVersion=\"6.4.0\" creationDate=\"\(timestamp(day, at))\" startDate=\"\(timestamp(day, at))\" endDate=\"\(timestamp(day, at))\">\n"
            out += "  <Record type=\"HKQuantityTypeIdentifierBloodPressureSystolic\" sourceName=\"\(Self.scale.name)\" unit=\"mmHg\" startDate=\"\(timestamp(day, at))\" endDate=\"\(timestamp(day, at))\" value=\"\(systolic)\"/>\n"
            out += "  <Record type=\"HKQuantityTypeIdentifierBloodPressureDiastolic\" sourceName=\"\(Self.scale.name)\" unit=\"mmHg\" startDate=\"\(timestamp(day, at))\" endDate=\"\(timestamp(day, at))\" value=\"\(diastolic)\"/>\n"
            out += " </Correlation>\n"
            record("HKQuantityTypeIdentifierBloodPressureSystolic", Self.scale, unit: "mmHg", start: at, end: at, day: day, value: "\(systolic)", into: &out)
            record("HKQuantityTypeIdentifierBloodPressureDiastolic", Self.scale, unit: "mmHg", start: at, end: at, day: day, value: "\(diastolic)", into: &out)
        }
        if random.unit() < 0.3 {
            let start = 17 * 3600 + random.int(0...3600)
            let minutes = Double(random.int(20...55))
            out += " <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"\(String(format: "%.2f", minutes))\" durationUnit=\"min\" sourceName=\"\(Self.watch.name)\" sourceVersion=\"10.2\" device=\"\(Self.watch.device)\" creationDate=\"\(timestamp(day, start + Int(minutes) * 60 + 60))\" startDate=\"\(timestamp(day, start))\" endDate=\"\(timestamp(day, start + Int(minutes) * 60))\">\n"
            out += "  <MetadataEntry key=\"HKIndoorWorkout\" value=\"0\"/>\n"
            out += "  <WorkoutStatistics type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" startDate=\"\(timestamp(day, start))\" endDate=\"\(timestamp(day, start + Int(minutes) * 60))\" sum=\"\(String(format: "%.2f", minutes / 6))\" unit=\"km\"/>\n"
            out += " </Workout>\n"
        }
    }

    /// Steps, distance, energy and heart rate every few minutes, from the iPhone and the Watch.
    func denseDay(_ day: Int, _ random: inout Random, _ activity: Double, into out: inout String) {
        for hour in 7..<22 {
            let hourly = max(0, random.gauss(620 * activity, 260))
            for slot in 0..<6 {
                let base = hourly / 6 * (0.5 + random.unit())
                let start = hour * 3600 + slot * 600 + random.int(0...120)
                let end = start + random.int(300...470)
                if base > 5 {
                    let phoneSteps = Int(base)
                    record("HKQuantityTypeIdentifierStepCount", Self.phone, unit: "count", start: start, end: end, day: day, value: "\(phoneSteps)", into: &out)
                    record("HKQuantityTypeIdentifierStepCount", Self.watch, unit: "count", start: start, end: end, day: day, value: "\(Int(base * 1.06))", into: &out)
                    let km = Double(phoneSteps) * 0.000_74
                    record("HKQuantityTypeIdentifierDistanceWalkingRunning", Self.phone, unit: "km", start: start, end: end, day: day, value: String(format: "%.5f", km), into: &out)
                    record("HKQuantityTypeIdentifierDistanceWalkingRunning", Self.watch, unit: "km", start: start, end: end, day: day, value: String(format: "%.5f", km * 1.05), into: &out)
                }
                if slot == 0, random.unit() < 0.35 {
                    record("HKQuantityTypeIdentifierFlightsClimbed", Self.phone, unit: "count", start: start, end: end, day: day, value: "\(random.int(1...4))", into: &out)
                }
                for half in 0..<2 {
                    let at = start + half * 300
                    record("HKQuantityTypeIdentifierActiveEnergyBurned", Self.watch, unit: "kcal", start: at, end: at + 300, day: day, value: String(format: "%.3f", base * 0.0225 + random.unit()), into: &out)
                    record("HKQuantityTypeIdentifierBasalEnergyBurned", Self.watch, unit: "kcal", start: at, end: at + 300, day: day, value: String(format: "%.3f", 5 + random.unit() * 0.7), into: &out)
                    let bpm = max(48, random.gauss(72 + 18 * (base / 150), 8))
                    record("HKQuantityTypeIdentifierHeartRate", Self.watch, unit: "count/min", start: at + 60, end: at + 60, day: day, value: String(format: "%.0f", bpm), children: ["<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(random.int(0...1))\"/>"], into: &out)
                }
            }
        }
    }

    // MARK: CSV

    /// A CSV of daily values, in the units another app might use (miles, kJ, pounds, hours).
    func writeCSV(days: Int, write: (String) -> Void) {
        var random = Random(state: seed ^ 0x5EED)
        write("date,metric,value,unit\n")
        var weight = 154.0
        for offset in 0..<days {
            let day = firstDay + offset
            let date = dateString(day)
            let steps = max(800, Int(random.gauss(8800, 2600)))
            write("\(date),steps,\(steps),count\n")
            write("\(date),distance,\(String(format: "%.2f", Double(steps) * 0.000_46)),mi\n")
            write("\(date),activeEnergy,\(String(format: "%.0f", Double(steps) * 0.19)),kJ\n")
            write("\(date),restingHeartRate,\(String(format: "%.0f", random.gauss(61, 2))),bpm\n")
            if offset % 3 == 0 {
                weight += random.gauss(-0.1, 0.5)
                write("\(date),bodyMass,\(String(format: "%.1f", weight)),lb\n")
            }
            write("\(date),sleep,\(String(format: "%.2f", random.gauss(7.2, 0.7))),h\n")
        }
    }
}

extension SplitMix64 {
    /// A normally distributed number (Box-Muller).
    mutating func gauss(_ mean: Double, _ deviation: Double) -> Double {
        let u = max(unit(), 1e-12)
        return mean + deviation * (-2 * log(u)).squareRoot() * cos(2 * .pi * unit())
    }
}
