import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host mcp` given what no well-behaved MCP client sends: every bad message answers an
/// error that says what is wrong (or nothing, for a notification), and the bridge keeps serving.
@Suite("MCP bridge: hostile input")
struct MCPHostileInputTests {
    static func bridge() throws -> RPCClient {
        try BuildProducts.checkBuilt()
        return try RPCClient(arguments: ["mcp", "--manifests", BuildProducts.packageRoot + "/manifests", "--no-state", "--no-installed"])
    }

    static func code(_ response: JSONValue) -> Int? { response["error"]?["code"]?.intValue }

    @Test("bad JSON, wrong shapes, unknown methods and tools, eras mixed, ids reused: errors, then normal service")
    func hostile() throws {
        let client = try Self.bridge()
        defer { client.host.terminate() }
        // Before initialize: only initialize (or the 2026-07-28 envelope) is accepted.
        #expect(Self.code(try client.response(to: client.send("tools/list"))) == -32600)
        client.sendRaw("{not json")
        #expect(Self.code(try client.nextMessage()) == -32700)
        client.sendRaw("[1,2,3]")
        #expect(Self.code(try client.nextMessage()) == -32600)
        client.sendRaw(#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#)
        #expect(Self.code(try client.nextMessage()) == -32600)
        client.sendRaw(#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#)
        #expect(Self.code(try client.nextMessage()) == -32600)
        // A 2026-07-28 request with an unknown version: -32022 naming the supported ones; the era stays open.
        let wrongVersion = try client.response(to: client.send("server/discover", ["_meta": ["io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": [:]]]))
        #expect(Self.code(wrongVersion) == -32022)
        #expect(wrongVersion["error"]?["data"]?["supported"]?.arrayValue?.contains("2026-07-28") == true)
        let missingCapabilities = try client.response(to: client.send("tools/list", ["_meta": ["io.modelcontextprotocol/protocolVersion": "2026-07-28"]]))
        #expect(Self.code(missingCapabilities) == -32602)

        let initialized = try client.response(to: client.send("initialize", ["protocolVersion": "1999-01-01", "capabilities": "no", "clientInfo": 7]))
        #expect(initialized["result"]?["protocolVersion"] == "2025-11-25", "\(initialized)")
        client.notify("notifications/initialized")
        client.notify("notifications/cancelled", ["requestId": ["x": 1]])
        client.notify("notifications/unknown", 42)
        // The handshake era refuses the other era's envelope, and 2026-07-28 methods.
        #expect(Self.code(try client.response(to: client.send("tools/list", ["_meta": ["io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [:]]]))) == -32600)
        #expect(Self.code(try client.response(to: client.send("server/discover"))) == -32601)
        #expect(Self.code(try client.response(to: client.send("no/such/method"))) == -32601)
        #expect(Self.code(try client.response(to: client.send("tools/call", ["name": "no_such_tool"]))) == -32602)
        #expect(Self.code(try client.response(to: client.send("tools/call", ["arguments": [:]]))) == -32602)
        #expect(Self.code(try client.response(to: client.send("tools/call", ["name": "note_collect", "arguments": [1, 2]]))) == -32602)
        #expect(Self.code(try client.response(to: client.send("resources/read", ["uri": "contexthost://items/x/y"]))) == -32002)
        #expect(Self.code(try client.response(to: client.send("resources/list", ["cursor": "-5"]))) == -32602)
        // Arguments of the wrong types: a tool error from the form's own validation, not a crash.
        let wrongTypes = try client.response(to: client.send("tools/call", ["name": "note_collect", "arguments": ["title": ["x": 1], "body": 12]]))
        #expect(wrongTypes["result"]?["isError"] == true, "\(wrongTypes)")
        // An answer to a request the bridge never sent is ignored.
        client.sendRaw(#"{"jsonrpc":"2.0","id":987654,"result":{"action":"accept"}}"#)
        // Still serving.
        let made = try client.response(to: client.send("tools/call", ["name": "note_collect", "arguments": ["title": "Still", "body": "here"]]))
        #expect(made["result"]?["structuredContent"]?["displayName"] == "Still", "\(made)")
        #expect(try client.response(to: client.send("ping"))["result"] == [:])
        client.host.closeInput()
        #expect(client.host.waitForExit(timeout: 10) == 0)
    }
}
