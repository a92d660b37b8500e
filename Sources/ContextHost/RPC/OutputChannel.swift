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
package final class OutputChannel: Sendable {
    private struct State {
        var framing: Framing = .newlineDelimited
        var buffer: [UInt8] = []
        /// How many `batch` scopes are open (the reader's and call threads').
        var batching = 0
        /// Whether a late flush is scheduled (see `send`).
        var lateFlushArmed = false
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
        state.withLock { state in
            guard !state.closed else { return }
            switch state.framing {
            case .newlineDelimited:
                write(&state.buffer)
                state.buffer.append(0x0A)
            case .contentLength:
                state.buffer.append(contentsOf: "Content-Length: \(length)\r\n\r\n".utf8)
                write(&state.buffer)
            }
            if state.batching == 0 {
                flushLocked(&state)
            } else if !state.lateFlushArmed {
                // A batch may stay open for long (a provider stuck inside a call thread's batch):
                // buffered replies go out within a few milliseconds regardless.
                state.lateFlushArmed = true
                // (The write happens off the timer's thread: a full pipe must not hold up timeouts.)
                DeadlineTimer.shared.schedule(afterMilliseconds: Self.lateFlushMilliseconds) { [weak self] in
                    guard let self else { return }
                    DispatchQueue.global().async { self.lateFlush() }
                }
            }
        }
    }

    /// The longest a reply waits in a batch's buffer (plus the timer's resolution).
    static let lateFlushMilliseconds = 2

    private func lateFlush() {
        state.withLock { state in
            state.lateFlushArmed = false
            flushLocked(&state)
        }
    }

    /// Sends one message body, framed.
    package func send(_ body: [UInt8]) {
        body.withUnsafeBytes { send($0) }
    }

    /// Runs `body` with output buffered, then writes everything it produced at once.
    package func batch<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.batching += 1 }
        defer {
            state.withLock { state in
                state.batching -= 1
                if state.batching == 0 { flushLocked(&state) }
            }
        }
        return try body()
    }

    /// Writes anything buffered.
    package func flush() {
        state.withLock { flushLocked(&$0) }
    }

    private func flushLocked(_ state: inout State) {
        guard !state.buffer.isEmpty else { return }
        let ok = state.buffer.withUnsafeBytes { write($0) }
        state.buffer.removeAll(keepingCapacity: state.buffer.capacity <= 1 << 20)
        if !ok { state.closed = true }
    }
}
