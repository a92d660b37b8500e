import CHostSupport
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a detached thread (used for blocking reads; GCD threads are for short work).
///
/// - Parameter name: the thread's name as tools show it (`top -H`, `perf`, the benchmarks' busiest
///   thread), at most 15 bytes.
package func startThread(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String?
        let body: @Sendable () -> Void
        init(_ name: String?, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let context = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        if let name = box.name { _ = ctxh_name_this_thread(name) }
        box.body()
        return nil
    }, context)
    precondition(status == 0, "pthread_create failed: \(status)")
    pthread_detach(thread)
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\n" }.reversed())
    }
}

/// Spawns worker processes from one long-lived thread.
///
/// Linux sends the parent-death signal when the *thread* that spawned a child exits, not the
/// process; GCD threads come and go, so every spawn happens on this thread, which never exits.
enum WorkerSpawner {
    private static let jobs = Mutex<[@Sendable () -> Void]>([])
    private static let wake = DispatchSemaphore(value: 0)
    private static let thread: Void = {
        startThread {
            while true {
                wake.wait()
                let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                job?()
            }
        }
    }()

    /// Runs `body` on the spawner thread and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        _ = thread
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        jobs.withLock {
            $0.append {
                let value = body()
                result.withLock { $0 = value }
                done.signal()
            }
        }
        wake.signal()
        done.wait()
        return result.withLock { $0! }
    }
}

/// How a worker process ended.
package struct WorkerExit: Sendable, Equatable {
    package var signal: Int32?
    package var exitCode: Int32?

    init(status: Int32) {
        if status & 0x7f == 0 {
            exitCode = (status >> 8) & 0xff
        } else {
            signal = status & 0x7f
        }
    }

    /// "SIGSEGV", "signal 42" or "exit code 3".
    package var description: String {
        if let signal { return Self.signalName(signal) }
        return "exit code \(exitCode ?? 0)"
    }

    package static func signalName(_ signal: Int32) -> String {
        ctxh_signal_name(signal).map { String(cString: $0) } ?? "signal \(signal)"
    }
}

/// Why the host killed a worker.
package enum KillReason: Sendable, Equatable {
    /// A request was not answered within the cancel grace period after its timeout or cancellation.
    case hung(method: String, afterTimeout: Bool, graceMs: Int)
    /// The worker broke the frame protocol.
    case protocolViolation(String)
    /// The worker did not finish loading in time.
    case startTimeout
    /// The worker used more than its CPU budget while it owed no answer (seconds used, budget).
    case cpu(seconds: Double, budget: Double)
}

/// One `context-host worker` process: its pipes, its stderr tail, and how to stop it.
package final class WorkerProcess: Sendable {
    package let pid: pid_t
    /// The worker's stdin (host writes frames here).
    let input: Int32
    /// The worker's protocol output (host reads frames here).
    let output: Int32
    let generation: Int
    private let writer: DispatchQueue
    private let tail = Mutex<[String]>([])
    private let stderrClosed = DispatchSemaphore(value: 0)
    private let reaped = Mutex(false)
    /// Whether the worker's stdin was closed (by `closeInput` or `reap`), so it is closed once.
    /// Set, and the descriptor closed, only while `writing` is held.
    private let inputClosed = Mutex(false)
    /// Held while a frame is written to `input` (by `writer`, or by `write`'s caller inline) and
    /// while `input` is closed.
    private let writing = Mutex(())
    /// Frames handed to `writer` and not yet written: `write` writes on its caller's thread only
    /// when there are none, so frames keep their order.
    private let queuedFrames = Atomic<Int>(0)
    let killReason = Mutex<KillReason?>(nil)
    /// The CPU time (seconds) of the worker's processes when it last owed an answer; nil until
    /// the watchdog's first look.
    private let idleBaseline = Mutex<Double?>(nil)
    /// The host's end of the worker's host-request pipe (its fd 3), when it has one.
    private let hostRequests: Mutex<HostRequestChannel>

    /// Where the host's end of the host-request pipe is: not read yet, read by an event loop, or
    /// closed (by `reap`; a stream handed over later is closed at once).
    enum HostRequestChannel {
        case none
        case unread(Int32)
        case reading(any HostRequestStream)
        case closed
    }

    /// The number of stderr lines kept.
    static let tailLines = 20

    private init(pid: pid_t, input: Int32, output: Int32, hostRequests: Int32?, generation: Int, label: String) {
        self.pid = pid
        self.input = input
        self.output = output
        self.hostRequests = Mutex(hostRequests.map(HostRequestChannel.unread) ?? .none)
        self.generation = generation
        self.writer = DispatchQueue(label: "context-host.worker.\(label).writer")
    }

    /// Spawns `arguments[0]` with pipes on fds 0, 1 and 2 (and, with `hostRequestPipe`, one more
    /// on fd 3 that the worker writes its host requests to) and starts draining its stderr.
    static func spawn(
        arguments: [String], environment: [String], generation: Int, label: String, logger: Logger, hostRequestPipe: Bool = false
    ) -> Result<WorkerProcess, LoadError> {
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0], requestPipe: [Int32] = [-1, -1]
        guard ctxh_pipe_cloexec(&stdinPipe) == 0 else { return .failure(spawnError("pipe: \(String(cString: strerror(errno)))")) }
        guard ctxh_pipe_cloexec(&stdoutPipe) == 0 else {
            stdinPipe.forEach { close($0) }
            return .failure(spawnError("pipe: \(String(cString: strerror(errno)))"))
        }
        guard ctxh_pipe_cloexec(&stderrPipe) == 0 else {
            (stdinPipe + stdoutPipe).forEach { close($0) }
            return .failure(spawnError("pipe: \(String(cString: strerror(errno)))"))
        }
        if hostRequestPipe, ctxh_pipe_cloexec(&requestPipe) != 0 {
            (stdinPipe + stdoutPipe + stderrPipe).forEach { close($0) }
            return .failure(spawnError("pipe: \(String(cString: strerror(errno)))"))
        }
        let (childInput, childOutput, childError, childRequests) = (stdinPipe[0], stdoutPipe[1], stderrPipe[1], requestPipe[1])
        let spawned: Result<pid_t, LoadError> = WorkerSpawner.run {
            var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
            cArguments.append(nil)
            defer { cArguments.forEach { free($0) } }
            var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) }
            cEnvironment.append(nil)
            defer { cEnvironment.forEach { free($0) } }
            var pid: pid_t = 0
            let status = ctxh_spawn_with_fd3(arguments[0], &cArguments, &cEnvironment, childInput, childOutput, childError, childRequests, &pid)
            guard status == 0 else { return .failure(spawnError("posix_spawn '\(arguments[0])': \(String(cString: strerror(status)))")) }
            return .success(pid)
        }
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        if hostRequestPipe { close(requestPipe[1]) }
        let pid: pid_t
        switch spawned {
        case .failure(let error):
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            if hostRequestPipe { close(requestPipe[0]) }
            return .failure(error)
        case .success(let value):
            pid = value
        }
        let process = WorkerProcess(
            pid: pid, input: stdinPipe[1], output: stdoutPipe[0], hostRequests: hostRequestPipe ? requestPipe[0] : nil,
            generation: generation, label: label)
        process.drainStandardError(stderrPipe[0], label: label, logger: logger)
        return .success(process)
    }

    /// The host's environment, with Swift's crash backtracer off unless the operator set
    /// SWIFT_BACKTRACE: it takes seconds to symbolicate, holding up the crash report, and its
    /// register dump would fill the stderr tail the client gets.
    static func hostEnvironment() -> [String] {
        var variables: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            variables.append(String(cString: entry))
            pointer += 1
        }
        if !variables.contains(where: { $0.hasPrefix("SWIFT_BACKTRACE=") }) {
            variables.append("SWIFT_BACKTRACE=enable=no")
        }
        return variables
    }

    /// A sandboxed worker's environment: only `LANG`, `LC_*`, `TZ`, `PATH` and `SWIFT_BACKTRACE`
    /// from the host (no tokens, no paths to the user's files), `HOME` = the provider's data folder
    /// and `TMPDIR` = its `tmp` subfolder, and at most two allocator arenas (the address-space cap
    /// counts their reservations).
    static func scrubbedEnvironment(dataDirectory: String?) -> [String] {
        var variables = hostEnvironment().filter { entry in
            let name = entry.prefix { $0 != "=" }
            // The allow-list, less what is set below (the worker checks the result: `WorkerSandbox.checkEnvironment`).
            return WorkerSandbox.isAllowedVariable(name) && name != "HOME" && name != "TMPDIR" && name != "MALLOC_ARENA_MAX"
        }
        if let dataDirectory {
            variables.append("HOME=" + dataDirectory)
            variables.append("TMPDIR=" + dataDirectory + "/tmp")
        }
        variables.append("MALLOC_ARENA_MAX=2")
        return variables
    }

    /// CPU seconds (user + system) used so far by process `pid` and all its descendants (Linux
    /// `/proc`; 0 elsewhere).
    static func treeCPUSeconds(_ pid: pid_t) -> Double {
        #if os(Linux)
            var total = 0.0
            var pending = [pid]
            var seen = 0
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            while let next = pending.popLast(), seen < 4096 {
                seen += 1
                if let stat = try? FileBytes.read("/proc/\(next)/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) {
                    let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
                    // After "pid (comm)": state is field 0; utime and stime are fields 11 and 12.
                    if fields.count > 12, let user = Double(String(decoding: fields[11], as: UTF8.self)),
                        let system = Double(String(decoding: fields[12], as: UTF8.self))
                    {
                        total += (user + system) / ticks
                    }
                }
                if let children = try? FileBytes.read("/proc/\(next)/task/\(next)/children") {
                    for word in children.split(separator: UInt8(ascii: " ")) {
                        if let child = Int32(String(decoding: word, as: UTF8.self).trimmingSpaces) { pending.append(child) }
                    }
                }
            }
            return total
        #else
            return 0
        #endif
    }

    func resetIdleCPU() { idleBaseline.withLock { $0 = nil } }

    func setIdleCPUBaseline(_ used: Double) { idleBaseline.withLock { $0 = used } }

    /// CPU used since the baseline (which the first call sets).
    func idleCPUSpent(_ used: Double) -> Double? {
        idleBaseline.withLock { baseline in
            guard let start = baseline else {
                baseline = used
                return nil
            }
            return used - start
        }
    }

    private static func spawnError(_ reason: String) -> LoadError {
        LoadError(
            code: "worker-spawn-failed", message: "Cannot start a worker process: \(reason).",
            hint: "Check that the context-host executable exists and can run (HostConfiguration.isolation.workerExecutable), or run trusted providers with --isolation in-process.")
    }

    /// Reads stderr until EOF, keeping the last lines and logging each at notice level (the
    /// default), so a provider's warnings reach the operator as they do in-process.
    private func drainStandardError(_ fd: Int32, label: String, logger: Logger) {
        startThread { [self] in
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 8192)
            func emit(_ bytes: ArraySlice<UInt8>) {
                var line = String(decoding: bytes.prefix(1000), as: UTF8.self)
                if line.hasSuffix("\r") { line.removeLast() }
                logger.notice("[\(label) worker \(pid)] \(line)")
                tail.withLock { lines in
                    lines.append(line)
                    if lines.count > Self.tailLines { lines.removeFirst(lines.count - Self.tailLines) }
                }
            }
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: chunk[0..<count])
                while let newline = pending.firstIndex(of: 0x0A) {
                    emit(pending[..<newline])
                    pending.removeSubrange(...newline)
                }
                if pending.count > 64 << 10 {
                    emit(pending[...])
                    pending.removeAll()
                }
            }
            if !pending.isEmpty { emit(pending[...]) }
            close(fd)
            stderrClosed.signal()
        }
    }

    /// The last lines the worker wrote to stderr.
    package var stderrTail: [String] { tail.withLock { $0 } }

    /// Writes a frame to the worker's stdin; never blocks the caller. Written at once on the
    /// caller's thread when that cannot block (`writeInline`), else queued for `writer`: an
    /// answer to a provider's `host/fetch` finished on the HTTP event loop then reaches the worker
    /// without waking another thread first.
    func write(_ frame: [UInt8]) {
        if queuedFrames.load(ordering: .acquiring) == 0, writeInline(frame) { return }
        enqueue { [self] in
            // (Not after `closeInput`: the descriptor number may belong to another file by then.)
            guard !inputClosed.withLock({ $0 }) else { return }
            _ = frame.withUnsafeBytes { writeAll(input, $0) }
        }
    }

    /// Runs `work` on `writer`, holding `writing`, counted in `queuedFrames` until it is done.
    private func enqueue(_ work: @escaping @Sendable () -> Void) {
        queuedFrames.add(1, ordering: .acquiringAndReleasing)
        writer.async { [self] in
            writing.withLock { _ in work() }
            queuedFrames.subtract(1, ordering: .acquiringAndReleasing)
        }
    }

    /// Writes `frame` now if that cannot block, and says whether it did: no frame queued before
    /// it, no other write under way, and the pipe empty (the worker has read everything before)
    /// with room for the whole frame (its size less a page, as a pipe holds whole pages). A
    /// worker that stops reading therefore never blocks the caller (an event loop): its frames
    /// queue for `writer`.
    private func writeInline(_ frame: [UInt8]) -> Bool {
        #if os(Linux)
        let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ
        return writing.withLockIfAvailable { _ -> Bool in
            guard queuedFrames.load(ordering: .acquiring) == 0, !inputClosed.withLock({ $0 }) else { return false }
            let size = fcntl(input, getPipeSize)
            var unread: Int32 = 0
            let queried = withUnsafeMutablePointer(to: &unread) { ioctl(input, UInt(FIONREAD), $0) }
            guard size > 4096, frame.count <= Int(size) - 4096, queried == 0, unread == 0 else { return false }
            _ = frame.withUnsafeBytes { writeAll(input, $0) }
            return true
        } ?? false
        #else
        return false
        #endif
    }

    /// Writes a frame now, on the calling thread (start-up only).
    func writeNow(_ frame: [UInt8]) -> Bool {
        frame.withUnsafeBytes { writeAll(input, $0) }
    }

    /// Closes the worker's stdin, which asks it to exit cleanly (idle stop); harmless once it is
    /// gone. Frames queued before it are still written.
    func closeInput() {
        // (Queued as a frame is: nothing written after this call goes ahead of the close.)
        enqueue { [self] in
            inputClosed.withLock { closed in
                guard !closed else { return }
                closed = true
                close(input)
            }
        }
    }

    /// Kills the worker (SIGKILL), remembering why; harmless once it is gone.
    func kill(_ reason: KillReason?) {
        reaped.withLock { reaped in
            guard !reaped else { return }
            if let reason { killReason.withLock { if $0 == nil { $0 = reason } } }
            _ = Glibc.kill(pid, SIGKILL)
        }
    }

    /// Hands the host's end of the host-request pipe to `start` (which reads it on an event
    /// loop, owning the descriptor from then on); false when there is none or it was closed.
    func readHostRequests(_ start: (Int32) -> (any HostRequestStream)?) -> Bool {
        hostRequests.withLock { channel in
            guard case .unread(let fd) = channel else { return false }
            guard let stream = start(fd) else {
                channel = .closed
                return false
            }
            channel = .reading(stream)
            return true
        }
    }

    /// Whether the worker has a host-request pipe being read.
    var readsHostRequests: Bool {
        hostRequests.withLock { channel in
            if case .reading = channel { return true }
            return false
        }
    }

    /// Stops reading the host-request pipe and closes it (a descendant of the worker that kept
    /// its end open must not keep the stream, and the provider's event loop, alive).
    func closeHostRequests() {
        let previous = hostRequests.withLock { channel -> HostRequestChannel in
            defer { channel = .closed }
            return channel
        }
        switch previous {
        case .unread(let fd): close(fd)
        case .reading(let stream): stream.close()
        case .none, .closed: break
        }
    }

    /// After its protocol output closed: waits for the process to end (killing it if it lingers),
    /// reaps it, waits briefly for the rest of its stderr, and closes the pipes.
    func reap() -> WorkerExit {
        var lingering = 0
        while true {
            let exited = ctxh_child_exited(pid)
            if exited != 0 { break }
            lingering += 1
            if lingering == 100 { kill(nil) }  // closed its output but did not exit within ~200 ms
            usleep(2000)
        }
        var status: Int32 = 0
        reaped.withLock { reaped in
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
        ctxh_sandbox_remove_cgroup(pid)
        _ = stderrClosed.wait(timeout: .now() + .milliseconds(500))
        closeHostRequests()
        close(output)
        closeInput()
        return WorkerExit(status: status)
    }
}
