import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes framed protocol messages. Thread-safe; each message is written whole, never interleaved.
///
/// While the reader is handling a chunk of input, or a provider's call thread a group of requests
/// (`batch`), replies are buffered and written with one system call at the end, which keeps
/// pipelined throughput high without delaying a reply that arrives while nobody is batching. A
/// batch that stays open (a provider stuck in a call) holds buffered replies back for at most a
/// few milliseconds: a timer writes them out. (In-process answers the reader takes over,
/// `ReplyRelay`, are buffered only once the reader delivers them, after the message it is on.)
///
/// The system call is made outside the lock: the thread that writes takes the buffered bytes
/// and leaves an empty buffer behind, so the reader and the call threads go on buffering replies
/// (rather than waiting for the lock, or spinning for it, while a pipe the client is slow to
/// empty takes the bytes). One thread writes at a time, which keeps the messages in order. Bytes
/// someone asked to have written while it wrote (a send outside any batch, a batch's end, a late
/// flush, `flush`), it writes next, for a few rounds; then a worker thread takes over, so a
/// reader never stays away from its input writing everyone's replies.
package final class OutputChannel: Sendable {
    private struct State {
        var framing: Framing = .newlineDelimited
        var buffer: [UInt8] = []
        /// The buffer the writing thread gave back, kept for its capacity.
        var spare: [UInt8] = []
        /// How many `batch` scopes are open (the reader's and call threads').
        var batching = 0
        /// Whether a late flush is scheduled (see `send`).
        var lateFlushArmed = false
        /// Whether a thread is writing (outside the lock) bytes it took from `buffer`.
        var writing = false
        /// Bytes ever appended to `buffer`, and ever written (or dropped when the channel closed).
        var appended = 0
        var written = 0
        /// Everything appended up to here is to be written, batch or not.
        var wanted = 0
        var closed = false

        /// Asks for everything buffered so far to be written.
        mutating func wantAll() { wanted = appended }

        /// Whether bytes someone asked to have written are still in `buffer`.
        var owesWrite: Bool { !closed && wanted > written && !buffer.isEmpty }
    }

    private let state = Mutex(State())
    private let write: @Sendable (UnsafeRawBufferPointer) -> Bool
    private let lateFlushMilliseconds: Int

    /// - Parameters:
    ///   - write: writes all the bytes or returns false (the peer is gone).
    ///   - lateFlushMilliseconds: the longest a reply waits in an open batch's buffer (plus the
    ///     timer's resolution).
    package init(lateFlushMilliseconds: Int = 2, write: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) {
        self.write = write
        self.lateFlushMilliseconds = lateFlushMilliseconds
    }

    /// An output channel that writes to a file descriptor.
    package convenience init(fileDescriptor: Int32) {
        self.init { bytes in writeAll(fileDescriptor, bytes) }
    }

    /// Sets the framing used for output (it follows the client's).
    package func setFraming(_ framing: Framing) {
        state.withLock { $0.framing = framing }
    }

    /// Sends one message body, framed.
    package func send(_ body: UnsafeRawBufferPointer) {
        send(length: body.count) { $0.append(contentsOf: body) }
    }

    /// Sends one message body of `length` bytes that `write` appends straight into the output
    /// buffer (no copy of its own), framed.
    package func send(length: Int, _ write: (inout [UInt8]) -> Void) {
        enqueue { state in
            switch state.framing {
            case .newlineDelimited:
                write(&state.buffer)
                state.buffer.append(0x0A)
            case .contentLength:
                state.buffer.append(contentsOf: "Content-Length: \(length)\r\n\r\n".utf8)
                write(&state.buffer)
            }
        }
    }

    /// An empty array with room for `capacity` bytes, to build a message in for `send(taking:)`:
    /// the buffer the last large message was written from, when it is large enough, else a new
    /// one. (A new array of a few hundred KB is fresh pages from the system each time, and
    /// touching them cost a `composer/list` of 100 notes ~11 page faults, about a tenth of its
    /// time on this machine; the buffer given back is already mapped, and usually still cached.)
    package func messageBuffer(capacity: Int) -> [UInt8] {
        var buffer = state.withLock { state -> [UInt8] in
            // (Small messages are built in arrays of their own: the spare is for the large ones.)
            guard capacity >= Self.reusedMessageMinimum, state.spare.capacity >= capacity else { return [] }
            var spare: [UInt8] = []
            swap(&spare, &state.spare)
            return spare
        }
        buffer.removeAll(keepingCapacity: true)
        if buffer.capacity < capacity { buffer.reserveCapacity(capacity) }
        return buffer
    }

    /// The capacity of the buffers the channel holds between writes (for tests).
    var heldCapacity: Int { state.withLock { $0.spare.capacity + $0.buffer.capacity } }

    /// The smallest message `messageBuffer` builds in the spare buffer.
    static let reusedMessageMinimum = 1 << 16

    /// The largest buffer kept for reuse once written; a larger one is freed.
    static let keptCapacity = 1 << 20

    /// Sends one message body built whole, taking it out of `body` (left empty, or holding a
    /// spare buffer to reuse or drop): when nothing else is buffered (usually), the array becomes
    /// the output buffer as it is, and is written without a copy (a `composer/list` answer of 100
    /// chips is ~175 KB). Keep a byte of spare capacity for the newline.
    package func send(taking body: inout [UInt8]) {
        enqueue { state in
            guard state.framing == .newlineDelimited, state.buffer.isEmpty else {
                let length = body.count
                switch state.framing {
                case .newlineDelimited:
                    state.buffer.append(contentsOf: body)
                    state.buffer.append(0x0A)
                case .contentLength:
                    state.buffer.append(contentsOf: "Content-Length: \(length)\r\n\r\n".utf8)
                    state.buffer.append(contentsOf: body)
                }
                // Copied: the array is kept for the next large message (`messageBuffer`).
                body.removeAll(keepingCapacity: true)
                if body.capacity <= Self.keptCapacity, body.capacity > state.spare.capacity { swap(&body, &state.spare) }
                return
            }
            body.append(0x0A)
            swap(&body, &state.buffer)
            // (`body` is now the empty buffer: kept for its capacity if there is no spare.)
            if state.spare.capacity < body.capacity { swap(&body, &state.spare) }
        }
        body.removeAll(keepingCapacity: true)
    }

    /// Appends a message under the lock (`append`), then writes it out now unless a batch is
    /// open, or waits if too much is waiting behind a write.
    private func enqueue(_ append: (inout State) -> Void) {
        // (The taken buffer is moved, never copied, into `writeOut`: a second reference to it
        // would make its `removeAll(keepingCapacity:)` allocate anew instead of keeping it.)
        let (first, full) = state.withLock { state -> ([UInt8]?, Bool) in
            guard !state.closed else { return (nil, false) }
            let before = state.buffer.count
            append(&state)
            state.appended += state.buffer.count - before
            if state.batching == 0 {
                state.wantAll()
                if let taken = takeForWriting(&state) { return (taken, false) }
            } else if !state.lateFlushArmed {
                // A batch may stay open for long (a provider stuck inside a call thread's batch):
                // buffered replies go out within a few milliseconds regardless.
                state.lateFlushArmed = true
                // (The write happens off the timer's thread: a full pipe must not hold up timeouts.)
                DeadlineTimer.shared.schedule(afterMilliseconds: lateFlushMilliseconds) { [weak self] in
                    guard let self else { return }
                    DispatchQueue.global().async { self.lateFlush() }
                }
            }
            return (nil, state.writing && state.buffer.count > Self.maximumBuffered)
        }
        var taken = consume first
        if let chunk = taken.take() {
            writeOut(consume chunk)
        } else if full {
            waitUntil { !$0.writing || $0.closed || $0.buffer.count <= Self.maximumBuffered }
        }
    }

    /// The most bytes buffered while a thread writes before senders wait for it: a client that
    /// does not read its answers holds the host back (as a blocked write did when it was made
    /// under the lock), rather than making it buffer without end.
    static let maximumBuffered = 1 << 20

    /// Waits until `condition` holds, looking again after 50 µs, then less and less often (up to
    /// every 5 ms): a client that does not read can keep a writer blocked for long.
    private func waitUntil(_ condition: (State) -> Bool) {
        var pause: UInt32 = 50
        while !state.withLock({ condition($0) }) {
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
    }

    private func lateFlush() {
        var taken = state.withLock { state -> [UInt8]? in
            state.lateFlushArmed = false
            state.wantAll()
            return takeForWriting(&state)
        }
        if let chunk = taken.take() { writeOut(consume chunk) }
    }

    /// Sends one message body, framed.
    package func send(_ body: [UInt8]) {
        body.withUnsafeBytes { send($0) }
    }

    /// Runs `body` with output buffered, then writes everything it produced at once.
    package func batch<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.batching += 1 }
        defer {
            var taken = state.withLock { state -> [UInt8]? in
                state.batching -= 1
                guard state.batching == 0 else { return nil }
                state.wantAll()
                return takeForWriting(&state)
            }
            if let chunk = taken.take() { writeOut(consume chunk) }
        }
        return try body()
    }

    /// Writes everything buffered so far, and returns once that is written (or the peer is gone):
    /// if another thread is writing, once it has written that too.
    package func flush() {
        let (first, target) = state.withLock { state -> ([UInt8]?, Int) in
            state.wantAll()
            return (takeForWriting(&state), state.appended)
        }
        var taken = consume first
        if let chunk = taken.take() { writeOut(consume chunk) }
        waitUntil { $0.written >= target || $0.closed }
    }

    /// The buffered bytes, for this thread to write (`writeOut`), if bytes someone asked to have
    /// written are among them and no other thread is writing (which then writes them next).
    private func takeForWriting(_ state: inout State) -> [UInt8]? {
        guard !state.writing, state.owesWrite else { return nil }
        state.writing = true
        var taken: [UInt8] = []
        swap(&taken, &state.spare)
        swap(&taken, &state.buffer)
        return taken
    }

    /// How many times a thread writes in a row before a worker thread takes over.
    static let writesInARow = 4

    /// Writes `chunk` outside the lock, then what was asked for meanwhile, up to `writesInARow`
    /// writes; hands what is left to a worker thread; gives the buffer back for reuse.
    private func writeOut(_ chunk: consuming [UInt8]) {
        var rounds = 1
        while true {
            let ok = chunk.withUnsafeBytes { write($0) }
            let count = chunk.count
            // (A large buffer is freed here, not under the lock.)
            chunk.removeAll(keepingCapacity: chunk.capacity <= Self.keptCapacity)
            enum Next { case done, again, handOff }
            let next = state.withLock { state -> Next in
                state.written += count
                if !ok {
                    state.closed = true
                    state.written = state.appended
                    state.buffer.removeAll()
                }
                guard state.owesWrite, rounds < Self.writesInARow else {
                    state.writing = false
                    swap(&chunk, &state.spare)
                    return state.owesWrite ? .handOff : .done
                }
                swap(&chunk, &state.buffer)
                return .again
            }
            switch next {
            case .done: return
            case .again: rounds += 1
            case .handOff:
                DispatchQueue.global().async { self.lateFlush() }
                return
            }
        }
    }
}
