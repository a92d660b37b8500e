import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Lazy, idle-stopped workers and the metadata cache (issue 28, docs/security.md §3–§4,
/// docs/protocol.md "providers/list"): no worker runs until a request needs its provider, an idle
/// worker exits and comes back on the next request, and `providers/list` answers from manifests
/// and the metadata cache.
@Suite("Lazy workers", .serialized)
struct LazyWorkerTests {
    static let fixture = "com.contexthost.fixture"
    static let misbehaving = "com.contexthost.misbehaving"

    /// The fixture's timeouts with a preview long enough for a cold worker start on a loaded
    /// debug build (the first request to a lazy worker waits for the start within its timeout).
    static let roomyTimeouts = "{ collect: 30s, preview: 10s, detail: 2s, encode: 1s }"

    /// A folder with the Swift fixture's manifest in a worker.
    private func fixtureManifests(library: String = "libFixtureProviders.so") throws -> TemporaryDirectory {
        try TemporaryDirectory(writing: "fixture.yaml", TestManifest.yaml(id: Self.fixture, library: library, isolation: "process", timeouts: Self.roomyTimeouts))
    }

    /// A folder with the C misbehaving fixture's manifest in a worker.
    private func misbehavingManifests(timeouts: String, extra: String = "") throws -> TemporaryDirectory {
        try TemporaryDirectory(
            writing: "misbehaving.yaml",
            TestManifest.yaml(
                id: Self.misbehaving, library: "libFixtureMisbehavingProvider.so", isolation: "process", extra: extra, timeouts: timeouts))
    }

    /// A folder with `count` copies of the Note manifest in workers, `com.contexthost.note-copy-0`…,
    /// with 10 s previews (a cold request waits for the starts queued before it within its timeout).
    private func noteCopies(_ count: Int) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let note = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/note.yaml", encoding: .utf8)
        for index in 0..<count {
            let yaml = note
                .replacingOccurrences(of: "id: com.contexthost.note", with: "id: com.contexthost.note-copy-\(index)")
                .replacingOccurrences(of: "isolation: in-process", with: "isolation: process")
                .replacingOccurrences(of: "preview: 500ms", with: "preview: 10s")
            try directory.write("note-\(index).yaml", yaml)
        }
        return directory
    }

    private func host(_ manifests: TemporaryDirectory, _ extra: [String] = []) throws -> RPCClient {
        let client = try RPCClient(arguments: ["--manifests", manifests.path, "--library-path", BuildProducts.directory, "--no-watch"] + extra)
        try client.initialize()
        return client
    }

    private func fixtureItem(_ providerID: String = LazyWorkerTests.fixture) -> JSONValue {
        [
            "id": "5d0c8a52-0d0e-4d83-a7b7-4a2f4e1f0b61", "providerId": .string(providerID), "type": "fixture",
            "displayName": "Fixture", "content": [:],
        ]
    }

    private func noteItem(_ providerID: String) -> JSONValue {
        [
            "id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "providerId": .string(providerID), "type": "note",
            "displayName": "Groceries", "content": ["title": "Groceries", "body": "- milk\n- eggs", "wordCount": 2],
        ]
    }

    private func entry(_ client: RPCClient, _ id: String) throws -> JSONValue {
        let providers = try client.call("providers/list")["providers"]?.arrayValue ?? []
        return try #require(providers.first { $0["id"] == .string(id) })
    }

    /// The live (not zombie) child processes of the host, read from /proc.
    static func children(of host: HostProcess) -> [Int32] {
        let parent = host.process.processIdentifier
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> Int32? in
            guard let pid = Int32(name),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == parent, fields[0] != "Z" else { return nil }
            return pid
        }
    }

    /// Waits until `condition` holds for the host's children (at most `timeout` seconds).
    @discardableResult
    private func waitForChildren(of host: HostProcess, timeout: Double = 10, _ condition: ([Int32]) -> Bool) -> [Int32] {
        let deadline = Date().addingTimeInterval(timeout)
        var current = Self.children(of: host)
        while !condition(current), Date() < deadline {
            usleep(10_000)
            current = Self.children(of: host)
        }
        return current
    }

    @Test("no worker exists after initialize and providers/list; the first collection starts exactly one")
    func noWorkerUntilFirstRequest() throws {
        let manifests = try fixtureManifests()
        let client = try host(manifests)
        let listed = try entry(client, Self.fixture)
        #expect(listed["status"] == "loaded")
        #expect(listed["available"] == true)
        #expect(listed["worker"] == "stopped")
        #expect(listed["workerPid"] == nil)
        #expect(listed["availabilityState"] == "unchecked")
        usleep(200_000)  // a host that started workers in the background would have one by now
        #expect(Self.children(of: client.host).isEmpty, "a worker started before any request needed it")

        // The first collection starts exactly one worker.
        let made = try client.call("collect/make", ["providerId": .string(Self.fixture)])
        #expect(made["item"]?["content"]?["text"] == "made")
        let workers = Self.children(of: client.host)
        #expect(workers.count == 1, "\(workers)")
        let running = try entry(client, Self.fixture)
        #expect(running["worker"] == "running")
        #expect(running["workerPid"]?.intValue.map(Int32.init) == workers.first)
        // The sandbox report appears once the worker started.
        #expect(running["sandbox"]?["policy"] != nil)
        // Item calls reuse it.
        #expect(try client.call("items/preview", ["item": fixtureItem()])["title"] == "Fixture")
        #expect(Self.children(of: client.host) == workers)
        #expect(try client.shutdown() == 0)
    }

    @Test("an idle worker stops after --worker-idle-timeout, not as a crash, and the next request restarts it")
    func idleStop() throws {
        let manifests = try fixtureManifests()
        // Long enough that a stalled test thread still sees the worker before it goes idle.
        let client = try host(manifests, ["--worker-idle-timeout", "2"])
        _ = try client.call("items/preview", ["item": fixtureItem()])
        let first = Self.children(of: client.host)
        #expect(first.count == 1)
        let after = waitForChildren(of: client.host) { $0.isEmpty }
        #expect(after.isEmpty, "the idle worker did not stop: \(after)")
        // The process is gone before the host has reaped it and read its last stderr: give the
        // state a moment to say so.
        var stopped = try entry(client, Self.fixture)
        for _ in 0..<100 where stopped["worker"] != "stopped" {
            usleep(20_000)
            stopped = try entry(client, Self.fixture)
        }
        #expect(stopped["worker"] == "stopped")
        #expect(stopped["restarts"] == 0)
        #expect(stopped["crashes"] == 0)
        #expect(stopped["lastCrash"] == nil)
        #expect(stopped["status"] == "loaded")

        // Transparent restart: items keep working.
        let chip = try client.call("items/preview", ["item": fixtureItem()])
        #expect(chip["title"] == "Fixture")
        let second = Self.children(of: client.host)
        #expect(second.count == 1)
        #expect(second != first)
        let again = try entry(client, Self.fixture)
        #expect(again["worker"] == "running")
        #expect(again["restarts"] == 0)
        #expect(again["crashes"] == 0)
        #expect(try client.shutdown() == 0)
    }

    @Test("a worker busy with a request is not stopped as idle")
    func busyWorkerIsNotStopped() throws {
        let directory = try misbehavingManifests(timeouts: "{ collect: 2s, preview: 300ms, detail: 5s, encode: 2s }")
        let client = try host(directory, ["--worker-idle-timeout", "0.2"])
        // item/detail answers after 1.2 s (`slow`), well past the idle timeout.
        let detail = try client.call("items/detail", ["item": [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(Self.misbehaving), "type": "fixture",
            "displayName": "Fixture", "content": ["misbehave": "slow", "slowMs": 1200],
        ]])
        #expect(detail["title"] != nil, "\(detail)")
        let listed = try entry(client, Self.misbehaving)
        #expect(listed["crashes"] == 0)
        #expect(listed["restarts"] == 0)
        #expect(try client.shutdown() == 0)
    }

    @Test("a crash while a worker starts is reported to the waiting request and counted once")
    func coldStartCrash() throws {
        let directory = try misbehavingManifests(
            timeouts: "{ collect: 10s, preview: 10s, detail: 10s, encode: 10s }", extra: "settings:\n  mode: { type: string, default: abort-on-open }")
        let client = try host(directory, ["--max-crashes", "2"])
        let listed = try entry(client, Self.misbehaving)
        #expect(listed["status"] == "loaded")
        #expect(listed["worker"] == "stopped")

        let error = try client.callExpectingError("items/preview", ["item": [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(Self.misbehaving), "type": "fixture",
            "displayName": "Fixture", "content": [:],
        ]])
        #expect(error["code"] == -32016, "\(error)")
        #expect(error["data"]?["cause"] == "start")
        #expect(error["data"]?["quarantined"] == false)
        #expect(error["message"]?.stringValue?.contains("aborting during open") == true || error["message"]?.stringValue?.contains("died while loading") == true, "\(error)")
        let once = try entry(client, Self.misbehaving)
        #expect(once["crashes"] == 1, "\(once)")
        #expect(once["restarts"] == 0)
        #expect(once["status"] == "loaded")
        #expect(once["worker"] == "stopped")
        #expect(waitForChildren(of: client.host) { $0.isEmpty }.isEmpty)

        // The second failed start reaches --max-crashes 2: quarantined, and said so.
        let second = try client.callExpectingError("items/preview", ["item": [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(Self.misbehaving), "type": "fixture",
            "displayName": "Fixture", "content": [:],
        ]])
        #expect(second["data"]?["quarantined"] == true, "\(second)")
        let notification = try client.nextNotification(method: "providers/changed")
        #expect(notification["params"]?["changed"] == [.string(Self.misbehaving)])
        let quarantined = try entry(client, Self.misbehaving)
        #expect(quarantined["status"] == "quarantined")
        #expect(quarantined["crashes"] == 2)
        #expect(try client.shutdown() == 0)
    }

    @Test("the metadata cache lists a provider without its worker; a library changed on disk invalidates it and providers/changed follows")
    func metadataCache() throws {
        let manifests = try TemporaryDirectory()
        let library = manifests.path + "/libFixtureProviders.so"
        try FileManager.default.copyItem(atPath: BuildProducts.directory + "/libFixtureProviders.so", toPath: library)
        try manifests.write("fixture.yaml", TestManifest.yaml(id: Self.fixture, library: "libFixtureProviders.so", isolation: "process", timeouts: Self.roomyTimeouts))
        let cache = try TemporaryDirectory()

        // First run: never computed; the first request starts the worker, which checks, and the
        // client hears the change.
        var client = try host(manifests, ["--registry-cache", cache.path])
        #expect(try entry(client, Self.fixture)["availabilityState"] == "unchecked")
        _ = try client.call("items/preview", ["item": fixtureItem()])
        var changed = try client.nextNotification(method: "providers/changed")
        #expect(changed["params"]?["changed"] == [.string(Self.fixture)])
        var listed = try entry(client, Self.fixture)
        #expect(listed["availabilityState"] == "current")
        #expect(listed["available"] == true)
        let files = { (try? FileManager.default.contentsOfDirectory(atPath: cache.path))?.filter { $0.hasPrefix("metadata-") && $0.hasSuffix(".cache") } ?? [] }
        let deadline = Date().addingTimeInterval(5)
        while files().isEmpty, Date() < deadline { usleep(20_000) }
        let file = try #require(files().first)
        let attributes = try FileManager.default.attributesOfItem(atPath: cache.path + "/" + file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try client.shutdown() == 0)

        // Second run: answered from the cache, with no worker.
        client = try host(manifests, ["--registry-cache", cache.path])
        listed = try entry(client, Self.fixture)
        #expect(listed["availabilityState"] == "cached")
        #expect(listed["available"] == true)
        #expect(Self.children(of: client.host).isEmpty)
        // A start whose answers match the cache changes nothing the client sees.
        _ = try client.call("items/preview", ["item": fixtureItem()])
        #expect(throws: (any Error).self) { try client.nextNotification(method: "providers/changed", timeout: 1) }
        #expect(try client.shutdown() == 0)

        // The library changes on disk (a new build, same name): the cached entry no longer holds.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: library))
        bytes.append(0)
        try bytes.write(to: URL(fileURLWithPath: library + ".new"))
        _ = rename(library + ".new", library)
        client = try host(manifests, ["--registry-cache", cache.path])
        #expect(try entry(client, Self.fixture)["availabilityState"] == "unchecked")
        _ = try client.call("items/preview", ["item": fixtureItem()])
        changed = try client.nextNotification(method: "providers/changed")
        #expect(changed["params"]?["changed"] == [.string(Self.fixture)])
        let provider = changed["params"]?["providers"]?.arrayValue?.first { $0["id"] == .string(Self.fixture) }
        #expect(provider?["availabilityState"] == "current")
        #expect(try client.shutdown() == 0)
    }

    @Test("a corrupt metadata cache file is ignored and rebuilt")
    func corruptCache() throws {
        let manifests = try fixtureManifests()
        let cache = try TemporaryDirectory()
        var client = try host(manifests, ["--registry-cache", cache.path])
        _ = try client.call("items/preview", ["item": fixtureItem()])
        _ = try client.nextNotification(method: "providers/changed")
        let files = { (try? FileManager.default.contentsOfDirectory(atPath: cache.path))?.filter { $0.hasPrefix("metadata-") && $0.hasSuffix(".cache") } ?? [] }
        let deadline = Date().addingTimeInterval(5)
        while files().isEmpty, Date() < deadline { usleep(20_000) }
        let file = cache.path + "/" + (try #require(files().first))
        #expect(try client.shutdown() == 0)
        for garbage in [#"{"format":"context-host-provider-metadata","version":1,"host":"0.1.0","entries":[{"id":"x"}]}"#, "\u{0}\u{1}not json", "[]"] {
            try Data(garbage.utf8).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o600)
            client = try host(manifests, ["--registry-cache", cache.path])
            #expect(try entry(client, Self.fixture)["availabilityState"] == "unchecked")
            _ = try client.call("items/preview", ["item": fixtureItem()])
            _ = try client.nextNotification(method: "providers/changed")
            #expect(try client.shutdown() == 0)
        }
    }

    @Test("300 workers-mode copies of the Note manifest list at once, with no worker; one request starts one")
    func threeHundredProviders() throws {
        let directory = try noteCopies(300)
        let started = Date()
        let client = try host(directory)
        let providers = try client.call("providers/list")["providers"]?.arrayValue ?? []
        let elapsed = Date().timeIntervalSince(started)
        #expect(providers.count == 300)
        #expect(providers.allSatisfy { $0["status"] == "loaded" && $0["worker"] == "stopped" && $0["available"] == true }, "\(providers.first ?? .null)")
        #expect(providers.allSatisfy { $0["effectiveIsolation"] == "process" })
        #expect(Self.children(of: client.host).isEmpty)
        // (Budgets are the benchmark's, Benchmarks/lazy-bench.sh; this only catches a host that
        // starts 300 workers before answering.)
        #expect(elapsed < 10, "spawn → providers/list took \(elapsed) s")

        let chip = try client.call("items/preview", ["item": noteItem("com.contexthost.note-copy-7")])
        #expect(chip["title"] == "Groceries")
        #expect(Self.children(of: client.host).count == 1)
        #expect(try client.shutdown() == 0)
    }

    @Test("with --max-worker-starts 1, cold requests to several providers queue and all succeed")
    func boundedStarts() throws {
        let directory = try noteCopies(4)
        let client = try host(directory, ["--max-worker-starts", "1"])
        let ids = (0..<4).map { client.send("items/preview", ["item": noteItem("com.contexthost.note-copy-\($0)")]) }
        for id in ids {
            let response = try client.response(to: id, timeout: 30)
            #expect(response["result"]?["title"] == "Groceries", "\(response)")
        }
        #expect(Self.children(of: client.host).count == 4)
        #expect(try client.shutdown() == 0)
    }

    // MARK: Slow cold starts (the lazy counterparts of BackgroundLoadingTests)

    /// A folder with the fixture's manifest in a worker whose `open` sleeps `openDelayMs`.
    private func slowManifests(openDelayMs: Int, settings: String = "") throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(
            writing: "fixture.yaml",
            TestManifest.yaml(
                id: Self.fixture, library: "libFixtureProviders.so", isolation: "process",
                extra: "settings:\n  openDelayMs: { type: integer, default: \(openDelayMs) }\n\(settings)"))
        return directory
    }

    @Test("a slow cold start: the list answers at once; timeouts count from when requests were sent; longer ones wait and succeed")
    func slowColdStart() throws {
        let client = try host(try slowManifests(openDelayMs: 1500))
        let list = client.send("providers/list")
        let preview = client.send("items/preview", ["item": fixtureItem()])  // 500 ms timeout
        let make = client.send("collect/make", ["providerId": .string(Self.fixture)])  // 30 s
        let ping = client.send("ping")
        let answers = try client.responses(count: 4)
        let order = answers.map { $0["id"] ?? .null }
        #expect(order.firstIndex(of: list)! < order.firstIndex(of: preview)!, "providers/list waited for a worker: \(order)")
        #expect(order.firstIndex(of: ping)! < order.firstIndex(of: make)!, "\(order)")
        let listed = answers.first { $0["id"] == list }?["result"]?["providers"]?.arrayValue?.first
        #expect(listed?["status"] == "loaded")
        #expect(listed?["worker"] == "stopped" || listed?["worker"] == "starting")
        // Waiting for the worker counts towards the request's timeout.
        #expect(answers.first { $0["id"] == preview }?["error"]?["code"] == -32015)
        #expect(answers.first { $0["id"] == make }?["result"]?["item"]?["content"]?["text"] == "made")
        // Once started, short requests are fine.
        #expect(try client.call("items/preview", ["item": fixtureItem()])["title"] == "Fixture")
        #expect(Self.children(of: client.host).count == 1)
        #expect(try client.shutdown() == 0)
    }

    @Test("a provider that fails to open after a slow cold start: the waiting request gets the load error")
    func failureAfterSlowColdStart() throws {
        let client = try host(try slowManifests(
            openDelayMs: 1500, settings: "  failOpen: { type: string, default: \"no database at /nowhere\" }"))
        let error = try client.callExpectingError("collect/make", ["providerId": .string(Self.fixture)])
        #expect(error["code"] == -32012, "\(error)")
        #expect(error["data"]?["code"] == "provider-open-failed")
        #expect(error["message"]?.stringValue?.contains("no database at /nowhere") == true)
        let listed = try entry(client, Self.fixture)
        #expect(listed["crashes"] == 1)
        #expect(listed["worker"] == "stopped")
        #expect(listed["lastCrash"]?.stringValue?.contains("no database at /nowhere") == true, "\(listed)")
        #expect(try client.shutdown() == 0)
    }

    @Test("$/cancelRequest answers a request that waits for its worker at once; the worker still starts")
    func cancelWhileStarting() throws {
        let client = try host(try slowManifests(openDelayMs: 1500))
        let make = client.send("collect/make", ["providerId": .string(Self.fixture)])
        client.notify("$/cancelRequest", ["id": make])
        let ping = client.send("ping")
        let answers = try client.responses(count: 2)
        #expect(answers.map { $0["id"] ?? .null } == [make, ping])
        #expect(answers.first?["error"]?["code"] == -32800)
        let made = try client.call("collect/make", ["providerId": .string(Self.fixture)])
        #expect(made["item"]?["content"]?["text"] == "made")
        #expect(!client.received.contains { $0["id"] == make })
        #expect(try client.shutdown() == 0)
    }

    @Test("shutdown and exit while a worker takes a minute to start: the host exits at once, its worker too")
    func shutdownWhileStarting() throws {
        let client = try host(try slowManifests(openDelayMs: 60_000))
        #expect(Self.children(of: client.host).isEmpty)
        _ = client.send("collect/make", ["providerId": .string(Self.fixture)])
        let workers = waitForChildren(of: client.host) { !$0.isEmpty }
        #expect(workers.count == 1)
        let started = Date()
        _ = try client.call("shutdown")
        client.notify("exit")
        #expect(client.host.waitForExit(timeout: 30) == 0)
        #expect(Date().timeIntervalSince(started) < 9, "exit waited for the worker")
        let deadline = Date().addingTimeInterval(10)
        while workers.contains(where: { kill($0, 0) == 0 && !Self.isZombie($0) }), Date() < deadline { usleep(10_000) }
        #expect(!workers.contains { kill($0, 0) == 0 && !Self.isZombie($0) }, "worker outlived its host")
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[close...].hasPrefix(") Z")
    }
}
