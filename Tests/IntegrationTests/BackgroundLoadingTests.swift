import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Providers load in the background after `initialize` (issue 9, docs/protocol.md): `initialize`
/// and unrelated requests answer at once, and whatever needs a provider waits for its load and
/// then sees exactly what it would have seen had loading finished first.
///
/// The slow provider is the Swift fixture with `openDelayMs` (its `init` sleeps). The tests assert
/// the order of answers, never how long anything took, except that shutting down must not wait
/// for a load that takes a minute.
///
/// Process-isolated providers load here with `--eager-workers`: since issue 28 workers start on
/// first use, so a load no longer opens anything and the slow open happens when the first request
/// needs the provider. This suite keeps the eager mode (still supported, for comparison) covered;
/// the same situations with lazy workers (a slow cold start, a failure after it, cancellation and
/// shutdown while a worker starts) are in `LazyWorkerTests`.
@Suite("Background provider loading", .serialized)
struct BackgroundLoadingTests {
    static let fixture = "com.contexthost.fixture"
    /// How long the slow provider takes to open: long enough that a host answering `initialize`
    /// only after loading would be caught, short enough to keep the suite quick.
    static let slowOpenMilliseconds = 1500

    /// A folder with the fixture's manifest (`openDelayMs` and any other settings).
    private func manifests(isolation: String, openDelayMs: Int, settings: String = "") throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(
            writing: "fixture.yaml",
            TestManifest.yaml(
                id: Self.fixture, library: "libFixtureProviders.so", isolation: isolation,
                extra: "settings:\n  openDelayMs: { type: integer, default: \(openDelayMs) }\n\(settings)"))
        return directory
    }

    private func host(_ manifests: TemporaryDirectory, _ extra: [String] = []) throws -> RPCClient {
        // In-process manifests are honoured only for trusted providers (docs/security.md §9).
        try RPCClient(arguments: [
            "--manifests", manifests.path, "--library-path", BuildProducts.directory, "--trust", Self.fixture, "--eager-workers",
        ] + extra)
    }

    /// `host(manifests, extra)` after its `initialize`.
    private func initialized(_ manifests: TemporaryDirectory, _ extra: [String] = []) throws -> RPCClient {
        let client = try host(manifests, extra)
        try client.initialize()
        return client
    }

    private func item(_ content: JSONValue = [:]) -> JSONValue {
        [
            "id": "5d0c8a52-0d0e-4d83-a7b7-4a2f4e1f0b61", "providerId": .string(Self.fixture), "type": "fixture",
            "displayName": "Fixture", "content": content,
        ]
    }

    /// The worker processes (children) of the host, once at least one exists.
    private func workerPIDs(of host: HostProcess, timeout: Double = 20) throws -> [Int32] {
        let parent = host.process.processIdentifier
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let children = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { name -> Int32? in
                guard let pid = Int32(name),
                    let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return nil }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 1 && Int32(fields[1]) == parent ? pid : nil
            } ?? []
            if !children.isEmpty { return children }
            if Date() > deadline { throw NoWorker(description: "No worker process of the host appeared within \(timeout) s.") }
            usleep(10_000)
        }
    }

    struct NoWorker: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether a process still runs (a zombie waiting to be reaped by its new parent is gone).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    private func expectGone(_ pids: [Int32], sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date().addingTimeInterval(10)
        while pids.contains(where: Self.isAlive) && Date() < deadline { usleep(10_000) }
        #expect(!pids.contains(where: Self.isAlive), "worker processes left running: \(pids)", sourceLocation: sourceLocation)
    }

    @Test(
        "initialize and ping answer while a slow provider loads; providers/list then shows its final status",
        arguments: ["in-process", "process"])
    func initializeDoesNotWait(isolation: String) throws {
        let manifests = try manifests(isolation: isolation, openDelayMs: Self.slowOpenMilliseconds)
        let client = try host(manifests)
        // All at once: a host that loaded before answering would answer list, preview, then ping
        // no earlier than the load, but in the order sent.
        let initialize = client.send("initialize", ["clientInfo": ["name": "tests"]])
        let list = client.send("providers/list")
        let preview = client.send("items/preview", ["item": item()])
        let ping = client.send("ping")
        let answers = try client.responses(count: 4)
        let order = answers.map { $0["id"] ?? .null }
        #expect(order.first == initialize)
        #expect(order.firstIndex(of: ping)! < order.firstIndex(of: list)!, "ping waited for the load: \(order)")
        #expect(order.firstIndex(of: ping)! < order.firstIndex(of: preview)!, "ping waited for the load: \(order)")

        let providers = try #require(answers.first { $0["id"] == list }?["result"]?["providers"]?.arrayValue)
        let fixture = try #require(providers.first { $0["id"] == .string(Self.fixture) })
        #expect(fixture["status"] == "loaded")
        #expect(fixture["available"] == true)
        #expect(fixture["effectiveIsolation"] == .string(isolation))
        // The request that needed the provider waited for it and succeeded.
        let chip = try #require(answers.first { $0["id"] == preview }?["result"])
        #expect(chip["title"] == "Fixture")
        #expect(try client.shutdown() == 0)
    }

    @Test("collect/make and collect/start sent during loading wait for the provider and succeed")
    func collectionWaits() throws {
        let manifests = try manifests(isolation: "process", openDelayMs: Self.slowOpenMilliseconds)
        let client = try initialized(manifests)
        let make = client.send("collect/make", ["providerId": .string(Self.fixture)])
        let start = client.send("collect/start", ["providerId": .string(Self.fixture)])
        let ping = client.send("ping")
        let answers = try client.responses(count: 3)
        #expect(answers.first?["id"] == ping)
        let made = try #require(answers.first { $0["id"] == make }?["result"])
        #expect(made["item"]?["content"]?["text"] == "made")
        let form = try #require(answers.first { $0["id"] == start }?["result"])
        #expect(form["form"]?["stepId"] == "fixture")
        let submitted = try client.call("collect/submit", ["sessionId": form["sessionId"] ?? .null, "values": ["text": "hello"]])
        #expect(submitted["outcome"] == "item")
        #expect(try client.shutdown() == 0)
    }

    @Test("a provider that fails to open after a slow start is reported as before", arguments: ["in-process", "process"])
    func failureAfterSlowStart(isolation: String) throws {
        let manifests = try manifests(
            isolation: isolation, openDelayMs: Self.slowOpenMilliseconds,
            settings: "  failOpen: { type: string, default: \"no database at /nowhere\" }")
        let client = try initialized(manifests)
        let preview = client.send("items/preview", ["item": item()])
        let list = client.send("providers/list")
        let ping = client.send("ping")
        let answers = try client.responses(count: 3)
        #expect(answers.first?["id"] == ping)
        let error = try #require(answers.first { $0["id"] == preview }?["error"])
        #expect(error["code"] == -32012)
        #expect(error["data"]?["code"] == "provider-open-failed")
        #expect(error["message"]?.stringValue?.contains("no database at /nowhere") == true)
        let providers = try #require(answers.first { $0["id"] == list }?["result"]?["providers"]?.arrayValue)
        let fixture = try #require(providers.first { $0["id"] == .string(Self.fixture) })
        #expect(fixture["status"] == "failed")
        #expect(fixture["error"]?["code"] == "provider-open-failed")
        #expect(fixture["error"]?["message"] == "no database at /nowhere")
        #expect(try client.shutdown() == 0)
    }

    @Test("$/cancelRequest answers a request that waits for a load at once")
    func cancelWhileWaiting() throws {
        let manifests = try manifests(isolation: "process", openDelayMs: Self.slowOpenMilliseconds)
        let client = try initialized(manifests)
        let preview = client.send("items/preview", ["item": item()])
        client.notify("$/cancelRequest", ["id": preview])
        let ping = client.send("ping")
        let answers = try client.responses(count: 2)
        #expect(answers.map { $0["id"] ?? .null } == [preview, ping])
        #expect(answers.first?["error"]?["code"] == -32800)
        // The provider still loads, and its requests work once it has.
        #expect(try client.call("items/preview", ["item": item()])["title"] == "Fixture")
        // Only one answer per request: the cancelled one is not answered again.
        #expect(try client.call("ping") == [:])
        #expect(!client.received.contains { $0["id"] == preview })
        #expect(try client.shutdown() == 0)
    }

    @Test("shutdown and exit while a provider takes a minute to load: the host exits at once, its worker too")
    func shutdownDuringLoad() throws {
        let manifests = try manifests(isolation: "process", openDelayMs: 60_000)
        let client = try initialized(manifests)
        let workers = try workerPIDs(of: client.host)
        let started = Date()
        _ = try client.call("shutdown")
        client.notify("exit")
        let status = client.host.waitForExit(timeout: 30)
        #expect(status == 0)
        // Well before the worker's 10 s start timeout would have ended the load.
        #expect(Date().timeIntervalSince(started) < 9, "exit waited for the load")
        expectGone(workers)
    }

    @Test("stdin EOF while a provider loads: exits at once, or after answering what waited", arguments: ["in-process", "process"])
    func endOfInputDuringLoad(isolation: String) throws {
        // Nothing pending: the host leaves without waiting for the load.
        var manifests = try manifests(isolation: isolation, openDelayMs: 60_000)
        var client = try host(manifests)
        try client.initialize()
        let workers = isolation == "process" ? try workerPIDs(of: client.host) : []
        let started = Date()
        client.host.closeInput()
        #expect(client.host.waitForExit(timeout: 30) == 0)
        #expect(Date().timeIntervalSince(started) < 9, "EOF waited for the load")
        expectGone(workers)

        // A request waiting for the load is answered first, as every pending request is at EOF.
        manifests = try self.manifests(isolation: isolation, openDelayMs: Self.slowOpenMilliseconds)
        client = try initialized(manifests)
        let preview = client.send("items/preview", ["item": item()])
        client.host.closeInput()
        let answer = try client.response(to: preview, timeout: 30)
        #expect(answer["result"]?["title"] == "Fixture")
        #expect(client.host.waitForExit(timeout: 30) == 0)
    }

    @Test("a manifest added while providers load is applied after the loads, and the notification lists them loaded")
    func hotReloadDuringLoad() throws {
        let manifests = try manifests(isolation: "process", openDelayMs: Self.slowOpenMilliseconds)
        let client = try initialized(manifests)  // watches its manifest folder
        var note = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/note.yaml", encoding: .utf8)
        note = note.replacingOccurrences(of: "id: com.contexthost.note", with: "id: com.example.note-two")
        try manifests.write("note-two.yaml", note)
        let change = try client.nextNotification(method: "providers/changed", timeout: 30)["params"] ?? .null
        #expect(change["added"] == ["com.example.note-two"])
        let providers = change["providers"]?.arrayValue ?? []
        #expect(providers.first { $0["id"] == .string(Self.fixture) }?["status"] == "loaded")
        #expect(providers.first { $0["id"] == "com.example.note-two" }?["status"] == "loaded")
        #expect(try client.call("providers/list")["providers"] == change["providers"])
        #expect(try client.shutdown() == 0)
    }

    @Test("a restored draft lists its items' chips once their provider has loaded")
    func restoredDraftWaits() throws {
        let state = try TemporaryDirectory()
        var manifests = try manifests(isolation: "process", openDelayMs: 0)
        var client = try host(manifests, ["--state-dir", state.path])
        try client.initialize()
        let composer = try #require(try client.call("composer/open")["composerId"])
        let made = try client.call("collect/make", ["providerId": .string(Self.fixture), "composerId": composer])
        #expect(made["composer"]?["itemCount"] == 1)
        #expect(try client.shutdown() == 0)

        manifests = try self.manifests(isolation: "process", openDelayMs: Self.slowOpenMilliseconds)
        client = try initialized(manifests, ["--state-dir", state.path])
        let listing = try client.call("composer/list", ["composerId": composer])
        let entry = try #require(listing["items"]?.arrayValue?.first)
        #expect(entry["providerAvailable"] == true)
        #expect(entry["chip"]?["subtitle"] == "fixture")
        #expect(try client.shutdown() == 0)
    }
}
