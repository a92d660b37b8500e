import ContextHostTestSupport
import ContextProviderKit
import Dispatch
import Synchronization
import Testing

@testable import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Host.forward`: a request passed to a provider is answered once, leaves the pending table and
/// disarms its deadline, and a cancel or a timeout that comes while `send` is still running
/// reaches the provider once `send` returns its id.
@Suite("Forwarding a request to a provider", .serialized)
struct ForwardingTests {
    /// A connection whose `send` runs a hook (on the caller's thread) before it returns its id,
    /// and that records what the host tells it.
    private final class HookedConnection: ProviderConnection, @unchecked Sendable {
        let id: Int64 = 41
        let hook: @Sendable (_ completion: @escaping @Sendable (ProviderResponse) -> Void) -> Void
        let told = Mutex<(cancelled: [Int64], timedOut: [Int64])>(([], []))

        init(hook: @escaping @Sendable (_ completion: @escaping @Sendable (ProviderResponse) -> Void) -> Void) {
            self.hook = hook
        }

        func send(method: String, params: ParamsWriter, completion: @escaping @Sendable (ProviderResponse) -> Void) -> Int64 {
            hook(completion)
            return id
        }

        func cancel(_ id: Int64) { told.withLock { $0.cancelled.append(id) } }
        func timedOut(_ id: Int64) { told.withLock { $0.timedOut.append(id) } }
    }

    private struct Setup {
        let client: TestClient
        let server: RPCServer
        let reply: Reply
        /// What the server wrote.
        var written: String { client.pendingText }
    }

    private func setUp() throws -> Setup {
        let client = TestClient.inMemory()
        let server = try #require(client.server)
        return Setup(client: client, server: server, reply: Reply(id: Array("7".utf8), output: server.output))
    }

    private func forward(_ setup: Setup, to connection: HookedConnection, previewTimeout: Duration = .seconds(5)) {
        let provider = Host.LiveProvider(
            id: "com.example.hooked", timeouts: Timeouts(preview: previewTimeout), maximumAttachmentCount: 1, connection: connection)
        setup.server.forward(reply: setup.reply, provider: provider, method: "item/preview") { out in
            out.append(contentsOf: Array("{}".utf8))
        }
    }

    /// Whether the `Reply` of a forwarded request is freed once the test lets go of it: nothing
    /// (an armed deadline, the pending table) keeps the request. (Checked this way rather than by
    /// counting the shared timer's armed actions, which tests running side by side change too.)
    private final class Released {
        weak var reply: Reply?
    }

    /// Waits up to ten seconds (by the clock) for `condition`.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let end = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < end {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }

    @Test("an answer given inside send is written once; the request leaves the pending table and its deadline is disarmed")
    func answeredInsideSend() throws {
        let released = Released()
        let connection = HookedConnection { completion in
            let chip = #"{"jsonrpc":"2.0","id":41,"result":{"ctxui":1,"icon":"doc","title":"T","tone":"neutral","accessibilityLabel":"T","fallbackText":"T"}}"#
            Array(chip.utf8).withUnsafeBytes { bytes in
                ReplyRouter.deliver(bytes, to: completion, expectedID: 41, expected: .chip)
            }
        }
        do {
            let setup = try setUp()
            released.reply = setup.reply
            forward(setup, to: connection)
            #expect(setup.reply.isAnswered)
            #expect(setup.written.contains(#""result":{"ctxui":1"#))
            #expect(setup.server.pendingCount == 0)
        }
        // The deadline was disarmed: it no longer holds the request.
        #expect(released.reply == nil)
        #expect(connection.told.withLock { $0.cancelled.isEmpty && $0.timedOut.isEmpty })
    }

    @Test("a cancel that comes while send runs is answered at once and reaches the provider when send returns its id")
    func cancelledInsideSend() throws {
        let released = Released()
        let connection: HookedConnection
        do {
            let setup = try setUp()
            released.reply = setup.reply
            let server = setup.server
            let idText = setup.reply.idText
            connection = HookedConnection { _ in server.cancel(idText: idText) }
            forward(setup, to: connection)
            #expect(setup.written.contains("-32800"))
            #expect(connection.told.withLock { $0.cancelled } == [41])
            #expect(server.pendingCount == 0)
        }
        // The cancel disarmed the deadline: nothing keeps the request until it would have passed.
        #expect(released.reply == nil)
    }

    @Test("a cancel after send returned reaches the provider with its id")
    func cancelledAfterSend() throws {
        let setup = try setUp()
        let connection = HookedConnection { _ in }
        forward(setup, to: connection)
        setup.server.cancel(idText: setup.reply.idText)
        #expect(setup.written.contains("-32800"))
        #expect(connection.told.withLock { $0.cancelled } == [41])
    }

    @Test("a deadline that passes while send runs is answered, and the provider is told once send returns its id")
    func timedOutInsideSend() throws {
        let setup = try setUp()
        let reply = setup.reply
        let connection = HookedConnection { _ in
            // `send` stuck (a worker's full pipe) past the deadline.
            for _ in 0..<400 where !reply.isAnswered { usleep(5_000) }
        }
        forward(setup, to: connection, previewTimeout: .milliseconds(20))
        // (Answered on the timer's thread; the output is flushed a moment later.)
        #expect(eventually { setup.written.contains("did not answer item/preview within 20 ms") })
        #expect(eventually { connection.told.withLock { $0.timedOut } == [41] })
        #expect(connection.told.withLock { $0.cancelled.isEmpty })
    }
}
