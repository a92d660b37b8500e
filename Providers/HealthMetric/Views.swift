import ContextProviderKit
import ProviderSupport

/// A metric over a period, computed from the aggregates when an item is made.
struct PeriodSummary {
    let metric: Metric
    let period: Period
    let date: Int
    let start: Int
    let end: Int
    /// Days shown in the trend: the period, or for one day the seven days ending on it.
    let trend: [DayValue]
    let goal: Goal?
    /// The chosen day's value, or the daily average over the period's days with data.
    let value: Double?

    init(metric: Metric, period: Period, date: Int, data: HealthData, goal: Goal?) {
        self.metric = metric
        self.period = period
        self.date = date
        self.goal = goal
        let (first, last) = period.range(date)
        start = first
        end = last
        let trendStart = period == .day ? date - 6 : first
        trend = (data.days[metric] ?? []).filter { Int($0.day) >= trendStart && Int($0.day) <= last }
        if period == .day {
            value = data.value(metric, on: date)?.value
        } else {
            value = trend.isEmpty ? nil : trend.map(\.value).reduce(0, +) / Double(trend.count)
        }
    }

    var hasData: Bool { value != nil }

    func displayName(units: DisplayUnits) -> String {
        let amount = units.format(value ?? 0, for: metric)
        switch period {
        case .day: return "\(metric.title) \(CivilDate.format(date)): \(amount)"
        case .week: return "\(metric.title), week of \(CivilDate.format(start)): \(amount)/day"
        case .month: return "\(metric.title), \(monthName(start)): \(amount)/day"
        }
    }

    /// The item content, with every value in the client's display unit.
    func content(units: DisplayUnits, locale: String, loaded: HealthStore.Loaded) -> JSONValue {
        let convert = { (value: Double) in units.rounded(value, for: metric) }
        var object = JSONObject()
        object["metric"] = .string(metric.key)
        object["title"] = .string(metric.title)
        object["healthType"] = .string(metric.healthIdentifier)
        object["aggregation"] = .string(metric.aggregation.rawValue)
        object["period"] = .string(period.rawValue)
        object["date"] = .string(CivilDate.format(date))
        object["start"] = .string(CivilDate.format(start))
        object["end"] = .string(CivilDate.format(end))
        object["unit"] = .string(units.label(for: metric))
        object["locale"] = .string(locale)
        object["decimalSeparator"] = .string(units.decimalSeparator)
        object["groupingSeparator"] = .string(units.groupingSeparator)
        object["value"] = .number(convert(value ?? 0))
        object["valueKind"] = .string(period == .day ? "day" : "dailyAverage")
        if let goal {
            object["goal"] = ["value": .number(convert(goal.value)), "direction": .string(goal.direction.rawValue)]
        }
        object["days"] = .array(
            trend.map { day in
                var entry = JSONObject()
                entry["date"] = .string(CivilDate.format(Int(day.day)))
                entry["value"] = .number(convert(day.value))
                if metric.aggregation == .average {
                    entry["min"] = .number(convert(day.min))
                    entry["max"] = .number(convert(day.max))
                }
                entry["samples"] = .number(Double(day.count))
                return .object(entry)
            })
        var summary = JSONObject()
        let values = trend.map(\.value)
        if !values.isEmpty {
            summary["average"] = .number(convert(values.reduce(0, +) / Double(values.count)))
            let low = (metric.aggregation == .average ? trend.map(\.min).min() : values.min()) ?? 0
            let high = (metric.aggregation == .average ? trend.map(\.max).max() : values.max()) ?? 0
            summary["min"] = .number(convert(low))
            summary["max"] = .number(convert(high))
            if metric.aggregation != .average { summary["total"] = .number(convert(values.reduce(0, +))) }
        }
        summary["daysWithData"] = .number(Double(trend.count))
        summary["daysInRange"] = .number(Double(end - (period == .day ? date - 6 : start) + 1))
        if let goal { summary["daysMet"] = .number(Double(trend.filter { goal.isMet($0.value) }.count)) }
        object["summary"] = .object(summary)
        let report = loaded.data.report
        var source = JSONObject()
        source["file"] = .string(FileIO.baseName(loaded.located.path))
        source["format"] = .string(report.format)
        source["records"] = .number(Double(report.records))
        source["used"] = .number(Double(report.used))
        source["ignoredUnknownTypes"] = .number(Double(report.unknownCount))
        source["skippedMalformed"] = .number(Double(report.malformed))
        source["truncated"] = .bool(report.truncation != nil)
        var notes = Array(report.problems.prefix(10))
        if let truncation = report.truncation { notes.insert(truncation, at: 0) }
        source["notes"] = .array(notes.map(JSONValue.string))
        object["source"] = .object(source)
        return .object(object)
    }
}

/// An item's content, read back for the views.
struct HealthItem {
    struct Day {
        var date: String
        var value: Double
        var min: Double?
        var max: Double?
    }

    let metric: Metric
    let title: String
    let period: Period
    let date: String
    let start: String
    let end: String
    let unit: String
    let value: Double
    let goal: (value: Double, direction: Goal.Direction)?
    let days: [Day]
    let average: Double?
    let low: Double?
    let high: Double?
    let total: Double?
    let daysWithData: Int
    let daysInRange: Int
    let daysMet: Int?
    let sourceFile: String
    let sourceRecords: Int
    let notes: [String]
    let ignored: Int
    let malformed: Int
    let numbers: DisplayUnits

    init(_ item: ContextItem) throws {
        let reader = try JSONObjectReader(item.content, path: "params.item.content")
        let key = try reader.string("metric")
        guard let metric = Metric(name: key) else {
            throw ProviderError.invalidParams("params.item.content.metric: unknown metric \"\(key)\"")
        }
        self.metric = metric
        title = try reader.optionalString("title") ?? metric.title
        let periodText = try reader.string("period")
        guard let period = Period(rawValue: periodText) else {
            throw ProviderError.invalidParams("params.item.content.period: expected day, week or month, got \"\(periodText)\"")
        }
        self.period = period
        date = try reader.string("date")
        start = try reader.optionalString("start") ?? date
        end = try reader.optionalString("end") ?? date
        unit = try reader.string("unit")
        // Every number must be finite: a forged item with 1e400 (read as infinity) is refused.
        func finite(_ number: Double, _ path: String) throws(ProviderError) -> Double {
            guard number.isFinite else {
                throw ProviderError.invalidParams("params.item.content.\(path): expected a finite number")
            }
            return number
        }
        func finiteOptional(_ number: Double?, _ path: String) throws(ProviderError) -> Double? {
            guard let number else { return nil }
            return try finite(number, path)
        }
        value = try finite(try reader.double("value"), "value")
        if let goalReader = try reader.optionalObject("goal") {
            let direction = Goal.Direction(rawValue: try goalReader.optionalString("direction") ?? "atLeast") ?? .atLeast
            goal = (try finite(try goalReader.double("value"), "goal.value"), direction)
        } else {
            goal = nil
        }
        guard (reader.value("days")?.arrayValue?.count ?? 0) <= Limits.maximumItemDays else {
            throw ProviderError.invalidParams("params.item.content.days: at most \(Limits.maximumItemDays) days")
        }
        days = try reader.array("days") { (value, path) throws(JSONDecodeError) in
            let day = try JSONObjectReader(value, path: path)
            return Day(
                date: try day.string("date"), value: try day.double("value"), min: try day.optionalDouble("min"),
                max: try day.optionalDouble("max"))
        }
        for (index, day) in days.enumerated() {
            _ = try finite(day.value, "days[\(index)].value")
            _ = try finiteOptional(day.min, "days[\(index)].min")
            _ = try finiteOptional(day.max, "days[\(index)].max")
        }
        let summary = try reader.optionalObject("summary")
        average = try finiteOptional(try summary?.optionalDouble("average"), "summary.average")
        low = try finiteOptional(try summary?.optionalDouble("min"), "summary.min")
        high = try finiteOptional(try summary?.optionalDouble("max"), "summary.max")
        total = try finiteOptional(try summary?.optionalDouble("total"), "summary.total")
        daysWithData = try summary?.optionalInt("daysWithData") ?? days.count
        daysInRange = try summary?.optionalInt("daysInRange") ?? days.count
        daysMet = try summary?.optionalInt("daysMet")
        let source = try reader.optionalObject("source")
        sourceFile = try source?.optionalString("file") ?? "health data"
        sourceRecords = try source?.optionalInt("records") ?? 0
        notes = Array((try source?.optionalStrings("notes") ?? []).prefix(Limits.maximumItemNotes))
        ignored = try source?.optionalInt("ignoredUnknownTypes") ?? 0
        malformed = try source?.optionalInt("skippedMalformed") ?? 0
        var numbers = DisplayUnits(locale: try reader.optionalString("locale") ?? "en-US", system: "metric")
        numbers.decimalSeparator = try reader.optionalString("decimalSeparator") ?? numbers.decimalSeparator
        numbers.groupingSeparator = try reader.optionalString("groupingSeparator") ?? numbers.groupingSeparator
        self.numbers = numbers
    }

    // MARK: Formatting

    func number(_ value: Double) -> String {
        numbers.formatNumber(value, decimals: numbers.decimals(for: metric))
    }

    /// `8,412 steps`, `5.23 km`, `7 h 27 min`.
    func amount(_ value: Double) -> String {
        if metric == .sleep, unit == "h" {
            let minutes = Limits.clampedInt(value * 60)
            return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
        }
        return "\(number(value)) \(unit)"
    }

    /// `10,000 steps`, or `≤ 60.0 bpm` for an at-most goal.
    var goalValueText: String? {
        guard let goal else { return nil }
        return (goal.direction == .atLeast ? "" : "≤ ") + amount(goal.value)
    }

    /// `goal 10,000 steps`.
    var goalText: String? { goalValueText.map { "goal " + $0 } }

    var periodText: String {
        switch period {
        case .day: "\(weekdayName(date)) \(date)"
        case .week: "week of \(start)"
        case .month: CivilDate.parse(start).map(monthName) ?? start
        }
    }

    func weekdayName(_ date: String) -> String {
        CivilDate.parse(date).map(CivilDate.weekdayName) ?? ""
    }

    /// Good when the goal is met, warning when within 20 % (10 % for at-most goals), else
    /// attention; neutral without a goal.
    var tone: Tone {
        guard let goal else { return .neutral }
        switch goal.direction {
        case .atLeast:
            if value >= goal.value { return .good }
            return value >= goal.value * 0.8 ? .warning : .attention
        case .atMost:
            if value <= goal.value { return .good }
            return value <= goal.value * 1.1 ? .warning : .attention
        }
    }

    var valueText: String { period == .day ? amount(value) : amount(value) + (metric.aggregation == .average ? " avg" : "/day") }

    // MARK: Views

    var chip: ContextChip {
        var subtitle = "\(title) · \(periodText)"
        if let goalText { subtitle += " · \(goalText)" }
        var spoken = "\(title) \(period == .day ? "on" : "for the") \(periodText): \(valueText)"
        if let goal, goal.value > 0 {
            let percent = Limits.clampedInt(value / goal.value * 100)
            spoken += ", \(percent)% of the \(goal.direction == .atLeast ? "" : "maximum ")goal of \(amount(goal.value))"
        }
        return ContextChip(
            icon: metric.icon, title: valueText, subtitle: subtitle, tone: tone,
            accessory: days.count > 1 ? .sparkline(days.map(\.value)) : nil, accessibilityLabel: spoken,
            fallbackText: "\(title), \(periodText): \(valueText)" + (goalText.map { " (\($0))" } ?? ""))
    }

    var detail: ContextDetail {
        var blocks: [DetailBlock] = []
        let points = days.map { ChartPoint(x: $0.date, y: $0.value) }
        let thresholds = goal.map { [ChartThreshold(label: "Goal", value: $0.value, tone: .good)] } ?? []
        let trendLabel = period == .day ? "last 7 days to \(date)" : periodText
        blocks.append(
            .chart(
                ChartBlock(
                    kind: metric.aggregation == .average ? .line : .bar, unit: unit,
                    series: [ChartSeries(name: title, points: points)], thresholds: thresholds,
                    fallback: "\(title), \(trendLabel): " + days.map { "\($0.date) \(amount($0.value))" }.joined(separator: "; "))))
        var facts: [Fact] = [Fact(label: period == .day ? date : "Daily \(metric.aggregation == .average ? "mean" : "average")", value: amount(value), tone: tone)]
        let suffix = period == .day ? " (7 days)" : ""
        if let average { facts.append(Fact(label: "Average\(suffix)", value: amount(average))) }
        if let low { facts.append(Fact(label: "Minimum\(suffix)", value: amount(low))) }
        if let high { facts.append(Fact(label: "Maximum\(suffix)", value: amount(high))) }
        if let total, metric.aggregation != .average { facts.append(Fact(label: "Total\(suffix)", value: amount(total))) }
        if let goalValueText {
            facts.append(Fact(label: "Goal", value: goalValueText))
            if let daysMet {
                facts.append(Fact(label: "Days met", value: "\(daysMet) of \(daysWithData)", tone: daysMet == daysWithData ? .good : .neutral))
            }
        }
        facts.append(Fact(label: "Days with data", value: "\(daysWithData) of \(daysInRange)"))
        facts.append(Fact(label: "Source", value: "\(sourceFile) (\(numbers.formatNumber(Double(sourceRecords), decimals: 0)) records)"))
        blocks.append(.facts(facts))
        var remarks: [String] = []
        if malformed > 0 { remarks.append("\(malformed) malformed record\(malformed == 1 ? " was" : "s were") skipped.") }
        if ignored > 0 { remarks.append("\(ignored) record\(ignored == 1 ? "" : "s") of other types \(ignored == 1 ? "was" : "were") ignored.") }
        remarks.append(contentsOf: notes)
        if !remarks.isEmpty { blocks.append(.list(remarks, fallback: "Data notes: " + remarks.joined(separator: " "))) }
        return ContextDetail(title: "\(title) — \(periodText)", blocks: blocks)
    }

    var sentence: String {
        var text = "\(title), \(periodText): \(valueText)"
        if let goalText {
            text += " (\(goalText)"
            if period != .day, let daysMet { text += "; met on \(daysMet) of \(daysWithData) days" }
            text += ")"
        }
        return text
    }
}
