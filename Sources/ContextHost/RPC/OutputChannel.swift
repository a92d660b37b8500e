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
/// empty takes the bytes). One thread writes at a time, which keeps the messages in order; what
/// is buffered while it writes, it writes next if a flush was asked for meanwhile.
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
        /// Whether a flush was asked for while a thread was writing: it writes what is buffered
        /// next, batch or not.
        var flushWanted = false
        var closed = false
    }

    private let state = Mutex(State())
    private let write: @Sendable (UnsafeRawBufferPointer) -> Bool

    /// - Parameter write: writes all the bytes or returns false (the peer is gone).
    package init(write: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) {
        self.write = write
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
        let (taken, full) = state.withLock { state -> ([UInt8]?, Bool) in
            guard !state.closed else { return (nil, false) }
            switch state.framing {
            case .newlineDelimited:
                write(&state.buffer)
                state.buffer.append(0x0A)
            case .contentLength:
                state.buffer.append(contentsOf: "Content-Length: \(length)\r\n\r\n".utf8)
                write(&state.buffer)
            }
            if state.batching == 0, let taken = takeForWriting(&state) {
                return (taken, false)
            }
            if state.batching > 0, !state.lateFlushArmed {
                // A batch may stay open for long (a provider stuck inside a call thread's batch):
                // buffered replies go out within a few milliseconds regardless.
                state.lateFlushArmed = true
                // (The write happens off the timer's thread: a full pipe must not hold up timeouts.)
                DeadlineTimer.shared.schedule(afterMilliseconds: Self.lateFlushMilliseconds) { [weak self] in
                    guard let self else { return }
                    DispatchQueue.global().async { self.lateFlush() }
                }
            }
            return (nil, state.writing && state.buffer.count > Self.maximumBuffered)
        }
        if let taken {
            writeOut(taken)
        } else if full {
            waitForRoom()
        }
    }

    /// The most bytes buffered while a thread writes before senders wait for it: a client that
    /// does not read its answers holds the host back (as a blocked write did when it was made
    /// under the lock), rather than making it buffer without end.
    static let maximumBuffered = 1 << 20

    /// Waits while a thread is writing and more than `maximumBuffered` bytes wait behind it.
    private func waitForRoom() {
        while state.withLock({ $0.writing && !$0.closed && $0.buffer.count > Self.maximumBuffered }) {
            usleep(200)
        }
    }

    /// The longest a reply waits in a batch's buffer (plus the timer's resolution).
    static let lateFlushMilliseconds = 2

    private func lateFlush() {
        let taken = state.withLock { state -> [UInt8]? in
            state.lateFlushArmed = false
            return takeForWriting(&state)
        }
        if let taken { writeOut(taken) }
    }

    /// Sends one message body, framed.
    package func send(_ body: [UInt8]) {
        body.withUnsafeBytes { send($0) }
    }

    /// Runs `body` with output buffered, then writes everything it produced at once.
    package func batch<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.batching += 1 }
        defer {
            let taken = state.withLock { state -> [UInt8]? in
                state.batching -= 1
                return state.batching == 0 ? takeForWriting(&state) : nil
            }
            if let taken { writeOut(taken) }
        }
        return try body()
    }

    /// Writes everything buffered so far, and returns once it is written (or the peer is gone):
    /// if another thread is writing, after it has written that too.
    package func flush() {
        while true {
            let (taken, waiting) = state.withLock { state -> ([UInt8]?, Bool) in
                if state.writing {
                    state.flushWanted = true
                    return (nil, true)
                }
                return (takeForWriting(&state), false)
            }
            if let taken {
                writeOut(taken)
                return
            }
            guard waiting else { return }
            usleep(100)
        }
    }

    /// The buffered bytes, for this thread to write (`writeOut`), unless there are none, the
    /// channel is closed, or another thread is writing (then it writes them next, if asked to:
    /// `flushWanted`).
    private func takeForWriting(_ state: inout State) -> [UInt8]? {
        if state.writing {
            state.flushWanted = true
            return nil
        }
        guard !state.closed, !state.buffer.isEmpty else { return nil }
        state.writing = true
        state.flushWanted = false
        var taken: [UInt8] = []
        swap(&taken, &state.spare)
        swap(&taken, &state.buffer)
        return taken
    }

    /// Writes `taken` outside the lock, then what was buffered meanwhile if a flush was asked for
    /// (or nobody is batching), until nothing is left; gives the buffer back for reuse.
    private func writeOut(_ chunk: consuming [UInt8]) {
        while true {
            let ok = chunk.withUnsafeBytes { write($0) }
            let more = state.withLock { state -> Bool in
                chunk.removeAll(keepingCapacity: chunk.capacity <= 1 << 20)
                if !ok {
                    state.closed = true
                    state.buffer.removeAll()
                }
                guard !state.closed, !state.buffer.isEmpty, state.flushWanted || state.batching == 0 else {
                    state.writing = false
                    state.flushWanted = false
                    swap(&chunk, &state.spare)
                    return false
                }
                state.flushWanted = false
                swap(&chunk, &state.buffer)
                return true
            }
            if !more { return }
        }
    }
}
