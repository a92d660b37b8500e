import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Hostile data and requests for the Stock Quote provider, through the real
/// `libStockQuoteProvider.so` loaded in-process by the real `context-host` (a trap would end the
/// host). Each test checks that the host still answers `ping`, that the request got a result or a
/// documented error within its timeout, and that the host's peak memory stayed below a bound.
@Suite("Stock Quote: hostile inputs through the real host", .serialized)
struct HostileStockQuoteTests {
    static let id = "com.contexthost.stock-quote"
    static let yahoo = "Date,Open,High,Low,Close,Adj Close,Volume\n"

    /// A host whose quotes folder holds `files` (name → contents).
    static func host(
        files: [String: String] = [:], settings: [String: JSONValue] = [:], grantedPermissions: [String] = [],
        prepare: (TemporaryDirectory) throws -> Void = { _ in }
    ) throws -> HostileHost {
        let folder = try TemporaryDirectory()
        try folder.write("quotes/.keep", "")
        for (name, contents) in files { try folder.write("quotes/" + name, contents) }
        try prepare(folder)
        var all: [String: JSONValue] = ["quotesDirectory": .string(folder.path + "/quotes"), "symbolsFile": .string(folder.path + "/symbols.csv")]
        for (key, value) in settings { all[key] = value }
        return try HostileHost(
            manifest: "stock-quote.yaml", providerId: id, settings: all, grantedPermissions: grantedPermissions, folder: folder)
    }

    /// collect/start + collect/submit: the item, or the answer when there is none.
    static func submit(_ host: HostileHost, _ symbol: JSONValue, range: String = "1Y") throws -> (item: JSONValue?, answer: JSONValue?) {
        try host.submit(["symbol": symbol, "range": .string(range)], timeout: 30)
    }

    /// preview, detail, describe and encode (json and text) of an item.
    static func views(_ host: HostileHost, _ item: JSONValue) throws -> [JSONValue] {
        try host.views(item, representation: "text")
    }

    /// Every number in a JSON value is finite and no value is `null`.
    static func allFinite(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): return number.isFinite
        case .null: return false
        case .array(let array): return array.allSatisfy(allFinite)
        case .object(let object): return object.keys.allSatisfy { object[$0].map(allFinite) ?? true }
        default: return true
        }
    }

    static func rows(_ count: Int, from day: Int = 0, close: (Int) -> Double = { 10 + Double($0 % 7) }) -> String {
        (0..<count).map { index in
            let date = GregorianDays.date(days: 19_000 + day + index)
            let text = String(format: "%04d-%02d-%02d", date.year, date.month, date.day)
            let value = close(index)
            return "\(text),\(value),\(value),\(value),\(value),\(value),1000\n"
        }.joined()
    }

    // MARK: Numbers

    @Test("huge, 20-digit, Int.min-like, NaN, infinite, hex and tiny prices are reported; the rest is used")
    func hugeNumbers() throws {
        let bad = [
            "1e308,1e308,1e308,1e308,1e308,1", "99999999999999999999,99999999999999999999,1,2,2,1", "1,2,0.5,1.5,1.5,-9223372036854775808",
            "nan,nan,nan,nan,nan,1", "inf,inf,inf,inf,inf,1", "0x1p3,0x1p3,0x1p3,0x1p3,0x1p3,1", "1e-300,1e-300,1e-300,1e-300,1e-300,1",
            "1,2,0.5,1.5,1.5,99999999999999999999",
        ]
        var text = Self.yahoo + Self.rows(5)
        for (index, row) in bad.enumerated() { text += "2022-01-\(String(format: "%02d", 13 + index)),\(row)\n" }
        text += Self.rows(5, from: 30)
        let host = try Self.host(files: ["HUGE.csv": text])
        let (item, answer) = try Self.submit(host, "HUGE", range: "5Y")
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["problemCount"] == .number(Double(bad.count)))
        #expect(content["series"]?["tradingDays"] == 10)
        #expect(Self.allFinite(content))
        for answer in try Self.views(host, try #require(item)) { #expect(answer["code"] == nil, "\(answer)") }
        try host.expectAlive()
    }

    @Test("300 consecutive 100-for-1 jumps: split adjustments stay bounded, every number finite")
    func splitBomb() throws {
        var text = "Date,Close,Volume\n"
        for index in 0..<300 {
            let date = GregorianDays.date(days: 19_000 + index)
            // 1e8, 1e6, 1e4 … then back up: each step is a factor-100 jump, within 1e-6…1e9.
            let exponent = [8, 6, 4, 2, 0, -2, -4, -2, 0, 2, 4, 6][index % 12]
            text += String(format: "%04d-%02d-%02d", date.year, date.month, date.day) + ",1e\(exponent),1000\n"
        }
        let host = try Self.host(files: ["BOMB.csv": text])
        let (item, answer) = try Self.submit(host, "BOMB", range: "5Y")
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(Self.allFinite(content), "\(content["series"] ?? .null)")
        for answer in try Self.views(host, try #require(item)) { #expect(answer["code"] == nil, "\(answer)") }
        try host.expectAlive()
    }

    // MARK: Long lines and many rows

    @Test("a 60 MB first line is reported with an 80-byte quote; memory stays bounded")
    func hugeFirstLine() throws {
        let host = try Self.host(prepare: { folder in
            try HostileHost.writeRepeated(folder.path + "/quotes/LONG.csv", header: "Date,", line: "Close", count: (60 << 20) / 5, footer: "\n2024-01-02,1\n")
        })
        let (item, answer) = try Self.submit(host, "LONG")
        #expect(item == nil)
        let message = answer?["fieldErrors"]?["symbol"]?.stringValue ?? ""
        #expect(message.contains("longer than 64 KB"), "\(message.prefix(300))")
        #expect(message.utf8.count < 1000, "the field error has \(message.utf8.count) bytes")
        try host.expectAlive(memoryBoundMiB: 300)
        #expect(host.host.standardError.utf8.count < 100_000)
    }

    @Test("a 32 MB line of 16 million fields is skipped without splitting it")
    func lineOfCommas() throws {
        let host = try Self.host(prepare: { folder in
            try HostileHost.writeRepeated(
                folder.path + "/quotes/COMMA.csv", header: Self.yahoo + Self.rows(3), line: "x,", count: 16 << 20, footer: "\n" + Self.rows(3, from: 10))
        })
        let (item, answer) = try Self.submit(host, "COMMA")
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["problemCount"] == 1)
        #expect(HostileHost.allText(content["problems"]).contains("longer than 64 KB"))
        try host.expectAlive(memoryBoundMiB: 200)
    }

    @Test("a million bad rows: all counted, 200 kept and logged, memory bounded")
    func millionBadRows() throws {
        let host = try Self.host(prepare: { folder in
            try HostileHost.writeRepeated(folder.path + "/quotes/BAD.csv", header: Self.yahoo + Self.rows(2), line: "x\n", count: 1_000_000)
        })
        let (item, answer) = try Self.submit(host, "BAD", range: "1M")
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["problemCount"] == 1_000_000)
        #expect(content["problems"]?.arrayValue?.count == 25)
        try host.expectAlive(memoryBoundMiB: 200)
        let warnings = host.host.standardError.components(separatedBy: "stock-quote: warning:").count - 1
        #expect(warnings <= 202, "\(warnings) warning lines")
    }

    @Test("a million rows for one date: duplicates reported, one row kept")
    func millionRowsOneDate() throws {
        let host = try Self.host(prepare: { folder in
            try HostileHost.writeRepeated(
                folder.path + "/quotes/SAME.csv", header: Self.yahoo, line: "2024-01-02,1,2,0.5,1.5,1.5,100\n", count: 1_000_000)
        })
        let (item, answer) = try Self.submit(host, "SAME", range: "1M")
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["problemCount"] == 999_999)
        #expect(content["series"]?["tradingDays"] == 1)
        try host.expectAlive(memoryBoundMiB: 300)
    }

    @Test("a 70 MB price file is refused by size, unread")
    func oversizedFile() throws {
        let host = try Self.host(prepare: { folder in
            let path = folder.path + "/quotes/BIG.csv"
            FileManager.default.createFile(atPath: path, contents: Data(Self.yahoo.utf8))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 70 << 20)  // sparse: no disk used
            try handle.close()
        })
        let (item, answer) = try Self.submit(host, "BIG")
        #expect(item == nil)
        #expect(answer?["fieldErrors"]?["symbol"]?.stringValue?.contains("larger than 64 MB") == true, "\(answer ?? .null)")
        try host.expectAlive(memoryBoundMiB: 100)
    }

    @Test("binary garbage and truncated files: a field error or an item, host alive")
    func garbageAndTruncated() throws {
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let host = try Self.host(
            files: ["TRUNC.csv": Self.yahoo + Self.rows(3) + "2024-03-04,1.5,2,\"0.5", "CUT.csv": "Date,Op"],
            prepare: { folder in
                FileManager.default.createFile(atPath: folder.path + "/quotes/GARB.csv", contents: Data(garbage))
            })
        let (garbled, garbledAnswer) = try Self.submit(host, "GARB")
        #expect(garbled == nil && garbledAnswer?["fieldErrors"]?["symbol"] != nil, "\(garbledAnswer ?? .null)")
        let (truncated, truncatedAnswer) = try Self.submit(host, "TRUNC")
        #expect(truncated?["content"]?["series"]?["tradingDays"] == 3, "\(truncatedAnswer ?? .null)")
        let (cut, _) = try Self.submit(host, "CUT")
        #expect(cut == nil)
        try host.expectAlive()
    }

    // MARK: Real formats

    @Test("Yahoo (with null rows, newest first), yfinance dates, Stooq lower-case and bulk layouts")
    func realFormats() throws {
        let host = try Self.host(files: [
            "YHOO.csv": Self.yahoo + "2024-01-04,11,12,10,11.5,11.5,300\n2024-01-03,null,null,null,null,null,null\n2024-01-02,10,11,9,10.5,10.5,200\n",
            "YFIN.csv": "Date,Open,High,Low,Close,Volume,Dividends,Stock Splits\n2024-01-02 00:00:00-05:00,10,11,9,10.5,200,0.0,0.0\n2024-01-03 00:00:00-05:00,11,12,10,11.5,300,0.0,0.0\n",
            "stql.csv": "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,200\n2024-01-03,11,12,10,11.5,300\n",
            "idx.us.txt": "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>\nIDX.US,D,20240102,000000,10,11,9,10.5,200,0\nIDX.US,D,20240103,000000,11,12,10,11.5,300,0\n",
        ])
        for (symbol, problems) in [("YHOO", 1), ("YFIN", 0), ("STQL", 0), ("IDX", 0)] {
            let (item, answer) = try Self.submit(host, .string(symbol), range: "1M")
            let content = try #require(item?["content"], "\(symbol): \(answer ?? .null)")
            #expect(content["quote"]?["close"] == 11.5, "\(symbol)")
            #expect(content["quote"]?["previousClose"] == 10.5, "\(symbol)")
            #expect(content["problemCount"] == .number(Double(problems)), "\(symbol): \(content["problems"] ?? .null)")
        }
        try host.expectAlive()
    }

    // MARK: Symbols file and settings

    @Test("an empty symbolsFile (resolved to a folder) means none: no 'cannot be read' warning")
    func emptySymbolsFile() throws {
        let host = try Self.host(files: ["ACME.csv": Self.yahoo + Self.rows(3)], settings: ["symbolsFile": ""])
        let (item, answer) = try Self.submit(host, "ACME")
        #expect(item != nil, "\(answer ?? .null)")
        try host.expectAlive()
        #expect(!host.host.standardError.contains("cannot be read"), "\(host.host.standardError.suffix(500))")
        #expect(!host.host.standardError.contains("stock-quote: warning"), "\(host.host.standardError.suffix(500))")
    }

    @Test("a hostile symbols file: 20,000 bad rows, 10 KB names, binary garbage")
    func hostileSymbolsFile() throws {
        let host = try Self.host(files: ["ACME.csv": Self.yahoo + Self.rows(3)], prepare: { folder in
            var text = "symbol,name,exchange,currency\nACME,\(String(repeating: "N", count: 10_000)),NYSE,USDOLLARS\n"
            text += String(repeating: "AC ME!,x,,\n", count: 20_000)
            text += String(decoding: (0..<255).map { UInt8($0 == 10 ? 32 : $0) }, as: UTF8.self) + "\n"
            try folder.write("symbols.csv", text)
        })
        let (session, error) = try host.start()
        let options = try host.result("collect/query", ["sessionId": try #require(session, "\(error ?? .null)"), "fieldId": "symbol", "query": "acme"])
        let label = options["options"]?.arrayValue?.first?["label"]?.stringValue ?? ""
        #expect(label.hasPrefix("ACME — NNN") && label.utf8.count < 300, "\(label.prefix(100))")
        try host.expectAlive()
        let warnings = host.host.standardError.components(separatedBy: "stock-quote: warning:").count - 1
        #expect(warnings <= 202, "\(warnings) warning lines")
    }

    @Test("forged collect requests: a 5 MB query, a 5 MB symbol, a numeric symbol, an unknown range")
    func forgedCollect() throws {
        let host = try Self.host(files: ["ACME.csv": Self.yahoo + Self.rows(3)])
        let (session, _) = try host.start()
        let huge = String(repeating: "A", count: 5 << 20)
        let (options, queryError) = try host.request("collect/query", ["sessionId": try #require(session), "fieldId": "symbol", "query": .string(huge)])
        #expect(options?["options"] == [] || queryError != nil)
        #expect(HostileHost.allText(queryError).utf8.count < 2000)
        let (item, answer) = try Self.submit(host, .string(huge))
        #expect(item == nil)
        let message = HostileHost.allText(answer)
        #expect(message.utf8.count < 2000, "the answer quotes \(message.utf8.count) bytes")
        for (symbol, range) in [(JSONValue.number(9.007199254740992e15), "1Y"), ("ACME", "99Y"), ("../../etc/passwd", "1Y")] {
            let (forged, forgedAnswer) = try Self.submit(host, symbol, range: range)
            #expect(forged == nil, "\(forgedAnswer ?? .null)")
        }
        try host.expectAlive()
    }

    // MARK: Forged items

    @Test("forged items: infinite numbers, 5,000 chart points, Int.min problem counts")
    func forgedItems() throws {
        let host = try Self.host(files: ["ACME.csv": Self.yahoo + Self.rows(40)])
        let (item, answer) = try Self.submit(host, "ACME", range: "1M")
        let real = try #require(item, "\(answer ?? .null)")
        let text = real.jsonString
        // 1e400 reads as infinity.
        for (field, replacement) in [("\"close\":", "\"close\":1e400,\"x\":"), ("\"changePercent\":", "\"changePercent\":-1e400,\"x\":")] {
            #expect(text.contains(field))
            for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
                let params = "{\"item\":\(text.replacingOccurrences(of: field, with: replacement))}"
                let (result, error) = try host.rawRequest(method, params: params)
                #expect(result == nil && error != nil, "\(method): \(result ?? .null)")
            }
        }
        guard case .object(var object) = real, case .object(var content) = object["content"] ?? .null,
            case .object(var series) = content["series"] ?? .null
        else { Issue.record("no content"); return }
        // 5,000: past the provider's 2,000, within the host's 10,000 elements per array.
        series["dates"] = .array(Array(repeating: "2024-01-02", count: 5_000))
        series["closes"] = .array(Array(repeating: 1, count: 5_000))
        content["series"] = .object(series)
        object["content"] = .object(content)
        let (points, pointsError) = try host.request("items/detail", ["item": .object(object)])
        #expect(points == nil && HostileHost.allText(pointsError).contains("at most 2000"), "\(String(describing: pointsError).prefix(500))")
        content["series"] = real["content"]?["series"]
        for count in [JSONValue.number(-9.223372036854775808e18), .number(9.007199254740992e15), .number(-1)] {
            content["problemCount"] = count
            object["content"] = .object(content)
            _ = try Self.views(host, .object(object))
        }
        try host.expectAlive()
    }

    // Hostile HTTP answers (huge, slow, redirects off the allow-list) are the broker's to refuse
    // before the provider sees them: Tests/IntegrationTests/EgressTests.swift.

    @Test("settings: an unknown source, a 1 MB currency are refused with short messages")
    func hostileSettings() throws {
        for settings: [String: JSONValue] in [
            ["source": "http://127.0.0.1:1/{symbol}\r\nX-Injected: 1"],
            ["defaultCurrency": .string(String(repeating: "€", count: 1 << 18))],
        ] {
            let host = try Self.host(files: ["ACME.csv": Self.yahoo + Self.rows(3)], settings: settings)
            let (session, error) = try host.start()
            #expect(session == nil)
            #expect(error?["code"] == -32012, "\(error ?? .null)")
            #expect(HostileHost.allText(error).utf8.count < 2000)
            try host.expectAlive()
        }
    }
}
