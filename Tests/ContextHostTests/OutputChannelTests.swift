@testable import ContextHost
import Dispatch
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `OutputChannel`: messages leave whole and in order, batches are written at once, and a write
/// in progress (a client slow to read) does not hold up the threads that make replies.
@Suite("Output channel")
struct OutputChannelTests {
    /// What the channel wrote, one entry per write call; a write can be held until released.
    private final class Sink: Sendable {
        let writes = Mutex<[[UInt8]]>([])
        /// Where each write's bytes were (to tell a buffer written as it is from a copy).
        let addresses = Mutex<[UInt]>([])
        /// While set, each write waits until `release` (the first write's start is signalled).
        let holding = Atomic<Bool>(false)
        let started = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let fails = Atomic<Bool>(false)

        func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
            if holding.load(ordering: .acquiring) {
                started.signal()
                released.wait()
            }
            writes.withLock { $0.append(Array(bytes)) }
            addresses.withLock { $0.append(UInt(bitPattern: bytes.baseAddress)) }
            return !fails.load(ordering: .acquiring)
        }

        /// Everything written, split into lines.
        var lines: [String] {
            let bytes = writes.withLock { $0.flatMap { $0 } }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        var writeCount: Int { writes.withLock { $0.count } }
    }

    private static func send(_ output: OutputChannel, _ text: String) {
        Array(text.utf8).withUnsafeBytes { output.send($0) }
    }

    /// A channel whose sink holds its writes, and a thread stuck writing `text` to it (until
    /// `sink.released` is signalled).
    private static func stuckWriting(_ text: String) -> (Sink, OutputChannel) {
        let sink = Sink()
        let output = OutputChannel { sink.write($0) }
        sink.holding.store(true, ordering: .releasing)
        DispatchQueue.global().async { Self.send(output, text) }
        #expect(sink.started.wait(timeout: .now() + 10) == .success)
        return (sink, output)
    }

    @Test("outside a batch each message is written at once; inside one, all of them with one write at its end")
    func batching() {
        let sink = Sink()
        // (No late flush during the test, however long the thread is paused inside the batch.)
        let output = OutputChannel(lateFlushMilliseconds: 600_000) { sink.write($0) }
        Self.send(output, "a")
        #expect(sink.lines == ["a"])
        output.batch {
            Self.send(output, "b")
            Self.send(output, "c")
            #expect(sink.writeCount == 1)
        }
        #expect(sink.writeCount == 2)
        #expect(sink.lines == ["a", "b", "c"])
    }

    @Test("a message sent whole is written as it is, alone or behind buffered ones, in order, in either framing")
    func sendTaking() {
        let sink = Sink()
        let output = OutputChannel(lateFlushMilliseconds: 600_000) { sink.write($0) }
        let large = String(repeating: "y", count: 200_000)
        // Nothing buffered: the array is the buffer written (exactly once, with its newline).
        var message = Array("first".utf8)
        message.reserveCapacity(64)
        let address = message.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        output.send(taking: &message)
        #expect(sink.addresses.withLock { $0.last } == address, "the message's own array is written, not a copy")
        message = Array(large.utf8)
        output.send(taking: &message)
        #expect(sink.writeCount == 2)
        // Behind a buffered message (an open batch): copied after it, one write at the batch's end.
        output.batch {
            Self.send(output, "second")
            message = Array("third".utf8)
            output.send(taking: &message)
            Self.send(output, "fourth")
        }
        #expect(sink.writeCount == 3)
        #expect(sink.lines == ["first", large, "second", "third", "fourth"])
        // Content-Length framing: the header, then the body.
        output.setFraming(.contentLength)
        message = Array(#"{"a":1}"#.utf8)
        output.send(taking: &message)
        output.flush()
        #expect(sink.writes.withLock { String(decoding: $0.last ?? [], as: UTF8.self) } == "Content-Length: 7\r\n\r\n{\"a\":1}")
    }

    @Test("the buffer a large message was written from is the next large message's, once written; never while in use")
    func messageBufferReuse() {
        let sink = Sink()
        let output = OutputChannel(lateFlushMilliseconds: 600_000) { sink.write($0) }
        func address(_ array: [UInt8]) -> UInt { array.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }
        var message = output.messageBuffer(capacity: 300_000)
        #expect(message.isEmpty && message.capacity >= 300_000)
        message.append(contentsOf: String(repeating: "a", count: 250_000).utf8)
        let first = address(message)
        output.send(taking: &message)
        #expect(sink.addresses.withLock { $0.last } == first)
        // Small messages do not take it.
        #expect(address(output.messageBuffer(capacity: 1_000)) != first)
        // Written: its storage comes back, empty, for a message that fits in it…
        var second = output.messageBuffer(capacity: 200_000)
        #expect(second.isEmpty)
        #expect(address(second) == first)
        // …and only once: a message asked for meanwhile gets storage of its own.
        let other = output.messageBuffer(capacity: 200_000)
        #expect(other.capacity >= 200_000)
        #expect(address(other) != first)
        // Copied behind a buffered message (an open batch), the array is not dropped: the
        // channel keeps its storage (its two buffers take turns) for the next large message.
        output.batch {
            Self.send(output, "before")
            second.append(contentsOf: "second".utf8)
            output.send(taking: &second)
        }
        #expect(output.heldCapacity >= 250_000)
        // So it is with Content-Length framing.
        output.setFraming(.contentLength)
        var third = output.messageBuffer(capacity: 200_000)
        third.append(contentsOf: "third".utf8)
        output.send(taking: &third)
        #expect(output.heldCapacity >= 250_000)
        output.setFraming(.newlineDelimited)
        // A buffer over 1 MiB is not kept once written.
        var huge = output.messageBuffer(capacity: 2_000_000)
        huge.append(contentsOf: String(repeating: "h", count: 1_500_000).utf8)
        output.send(taking: &huge)
        #expect(output.heldCapacity < 2_000_000)
        #expect(sink.lines.first == String(repeating: "a", count: 250_000))
        #expect(sink.lines.dropFirst().first == "before")
        #expect(sink.lines.dropFirst(2).first == "second")
        #expect(sink.writes.withLock { $0.last } == Array((String(repeating: "h", count: 1_500_000) + "\n").utf8))
        #expect(sink.writes.withLock { $0.contains { String(decoding: $0, as: UTF8.self) == "Content-Length: 5\r\n\r\nthird" } })
    }

    @Test("a message sent whole while another thread is stuck writing becomes the buffer behind it, and what follows is added to it")
    func sendTakingWhileWriting() {
        let (sink, output) = Self.stuckWriting("first")
        var message = Array("second".utf8)
        message.reserveCapacity(256)  // (room for what follows, so the buffer stays where it is)
        let address = message.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        output.send(taking: &message)
        let sent = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            Self.send(output, "third")
            sent.signal()
        }
        #expect(sent.wait(timeout: .now() + 10) == .success, "a send waited for another thread's write")
        sink.holding.store(false, ordering: .releasing)
        sink.released.signal()
        output.flush()
        #expect(sink.lines == ["first", "second", "third"])
        #expect(sink.writeCount == 2)
        #expect(sink.addresses.withLock { $0.last } == address, "the message's array was the buffer written next")
    }

    @Test("while one thread is stuck writing, another still sends (buffered), and everything leaves in order")
    func writeOutsideTheLock() {
        let (sink, output) = Self.stuckWriting("first")
        // The first write is in progress. With the write made under the channel's lock, this
        // send (and any batch) would wait for it.
        let sent = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            Self.send(output, "second")
            output.batch { Self.send(output, "third") }
            sent.signal()
        }
        #expect(sent.wait(timeout: .now() + 10) == .success, "a send waited for another thread's write")
        #expect(sink.writeCount == 0)
        sink.holding.store(false, ordering: .releasing)
        sink.released.signal()
        output.flush()  // returns once the writing thread has written what was buffered behind it
        #expect(sink.lines == ["first", "second", "third"])
        #expect(sink.writeCount == 2)  // the first message, then the two buffered meanwhile at once
    }

    @Test("messages from many threads, in and out of batches, arrive whole, each thread's in its order")
    func manyThreads() {
        let sink = Sink()
        let output = OutputChannel { sink.write($0) }
        let threads = 4, messages = 500
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<messages {
                let text = "\(thread)-\(index)-" + String(repeating: "x", count: index % 97)
                if index % 3 == 0 {
                    output.batch { Self.send(output, text) }
                } else {
                    Self.send(output, text)
                }
            }
        }
        output.flush()
        let lines = sink.lines
        #expect(lines.count == threads * messages)
        for thread in 0..<threads {
            let mine = lines.filter { $0.hasPrefix("\(thread)-") }
            let expected = (0..<messages).map { "\(thread)-\($0)-" + String(repeating: "x", count: $0 % 97) }
            #expect(mine == expected, "thread \(thread)")
        }
    }

    @Test("flush returns once what was buffered when it was called is written, while other threads keep sending")
    func flushDoesNotChase() {
        let sink = Sink()
        let output = OutputChannel { sink.write($0) }
        let stop = Atomic<Bool>(false)
        // The flushing thread starts first and waits (a thread pool busy with two senders that
        // never block would start it late); it goes once the senders are sending.
        let go = DispatchSemaphore(value: 0)
        let flushed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            go.wait()
            Self.send(output, "mine")
            output.flush()
            flushed.signal()
        }
        let senders = DispatchGroup()
        for sender in 0..<2 {
            DispatchQueue.global().async(group: senders) {
                var count = 0
                while !stop.load(ordering: .acquiring) {
                    if count == 100, sender == 0 { go.signal() }
                    if count % 4 == 0 {
                        output.batch { Self.send(output, "more \(sender)") }
                    } else {
                        Self.send(output, "more \(sender)")
                    }
                    count += 1
                }
            }
        }
        #expect(flushed.wait(timeout: .now() + 20) == .success, "flush kept waiting on output sent after it")
        stop.store(true, ordering: .releasing)
        senders.wait()
        output.flush()
        #expect(sink.lines.contains("mine"))
    }

    @Test("a failed write closes the channel: what follows is dropped, and flush returns")
    func failedWrite() {
        let sink = Sink()
        let output = OutputChannel { sink.write($0) }
        sink.fails.store(true, ordering: .releasing)
        Self.send(output, "lost peer")
        Self.send(output, "dropped")
        output.batch { Self.send(output, "dropped too") }
        output.flush()
        #expect(sink.lines == ["lost peer"])
    }

    @Test("with a write stuck, senders stop once a megabyte waits behind it, and go on when it is written")
    func backpressure() {
        let (sink, output) = Self.stuckWriting("first")
        let chunk = String(repeating: "y", count: 64 << 10)
        let sentAll = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for _ in 0..<32 { Self.send(output, chunk) }  // 2 MiB
            sentAll.signal()
        }
        #expect(sentAll.wait(timeout: .now() + 0.5) == .timedOut, "2 MiB were buffered behind a stuck write")
        sink.holding.store(false, ordering: .releasing)
        sink.released.signal()
        #expect(sentAll.wait(timeout: .now() + 10) == .success)
        output.flush()
        #expect(sink.lines.count == 33)
    }
}
