import ContextHost
import ContextHostTestSupport
import ContextProtocol
import Testing

/// `TestClient`'s two forms answer one exchange alike: an `RPCServer` in this process
/// (`inMemory`) and a spawned `context-host serve` (`live`), through the same calls — raw bytes, a
/// JSON request, typed requests, a notification.
@Suite("Test client: in memory and live")
struct TestClientTests {
    /// One exchange, as lines that say what came back.
    static func exchange(_ client: TestClient) throws -> [String] {
        var seen: [String] = []
        let early = try client.callExpectingError("providers/list")
        seen.append("before initialize: \(early["code"].map { "\($0)" } ?? "-")")
        client.send(bytes: Array("{not json".utf8))
        let parse = try client.nextMessage()
        seen.append("malformed: \(parse["error"]?["code"].map { "\($0)" } ?? "-") id \(parse["id"].map { "\($0)" } ?? "-")")
        let hello = try client.initialize(["clientInfo": ["name": "tests"], "protocolVersions": [2]])
        seen.append("protocol \(hello["protocolVersion"].map { "\($0)" } ?? "-")")
        _ = try client.send(PingRequest())
        seen.append("ping")
        let listed = try client.send(ProvidersListRequest())
        seen.append("providers \(listed.providers.count)")
        return seen
    }

    @Test("the same exchange gives the same answers in memory and from a spawned host")
    func sameAnswers() throws {
        let manifests = try TemporaryDirectory()
        let memory = TestClient.inMemory(HostConfiguration(manifestDirectories: [manifests.path]))
        defer { memory.close() }
        let live = try TestClient.live(arguments: ["serve", "--manifests", manifests.path, "--no-state", "--no-installed"])
        defer { live.close() }
        let inMemory = try Self.exchange(memory)
        #expect(inMemory == (try Self.exchange(live)))
        #expect(inMemory.first == "before initialize: -32002", "\(inMemory)")
        #expect(inMemory.last == "providers 0", "\(inMemory)")
    }
}
