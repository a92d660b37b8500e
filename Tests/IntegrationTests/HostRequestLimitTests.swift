import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// A provider request may have at most 16 host requests (`host/fetch`) running at once
/// (`RequestEvents.maximumConcurrentHostRequests`; docs/provider-abi.md, "Host requests"): one
/// more is answered at once with `-32600`, from another thread than the provider's reply callback
/// that carried it, and the others go on to the server.
///
/// The hostile C fixture (`host-burst`) sends 17 fetches of a slow URL (the server answers after
/// 1.5 s, so none is over before the 17th is sent) through one preview's reply callback, one after
/// the other, then waits for every answer and reports each answer's status or error code, the
/// first error, and how many answers came from inside its own reply callback: an in-process
/// provider may hold a lock there, so an answer given from inside it can deadlock the provider
/// (before dd6da69 the refusal was given so in-process: `inside-reply 1`).
@Suite(.serialized) struct HostRequestLimitTests {
    static let limit = 16
    static let refusal = "-32600 Host request refused: too many for one request, or sent after its response"

    @Test(arguments: ["in-process", "process"])
    func oneHostRequestTooManyIsRefusedAndTheOthersAreFetched(isolation: String) throws {
        let root = try TemporaryDirectory()
        let server = try LoopbackHTTPS()
        try root.write("manifests/hostile.yaml", TestManifest.brokered(
            id: "com.contexthost.hostile", title: "Hostile", iconName: "ant", library: "libFixtureHostileProvider.so", port: server.port,
            networkTimeout: "20s", timeouts: "{ collect: 30s, preview: 40s, detail: 10s, encode: 10s }", extra: "availability:\n  permissions: []\n"))
        let client = try RPCClient(host: HostProcess(
            arguments: ["serve", "--no-watch", "--no-installed", "--manifests", root.path + "/manifests"]
                + (isolation == "in-process" ? ["--isolation", "in-process"] : []),
            environment: TestCA.hostEnvironment(root: root.path, caFile: server.caFile)))
        defer { client.host.terminate() }
        _ = try client.initialize(["clientInfo": ["name": "tests"], "locale": "en-US", "grantedPermissions": ["network"]])

        let count = Self.limit + 1
        let item: JSONValue = [
            "id": "5d2c6a1e-0000-4000-8000-000000000017", "providerId": "com.contexthost.hostile", "type": "hostile", "displayName": "Hostile",
            "content": ["escape": "host-burst", "path": .string(server.baseURL + "/slow/1500"), "count": .number(Double(count))],
        ]
        // Bounded: 16 fetches of 1.5 s, 8 connections at a time, take ~3 s; a wait that runs out
        // throws, and fails the test.
        let id = client.send("items/preview", ["item": item])
        let response = try client.response(to: id, timeout: 60)
        let outcome = try #require(response["result"]?["subtitle"]?.stringValue, "no chip: \(response)")

        // Every request answered (none lost, nothing hung), none from inside the reply callback.
        #expect(outcome.hasPrefix("answered \(count)/\(count); inside-reply 0; "), "\(isolation): \(outcome)")
        // The first 16 went to the server and got its 200; the 17th the refusal, code and message.
        let codes = outcome.split(separator: ";").first { $0.hasPrefix(" codes ") }.map { $0.dropFirst(" codes ".count).split(separator: ",").map(String.init) }
        #expect(codes == Array(repeating: "200", count: Self.limit) + ["-32600"], "\(isolation): \(outcome)")
        #expect(outcome.hasSuffix("; first error: " + Self.refusal), "\(isolation): \(outcome)")
        #expect(server.requests.filter { $0["path"]?.stringValue == "/slow/1500" }.count == Self.limit)

        // The provider and the host still answer.
        let next = client.send("items/preview", ["item": [
            "id": "5d2c6a1e-0000-4000-8000-000000000018", "providerId": "com.contexthost.hostile", "type": "hostile", "displayName": "Hostile",
            "content": [:],
        ]])
        #expect(try client.response(to: next, timeout: 30)["result"]?["subtitle"] == "normal")
    }
}
