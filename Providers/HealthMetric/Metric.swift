/// A metric the provider understands, with its Health identifier, how days are aggregated, its
/// base unit (the unit aggregates are stored in) and its default goal.
enum Metric: UInt8, CaseIterable, Sendable, Hashable {
    case steps = 0
    case distance
    case activeEnergy
    case flightsClimbed
    case heartRate
    case restingHeartRate
    case bodyMass
    case sleep

    /// How a day's samples become one value.
    enum Aggregation: String, Sendable {
        /// Samples are added up (steps walked today); when several sources overlap, the source
        /// with the largest total for the day wins, approximating the Health app's de-duplication.
        case sum
        /// Samples are averaged; the minimum and maximum are kept.
        case average
        /// Hours asleep per night (category intervals), by the source with the most sleep.
        case sleep
    }

    /// The identifier used in settings, CSV files and item content.
    var key: String {
        switch self {
        case .steps: "steps"
        case .distance: "distance"
        case .activeEnergy: "activeEnergy"
        case .flightsClimbed: "flightsClimbed"
        case .heartRate: "heartRate"
        case .restingHeartRate: "restingHeartRate"
        case .bodyMass: "bodyMass"
        case .sleep: "sleep"
        }
    }

    /// The Apple Health type identifier.
    var healthIdentifier: String {
        switch self {
        case .steps: "HKQuantityTypeIdentifierStepCount"
        case .distance: "HKQuantityTypeIdentifierDistanceWalkingRunning"
        case .activeEnergy: "HKQuantityTypeIdentifierActiveEnergyBurned"
        case .flightsClimbed: "HKQuantityTypeIdentifierFlightsClimbed"
        case .heartRate: "HKQuantityTypeIdentifierHeartRate"
        case .restingHeartRate: "HKQuantityTypeIdentifierRestingHeartRate"
        case .bodyMass: "HKQuantityTypeIdentifierBodyMass"
        case .sleep: "HKCategoryTypeIdentifierSleepAnalysis"
        }
    }

    /// The English title.
    var title: String {
        switch self {
        case .steps: "Steps"
        case .distance: "Walking + Running Distance"
        case .activeEnergy: "Active Energy"
        case .flightsClimbed: "Flights Climbed"
        case .heartRate: "Heart Rate"
        case .restingHeartRate: "Resting Heart Rate"
        case .bodyMass: "Body Mass"
        case .sleep: "Sleep"
        }
    }

    /// A symbol name for chips.
    var icon: String {
        switch self {
        case .steps: "figure.walk"
        case .distance: "point.topleft.down.to.point.bottomright.curvepath"
        case .activeEnergy: "flame"
        case .flightsClimbed: "figure.stairs"
        case .heartRate: "heart"
        case .restingHeartRate: "heart.text.square"
        case .bodyMass: "scalemass"
        case .sleep: "bed.double"
        }
    }

    var aggregation: Aggregation {
        switch self {
        case .steps, .distance, .activeEnergy, .flightsClimbed: .sum
        case .heartRate, .restingHeartRate, .bodyMass: .average
        case .sleep: .sleep
        }
    }

    /// The unit aggregates are stored in.
    var baseUnit: HealthUnit {
        switch self {
        case .steps, .flightsClimbed: .count
        case .distance: .kilometre
        case .activeEnergy: .kilocalorie
        case .heartRate, .restingHeartRate: .beatsPerMinute
        case .bodyMass: .kilogram
        case .sleep: .hour
        }
    }

    /// The goal used when settings name none, in the base unit.
    var defaultGoal: Goal? {
        switch self {
        case .steps: Goal(value: 10_000, direction: .atLeast)
        case .distance: Goal(value: 8, direction: .atLeast)
        case .activeEnergy: Goal(value: 500, direction: .atLeast)
        case .flightsClimbed: Goal(value: 10, direction: .atLeast)
        case .heartRate: nil
        case .restingHeartRate: Goal(value: 60, direction: .atMost)
        case .bodyMass: nil
        case .sleep: Goal(value: 7, direction: .atLeast)
        }
    }

    /// The metric for an identifier from settings or a CSV file: a key (any case) or a Health
    /// type identifier.
    init?(name: String) {
        let lowered = name.lowercased()
        for metric in Metric.allCases
        where metric.key.lowercased() == lowered || metric.healthIdentifier.lowercased() == lowered {
            self = metric
            return
        }
        let aliases: [String: Metric] = [
            "stepcount": .steps, "walkingrunningdistance": .distance, "distancewalkingrunning": .distance,
            "activeenergyburned": .activeEnergy, "flights": .flightsClimbed, "heart_rate": .heartRate,
            "restingheart": .restingHeartRate, "resting_heart_rate": .restingHeartRate, "weight": .bodyMass,
            "body_mass": .bodyMass, "sleepanalysis": .sleep, "active_energy": .activeEnergy,
            "flights_climbed": .flightsClimbed,
        ]
        guard let metric = aliases[lowered] else { return nil }
        self = metric
    }
}

/// A goal for a daily value, in the metric's base unit.
struct Goal: Sendable, Hashable {
    /// Which side of the goal is good.
    enum Direction: String, Sendable {
        /// More is better (steps).
        case atLeast
        /// Less is better (resting heart rate).
        case atMost
    }

    var value: Double
    var direction: Direction

    /// Whether a daily value meets the goal.
    func isMet(_ daily: Double) -> Bool {
        direction == .atLeast ? daily >= value : daily <= value
    }
}

/// Units the provider reads and shows. Each belongs to a dimension and converts to the
/// dimension's base unit with a factor.
enum HealthUnit: String, Sendable, Hashable {
    case count
    case kilometre = "km"
    case mile = "mi"
    case metre = "m"
    case foot = "ft"
    case yard = "yd"
    case centimetre = "cm"
    case kilocalorie = "kcal"
    case kilojoule = "kJ"
    case calorie = "cal"
    case kilogram = "kg"
    case pound = "lb"
    case gram = "g"
    case stone = "st"
    case ounce = "oz"
    case beatsPerMinute = "count/min"
    case beatsPerSecond = "count/s"
    case hour = "hr"
    case minute = "min"
    case second = "s"

    enum Dimension { case count, length, energy, mass, frequency, time }

    var dimension: Dimension {
        switch self {
        case .count: .count
        case .kilometre, .mile, .metre, .foot, .yard, .centimetre: .length
        case .kilocalorie, .kilojoule, .calorie: .energy
        case .kilogram, .pound, .gram, .stone, .ounce: .mass
        case .beatsPerMinute, .beatsPerSecond: .frequency
        case .hour, .minute, .second: .time
        }
    }

    /// Multiply a value in this unit by this factor to get the dimension's base unit (km, kcal,
    /// kg, beats per minute, hours).
    var factorToBase: Double {
        switch self {
        case .count, .kilometre, .kilocalorie, .kilogram, .beatsPerMinute, .hour: 1
        case .mile: 1.609_344
        case .metre: 0.001
        case .foot: 0.000_304_8
        case .yard: 0.000_914_4
        case .centimetre: 0.000_01
        case .kilojoule: 1 / 4.184
        case .calorie: 0.001
        case .pound: 0.453_592_37
        case .gram: 0.001
        case .stone: 6.350_293_18
        case .ounce: 0.028_349_523_125
        case .beatsPerSecond: 60
        case .minute: 1.0 / 60
        case .second: 1.0 / 3600
        }
    }

    /// The unit for a unit string as written in exports and CSV files (`km`, `count/min`,
    /// `Cal`, `lb`…), or `nil` when unknown.
    init?(text: String) {
        switch text {
        case "", "count", "steps", "flights", "floors": self = .count
        case "km": self = .kilometre
        case "mi", "mile", "miles": self = .mile
        case "m": self = .metre
        case "ft": self = .foot
        case "yd": self = .yard
        case "cm": self = .centimetre
        case "kcal", "Cal", "Calories": self = .kilocalorie
        case "kJ", "kj": self = .kilojoule
        case "cal": self = .calorie
        case "kg": self = .kilogram
        case "lb", "lbs": self = .pound
        case "g": self = .gram
        case "st": self = .stone
        case "oz": self = .ounce
        case "count/min", "bpm", "beats/min": self = .beatsPerMinute
        case "count/s": self = .beatsPerSecond
        case "hr", "h", "hours", "hour": self = .hour
        case "min", "minutes": self = .minute
        case "s", "sec", "seconds": self = .second
        default: return nil
        }
    }

    /// Whether values in this unit can be stored for `metric`.
    func fits(_ metric: Metric) -> Bool { dimension == metric.baseUnit.dimension }
}

/// How values are shown to one client: units chosen from the locale (or the `units` setting),
/// and number punctuation from the locale's language.
struct DisplayUnits: Sendable, Hashable {
    var imperialDistance: Bool
    var imperialMass: Bool
    var kilojoules: Bool
    var decimalSeparator: String
    var groupingSeparator: String

    /// Units for a BCP 47 locale such as `en-US`, `en-GB`, `de-DE` or `en-AU`. `system` is the
    /// `units` setting: `auto` (from the locale), `metric` or `imperial`.
    init(locale: String, system: String) {
        let parts = locale.replacingUnderscores().split(separator: "-").map { String($0) }
        let language = parts.first?.lowercased() ?? "en"
        let region = parts.dropFirst().first { $0.count == 2 || $0.count == 3 && $0.allSatisfy(\.isNumber) }?
            .uppercased() ?? ""
        switch system {
        case "metric":
            imperialDistance = false
            imperialMass = false
        case "imperial":
            imperialDistance = true
            imperialMass = true
        default:
            imperialDistance = ["US", "GB", "LR", "MM"].contains(region) || (region.isEmpty && language == "en")
            imperialMass = ["US", "LR", "MM"].contains(region) || (region.isEmpty && language == "en")
        }
        kilojoules = ["AU", "NZ"].contains(region)
        let commaLanguages: Set<String> = [
            "de", "fr", "es", "it", "nl", "pt", "da", "sv", "nb", "no", "fi", "ru", "pl", "cs", "tr", "id", "el", "uk",
        ]
        if commaLanguages.contains(language), !(language == "es" && ["MX", "US"].contains(region)),
            !(language == "pt" && region.isEmpty)
        {
            decimalSeparator = ","
            groupingSeparator = ["fr", "nb", "no", "fi", "sv", "ru", "pl", "cs", "uk"].contains(language) ? "\u{202F}" : "."
        } else {
            decimalSeparator = "."
            groupingSeparator = ","
        }
    }

    /// The unit a metric is shown in.
    func unit(for metric: Metric) -> HealthUnit {
        switch metric.baseUnit {
        case .kilometre: imperialDistance ? .mile : .kilometre
        case .kilogram: imperialMass ? .pound : .kilogram
        case .kilocalorie: kilojoules ? .kilojoule : .kilocalorie
        default: metric.baseUnit
        }
    }

    /// Converts a base-unit value to the display unit.
    func convert(_ value: Double, for metric: Metric) -> Double {
        value / unit(for: metric).factorToBase
    }

    /// Decimal places shown for a metric.
    func decimals(for metric: Metric) -> Int {
        switch metric {
        case .steps, .flightsClimbed, .activeEnergy: 0
        case .heartRate, .restingHeartRate, .bodyMass: 1
        case .distance, .sleep: 2
        }
    }

    /// The display value rounded to the shown precision.
    func rounded(_ value: Double, for metric: Metric) -> Double {
        let scale = [1.0, 10, 100, 1000][decimals(for: metric)]
        return (convert(value, for: metric) * scale).rounded() / scale
    }

    /// The unit's label as shown after a value.
    func label(for metric: Metric) -> String {
        switch unit(for: metric) {
        case .count: metric == .steps ? "steps" : "flights"
        case .beatsPerMinute: "bpm"
        case .hour: "h"
        case let unit: unit.rawValue
        }
    }

    /// `8,412 steps`, `5.23 km`, `7.45 h`.
    func format(_ value: Double, for metric: Metric) -> String {
        formatNumber(convert(value, for: metric), decimals: decimals(for: metric)) + " " + label(for: metric)
    }

    /// A number with this locale's punctuation.
    func formatNumber(_ value: Double, decimals: Int) -> String {
        let scale = [1.0, 10, 100, 1000][min(decimals, 3)]
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var digits = String(whole)
        var grouped = ""
        while digits.count > 3 {
            grouped = groupingSeparator + String(digits.suffix(3)) + grouped
            digits.removeLast(3)
        }
        grouped = digits + grouped
        if decimals > 0 {
            var text = String(fraction)
            while text.count < decimals { text = "0" + text }
            grouped += decimalSeparator + text
        }
        return (value < 0 && scaled > 0 ? "-" : "") + grouped
    }
}

extension String {
    func replacingUnderscores() -> String {
        String(unicodeScalars.map { $0 == "_" ? "-" : Character($0) })
    }
}
