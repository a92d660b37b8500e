import ContextProviderKit

/// The range a quote's chart and statistics cover, counted back from the as-of date.
enum QuoteRange: String, CaseIterable, Sendable {
    case oneMonth = "1M", threeMonths = "3M", oneYear = "1Y", fiveYears = "5Y"

    var months: Int {
        switch self {
        case .oneMonth: 1
        case .threeMonths: 3
        case .oneYear: 12
        case .fiveYears: 60
        }
    }

    var label: String {
        switch self {
        case .oneMonth: "1 month"
        case .threeMonths: "3 months"
        case .oneYear: "1 year"
        case .fiveYears: "5 years"
        }
    }
}

/// A quote as attached: the item's content. Everything the views need is in it, so previews,
/// details and encodings work from the item alone (and keep working if the data folder changes).
///
/// Content wire form (all prices in `currency`, split-adjusted):
/// `{"symbol","name"?,"exchange"?,"currency","range","asOf","source":{"kind","location"},
///   "quote":{"date","open"?,"high"?,"low"?,"close","volume"?,"previousClose"?,"previousDate"?,"change"?,"changePercent"?},
///   "week52":{"high","low","from"},
///   "series":{"range","start","end","tradingDays","startClose","endClose","change","changePercent","high","low",
///             "averageVolume"?,"sampling","dates":[String],"closes":[Number]},
///   "sparkline":[Number],"problems":[String],"problemCount","notes":[String],
///   "splits":[{"date","factor","label","inAdjClose"}]}`
struct QuoteSnapshot: Sendable {
    var symbol: String
    var name: String?
    var exchange: String?
    var currency: String
    var range: QuoteRange
    var asOf: String
    var source: QuoteSource

    var date: String
    var open: Double?
    var high: Double?
    var low: Double?
    var close: Double
    var volume: Double?
    var previousClose: Double?
    var previousDate: String?
    var change: Double?
    var changePercent: Double?

    var week52High: Double
    var week52Low: Double
    var week52From: String

    var seriesStart: String
    var tradingDays: Int
    var startClose: Double
    var rangeChange: Double
    var rangeChangePercent: Double
    var rangeHigh: Double
    var rangeLow: Double
    var averageVolume: Double?
    var sampling: String
    var dates: [String]
    var closes: [Double]

    var sparkline: [Double]
    var problems: [String]
    var problemCount: Int
    var notes: [String]
    /// Splits detected in the history: `{"date","factor","label","inAdjClose"}`.
    var splits: [JSONValue]

    /// At most this many problems are kept in an item (all of them are logged).
    static let maximumListedProblems = 25
    /// At most this many chart points.
    static let maximumChartPoints = 260
    /// Closes in the chip's sparkline.
    static let sparklineLength = 30

    /// Builds the snapshot for `range` from a history with at least one row.
    init(loaded: LoadedHistory, range: QuoteRange, defaultCurrency: String) {
        let rows = loaded.history.rows
        let last = rows[rows.count - 1]
        symbol = loaded.entry.symbol
        name = loaded.entry.name
        exchange = loaded.entry.exchange
        currency = loaded.entry.currency ?? defaultCurrency
        self.range = range
        asOf = last.day.iso
        source = loaded.source
        date = last.day.iso
        open = last.open
        high = last.high
        low = last.low
        close = last.close
        volume = last.volume
        if rows.count >= 2 {
            let previous = rows[rows.count - 2]
            previousClose = previous.close
            previousDate = previous.day.iso
            let change = Format.round6(last.close - previous.close)
            self.change = change
            changePercent = previous.close > 0 ? Format.round6(change / previous.close * 100) : 0
        }

        let yearStart = last.day.monthsBack(12)
        let year = Self.rows(rows, from: yearStart)
        week52High = year.map(\.highOrClose).max() ?? last.close
        week52Low = year.map(\.lowOrClose).min() ?? last.close
        week52From = (year.first ?? last).day.iso

        let rangeStart = last.day.monthsBack(range.months)
        var window = Array(Self.rows(rows, from: rangeStart))
        if window.isEmpty { window = [last] }
        seriesStart = window[0].day.iso
        tradingDays = window.count
        startClose = window[0].close
        rangeChange = Format.round6(last.close - window[0].close)
        rangeChangePercent = window[0].close > 0 ? Format.round6(rangeChange / window[0].close * 100) : 0
        rangeHigh = window.map(\.highOrClose).max() ?? last.close
        rangeLow = window.map(\.lowOrClose).min() ?? last.close
        let volumes = window.compactMap(\.volume)
        averageVolume = volumes.isEmpty ? nil : (volumes.reduce(0, +) / Double(volumes.count)).rounded()

        // The chart: every trading day, or every n-th counted back from the last so it is included.
        let stride = max(1, (window.count + Self.maximumChartPoints - 1) / Self.maximumChartPoints)
        var picked: [PriceRow] = []
        var index = window.count - 1
        while index >= 0 {
            picked.append(window[index])
            index -= stride
        }
        if picked.last?.day != window[0].day { picked.append(window[0]) }
        picked.reverse()
        sampling = stride == 1 ? "daily" : "every \(stride) trading days"
        dates = picked.map(\.day.iso)
        closes = picked.map(\.close)
        sparkline = rows.suffix(Self.sparklineLength).map(\.close)

        let allProblems = loaded.notes.filter { $0.severity == .problem } + loaded.history.problems
        problemCount = allProblems.count + loaded.history.omittedProblems
        problems = allProblems.prefix(Self.maximumListedProblems).map(\.text)
        notes = (loaded.notes + loaded.history.diagnostics).filter { $0.severity == .note }.prefix(Limits.maximumItemList).map(\.text)
        splits = loaded.history.splits.map(\.json)
    }

    /// The rows on or after `start` (rows are in date order).
    static func rows(_ rows: [PriceRow], from start: Day) -> ArraySlice<PriceRow> {
        var low = 0, high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if rows[middle].day < start { low = middle + 1 } else { high = middle }
        }
        return rows[low...]
    }

    /// A one-line title: `ACME 80.76 USD`.
    var headline: String { "\(symbol) \(Format.price(close)) \(currency)" }

    /// `▲ +1.23 (+1.01%)`, or `no previous close`.
    var changeText: String {
        guard let change, let changePercent else { return "no previous close" }
        return "\(Format.arrow(change)) \(Format.signedPrice(change, level: close)) (\(Format.signedPercent(changePercent)))"
    }

    /// Good when up, attention when down, neutral when unchanged or unknown.
    var tone: Tone {
        guard let change else { return .neutral }
        return change > 0 ? .good : change < 0 ? .attention : .neutral
    }

    // MARK: JSON

    var json: JSONValue {
        var object = JSONObject()
        object["symbol"] = .string(symbol)
        object.put("name", name)
        object.put("exchange", exchange)
        object["currency"] = .string(currency)
        object["range"] = .string(range.rawValue)
        object["asOf"] = .string(asOf)
        var sourceObject: JSONObject = ["kind": .string(source.kind), "location": .string(source.location)]
        if source.stale { sourceObject["stale"] = true }
        if let fetchedAt = source.fetchedAt { sourceObject["fetchedAt"] = .string(fetchedAt) }
        object["source"] = .object(sourceObject)
        object["quote"] = quoteJSON
        object["week52"] = ["high": .number(week52High), "low": .number(week52Low), "from": .string(week52From)]
        var series = seriesSummaryJSON.objectValue ?? JSONObject()
        series["sampling"] = .string(sampling)
        series["dates"] = .array(dates.map(JSONValue.string))
        series["closes"] = .array(closes.map(JSONValue.number))
        object["series"] = .object(series)
        object["sparkline"] = .array(sparkline.map(JSONValue.number))
        object["problems"] = .array(problems.map(JSONValue.string))
        object["problemCount"] = .number(Double(problemCount))
        object["notes"] = .array(notes.map(JSONValue.string))
        object["splits"] = .array(splits)
        return .object(object)
    }

    var quoteJSON: JSONValue {
        var quote = JSONObject()
        quote["date"] = .string(date)
        quote.put("open", open)
        quote.put("high", high)
        quote.put("low", low)
        quote["close"] = .number(close)
        quote.put("volume", volume)
        quote.put("previousClose", previousClose)
        quote.put("previousDate", previousDate)
        quote.put("change", change)
        quote.put("changePercent", changePercent)
        return .object(quote)
    }

    /// The range statistics without the points.
    var seriesSummaryJSON: JSONValue {
        var series = JSONObject()
        series["range"] = .string(range.rawValue)
        series["start"] = .string(seriesStart)
        series["end"] = .string(date)
        series["tradingDays"] = .number(Double(tradingDays))
        series["startClose"] = .number(startClose)
        series["endClose"] = .number(close)
        series["change"] = .number(rangeChange)
        series["changePercent"] = .number(rangeChangePercent)
        series["high"] = .number(rangeHigh)
        series["low"] = .number(rangeLow)
        series.put("averageVolume", averageVolume)
        return .object(series)
    }

    /// Reads an item's content.
    init(json: JSONValue) throws {
        let reader = try JSONObjectReader(json, path: "params.item.content")
        symbol = try reader.string("symbol")
        name = try reader.optionalString("name")
        exchange = try reader.optionalString("exchange")
        currency = try reader.string("currency")
        let rangeText = try reader.string("range")
        guard let range = QuoteRange(rawValue: rangeText) else {
            throw JSONDecodeError(path: reader.path("range"), message: "expected one of 1M, 3M, 1Y, 5Y, got \"\(rangeText)\"")
        }
        self.range = range
        asOf = try reader.string("asOf")
        let sourceReader = try reader.object("source")
        source = QuoteSource(
            kind: try sourceReader.string("kind"), location: try sourceReader.string("location"),
            stale: try sourceReader.optionalBool("stale") ?? false, fetchedAt: try sourceReader.optionalString("fetchedAt"))
        let quote = try reader.object("quote")
        date = try quote.string("date")
        open = try quote.optionalDouble("open")
        high = try quote.optionalDouble("high")
        low = try quote.optionalDouble("low")
        close = try quote.double("close")
        volume = try quote.optionalDouble("volume")
        previousClose = try quote.optionalDouble("previousClose")
        previousDate = try quote.optionalString("previousDate")
        change = try quote.optionalDouble("change")
        changePercent = try quote.optionalDouble("changePercent")
        let week52 = try reader.object("week52")
        week52High = try week52.double("high")
        week52Low = try week52.double("low")
        week52From = try week52.string("from")
        let series = try reader.object("series")
        seriesStart = try series.string("start")
        tradingDays = try series.int("tradingDays")
        startClose = try series.double("startClose")
        rangeChange = try series.double("change")
        rangeChangePercent = try series.double("changePercent")
        rangeHigh = try series.double("high")
        rangeLow = try series.double("low")
        averageVolume = try series.optionalDouble("averageVolume")
        sampling = try series.optionalString("sampling") ?? "daily"
        dates = try series.strings("dates")
        closes = try series.array("closes") { (value, path) throws(JSONDecodeError) in
            guard let number = value.numberValue else { throw .typeMismatch(at: path, expected: "a number", got: value) }
            return number
        }
        guard dates.count == closes.count else {
            throw JSONDecodeError(path: series.path("closes"), message: "expected as many closes as dates (\(dates.count)), got \(closes.count)")
        }
        sparkline = try reader.array("sparkline") { (value, path) throws(JSONDecodeError) in
            guard let number = value.numberValue else { throw .typeMismatch(at: path, expected: "a number", got: value) }
            return number
        }
        problems = try reader.optionalStrings("problems") ?? []
        problemCount = max(0, try reader.optionalInt("problemCount") ?? problems.count)
        notes = try reader.optionalStrings("notes") ?? []
        splits = reader.value("splits")?.arrayValue ?? []
        // A forged item: lists within bounds, every number finite (1e400 reads as infinity).
        for (name, count, limit) in [
            ("series.closes", closes.count, Limits.maximumItemPoints), ("sparkline", sparkline.count, Limits.maximumItemList),
            ("problems", problems.count, Limits.maximumItemList), ("notes", notes.count, Limits.maximumItemList),
            ("splits", splits.count, Limits.maximumItemList),
        ] where count > limit {
            throw JSONDecodeError(path: "params.item.content.\(name)", message: "at most \(limit) entries, got \(count)")
        }
        let numbers: [(String, Double?)] = [
            ("quote.open", open), ("quote.high", high), ("quote.low", low), ("quote.close", close), ("quote.volume", volume),
            ("quote.previousClose", previousClose), ("quote.change", change), ("quote.changePercent", changePercent),
            ("week52.high", week52High), ("week52.low", week52Low), ("series.startClose", startClose),
            ("series.change", rangeChange), ("series.changePercent", rangeChangePercent), ("series.high", rangeHigh),
            ("series.low", rangeLow), ("series.averageVolume", averageVolume),
        ]
        for case (let name, let number?) in numbers where !number.isFinite {
            throw JSONDecodeError(path: "params.item.content.\(name)", message: "expected a finite number")
        }
        if let index = closes.firstIndex(where: { !$0.isFinite }) {
            throw JSONDecodeError(path: "params.item.content.series.closes[\(index)]", message: "expected a finite number")
        }
        if let index = sparkline.firstIndex(where: { !$0.isFinite }) {
            throw JSONDecodeError(path: "params.item.content.sparkline[\(index)]", message: "expected a finite number")
        }
    }
}

extension JSONObject {
    /// Sets `key` to a string, or leaves it out when `nil`.
    mutating func put(_ key: String, _ value: String?) {
        if let value { self[key] = .string(value) }
    }

    /// Sets `key` to a number, or leaves it out when `nil`.
    mutating func put(_ key: String, _ value: Double?) {
        if let value { self[key] = .number(value) }
    }
}
