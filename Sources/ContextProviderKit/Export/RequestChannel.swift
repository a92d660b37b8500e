#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The reply callback of the request a task is handling, for the notifications a provider sends
/// before the response (`$/progress`, `$/log`; docs/provider-abi.md, "Messages").
///
/// Bound to the request's task (`current`, a task-local), so `ProviderContext.reportProgress`
/// reaches the right request from anywhere in the provider's code for it, child tasks included.
/// Closed before the response is sent: nothing goes through the callback after it.
final class RequestChannel: @unchecked Sendable {
    /// The channel of the request this task handles, if any.
    @TaskLocal static var current: RequestChannel?

    /// Least time between two progress notifications (but the final one).
    static let progressIntervalNanoseconds: UInt64 = 50_000_000

    private let target: ReplyTarget
    /// The instance's requests to the host waiting for answers (nil: none possible).
    private let hostCalls: HostCalls?
    private let lock = Lock()
    // Guarded by `lock`.
    private var closed = false
    private var lastProgress: UInt64 = 0
    private var lastDone = -1.0

    init(target: ReplyTarget, hostCalls: HostCalls? = nil) {
        self.target = target
        self.hostCalls = hostCalls
    }

    /// Sends a request to the host through this request's reply callback and waits for its
    /// answer (which comes through `call`).
    func hostRequest(_ method: String, params: JSONValue) async throws -> JSONValue {
        guard let hostCalls else { throw ProviderError("This instance cannot make host requests.") }
        return try await hostCalls.request(method, params: params) { message in
            lock.withLock {
                guard !closed else { return false }
                target.send(message)
                return true
            }
        }
    }

    func progress(done: Double, total: Double?, message: String?) {
        guard done.isFinite, done >= 0 else { return }
        if let total { guard total.isFinite, total >= done else { return } }
        let final = total == done
        let now = monotonicNanoseconds()
        lock.withLock {
            guard !closed, done >= lastDone else { return }
            guard final || lastProgress == 0 || now &- lastProgress >= Self.progressIntervalNanoseconds else { return }
            guard done > lastDone || lastProgress == 0 else { return }
            lastDone = done
            lastProgress = max(now, 1)
            var params: JSONObject = ["done": .number(done)]
            if let total { params["total"] = .number(total) }
            if let message { params["message"] = .string(String(message.prefix(ProviderProgressNotification.maximumMessageLength))) }
            target.send(Self.notification(ProviderProgressNotification.method, params))
        }
    }

    func log(_ level: LogLevel, _ message: String) {
        lock.withLock {
            guard !closed else { return }
            target.send(Self.notification(ProviderLogNotification.method, ["level": level.json, "message": .string(message)]))
        }
    }

    /// The response is next: nothing more goes through the callback. Waits for a notification
    /// being sent on another thread.
    func close() {
        lock.withLock { closed = true }
    }

    private static func notification(_ method: String, _ params: JSONObject) -> [UInt8] {
        var output: [UInt8] = Array(#"{"jsonrpc":"2.0","method":"#.utf8)
        JSONWriter.appendString(method, to: &output)
        output.append(contentsOf: #","params":"#.utf8)
        JSONWriter.append(.object(params), to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

}

/// The monotonic clock in nanoseconds, for intervals (the bundled providers' too).
package func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Writes `text` to standard error as one line, in one `write(2)` (lines of concurrent callers do
/// not interleave), adding the line break when it has none. A worker's standard error goes to the
/// host's log; stdout belongs to the protocol. The bundled providers' log lines use it too.
package func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    if bytes.last != 0x0A { bytes.append(0x0A) }
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// The progress of one request, to report from any thread or task: for work shared between
/// requests or run outside the request's task (a background read several requests wait for).
/// Take it with `ProgressReporter.current` inside the request; after the request's answer,
/// reports do nothing.
public struct ProgressReporter: Sendable {
    let channel: RequestChannel

    /// The reporter of the request the current task handles; nil outside one.
    public static var current: ProgressReporter? { RequestChannel.current.map(ProgressReporter.init(channel:)) }

    /// As `ProviderContext.reportProgress(done:total:message:)`, for this reporter's request.
    public func report(done: Double, total: Double? = nil, message: String? = nil) {
        channel.progress(done: done, total: total, message: message)
    }
}
