@testable import ContextHost
import ContextHostTestSupport
import ContextProviderKit
import Synchronization
import Testing

/// `ReplyRelay`: in-process answers go to the reader while it is busy, and nowhere else.
@Suite("Reply relay")
struct ReplyRelayTests {
    /// What a completion saw: the result's text, or the error's message.
    private final class Seen: Sendable {
        let answers = Mutex<[String]>([])
        func record(_ response: ProviderResponse) {
            let text = response.resultBytes.map { String(decoding: $0, as: UTF8.self) } ?? "error: \(response.error?.message ?? "")"
            answers.withLock { $0.append(text) }
        }
        var all: [String] { answers.withLock { $0 } }
    }

    /// A count shared by tasks.
    private final class Remaining: Sendable {
        let count: Atomic<Int>
        init(_ count: Int) { self.count = Atomic(count) }
    }

    private static func offer(_ relay: ReplyRelay, id: Int64, chip: String, to seen: Seen) -> Bool {
        let bytes = Array(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(chip)}"#.utf8)
        let waiting = ReplyTable.Waiting(completion: { seen.record($0) }, expected: .any)
        return bytes.withUnsafeBytes { relay.offer(id: id, waiting: waiting, bytes: $0) }
    }

    @Test("while the reader is idle, the call thread delivers its own answers")
    func idleReaderDeclines() {
        let relay = ReplyRelay()
        let seen = Seen()
        #expect(!Self.offer(relay, id: 1, chip: #"{"a":1}"#, to: seen))
        #expect(relay.queuedCount == 0)
        relay.readerWakes()
        relay.drain()  // empty: the reader is idle again
        #expect(!Self.offer(relay, id: 2, chip: #"{"a":2}"#, to: seen))
        #expect(seen.all.isEmpty)  // declined answers are the caller's to deliver
    }

    @Test("while the reader is busy, answers wait for it, in order, copied, and each is delivered once")
    func busyReaderTakesAnswers() {
        let relay = ReplyRelay()
        let seen = Seen()
        relay.readerWakes()
        #expect(Self.offer(relay, id: 1, chip: #"{"a":1}"#, to: seen))
        #expect(Self.offer(relay, id: 2, chip: #"{"b":"two"}"#, to: seen))
        #expect(relay.queuedCount == 2)
        #expect(seen.all.isEmpty)  // nothing is delivered until the reader drains
        relay.drain()
        #expect(seen.all == [#"{"a":1}"#, #"{"b":"two"}"#])
        #expect(relay.queuedCount == 0)
        // Drained means idle: the next answer is the caller's again.
        #expect(!Self.offer(relay, id: 3, chip: #"{"c":3}"#, to: seen))
        #expect(seen.all.count == 2)
    }

    @Test("after each message the reader delivers what is queued, and stays busy")
    func deliveredPerMessage() {
        let relay = ReplyRelay()
        let seen = Seen()
        relay.readerWakes()
        relay.deliverQueued()  // nothing queued: nothing happens
        #expect(Self.offer(relay, id: 1, chip: #"{"a":1}"#, to: seen))
        relay.deliverQueued()
        #expect(seen.all == [#"{"a":1}"#])
        // Still busy: the next answer is queued too.
        #expect(Self.offer(relay, id: 2, chip: #"{"a":2}"#, to: seen))
        #expect(relay.queuedCount == 1)
        relay.drain()
        #expect(seen.all == [#"{"a":1}"#, #"{"a":2}"#])
    }

    @Test("exit writes the answers queued for the reader before the process ends")
    func exitDrains() throws {
        let client = TestClient.inMemory()
        let server = try #require(client.server)
        let relay = server.host.calls.relay
        let output = server.output
        let reply = Reply(id: Array("5".utf8), output: output)
        relay.readerWakes()
        let bytes = Array(#"{"jsonrpc":"2.0","id":77,"result":{"done":true}}"#.utf8)
        let waiting = ReplyTable.Waiting(
            completion: { response in response.resultBytes.map { reply.sendResult(raw: $0) } }, expected: .any)
        #expect(bytes.withUnsafeBytes { relay.offer(id: 77, waiting: waiting, bytes: $0) })
        output.batch { server.exit(status: 0) }
        // The answer was written, and written before the exit.
        let answer = #"{"jsonrpc":"2.0","id":5,"result":{"done":true}}"# + "\n"
        #expect(client.pendingText == answer)
        #expect(client.exit?.status == 0)
        #expect(client.exit?.bytesWritten == answer.utf8.count)
        #expect(relay.queuedCount == 0)
        relay.drain()
    }

    @Test("a relayed answer is checked as any other: the wrong id is a bad reply")
    func relayedAnswersAreChecked() {
        let relay = ReplyRelay()
        let seen = Seen()
        relay.readerWakes()
        let bytes = Array(#"{"jsonrpc":"2.0","id":9,"result":{}}"#.utf8)
        let waiting = ReplyTable.Waiting(completion: { seen.record($0) }, expected: .any)
        #expect(bytes.withUnsafeBytes { relay.offer(id: 8, waiting: waiting, bytes: $0) })
        relay.drain()
        #expect(seen.all.count == 1)
        #expect(seen.all.first?.contains("carries id 9, but answers request 8") == true)
    }

    @Test("answers larger than the relay copies are left to the call thread")
    func largeAnswersStay() {
        let relay = ReplyRelay()
        let seen = Seen()
        relay.readerWakes()
        let large = #"{"t":""# + String(repeating: "x", count: ReplyRelay.largestRelayed) + #""}"#
        #expect(!Self.offer(relay, id: 1, chip: large, to: seen))
        #expect(relay.queuedCount == 0)
        relay.drain()
    }

    @Test("answers offered from other threads while the reader drains are all delivered")
    func concurrentOffers() async {
        let relay = ReplyRelay()
        let seen = Seen()
        let declined = Seen()
        let offering = Remaining(4)
        relay.readerWakes()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<250 {
                        let id = Int64(thread * 1000 + index)
                        if !Self.offer(relay, id: id, chip: #"{"n":\#(id)}"#, to: seen) {
                            declined.answers.withLock { $0.append("declined") }
                        }
                    }
                    offering.count.subtract(1, ordering: .releasing)
                }
            }
            group.addTask {
                // The reader's rhythm, for as long as answers come: per message, then per chunk.
                while offering.count.load(ordering: .acquiring) > 0 {
                    relay.deliverQueued()
                    relay.drain()
                    relay.readerWakes()
                }
            }
        }
        relay.drain()
        // Every answer was either delivered by the relay or declined (then the caller delivers it).
        #expect(seen.all.count + declined.all.count == 1000)
        #expect(Set(seen.all).count == seen.all.count)
        #expect(relay.queuedCount == 0)
    }
}
