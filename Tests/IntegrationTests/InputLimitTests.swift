import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Input limits (issue 4, part 6): each is refused with an error naming the limit, and the host
/// keeps answering. The limits themselves are in docs/security.md §6.
@Suite("Input limits")
struct InputLimitTests {
    static let fixtureManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests"
    static let fixture = "com.contexthost.fixture"

    private func client() throws -> RPCClient {
        let client = try RPCClient(arguments: ["--manifests", Self.fixtureManifests, "--no-state"])
        try client.initialize()
        return client
    }

    /// The host still answers.
    private func expectAlive(_ client: RPCClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try client.call("ping") == [:], sourceLocation: sourceLocation)
    }

    /// `response` is a parse error (-32700) whose message mentions `text`, and the host still answers.
    private func expectParseError(
        _ response: JSONValue, mentioning text: String, _ client: RPCClient, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response["error"]?["code"] == -32700, sourceLocation: sourceLocation)
        #expect(response["error"]?["message"]?.stringValue?.contains(text) == true, "\(response)", sourceLocation: sourceLocation)
        try expectAlive(client, sourceLocation: sourceLocation)
    }

    @Test("initialize reports the limits in force")
    func reported() throws {
        let client = try RPCClient(arguments: ["--manifests", Self.fixtureManifests, "--no-state"])
        defer { client.host.terminate() }
        let limits = try #require(try client.initialize()["capabilities"]?["limits"])
        #expect(limits["maximumMessageBytes"] == 16_777_216)
        #expect(limits["maximumDepth"] == 256)
        #expect(limits["maximumStringBytes"] == 1_048_576)
        #expect(limits["maximumElements"] == 10_000)
        #expect(limits["maximumFormValues"] == 1_000)
        #expect(limits["maximumItemBytes"] == 4_194_304)
        #expect(limits["maximumComposers"] == 64)
        #expect(limits["maximumCollectionSessions"] == 64)
        #expect(limits["maximumComposerItems"] == 100)
    }

    @Test("JSON nested 10,000 deep is refused naming the depth limit; the host keeps answering")
    func deepNesting() throws {
        let client = try client()
        defer { client.host.terminate() }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        client.sendRaw(deep)
        var response = try client.response(to: nil)
        #expect(response["error"]?["code"] == -32700)
        #expect(response["error"]?["message"] == "Parse error: Nesting deeper than 256 levels at byte 256")
        try expectAlive(client)

        client.sendRaw(#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"# + deep + "}")
        response = try client.response(to: 5)
        #expect(response["error"]?["code"] == -32700)
        #expect(response["error"]?["message"]?.stringValue?.contains("Nesting deeper than 256 levels") == true)
        let deepObject = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        client.sendRaw(#"{"jsonrpc":"2.0","id":6,"method":"collect/submit","params":{"sessionId":"s","values":"# + deepObject + "}}")
        try expectParseError(try client.response(to: 6), mentioning: "Nesting deeper than 256 levels", client)
    }

    @Test("ill-formed UTF-8 in a request is refused as a parse error naming it; the host keeps answering")
    func illFormedUTF8() throws {
        let client = try client()
        defer { client.host.terminate() }
        client.host.write(Array(#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"caf"#.utf8) + [0xE9] + Array("\"}}\n".utf8))
        try expectParseError(try client.response(to: 5), mentioning: "Invalid UTF-8 in string", client)
    }

    @Test("a string over 1 MiB in params is refused naming the field and the limit")
    func longString() throws {
        let client = try client()
        defer { client.host.terminate() }
        let long = String(repeating: "x", count: (1 << 20) + 1)
        let error = try client.callExpectingError("collect/submit", ["sessionId": "s", "values": ["title": .string(long)]])
        #expect(error["code"] == -32602)
        #expect(error["message"] == "params.values.title: a string of 1048577 bytes exceeds the limit of 1048576 bytes (maximumStringBytes).")
        #expect(error["data"] == ["field": "params.values.title", "limit": 1_048_576, "length": 1_048_577, "limitName": "maximumStringBytes"])
        // Exactly at the limit is fine (the session lookup answers next).
        let fits = try client.callExpectingError("collect/submit", ["sessionId": "s", "values": ["title": .string(String(long.dropLast()))]])
        #expect(fits["code"] == -32020)
        try expectAlive(client)
    }

    @Test("arrays and objects over 10,000 elements, and forms over 1,000 values, are refused")
    func elementCounts() throws {
        let client = try client()
        defer { client.host.terminate() }
        let many = JSONValue.array((0...10_000).map { .number(Double($0)) })
        var error = try client.callExpectingError("collect/submit", ["sessionId": "s", "values": ["list": many]])
        #expect(error["code"] == -32602)
        #expect(error["message"] == "params.values.list: an array with more than 10000 elements exceeds the limit of 10000 (maximumElements).")
        #expect(error["data"]?["limitName"] == "maximumElements")

        var members = JSONObject()
        for index in 0...10_000 { members["k\(index)"] = .bool(true) }
        error = try client.callExpectingError("collect/submit", ["sessionId": "s", "values": .object(members)])
        #expect(error["message"] == "params.values: an object with more than 10000 members exceeds the limit of 10000 (maximumElements).")

        let start = try client.call("collect/start", ["providerId": .string(Self.fixture)])
        let session = try #require(start["sessionId"])
        var values = JSONObject()
        for index in 0..<1_001 { values["field\(index)"] = "v" }
        error = try client.callExpectingError("collect/submit", ["sessionId": session, "values": .object(values)])
        #expect(error["code"] == -32602)
        #expect(error["message"] == "params.values: a form with 1001 values exceeds the limit of 1000 (maximumFormValues).")
        #expect(error["data"]?["limitName"] == "maximumFormValues")
        // The session is still usable.
        #expect(try client.call("collect/submit", ["sessionId": session, "values": ["text": "ok"]])["outcome"] == "item")
    }

    @Test("an item over 4 MiB is refused before it reaches the provider")
    func bigItem() throws {
        let client = try client()
        defer { client.host.terminate() }
        let item: JSONValue = [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(Self.fixture), "type": "fixture",
            "displayName": "Big", "content": ["text": .string(String(repeating: "y", count: 4 << 20))],
        ]
        let error = try client.callExpectingError("items/preview", ["item": item])
        #expect(error["code"] == -32602)
        #expect(error["data"]?["field"] == "params.item")
        #expect(error["data"]?["limitName"] == "maximumItemBytes")
        #expect(error["message"]?.stringValue?.hasSuffix("exceeds the limit of 4194304 bytes (maximumItemBytes).") == true)
        try expectAlive(client)
    }

    @Test("at most 64 composers and 64 collection sessions are open at once")
    func openLimits() throws {
        let client = try client()
        defer { client.host.terminate() }
        var composers: [JSONValue] = []
        for _ in 0..<64 { composers.append(try #require(try client.call("composer/open")["composerId"])) }
        var error = try client.callExpectingError("composer/open")
        #expect(error["code"] == -32040)
        #expect(error["message"] == "There are already 64 open composers, the host's limit (maximumComposers = 64); send or close one (composer/close) first.")
        #expect(error["data"] == ["limit": 64, "current": 64, "limitName": "maximumComposers"])
        _ = try client.call("composer/close", ["composerId": composers[0]])
        #expect(try client.call("composer/open")["composerId"] != nil)

        var sessions: [JSONValue] = []
        for _ in 0..<64 {
            sessions.append(try #require(try client.call("collect/start", ["providerId": .string(Self.fixture)])["sessionId"]))
        }
        error = try client.callExpectingError("collect/start", ["providerId": .string(Self.fixture)])
        #expect(error["code"] == -32040)
        #expect(error["data"]?["limitName"] == "maximumCollectionSessions")
        #expect(error["message"]?.stringValue?.hasSuffix("finish or cancel one (collect/cancel) first.") == true)
        _ = try client.call("collect/cancel", ["sessionId": sessions[0]])
        #expect(try client.call("collect/start", ["providerId": .string(Self.fixture)])["sessionId"] != nil)
    }
}
