import ContextHost
import ContextHostClient
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Synchronization
import Testing

/// Each host keeps its own limits (issue 36): two in-process hosts in one process, each with
/// in-process providers, apply their own reply limit whatever order they opened in; a request
/// over the limit is refused, never sent, by `InProcessHost` and by `ContextHostClient`, and a
/// request the host discarded unread (answered without an id) never leaves its caller waiting.
@Suite("Per-host limits")
struct HostLimitTests {
    static let misbehaving = "com.contexthost.misbehaving"

    /// The misbehaving C fixture's manifest, in a folder of its own (it answers on the call
    /// thread itself, so no test depends on the cooperative pool).
    static let manifests: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-limits-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated/misbehaving.yaml"
        let text = (try? String(contentsOfFile: source, encoding: .utf8)) ?? ""
        try? text.replacingOccurrences(of: "detail: 5s", with: "detail: 20s")
            .write(toFile: folder + "/misbehaving.yaml", atomically: true, encoding: .utf8)
        return folder
    }()

    /// A host whose providers all run inside this process, with `limit` as its message limit
    /// (fails first when the products it loads are not built).
    static func inProcessHost(limit: Int) throws -> InProcessHost {
        try BuildProducts.checkBuilt()
        var configuration = HostConfiguration(
            manifestDirectories: [manifests], libraryDirectories: [BuildProducts.directory], maximumMessageBytes: limit)
        configuration.isolation.policy = .inProcess
        return try InProcessHost(configuration: configuration)
    }

    /// An item whose detail is a valid document of about `kilobytes` KiB (the fixture's `huge`).
    static func bigDetailItem(kilobytes: Int) -> ContextItem {
        ContextItem(
            providerId: misbehaving, type: "misbehaving", displayName: "big",
            content: ["misbehave": "huge", "hugeKB": .number(Double(kilobytes))])
    }

    static func start(_ host: InProcessHost) async throws {
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "limits-test")))
        let providers = try await host.providers()
        #expect(providers.first { $0.id == misbehaving }?.effectiveIsolation == "in-process")
    }

    /// What `items/detail` of a 24 KiB document gives: its size, or the error code.
    static func detailOutcome(_ host: InProcessHost) async -> Result<Int, ResponseError> {
        do throws(ResponseError) {
            let detail = try await host.detail(bigDetailItem(kilobytes: 24))
            return .success(detail.title.utf8.count)
        } catch {
            return .failure(error)
        }
    }

    @Test("two in-process hosts apply their own reply limits, in either order of opening", arguments: [true, false])
    func twoHostsOwnLimits(largeFirst: Bool) async throws {
        let large: InProcessHost
        let small: InProcessHost
        // The host opened last used to set the one process-wide limit for both.
        if largeFirst {
            large = try Self.inProcessHost(limit: 16 << 20)
            try await Self.start(large)
            small = try Self.inProcessHost(limit: 16 << 10)
            try await Self.start(small)
        } else {
            small = try Self.inProcessHost(limit: 16 << 10)
            try await Self.start(small)
            large = try Self.inProcessHost(limit: 16 << 20)
            try await Self.start(large)
        }
        let answered = await Self.detailOutcome(large)
        #expect((try? answered.get()) == 24 << 10, "the 16 MiB host answers a 24 KiB detail: \(answered)")
        let refused = await Self.detailOutcome(small)
        guard case .failure(let error) = refused else {
            Issue.record("the 16 KiB host passed on a 24 KiB reply")
            return
        }
        #expect(error.code == .providerBadReply)
        #expect(error.message.contains("exceeds the host's limit of 16384 bytes"), "\(error.message)")
        // Closing one leaves the other working, limit and all.
        await small.close()
        #expect((try? await Self.detailOutcome(large).get()) == 24 << 10)
        try await large.ping()
        await large.close()
    }

    @Test("InProcessHost refuses a request over its message limit, and goes on")
    func inProcessRequestLimit() async throws {
        let host = try Self.inProcessHost(limit: 16 << 10)
        try await Self.start(host)
        var item = Self.bigDetailItem(kilobytes: 1)
        item.content = ["misbehave": "none", "padding": .string(String(repeating: "p", count: 20_000))]
        let error = await #expect(throws: ResponseError.self) { try await host.describe(item) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("over the host's limit of 16384 bytes") == true, "\(error?.message ?? "")")
        #expect(error?.data?["limit"]?.intValue == 16 << 10)
        // The next request is answered as usual.
        item.content = ["misbehave": "none"]
        #expect(try await host.describe(item).isEmpty == false)
        await host.close()
    }

    /// The error `body` throws, `.some(nil)` when it succeeds, or nil when it has not answered
    /// within `seconds` (it is left running: a request left waiting is the failure shown).
    static func outcome(within seconds: Int, _ body: @escaping @Sendable () async throws(ResponseError) -> Void) async throws -> ResponseError?? {
        let answer = Mutex<ResponseError??>(nil)
        Task {
            do throws(ResponseError) {
                try await body()
                answer.withLock { $0 = .some(nil) }
            } catch {
                answer.withLock { $0 = .some(error) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        while answer.withLock({ $0 == nil }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return answer.withLock { $0 }
    }

    /// A child `serve` with `limit` as its message limit (fails first when it is not built).
    static func client(limit: Int) throws -> ContextHostClient {
        try BuildProducts.checkBuilt()
        return try ContextHostClient(
            executable: BuildProducts.hostExecutable,
            arguments: ["serve", "--manifests", manifests, "--library-path", BuildProducts.directory, "--no-state", "--no-installed",
                        "--max-message-bytes", String(limit)])
    }

    @Test("ContextHostClient refuses a request over the child's limit once it knows it, without sending it")
    func clientRefusesLocally() async throws {
        let host = try Self.client(limit: 16 << 10)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "limits-test")))
        let item = ContextItem(
            providerId: Self.misbehaving, type: "misbehaving", displayName: "big",
            content: ["misbehave": "none", "padding": .string(String(repeating: "p", count: 20_000))])
        guard let outcome = try await Self.outcome(within: 30, { () async throws(ResponseError) in _ = try await host.describe(item) }) else {
            Issue.record("the request over the child's limit was still waiting after 30 s")
            await host.close()
            return
        }
        let error = outcome
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("it was not sent") == true, "\(error?.message ?? "")")
        try await host.ping()
        await host.close()
    }

    @Test("ContextHostClient: a request the child discards unread fails instead of waiting forever")
    func clientDiscardedRequestFails() async throws {
        let host = try Self.client(limit: 16 << 10)
        // Before `initialize` the client does not know the limit, so the request goes out; the
        // host answers -32600 with `id: null`, naming the discarded message's length.
        let padding = String(repeating: "p", count: 20_000)
        guard let outcome = try await Self.outcome(within: 30, { () async throws(ResponseError) in
            _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: padding)))
        }) else {
            Issue.record("the request over the child's limit was still waiting after 30 s")
            await host.close()
            return
        }
        let error = outcome
        #expect(error?.code == .invalidRequest, "\(String(describing: error))")
        #expect(error?.message.contains("the host discarded it") == true, "\(error?.message ?? "")")
        // The connection still works.
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "limits-test")))
        try await host.ping()
        await host.close()
    }
}
