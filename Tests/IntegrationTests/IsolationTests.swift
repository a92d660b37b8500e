import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Process isolation and supervision (issue 4): every misbehaving fixture provider, seen by a client.
///
/// Each test runs a host with the bundled Note provider (in-process, from `manifests/`) next to the
/// fixtures in `Tests/Fixtures/manifests-isolated/` (workers): the C provider
/// `com.contexthost.misbehaving` (Tests/Fixtures/FixtureMisbehavingProvider) and the Swift fixture
/// as `com.contexthost.fixture.isolated`. For each misbehaviour the client gets the documented
/// error, Note keeps answering, and the worker is restarted or the provider quarantined.
@Suite("Process isolation and supervision", .serialized)
struct IsolationTests {
    static let isolatedManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated"
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"
    static let misbehaving = "com.contexthost.misbehaving"
    static let swiftFixture = "com.contexthost.fixture.isolated"
    static let note = "com.contexthost.note"

    private func client(_ extra: [String] = [], bundled: String = Self.bundledManifests) throws -> RPCClient {
        let client = try RPCClient(arguments: ["--manifests", bundled, "--manifests", Self.isolatedManifests] + extra)
        try client.initialize()
        return client
    }

    private func item(_ providerID: String, _ content: JSONValue) -> JSONValue {
        [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(providerID), "type": "fixture",
            "displayName": "Fixture", "content": content,
        ]
    }

    private func noteItem() -> JSONValue {
        [
            "id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "providerId": .string(Self.note), "type": "note",
            "displayName": "Groceries", "content": ["title": "Groceries", "body": "- milk\n- eggs", "wordCount": 2],
        ]
    }

    /// Attaches a Note item to a new composer (another provider's item that must survive).
    private func attachNote(_ client: RPCClient) throws -> (composer: JSONValue, item: JSONValue) {
        let composer = try #require(try client.call("composer/open")["composerId"])
        let start = try client.call("collect/start", ["providerId": .string(Self.note), "composerId": composer])
        let submitted = try client.call(
            "collect/submit", ["sessionId": start["sessionId"] ?? .null, "values": ["title": "Keep me", "body": "safe and sound"]])
        return (composer, try #require(submitted["item"]))
    }

    /// The composer still holds the Note item, with its chip.
    private func expectComposerIntact(
        _ client: RPCClient, _ draft: (composer: JSONValue, item: JSONValue), sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let listing = try client.call("composer/list", ["composerId": draft.composer])
        let items = listing["items"]?.arrayValue ?? []
        #expect(items.count == 1, sourceLocation: sourceLocation)
        #expect(items.first?["item"] == draft.item, sourceLocation: sourceLocation)
        #expect(items.first?["chip"]?["title"] == "Keep me", sourceLocation: sourceLocation)
    }

    /// The other provider keeps answering.
    private func expectNoteAnswers(_ client: RPCClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let chip = try client.call("items/preview", ["item": noteItem()])
        #expect(chip["title"] == "Groceries", sourceLocation: sourceLocation)
    }

    private func entry(_ client: RPCClient, _ id: String) throws -> JSONValue {
        let list = try client.call("providers/list")
        return try #require(list["providers"]?.arrayValue?.first { $0["id"] == .string(id) })
    }

    private func workerPID(_ client: RPCClient, _ id: String) throws -> Int32? {
        try entry(client, id)["workerPid"]?.intValue.map(Int32.init)
    }

    /// Starts the provider's worker with a request that needs it (workers start on first use,
    /// issue 28), waits for the `providers/changed` its first availability check sends (so no
    /// check is in flight afterwards), and returns the worker's pid.
    private func startWorker(_ client: RPCClient, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int32 {
        #expect(try workerPID(client, id) == nil, "a worker ran before any request needed it", sourceLocation: sourceLocation)
        let answer = try client.call("items/detail", ["item": item(id, id == Self.misbehaving ? ["misbehave": "none"] : [:])])
        #expect(answer["title"] != nil, sourceLocation: sourceLocation)
        let changed = try client.nextNotification(method: "providers/changed")
        #expect(changed["params"]?["changed"] == [.string(id)], sourceLocation: sourceLocation)
        let listed = changed["params"]?["providers"]?.arrayValue?.first { $0["id"] == .string(id) }
        #expect(listed?["availabilityState"] == "current", sourceLocation: sourceLocation)
        return try #require(try workerPID(client, id), sourceLocation: sourceLocation)
    }

    /// Waits until the provider runs in a worker other than `previous`, and returns its pid.
    private func waitForRestart(_ client: RPCClient, _ id: String, previous: Int32?, timeout: Double = 10) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let pid = try workerPID(client, id), pid != previous { return pid }
            usleep(20_000)
        }
        throw NotRestarted(description: "\(id) was not restarted within \(timeout) s. stderr:\n\(client.host.standardError)")
    }

    struct NotRestarted: Error, CustomStringConvertible {
        var description: String
    }

    /// A normal call through the worker succeeds (item/detail: 5 s timeout, so a restart can finish).
    private func expectMisbehavingAnswers(_ client: RPCClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let chip = try client.call("items/detail", ["item": item(Self.misbehaving, ["misbehave": "none"])])
        #expect(chip["title"] == "ok", sourceLocation: sourceLocation)
    }

    private static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // A zombie waiting for its new parent to reap it is gone too.
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    // MARK: Workers

    @Test("process-isolated providers run in workers; the host policy can force either mode")
    func policy() throws {
        var client = try self.client()
        var misbehaving = try entry(client, Self.misbehaving)
        #expect(misbehaving["effectiveIsolation"] == "process")
        #expect(misbehaving["status"] == "loaded")
        #expect(misbehaving["worker"] == "stopped")
        let pid = try startWorker(client, Self.misbehaving)
        #expect(Int32(pid) != client.host.process.processIdentifier)
        #expect(try entry(client, Self.note)["effectiveIsolation"] == "in-process")
        #expect(try entry(client, Self.note)["workerPid"] == nil)
        try expectMisbehavingAnswers(client)
        try expectNoteAnswers(client)
        client.host.terminate()

        // Note's first preview starts its worker within the preview's timeout: 10 s here, not 500 ms.
        client = try self.client(["--isolation", "process"], bundled: RelaxedManifests.folder(copying: RelaxedManifests.bundled))
        let note = try entry(client, Self.note)
        #expect(note["isolation"] == "in-process")
        #expect(note["effectiveIsolation"] == "process")
        #expect(note["workerPid"] == nil)
        try expectNoteAnswers(client)
        #expect(try workerPID(client, Self.note) != nil)
        client.host.terminate()

        client = try self.client(["--isolation", "in-process"])
        misbehaving = try entry(client, Self.misbehaving)
        #expect(misbehaving["effectiveIsolation"] == "in-process")
        #expect(misbehaving["workerPid"] == nil)
        try expectMisbehavingAnswers(client)
        client.host.terminate()
    }

    // MARK: Crashes

    struct Crash: Sendable, CustomTestStringConvertible {
        var provider: String
        var content: JSONValue
        var what: String
        var signal: String?
        var exitCode: Int?
        var stderrLine: String?
        var testDescription: String { "\(provider) \(content)" }
    }

    static let crashes: [Crash] = [
        Crash(provider: misbehaving, content: ["misbehave": "segv"], what: "crashed (SIGSEGV)", signal: "SIGSEGV", stderrLine: "misbehaving: about to dereference NULL"),
        Crash(provider: misbehaving, content: ["misbehave": "abort"], what: "crashed (SIGABRT)", signal: "SIGABRT", stderrLine: "misbehaving: aborting on purpose"),
        Crash(provider: misbehaving, content: ["misbehave": "exit"], what: "crashed (exit code 3)", exitCode: 3, stderrLine: "misbehaving: exiting with status 3"),
        Crash(provider: swiftFixture, content: ["fatal": "fixture gave up"], what: "crashed (SIG", stderrLine: "fixture gave up"),
        Crash(provider: swiftFixture, content: ["crash": true], what: "crashed (SIGABRT)", signal: "SIGABRT", stderrLine: nil),
    ]

    @Test("a crash answers -32016 with the signal and stderr, others keep answering, the worker restarts", arguments: crashes)
    func crashIsReportedAndRestarted(_ crash: Crash) throws {
        let client = try self.client()
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let before = try startWorker(client, crash.provider)
        let error = try client.callExpectingError("items/detail", ["item": item(crash.provider, crash.content)])
        #expect(error["code"] == -32016)
        let message = try #require(error["message"]?.stringValue)
        #expect(message.hasPrefix("Provider '\(crash.provider)' \(crash.what)"), "\(message)")
        #expect(message.contains("while handling item/detail; its worker is being restarted."), "\(message)")
        let data = try #require(error["data"])
        #expect(data["providerId"] == .string(crash.provider))
        #expect(data["method"] == "item/detail")
        #expect(data["cause"] == "crash")
        #expect(data["restarting"] == true)
        #expect(data["quarantined"] == false)
        if let signal = crash.signal { #expect(data["signal"] == .string(signal)) }
        if crash.provider == Self.swiftFixture, crash.signal == nil {
            // fatalError traps: SIGILL on x86_64, SIGTRAP on arm64.
            #expect(["SIGILL", "SIGTRAP"].contains(data["signal"]?.stringValue ?? ""), "\(data)")
        }
        if let exitCode = crash.exitCode { #expect(data["exitCode"]?.intValue == exitCode) }
        let tail = try #require(data["stderrTail"]?.arrayValue).compactMap(\.stringValue)
        if let line = crash.stderrLine { #expect(tail.contains { $0.contains(line) }, "\(tail)") }

        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        let after = try waitForRestart(client, crash.provider, previous: before)
        #expect(!Self.isAlive(before))
        #expect(after != before)
        let restarted = try entry(client, crash.provider)
        #expect(restarted["status"] == "loaded")
        #expect(restarted["restarts"] == 1)
        #expect(restarted["lastCrash"]?.stringValue?.contains("in item/detail") == true)
        let answer = try client.call("items/detail", ["item": item(crash.provider, [:])])
        #expect(answer["title"] != nil)
    }

    @Test("three crashes in five minutes quarantine the provider; providers/retry brings it back")
    func quarantineAndRetry() throws {
        let client = try self.client()
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        var previous: Int32? = try startWorker(client, Self.misbehaving)
        for round in 1...3 {
            let error = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "segv"])])
            #expect(error["code"] == -32016)
            if round < 3 {
                #expect(error["data"]?["restarting"] == true)
                previous = try waitForRestart(client, Self.misbehaving, previous: previous)
            } else {
                #expect(error["data"]?["quarantined"] == true)
                #expect(error["message"]?.stringValue?.hasSuffix("it is now quarantined; call providers/retry to try again.") == true)
            }
        }
        // The client is told, and the list shows why.
        let changed = try client.nextNotification(method: "providers/changed")
        #expect(changed["params"]?["changed"] == [.string(Self.misbehaving)])
        let listed = try #require(changed["params"]?["providers"]?.arrayValue?.first { $0["id"] == .string(Self.misbehaving) })
        #expect(listed["status"] == "quarantined")
        let quarantined = try entry(client, Self.misbehaving)
        #expect(quarantined["status"] == "quarantined")
        #expect(quarantined["available"] == false)
        #expect(quarantined["workerPid"] == nil)
        #expect(quarantined["unavailableReason"]?["code"] == "quarantined")
        #expect(
            quarantined["unavailableReason"]?["message"]
                == "It crashed 3 times in 5 minutes (last: SIGSEGV in item/detail) and is quarantined; call providers/retry to try again.")
        // Calls fail fast; other providers are fine.
        let refused = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, [:])])
        #expect(refused["code"] == -32011)
        #expect(refused["data"]?["reason"]?["code"] == "quarantined")
        #expect(refused["message"]?.stringValue?.hasPrefix("Provider '\(Self.misbehaving)' is unavailable: It crashed 3 times") == true)
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)

        // Retry.
        let retried = try client.call("providers/retry", ["providerId": .string(Self.misbehaving)])
        #expect(retried["provider"]?["status"] == "loaded")
        #expect(retried["provider"]?["available"] == true)
        #expect(retried["provider"]?["workerPid"]?.intValue != nil)
        let recovered = try client.nextNotification(method: "providers/changed")
        #expect(recovered["params"]?["changed"] == [.string(Self.misbehaving)])
        try expectMisbehavingAnswers(client)
        // The crash history was forgotten: one more crash restarts instead of quarantining.
        let again = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "segv"])])
        #expect(again["data"]?["restarting"] == true)
    }

    @Test("providers/retry on a provider that is not quarantined")
    func retryNotQuarantined() throws {
        let client = try self.client()
        defer { client.host.terminate() }
        // Loaded: nothing to do, answers its description.
        let loaded = try client.call("providers/retry", ["providerId": .string(Self.misbehaving)])
        #expect(loaded["provider"]?["status"] == "loaded")
        let unknown = try client.callExpectingError("providers/retry", ["providerId": "com.example.nope"])
        #expect(unknown["code"] == -32010)
        let missing = try client.callExpectingError("providers/retry", [:])
        #expect(missing["code"] == -32602)
    }

    // MARK: Hangs and slowness

    @Test("a provider that hangs inside call times out, and its worker is killed and restarted")
    func hangInsideCall() throws {
        let client = try self.client()
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let before = try startWorker(client, Self.misbehaving)
        let hanging = client.send("items/preview", ["item": item(Self.misbehaving, ["misbehave": "hang"])])
        // Sent behind the hung call (the worker never reads it): lost when the worker is killed.
        let behind = client.send("items/detail", ["item": item(Self.misbehaving, [:])])
        let timedOut = try client.response(to: hanging)["error"]
        #expect(timedOut?["code"] == -32015)
        #expect(timedOut?["message"] == .string("Provider '\(Self.misbehaving)' did not answer item/preview within 300 ms."))
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        let lost = try client.response(to: behind)["error"]
        #expect(lost?["code"] == -32016)
        #expect(lost?["data"]?["cause"] == "hung")
        #expect(lost?["data"]?["signal"] == "SIGKILL")
        #expect(
            lost?["message"]
                == .string("Provider '\(Self.misbehaving)' was killed after item/preview timed out and did not stop within 1000 ms, losing this item/detail request; its worker is being restarted."))
        let after = try waitForRestart(client, Self.misbehaving, previous: before)
        #expect(after != before)
        #expect(!Self.isAlive(before))
        #expect(try entry(client, Self.misbehaving)["lastCrash"] == "killed after item/preview timed out and did not stop")
        try expectMisbehavingAnswers(client)
    }

    @Test("in-process, a provider stuck inside call holds up only its own requests: they time out, the rest of the host answers")
    func hangInsideCallInProcess() throws {
        let client = try self.client(["--isolation", "in-process"])
        defer { client.host.terminate() }
        let hanging = client.send("items/preview", ["item": item(Self.misbehaving, ["misbehave": "hang"])])
        let behind = client.send("items/describe", ["item": item(Self.misbehaving, [:])])
        // While its call thread is stuck, the reader and the other providers go on.
        try expectNoteAnswers(client)
        #expect(try client.call("ping") == [:])
        let timedOut = try client.response(to: hanging)["error"]
        #expect(timedOut?["code"] == -32015)
        #expect(timedOut?["message"] == .string("Provider '\(Self.misbehaving)' did not answer item/preview within 300 ms."))
        let queued = try client.response(to: behind)["error"]
        #expect(queued?["code"] == -32015)
        try expectNoteAnswers(client)
    }

    @Test("a provider slower than its timeout gets -32015, and a worker that ignores the cancel is restarted")
    func slowBeyondTimeout() throws {
        let client = try self.client(["--cancel-grace", "500"])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let before = try startWorker(client, Self.misbehaving)
        let error = try client.callExpectingError("items/preview", ["item": item(Self.misbehaving, ["misbehave": "slow", "slowMs": 3000])])
        #expect(error["code"] == -32015)
        #expect(error["data"]?["timeoutMs"] == 300)
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        _ = try waitForRestart(client, Self.misbehaving, previous: before)
        try expectMisbehavingAnswers(client)

        // A Swift provider honours the cancel (-32800 from the SDK): its worker is left alone.
        let swiftBefore = try startWorker(client, Self.swiftFixture)
        let swiftError = try client.callExpectingError("items/preview", ["item": item(Self.swiftFixture, ["hang": true])])
        #expect(swiftError["code"] == -32015)
        usleep(900_000)
        #expect(try workerPID(client, Self.swiftFixture) == swiftBefore)
        #expect(try entry(client, Self.swiftFixture)["restarts"] == 0)
    }

    @Test("manifest timeouts are capped by --max-call-timeout")
    func timeoutCap() throws {
        let client = try self.client(["--max-call-timeout", "0.1"])
        defer { client.host.terminate() }
        let error = try client.callExpectingError("items/detail", ["item": item(Self.swiftFixture, ["delayMs": 1000])])
        #expect(error["code"] == -32015)
        #expect(error["message"] == .string("Provider '\(Self.swiftFixture)' did not answer item/detail within 100 ms."))
    }

    @Test("client cancellation reaches the worker; the request answers -32800")
    func cancellation() throws {
        let client = try self.client()
        defer { client.host.terminate() }
        let hanging = client.send("items/detail", ["item": item(Self.swiftFixture, ["hang": true])])
        usleep(50_000)
        client.notify("$/cancelRequest", ["id": hanging])
        let response = try client.response(to: hanging)
        #expect(response["error"]?["code"] == -32800)
        let answer = try client.call("items/detail", ["item": item(Self.swiftFixture, [:])])
        #expect(answer["title"] != nil)
        #expect(try entry(client, Self.swiftFixture)["restarts"] == 0)
    }

    // MARK: Bad output (both isolation modes)

    static let isolationModes = ["manifest", "in-process"]

    @Test("garbage bytes answer -32014; the protocol stream stays clean", arguments: isolationModes)
    func garbage(_ isolation: String) throws {
        let client = try self.client(["--isolation", isolation])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let pid = isolation == "manifest" ? try startWorker(client, Self.misbehaving) : nil
        let error = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "garbage"])])
        #expect(error["code"] == -32014)
        let message = try #require(error["message"]?.stringValue)
        #expect(message.hasPrefix("Provider '\(Self.misbehaving)' sent a bad reply to item/detail: its reply is not valid JSON"), "\(message)")
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        try expectMisbehavingAnswers(client)
        #expect(try workerPID(client, Self.misbehaving) == pid)  // not a crash: same worker
    }

    @Test("a reply with the wrong id answers -32014", arguments: isolationModes)
    func wrongID(_ isolation: String) throws {
        let client = try self.client(["--isolation", isolation])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let error = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "wrong-id"])])
        #expect(error["code"] == -32014)
        let message = try #require(error["message"]?.stringValue)
        #expect(message.contains("sent a bad reply to item/detail: its reply carries id "), "\(message)")
        #expect(message.contains(", but answers request "), "\(message)")
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        try expectMisbehavingAnswers(client)
    }

    @Test("an item with another provider's id is refused with -32014", arguments: isolationModes)
    func wrongProviderID(_ isolation: String) throws {
        let client = try self.client(["--isolation", isolation])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let start = try client.call("collect/start", ["providerId": .string(Self.swiftFixture)])
        let session = try #require(start["sessionId"])
        let error = try client.callExpectingError(
            "collect/submit", ["sessionId": session, "stepId": "fixture", "values": ["text": "wrong-provider-id"]])
        #expect(error["code"] == -32014)
        #expect(
            error["message"]
                == .string("Provider '\(Self.swiftFixture)' produced an item whose providerId is 'com.example.someone-else'; it must be its own id."))
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
    }

    @Test("a provider writing to stdout cannot corrupt the protocol", arguments: isolationModes)
    func writesToStdout(_ isolation: String) throws {
        let client = try self.client(["--isolation", isolation, "--log-level", "debug"])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        // The fake response line the provider writes to fd 1 would be read as the answer to id 1
        // if it reached the protocol; RPCClient would also fail on it if it were mixed in.
        let chip = try client.call("items/detail", ["item": item(Self.misbehaving, ["misbehave": "stdout"])])
        #expect(chip["subtitle"] == "stdout")
        #expect(try client.call("ping") == [:])
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        let deadline = Date().addingTimeInterval(5)
        while !client.host.standardError.contains("INJECTED-BY-PROVIDER"), Date() < deadline { usleep(10_000) }
        #expect(client.host.standardError.contains("INJECTED-BY-PROVIDER"))
        #expect(!client.received.contains { $0["result"] == "INJECTED-BY-PROVIDER" })
    }

    @Test("a reply larger than the message limit answers -32014", arguments: isolationModes)
    func hugeOutput(_ isolation: String) throws {
        let client = try self.client(["--isolation", isolation])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let pid = isolation == "manifest" ? try startWorker(client, Self.misbehaving) : nil
        let error = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "huge", "hugeMB": 20])])
        #expect(error["code"] == -32014)
        let message = try #require(error["message"]?.stringValue)
        #expect(message.contains("exceeds the host's limit of 16777216 bytes"), "\(message)")
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        try expectMisbehavingAnswers(client)
        #expect(try workerPID(client, Self.misbehaving) == pid)
        // Under the limit, a big reply goes through.
        let big = try client.call("items/detail", ["item": item(Self.misbehaving, ["misbehave": "huge", "hugeMB": 2])])
        #expect(big["title"]?.stringValue?.utf8.count == 2 << 20)
    }

    @Test("a worker that leaks past its memory cap crashes and is restarted")
    func leak() throws {
        let client = try self.client(["--worker-memory-limit", "256"])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        let before = try startWorker(client, Self.misbehaving)
        var crash: JSONValue?
        for _ in 0..<6 {
            let response = try client.response(to: client.send("items/detail", ["item": item(Self.misbehaving, ["misbehave": "leak", "leakMB": 64])]))
            if let error = response["error"] {
                crash = error
                break
            }
            #expect(response["result"]?["subtitle"]?.stringValue?.hasPrefix("leaked ") == true)
        }
        let error = try #require(crash)
        #expect(error["code"] == -32016)
        #expect(error["data"]?["signal"] == "SIGABRT")
        let tail = error["data"]?["stderrTail"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(tail.contains { $0.contains("misbehaving: out of memory after leaking") }, "\(tail)")
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
        _ = try waitForRestart(client, Self.misbehaving, previous: before)
        let fresh = try client.call("items/detail", ["item": item(Self.misbehaving, ["misbehave": "leak", "leakMB": 64])])
        #expect(fresh["subtitle"] == "leaked 64 MiB")
    }

    @Test("an in-process provider that leaks a little does not stop the host (no cap in-process)")
    func leakInProcess() throws {
        let client = try self.client(["--isolation", "in-process"])
        defer { client.host.terminate() }
        let draft = try attachNote(client)
        for round in 1...3 {
            let chip = try client.call("items/detail", ["item": item(Self.misbehaving, ["misbehave": "leak", "leakMB": 4])])
            #expect(chip["subtitle"] == .string("leaked \(4 * round) MiB"))
        }
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)
    }

    // MARK: Loading

    @Test("a provider that aborts while its worker starts: the request that started it gets the error, counted once; the host serves the others")
    func abortDuringLoad() throws {
        let directory = try TemporaryDirectory(
            writing: "abort.yaml",
            TestManifest.yaml(
                id: "com.contexthost.misbehaving.abort-on-open", library: "libFixtureMisbehavingProvider.so", isolation: "process",
                collection: "programmatic", extra: "settings:\n  mode: { type: string, default: abort-on-open }"))
        let client = try RPCClient(arguments: ["--manifests", Self.bundledManifests, "--manifests", directory.path, "--library-path", BuildProducts.directory])
        defer { client.host.terminate() }
        try client.initialize()
        let draft = try attachNote(client)
        // Workers start on first use (issue 28): listed before any worker ran.
        let listed = try entry(client, "com.contexthost.misbehaving.abort-on-open")
        #expect(listed["status"] == "loaded")
        #expect(listed["worker"] == "stopped")
        let error = try client.callExpectingError("items/detail", ["item": item("com.contexthost.misbehaving.abort-on-open", [:])])
        #expect(error["code"] == -32016)
        #expect(error["data"]?["cause"] == "start")
        #expect(error["data"]?["code"] == "worker-crashed-on-load")
        let message = try #require(error["message"]?.stringValue)
        #expect(message.contains("(SIGABRT)"), "\(message)")
        #expect(message.contains("misbehaving: aborting during open on purpose"), "\(message)")
        let failed = try entry(client, "com.contexthost.misbehaving.abort-on-open")
        #expect(failed["crashes"] == 1)
        #expect(failed["restarts"] == 0)
        #expect(failed["lastCrash"]?.stringValue?.contains("failed to start") == true, "\(failed)")
        try expectNoteAnswers(client)
        try expectComposerIntact(client, draft)

        // `list` reports the same error and exits 1.
        let result = try CommandRunner.run(["list", "--manifests", directory.path, "--library-path", BuildProducts.directory])
        #expect(result.status == 1)
        #expect(result.standardOutput.contains("[worker-crashed-on-load]"))
    }

    // MARK: Lifetime

    @Test("killing the host kills its workers")
    func hostDeathKillsWorkers() throws {
        let client = try self.client()
        let pids = try [Self.misbehaving, Self.swiftFixture].map { try startWorker(client, $0) }
        for pid in pids { #expect(Self.isAlive(pid)) }
        kill(client.host.process.processIdentifier, SIGKILL)
        _ = client.host.waitForExit(timeout: 5)
        let deadline = Date().addingTimeInterval(5)
        while pids.contains(where: Self.isAlive), Date() < deadline { usleep(10_000) }
        for pid in pids { #expect(!Self.isAlive(pid), "worker \(pid) outlived its host") }
    }

    @Test("a worker exits when its stdin closes")
    func workerExitsOnEOF() throws {
        let worker = try DirectWorker(["--library", BuildProducts.library("FixtureMisbehavingProvider")])
        let process = worker.process
        defer { ChildProcess.stop(process) }
        worker.send(tag: 0, #"{"ctxpVersion":1,"providerId":"com.contexthost.misbehaving","hostVersion":"0.1.0","locale":"en-US","settings":{},"grantedPermissions":[]}"#)
        let (openTag, opened) = try #require(worker.receive())
        #expect(openTag == 0)
        #expect(opened == #"{"ok":true}"#)
        worker.send(tag: 7, #"{"jsonrpc":"2.0","id":7,"method":"item/describe","params":{}}"#)
        let (tag, reply) = try #require(worker.receive())
        #expect(tag == 7)
        #expect(reply == #"{"jsonrpc":"2.0","id":7,"result":{"text":"ok"}}"#)
        try worker.closeInput()
        #expect(ChildProcess.waitForExit(process, timeout: 5))
        #expect(process.terminationStatus == 0)
    }

    @Test("serving parses its options alone, and anything else still goes through the root parser: help, version, subcommands, errors")
    func serveCommandLine() throws {
        // Served (stdin closed at once: the host exits 0), with and without the subcommand's name.
        for arguments in [["--manifests", "/nowhere", "--no-state"], ["serve", "--no-state", "--manifests", "/nowhere"]] {
            let served = try CommandRunner.run(arguments)
            #expect(served.status == 0, "\(arguments): \(served.standardError)")
        }
        let unknown = try CommandRunner.run(["--no-state", "--bogus"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.contains("Unknown option '--bogus'"))
        #expect(unknown.standardError.contains("context-host serve"))
        let badValue = try CommandRunner.run(["--max-message-bytes", "x"])
        #expect(badValue.status == 64)
        #expect(badValue.standardError.contains("--max-message-bytes"))
        let help = try CommandRunner.run(["--help"])
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("SUBCOMMANDS"))
        let version = try CommandRunner.run(["--version"])
        #expect(version.status == 0)
        #expect(version.standardOutput.split(separator: ".").count == 3)
        let validate = try CommandRunner.run(["validate", "/nowhere/none.yaml"])
        #expect(validate.status != 0)
        #expect(!validate.standardError.contains("Unknown option"))
    }

    @Test("a worker command line the host did not write goes through the full parser and its errors")
    func workerCommandLineErrors() throws {
        let unknown = try CommandRunner.run(["worker", "--library", "/nowhere/lib.so", "--bogus", "1"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.contains("Unknown option '--bogus'"))
        let missing = try CommandRunner.run(["worker", "--library"])
        #expect(missing.status == 64)
        #expect(missing.standardError.contains("Missing value for '--library <path>'"))
        let badPID = try CommandRunner.run(["worker", "--library", "/nowhere/lib.so", "--parent-pid", "x"])
        #expect(badPID.status == 64)
        #expect(badPID.standardError.contains("--parent-pid"))
        let help = try CommandRunner.run(["worker", "--help"])
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("Run one provider library for a host"))
    }
}
