import ContextProviderKit
import ProviderSupport

/// The Health Metric provider: daily health metrics (steps, distance, active energy, flights,
/// heart rate, resting heart rate, body mass, sleep) from an Apple Health `export.xml` or a
/// `date,metric,value,unit` CSV file, as a chip with a goal tone and a trend chart.
///
/// The export is streamed and reduced to per-day aggregates, cached on disk by the file's size
/// and modification time. Items carry the aggregates of the chosen period, so the views are
/// computed from the item alone.
public struct HealthMetricProvider: ContextProvider {
    /// Id, title, version and icon.
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.health-metric", title: "Health Metric", version: "1.0.0", iconName: "heart.text.square")

    /// Views are computed from the item alone: run them inline.
    public static var immediateMethods: ProviderMethods { .itemViews }

    let context: ProviderContext
    let store: HealthStore
    let goals: [Metric: Goal]
    let units: DisplayUnits

    /// Reads the settings: `export` (file or folder), `cacheDirectory` (empty: no cache), `goals`,
    /// `units` and `chunkSize`.
    /// Nothing is read from the data file here.
    public init(context: ProviderContext) throws {
        self.context = context
        let settings = context.settings
        let export = settings.path("export") ?? ProviderSettings.expandTilde("~/apple_health_export/export.xml")
        let cacheSetting = settings.path("cacheDirectory") ?? ProviderSettings.expandTilde("~/.cache/context-host/health")
        // Empty means no cache. The host resolves a relative path against the manifest's folder,
        // so an empty setting arrives as that folder: a folder holding manifests is never used as
        // the cache either.
        let cacheDirectory = cacheSetting.isEmpty || FileSystem.holdsManifests(cacheSetting) ? nil : cacheSetting
        let chunkSize = settings.int("chunkSize") ?? ExportScanner.defaultChunkSize
        guard chunkSize >= 64, chunkSize <= 64 << 20 else {
            throw ProviderError("Setting `chunkSize` is \(chunkSize)", hint: "Use a read size from 64 bytes to 64 MB; the default is 1048576.")
        }
        store = HealthStore(
            configuredPath: export, cacheDirectory: cacheDirectory, chunkSize: chunkSize)
        goals = try GoalSettings.parse(settings.string("goals") ?? "")
        let system = settings.string("units") ?? "auto"
        guard ["auto", "metric", "imperial"].contains(system) else {
            throw ProviderError("Setting `units` is \"\(Limits.quote(system))\"", hint: "Use auto (from the client's locale), metric or imperial.")
        }
        units = DisplayUnits(locale: context.locale, system: system)
    }

    // MARK: Availability

    /// Unavailable when the file is missing or empty, or holds none of the metrics. Big files
    /// without a cache are read in the background and reported available meanwhile.
    public func availability() async throws -> Availability {
        let located: HealthStore.Located
        do {
            located = try store.locate()
        } catch {
            return .unavailable(error.message + (error.hint.map { ". " + $0 } ?? ""))
        }
        guard located.stamp.size > 0 else {
            return .unavailable("The health data file \(located.path) is empty. Export again from the Health app, or point `export` at another file.")
        }
        if let loaded = store.current() ?? store.loadFromCache(located) {
            return Self.availability(of: loaded)
        }
        if located.stamp.size <= HealthStore.inlineLimit {
            do {
                return Self.availability(of: try await store.data())
            } catch {
                return .unavailable(ProviderError.from(error).message)
            }
        }
        store.prefetch()
        return .available
    }

    static func availability(of loaded: HealthStore.Loaded) -> Availability {
        guard loaded.data.metrics.isEmpty else { return .available }
        return .unavailable(emptyReason(loaded))
    }

    static func emptyReason(_ loaded: HealthStore.Loaded) -> String {
        let report = loaded.data.report
        var parts = ["\(report.records) records read"]
        if report.unknownCount > 0 { parts.append("\(report.unknownCount) of other types ignored") }
        if report.malformed > 0 { parts.append("\(report.malformed) malformed") }
        var reason = "\(FileIO.baseName(loaded.located.path)) has no steps, distance, active energy, flights, heart rate, resting heart rate, body mass or sleep data (\(parts.joined(separator: ", ")))."
        if let first = report.problems.first { reason += " First problem: \(first)" }
        if let truncation = report.truncation { reason += " \(truncation)." }
        return reason
    }

    // MARK: Collector

    static let stepId = "metric"

    /// The one-step form: metric (those present in the data), period and date. Reads the data
    /// (or its cache) on first use.
    public func startCollection(sessionId: String) async throws -> ContextForm {
        form(for: try await loadedWithData())
    }

    /// The form used to validate a submitted step.
    public func form(forStep stepId: String, sessionId: String, values: FormValues) async throws -> ContextForm? {
        guard stepId == Self.stepId else { return nil }
        return form(for: try await loadedWithData())
    }

    func loadedWithData() async throws -> HealthStore.Loaded {
        let loaded = try await store.data()
        guard !loaded.data.metrics.isEmpty else {
            throw ProviderError(Self.emptyReason(loaded), hint: "Point the `export` setting at an export.xml or CSV file with health records.")
        }
        return loaded
    }

    func form(for loaded: HealthStore.Loaded) -> ContextForm {
        let data = loaded.data
        let options = data.metrics.map { metric -> FormOption in
            let days = data.days[metric] ?? []
            let range = days.first.flatMap { first in days.last.map { "\(CivilDate.format(Int(first.day))) – \(CivilDate.format(Int($0.day)))" } } ?? ""
            return FormOption(value: metric.key, label: metric.title, detail: "\(days.count) days, \(range)")
        }
        let lastDay = data.metrics.compactMap { data.days[$0]?.last.map { Int($0.day) } }.max() ?? 0
        let periods = [
            FormOption(value: "day", label: "Day"), FormOption(value: "week", label: "Week (Monday to Sunday)"),
            FormOption(value: "month", label: "Month"),
        ]
        return ContextForm(
            stepId: Self.stepId, title: "Health Metric", submitLabel: "Attach",
            fields: [
                .choice(id: "metric", label: "Metric", required: true, options: options, defaultValue: options.first?.value),
                .choice(id: "period", label: "Period", required: true, options: periods, defaultValue: "day"),
                .field(
                    .date, id: "date", label: "Date", required: true,
                    help: "The day, or any day of the week or month.",
                    defaultValue: .string(CivilDate.format(lastDay))),
            ],
            fallbackText: "Health metric: choose a metric (\(options.map(\.label).joined(separator: ", "))), a period (day, week or month) and a date like \(CivilDate.format(lastDay)).")
    }

    /// Makes the item: the chosen metric over the period, with its days and summary; a field
    /// error when the period has no data.
    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        guard stepId == Self.stepId else {
            throw ProviderError.invalidParams("params.stepId: unknown step \"\(stepId)\"; expected \(Self.stepId)")
        }
        let loaded = try await loadedWithData()
        guard let metric = values.string("metric").flatMap(Metric.init(name:)), loaded.data.days[metric] != nil else {
            return .invalid(fieldErrors: ["metric": "Choose one of the metrics in the data."])
        }
        guard let period = values.string("period").flatMap(Period.init(rawValue:)) else {
            return .invalid(fieldErrors: ["period": "Period must be day, week or month."])
        }
        guard let date = values.string("date").flatMap({ $0.utf8.count == 10 ? CivilDate.parse($0) : nil }) else {
            return .invalid(fieldErrors: ["date": "Date must be a date like 2024-01-31."])
        }
        let summary = PeriodSummary(
            metric: metric, period: period, date: date, data: loaded.data, goal: goals[metric] ?? metric.defaultGoal)
        guard summary.hasData else {
            let days = loaded.data.days[metric] ?? []
            let range = "\(CivilDate.format(Int(days.first?.day ?? 0))) to \(CivilDate.format(Int(days.last?.day ?? 0)))"
            return .invalid(fieldErrors: [
                "date": "No \(metric.title.lowercased()) data \(period.phrase(summary.start)); the data runs from \(range)."
            ])
        }
        let content = summary.content(units: units, locale: context.locale, loaded: loaded)
        let item = context.makeItem(type: "health-metric", displayName: summary.displayName(units: units), content: content)
        return .item(item)
    }

    // MARK: Views

    /// The chip: value and unit, with a tone against the goal.
    public func preview(_ item: ContextItem) async throws -> ContextChip {
        try HealthItem(item).chip
    }

    /// The detail: trend chart with the goal as a threshold, facts and data notes.
    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        try HealthItem(item).detail
    }

    /// One line, e.g. `Steps, March 2024: 8,714 steps/day (goal 10,000 steps; met on 3 of 7 days)`.
    public func describe(_ item: ContextItem) async throws -> String {
        try HealthItem(item).sentence
    }

    /// `json` (default): the content with the aggregates; `csv`: one row per day.
    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let health = try HealthItem(item)
        let metadata = ["metric": health.metric.key, "period": health.period.rawValue, "unit": health.unit]
        switch representation ?? "json" {
        case "json":
            return .json(item.content, metadata: metadata)
        case "csv":
            var text = "date,\(health.metric.key),unit\n"
            for day in health.days { text += "\(day.date),\(formatPlain(day.value)),\(health.unit)\n" }
            return EncodedItem(representation: .text, contentType: "text/csv; charset=utf-8", data: Array(text.utf8), metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "csv"])
        }
    }
}

/// The period an item covers.
enum Period: String, Sendable {
    case day, week, month

    /// The first and last day of the period holding `date`.
    func range(_ date: Int) -> (start: Int, end: Int) {
        switch self {
        case .day: return (date, date)
        case .week:
            let start = date - CivilDate.weekday(date)
            return (start, start + 6)
        case .month:
            let (year, month, dayOfMonth) = CivilDate.components(date)
            let start = date - dayOfMonth + 1
            return (start, start + CivilDate.daysInMonth(year: year, month: month) - 1)
        }
    }

    /// `on 2024-01-10`, `in the week of 2024-01-08`, `in January 2024`.
    func phrase(_ start: Int) -> String {
        switch self {
        case .day: "on \(CivilDate.format(start))"
        case .week: "in the week of \(CivilDate.format(start))"
        case .month: "in \(monthName(start))"
        }
    }
}

func monthName(_ day: Int) -> String {
    let (year, month, _) = CivilDate.components(day)
    let names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    return "\(names[month - 1]) \(year)"
}

/// A number for CSV/JSON-like plain output: no grouping, `.` decimal, no trailing zeros.
func formatPlain(_ value: Double) -> String {
    if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return String(value)
}

/// The `goals` setting: `metric=value[unit]` pairs separated by commas or semicolons, e.g.
/// `steps=12000, sleep=7.5h, distance=5mi, bodyMass<=75kg, heartRate=none`. `=` keeps the
/// metric's usual direction (at least, except at most for heart rates and body mass); `>=` and
/// `<=` choose it.
enum GoalSettings {
    static func parse(_ text: String) throws(ProviderError) -> [Metric: Goal] {
        var goals: [Metric: Goal] = [:]
        for metric in Metric.allCases { goals[metric] = metric.defaultGoal }
        guard text.utf8.count <= 4096 else {
            throw ProviderError("Setting `goals` is \(text.utf8.count) bytes long, \"\(Limits.quote(text))\"", hint: "Write at most a few goals, e.g. steps=12000, sleep=7.5h.")
        }
        for entry in text.split(whereSeparator: { $0 == "," || $0 == ";" }) {
            let pair = String(entry).trimmingWhitespace()
            if pair.isEmpty { continue }
            let hint = "Write goals like steps=12000, sleep=7.5h, distance=5mi, bodyMass<=75kg (metrics: \(Metric.allCases.map(\.key).joined(separator: ", ")))."
            guard let equals = pair.firstIndex(of: "=") else {
                throw ProviderError("Setting `goals`: \"\(Limits.quote(pair))\" has no =", hint: hint)
            }
            var name = String(pair[..<equals]).trimmingWhitespace()
            var direction: Goal.Direction?
            if name.hasSuffix("<") || name.hasSuffix(">") {
                direction = name.hasSuffix("<") ? .atMost : .atLeast
                name = String(name.dropLast()).trimmingWhitespace()
            }
            guard let metric = Metric(name: name) else {
                throw ProviderError("Setting `goals`: unknown metric \"\(Limits.quote(name))\"", hint: hint)
            }
            let valueText = String(pair[pair.index(after: equals)...]).trimmingWhitespace()
            if valueText.lowercased() == "none" {
                goals[metric] = nil
                continue
            }
            let numberPart = valueText.prefix { $0.isNumber || $0 == "." }
            let unitText = String(valueText.dropFirst(numberPart.count)).trimmingWhitespace()
            guard numberPart.allSatisfy(\.isASCII), let number = Double(numberPart), number.isFinite, number > 0 else {
                throw ProviderError("Setting `goals`: \"\(Limits.quote(valueText))\" for \(metric.key) is not a positive number", hint: hint)
            }
            let unit = unitText.isEmpty ? metric.baseUnit : HealthUnit(text: unitText)
            guard let unit, unit.fits(metric) else {
                throw ProviderError("Setting `goals`: unit \"\(Limits.quote(unitText))\" does not fit \(metric.key)", hint: hint)
            }
            let base = number * unit.factorToBase
            guard base >= metric.minimumGoal, base <= metric.maximumGoal else {
                throw ProviderError(
                    "Setting `goals`: \(Limits.quote(valueText)) for \(metric.key) is out of range",
                    hint: "Use a goal from \(formatPlain(metric.minimumGoal)) to \(formatPlain(metric.maximumGoal)) \(metric.baseUnit.rawValue) (or the same in another unit).")
            }
            let usual: Goal.Direction = [.heartRate, .restingHeartRate, .bodyMass].contains(metric) ? .atMost : .atLeast
            goals[metric] = Goal(value: base, direction: direction ?? usual)
        }
        return goals
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: HealthMetricProvider.self)
}
