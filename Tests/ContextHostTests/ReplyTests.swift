import ContextHostTestSupport
import ContextProviderKit
import Synchronization
import Testing

@testable import ContextHost

/// `Reply` answers exactly once and tells whoever tracks the request when it was answered — even
/// when they register after the answer (a request that waited for a provider's load is tracked a
/// second time on another thread, which can race with `$/cancelRequest`).
@Suite("Reply")
struct ReplyTests {
    private final class Written: Sendable {
        let lines = Mutex<[String]>([])
        var text: String { lines.withLock { $0.joined() } }
    }

    private func reply(_ written: Written = Written()) -> Reply {
        let output = OutputChannel { bytes in
            written.lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
            return true
        }
        return Reply(id: Array("7".utf8), output: output)
    }

    @Test("one answer is written; later ones are dropped")
    func once() {
        let written = Written()
        let reply = reply(written)
        reply.sendError(RPCError(.requestCancelled, "Request cancelled"))
        reply.sendResult(["late": true])
        #expect(reply.isAnswered)
        #expect(written.text.contains("-32800"))
        #expect(!written.text.contains("late"))
    }

    @Test("an action registered before the answer runs once when it is written")
    func before() {
        let runs = Atomic<Int>(0)
        let reply = reply()
        reply.whenAnswered { runs.add(1, ordering: .relaxed) }
        #expect(runs.load(ordering: .relaxed) == 0)
        reply.sendResult(["ok": true])
        reply.sendResult(["ok": false])
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test("an action registered after the answer runs at once")
    func after() {
        let runs = Atomic<Int>(0)
        let reply = reply()
        reply.sendResult(["ok": true])
        reply.whenAnswered { runs.add(1, ordering: .relaxed) }
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test("a request tracked again after it was cancelled leaves the pending table")
    func trackedAfterAnswer() throws {
        let server = try #require(TestClient.inMemory().server)
        let reply = reply()
        server.track(reply)
        #expect(server.pendingCount == 1)
        server.cancel(idText: reply.idText)
        #expect(server.pendingCount == 0)
        server.track(reply)  // the waiting body, on another thread, after the cancel
        #expect(server.pendingCount == 0)
    }
}
