import ContextHost
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sessions of one `HostCore` (issues 36 and 38): one set of providers and workers for every
/// session whose client loads them the same way, and nothing else shared.
@Suite("Host core shared by sessions")
struct HostCoreTests {
    static let note = "com.contexthost.note"

    /// A core over a copy of the relaxed manifests (Note and the fixture), its providers in workers;
    /// fails first when the products it loads are not built.
    static func core(manifests: String = EmbeddingTests.relaxedManifests) throws -> HostCore {
        try BuildProducts.checkBuilt()
        var configuration = HostConfiguration(manifestDirectories: [manifests], libraryDirectories: [BuildProducts.directory])
        configuration.watchManifests = false
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.policy = .process
        return try HostCore(configuration: configuration)
    }

    /// The pid of the worker running Note for `session`, if it runs.
    static func notePID(_ session: InProcessHost) -> Int32? {
        (session.host.registry.entry(id: note)?.connection as? WorkerConnection)?.workerPID
    }

    /// Collects a note in a composer of its own and previews it: the worker is running after.
    static func collectAndPreview(_ session: InProcessHost, title: String) async throws -> (composer: String, item: ContextItem) {
        let composer = try await session.openComposer()
        let started = try await session.startCollection(providerId: note, composerId: composer.composerId)
        let done = try await session.submit(sessionId: started.sessionId, values: ["title": .string(title), "body": "Shared core."])
        guard case .item(let item) = done.outcome else {
            Issue.record("expected an item, got \(done.outcome)")
            throw ResponseError(code: .internalError, message: "no item")
        }
        #expect(try await session.preview(item).title == title)
        return (composer.composerId, item)
    }

    /// Waits (bounded) until process `pid` is gone; false if it is still there after 10 s.
    static func exits(_ pid: Int32) async -> Bool {
        for _ in 0..<1000 {
            if kill(pid, 0) != 0, errno == ESRCH { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test("two sessions with the same grants share one worker; their composers stay their own")
    func sameProfileShares() async throws {
        let core = try Self.core()
        let first = InProcessHost(core: core)
        let second = InProcessHost(core: core)
        _ = try await first.initialize(InitializeRequest(clientInfo: .init(name: "first"), grantedPermissions: ["network"]))
        // The same permissions in another order: the same profile.
        _ = try await second.initialize(InitializeRequest(clientInfo: .init(name: "second"), grantedPermissions: ["network", "network"]))
        #expect(core.groupCount == 1)
        #expect(first.host.registry === second.host.registry)

        let (firstComposer, _) = try await Self.collectAndPreview(first, title: "First")
        let (secondComposer, _) = try await Self.collectAndPreview(second, title: "Second")
        let pid = try #require(Self.notePID(first))
        #expect(Self.notePID(second) == pid, "both sessions' Note requests went to one worker")

        // Composers are per session: neither sees the other's.
        let error = await #expect(throws: ResponseError.self) { _ = try await second.composer(firstComposer) }
        #expect(error?.code == ErrorCode.composerNotFound)
        #expect(try await second.composer(secondComposer).items?.count == 1)

        // Closing one leaves the other working on the same worker.
        await first.close()
        _ = try await Self.collectAndPreview(second, title: "After the first closed")
        #expect(Self.notePID(second) == pid)
        #expect(kill(pid, 0) == 0)
        // The last session out stops the group's workers.
        await second.close()
        #expect(await Self.exits(pid), "the worker of a group whose last session closed must stop")
        #expect(core.groupCount == 0)
    }

    @Test("sessions that grant different permissions get providers of their own")
    func differentProfilesDoNotShare() async throws {
        let core = try Self.core()
        let plain = InProcessHost(core: core)
        let granted = InProcessHost(core: core)
        _ = try await plain.initialize(InitializeRequest(clientInfo: .init(name: "plain")))
        _ = try await granted.initialize(InitializeRequest(clientInfo: .init(name: "granted"), grantedPermissions: ["network"]))
        #expect(core.groupCount == 2)
        #expect(plain.host.registry !== granted.host.registry)
        _ = try await Self.collectAndPreview(plain, title: "Plain")
        _ = try await Self.collectAndPreview(granted, title: "Granted")
        let plainPID = try #require(Self.notePID(plain))
        let grantedPID = try #require(Self.notePID(granted))
        #expect(plainPID != grantedPID)
        // Closing one group's only session stops its worker, not the other's.
        await plain.close()
        #expect(await Self.exits(plainPID))
        #expect(kill(grantedPID, 0) == 0)
        _ = try await Self.collectAndPreview(granted, title: "Still here")
        await granted.close()
        #expect(await Self.exits(grantedPID))
    }

    @Test("a manifest change is announced to every session of the group, each with its own list")
    func providersChangedReachesEverySession() async throws {
        try BuildProducts.checkBuilt()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-core-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["note.yaml", "fixture.yaml"] {
            try FileManager.default.copyItem(atPath: EmbeddingTests.relaxedManifests + "/" + name, toPath: folder + "/" + name)
        }
        let core = try Self.core(manifests: folder)
        let sessions = [InProcessHost(core: core), InProcessHost(core: core)]
        let removed = RemovedIDs()
        for (index, session) in sessions.enumerated() {
            let events = session.events()
            Task {
                for await event in events {
                    if case .providersChanged(let changed) = event {
                        removed.ids.withLock { $0[index] = changed.removed }
                        return
                    }
                }
            }
            _ = try await session.initialize(InitializeRequest(clientInfo: .init(name: "watcher")))
            #expect(try await session.providers().contains { $0.id == "com.contexthost.fixture" })
        }
        try FileManager.default.removeItem(atPath: folder + "/fixture.yaml")
        let changes = sessions[0].host.group.reloadManifests()
        #expect(changes.removed == ["com.contexthost.fixture"])
        // Sent before `reloadManifests` returned; delivered through each session's output channel.
        for _ in 0..<1000 where removed.ids.withLock({ $0.count }) < sessions.count {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(removed.ids.withLock { $0 } == [0: ["com.contexthost.fixture"], 1: ["com.contexthost.fixture"]])
        for session in sessions {
            #expect(try await session.providers().contains { $0.id == "com.contexthost.fixture" } == false)
            await session.close()
        }
    }
}

/// The `removed` ids of the `providers/changed` each session got, by session.
final class RemovedIDs: Sendable {
    let ids = Mutex<[Int: [String]]>([:])
}

/// `InProcessHost` makes a request's in-process provider calls on the caller's thread
/// (`InlineCalls`): no hand-off to the provider's call thread and back.
@Suite("Inline provider calls")
struct InlineCallTests {
    /// The benchmark's ~1 KB note (Benchmarks/requests/preview-note.jsonl).
    static func noteItem() throws -> ContextItem {
        let line = try String(contentsOfFile: BuildProducts.packageRoot + "/Benchmarks/requests/preview-note.jsonl", encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""
        return try ContextItem(json: try JSONValue(parsing: Array(line.utf8))["params"]?["item"] ?? .null)
    }

    @Test("typed previews of an in-process provider are not queued on its call thread; the JSON path's are")
    func typedPreviewIsInline() async throws {
        try BuildProducts.checkBuilt()
        var configuration = HostConfiguration(
            manifestDirectories: [EmbeddingTests.relaxedManifests], libraryDirectories: [BuildProducts.directory])
        configuration.watchManifests = false
        configuration.isolation.policy = .inProcess
        let host = try InProcessHost(configuration: configuration)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "inline")))
        _ = try await host.providers()  // (waits for the loads)
        let connection = try #require(host.host.registry.entry(id: HostCoreTests.note)?.connection as? InProcessConnection)
        let item = try Self.noteItem()
        // One first: while anything waits for the loads (the list's own answer may still be
        // leaving `whenLoaded`), a request queues behind it and its call goes to the call thread.
        _ = try await host.preview(item)
        let before = connection.queuedCallCount
        for _ in 0..<20 {
            #expect(try await host.preview(item).title == item.displayName)
        }
        #expect(connection.queuedCallCount == before, "typed previews were queued on the call thread")
        // Control: the same previews as JSON-RPC messages (the wire's path) are queued.
        for _ in 0..<20 {
            let chip = try await host.call(method: ItemsPreviewRequest.method, params: ["item": item.json])
            #expect(chip["title"]?.stringValue == item.displayName)
        }
        #expect(connection.queuedCallCount == before + 20)
        await host.close()
    }
}
