import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Health Metric provider through its real library (`libHealthMetricProvider.so`).
@Suite("Health Metric provider")
struct HealthMetricProviderTests {
    static let id = "com.contexthost.health-metric"
    static let types: [String: String] = [
        "steps": "HKQuantityTypeIdentifierStepCount", "distance": "HKQuantityTypeIdentifierDistanceWalkingRunning",
        "energy": "HKQuantityTypeIdentifierActiveEnergyBurned", "flights": "HKQuantityTypeIdentifierFlightsClimbed",
        "hr": "HKQuantityTypeIdentifierHeartRate", "resting": "HKQuantityTypeIdentifierRestingHeartRate",
        "mass": "HKQuantityTypeIdentifierBodyMass", "sleep": "HKCategoryTypeIdentifierSleepAnalysis",
        "basal": "HKQuantityTypeIdentifierBasalEnergyBurned", "audio": "HKQuantityTypeIdentifierHeadphoneAudioExposure",
    ]

    // MARK: Fixtures

    /// A `Record` line.
    static func record(
        _ type: String, _ value: String, unit: String? = "count", start: String, end: String? = nil,
        source: String = "Jane’s iPhone", children: [String] = []
    ) -> String {
        var line = "<Record type=\"\(types[type] ?? type)\" sourceName=\"\(source)\" sourceVersion=\"17.2\""
        if let unit { line += " unit=\"\(unit)\"" }
        line += " creationDate=\"\(end ?? start)\" startDate=\"\(start)\" endDate=\"\(end ?? start)\" value=\"\(value)\""
        if children.isEmpty { return " " + line + "/>" }
        return " " + line + ">\n" + children.map { "  " + $0 }.joined(separator: "\n") + "\n </Record>"
    }

    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
        >
        ]>
        <HealthData locale="en_US">
         <ExportDate value="2024-03-20 09:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1988-04-12" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
        """

    static func export(_ lines: [String], closed: Bool = true) -> String {
        header + "\n" + lines.joined(separator: "\n") + (closed ? "\n</HealthData>\n" : "")
    }

    static func t(_ day: String, _ time: String) -> String { "2024-03-\(day) \(time):00 +0100" }

    /// One day (2024-03-04) of every metric, from overlapping sources, with entities, metadata
    /// children, a correlation, unknown types, a workout and an activity summary.
    static let fullDay = export([
        record("steps", "5000", start: t("04", "08:00"), end: t("04", "09:00")),
        record("steps", "3000", start: t("04", "12:00"), end: t("04", "13:00")),
        record("steps", "4500", start: t("04", "08:00"), end: t("04", "09:00"), source: "Jane&apos;s Watch"),
        record("steps", "4000", start: t("04", "12:00"), end: t("04", "13:00"), source: "Jane&apos;s Watch",
               children: ["<MetadataEntry key=\"HKMetadataKeySyncVersion\" value=\"2\"/>"]),
        " <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"Cuff\" startDate=\"\(t("04", "07:00"))\" endDate=\"\(t("04", "07:00"))\">",
        "  " + record("steps", "99999", start: t("04", "07:00")),
        " </Correlation>",
        record("distance", "1500", unit: "m", start: t("04", "08:00"), end: t("04", "09:00")),
        record("distance", "2", unit: "km", start: t("04", "12:00"), end: t("04", "13:00")),
        record("energy", "200", unit: "kJ", start: t("04", "08:00"), end: t("04", "09:00"), source: "Jane&apos;s Watch"),
        record("energy", "100", unit: "kcal", start: t("04", "12:00"), end: t("04", "13:00"), source: "Jane&apos;s Watch"),
        record("flights", "3", start: t("04", "08:00"), end: t("04", "09:00")),
        record("flights", "4", start: t("04", "12:00"), end: t("04", "13:00")),
        record("hr", "60", unit: "count/min", start: t("04", "08:00"), source: "Jane&apos;s Watch",
               children: ["<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"1\"/>"]),
        record("hr", "80", unit: "count/min", start: t("04", "12:00"), source: "Jane&apos;s Watch"),
        record("hr", "100", unit: "count/min", start: t("04", "18:00"), source: "Polar &amp; Co"),
        record("resting", "55", unit: "count/min", start: t("04", "00:01"), end: t("04", "23:59"), source: "Jane&apos;s Watch"),
        record("mass", "70", unit: "kg", start: t("04", "07:00"), source: "Scale"),
        record("mass", "154", unit: "lb", start: t("04", "20:00")),
        record("sleep", "HKCategoryValueSleepAnalysisInBed", unit: nil, start: t("03", "22:30"), end: t("04", "06:45")),
        record("sleep", "HKCategoryValueSleepAnalysisAsleepCore", unit: nil, start: t("03", "23:00"), end: t("03", "23:45"), source: "Jane&apos;s Watch"),
        record("sleep", "HKCategoryValueSleepAnalysisAsleepDeep", unit: nil, start: t("03", "23:45"), end: t("04", "01:15"), source: "Jane&apos;s Watch"),
        record("sleep", "HKCategoryValueSleepAnalysisAwake", unit: nil, start: t("04", "01:15"), end: t("04", "01:30"), source: "Jane&apos;s Watch"),
        record("sleep", "HKCategoryValueSleepAnalysisAsleepREM", unit: nil, start: t("04", "01:30"), end: t("04", "06:30"), source: "Jane&apos;s Watch"),
        record("sleep", "HKCategoryValueSleepAnalysisAsleepUnspecified", unit: nil, start: t("04", "14:00"), end: t("04", "14:30"), source: "AutoSleep"),
        record("basal", "60", unit: "kcal", start: t("04", "08:00")),
        record("basal", "61", unit: "kcal", start: t("04", "09:00")),
        record("audio", "70", unit: "dBASPL", start: t("04", "18:00")),
        " <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"30\" durationUnit=\"min\" sourceName=\"Watch\" startDate=\"\(t("04", "17:00"))\" endDate=\"\(t("04", "17:30"))\">",
        "  <WorkoutStatistics type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" startDate=\"\(t("04", "17:00"))\" endDate=\"\(t("04", "17:30"))\" sum=\"5\" unit=\"km\"/>",
        " </Workout>",
        " <ActivitySummary dateComponents=\"2024-03-04\" activeEnergyBurned=\"300\" activeEnergyBurnedUnit=\"Cal\"/>",
    ])

    /// Steps for a week (Mon 2024-03-04 … Sun 03-10, none on Friday) and the next Monday.
    static let stepsWeek = export(
        [("04", "10000"), ("05", "8000"), ("06", "12000"), ("07", "6000"), ("09", "11000"), ("10", "9000"), ("11", "5000")]
            .map { record("steps", $0.1, start: t($0.0, "10:00"), end: t($0.0, "11:00")) })

    /// A provider over `file` (a path inside `directory`), caching in `directory/cache`.
    static func provider(
        _ directory: TemporaryDirectory, file: String, locale: String = "en-US", extra: JSONObject = [:]
    ) throws -> ProviderHarness {
        var settings: JSONObject = ["export": .string(file), "cacheDirectory": .string(directory.path + "/cache")]
        for (key, value) in extra { settings[key] = value }
        return try ProviderHarness(product: "HealthMetricProvider", providerID: id, settings: settings, locale: locale)
    }

    /// An export file in a temporary folder (deleted with the value), and providers reading it.
    struct Export {
        let directory: TemporaryDirectory
        let file: String

        init(_ text: String, name: String = "export.xml") throws {
            directory = try TemporaryDirectory()
            file = try directory.write(name, text)
        }

        func provider(locale: String = "en-US", extra: JSONObject = [:]) throws -> ProviderHarness {
            try HealthMetricProviderTests.provider(directory, file: file, locale: locale, extra: extra)
        }
    }

    /// This test's own copies of the two sample exports (`fullDay`, `stepsWeek`), read by the
    /// providers it makes.
    let fullDayExport: Export
    let stepsWeekExport: Export

    init() throws {
        fullDayExport = try Export(Self.fullDay)
        stepsWeekExport = try Export(Self.stepsWeek)
    }

    /// Collector and availability calls run in the provider's tasks: allow for a test process
    /// whose cooperative pool is busy with other suites' blocking tests.
    static let taskTimeout = 60.0

    /// Submits one collector step and answers the outcome.
    static func submit(_ provider: ProviderHarness, _ values: JSONObject) async throws -> JSONValue {
        let session = JSONValue.string(UUID().uuidString)
        _ = try await provider.call("collect/start", ["sessionId": session], timeout: taskTimeout)
        return try await provider.call(
            "collect/submit", ["sessionId": session, "stepId": "metric", "values": .object(values)], timeout: taskTimeout)
    }

    /// Collects an item.
    static func item(_ provider: ProviderHarness, _ metric: String, _ period: String, _ date: String) async throws -> JSONValue {
        let result = try await Self.submit(provider, ["metric": .string(metric), "period": .string(period), "date": .string(date)])
        #expect(result["outcome"] == "item", "\(result)")
        return try #require(result["item"])
    }

    static func facts(_ detail: JSONValue) -> [String: String] {
        var result: [String: String] = [:]
        for block in detail["blocks"]?.arrayValue ?? [] where block["type"] == "facts" {
            for fact in block["facts"]?.arrayValue ?? [] {
                if let label = fact["label"]?.stringValue, let value = fact["value"]?.stringValue { result[label] = value }
            }
        }
        return result
    }

    static func encoded(_ provider: ProviderHarness, _ item: JSONValue, _ representation: String? = nil) async throws -> JSONValue {
        var params: JSONObject = ["item": item]
        if let representation { params["representation"] = .string(representation) }
        let answer = try await provider.call("item/encode", .object(params))
        let base64 = try #require(answer["data"]?.stringValue)
        let bytes = try #require(Data(base64Encoded: base64))
        if answer["contentType"]?.stringValue?.hasPrefix("application/json") == true {
            return try JSONValue(parsing: Array(bytes))
        }
        return .string(String(decoding: bytes, as: UTF8.self))
    }

    static func line(of needle: String, in text: String) -> Int {
        let lines = text.components(separatedBy: "\n")
        return (lines.firstIndex { $0.contains(needle) } ?? -1) + 1
    }

    // MARK: Sample data

    @Test("the bundled sample export offers every metric, the three periods and its last day")
    func sampleForm() async throws {
        let directory = try TemporaryDirectory()
        let provider = try Self.provider(directory, file: BuildProducts.packageRoot + "/data/health/export.xml")
        let availability = try await provider.call("provider/availability", timeout: Self.taskTimeout)
        #expect(availability["available"] == true)
        let form = try await provider.call("collect/start", ["sessionId": "s"], timeout: Self.taskTimeout)
        let fields = form["fields"]?.arrayValue ?? []
        #expect(fields.compactMap { $0["id"]?.stringValue } == ["metric", "period", "date"])
        let metrics = (fields[0]["options"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue }
        #expect(metrics == ["steps", "distance", "activeEnergy", "flightsClimbed", "heartRate", "restingHeartRate", "bodyMass", "sleep"])
        #expect((fields[1]["options"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue } == ["day", "week", "month"])
        #expect(fields[2]["type"] == "date" || fields[2]["kind"] == "date")
        #expect(fields[2]["default"] == "2024-01-28")
        let item = try await Self.item(provider, "steps", "week", "2024-01-10")
        let content = try #require(item["content"])
        #expect(content["source"]?["ignoredUnknownTypes"]?.numberValue ?? 0 > 0)
        #expect(content["source"]?["skippedMalformed"] == 0)
        #expect(content["source"]?["truncated"] == false)
        #expect(content["days"]?.arrayValue?.count == 7)
    }

    @Test("every metric of the sample export matches an independent oracle (Python's XML parser)")
    func oracle() async throws {
        // data/health/oracle/export-daily.csv comes from data/health/oracle/health_oracle.py.
        let oracleText = try String(contentsOfFile: BuildProducts.packageRoot + "/data/health/oracle/export-daily.csv", encoding: .utf8)
        var expected: [String: [(date: String, value: Double, min: Double, max: Double, count: Int)]] = [:]
        for line in oracleText.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",").map(String.init)
            expected[fields[0], default: []].append((fields[1], Double(fields[2])!, Double(fields[3])!, Double(fields[4])!, Int(fields[5])!))
        }
        #expect(expected.count == 8)
        let directory = try TemporaryDirectory()
        let provider = try Self.provider(directory, file: BuildProducts.packageRoot + "/data/health/export.xml", extra: ["units": "metric"])
        let decimals = ["steps": 0, "distance": 2, "activeEnergy": 0, "flightsClimbed": 0, "heartRate": 1, "restingHeartRate": 1, "bodyMass": 1, "sleep": 2]
        for (metric, rows) in expected {
            let item = try await Self.item(provider, metric, "month", "2024-01-15")
            let days = item["content"]?["days"]?.arrayValue ?? []
            #expect(days.count == rows.count, "\(metric)")
            let tolerance = 0.5 * pow(10, -Double(decimals[metric] ?? 0)) + 1e-9
            for (day, row) in zip(days, rows) {
                #expect(day["date"]?.stringValue == row.date, "\(metric)")
                let value = day["value"]?.numberValue ?? .nan
                #expect(abs(value - row.value) <= tolerance, "\(metric) \(row.date): \(value) vs \(row.value)")
                #expect(day["samples"]?.intValue == row.count, "\(metric) \(row.date)")
                if let low = day["min"]?.numberValue, let high = day["max"]?.numberValue {
                    #expect(abs(low - row.min) <= tolerance && abs(high - row.max) <= tolerance, "\(metric) \(row.date)")
                }
            }
        }
    }

    @Test("records split across tiny read chunks give the same aggregates")
    func chunkBoundaries() async throws {
        let directory = try TemporaryDirectory()
        let sample = BuildProducts.packageRoot + "/data/health/export.xml"
        let normal = try Self.provider(directory, file: sample)
        let other = try TemporaryDirectory()
        let tiny = try Self.provider(other, file: sample, extra: ["chunkSize": 97])
        for metric in ["steps", "heartRate", "sleep", "bodyMass"] {
            let a = try await Self.item(normal, metric, "month", "2024-01-15")
            let b = try await Self.item(tiny, metric, "month", "2024-01-15")
            #expect(a["content"] == b["content"], "\(metric)")
        }
    }

    // MARK: Aggregation

    @Test("sums take the larger source per day, skip correlation children and decode entities")
    func sumsAcrossSources() async throws {
        let provider = try fullDayExport.provider()
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(steps["content"]?["value"] == 8500)
        #expect(steps["content"]?["unit"] == "steps")
        #expect(steps["content"]?["goal"]?["value"] == 10000)
        let chip = try await provider.call("item/preview", ["item": steps])
        #expect(chip["title"] == "8,500 steps")
        #expect(chip["tone"] == "warning")
        #expect(chip["icon"] == "figure.walk")
        #expect(chip["subtitle"] == "Steps · Mon 2024-03-04 · goal 10,000 steps")
        let flights = try await Self.item(provider, "flightsClimbed", "day", "2024-03-04")
        #expect(flights["content"]?["value"] == 7)
        let energy = try await Self.item(provider, "activeEnergy", "day", "2024-03-04")
        #expect(energy["content"]?["value"] == 148)  // 200 kJ + 100 kcal
        #expect(energy["content"]?["unit"] == "kcal")
    }

    @Test("heart rate and body mass are averaged with min and max")
    func averages() async throws {
        let provider = try fullDayExport.provider()
        let heart = try await Self.item(provider, "heartRate", "day", "2024-03-04")
        #expect(heart["content"]?["value"] == 80)
        let day = try #require(heart["content"]?["days"]?.arrayValue?.last)
        #expect(day["min"] == 60)
        #expect(day["max"] == 100)
        #expect(day["samples"] == 3)
        let detail = try await provider.call("item/detail", ["item": heart])
        let facts = Self.facts(detail)
        #expect(facts["Minimum (7 days)"] == "60.0 bpm")
        #expect(facts["Maximum (7 days)"] == "100.0 bpm")
        #expect(facts["Average (7 days)"] == "80.0 bpm")
        let chart = try #require(detail["blocks"]?.arrayValue?.first { $0["type"] == "chart" })
        #expect(chart["kind"] == "line")
        #expect(chart["thresholds"] == nil || chart["thresholds"] == [])
        let resting = try await Self.item(provider, "restingHeartRate", "day", "2024-03-04")
        let restingChip = try await provider.call("item/preview", ["item": resting])
        #expect(restingChip["tone"] == "good")  // 55 ≤ 60
        // 70 kg and 154 lb average 154.2 lb for en-US.
        let mass = try await Self.item(provider, "bodyMass", "day", "2024-03-04")
        #expect(mass["content"]?["value"] == 154.2)
        #expect(mass["content"]?["unit"] == "lb")
        #expect(mass["content"]?["days"]?.arrayValue?.last?["min"] == 154)
    }

    @Test("sleep counts asleep stages of the night, attributed to the day it ends")
    func sleep() async throws {
        let provider = try fullDayExport.provider()
        let sleep = try await Self.item(provider, "sleep", "day", "2024-03-04")
        // 23:00–23:45 + 23:45–01:15 + 01:30–06:30 = 7.25 h (in bed and awake excluded; the nap
        // from another source is smaller).
        #expect(sleep["content"]?["value"] == 7.25)
        #expect(sleep["content"]?["days"]?.arrayValue?.count == 1)
        let chip = try await provider.call("item/preview", ["item": sleep])
        #expect(chip["title"] == "7 h 15 min")
        #expect(chip["tone"] == "good")
        let noNight = try await Self.submit(provider, ["metric": "sleep", "period": "day", "date": "2024-03-03"])
        #expect(noNight["outcome"] == "invalid")
        #expect(noNight["fieldErrors"]?["date"]?.stringValue?.contains("No sleep data on 2024-03-03") == true)
    }

    @Test("units follow the client's locale: miles, kilometres, kilojoules and number punctuation")
    func locales() async throws {
        let us = try fullDayExport.provider(locale: "en-US")
        let miles = try await Self.item(us, "distance", "day", "2024-03-04")
        #expect(miles["content"]?["value"] == 2.17)  // 3.5 km
        #expect(miles["content"]?["unit"] == "mi")
        let german = try fullDayExport.provider(locale: "de-DE")
        let kilometres = try await Self.item(german, "distance", "day", "2024-03-04")
        #expect(kilometres["content"]?["value"] == 3.5)
        let chip = try await german.call("item/preview", ["item": kilometres])
        #expect(chip["title"] == "3,50 km")
        let mass = try await Self.item(german, "bodyMass", "day", "2024-03-04")
        #expect(mass["content"]?["value"] == 69.9)
        #expect(mass["content"]?["unit"] == "kg")
        let australian = try fullDayExport.provider(locale: "en-AU")
        let energy = try await Self.item(australian, "activeEnergy", "day", "2024-03-04")
        #expect(energy["content"]?["unit"] == "kJ")
        #expect(energy["content"]?["value"] == 618)
        let imperial = try fullDayExport.provider(locale: "de-DE", extra: ["units": "imperial"])
        let forced = try await Self.item(imperial, "distance", "day", "2024-03-04")
        #expect(forced["content"]?["unit"] == "mi")
    }

    // MARK: Periods, goals, views

    @Test("week and month give daily averages, days met and a goal threshold")
    func periods() async throws {
        let provider = try stepsWeekExport.provider()
        let week = try await Self.item(provider, "steps", "week", "2024-03-06")
        let content = try #require(week["content"])
        #expect(content["start"] == "2024-03-04")
        #expect(content["end"] == "2024-03-10")
        #expect(content["value"] == 9333)
        #expect(content["valueKind"] == "dailyAverage")
        #expect(content["summary"]?["daysMet"] == 3)
        #expect(content["summary"]?["daysWithData"] == 6)
        #expect(content["summary"]?["total"] == 56000)
        #expect(content["summary"]?["min"] == 6000)
        #expect(content["summary"]?["max"] == 12000)
        let chip = try await provider.call("item/preview", ["item": week])
        #expect(chip["title"] == "9,333 steps/day")
        #expect(chip["subtitle"] == "Steps · week of 2024-03-04 · goal 10,000 steps")
        #expect(chip["accessory"]?["values"]?.arrayValue?.count == 6)
        let detail = try await provider.call("item/detail", ["item": week])
        #expect(detail["title"] == "Steps — week of 2024-03-04")
        let chart = try #require(detail["blocks"]?.arrayValue?.first { $0["type"] == "chart" })
        #expect(chart["kind"] == "bar")
        #expect(chart["unit"] == "steps")
        #expect(chart["thresholds"]?.arrayValue?.first?["value"] == 10000)
        #expect(chart["thresholds"]?.arrayValue?.first?["label"] == "Goal")
        #expect(chart["series"]?.arrayValue?.first?["points"]?.arrayValue?.count == 6)
        let facts = Self.facts(detail)
        #expect(facts["Days met"] == "3 of 6")
        #expect(facts["Average"] == "9,333 steps")
        #expect(facts["Minimum"] == "6,000 steps")
        #expect(facts["Maximum"] == "12,000 steps")
        #expect(facts["Days with data"] == "6 of 7")
        let month = try await Self.item(provider, "steps", "month", "2024-03-20")
        #expect(month["content"]?["start"] == "2024-03-01")
        #expect(month["content"]?["end"] == "2024-03-31")
        #expect(month["content"]?["value"] == 8714)
        #expect(month["content"]?["summary"]?["daysInRange"] == 31)
        let describe = try await provider.call("item/describe", ["item": month])
        #expect(describe["text"] == "Steps, March 2024: 8,714 steps/day (goal 10,000 steps; met on 3 of 7 days)")
        let day = try await Self.item(provider, "steps", "day", "2024-03-10")
        #expect(day["content"]?["days"]?.arrayValue?.count == 6)  // the 7 days to 03-10, Friday empty
        let empty = try await Self.submit(provider, ["metric": "steps", "period": "week", "date": "2024-02-14"])
        #expect(empty["outcome"] == "invalid")
        #expect(empty["fieldErrors"]?["date"]?.stringValue?.contains("2024-03-04 to 2024-03-11") == true)
    }

    @Test("goals come from the goals setting, with units and directions; bad goals refuse to open")
    func goals() async throws {
        let provider = try fullDayExport.provider(extra: ["goals": "steps=8000, distance>=5mi; bodyMass<=150lb, heartRate=none"])
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(try await provider.call("item/preview", ["item": steps])["tone"] == "good")
        let distance = try await Self.item(provider, "distance", "day", "2024-03-04")
        #expect(distance["content"]?["goal"]?["value"] == 5)
        #expect(try await provider.call("item/preview", ["item": distance])["tone"] == "attention")  // 2.17 of 5 mi
        let mass = try await Self.item(provider, "bodyMass", "day", "2024-03-04")
        #expect(mass["content"]?["goal"]?["direction"] == "atMost")
        #expect(try await provider.call("item/preview", ["item": mass])["tone"] == "warning")  // 154.2 lb, within 10 %
        let heart = try await Self.item(provider, "heartRate", "day", "2024-03-04")
        #expect(heart["content"]?["goal"] == nil)
        #expect(try await provider.call("item/preview", ["item": heart])["tone"] == "neutral")
        #expect(throws: (any Error).self) {
            try fullDayExport.provider(extra: ["goals": "stepz=9000"])
        }
        #expect(throws: (any Error).self) {
            try fullDayExport.provider(extra: ["goals": "sleep=8kg"])
        }
    }

    @Test("encode answers JSON with the aggregates, or CSV; other representations are refused")
    func encode() async throws {
        let provider = try stepsWeekExport.provider()
        let week = try await Self.item(provider, "steps", "week", "2024-03-06")
        let json = try await Self.encoded(provider, week)
        #expect(json["metric"] == "steps")
        #expect(json["days"]?.arrayValue?.first?["date"] == "2024-03-04")
        #expect(json["days"]?.arrayValue?.first?["value"] == 10000)
        #expect(json["summary"]?["average"] == 9333)
        let csv = try await Self.encoded(provider, week, "csv")
        #expect(csv.stringValue?.hasPrefix("date,steps,unit\n2024-03-04,10000,steps\n") == true)
        await #expect(throws: ProviderHarness.CallError.self) {
            try await provider.call("item/encode", ["item": week, "representation": "pdf"])
        }
        await #expect(throws: ProviderHarness.CallError.self) {
            try await provider.call("item/preview", ["item": ["id": "x", "providerId": .string(Self.id), "type": "health-metric", "displayName": "x", "content": ["metric": "steps"]]])
        }
    }

    // MARK: Bad data

    @Test("malformed records are reported with file:line and skipped; the rest is used")
    func malformedRecords() async throws {
        let text = Self.export([
            Self.record("steps", "4000", start: Self.t("04", "08:00")),
            Self.record("steps", "abc", start: Self.t("04", "09:00")),
            Self.record("steps", "100", start: "yesterday"),
            Self.record("distance", "3", unit: "furlong", start: Self.t("04", "09:00")),
            " <Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"W\" unit=\"count/min\" startDate=\"\(Self.t("04", "09:00"))\" endDate=\"\(Self.t("04", "09:00"))\"/>",
            " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"W\" value=12 startDate=\"\(Self.t("04", "09:00"))\" endDate=\"\(Self.t("04", "09:00"))\"/>",
            Self.record("steps", "50", start: Self.t("04", "10:00"), source: "Bad &bogus; entity"),
            Self.record("sleep", "HKCategoryValueSleepAnalysisDreaming", unit: nil, start: Self.t("04", "01:00"), end: Self.t("04", "02:00")),
            Self.record("steps", "1000", start: Self.t("04", "11:00")),
        ])
        let export = try Export(text)
        let provider = try export.provider()
        #expect(try await provider.call("provider/availability", timeout: Self.taskTimeout)["available"] == true)
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(steps["content"]?["value"] == 5000)
        let source = try #require(steps["content"]?["source"])
        #expect(source["skippedMalformed"] == 7)
        #expect(source["truncated"] == false)
        let notes = (source["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        let expected = [
            "export.xml:\(Self.line(of: "value=\"abc\"", in: text)): HKQuantityTypeIdentifierStepCount Record has value \"abc\", not a number; skipped",
            "export.xml:\(Self.line(of: "yesterday", in: text)): HKQuantityTypeIdentifierStepCount Record has startDate \"yesterday\", not a date like 2024-01-02 08:00:00 +0100; skipped",
            "export.xml:\(Self.line(of: "furlong", in: text)): HKQuantityTypeIdentifierDistanceWalkingRunning Record has unit \"furlong\", which the provider cannot convert to km; skipped",
            "export.xml:\(Self.line(of: "sourceName=\"W\" unit=", in: text)): HKQuantityTypeIdentifierHeartRate Record lacks value; skipped",
            "export.xml:\(Self.line(of: "value=12", in: text)): Record attribute value has no quoted value; skipped",
        ]
        #expect(Array(notes.prefix(5)) == expected)
        #expect(notes.contains { $0.hasPrefix("export.xml:\(Self.line(of: "&bogus;", in: text)): ") && $0.contains("unknown entity") })
        #expect(notes.contains { $0.contains("Dreaming") && $0.contains("not an HKCategoryValueSleepAnalysis value") })
        let detail = try await provider.call("item/detail", ["item": steps])
        let list = try #require(detail["blocks"]?.arrayValue?.first { $0["type"] == "list" })
        let items = (list["items"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(items.first == "7 malformed records were skipped.")
        #expect(items.contains(expected[0]))
    }

    @Test("a file that ends mid-record is reported and what was read is used")
    func truncatedInsideTag() async throws {
        let directory = try TemporaryDirectory()
        let complete = Self.export([
            Self.record("steps", "4000", start: Self.t("04", "08:00")),
            Self.record("steps", "2000", start: Self.t("04", "09:00")),
            Self.record("steps", "7000", start: Self.t("04", "10:00")),
        ], closed: false)
        let text = String(complete.dropLast(60))  // cuts the last record inside its attributes
        let file = try directory.write("export.xml", text)
        let provider = try Self.provider(directory, file: file)
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(steps["content"]?["value"] == 6000)
        #expect(steps["content"]?["source"]?["truncated"] == true)
        let note = try #require(steps["content"]?["source"]?["notes"]?.arrayValue?.first?.stringValue)
        #expect(note.hasPrefix("export.xml:\(Self.line(of: "7000", in: complete)): the file ends inside \"<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName="))
        #expect(note.hasSuffix("everything before it was used"))
    }

    @Test("a file that ends inside an open Record element skips only that record")
    func truncatedInsideElement() async throws {
        let directory = try TemporaryDirectory()
        let text = Self.export([
            Self.record("hr", "70", unit: "count/min", start: Self.t("04", "08:00")),
            Self.record("hr", "90", unit: "count/min", start: Self.t("04", "09:00"), children: ["<MetadataEntry key=\"k\" value=\"v\"/>"]),
        ], closed: false)
        let cut = String(text[..<text.range(of: " </Record>")!.lowerBound])
        let file = try directory.write("export.xml", cut)
        let provider = try Self.provider(directory, file: file)
        let heart = try await Self.item(provider, "heartRate", "day", "2024-03-04")
        #expect(heart["content"]?["value"] == 70)
        let note = try #require(heart["content"]?["source"]?["notes"]?.arrayValue?.first?.stringValue)
        #expect(note == "export.xml:\(Self.line(of: "value=\"90\"", in: text)): the file ends inside a Record (no </Record>); that record was skipped, everything before it was used")
    }

    @Test("records of unknown types are ignored and counted; their metrics are not offered")
    func unknownTypes() async throws {
        let text = Self.export([
            Self.record("steps", "4000", start: Self.t("04", "08:00")),
            Self.record("basal", "60", unit: "kcal", start: Self.t("04", "08:00")),
            Self.record("basal", "61", unit: "kcal", start: Self.t("04", "09:00")),
            Self.record("HKQuantityTypeIdentifierDietaryWater", "250", unit: "mL", start: Self.t("04", "09:00")),
        ])
        let export = try Export(text)
        let provider = try export.provider()
        let form = try await provider.call("collect/start", ["sessionId": "s"], timeout: Self.taskTimeout)
        let options = (form["fields"]?.arrayValue?.first?["options"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue }
        #expect(options == ["steps"])
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(steps["content"]?["source"]?["ignoredUnknownTypes"] == 3)
        #expect(steps["content"]?["source"]?["records"] == 4)
        #expect(steps["content"]?["source"]?["skippedMalformed"] == 0)
        let other = try await Self.submit(provider, ["metric": "sleep", "period": "day", "date": "2024-03-04"])
        #expect(other["outcome"] == "invalid")
        #expect(other["fieldErrors"]?["metric"] != nil)
    }

    @Test("empty, missing and record-less data make the provider unavailable with a reason")
    func emptyData() async throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.write("empty.xml", "")
        let emptyProvider = try Self.provider(directory, file: empty)
        let emptyAnswer = try await emptyProvider.call("provider/availability", timeout: Self.taskTimeout)
        #expect(emptyAnswer["available"] == false)
        #expect(emptyAnswer["reason"]?.stringValue?.contains("is empty") == true)

        let missingProvider = try Self.provider(directory, file: directory.path + "/nowhere/export.xml")
        let missing = try await missingProvider.call("provider/availability", timeout: Self.taskTimeout)
        #expect(missing["available"] == false)
        #expect(missing["reason"]?.stringValue?.hasPrefix("No health data at \(directory.path)/nowhere/export.xml") == true)
        await #expect(throws: ProviderHarness.CallError.self) {
            try await missingProvider.call("collect/start", ["sessionId": "s"], timeout: Self.taskTimeout)
        }

        let onlyUnknown = try directory.write("other.xml", Self.export([
            Self.record("basal", "60", unit: "kcal", start: Self.t("04", "08:00")),
            Self.record("basal", "61", unit: "kcal", start: Self.t("04", "09:00")),
        ]))
        let unknownProvider = try Self.provider(directory, file: onlyUnknown)
        let answer = try await unknownProvider.call("provider/availability", timeout: Self.taskTimeout)
        #expect(answer["available"] == false)
        #expect(answer["reason"]?.stringValue?.contains("other.xml has no steps") == true)
        #expect(answer["reason"]?.stringValue?.contains("2 records read, 2 of other types ignored") == true)
        do {
            _ = try await unknownProvider.call("collect/start", ["sessionId": "s"], timeout: Self.taskTimeout)
            Issue.record("collect/start should fail without data")
        } catch let error as ProviderHarness.CallError {
            #expect(error.message.contains("has no steps"))
        }

        let notAnExport = try directory.write("notes.xml", "<notes><note>hi</note></notes>\n")
        let notesProvider = try Self.provider(directory, file: notAnExport)
        let notes = try await notesProvider.call("provider/availability", timeout: Self.taskTimeout)
        #expect(notes["available"] == false)
        #expect(notes["reason"]?.stringValue?.contains("does not look like an Apple Health export.xml") == true)
    }

    @Test("a folder holding apple_health_export/export.xml is accepted")
    func exportFolder() async throws {
        let directory = try TemporaryDirectory(writing: "unzipped/apple_health_export/export.xml", Self.stepsWeek)
        let provider = try Self.provider(directory, file: directory.path + "/unzipped")
        let item = try await Self.item(provider, "steps", "day", "2024-03-06")
        #expect(item["content"]?["value"] == 12000)
        #expect(item["content"]?["source"]?["file"] == "export.xml")
    }

    // MARK: Cache

    /// The modification time of a file, exactly.
    static func modificationTime(_ path: String) -> timespec {
        var info = stat()
        _ = stat(path, &info)
        #if canImport(Darwin)
        return info.st_mtimespec
        #else
        return info.st_mtim
        #endif
    }

    static func setModificationTime(_ path: String, _ time: timespec) {
        var times = [time, time]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    @Test("aggregates are cached by size and modification time, and re-read when the file changes")
    func cache() async throws {
        let directory = try TemporaryDirectory()
        let first = Self.export([Self.record("steps", "5000", start: Self.t("04", "08:00"))])
        let file = try directory.write("export.xml", first)
        let provider = try Self.provider(directory, file: file)
        let original = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(original["content"]?["value"] == 5000)
        let cached = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache")
        #expect(cached.count == 1)
        #expect(cached.first?.hasPrefix("export.xml-") == true && cached.first?.hasSuffix(".aggregates") == true)

        // Same size and modification time: a new instance answers from the cache, not the file.
        let stamp = Self.modificationTime(file)
        try directory.write("export.xml", first.replacingOccurrences(of: "\"5000\"", with: "\"7000\""))
        Self.setModificationTime(file, stamp)
        let reopened = try Self.provider(directory, file: file)
        let fromCache = try await Self.item(reopened, "steps", "day", "2024-03-04")
        #expect(fromCache["content"]?["value"] == 5000)

        // A changed file (size and time) is read again, by running and new instances alike.
        try directory.write("export.xml", Self.export([
            Self.record("steps", "5000", start: Self.t("04", "08:00")),
            Self.record("steps", "2500", start: Self.t("04", "09:00")),
        ]))
        let changed = try await Self.item(reopened, "steps", "day", "2024-03-04")
        #expect(changed["content"]?["value"] == 7500)
        let fresh = try Self.provider(directory, file: file)
        let again = try await Self.item(fresh, "steps", "day", "2024-03-04")
        #expect(again["content"]?["value"] == 7500)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache").count == 1)

        // An unusable cache folder is not fatal.
        let blocked = try directory.write("blocked", "a file, not a folder")
        let noCache = try ProviderHarness(
            product: "HealthMetricProvider", providerID: Self.id, settings: ["export": .string(file), "cacheDirectory": .string(blocked + "/cache")])
        let uncached = try await Self.item(noCache, "steps", "day", "2024-03-04")
        #expect(uncached["content"]?["value"] == 7500)
    }

    // MARK: CSV

    static let csv = """
        date,metric,value,unit
        2024-03-04,steps,6000,count
        2024-03-04,steps,2500,
        2024-03-04,distance,3.1,mi
        2024-03-04,sleep,450,min
        2024-03-04,water,2.1,L
        2024-03-4,steps,100,count
        2024-03-05,steps,lots,count
        2024-03-05,bodyMass,70,furlong
        "2024-03-05","steps","7000","count"
        2024-03-06,steps
        2024-03-06,bodyMass,154,lb
        2024-03-06,HKQuantityTypeIdentifierRestingHeartRate,58,count/min

        """

    @Test("CSV files: units converted, rows summed per day, bad rows reported by line, unknown metrics counted")
    func csvFile() async throws {
        let export = try Self.Export(Self.csv, name: "daily.csv")
        let provider = try export.provider(locale: "en-GB")
        let form = try await provider.call("collect/start", ["sessionId": "s"], timeout: Self.taskTimeout)
        let options = (form["fields"]?.arrayValue?.first?["options"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue }
        #expect(options == ["steps", "distance", "restingHeartRate", "bodyMass", "sleep"])
        let steps = try await Self.item(provider, "steps", "day", "2024-03-04")
        #expect(steps["content"]?["value"] == 8500)
        let source = try #require(steps["content"]?["source"])
        #expect(source["format"] == "csv")
        #expect(source["records"] == 12)
        #expect(source["ignoredUnknownTypes"] == 1)
        #expect(source["skippedMalformed"] == 4)
        #expect(source["notes"] == [
            "daily.csv:7: date \"2024-03-4\" is not a date like 2024-01-31; row skipped",
            "daily.csv:8: value \"lots\" is not a number; row skipped",
            "daily.csv:9: unit \"furlong\" does not fit bodyMass (use a unit convertible to kg); row skipped",
            "daily.csv:11: expected 4 columns (date,metric,value,unit), found 2; row skipped",
        ])
        let quoted = try await Self.item(provider, "steps", "day", "2024-03-05")
        #expect(quoted["content"]?["value"] == 7000)
        let distance = try await Self.item(provider, "distance", "day", "2024-03-04")
        #expect(distance["content"]?["unit"] == "mi")  // en-GB: miles, kilograms
        #expect(distance["content"]?["value"] == 3.1)
        let mass = try await Self.item(provider, "bodyMass", "day", "2024-03-06")
        #expect(mass["content"]?["unit"] == "kg")
        #expect(mass["content"]?["value"] == 69.9)
        let sleep = try await Self.item(provider, "sleep", "day", "2024-03-04")
        #expect(sleep["content"]?["value"] == 7.5)

        let headerless = try Self.Export("2024-03-04,steps,100,count\n", name: "headerless.csv")
        let noHeader = try headerless.provider()
        let item = try await Self.item(noHeader, "steps", "day", "2024-03-04")
        #expect(item["content"]?["source"]?["notes"]?.arrayValue?.first?.stringValue?.hasPrefix("headerless.csv:1: the first line must be the header date,metric,value,unit") == true)
    }

    @Test("the bundled sample CSV reads in its units")
    func sampleCSV() async throws {
        let directory = try TemporaryDirectory()
        let provider = try Self.provider(directory, file: BuildProducts.packageRoot + "/data/health/metrics.csv", locale: "fr-FR")
        let energy = try await Self.item(provider, "activeEnergy", "month", "2024-01-01")
        #expect(energy["content"]?["unit"] == "kcal")
        #expect(energy["content"]?["source"]?["skippedMalformed"] == 0)
        #expect(energy["content"]?["days"]?.arrayValue?.count == 28)
    }
}
