import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Concurrency, cancellation, timeouts and stdout protection, with the fixture provider.
@Suite("Provider calls through the host")
struct ProviderBehaviourTests {
    static let fixtureManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests"

    private func fixtureClient() throws -> RPCClient {
        let client = try RPCClient(arguments: ["--manifests", Self.fixtureManifests])
        try client.initialize()
        return client
    }

    /// A client whose fixture worker already runs: the first request to a lazy worker pays for its
    /// start within its own timeout, and a test that times a preview (500 ms) must not.
    private func warmFixtureClient() throws -> RPCClient {
        let client = try fixtureClient()
        _ = try client.call("items/detail", ["item": item([:])])  // 2 s for the start
        return client
    }

    private func item(_ content: JSONValue) -> JSONValue {
        [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": "com.contexthost.fixture", "type": "fixture",
            "displayName": "Fixture", "content": content,
        ]
    }

    @Test("a slow request does not hold up a fast one; responses match by id")
    func concurrentRequests() throws {
        let client = try warmFixtureClient()
        defer { client.host.terminate() }
        let slow = client.send("items/preview", ["item": item(["delayMs": 300])])
        let fast = client.send("ping")
        // Responses only: the worker's first availability check may arrive as providers/changed.
        func nextResponse() throws -> JSONValue {
            while true {
                let message = try client.nextMessage()
                if message["id"] != nil { return message }
            }
        }
        let first = try nextResponse()
        #expect(first["id"] == fast)
        let second = try nextResponse()
        #expect(second["id"] == slow)
        #expect(second["result"]?["title"] != nil)
    }

    @Test("$/cancelRequest answers -32800 exactly once")
    func cancellation() throws {
        let client = try fixtureClient()
        defer { client.host.terminate() }
        let hanging = client.send("items/detail", ["item": item(["hang": true])])
        client.notify("$/cancelRequest", ["id": hanging])
        let response = try client.response(to: hanging)
        #expect(response["error"]?["code"] == -32800)
        #expect(response["error"]?["message"] == "Request cancelled")
        // Nothing else arrives for that id: the next message is the ping's answer.
        let ping = client.send("ping")
        var next = try client.nextMessage()
        // Notifications (the worker's first availability check) carry no id; skip them.
        while next["id"] == nil { next = try client.nextMessage() }
        #expect(next["id"] == ping)
        // Cancelling something finished or unknown is ignored.
        client.notify("$/cancelRequest", ["id": 999])
        #expect(try client.call("ping") == [:])
    }

    @Test("a provider that does not answer in time gets a timeout error naming it")
    func timeout() throws {
        let client = try fixtureClient()
        defer { client.host.terminate() }
        // preview timeout is 500 ms in the fixture manifest.
        let error = try client.callExpectingError("items/preview", ["item": item(["hang": true])])
        #expect(error["code"] == -32015)
        #expect(error["message"] == "Provider 'com.contexthost.fixture' did not answer item/preview within 500 ms.")
        #expect(error["data"]?["timeoutMs"] == 500)
        #expect(try client.call("ping") == [:])
    }

    @Test("a provider's print goes to stderr, never into the protocol")
    func stdoutIsProtected() throws {
        let client = try warmFixtureClient()
        defer { client.host.terminate() }
        let chip = try client.call("items/preview", ["item": item(["print": "STRAY-OUTPUT-FROM-PROVIDER"])])
        #expect(chip["title"] != nil)
        #expect(try client.call("ping") == [:])
        let deadline = Date().addingTimeInterval(5)
        while !client.host.standardError.contains("STRAY-OUTPUT-FROM-PROVIDER"), Date() < deadline { usleep(10_000) }
        #expect(client.host.standardError.contains("STRAY-OUTPUT-FROM-PROVIDER"))
    }

    @Test("a provider's error becomes a host error that names the provider")
    func providerError() throws {
        let client = try fixtureClient()
        defer { client.host.terminate() }
        let error = try client.callExpectingError("items/encode", ["item": item(["fail": "disk on fire"])])
        #expect(error["code"] == -32013)
        #expect(error["message"] == "Provider 'com.contexthost.fixture' failed item/encode: disk on fire")
        #expect(error["data"]?["providerId"] == "com.contexthost.fixture")
        #expect(error["data"]?["providerCode"] == -32099)
    }

    @Test("collect/make and collect/cancel")
    func makeAndCancel() throws {
        let client = try fixtureClient()
        defer { client.host.terminate() }
        let made = try client.call("collect/make", ["providerId": "com.contexthost.fixture"])
        #expect(made["item"]?["providerId"] == "com.contexthost.fixture")
        let start = try client.call("collect/start", ["providerId": "com.contexthost.fixture"])
        let session = try #require(start["sessionId"])
        #expect(try client.call("collect/cancel", ["sessionId": session]) == [:])
        let gone = try client.callExpectingError("collect/submit", ["sessionId": session, "values": ["text": "x"]])
        #expect(gone["code"] == -32020)
    }
}
