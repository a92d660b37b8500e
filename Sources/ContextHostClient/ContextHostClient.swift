import ContextProtocol
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `context-host` child process spoken to over pipes: the same typed API as the in-process host
/// (`ContextHostSession`), for apps that keep providers out of their own process.
///
/// ```swift
/// let host = try ContextHostClient(executable: "/usr/local/bin/context-host", arguments: ["serve"])
/// _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "my-app")))
/// for provider in try await host.providers() { print(provider.id ?? "?") }
/// await host.close()
/// ```
///
/// Many requests may be in flight; each answer goes to its caller. When the process dies, every
/// waiting request (and every later one) fails with `.connectionClosed` and a message that says
/// how it ended and what it last wrote to stderr.
///
/// Writing to a child that died must not kill the app, so the first client sets `SIGPIPE` to be
/// ignored in this process (as most networking libraries do); writes then fail with `EPIPE`.
public final class ContextHostClient: ContextHostSession {
    /// Where the child's standard error goes.
    public enum StandardError: Sendable {
        /// Kept: the last lines are in `recentStandardError` and in the error when the process dies.
        case capture
        /// Written to this file descriptor (e.g. `2`, or a log file's).
        case fileDescriptor(Int32)
    }

    /// The child's process id.
    public let processID: Int32
    private let tracker: RequestTracker
    private let input: InputPipe
    private let stderrTail: StderrTail?
    private let closed = Mutex(false)

    /// Starts `executable` with `arguments` (without the program name; e.g. `["serve", "--manifests", dir]`).
    ///
    /// - Throws: `.connectionClosed` when the process cannot be started (the message says why).
    public init(
        executable: String, arguments: [String] = ["serve"], environment: [String: String]? = nil,
        standardError: StandardError = .capture
    ) throws(ResponseError) {
        Self.ignoreSIGPIPE
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        func pipeFailure() -> ResponseError {
            let reason = Self.errnoText()
            for fd in toChild + fromChild where fd >= 0 { closeFD(fd) }  // none left open on the way out
            return ResponseError(code: .connectionClosed, message: "Cannot create pipes for \(executable): \(reason).")
        }
        guard Self.pipe(&toChild), Self.pipe(&fromChild) else { throw pipeFailure() }
        var stderrTarget: Int32
        switch standardError {
        case .capture:
            guard Self.pipe(&errors) else { throw pipeFailure() }
            stderrTarget = errors[1]
        case .fileDescriptor(let fd):
            stderrTarget = fd
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies; every other descriptor of ours stays closed in the child.
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrTarget, 2)
        let argv = [executable] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let status: Int32
        if let environment {
            var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in cEnvironment { free(pointer) } }
            status = posix_spawn(&pid, executable, &actions, nil, &cArguments, &cEnvironment)
        } else {
            status = posix_spawn(&pid, executable, &actions, nil, &cArguments, environ)
        }
        closeFD(toChild[0])
        closeFD(fromChild[1])
        if errors[1] >= 0 { closeFD(errors[1]) }
        guard status == 0 else {
            closeFD(toChild[1])
            closeFD(fromChild[0])
            if errors[0] >= 0 { closeFD(errors[0]) }
            throw ResponseError(
                code: .connectionClosed, message: "Cannot start \(executable): \(String(cString: strerror(status))). Check the path and that it is executable.")
        }
        let childPID = pid
        processID = pid
        let input = InputPipe(fd: toChild[1])
        self.input = input
        let tail = errors[0] >= 0 ? StderrTail(fd: errors[0]) : nil
        stderrTail = tail
        let output = fromChild[0]
        let tracker = RequestTracker(decodeEvent: HostEvent.init(method:params:)) { body in
            var framed = body
            framed.append(0x0A)
            return input.write(framed)
        }
        self.tracker = tracker
        tail?.start()
        DispatchQueue(label: "context-host-client.reader.\(childPID)").async {
            Self.readUntilEnd(fd: output, of: childPID, into: tracker, stderrTail: tail)
        }
    }

    /// The reader thread: reads the child's answers from `fd` until it closes (killing the child
    /// on an over-long line), reaps the child and closes `tracker` with an error that says how the
    /// child ended and its last stderr lines.
    private static func readUntilEnd(fd output: Int32, of childPID: pid_t, into tracker: RequestTracker, stderrTail tail: StderrTail?) {
        let overflow = readLoop(fd: output, into: tracker)
        closeFD(output)
        if overflow != nil { kill(childPID, SIGKILL) }
        let ending = reap(childPID)
        // Give the stderr reader a moment to take the last lines.
        tail?.waitForEnd(milliseconds: 200)
        var message = "context-host (pid \(childPID)) " + (overflow.map { $0 + ", and " + ending.text } ?? ending.text)
        let lines = tail?.lines ?? []
        if !lines.isEmpty { message += "; its last stderr lines:\n" + lines.joined(separator: "\n") }
        var data: JSONObject = ["pid": .number(Double(childPID))]
        if let status = ending.status { data["exitStatus"] = .number(Double(status)) }
        if let signal = ending.signal { data["signal"] = .number(Double(signal)) }
        if !lines.isEmpty { data["stderr"] = .array(lines.map(JSONValue.string)) }
        tracker.close(ResponseError(code: .connectionClosed, message: message, data: .object(data)))
    }

    public func send<Request: RequestType>(_ request: Request) async throws(ResponseError) -> Request.Response {
        try await tracker.send(request)
    }

    public func events() -> AsyncStream<HostEvent> {
        tracker.events()
    }

    /// Sends a request by name and returns its raw result (for clients that keep the host's JSON
    /// as it came, e.g. the gallery).
    package func call(method: String, params: JSONValue) async throws(ResponseError) -> JSONValue {
        try await tracker.call(method: method, params: params)
    }

    /// Sends a notification by name; false when the process is gone.
    package func notify(method: String, params: JSONValue?) async -> Bool {
        tracker.notify(method: method, params: params)
    }

    /// The child's last lines on standard error (with `.capture`), oldest first.
    public var recentStandardError: [String] { stderrTail?.lines ?? [] }

    /// `shutdown`, `exit`, then waits (up to 5 s, then kills) for the process to end.
    public func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        if !tracker.isClosed {
            _ = try? await tracker.send(ShutdownRequest())
            tracker.notify(method: ContextProtocol.ExitNotification.method, params: nil)
        }
        input.close()
        var waited = 0
        while !tracker.isClosed {
            if waited == 5000 { kill(processID, SIGKILL) }
            try? await Task.sleep(for: .milliseconds(1))
            waited += 1
        }
    }

    deinit {
        input.close()
    }

    // MARK: Process plumbing

    private static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    private static func pipe(_ fds: inout [Int32]) -> Bool {
        fds.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, systemPipe(base) == 0 else { return false }
            _ = fcntl(buffer[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(buffer[1], F_SETFD, FD_CLOEXEC)
            return true
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    fileprivate static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// The longest message read from the host (its own cap on what it sends is 16 MiB by default).
    static let maximumMessageBytes = 256 << 20

    /// Reads newline-delimited messages until end of file; nil then, or why it stopped early (a
    /// message longer than `maximumMessageBytes`: the connection is given up rather than memory).
    private static func readLoop(fd: Int32, into tracker: RequestTracker) -> String? {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            pending.append(contentsOf: chunk[0..<count])
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                if newline > start { tracker.receive(Array(pending[start..<newline])) }
                start = newline + 1
            }
            pending.removeFirst(start)
            if pending.count > maximumMessageBytes {
                return "sent a message longer than \(maximumMessageBytes) bytes without a line break; the client closed the connection"
            }
        }
    }

    /// How the child ended.
    private struct Ending {
        var status: Int32?
        var signal: Int32?
        var text: String {
            if let signal { return "was killed by signal \(signal)" }
            if let status { return status == 0 ? "exited" : "exited with status \(status)" }
            return "closed its output"
        }
    }

    /// Waits for the child (it closed its output, so it is ending).
    private static func reap(_ pid: pid_t) -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return Ending() }
        }
        // WIFEXITED / WTERMSIG by hand (the C macros are not imported).
        let signal = status & 0x7F
        if signal == 0 { return Ending(status: (status >> 8) & 0xFF) }
        return Ending(signal: signal)
    }
}

/// The write end of the child's standard input: one writer at a time, so messages never
/// interleave; closed once.
private final class InputPipe: Sendable {
    private let fd: Int32
    /// Whether it is closed (or a write failed).
    private let closed = Mutex(false)

    init(fd: Int32) { self.fd = fd }

    func write(_ bytes: [UInt8]) -> Bool {
        closed.withLock { closed in
            if closed { return false }
            if !ContextHostClient.writeAll(fd, bytes) {
                closed = true
                closeFD(fd)
            }
            return !closed
        }
    }

    func close() {
        closed.withLock { closed in
            if !closed { closeFD(fd) }
            closed = true
        }
    }
}

/// The child's last stderr lines, read on a background queue.
private final class StderrTail: Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var ended = false
    }

    private let fd: Int32
    private let state = Mutex(State())
    private static let keep = 20
    private static let longestLine = 2000

    init(fd: Int32) { self.fd = fd }

    var lines: [String] { state.withLock { $0.lines } }

    func start() {
        DispatchQueue(label: "context-host-client.stderr").async { [self] in
            var chunk = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                state.withLock { state in
                    for byte in chunk[0..<count] {
                        if byte == 0x0A {
                            state.lines.append(String(decoding: state.partial, as: UTF8.self))
                            if state.lines.count > Self.keep { state.lines.removeFirst() }
                            state.partial.removeAll(keepingCapacity: true)
                        } else if state.partial.count < Self.longestLine {
                            state.partial.append(byte)
                        }
                    }
                }
            }
            closeFD(fd)
            state.withLock { $0.ended = true }
        }
    }

    func waitForEnd(milliseconds: Int) {
        for _ in 0..<milliseconds {
            if state.withLock({ $0.ended }) { return }
            usleep(1000)
        }
    }
}

/// The C `close`, under a name no method hides.
private func closeFD(_ fd: Int32) {
    _ = close(fd)
}

/// The C `pipe`, under a name no method hides.
private func systemPipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 {
    pipe(fds)
}
