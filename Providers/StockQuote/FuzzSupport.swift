import ContextProviderKit

/// The entry point for the libFuzzer target `Fuzz/PriceCSVFuzzer`: the first byte picks the reader
/// (even: a price file, odd: the symbols file); the rest is the file. Answers `nil`, or what was
/// violated beyond "no trap" (the fuzzer then stops with it).
package enum PriceFuzz {
    package static func run(_ input: UnsafeRawBufferPointer) -> String? {
        guard let first = input.first else { return nil }
        let bytes = Array(input.dropFirst())
        return first & 1 == 0 ? prices(bytes) : symbols(bytes)
    }

    /// Rows in date order with finite prices; bounded diagnostics; every range's snapshot reads back
    /// from its own JSON, and its sentences can be written.
    static func prices(_ bytes: [UInt8]) -> String? {
        let history = PriceParser.parse(bytes, source: "FUZZ.csv")
        if history.diagnostics.count > Limits.maximumDiagnostics { return "\(history.diagnostics.count) diagnostics kept" }
        for diagnostic in history.diagnostics where diagnostic.text.utf8.count > 1000 {
            return "a \(diagnostic.text.utf8.count)-byte message: \(diagnostic.text.prefix(120))"
        }
        var previous: Day?
        for row in history.rows {
            if let previous, row.day <= previous { return "rows out of date order at line \(row.line)" }
            previous = row.day
            for value in [row.open, row.high, row.low, row.close, row.adjClose, row.volume].compactMap({ $0 })
            where !value.isFinite || value < 0 {
                return "line \(row.line): a price or volume \(value)"
            }
        }
        guard !history.rows.isEmpty else { return nil }
        let loaded = LoadedHistory(
            entry: SymbolEntry(symbol: "FUZZ", fileName: "FUZZ.csv"), history: history,
            source: QuoteSource(kind: "file", location: "FUZZ.csv"), notes: [])
        for range in QuoteRange.allCases {
            let snapshot = QuoteSnapshot(loaded: loaded, range: range, defaultCurrency: "USD")
            if snapshot.closes.count > QuoteSnapshot.maximumChartPoints + 1 { return "\(snapshot.closes.count) chart points" }
            let text = snapshot.json.jsonString
            do {
                let json = try JSONValue(parsing: Array(text.utf8))
                let read = try QuoteSnapshot(json: json)
                _ = StockQuoteProvider.sentence(read) + StockQuoteProvider.spoken(read) + read.headline + read.changeText
            } catch {
                return "\(range.rawValue): the provider's own item does not read back: \(error)"
            }
        }
        return nil
    }

    /// Valid, distinct symbols; bounded problems and names.
    static func symbols(_ bytes: [UInt8]) -> String? {
        let (rows, problems) = SymbolsFile.parse(bytes, source: "symbols.csv")
        if problems.count > Limits.maximumDiagnostics + 1 { return "\(problems.count) problems kept" }
        for problem in problems where problem.text.utf8.count > 1000 {
            return "a \(problem.text.utf8.count)-byte message: \(problem.text.prefix(120))"
        }
        var seen = Set<String>()
        for row in rows {
            guard Ticker.isValid(row.symbol) else { return "invalid symbol \(row.symbol.prefix(40)) kept" }
            guard seen.insert(row.symbol).inserted else { return "symbol \(row.symbol) kept twice" }
            for text in [row.name, row.exchange, row.currency].compactMap({ $0 }) where text.count > Limits.maximumNameLength + 1 {
                return "a \(text.count)-character name kept"
            }
        }
        return nil
    }
}
