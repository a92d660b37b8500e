import ContextHostTestSupport
import ContextProviderKit
import Testing

/// Bad input of every kind gets an exact error, and the host keeps answering.
@Suite("Malformed JSON-RPC")
struct MalformedMessageTests {
    /// Sends a raw line and returns the next message.
    private func exchange(_ client: RPCClient, _ line: String) throws -> JSONValue {
        client.sendRaw(line)
        return try client.nextMessage()
    }

    private func expectError(
        _ message: JSONValue, id: JSONValue, code: Int, text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(message["jsonrpc"] == "2.0", sourceLocation: sourceLocation)
        #expect(message["id"] == id, sourceLocation: sourceLocation)
        #expect(message["result"] == nil, sourceLocation: sourceLocation)
        #expect(message["error"]?["code"] == .number(Double(code)), sourceLocation: sourceLocation)
        #expect(message["error"]?["message"] == .string(text), sourceLocation: sourceLocation)
    }

    @Test("each malformed message gets its exact error and the next request still works")
    func malformedMessages() throws {
        let client = try RPCClient(arguments: ["--max-message-bytes", "1024"])
        defer { client.host.terminate() }

        // Before initialize.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":1,"method":"providers/list"}"#), id: 1, code: -32002,
            text: "The server is not initialized; send 'initialize' first.")
        try client.initialize()

        // Not JSON at all: id unknown.
        expectError(
            try exchange(client, "{bad json"), id: nil, code: -32700,
            text: "Parse error: Unexpected 'b'; expected a string key at byte 1")
        // Broken after the id: the id is kept.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":}}"#), id: 7, code: -32700,
            text: "Parse error: Unexpected '}'; expected a value at byte 54")
        // No method.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":3}"#), id: 3, code: -32600, text: "The message has no 'method'.")
        // Method not a string.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":"m","method":42}"#), id: "m", code: -32600, text: "'method' must be a string.")
        // Wrong jsonrpc version.
        expectError(
            try exchange(client, #"{"jsonrpc":"1.0","id":10,"method":"ping"}"#), id: 10, code: -32600, text: "'jsonrpc' must be \"2.0\".")
        // id of the wrong type.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#), id: nil, code: -32600,
            text: "'id' must be a string, a number or null.")
        // params of the wrong type: not structured at all, then an array where an object is needed.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#), id: 5, code: -32600,
            text: "'params' must be an object or an array.")
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":4,"method":"providers/list","params":[1]}"#), id: 4, code: -32602,
            text: "params must be an object, got array")
        // A field of the wrong type.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":6,"method":"collect/start","params":{"providerId":12}}"#), id: 6,
            code: -32602, text: "params.providerId: expected a string, got number")
        // Unknown method.
        let unknown = try exchange(client, #"{"jsonrpc":"2.0","id":8,"method":"nope/nothing"}"#)
        expectError(unknown, id: 8, code: -32601, text: "Method not found: nope/nothing")
        #expect(unknown["error"]?["data"]?["method"] == "nope/nothing")
        // A batch.
        expectError(
            try exchange(client, #"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#), id: nil, code: -32600,
            text: "Batch requests are not supported; send each request as its own message.")
        // An oversized line (limit 1024 bytes).
        let padding = String(repeating: "x", count: 2000)
        let oversizedLine = #"{"jsonrpc":"2.0","id":11,"method":"ping","params":{"pad":""# + padding + #""}}"#
        let oversized = try exchange(client, oversizedLine)
        expectError(
            oversized, id: nil, code: -32600,
            text: "Message of \(oversizedLine.utf8.count) bytes exceeds the limit of 1024 bytes; it was discarded.")
        #expect(oversized["error"]?["data"]?["limit"] == 1024)
        // An unknown item provider.
        let noProvider = try exchange(client, #"{"jsonrpc":"2.0","id":12,"method":"items/preview","params":{"item":{"providerId":"com.example.none"}}}"#)
        expectError(noProvider, id: 12, code: -32010, text: "No provider has id 'com.example.none'. Call providers/list to see the ids.")
        #expect(noProvider["error"]?["data"]?["providerId"] == "com.example.none")
        // A notification sent as a request (with an id) is refused, not half-done.
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":13,"method":"initialized","params":{}}"#), id: 13, code: -32600,
            text: "'initialized' is a notification; send it without an 'id'.")
        // A notification for an unknown method gets no answer; the next request does.
        client.notify("nope/notification")

        // The host still answers.
        let pong = try client.call("ping")
        #expect(pong == [:])
        // After shutdown only exit is accepted.
        _ = try client.call("shutdown")
        expectError(
            try exchange(client, #"{"jsonrpc":"2.0","id":14,"method":"ping"}"#), id: 14, code: -32600,
            text: "The server is shutting down; only 'exit' is accepted.")
        client.notify("exit")
        #expect(client.host.waitForExit() == 0)
    }

    @Test("Content-Length framing: a bad header is reported and the stream goes on")
    func badContentLengthHeader() throws {
        let client = try RPCClient(arguments: [], framing: .contentLength)
        defer { client.host.terminate() }
        client.host.write("Content-Length: abc\r\n\r\n")
        let error = try client.nextMessage()
        #expect(error["id"] == .null)
        #expect(error["error"]?["code"] == -32700)
        #expect(error["error"]?["message"] == "Content-Length 'abc' is not a non-negative integer")
        #expect(try client.call("ping") == [:])
    }

    @Test("Messages split at every byte still arrive whole")
    func byteByByte() throws {
        let client = try RPCClient(arguments: [])
        defer { client.host.terminate() }
        for byte in Array(#"{"jsonrpc":"2.0","id":"split","method":"ping"}"#.utf8) + [0x0A] {
            client.host.write([byte])
        }
        let response = try client.response(to: "split")
        #expect(response["result"] == [:])
    }
}
