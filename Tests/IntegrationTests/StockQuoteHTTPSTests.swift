import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Stock Quote's web sources through the host's broker, against the loopback HTTPS server with
/// recorded Stooq CSV and Alpha Vantage JSON answers (Tests/Fixtures/https/recordings).
@Suite(.serialized) struct StockQuoteHTTPSTests {
    static let canary = "CANARY-AV-KEY-3e9a71"

    /// The bundled manifest with its origins allowed on loopback (the test server), plus a
    /// configuration file choosing the source.
    final class Setup: @unchecked Sendable {
        let root: TemporaryDirectory
        let server: LoopbackHTTPS
        var environment: [String: String] { TestCA.hostEnvironment(root: root.path, caFile: server.caFile) }

        init() throws {
            root = try TemporaryDirectory()
            server = try LoopbackHTTPS(apiKey: StockQuoteHTTPSTests.canary)
            var manifest = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/stock-quote.yaml", encoding: .utf8)
            manifest = manifest.replacingOccurrences(of: "- { setting: stooqURL }", with: "- { setting: stooqURL, privateAddresses: true }")
            manifest = manifest.replacingOccurrences(of: "- { setting: alphaVantageURL }", with: "- { setting: alphaVantageURL, privateAddresses: true }")
            try root.write("manifests/stock-quote.yaml", manifest)
        }

        /// `context-host serve` with these Stock Quote settings.
        func serve(_ settings: [String: String]) throws -> RPCClient {
            var lines = "providers:\n  com.contexthost.stock-quote:\n    settings:\n"
            lines += "      quotesDirectory: \"\(BuildProducts.packageRoot)/data/stock-quote/quotes\"\n"
            lines += "      symbolsFile: \"\(BuildProducts.packageRoot)/data/stock-quote/symbols.csv\"\n"
            lines += "      httpCacheSeconds: 0\n"
            for (key, value) in settings.sorted(by: { $0.key < $1.key }) { lines += "      \(key): \"\(value)\"\n" }
            let config = try root.write("config-\(UUID().uuidString).yaml", lines)
            let client = try RPCClient(host: HostProcess(
                arguments: ["serve", "--no-watch", "--no-installed", "--manifests", root.path + "/manifests", "--config", config, "--log-level", "info"],
                environment: environment))
            try client.initialize()
            return client
        }

        func setKey(_ value: String) throws {
            let process = try HostProcess(
                arguments: ["secrets", "set", "--manifests", root.path + "/manifests", "--no-installed", "com.contexthost.stock-quote", "alphaVantageKey"],
                environment: environment)
            process.write(value)
            process.closeInput()
            #expect(process.waitForExit(timeout: 20) == 0, "\(process.standardError)")
        }
    }

    /// collect/start + collect/submit for ACME over one month: the item, or the field error.
    static func quote(_ client: RPCClient, _ symbol: String = "ACME") throws -> JSONValue {
        let start = try client.call("collect/start", ["providerId": "com.contexthost.stock-quote"])
        let session = try #require(start["sessionId"]?.stringValue)
        return try client.call("collect/submit", ["sessionId": .string(session), "values": ["symbol": .string(symbol), "range": "1M"]])
    }

    @Test func stooqCSVThroughTheBrokerThenStaleFromTheCacheWhenTheServiceFails() throws {
        let setup = try Setup()
        let base = setup.server.baseURL
        let client = try setup.serve(["source": "stooq", "stooqURL": base + "/stooq"])
        let submitted = try Self.quote(client)
        let item = try #require(submitted["item"], "\(submitted)")
        #expect(item["content"]?["source"]?["kind"] == "http")
        #expect(item["content"]?["source"]?["location"] == .string(base + "/stooq/q/d/l/?s=acme.us&i=d"))
        #expect(item["content"]?["asOf"] == "2026-11-27")  // the recording, newer than the local file
        #expect(item["content"]?["quote"]?["close"]?.numberValue == 83.75 || item["displayName"]?.stringValue?.contains("83.75") == true, "\(item)")
        let chip = try client.call("items/preview", ["item": item])
        let subtitle = chip["subtitle"]?.stringValue ?? ""
        #expect(subtitle.contains("as of 2026-11-27"), "\(chip)")
        #expect(subtitle.contains("stale") == false)
        _ = try client.shutdown()
        #expect(client.host.standardError.contains("fetch com.contexthost.stock-quote GET \(base) 200"))

        // The service now fails (503, Retry-After: 1): three tries, then the last good answer from
        // the data folder, marked stale on the chip.
        let failing = try setup.serve(["source": "stooq", "stooqURL": base + "/status/503"])
        let started = Date()
        let stale = try #require(try Self.quote(failing)["item"])
        #expect(Date().timeIntervalSince(started) >= 1.5, "backoff between the tries")
        #expect(stale["content"]?["source"]?["stale"] == true)
        #expect(stale["content"]?["asOf"] == "2026-11-27")
        let staleChip = try failing.call("items/preview", ["item": stale])
        #expect(staleChip["subtitle"]?.stringValue?.contains("stale (fetched ") == true, "\(staleChip)")
        #expect(setup.server.requests.filter { $0["path"]?.stringValue?.hasPrefix("/status/503") == true }.count == 3)
        // Paused after that: the next quote does not hit the service again.
        _ = try Self.quote(failing)
        #expect(setup.server.requests.filter { $0["path"]?.stringValue?.hasPrefix("/status/503") == true }.count == 3)
        _ = try failing.shutdown()
    }

    @Test func retriesAfter503ThenSucceeds() throws {
        let setup = try Setup()
        let base = setup.server.baseURL
        let client = try setup.serve(["source": "stooq", "stooqURL": base + "/flaky/quotes/2"])
        let item = try #require(try Self.quote(client)["item"])
        #expect(item["content"]?["source"]?["kind"] == "http")
        #expect(item["content"]?["source"]?["stale"] == nil)
        #expect(setup.server.requests.filter { $0["path"]?.stringValue?.hasPrefix("/flaky/quotes") == true }.count == 3)
        _ = try client.shutdown()
    }

    @Test func alphaVantageJSONWithTheKeyTheHostInjects() throws {
        let setup = try Setup()
        let base = setup.server.baseURL
        // Without the key: the fetch is refused (secret-not-set) and the local file is used.
        let keyless = try setup.serve(["source": "alphavantage", "alphaVantageURL": base + "/av"])
        let local = try #require(try Self.quote(keyless)["item"])
        #expect(local["content"]?["source"]?["kind"] == "file")
        let notes = local["content"]?["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.contains("alphaVantageKey") && $0.contains("is not set") }, "\(notes)")
        _ = try keyless.shutdown()

        try setup.setKey(Self.canary)
        let client = try setup.serve(["source": "alphavantage", "alphaVantageURL": base + "/av"])
        let submitted = try Self.quote(client)
        let item = try #require(submitted["item"], "\(submitted)")
        #expect(item["content"]?["source"]?["kind"] == "http")
        #expect(item["content"]?["asOf"] == "2026-11-27")
        #expect(item["displayName"]?.stringValue?.contains("91.85") == true, "\(item)")
        // The server got the key; nothing the provider made or the host said holds it.
        #expect(setup.server.requests.contains { $0["path"]?.stringValue?.contains("apikey=\(Self.canary)") == true })
        #expect(!item.jsonString.contains(Self.canary))
        let detail = try client.call("items/detail", ["item": item])
        #expect(!detail.jsonString.contains(Self.canary))
        _ = try client.shutdown()
        #expect(!client.host.standardError.contains(Self.canary))
        #expect(EgressTests.filesContaining(Self.canary, under: setup.root.path).isEmpty)
    }
}
