import ContextHost
import ContextHostClient
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The embedding API (issue 26): the same typed session over the in-process host and over a
/// spawned `context-host`, driven through Note and the fixture provider.
@Suite("Embedding API")
struct EmbeddingTests {
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"
    static let fixtureManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests"

    /// Note's and the fixture's manifests with a 10 s `preview` timeout (which also bounds the
    /// availability check), so a loaded machine running the other suites does not make them
    /// unavailable.
    static let relaxedManifests: String =
        (try? RelaxedManifests.folder(copying: [bundledManifests + "/note.yaml", fixtureManifests + "/fixture.yaml"])) ?? ""

    /// A host in this process (its providers in workers), once the products are built.
    static func inProcessHost(stateDirectory: String? = nil, watch: Bool = false, manifests: [String] = [relaxedManifests]) throws -> InProcessHost {
        try BuildProducts.checkBuilt()
        var configuration = HostConfiguration(
            manifestDirectories: manifests, libraryDirectories: [BuildProducts.directory], stateDirectory: stateDirectory)
        configuration.watchManifests = watch
        // The host runs in this process; its providers in workers (the embedder names the worker
        // binary). In-process providers run their work on the process's cooperative pool, which
        // other suites' blocking waits can hold for seconds in this test process; the separate
        // package (EmbeddingPackageTests) runs Note inside its own process instead.
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.policy = .process
        return try InProcessHost(configuration: configuration)
    }

    /// A `client` (child process) or an `inProcessHost` session by `mode`.
    static func session(_ mode: String) throws -> any ContextHostSession {
        try mode == "client" ? client() : inProcessHost()
    }

    /// An initialized `session(mode)` and an item the fixture made.
    static func fixtureItem(_ mode: String) async throws -> (host: any ContextHostSession, item: ContextItem) {
        let host = try session(mode)
        _ = try await host.initialize()
        return (host, try #require(try await host.make(providerId: "com.contexthost.fixture").item))
    }

    /// A `serve` child with the bundled and fixture manifests, once the products are built.
    static func client(_ extra: [String] = []) throws -> ContextHostClient {
        try BuildProducts.checkBuilt()
        return try ContextHostClient(
            executable: BuildProducts.hostExecutable,
            arguments: ["serve", "--manifests", bundledManifests, "--manifests", fixtureManifests, "--library-path", BuildProducts.directory,
                        "--no-state", "--no-installed"] + extra)
    }

    /// Note end to end through the typed API: list → collect with a field error, then valid →
    /// preview → detail → describe → encode → composer send. Returns the sent envelope.
    static func noteRoundTrip(_ host: some ContextHostSession) async throws -> ComposerSendResult {
        let hello = try await host.initialize(InitializeRequest(clientInfo: .init(name: "embedding-test"), locale: "en-US"))
        #expect(hello.serverInfo.name == "context-host")
        let providers = try await host.providers()
        #expect(providers.contains { $0.id == "com.contexthost.note" && $0.available == true })
        let composer = try await host.openComposer()
        let started = try await host.startCollection(providerId: "com.contexthost.note", composerId: composer.composerId)
        #expect(started.form.fields.map(\.id) == ["title", "body"])
        let invalid = try await host.submit(sessionId: started.sessionId, values: ["title": "", "body": "Milk"])
        guard case .invalid(let fieldErrors, _) = invalid.outcome else {
            Issue.record("expected field errors, got \(invalid.outcome)")
            throw ResponseError(code: .internalError, message: "no field error")
        }
        #expect(fieldErrors["title"] == "Title is required.")
        let done = try await host.submit(sessionId: started.sessionId, values: ["title": "Groceries", "body": "Milk, eggs and bread."])
        guard case .item(let item) = done.outcome else {
            Issue.record("expected an item, got \(done.outcome)")
            throw ResponseError(code: .internalError, message: "no item")
        }
        #expect(done.composer?.itemCount == 1)
        let chip = try await host.preview(item)
        #expect(chip.title == "Groceries")
        let detail = try await host.detail(item)
        #expect(detail.title == "Groceries")
        #expect(try await host.describe(item).contains("Groceries"))
        let encoded = try await host.encode(item)
        #expect(!encoded.data.isEmpty)
        let listed = try await host.composer(composer.composerId)
        #expect(listed.items?.map(\.item.id) == [item.id])
        let sent = try await host.sendMessage(composerId: composer.composerId, text: "See the list")
        #expect(sent.message.contextItems.map(\.displayName) == ["Groceries"])
        #expect(sent.message.text == "See the list")
        return sent
    }

    @Test("in-process: Note end to end through the typed session")
    func inProcessNote() async throws {
        let host = try Self.inProcessHost()
        _ = try await Self.noteRoundTrip(host)
        await host.close()
        // After close every request fails at once with connectionClosed.
        let error = await #expect(throws: ResponseError.self) { try await host.ping() }
        #expect(error?.code == .connectionClosed)
    }

    @Test("ContextHostClient: Note end to end against the real binary")
    func clientNote() async throws {
        let host = try Self.client()
        _ = try await Self.noteRoundTrip(host)
        await host.close()
    }

    @Test("two in-process hosts in one process do not interfere")
    func twoHosts() async throws {
        let first = try Self.inProcessHost()
        let second = try Self.inProcessHost()
        async let one = Self.noteRoundTrip(first)
        async let two = Self.noteRoundTrip(second)
        _ = try await (one, two)
        await first.close()
        // The second still answers after the first closed.
        try await second.ping()
        await second.close()
    }

    @Test("many requests in flight, answered to their callers", arguments: ["in-process", "client"])
    func manyInFlight(_ mode: String) async throws {
        let (host, made) = try await Self.fixtureItem(mode)
        let titles = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                var item = made
                item.displayName = "item \(index)"
                // Some wait a little at the provider, so answers come back out of order.
                item.content = ["delayMs": .number(Double(index % 4) * 5)]
                let request = ItemsPreviewRequest(item: item)
                group.addTask { try await host.send(request).title }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(titles) == Set((0..<64).map { "item \($0)" }))
        await host.close()
    }

    @Test("cancelling the Swift task cancels the provider call", arguments: ["in-process", "client"])
    func cancellation(_ mode: String) async throws {
        let (host, made) = try await Self.fixtureItem(mode)
        var hanging = made
        hanging.content = ["hang": true]
        let start = ContinuousClock.now
        let task = Task { [hanging] in try await host.detail(hanging) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let outcome = await task.result
        let elapsed = ContinuousClock.now - start
        guard case .failure(let error) = outcome, let response = error as? ResponseError else {
            Issue.record("expected a cancellation error, got \(outcome)")
            return
        }
        #expect(response.code == .requestCancelled)
        // The detail timeout is 2 s: the answer came from the cancellation, not the deadline.
        #expect(elapsed < .seconds(2))
        // The host is still fine.
        try await host.ping()
        await host.close()
    }

    @Test("ContextHostClient: a dead host fails waiting and later requests with connectionClosed, saying how it ended")
    func processDeath() async throws {
        let host = try Self.client()
        _ = try await host.call(method: "initialize", params: [:])
        let made = try await host.call(method: "collect/make", params: ["providerId": "com.contexthost.fixture"])
        var item = try #require(made["item"]?.objectValue)
        item["content"] = ["hang": true]
        let hanging = JSONValue.object(item)
        let waiting = Task { try await host.call(method: "items/detail", params: ["item": hanging]) }
        try await Task.sleep(for: .milliseconds(100))
        kill(host.processID, SIGKILL)
        let outcome = await waiting.result
        guard case .failure(let error) = outcome, let response = error as? ResponseError else {
            Issue.record("expected connectionClosed, got \(outcome)")
            return
        }
        #expect(response.code == .connectionClosed)
        #expect(response.message.contains("killed by signal 9"), "\(response.message)")
        await #expect(throws: ResponseError.self) { try await host.call(method: "ping", params: [:]) }
        await host.close()
    }

    @Test("events: a manifest added while connected arrives as providers/changed", arguments: ["in-process", "client"])
    func providersChangedEvent(_ mode: String) async throws {
        try BuildProducts.checkBuilt()
        let folder = try TemporaryDirectory()
        let note = try String(contentsOfFile: Self.bundledManifests + "/note.yaml", encoding: .utf8)
        let manifests = folder.path + "/manifests"
        try FileManager.default.createDirectory(atPath: manifests, withIntermediateDirectories: true)
        let host: any ContextHostSession
        if mode == "client" {
            host = try ContextHostClient(
                executable: BuildProducts.hostExecutable,
                arguments: ["serve", "--manifests", manifests, "--library-path", BuildProducts.directory, "--no-state", "--no-installed"])
        } else {
            host = try Self.inProcessHost(watch: true, manifests: [manifests])
        }
        let events = host.events()
        _ = try await host.initialize()
        _ = try await host.providers()
        try note.write(toFile: manifests + "/note.yaml", atomically: true, encoding: .utf8)
        let added = await withTaskGroup(of: [String]?.self) { group in
            group.addTask {
                for await event in events {
                    if case .providersChanged(let changed) = event, !changed.added.isEmpty { return changed.added }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(added == ["com.contexthost.note"])
        await host.close()
    }

    @Test("events: provider log lines arrive typed, at the session's level", arguments: ["in-process", "client"])
    func logEvents(_ mode: String) async throws {
        let host = try Self.session(mode)
        let events = host.events()
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "embedding-test"), logLevel: .warning))
        guard let made = try await host.make(providerId: "com.contexthost.fixture").item else {
            Issue.record("the fixture made no item")
            return
        }
        var item = made
        item.content = ["log": true]
        _ = try await host.preview(item)
        // Answers and notifications keep their order on the connection: the lines came first.
        try await host.ping()
        await host.close()
        var lines: [String] = []
        for await event in events {
            if case .log(let line) = event { lines.append("\(line.level.rawValue): \(line.message)") }
        }
        #expect(lines == ["error: fixture error line", "warning: fixture warning line"])
    }

    @Test("ContextHostClient: a host that exits at once fails the request with its status and last stderr lines")
    func hostExitsAtOnce() async throws {
        let host = try ContextHostClient(
            executable: "/bin/sh", arguments: ["-c", "echo 'context-host: cannot read --config x.yaml' >&2; exit 3"])
        let error = await #expect(throws: ResponseError.self) { try await host.initialize() }
        #expect(error?.code == .connectionClosed)
        #expect(error?.message.contains("exited with status 3") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("cannot read --config x.yaml") == true, "\(error?.message ?? "")")
        #expect(error?.data?["exitStatus"] == 3)
        await host.close()
    }

    @Test("ContextHostClient: a missing executable is a clear error, not a crash")
    func missingExecutable() {
        let error = #expect(throws: ResponseError.self) {
            try ContextHostClient(executable: "/nonexistent/context-host")
        }
        #expect(error?.code == .connectionClosed)
        #expect(error?.message.contains("Cannot start /nonexistent/context-host") == true, "\(error?.message ?? "")")
    }
}
