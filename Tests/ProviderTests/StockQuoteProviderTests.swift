import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Stock Quote provider through its real library (`libStockQuoteProvider.so`).
@Suite("Stock Quote provider")
struct StockQuoteProviderTests {
    // MARK: Sample data against the oracle

    @Test("every sample symbol and range matches the independent oracle (Yahoo, Stooq and split files)")
    func sampleDataMatchesOracle() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        let oracle = try StockQuoteFixtures.oracle()
        let symbols = oracle.objectValue?.keys ?? []
        #expect(symbols.count == 6)
        for symbol in symbols {
            let expected = try #require(oracle[symbol])
            for range in ["1M", "3M", "1Y", "5Y"] {
                let item = try await StockQuoteFixtures.submitItem(provider, symbol: symbol, range: range)
                let content = try #require(item["content"])
                #expect(item["type"] == "quote")
                #expect(content["symbol"] == .string(symbol))
                #expect(content["name"] == expected["name"])
                #expect(content["exchange"] == expected["exchange"])
                #expect(content["currency"] == expected["currency"])
                #expect(content["asOf"] == expected["asOf"])
                #expect(content["source"]?["location"] == expected["file"])
                let quote = try #require(content["quote"])
                for key in ["open", "high", "low", "close", "volume", "previousClose", "change", "changePercent"] {
                    #expect(approximatelyEqual(quote[key], expected[key]), "\(symbol) \(key): \(String(describing: quote[key])) vs \(String(describing: expected[key]))")
                }
                #expect(quote["previousDate"] == expected["previousDate"])
                #expect(approximatelyEqual(content["week52"]?["high"], expected["week52High"]))
                #expect(approximatelyEqual(content["week52"]?["low"], expected["week52Low"]))
                let series = try #require(content["series"])
                let window = try #require(expected["ranges"]?[range])
                #expect(series["start"] == window["start"], "\(symbol) \(range)")
                #expect(series["tradingDays"] == window["count"], "\(symbol) \(range)")
                for key in ["startClose", "endClose", "high", "low"] {
                    #expect(approximatelyEqual(series[key], window[key]), "\(symbol) \(range) \(key)")
                }
                #expect(approximatelyEqual(series["averageVolume"], window["averageVolume"], tolerance: 1), "\(symbol) \(range) averageVolume")
                let closes = series["closes"]?.arrayValue ?? []
                #expect(closes.count == min(window["count"]?.intValue ?? 0, 260))
                #expect(closes.last == quote["close"])
                let sparkline = content["sparkline"]?.arrayValue ?? []
                let expectedSparkline = expected["sparkline"]?.arrayValue ?? []
                #expect(sparkline.count == 30)
                #expect(zip(sparkline, expectedSparkline).allSatisfy { approximatelyEqual($0, $1) })
                #expect(content["problemCount"] == 0, "\(symbol): \(String(describing: content["problems"]))")
            }
        }
    }

    @Test("a split recorded in Adj Close is a note, and earlier prices are put on the new scale")
    func matchedSplitIsANote() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        let item = try await StockQuoteFixtures.submitItem(provider, symbol: "HOOL", range: "5Y")
        let notes = item["content"]?["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.count == 1)
        #expect(notes.first?.hasPrefix("HOOL.csv:663: 4-for-1 split on 2024-06-10") == true)
        #expect(notes.first?.contains("Adj Close already reflects it") == true)
        #expect(item["content"]?["problemCount"] == 0)
        #expect(item["content"]?["splits"] == [["date": "2024-06-10", "factor": 4, "label": "4-for-1 split", "inAdjClose": true]])
        let encoded = try await provider.patientCall("item/encode", ["item": item])
        #expect(try StockQuoteFixtures.decodeBase64JSON(encoded["data"])["splits"]?.arrayValue?.count == 1)
        // 1673.72 on the first day of the raw file, divided by 4.
        #expect(item["content"]?["series"]?["startClose"] == 418.43)
    }

    // MARK: Collector

    @Test("the form offers a searchable symbol and the four ranges")
    func form() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        let form = try await provider.patientCall("collect/start", ["sessionId": "s"])
        #expect(form["stepId"] == "quote")
        let fields = form["fields"]?.arrayValue ?? []
        #expect(fields.compactMap { $0["id"]?.stringValue } == ["symbol", "range"])
        #expect(fields[0]["kind"] == "choice")
        #expect(fields[0]["search"]?["minQueryLength"] == 1)
        #expect(fields[0]["required"] == true)
        #expect(fields[1]["options"]?.arrayValue?.compactMap { $0["value"]?.stringValue } == ["1M", "3M", "1Y", "5Y"])
        #expect(fields[1]["default"] == "1Y")
    }

    @Test("symbol search by ticker and by name")
    func search() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        func values(_ query: String) async throws -> [String] {
            try await StockQuoteFixtures.query(provider, query).compactMap { $0["value"]?.stringValue }
        }
        #expect(try await values("acme") == ["ACME"])
        #expect(try await values("G").first == "GLBX")
        #expect(try await values("globex") == ["GLBX"])
        #expect(try await values("Hooli") == ["HOOL"])
        #expect(try await values("indus") == ["STRK"])
        #expect(try await values("umbr.de") == ["UMBR.DE"])
        #expect(try await values("zzzz") == [])
        // WAYN is only in the symbols file: no local prices, no network permission → not offered.
        #expect(try await values("wayne") == [])
        let acme = try #require(try await StockQuoteFixtures.query(provider, "AC").first)
        #expect(acme["label"] == "ACME — Acme Corporation")
        #expect(acme["detail"] == "NYSE · USD · ACME.csv")
        let other = try await provider.patientCall(
            "collect/query", ["sessionId": "s", "stepId": "quote", "fieldId": "range", "query": "1"])
        #expect(other["options"] == [])
    }

    @Test("bad and unknown symbols get a per-field error")
    func badSymbols() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        func errors(_ values: JSONObject) async throws -> JSONValue? {
            let result = try await provider.patientCall(
                "collect/submit", ["sessionId": "s", "stepId": "quote", "values": .object(values)])
            #expect(result["outcome"] == "invalid")
            return result["fieldErrors"]
        }
        let unknown = try await errors(["symbol": "NOPE", "range": "1Y"])
        #expect(unknown?["symbol"]?.stringValue?.hasPrefix("Unknown symbol NOPE: there is no price file") == true)
        let invalid = try await errors(["symbol": "AC ME!", "range": "1Y"])
        #expect(invalid?["symbol"]?.stringValue?.contains("is not a valid symbol") == true)
        let missing = try await errors(["range": "1Y"])
        #expect(missing?["symbol"] == "Symbol is required.")
        let badRange = try await errors(["symbol": "ACME", "range": "2W"])
        #expect(badRange?["range"] == "Range must be one of: 1M, 3M, 1Y, 5Y.")
        #expect(badRange?["symbol"] == nil)
        let httpOnly = try await errors(["symbol": "wayn", "range": "1Y"])
        #expect(httpOnly?["symbol"]?.stringValue?.hasPrefix("WAYN (Wayne Enterprises) has no local price file") == true)
        #expect(httpOnly?["symbol"]?.stringValue?.contains("no web source is set") == true)
        // Lower case is accepted.
        let item = try await StockQuoteFixtures.submitItem(provider, symbol: "acme", range: "1M")
        #expect(item["content"]?["symbol"] == "ACME")
    }

    // MARK: Views

    @Test("chip: symbol, last close, change with ▲/▼, tone and a 30-close sparkline")
    func chip() async throws {
        let provider = try StockQuoteFixtures.sampleProvider()
        let oracle = try StockQuoteFixtures.oracle()
        for symbol in ["ACME", "STRK"] {
            let expected = try #require(oracle[symbol])
            let item = try await StockQuoteFixtures.submitItem(provider, symbol: symbol, range: "1Y")
            let chip = try await provider.patientCall("item/preview", ["item": item])
            let closeText = String(format: "%.2f", expected["close"]?.numberValue ?? 0)
            let change = expected["change"]?.numberValue ?? 0
            let percent = String(format: "%+.2f%%", expected["changePercent"]?.numberValue ?? 0)
            #expect(chip["title"] == .string("\(symbol) \(closeText) USD"))
            let subtitle = try #require(chip["subtitle"]?.stringValue)
            #expect(subtitle.hasPrefix(change > 0 ? "▲ +" : "▼ -"), "\(subtitle)")
            #expect(subtitle.contains("(\(percent))"), "\(subtitle)")
            #expect(subtitle.hasSuffix("as of 2026-11-20"))
            #expect(chip["tone"] == (change > 0 ? "good" : "attention"))
            #expect(chip["accessory"]?["kind"] == "sparkline")
            #expect(chip["accessory"]?["values"]?.arrayValue?.count == 30)
            #expect(chip["accessibilityLabel"]?.stringValue?.contains(change > 0 ? "up" : "down") == true)
            #expect(chip["fallbackText"]?.stringValue?.contains("as of 2026-11-20") == true)
        }
        // ACME is down on the last day and STRK up (the oracle says so; the loop checked both tones).
        #expect((oracle["ACME"]?["change"]?.numberValue ?? 0) < 0)
        #expect((oracle["STRK"]?["change"]?.numberValue ?? 0) > 0)
    }

    @Test("detail: line chart for the range, facts and the as-of date")
    func detail() async throws {
        let (provider, item, expected) = try await StockQuoteFixtures.sampleItem(symbol: "GLBX", range: "3M")
        let detail = try await provider.patientCall("item/detail", ["item": item])
        #expect(detail["title"] == "GLBX — Globex Corporation")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let text = try #require(blocks.first { $0["type"] == "text" }?["text"]?.stringValue)
        #expect(text.contains("as of 2026-11-20"))
        #expect(text.contains("may be stale"))
        let chart = try #require(blocks.first { $0["type"] == "chart" })
        #expect(chart["kind"] == "line")
        #expect(chart["unit"] == "USD")
        let points = chart["series"]?.arrayValue?.first?["points"]?.arrayValue ?? []
        #expect(points.count == expected["ranges"]?["3M"]?["count"]?.intValue)
        #expect(points.first?["x"] == expected["ranges"]?["3M"]?["start"])
        #expect(points.last?["x"] == "2026-11-20")
        #expect(approximatelyEqual(points.last?["y"], expected["close"]))
        let facts = try #require(blocks.first { $0["type"] == "facts" }?["facts"]?.arrayValue)
        func fact(_ label: String) -> String? { facts.first { $0["label"] == .string(label) }?["value"]?.stringValue }
        #expect(fact("Open") == String(format: "%.2f", expected["open"]?.numberValue ?? 0))
        #expect(fact("High") == String(format: "%.2f", expected["high"]?.numberValue ?? 0))
        #expect(fact("Low") == String(format: "%.2f", expected["low"]?.numberValue ?? 0))
        #expect(fact("Close") == String(format: "%.2f", expected["close"]?.numberValue ?? 0))
        #expect(fact("Volume") == Self.grouped(expected["volume"]?.intValue ?? 0))
        #expect(fact("52-week range") == String(
            format: "%.2f – %.2f", expected["week52Low"]?.numberValue ?? 0, expected["week52High"]?.numberValue ?? 0))
        #expect(fact("Average volume (3M)") == Self.grouped(expected["ranges"]?["3M"]?["averageVolume"]?.intValue ?? 0))
        #expect(fact("As of") == "2026-11-20")
        #expect(fact("Currency") == "USD")
        #expect(fact("Exchange") == "NASDAQ")
        #expect(fact("Source") == "glbx.us.txt (local file)")
        #expect(!blocks.contains { $0["type"] == "list" }, "clean data has no problem list")
        #expect(detail["fallbackText"]?.stringValue?.contains("52-week range") == true)
        // describe
        let describe = try await provider.patientCall("item/describe", ["item": item])
        #expect(describe["text"]?.stringValue?.hasPrefix("GLBX (Globex Corporation) closed at") == true)
    }

    @Test("encode: JSON with the quote and the series summary; text; unknown representations refused")
    func encode() async throws {
        let (provider, item, expected) = try await StockQuoteFixtures.sampleItem(symbol: "UMBR.DE", range: "1Y")
        let encoded = try await provider.patientCall("item/encode", ["item": item])
        #expect(encoded["representation"] == "json")
        #expect(encoded["contentType"] == "application/json")
        #expect(encoded["metadata"]?["symbol"] == "UMBR.DE")
        #expect(encoded["metadata"]?["asOf"] == "2026-11-20")
        let json = try StockQuoteFixtures.decodeBase64JSON(encoded["data"])
        #expect(json["symbol"] == "UMBR.DE")
        #expect(json["currency"] == "EUR")
        #expect(json["asOf"] == "2026-11-20")
        #expect(approximatelyEqual(json["quote"]?["close"], expected["close"]))
        #expect(approximatelyEqual(json["quote"]?["change"], expected["change"]))
        #expect(approximatelyEqual(json["week52"]?["high"], expected["week52High"]))
        #expect(json["series"]?["range"] == "1Y")
        #expect(json["series"]?["tradingDays"] == expected["ranges"]?["1Y"]?["count"])
        #expect(approximatelyEqual(json["series"]?["averageVolume"], expected["ranges"]?["1Y"]?["averageVolume"], tolerance: 1))
        #expect(json["series"]?["closes"] == nil, "the encoding carries the summary, not the points")
        let text = try await provider.patientCall("item/encode", ["item": item, "representation": "text"])
        let sentence = String(decoding: Data(base64Encoded: text["data"]?.stringValue ?? "") ?? Data(), as: UTF8.self)
        #expect(sentence.hasPrefix("UMBR.DE (Umbrella Holdings AG) closed at"))
        #expect(sentence.contains("EUR on 2026-11-20"))
        await #expect(throws: ProviderHarness.CallError.self) {
            try await provider.patientCall("item/encode", ["item": item, "representation": "csv"])
        }
        // An item whose content is not a quote is refused with the member path.
        var broken = item.objectValue ?? [:]
        broken["content"] = ["symbol": "ACME"]
        do {
            _ = try await provider.patientCall("item/preview", ["item": .object(broken)])
            Issue.record("a broken item was accepted")
        } catch let error as ProviderHarness.CallError {
            #expect(error.code == -32602)
            #expect(error.message.contains("params.item.content"))
        }
    }

    // MARK: Bad data

    @Test("malformed rows are reported by file and line, skipped, and listed in the detail")
    func malformedRows() async throws {
        let (_, provider, item) = try await StockQuoteFixtures.fileItem(StockQuoteFixtures.badCSV, symbol: "BAD", range: "1M")
        let content = try #require(item["content"])
        let problems = content["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(content["problemCount"] == 9)
        let expectations: [(Int, String)] = [
            (4, "missing fields: 3 of the header's 6 columns; row skipped"),
            (5, "Open \"abc\" is not a number; row skipped"),
            (6, "Open \"null\" is not a number; row skipped"),
            (7, "duplicate date 2024-01-03 (first on line 3); row skipped"),
            (8, "High 10.4 is below Low 10.6; row skipped"),
            (10, "date 2023-12-29 is out of order (after 2024-01-10 on line 9)"),
            (11, "High -11.00 must be greater than zero; row skipped"),
            (12, "Date \"2024-13-01\" is not a date"),
            (15, "split-like jump: close went from 11.1 on 2024-01-12 to 5.65 (a factor of 2)"),
        ]
        for (index, (line, text)) in expectations.enumerated() {
            let problem = index < problems.count ? problems[index] : ""
            #expect(problem.hasPrefix("BAD.csv:\(line): \(text)"), "got \(problem)")
        }
        #expect(problems.last?.contains("treated as a 2-for-1 split: prices before 2024-01-16 are divided by 2 and volumes multiplied by 2") == true)
        #expect(problems.last?.contains("the file has no Adj Close column") == true)
        #expect(content["splits"] == [["date": "2024-01-16", "factor": 2, "label": "2-for-1 split", "inAdjClose": false]])
        // Kept: lines 2, 3, 9, 14 (halved) and 15, 16.
        #expect(content["series"]?["tradingDays"] == 6)
        #expect(content["series"]?["closes"] == [5.1, 5.2, 5.4, 5.55, 5.65, 5.75])
        #expect(content["series"]?["dates"] == ["2024-01-02", "2024-01-03", "2024-01-10", "2024-01-12", "2024-01-16", "2024-01-17"])
        #expect(content["quote"]?["close"] == 5.75)
        #expect(content["quote"]?["previousClose"] == 5.65)
        #expect(approximatelyEqual(content["quote"]?["change"], 0.1))
        #expect(approximatelyEqual(content["quote"]?["changePercent"], 1.769912))
        #expect(content["week52"]?["low"] == 4.9)
        #expect(content["week52"]?["high"] == 5.8)
        #expect(content["series"]?["averageVolume"] == 3117)  // (2000+2200+3000+3600+4000+3900)/6 = 3116.7
        let detail = try await provider.patientCall("item/detail", ["item": item])
        let blocks = detail["blocks"]?.arrayValue ?? []
        let heading = blocks.first { $0["type"] == "text" && $0["style"] == "heading" }
        #expect(heading?["text"]?.stringValue?.hasPrefix("Data problems (9)") == true)
        let list = try #require(blocks.first { $0["type"] == "list" }?["items"]?.arrayValue)
        #expect(list.count == 9)
        #expect(list.first?.stringValue?.hasPrefix("BAD.csv:4:") == true)
        let chip = try await provider.patientCall("item/preview", ["item": item])
        #expect(chip["tone"] == "good")
        #expect(chip["subtitle"]?.stringValue?.hasPrefix("▲ +0.10 (+1.77%)") == true)
    }

    @Test("newest-first files, Adj Close splits, ';' separators, BOM, CRLF, quotes and pandas dates are read")
    func formatVariants() async throws {
        let (folder, provider, item) = try await StockQuoteFixtures.fileItem(StockQuoteFixtures.reversedCSV, symbol: "REV", range: "1Y")
        let content = try #require(item["content"])
        #expect(content["problemCount"] == 0, "\(String(describing: content["problems"]))")
        #expect(content["series"]?["dates"] == ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"])
        #expect(content["series"]?["closes"] == [49.5, 50, 50, 50.5])
        #expect(content["quote"]?["change"] == 0.5)
        #expect(content["quote"]?["changePercent"] == 1)
        #expect(content["series"]?["averageVolume"] == 2045)  // (2080+2000+2100+2000)/4, earlier volumes × 4
        let notes = content["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains("REV.csv: rows are newest first; read in reverse order"))
        #expect(notes.contains { $0.hasPrefix("REV.csv:3: 4-for-1 split on 2024-01-04") })

        // A reverse split without Adj Close: earlier prices are multiplied, and it is a problem.
        try folder.write("quotes/RSPLIT.csv", "Date,Close,Volume\n2024-03-01,1.00,50000\n2024-03-04,1.02,40000\n2024-03-05,10.10,4100\n2024-03-06,10.30,4000\n")
        let reverse = try await StockQuoteFixtures.submitItem(provider, symbol: "RSPLIT", range: "1M")
        #expect(reverse["content"]?["series"]?["closes"] == [10, 10.2, 10.1, 10.3])
        #expect(reverse["content"]?["series"]?["averageVolume"] == 4275)  // (5000+4000+4100+4000)/4
        #expect(reverse["content"]?["splits"]?.arrayValue?.first?["label"] == "1-for-10 reverse split")
        let problem = reverse["content"]?["problems"]?.arrayValue?.first?.stringValue ?? ""
        #expect(problem.hasPrefix("RSPLIT.csv:4: split-like jump: close went from 1.02 on 2024-03-04 to 10.1 (a factor of 0.1)"), "\(problem)")
        #expect(problem.contains("prices before 2024-03-05 are multiplied by 10 and volumes divided by 10"))
    }

    @Test("unusable files: empty, no Close column, one row, duplicate symbols")
    func unusableFiles() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("quotes/EMPTY.csv", "")
        try folder.write("quotes/NOCLOSE.csv", "Date,Open,High,Low,Volume\n2024-01-02,1,2,0.5,100\n")
        try folder.write("quotes/ONE.csv", "Date,Open,High,Low,Close,Volume\n2024-01-02,1,2,0.5,1.5,100\n")
        try folder.write("quotes/dup.us.txt", "Date,Close\n2024-01-02,9\n")
        try folder.write("quotes/DUP.csv", "Date,Close\n2024-01-02,7\n")
        try folder.write("quotes/README.md", "not a price file")
        let provider = try StockQuoteFixtures.provider(quotes: folder.path + "/quotes")
        func symbolError(_ symbol: String) async throws -> String? {
            let result = try await provider.patientCall(
                "collect/submit", ["sessionId": "s", "stepId": "quote", "values": ["symbol": .string(symbol), "range": "1M"]])
            #expect(result["outcome"] == "invalid")
            return result["fieldErrors"]?["symbol"]?.stringValue
        }
        let empty = try #require(try await symbolError("EMPTY"))
        #expect(empty.hasPrefix("EMPTY.csv has no usable price rows (1 problem). First problem: EMPTY.csv: the file is empty"))
        let noClose = try #require(try await symbolError("NOCLOSE"))
        #expect(noClose.contains("NOCLOSE.csv:1: the header \"Date,Open,High,Low,Volume\" has no Close column"))
        let one = try await StockQuoteFixtures.submitItem(provider, symbol: "ONE", range: "1M")
        #expect(one["content"]?["quote"]?["change"] == nil)
        let chip = try await provider.patientCall("item/preview", ["item": one])
        #expect(chip["tone"] == "neutral")
        #expect(chip["subtitle"] == "no previous close · as of 2024-01-02")
        // DUP.csv sorts first and wins; dup.us.txt is ignored (and logged).
        let dup = try await StockQuoteFixtures.submitItem(provider, symbol: "DUP", range: "1M")
        #expect(dup["content"]?["quote"]?["close"] == 7)
        let options = try await StockQuoteFixtures.query(provider, "")
        #expect(options.compactMap { $0["value"]?.stringValue } == ["DUP", "EMPTY", "NOCLOSE", "ONE"])
    }

    @Test("symbols file: names, exchanges and currencies; bad rows are skipped, the rest still used")
    func symbolsFile() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("quotes/ABC.csv", "Date,Close\n2024-01-02,10\n2024-01-03,11\n")
        try folder.write("quotes/XYZ.csv", "Date,Close\n2024-01-02,20\n2024-01-03,19\n")
        try folder.write("symbols.csv", """
            Ticker;Company;Market;Currency
            abc;"Alpha; Beta & Co";LSE;gbp
            ABC;Duplicate;NYSE;USD
            ;No symbol;NYSE;USD
            BAD SYMBOL;Spaces;NYSE;USD
            XYZ;Xylophone Zone;NYSE;dollars

            """)
        let provider = try StockQuoteFixtures.provider(
            quotes: folder.path + "/quotes", symbols: folder.path + "/symbols.csv")
        let options = try await StockQuoteFixtures.query(provider, "beta")
        #expect(options.first?["label"] == "ABC — Alpha; Beta & Co")
        #expect(options.first?["detail"] == "LSE · GBP · ABC.csv")
        let abc = try await StockQuoteFixtures.submitItem(provider, symbol: "ABC", range: "1M")
        #expect(abc["content"]?["currency"] == "GBP")
        #expect(abc["displayName"] == "ABC 11.00 GBP")
        // An invalid currency falls back to defaultCurrency (USD); the name is still used.
        let xyz = try await StockQuoteFixtures.submitItem(provider, symbol: "XYZ", range: "1M")
        #expect(xyz["content"]?["currency"] == "USD")
        #expect(xyz["content"]?["name"] == "Xylophone Zone")
        let chip = try await provider.patientCall("item/preview", ["item": xyz])
        #expect(chip["subtitle"] == "▼ -1.00 (-5.00%) · as of 2024-01-03")
        #expect(chip["tone"] == "attention")
    }

    @Test("an empty or missing data folder makes the provider unavailable with a reason")
    func emptyFolder() async throws {
        let folder = try TemporaryDirectory()
        try folder.write("quotes/notes.md", "no prices here")
        let empty = try StockQuoteFixtures.provider(quotes: folder.path + "/quotes")
        let availability = try await empty.patientCall("provider/availability")
        #expect(availability["available"] == false)
        let reason = try #require(availability["reason"]?.stringValue)
        #expect(reason.contains("there are no price files (*.csv, *.txt) in \(folder.path)/quotes"))
        #expect(reason.contains("Add one CSV per symbol"))

        let missing = try StockQuoteFixtures.provider(quotes: folder.path + "/nowhere")
        let missingAvailability = try await missing.patientCall("provider/availability")
        #expect(missingAvailability["available"] == false)
        #expect(missingAvailability["reason"]?.stringValue?.contains("the quotes folder \(folder.path)/nowhere does not exist") == true)

        // A web source makes it available without local files (the host fetches; no permission).
        let web = try ProviderHarness(
            product: "StockQuoteProvider", providerID: "com.contexthost.stock-quote",
            settings: ["quotesDirectory": .string(folder.path + "/quotes"), "source": "stooq"])
        #expect(try await web.patientCall("provider/availability")["available"] == true)

        let sample = try StockQuoteFixtures.sampleProvider()
        #expect(try await sample.patientCall("provider/availability")["available"] == true)
    }

    @Test("an unknown source or an unusable timeout stops the provider from opening")
    func badSettings() throws {
        #expect(throws: (any Error).self) {
            try ProviderHarness(
                product: "StockQuoteProvider", providerID: "com.contexthost.stock-quote",
                settings: ["quotesDirectory": "/tmp", "source": "ftp"])
        }
        #expect(throws: (any Error).self) {
            try ProviderHarness(
                product: "StockQuoteProvider", providerID: "com.contexthost.stock-quote",
                settings: ["quotesDirectory": "/tmp", "httpTimeout": 0])
        }
    }

    // The web sources (Stooq CSV, Alpha Vantage JSON) go through the host's broker: they are
    // tested against a loopback HTTPS server in Tests/IntegrationTests/StockQuoteHTTPSTests.swift.

    // MARK: Helpers

    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var output = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { output.append(",") }
            output.append(digit)
        }
        return output
    }
}

/// Whether two JSON numbers agree within `tolerance` (relative for large values).
private func approximatelyEqual(_ lhs: JSONValue?, _ rhs: JSONValue?, tolerance: Double = 1e-6) -> Bool {
    guard let left = lhs?.numberValue, let right = rhs?.numberValue else { return lhs == rhs }
    return abs(left - right) <= tolerance * max(1, abs(right) / 1e6)
}

extension ProviderHarness {
    /// `call` with a generous timeout: the whole test suite shares two cooperative threads with
    /// synchronous integration tests, so a quick call can wait several seconds for a thread.
    func patientCall(_ method: String, _ params: JSONValue = [:]) async throws -> JSONValue {
        try await call(method, params, timeout: 60)
    }
}

/// A test setup failure.
struct StockQuoteTestFailure: Error, CustomStringConvertible {
    var description: String
}

/// Fixtures shared by the Stock Quote tests.
enum StockQuoteFixtures {
    static let dataFolder = BuildProducts.packageRoot + "/data/stock-quote"

    static func oracle() throws -> JSONValue {
        let bytes = try #require(FileManager.default.contents(atPath: dataFolder + "/oracle.json"))
        return try JSONValue(parsing: Array(bytes))
    }

    static func provider(
        quotes: String, symbols: String? = nil, timeout: Double = 3
    ) throws -> ProviderHarness {
        var settings: JSONObject = ["quotesDirectory": .string(quotes), "httpTimeout": .number(timeout), "httpCacheSeconds": 0]
        if let symbols { settings["symbolsFile"] = .string(symbols) }
        return try ProviderHarness(
            product: "StockQuoteProvider", providerID: "com.contexthost.stock-quote", settings: settings,
            grantedPermissions: [])
    }

    static func sampleProvider(timeout: Double = 3) throws -> ProviderHarness {
        try provider(
            quotes: dataFolder + "/quotes", symbols: dataFolder + "/symbols.csv",
            timeout: timeout)
    }

    static func submitItem(_ provider: ProviderHarness, symbol: String, range: String) async throws -> JSONValue {
        let result = try await provider.patientCall(
            "collect/submit",
            ["sessionId": "s", "stepId": "quote", "values": ["symbol": .string(symbol), "range": .string(range)]])
        guard result["outcome"] == "item", let item = result["item"] else {
            throw StockQuoteTestFailure(description: "no item for \(symbol): \(result)")
        }
        return item
    }

    /// A provider over a quotes folder holding `<symbol>.csv` with `csv`, and its item for `symbol`
    /// over `range`. The folder is deleted with the first value.
    static func fileItem(
        _ csv: String, symbol: String, range: String
    ) async throws -> (folder: TemporaryDirectory, provider: ProviderHarness, item: JSONValue) {
        let folder = try TemporaryDirectory()
        try folder.write("quotes/\(symbol).csv", csv)
        let harness = try provider(quotes: folder.path + "/quotes")
        return (folder, harness, try await submitItem(harness, symbol: symbol, range: range))
    }

    /// The sample provider, its item for `symbol` over `range`, and the oracle's values for `symbol`.
    static func sampleItem(symbol: String, range: String) async throws -> (provider: ProviderHarness, item: JSONValue, expected: JSONValue) {
        let provider = try sampleProvider()
        let expected = try #require(try oracle()[symbol])
        return (provider, try await submitItem(provider, symbol: symbol, range: range), expected)
    }

    static func query(_ provider: ProviderHarness, _ text: String) async throws -> [JSONValue] {
        let result = try await provider.patientCall(
            "collect/query", ["sessionId": "s", "stepId": "quote", "fieldId": "symbol", "query": .string(text)])
        return result["options"]?.arrayValue ?? []
    }

    static func decodeBase64JSON(_ value: JSONValue?) throws -> JSONValue {
        let data = try #require(Data(base64Encoded: value?.stringValue ?? ""))
        return try JSONValue(parsing: Array(data))
    }

    /// Line numbers matter: see `malformedRows`.
    static let badCSV = """
        Date,Open,High,Low,Close,Volume
        2024-01-02,10.00,10.50,9.80,10.20,1000
        2024-01-03,10.20,10.60,10.10,10.40,1100
        2024-01-04,10.40,10.70
        2024-01-05,abc,10.80,10.30,10.60,1300
        2024-01-08,null,null,null,null,null
        2024-01-03,10.30,10.50,10.20,10.45,900
        2024-01-09,10.50,10.40,10.60,10.55,1200
        2024-01-10,10.50,10.90,10.40,10.80,1500
        2023-12-29,9.90,10.00,9.80,9.95,800
        2024-01-11,10.80,-11.00,10.70,10.90,1600
        2024-13-01,10.90,11.00,10.80,10.95,1700

        2024-01-12,10.90,11.20,10.85,11.10,1800
        2024-01-16,5.60,5.70,5.50,5.65,4000
        2024-01-17,5.65,5.80,5.60,5.75,3900

        """

    /// Newest first, `;`-separated, BOM, CRLF, a quoted field, pandas dates, a split in Adj Close.
    static let reversedCSV =
        "\u{FEFF}Date;Open;High;Low;Close;Adj Close;Volume\r\n"
        + "2024-01-05 00:00:00-05:00;\"50.00\";51.00;49.50;50.50;50.50;2000\r\n"
        + "2024-01-04 00:00:00-05:00;49.00;50.20;48.80;50.00;50.00;2100\r\n"
        + "2024-01-03 00:00:00-05:00;197.00;201.00;196.00;200.00;49.80;500\r\n"
        + "2024-01-02 00:00:00-05:00;195.00;199.00;194.00;198.00;49.50;520\r\n"

    /// Only the HTTP source has WAYN.
    static let wayne = """
        Date,Open,High,Low,Close,Volume
        2026-11-23,42.00,42.50,41.80,42.20,900000
        2026-11-24,42.20,43.10,42.10,42.90,950000

        """

    /// Newer than the sample ACME.csv (which ends on 2026-11-20).
    static let freshACME = """
        Date,Open,High,Low,Close,Adj Close,Volume
        2026-11-20,80.10,81.20,80.00,80.76,80.76,5000000
        2026-11-23,80.80,81.50,80.50,81.20,81.20,5100000
        2026-11-24,81.20,82.00,81.00,81.90,81.90,5200000

        """
}
