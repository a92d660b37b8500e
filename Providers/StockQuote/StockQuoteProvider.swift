import ContextProviderKit

/// The Stock Quote provider: daily price histories from a folder of CSV files (Yahoo and Stooq
/// spellings), or from a web source (Stooq's daily CSV, Alpha Vantage's JSON with a key the host
/// injects) fetched through the host's broker, with a cache in the data folder.
///
/// Items have type `quote`; their content is a `QuoteSnapshot` (quote, 52-week range, range
/// statistics, chart points, sparkline and data problems), so every view is computed from the
/// item alone. Data is read lazily on first use and cached.
public struct StockQuoteProvider: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.stock-quote", title: "Stock Quote", version: "1.0.0", iconName: "chart.line.uptrend.xyaxis")

    /// Views are computed from the item alone: run them inline.
    public static var immediateMethods: ProviderMethods { .itemViews }

    let context: ProviderContext
    let store: QuoteStore
    let defaultCurrency: String

    /// Reads the settings; no data is loaded here (see `QuoteStore`).
    public init(context: ProviderContext) throws {
        self.context = context
        let settings = context.settings
        guard let directory = settings.path("quotesDirectory"), !directory.isEmpty else {
            throw ProviderError(
                "Stock Quote has no quotesDirectory setting",
                hint: "set quotesDirectory to a folder with one CSV per symbol, e.g. ACME.csv")
        }
        let remote: RemoteSource?
        switch (settings.string("source") ?? "files").lowercased() {
        case "", "files": remote = nil
        case "stooq": remote = .stooq(base: settings.string("stooqURL") ?? "https://stooq.com")
        case "alphavantage": remote = .alphaVantage(base: settings.string("alphaVantageURL") ?? "https://www.alphavantage.co")
        case let other:
            throw ProviderError(
                "Stock Quote: source \"\(Limits.quote(other))\" is not files, stooq or alphavantage",
                hint: "set source to files (the quotes folder only), stooq (keyless daily CSV) or alphavantage (needs alphaVantageKey: context-host secrets set com.contexthost.stock-quote alphaVantageKey)")
        }
        let timeout = settings.double("httpTimeout") ?? 5
        guard timeout.isFinite, timeout > 0, timeout <= 60 else {
            throw ProviderError("Stock Quote: httpTimeout \(timeout) is out of range", hint: "use a number of seconds from 0.1 to 60")
        }
        let currency = (settings.string("defaultCurrency") ?? "USD").uppercased()
        guard currency.utf8.count <= 10, currency.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw ProviderError(
                "Stock Quote: defaultCurrency \"\(Limits.quote(currency))\" is not a currency code",
                hint: "use a 3-letter ISO 4217 code such as USD or EUR")
        }
        defaultCurrency = currency.isEmpty ? "USD" : currency
        let symbolsFile = settings.path("symbolsFile").flatMap { $0.isEmpty ? nil : $0 }
        store = QuoteStore(
            directory: directory, symbolsFile: symbolsFile, remote: remote, httpTimeout: timeout,
            httpCacheSeconds: max(0, min(settings.double("httpCacheSeconds") ?? 60, 1e9)),
            cacheFolder: context.dataDirectory.map { $0 + "/quote-cache" })
    }

    /// Whether a web source is set (it is reached through the host: no permission needed).
    var httpUsable: Bool { store.remote != nil }

    // MARK: Availability

    /// Available when the quotes folder has at least one price file, or when the HTTP source can
    /// be used; otherwise unavailable with what to fix.
    public func availability() async throws -> Availability {
        let catalog = store.currentCatalog()
        if catalog.priceFileCount > 0 || httpUsable { return .available }
        let problem = catalog.folderProblem ?? "there are no price files (*.csv, *.txt) in \(store.directory)"
        let reason = "Stock Quote has no data: \(problem). Add one CSV per symbol (e.g. ACME.csv with Date,Open,High,Low,Close,Volume), set quotesDirectory, or set source to stooq or alphavantage."
        return .unavailable(reason)
    }

    // MARK: Collector

    static let ranges = QuoteRange.allCases.map { FormOption(value: $0.rawValue, label: $0.rawValue, detail: $0.label) }

    static let form = ContextForm(
        stepId: "quote", title: "Stock Quote", submitLabel: "Attach",
        fields: [
            .choice(
                id: "symbol", label: "Symbol", required: true, search: ChoiceSearch(minQueryLength: 1),
                placeholder: "Ticker or company name", help: "Daily closes; the quote shows the date it is from."),
            .choice(id: "range", label: "Range", required: true, options: ranges, defaultValue: "1Y"),
        ],
        fallbackText: "Stock quote: type a ticker or company name (e.g. ACME), then pick a range (1M, 3M, 1Y or 5Y).")

    public func startCollection(sessionId: String) async throws -> ContextForm { Self.form }

    /// Symbols whose ticker or name matches: exact ticker first, then ticker prefixes, name word
    /// prefixes, and other matches; at most 20.
    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]
    {
        guard fieldId == "symbol", query.utf8.count <= Limits.maximumQueryLength else { return [] }
        let catalog = store.currentCatalog()
        let upper = query.trimmingSpaces.uppercased()
        let lower = query.trimmingSpaces.lowercased()
        var scored: [(score: Int, entry: SymbolEntry)] = []
        for entry in catalog.entries where entry.path != nil || httpUsable {
            let name = entry.name?.lowercased() ?? ""
            let score: Int
            if upper.isEmpty || entry.symbol == upper {
                score = 0
            } else if entry.symbol.hasPrefix(upper) {
                score = 1
            } else if name.hasPrefix(lower) || name.contains(" " + lower) {
                score = 2
            } else if name.contains(lower) || entry.symbol.contains(upper) {
                score = 3
            } else {
                continue
            }
            scored.append((score, entry))
        }
        scored.sort { $0.score != $1.score ? $0.score < $1.score : $0.entry.symbol < $1.entry.symbol }
        return scored.prefix(20).map { _, entry in
            let where_ = entry.fileName ?? "via \(store.remote?.name ?? "HTTP")"
            let detail = [entry.exchange, entry.currency ?? defaultCurrency, where_].compactMap { $0 }.joined(separator: " · ")
            return FormOption(value: entry.symbol, label: entry.name.map { "\(entry.symbol) — \($0)" } ?? entry.symbol, detail: detail)
        }
    }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        guard stepId == Self.form.stepId else {
            throw ProviderError.invalidParams("params.stepId: unknown step \"\(stepId)\"; expected quote")
        }
        // The SDK has checked presence and the static range options.
        let range = QuoteRange(rawValue: values.string("range") ?? "1Y") ?? .oneYear
        let typed = (values.string("symbol") ?? "").trimmingSpaces
        let symbol = typed.uppercased()
        guard Ticker.isValid(symbol) else {
            return .invalid(fieldErrors: ["symbol": "\"\(Limits.quote(typed))\" is not a valid symbol: use \(Ticker.rule)."])
        }
        let loaded: LoadedHistory
        let context = context
        do {
            loaded = try await store.history(for: symbol) { request in try await context.fetch(request) }
        } catch let error as LookupFailure {
            return .invalid(fieldErrors: ["symbol": error.message])
        }
        try Task.checkCancellation()
        guard !loaded.history.rows.isEmpty else {
            let problems = loaded.notes + loaded.history.problems
            let count = problems.count + loaded.history.omittedProblems
            let first = problems.first.map { " First problem: \($0.text)." } ?? ""
            return .invalid(fieldErrors: [
                "symbol": "\(loaded.source.location) has no usable price rows (\(count) \(count == 1 ? "problem" : "problems")).\(first) Fix the file; every problem is in the host log."
            ])
        }
        let snapshot = QuoteSnapshot(loaded: loaded, range: range, defaultCurrency: defaultCurrency)
        return .item(context.makeItem(type: "quote", displayName: snapshot.headline, content: snapshot.json))
    }

    // MARK: Views

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        let quote = try QuoteSnapshot(json: item.content)
        let title = quote.headline
        var subtitle = "\(quote.changeText) · as of \(quote.asOf)"
        if quote.source.stale { subtitle += " · stale (fetched \(quote.source.fetchedAt.map { String($0.prefix(10)) } ?? "earlier"))" }
        return ContextChip(
            icon: Self.metadata.iconName, title: title, subtitle: subtitle, tone: quote.tone,
            accessory: .sparkline(quote.sparkline),
            accessibilityLabel: Self.spoken(quote),
            fallbackText: "\(title), \(quote.changeText), as of \(quote.asOf)\(quote.source.stale ? ", stale" : "")")
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let quote = try QuoteSnapshot(json: item.content)
        var blocks: [DetailBlock] = []
        var summary = "Last close \(Format.price(quote.close)) \(quote.currency), \(quote.changeText)"
        if let previousClose = quote.previousClose, let previousDate = quote.previousDate {
            summary += " against the previous close \(Format.price(previousClose)) on \(previousDate)"
        }
        summary += ". Daily data as of \(quote.asOf)"
        if let created = item.createdAt.flatMap({ Day.parse(String($0.prefix(10))) }), let asOf = Day.parse(quote.asOf) {
            let age = created.ordinal - asOf.ordinal
            if age > 0 { summary += " (\(age) \(age == 1 ? "day" : "days") old when attached on \(created.iso))" }
        }
        summary += "; prices may be stale."
        blocks.append(.text(summary))

        let points = zip(quote.dates, quote.closes).map { ChartPoint(x: $0, y: $1) }
        let rangeSummary =
            "\(quote.range.rawValue): \(Format.price(quote.startClose)) → \(Format.price(quote.close)) "
            + "(\(Format.signedPercent(quote.rangeChangePercent))), high \(Format.price(quote.rangeHigh)), low \(Format.price(quote.rangeLow))"
        blocks.append(.chart(ChartBlock(
            kind: .line, unit: quote.currency, series: [ChartSeries(name: "\(quote.symbol) close", points: points)],
            fallback: "\(quote.symbol) daily closes, \(quote.seriesStart) to \(quote.date) (\(quote.sampling)). \(rangeSummary)")))

        var facts: [Fact] = []
        func add(_ label: String, _ value: Double?, _ format: (Double) -> String = Format.price) {
            facts.append(Fact(label: label, value: value.map(format) ?? "—"))
        }
        add("Open", quote.open)
        add("High", quote.high)
        add("Low", quote.low)
        add("Close", quote.close)
        if let previousClose = quote.previousClose {
            facts.append(Fact(label: "Previous close", value: "\(Format.price(previousClose)) (\(quote.previousDate ?? "?"))"))
        }
        facts.append(Fact(label: "Change", value: quote.changeText, tone: quote.tone))
        add("Volume", quote.volume, Format.count)
        facts.append(Fact(label: "52-week range", value: "\(Format.price(quote.week52Low)) – \(Format.price(quote.week52High))"))
        add("Average volume (\(quote.range.rawValue))", quote.averageVolume, Format.count)
        facts.append(Fact(
            label: "\(quote.range.rawValue) change",
            value: "\(Format.signedPrice(quote.rangeChange, level: quote.close)) (\(Format.signedPercent(quote.rangeChangePercent)))",
            tone: quote.rangeChange > 0 ? .good : quote.rangeChange < 0 ? .attention : .neutral))
        facts.append(Fact(label: "\(quote.range.rawValue) range", value: "\(Format.price(quote.rangeLow)) – \(Format.price(quote.rangeHigh))"))
        facts.append(Fact(label: "As of", value: quote.asOf))
        facts.append(Fact(label: "Currency", value: quote.currency))
        if let exchange = quote.exchange { facts.append(Fact(label: "Exchange", value: exchange)) }
        facts.append(Fact(label: "Source", value: quote.source.kind == "http" ? quote.source.location : "\(quote.source.location) (local file)"))
        if let fetchedAt = quote.source.fetchedAt {
            facts.append(Fact(label: "Fetched", value: quote.source.stale ? "\(fetchedAt) (stale: the last fetch failed)" : fetchedAt, tone: quote.source.stale ? .attention : nil))
        }
        blocks.append(.facts(facts))

        if quote.problemCount > 0 {
            blocks.append(.text(
                "Data problems (\(quote.problemCount)): these rows were skipped or adjusted", style: .heading))
            var items = quote.problems
            if quote.problemCount > items.count {
                items.append("… and \(quote.problemCount - items.count) more (see the host log)")
            }
            blocks.append(.list(items))
        }
        if !quote.notes.isEmpty {
            blocks.append(.text("Notes", style: .heading))
            blocks.append(.list(quote.notes))
        }
        let title = quote.name.map { "\(quote.symbol) — \($0)" } ?? quote.symbol
        return ContextDetail(title: title, blocks: blocks)
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let quote = try QuoteSnapshot(json: item.content)
        return Self.sentence(quote)
    }

    /// `json` (default): the quote and the range summary; `text`: one sentence.
    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let quote = try QuoteSnapshot(json: item.content)
        let metadata = ["symbol": quote.symbol, "asOf": quote.asOf, "currency": quote.currency, "range": quote.range.rawValue]
        switch representation ?? "json" {
        case "json":
            var object = JSONObject()
            object["symbol"] = .string(quote.symbol)
            object.put("name", quote.name)
            object.put("exchange", quote.exchange)
            object["currency"] = .string(quote.currency)
            object["asOf"] = .string(quote.asOf)
            object["quote"] = quote.quoteJSON
            object["week52"] = ["high": .number(quote.week52High), "low": .number(quote.week52Low)]
            object["series"] = quote.seriesSummaryJSON
            object["source"] = ["kind": .string(quote.source.kind), "location": .string(quote.source.location)]
            object["splits"] = .array(quote.splits)
            object["dataProblems"] = .number(Double(quote.problemCount))
            return .json(.object(object), metadata: metadata)
        case "text":
            return .text(Self.sentence(quote), metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text"])
        }
    }

    // MARK: Text

    /// `ACME (Acme Corporation) closed at 80.76 USD on 2026-11-20, ▼ -2.56 (-3.07%); 1Y: …`.
    static func sentence(_ quote: QuoteSnapshot) -> String {
        let name = quote.name.map { " (\($0))" } ?? ""
        return "\(quote.symbol)\(name) closed at \(Format.price(quote.close)) \(quote.currency) on \(quote.asOf), "
            + "\(quote.changeText); \(quote.range.rawValue) change \(Format.signedPercent(quote.rangeChangePercent)), "
            + "52-week range \(Format.price(quote.week52Low))–\(Format.price(quote.week52High))."
    }

    static func spoken(_ quote: QuoteSnapshot) -> String {
        var text = "\(quote.symbol)\(quote.name.map { ", \($0)" } ?? ""), last close \(Format.price(quote.close)) \(quote.currency)"
        if let change = quote.change, let percent = quote.changePercent {
            let direction = change > 0 ? "up" : change < 0 ? "down" : "unchanged"
            text += change == 0 ? ", unchanged" : ", \(direction) \(Format.fixed(abs(change), decimals: Format.decimals(forPrice: quote.close))), \(Format.fixed(abs(percent), decimals: 2)) percent"
        }
        return text + ", as of \(quote.asOf)"
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: StockQuoteProvider.self)
}
