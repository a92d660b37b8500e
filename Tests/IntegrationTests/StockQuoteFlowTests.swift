import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Stock Quote provider through the real `context-host` and the default manifests folder.
@Suite("Stock Quote through context-host")
struct StockQuoteFlowTests {
    static let dataFolder = BuildProducts.packageRoot + "/data/stock-quote"

    static func oracle() throws -> JSONValue {
        let bytes = try #require(FileManager.default.contents(atPath: dataFolder + "/oracle.json"))
        return try JSONValue(parsing: Array(bytes))
    }

    @Test("collect (search, bad symbol, submit) → preview → detail → encode with the sample data")
    func fullFlow() throws {
        let oracle = try Self.oracle()
        let expected = try #require(oracle["ACME"])
        let client = try RPCClient(arguments: ["serve"])
        defer { client.host.terminate() }
        try client.initialize()

        let provider = try client.availableProvider("com.contexthost.stock-quote")
        #expect(provider["title"] == "Stock Quote")
        #expect(provider["permissions"] == [])

        // collect/start → the form.
        let start = try client.call("collect/start", ["providerId": "com.contexthost.stock-quote"])
        let session = try #require(start["sessionId"])
        let fields = start["form"]?["fields"]?.arrayValue ?? []
        #expect(fields.compactMap { $0["id"]?.stringValue } == ["symbol", "range"])

        // collect/query: by ticker and by name.
        let byTicker = try client.call("collect/query", ["sessionId": session, "fieldId": "symbol", "query": "ac"])
        #expect(byTicker["options"]?.arrayValue?.first?["value"] == "ACME")
        let byName = try client.call("collect/query", ["sessionId": session, "fieldId": "symbol", "query": "acme corp"])
        #expect(byName["options"]?.arrayValue?.first?["label"] == "ACME — Acme Corporation")

        // A bad symbol: a per-field error; the session stays open.
        let invalid = try client.call("collect/submit", ["sessionId": session, "values": ["symbol": "XYZQ", "range": "3M"]])
        #expect(invalid["outcome"] == "invalid")
        #expect(invalid["fieldErrors"]?["symbol"]?.stringValue?.hasPrefix("Unknown symbol XYZQ") == true)

        // Submit: the item.
        let item = try client.submitForItem(session: session, values: ["symbol": "ACME", "range": "3M"])
        #expect(item["providerId"] == "com.contexthost.stock-quote")
        #expect(item["type"] == "quote")
        let closeText = String(format: "%.2f", expected["close"]?.numberValue ?? 0)
        #expect(item["displayName"] == .string("ACME \(closeText) USD"))

        // items/preview
        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["title"] == .string("ACME \(closeText) USD"))
        let change = expected["change"]?.numberValue ?? 0
        #expect(chip["tone"] == (change > 0 ? "good" : "attention"))
        let percent = String(format: "%+.2f%%", expected["changePercent"]?.numberValue ?? 0)
        #expect(chip["subtitle"]?.stringValue?.contains("(\(percent)) · as of 2026-11-20") == true)
        #expect(chip["accessory"]?["values"]?.arrayValue?.count == 30)

        // items/detail
        let detail = try client.call("items/detail", ["item": item])
        #expect(detail["title"] == "ACME — Acme Corporation")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let chart = try #require(blocks.first { $0["type"] == "chart" })
        #expect(chart["series"]?.arrayValue?.first?["points"]?.arrayValue?.count == expected["ranges"]?["3M"]?["count"]?.intValue)
        let facts = blocks.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
        #expect(facts.first { $0["label"] == "As of" }?["value"] == "2026-11-20")
        #expect(facts.first { $0["label"] == "Close" }?["value"] == .string(closeText))

        // items/describe
        let describe = try client.call("items/describe", ["item": item])
        #expect(describe["text"]?.stringValue?.hasPrefix("ACME (Acme Corporation) closed at \(closeText) USD on 2026-11-20") == true)

        // items/encode: JSON with the quote and the series summary.
        let encoded = try client.call("items/encode", ["item": item])
        #expect(encoded["contentType"] == "application/json")
        let data = try #require(Data(base64Encoded: encoded["data"]?.stringValue ?? ""))
        let json = try JSONValue(parsing: Array(data))
        #expect(json["symbol"] == "ACME")
        #expect(json["quote"]?["close"] == expected["close"])
        #expect(json["quote"]?["previousClose"] == expected["previousClose"])
        #expect(json["series"]?["range"] == "3M")
        #expect(json["series"]?["tradingDays"] == expected["ranges"]?["3M"]?["count"])
        #expect(json["series"]?["startClose"] == expected["ranges"]?["3M"]?["startClose"])

        #expect(try client.shutdown() == 0)
    }

    @Test("bad rows are logged to stderr with file and line; an empty folder is listed unavailable with its reason")
    func diagnosticsAndAvailability() throws {
        let folder = try TemporaryDirectory()
        try folder.write("bad/quotes/BAD.csv", "Date,Open,High,Low,Close,Volume\n2024-01-02,1,2,0.5,1.5,100\n2024-01-03,x,2,0.5,1.5,100\n2024-01-04,1,2,0.5,1.6,100\n")
        try folder.write("empty/quotes/.keep", "")
        let manifest = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/stock-quote.yaml", encoding: .utf8)
        for name in ["bad", "empty"] {
            try folder.write(
                "manifests-\(name)/stock-quote.yaml",
                manifest.replacingOccurrences(of: "\"../data/stock-quote/quotes\"", with: "\"\(folder.path)/\(name)/quotes\""))
        }

        let bad = try RPCClient(arguments: ["serve", "--manifests", folder.path + "/manifests-bad"])
        defer { bad.host.terminate() }
        try bad.initialize()
        let session = try #require(try bad.call("collect/start", ["providerId": "com.contexthost.stock-quote"])["sessionId"])
        let submitted = try bad.call("collect/submit", ["sessionId": session, "values": ["symbol": "BAD", "range": "1M"]])
        #expect(submitted["item"]?["content"]?["problemCount"] == 1)
        #expect(try bad.shutdown() == 0)
        #expect(bad.host.standardError.contains("stock-quote: warning: BAD.csv:3: Open \"x\" is not a number; row skipped"))

        let empty = try RPCClient(arguments: ["serve", "--manifests", folder.path + "/manifests-empty"])
        defer { empty.host.terminate() }
        try empty.initialize()
        let list = try empty.call("providers/list")
        let listed = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.stock-quote" })
        // Its worker starts on first use (issue 28): never checked, so offered until its first
        // request starts the worker, whose availability check then updates the list.
        #expect(listed["status"] == "loaded")
        #expect(listed["availabilityState"] == "unchecked")
        _ = try empty.call("collect/start", ["providerId": "com.contexthost.stock-quote"])
        let changed = try empty.nextNotification(method: "providers/changed")
        #expect(changed["params"]?["changed"] == ["com.contexthost.stock-quote"])
        let provider = try #require(changed["params"]?["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.stock-quote" })
        #expect(provider["status"] == "loaded")
        #expect(provider["availabilityState"] == "current")
        #expect(provider["available"] == false)
        #expect(try empty.call("providers/list")["providers"] == changed["params"]?["providers"])
        let reason = provider["unavailableReason"]?["message"]?.stringValue ?? ""
        #expect(reason.contains("there are no price files (*.csv, *.txt) in \(folder.path)/empty/quotes"), "\(provider)")
        let refused = try empty.callExpectingError("collect/start", ["providerId": "com.contexthost.stock-quote"])
        #expect(refused["code"] == -32011)
        #expect(try empty.shutdown() == 0)
    }
}
