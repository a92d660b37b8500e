import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A change in a supervised provider's status that the registry and the client should see.
package enum SupervisionEvent: Sendable {
    /// Crashed too often; no more restarts until `providers/retry`.
    case quarantined(Unavailability)
    /// Back in service after `providers/retry`.
    case recovered
    /// A worker started and opened the provider (a cold start, a restart after a crash or an idle
    /// stop, or a retry); the host refreshes the provider's metadata then (docs/protocol.md).
    case started
}

/// Where a provider's worker is, as `providers/list` shows it (`worker`).
package enum WorkerState: String, Sendable {
    /// No worker: none was needed yet, or it stopped when idle. The next request starts one.
    case stopped
    /// A worker is starting (waiting for a start slot, spawning, opening the provider).
    case starting
    /// A worker serves the provider.
    case running
    /// The worker was idle and is exiting; a request now waits for a new one.
    case stopping
    /// The worker crashed; a new one starts after the backoff.
    case restarting
    /// Crashed too often; requests are refused until `providers/retry`.
    case quarantined
}

/// Bounds how many workers start at once (start-up storms, docs/security.md §4): each start
/// takes a slot; the others wait in the order they came, and run on the thread that frees a slot.
/// One per registry, shared by its worker connections.
package final class WorkerStartLimiter: Sendable {
    /// How many starts may run at once.
    package let limit: Int
    private struct State {
        var active = 0
        var waiting: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())

    /// A limiter allowing `limit` (at least 1) starts at once.
    package init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` on a thread of its own once a slot is free (at once if one is).
    package func run(_ work: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.active < limit {
                state.active += 1
                return true
            }
            state.waiting.append(work)
            return false
        }
        guard now else { return }
        startThread(name: "worker-start") { [self] in
            var job = work
            while true {
                job()
                let next = state.withLock { state -> (@Sendable () -> Void)? in
                    guard !state.waiting.isEmpty else {
                        state.active -= 1
                        return nil
                    }
                    return state.waiting.removeFirst()
                }
                guard let next else { break }
                job = next
            }
        }
    }
}

/// A provider instance in a `context-host worker` process, supervised: a crashed or hung worker
/// fails the requests it held with `-32016`, is restarted with backoff, and after
/// `maximumCrashes` crashes within `crashWindow` the provider is quarantined (docs/security.md).
///
/// The connection object lives as long as the registry entry; workers come and go behind it.
/// A lazy connection starts its first worker on the first request (through the registry's
/// `WorkerStartLimiter`), and a worker with nothing in flight for `workerIdleTimeout` exits
/// cleanly and is started again by the next request (an idle stop is not a crash). Requests sent
/// while no worker serves wait for one (their timeouts keep running).
package final class WorkerConnection: ProviderConnection, @unchecked Sendable {
    package typealias Completion = @Sendable (ProviderResponse) -> Void

    package let providerID: String
    private let arguments: [String]
    private let libraryPath: String
    private let initJSON: [UInt8]
    private let settings: IsolationConfiguration
    private let maximumReplyBytes: Int
    private let logger: Logger
    private let nextID = Atomic<Int64>(1)
    private let state = Mutex(State())
    private let eventHandler = Mutex<(@Sendable (SupervisionEvent) -> Void)?>(nil)
    /// The worker's environment (scrubbed when sandboxed).
    private let environment: [String]
    private let sandboxed: Bool
    private let sandboxReportState = Mutex<SandboxReport?>(nil)
    /// The running worker's timer (idle stop and CPU watchdog); nil while no worker runs.
    private let timer = Mutex<TimerBox?>(nil)
    /// Where starts queue (shared by the registry's connections).
    private let starts: WorkerStartLimiter
    /// Whether workers start on demand (false: the first one starts in `init`, as before issue 28).
    package let isLazy: Bool

    /// A worker's lifecycle. Every transition happens under `state`'s lock.
    private enum Lifecycle {
        /// No worker; the next request starts one.
        case idle
        /// A worker is being started (queued for a slot, spawning, opening); requests queue.
        case starting
        /// `WorkerProcess` serves requests.
        case running(WorkerProcess)
        /// Idle too long: its stdin was closed and it is exiting; requests queue and start a new one
        /// once it is gone.
        case stopping(WorkerProcess)
        /// Crashed; a restart is scheduled after the backoff; requests queue.
        case restarting
        /// Crashed too often; requests are refused with the reason until `retry`.
        case quarantined(Unavailability)

        /// The worker process, while there is one.
        var worker: WorkerProcess? {
            switch self {
            case .running(let worker), .stopping(let worker): worker
            case .idle, .starting, .restarting, .quarantined: nil
            }
        }

        /// As `providers/list` shows it.
        var publicState: WorkerState {
            switch self {
            case .idle: .stopped
            case .starting: .starting
            case .running: .running
            case .stopping: .stopping
            case .restarting: .restarting
            case .quarantined: .quarantined
            }
        }
    }

    private struct InFlight {
        let completion: Completion
        let method: String
        /// The worker generation it was sent to; nil while it waits for a worker.
        var generation: Int?
        /// The message, kept only while it waits for a worker.
        var message: [UInt8]?
        /// Where the provider's notifications for it go.
        var events: RequestEvents? = nil
    }

    /// A request the host gave up on; the worker must still answer it within the grace period.
    private struct Abandoned {
        let method: String
        let generation: Int
    }

    private struct State {
        var lifecycle = Lifecycle.idle
        /// The generation of the last worker started (or being started).
        var generation = 0
        var inFlight: [Int64: InFlight] = [:]
        var queue: [Int64] = []
        var abandoned: [Int64: Abandoned] = [:]
        var crashes: [ContinuousClock.Instant] = []
        var restarts = 0
        var lastCrash: String?
        /// Requests written to a worker so far (the idle timer compares it between ticks).
        var sent: UInt64 = 0
        /// `sent` at the idle timer's last look, and since when the worker owed nothing.
        var idleMark: UInt64 = 0
        var idleSince = ContinuousClock.now
        /// How many workers started (first starts, restarts, starts after an idle stop).
        var workerStarts = 0
    }

    /// A connection for provider `providerID`. Unless `lazy`, starts the first worker and waits
    /// until the provider is open (throwing what went wrong); a lazy one starts it on the first
    /// request, through `startLimiter` (a private one when nil).
    package init(
        providerID: String, libraryPath: String, sha256: String?, runtime: String? = nil, initJSON: [UInt8],
        configuration: HostConfiguration, logger: Logger, sandbox: WorkerSandboxOptions? = nil,
        lazy: Bool = false, startLimiter: WorkerStartLimiter? = nil
    ) throws(LoadError) {
        self.providerID = providerID
        self.libraryPath = libraryPath
        self.initJSON = initJSON
        self.settings = configuration.isolation
        self.maximumReplyBytes = configuration.maximumMessageBytes
        self.logger = logger
        self.isLazy = lazy
        self.starts = startLimiter ?? WorkerStartLimiter(limit: configuration.isolation.maximumConcurrentStarts)
        guard let executable = Self.workerExecutable(configuration) else {
            throw LoadError(
                code: "worker-unavailable",
                message: "Provider '\(providerID)' needs process isolation, but the context-host executable to run as its worker was not found.",
                hint: "Set HostConfiguration.isolation.workerExecutable to the context-host binary, or allow in-process loading (--isolation in-process) for trusted providers.")
        }
        var invocation = WorkerInvocation(libraryPath: libraryPath)
        invocation.parentPID = getpid()
        invocation.providerID = providerID
        invocation.sha256 = sha256
        invocation.runtime = runtime
        invocation.allowOutsideLibraryPaths = configuration.allowOutsideLibraryPaths
        invocation.memoryLimit = settings.workerMemoryLimit
        invocation.sandbox = sandbox
        self.arguments = [executable, "worker"] + invocation.arguments
        self.sandboxed = sandbox != nil
        // The `environment` layer: an allow-list (the worker checks it and reports the layer);
        // `CONTEXT_HOST_SANDBOX_DISABLE=environment` (tests) passes the host's, as `--sandbox off` does.
        if let sandbox, !sandbox.isDisabled("environment") {
            self.environment = WorkerProcess.scrubbedEnvironment(dataDirectory: sandbox.dataDirectory)
        } else {
            self.environment = WorkerProcess.hostEnvironment()
        }
        Self.ignoreBrokenPipes()
        guard !lazy else { return }
        let started = try startWorker(generation: 0).get()
        state.withLock { state in
            state.lifecycle = .running(started.worker)
            state.workerStarts = 1
            state.idleSince = .now
        }
        startReading(started.worker, started.reader)
        startTimer(for: started.worker)
    }

    /// Where the host's `context-host` executable is.
    private static func workerExecutable(_ configuration: HostConfiguration) -> String? {
        if let explicit = configuration.isolation.workerExecutable { return explicit }
        if let running = RunningExecutable.contextHost { return running }
        if let directory = configuration.executableDirectory, access(directory + "/context-host", X_OK) == 0 {
            return directory + "/context-host"
        }
        return nil
    }

    /// Writing to a dead worker must fail with EPIPE, not kill the host.
    private static let ignoreBrokenPipesOnce: Void = { signal(SIGPIPE, SIG_IGN) }()
    private static func ignoreBrokenPipes() { _ = ignoreBrokenPipesOnce }

    /// Called with status changes (quarantined, recovered); the host updates its registry and
    /// tells the client.
    package func setEventHandler(_ handler: @escaping @Sendable (SupervisionEvent) -> Void) {
        eventHandler.withLock { $0 = handler }
    }

    private func emit(_ event: SupervisionEvent) {
        let handler = eventHandler.withLock { $0 }
        handler?(event)
    }

    // MARK: Status

    /// The running worker's pid, if one is running.
    package var workerPID: Int32? {
        state.withLock { state in
            if case .running(let worker) = state.lifecycle { return worker.pid }
            return nil
        }
    }
    /// Where the worker is (stopped, starting, running…).
    package var workerState: WorkerState { state.withLock { $0.lifecycle.publicState } }
    /// How many times a worker was restarted after a crash.
    package var restarts: Int { state.withLock { $0.restarts } }
    /// How many workers started so far (first starts, restarts, starts after an idle stop).
    package var workerStarts: Int { state.withLock { $0.workerStarts } }
    /// Crashes (and failed starts) within the crash window, as counted towards quarantine.
    package var recentCrashes: Int {
        let window = settings.crashWindow
        return state.withLock { state in
            let now = ContinuousClock.now
            return state.crashes.filter { now - $0 < window }.count
        }
    }
    /// The last crash, in words.
    package var lastCrash: String? { state.withLock { $0.lastCrash } }
    /// Whether workers run in the sandbox (`--sandbox` is not `off`).
    package var isSandboxed: Bool { sandboxed }
    /// What the worker's sandbox enforces (from its last start); nil when not sandboxed or before
    /// the first worker started.
    package var sandboxReport: SandboxReport? {
        guard var report = sandboxReportState.withLock({ $0 }) else { return nil }
        // The layer the host enforces from outside (the worker reports `environment` itself).
        if settings.idleCPUBudget != nil {
            report.enforced.append("cpu-watchdog")
        } else {
            report.missing.append(.init(layer: "cpu-watchdog", reason: "no CPU budget configured"))
        }
        return report
    }
    /// Why the provider is quarantined, if it is.
    package var quarantine: Unavailability? {
        state.withLock { state in
            if case .quarantined(let reason) = state.lifecycle { return reason }
            return nil
        }
    }

    // MARK: Starting workers

    private struct Started: @unchecked Sendable {
        var worker: WorkerProcess
        var reader: FrameReader
    }

    /// Spawns a worker, sends the init JSON and waits for the provider to open.
    private func startWorker(generation: Int) -> Result<Started, LoadError> {
        let worker: WorkerProcess
        switch WorkerProcess.spawn(arguments: arguments, environment: environment, generation: generation, label: providerID, logger: logger) {
        case .failure(let error): return .failure(error)
        case .success(let process): worker = process
        }
        var reader = FrameReader(fd: worker.output)
        let sent = worker.writeNow(WorkerFrame.encode(tag: 0, payload: initJSON))
        let event: FrameReader.Event = sent
            ? reader.next(maximumPayload: 1 << 20, deadline: .now + settings.startTimeout)
            : .endOfStream
        if case .frame(0, let payload) = event, let answer = try? JSONValue(parsing: payload) {
            if let report = SandboxReport(json: answer["sandbox"]) {
                sandboxReportState.withLock { $0 = report }
                if answer["ok"]?.boolValue == true, !report.missing.isEmpty, generation == 0 {
                    logger.notice("Provider \(providerID): sandbox \(report.policy): \(report.summary).")
                }
            }
            if answer["ok"]?.boolValue == true {
                worker.resetIdleCPU()
                return .success(Started(worker: worker, reader: reader))
            }
            if let error = answer["error"] {
                _ = worker.reap()
                return .failure(LoadError(
                    code: error["code"]?.stringValue ?? "provider-open-failed",
                    message: error["message"]?.stringValue ?? "The provider failed to open.",
                    hint: error["hint"]?.stringValue ?? "Check the provider's settings."))
            }
        }
        if case .timedOut = event {
            worker.kill(.startTimeout)
            _ = worker.reap()
            return .failure(LoadError(
                code: "worker-start-timeout",
                message: "The worker for '\(providerID)' did not finish loading '\(libraryPath)' within \(settings.startTimeout.milliseconds) ms.",
                hint: "The provider blocks while loading or opening; fix it, or check its stderr (in the host's log)."))
        }
        if case .endOfStream = event {} else { worker.kill(.protocolViolation("no valid answer to open")) }
        let exit = worker.reap()
        let tail = worker.stderrTail
        let how = worker.killReason.withLock { $0 } == nil ? exit.description : "its answer to open was not valid"
        return .failure(LoadError(
            code: "worker-crashed-on-load",
            message: "The worker for '\(providerID)' died while loading '\(libraryPath)' (\(how))."
                + (tail.isEmpty ? "" : " Last stderr: \(tail.suffix(3).joined(separator: " | "))"),
            hint: "The library crashes when it is loaded or opened; fix the provider (all its stderr is in the host's log), or remove its manifest."))
    }

    private func startReading(_ worker: WorkerProcess, _ reader: FrameReader) {
        let started = Started(worker: worker, reader: reader)
        let limit = maximumReplyBytes
        // Holds the connection weakly: a connection dropped by the registry kills its worker.
        startThread(name: "worker-replies") { [weak self] in
            var reader = started.reader
            readLoop: while true {
                let event = reader.next(maximumPayload: limit)
                guard let self else {
                    worker.kill(nil)
                    break readLoop
                }
                switch event {
                case .frame(let tag, let payload):
                    if tag > 0 { handleReply(tag: tag, payload: payload, from: worker) }
                case .oversized(let tag, let length):
                    if let entry = take(tag, from: worker) {
                        Self.fail(entry.completion, ReplyRouter.tooLarge(length, limit: limit))
                    }
                case .endOfStream, .timedOut:
                    break readLoop
                case .malformed(let reason):
                    worker.kill(.protocolViolation(reason))
                    break readLoop
                }
            }
            let exit = worker.reap()
            self?.handleDeath(of: worker, exit: exit)
        }
    }

    /// Stops the worker for good (the host that owns this connection is closing): its input is
    /// closed and, if it lingers, it is killed; nothing is restarted and it is not a crash.
    /// Requests still in flight are answered as lost.
    package func terminate() {
        let worker = state.withLock { state -> WorkerProcess? in
            guard case .running(let worker) = state.lifecycle else { return nil }
            state.lifecycle = .stopping(worker)
            state.queue.removeAll()
            return worker
        }
        guard let worker else { return }
        stopTimer(for: worker)
        worker.closeInput()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) { worker.kill(nil) }
    }

    deinit {
        timer.withLock { $0 }?.timer.cancel()
        state.withLock { $0.lifecycle.worker }?.kill(nil)
    }

    /// Removes the request `tag` if it was sent to this worker; a late answer to a request the host
    /// gave up on just proves the worker is alive.
    private func take(_ tag: Int64, from worker: WorkerProcess) -> InFlight? {
        state.withLock { state in
            if let entry = state.inFlight[tag], entry.generation == worker.generation {
                state.inFlight[tag] = nil
                return entry
            }
            state.abandoned[tag] = nil
            return nil
        }
    }

    private func handleReply(tag: Int64, payload: [UInt8], from worker: WorkerProcess) {
        // A notification before the response (`$/progress`, `$/log`), relayed with the request's tag.
        if payload.withUnsafeBytes({ RequestEvents.isNotification($0) }) {
            let events = state.withLock { state -> RequestEvents? in
                guard let entry = state.inFlight[tag], entry.generation == worker.generation else { return nil }
                return entry.events
            }
            payload.withUnsafeBytes { events?.receive($0) }
            return
        }
        // A request to the host (`host/fetch`), answered with a tag-0 frame (passed to `call`).
        if payload.withUnsafeBytes({ RequestEvents.isHostRequest($0) }) {
            let events = state.withLock { state -> RequestEvents? in
                guard let entry = state.inFlight[tag], entry.generation == worker.generation else { return nil }
                return entry.events
            }
            payload.withUnsafeBytes { events?.receiveHostRequest($0) }
            return
        }
        guard let entry = take(tag, from: worker) else {
            logger.debug("Provider \(providerID): dropped a late or unknown answer (tag \(tag)).")
            return
        }
        payload.withUnsafeBytes { ReplyRouter.deliver($0, to: entry.completion, expectedID: tag) }
    }

    private static func fail(_ completion: Completion, _ error: RPCError) {
        let empty: [UInt8] = []
        empty.withUnsafeBytes { completion(ProviderResponse(bytes: $0, result: nil, error: error, errorIsFromHost: true)) }
    }

    // MARK: Requests

    @discardableResult
    package func send(method: String, params: ParamsWriter, completion: @escaping Completion) -> Int64 {
        send(method: method, params: params, events: nil, completion: completion)
    }

    @discardableResult
    package func send(method: String, params: ParamsWriter, events: RequestEvents?, completion: @escaping Completion) -> Int64 {
        events?.setResponder(self)
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let message = ProviderMessage.request(id: id, method: method, params: params)
        enum Route {
            case write(WorkerProcess)
            case wait
            case start(generation: Int)
            case refuse(Unavailability)
        }
        let route = state.withLock { state -> Route in
            switch state.lifecycle {
            case .quarantined(let reason):
                return .refuse(reason)
            case .running(let worker):
                state.inFlight[id] = InFlight(completion: completion, method: method, generation: worker.generation, events: events)
                state.sent &+= 1
                return .write(worker)
            case .idle:
                state.inFlight[id] = InFlight(completion: completion, method: method, generation: nil, message: message, events: events)
                state.queue.append(id)
                state.lifecycle = .starting
                state.generation += 1
                return .start(generation: state.generation)
            case .starting, .stopping, .restarting:
                state.inFlight[id] = InFlight(completion: completion, method: method, generation: nil, message: message, events: events)
                state.queue.append(id)
                return .wait
            }
        }
        switch route {
        case .write(let worker):
            worker.write(WorkerFrame.encode(tag: id, payload: message))
        case .wait:
            break
        case .start(let generation):
            launch(generation: generation, countAsRestart: false)
        case .refuse(let reason):
            Self.fail(completion, unavailableError(reason))
        }
        return id
    }

    /// The host's answer to a provider's host request: a tag-0 frame, which the worker passes to
    /// `call` without a reply callback. Dropped when no worker runs (the request it belongs to
    /// is then lost anyway).
    package func answerProviderRequest(_ message: [UInt8]) {
        guard let worker = state.withLock({ state -> WorkerProcess? in
            if case .running(let worker) = state.lifecycle { return worker }
            return nil
        }) else { return }
        worker.write(WorkerFrame.encode(tag: 0, payload: message))
    }

        package func cancel(_ id: Int64) { stop(id, timedOut: false) }

    package func timedOut(_ id: Int64) { stop(id, timedOut: true) }

    /// Answers `id` with -32800, tells the worker to stop it, and kills the worker if it does not
    /// answer within the grace period. A request still waiting for a worker just leaves the queue
    /// (the worker being started for it keeps starting, and later stops when idle).
    private func stop(_ id: Int64, timedOut: Bool) {
        let found = state.withLock { state -> (InFlight, WorkerProcess?)? in
            guard let entry = state.inFlight.removeValue(forKey: id) else { return nil }
            guard let generation = entry.generation, case .running(let worker) = state.lifecycle, worker.generation == generation else {
                state.queue.removeAll { $0 == id }
                return (entry, nil)
            }
            state.abandoned[id] = Abandoned(method: entry.method, generation: generation)
            return (entry, worker)
        }
        guard let (entry, worker) = found else { return }
        if let worker {
            worker.write(WorkerFrame.encode(tag: 0, payload: ProviderMessage.cancel(id: id)))
            let grace = settings.cancelGrace
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(grace.milliseconds)) { [weak self] in
                guard let self else { return }
                let hung = state.withLock { state -> Bool in
                    guard let abandoned = state.abandoned.removeValue(forKey: id) else { return false }
                    return abandoned.generation == worker.generation
                }
                if hung {
                    logger.warning("Provider \(providerID): \(entry.method) did not stop within \(grace.milliseconds) ms of its \(timedOut ? "timeout" : "cancellation"); killing worker \(worker.pid).")
                    worker.kill(.hung(method: entry.method, afterTimeout: timedOut, graceMs: grace.milliseconds))
                }
            }
        }
        Self.fail(entry.completion, RPCError(.requestCancelled, "Request cancelled"))
    }

    // MARK: Starting on demand

    /// Starts worker `generation` through the start limiter (the connection is `starting`).
    private func launch(generation: Int, countAsRestart: Bool) {
        starts.run { [weak self] in self?.start(generation: generation, countAsRestart: countAsRestart) }
    }

    /// Spawns and opens worker `generation`, then serves what waited; a failure is counted once
    /// (like a crash) and reported to every request that waited.
    private func start(generation: Int, countAsRestart: Bool) {
        let wanted = state.withLock { state -> Bool in
            if case .starting = state.lifecycle, state.generation == generation { return true }
            return false
        }
        guard wanted else { return }
        switch startWorker(generation: generation) {
        case .success(let started):
            guard let frames = install(started.worker, countAsRestart: countAsRestart) else {
                started.worker.kill(nil)
                _ = started.worker.reap()
                return
            }
            startReading(started.worker, started.reader)
            for frame in frames { started.worker.write(frame) }
            startTimer(for: started.worker)
            logger.debug("Provider \(providerID): worker started (pid \(started.worker.pid)).")
            if countAsRestart { logger.notice("Provider \(providerID): worker restarted (pid \(started.worker.pid)).") }
            emit(.started)
        case .failure(let error):
            logger.warning("Provider \(providerID): its worker failed to start: \(error)")
            var waiting: [InFlight] = []
            let decision = state.withLock { state -> Decision in
                guard case .starting = state.lifecycle, state.generation == generation else { return .ignore }
                // Every request that waited for this worker learns why it did not start.
                waiting = state.queue.compactMap { state.inFlight.removeValue(forKey: $0) }
                state.queue = []
                let decision = recordCrash(&state, summary: "failed to start: \(error.message)")
                if case .restart = decision, isLazy { state.lifecycle = .idle }
                return decision
            }
            let quarantined: Bool
            if case .quarantine = decision { quarantined = true } else { quarantined = false }
            for entry in waiting { Self.fail(entry.completion, startError(error, method: entry.method, quarantined: quarantined)) }
            switch decision {
            case .restart(let backoff) where !isLazy:
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(backoff.milliseconds)) { [weak self] in self?.restart() }
            case .quarantine(let reason, let others):
                for entry in others { Self.fail(entry.completion, unavailableError(reason)) }
                emit(.quarantined(reason))
            case .restart, .ignore:
                break
            }
        }
    }

    /// The error a request that waited for a worker gets when the worker did not start.
    private func startError(_ error: LoadError, method: String, quarantined: Bool) -> RPCError {
        let crashed = error.code == "worker-crashed-on-load" || error.code == "worker-start-timeout"
        let outcome = quarantined
            ? "it is now quarantined; call providers/retry to try again"
            : (isLazy ? "the next request starts a new worker" : "its worker is being restarted")
        return RPCError(
            crashed ? .providerCrashed : .providerLoadFailed,
            "Provider '\(providerID)' could not start its worker for \(method): \(error.message) (\(outcome)).",
            data: [
                "providerId": .string(providerID), "method": .string(method), "cause": "start", "code": .string(error.code),
                "hint": .string(error.hint), "quarantined": .bool(quarantined), "restarting": .bool(!quarantined && !isLazy),
            ])
    }

    /// Makes `worker` the running one and returns the frames of the requests that waited, or nil
    /// if the connection is no longer starting this generation.
    private func install(_ worker: WorkerProcess, countAsRestart: Bool) -> [[UInt8]]? {
        state.withLock { state -> [[UInt8]]? in
            guard case .starting = state.lifecycle, state.generation == worker.generation else { return nil }
            state.lifecycle = .running(worker)
            state.workerStarts += 1
            if countAsRestart { state.restarts += 1 }
            state.idleSince = .now
            var frames: [[UInt8]] = []
            for id in state.queue {
                guard var entry = state.inFlight[id], let message = entry.message else { continue }
                frames.append(WorkerFrame.encode(tag: id, payload: message))
                entry.message = nil
                entry.generation = worker.generation
                state.inFlight[id] = entry
            }
            state.sent &+= UInt64(frames.count)
            state.queue = []
            return frames
        }
    }

    // MARK: Crashes

    private enum Decision {
        case ignore
        case restart(after: Duration)
        case quarantine(Unavailability, waiting: [InFlight])
    }

    /// Records a crash; returns whether to restart or quarantine. Called with the lock held.
    private func recordCrash(_ state: inout State, summary: String) -> Decision {
        let now = ContinuousClock.now
        state.crashes = state.crashes.filter { now - $0 < settings.crashWindow } + [now]
        state.lastCrash = summary
        if state.crashes.count >= settings.maximumCrashes {
            let reason = Unavailability(
                code: "quarantined",
                message: "It crashed \(state.crashes.count) times in \(Self.words(settings.crashWindow)) (last: \(summary)) and is quarantined; call providers/retry to try again.")
            state.lifecycle = .quarantined(reason)
            let waiting = state.queue.compactMap { state.inFlight.removeValue(forKey: $0) }
            state.queue = []
            return .quarantine(reason, waiting: waiting)
        }
        state.lifecycle = .restarting
        let exponent = min(state.crashes.count - 1, 30)
        let backoff = min(settings.initialBackoff * (1 << exponent), settings.maximumBackoff)
        return .restart(after: backoff)
    }

    private func handleDeath(of worker: WorkerProcess, exit: WorkerExit) {
        stopTimer(for: worker)
        let killReason = worker.killReason.withLock { $0 }
        let tail = worker.stderrTail
        var lost: [InFlight] = []
        enum Ending {
            case crash(Decision)
            /// An idle stop finished; start again at once if requests came meanwhile.
            case idleStop(restart: Int?)
            case ignore
        }
        let ending = state.withLock { state -> Ending in
            switch state.lifecycle {
            case .stopping(let current) where current === worker:
                // Asked to exit: not a crash, whatever its exit status.
                for (id, entry) in state.inFlight where entry.generation == worker.generation {
                    lost.append(entry)
                    state.inFlight[id] = nil
                }
                state.abandoned = state.abandoned.filter { $0.value.generation != worker.generation }
                guard !state.queue.isEmpty else {
                    state.lifecycle = .idle
                    return .idleStop(restart: nil)
                }
                state.lifecycle = .starting
                state.generation += 1
                return .idleStop(restart: state.generation)
            case .running(let current) where current === worker:
                break
            default:
                return .ignore
            }
            for (id, entry) in state.inFlight where entry.generation == worker.generation {
                lost.append(entry)
                state.inFlight[id] = nil
            }
            state.abandoned = state.abandoned.filter { $0.value.generation != worker.generation }
            let summary: String
            switch killReason {
            case .hung(let method, let afterTimeout, _)?:
                summary = "killed after \(method) \(afterTimeout ? "timed out" : "was cancelled") and did not stop"
            case .protocolViolation(let reason)?:
                summary = "killed for breaking the worker protocol (\(reason))"
            case .cpu(let seconds, let budget)?:
                summary = "killed for using \(Self.seconds(seconds)) of CPU while it owed no answer (budget \(Self.seconds(budget)))"
            case .startTimeout?, nil:
                summary = "\(exit.description)" + (lost.first.map { " in \($0.method)" } ?? " while idle")
            }
            return .crash(recordCrash(&state, summary: summary))
        }
        let decision: Decision
        switch ending {
        case .ignore:
            return
        case .idleStop(let generation):
            logger.debug("Provider \(providerID): idle worker \(worker.pid) stopped (\(exit.description)).")
            for entry in lost {
                Self.fail(entry.completion, RPCError(
                    .providerCrashed, "Provider '\(providerID)' lost \(entry.method): its worker stopped; send the request again.",
                    data: ["providerId": .string(providerID), "method": .string(entry.method), "cause": "stopped"]))
            }
            if let generation { launch(generation: generation, countAsRestart: false) }
            return
        case .crash(let made):
            decision = made
        }
        var outcome = ""
        switch decision {
        case .restart(let backoff):
            outcome = "its worker is being restarted"
            logger.warning("Provider \(providerID): worker \(worker.pid) ended (\(exit.description)); restarting in \(backoff.milliseconds) ms.")
        case .quarantine(let reason, _):
            outcome = "it is now quarantined; call providers/retry to try again"
            logger.error("Provider \(providerID): \(reason.message)")
        case .ignore:
            break
        }
        for entry in lost {
            Self.fail(entry.completion, crashError(method: entry.method, exit: exit, kill: killReason, tail: tail, outcome: outcome, decision: decision))
        }
        switch decision {
        case .restart(let backoff):
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(backoff.milliseconds)) { [weak self] in self?.restart() }
        case .quarantine(let reason, let waiting):
            for entry in waiting { Self.fail(entry.completion, unavailableError(reason)) }
            emit(.quarantined(reason))
        case .ignore:
            break
        }
    }

    private func unavailableError(_ reason: Unavailability) -> RPCError {
        RPCError(
            .providerUnavailable, "Provider '\(providerID)' is unavailable: \(reason.message)",
            data: ["providerId": .string(providerID), "reason": reason.json])
    }

    private func crashError(method: String, exit: WorkerExit, kill: KillReason?, tail: [String], outcome: String, decision: Decision) -> RPCError {
        var data: JSONObject = ["providerId": .string(providerID), "method": .string(method)]
        let what: String
        switch kill {
        case .hung(let hungMethod, let afterTimeout, let graceMs)?:
            what = "was killed after \(hungMethod) \(afterTimeout ? "timed out" : "was cancelled") and did not stop within \(graceMs) ms, losing this \(method) request"
            data["cause"] = "hung"
        case .protocolViolation(let reason)?:
            what = "was killed while handling \(method) because its worker broke the host protocol (\(reason))"
            data["cause"] = "protocol"
        case .cpu(let seconds, let budget)?:
            what = "was killed for using \(Self.seconds(seconds)) of CPU while it owed no answer (budget \(Self.seconds(budget))), losing this \(method) request"
            data["cause"] = "cpu"
        case .startTimeout?, nil:
            what = "crashed (\(exit.description)) while handling \(method)"
            data["cause"] = "crash"
        }
        if let signal = exit.signal { data["signal"] = .string(WorkerExit.signalName(signal)) }
        if let code = exit.exitCode { data["exitCode"] = .number(Double(code)) }
        data["stderrTail"] = .array(tail.map(JSONValue.string))
        if case .quarantine = decision {
            data["quarantined"] = true
            data["restarting"] = false
        } else {
            data["quarantined"] = false
            data["restarting"] = true
        }
        return RPCError(.providerCrashed, "Provider '\(providerID)' \(what); \(outcome).", data: .object(data))
    }

    /// Starts a new worker after a crash's backoff and sends it the requests that waited.
    private func restart() {
        let generation = state.withLock { state -> Int? in
            guard case .restarting = state.lifecycle else { return nil }
            state.lifecycle = .starting
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        launch(generation: generation, countAsRestart: true)
    }

    // MARK: Quarantine

    /// Leaves quarantine: forgets the crash history and starts a worker. Returns false if the
    /// provider was not quarantined. Throws (and stays quarantined) if the worker cannot start.
    @discardableResult
    package func retry() throws(LoadError) -> Bool {
        let generation = state.withLock { state -> Int? in
            guard case .quarantined = state.lifecycle else { return nil }
            state.lifecycle = .starting
            state.crashes = []
            state.generation += 1
            return state.generation
        }
        guard let generation else { return false }
        switch startWorker(generation: generation) {
        case .success(let started):
            guard let frames = install(started.worker, countAsRestart: false) else {
                started.worker.kill(nil)
                _ = started.worker.reap()
                return false
            }
            startReading(started.worker, started.reader)
            for frame in frames { started.worker.write(frame) }
            startTimer(for: started.worker)
            logger.notice("Provider \(providerID): out of quarantine (worker pid \(started.worker.pid)).")
            emit(.recovered)
            emit(.started)
            return true
        case .failure(let error):
            state.withLock { state in
                state.lifecycle = .quarantined(Unavailability(
                    code: "quarantined", message: "It is quarantined, and the last retry failed: \(error.message) Call providers/retry to try again."))
            }
            throw error
        }
    }

    /// "2.5 s".
    private static func seconds(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) s"
    }

    // MARK: Idle stop and CPU watchdog

    /// While `worker` runs, a timer looks at it every quarter of the idle timeout (at most every
    /// 250 ms): a worker with nothing in flight and no request since the last look for
    /// `workerIdleTimeout` is stopped cleanly (its stdin closed; killed if it lingers); and one
    /// that owes no answer and has used more than `idleCPUBudget` of CPU (all its processes and
    /// threads) since it last owed one is killed (`cause: "cpu"`) and restarted like a crashed one.
    /// No timer runs while no worker does.
    private func startTimer(for worker: WorkerProcess) {
        let idleTimeout = settings.workerIdleTimeout
        let budgetSeconds = settings.idleCPUBudget.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        guard idleTimeout != nil || budgetSeconds != nil else { return }
        var interval = Duration.milliseconds(250)
        if let idleTimeout { interval = max(.milliseconds(5), min(interval, idleTimeout / 4)) }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        let box = TimerBox(timer, worker: worker)
        timer.schedule(
            deadline: .now() + .milliseconds(interval.milliseconds), repeating: .milliseconds(interval.milliseconds),
            leeway: .milliseconds(max(1, interval.milliseconds / 5)))
        timer.setEventHandler { [weak self, weak box] in
            guard let self, let box else { return }
            tick(box, idleTimeout: idleTimeout, budgetSeconds: budgetSeconds)
        }
        let previous = self.timer.withLock { current -> TimerBox? in
            defer { current = box }
            return current
        }
        previous?.timer.cancel()
        timer.resume()
    }

    /// Stops the timer of `worker`, if it is the current one.
    private func stopTimer(for worker: WorkerProcess) {
        let box = timer.withLock { current -> TimerBox? in
            guard let box = current, box.worker === worker else { return nil }
            current = nil
            return box
        }
        box?.timer.cancel()
    }

    private func tick(_ box: TimerBox, idleTimeout: Duration?, budgetSeconds: Double?) {
        let worker = box.worker
        enum Look {
            case gone
            case watch(owes: Bool)
            case stopIdle
        }
        let look = state.withLock { state -> Look in
            guard case .running(let current) = state.lifecycle, current === worker else { return .gone }
            let owes = state.inFlight.values.contains { $0.generation == worker.generation }
                || state.abandoned.values.contains { $0.generation == worker.generation }
            let now = ContinuousClock.now
            if owes || state.sent != state.idleMark {
                state.idleMark = state.sent
                state.idleSince = now
                return .watch(owes: owes)
            }
            if let idleTimeout, now - state.idleSince >= idleTimeout {
                state.lifecycle = .stopping(worker)
                return .stopIdle
            }
            return .watch(owes: false)
        }
        switch look {
        case .gone:
            stopTimer(for: worker)
        case .stopIdle:
            stopTimer(for: worker)
            logger.debug("Provider \(providerID): worker \(worker.pid) idle for \(idleTimeout?.milliseconds ?? 0) ms; stopping it.")
            worker.closeInput()
            // One that does not exit on end of input is killed (still not a crash: it was stopping).
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(2)) { [weak self] in
                guard let self else { return }
                let lingering = state.withLock { state -> Bool in
                    if case .stopping(let current) = state.lifecycle, current === worker { return true }
                    return false
                }
                if lingering { worker.kill(nil) }
            }
        case .watch(let owes):
            guard let budgetSeconds else { return }
            let used = WorkerProcess.treeCPUSeconds(worker.pid)
            if owes {
                worker.setIdleCPUBaseline(used)
            } else if let spent = worker.idleCPUSpent(used), spent > budgetSeconds {
                logger.warning("Provider \(providerID): worker \(worker.pid) used \(Self.seconds(spent)) of CPU while it owed no answer; killing it.")
                worker.kill(.cpu(seconds: spent, budget: budgetSeconds))
            }
        }
    }

    /// "5 minutes", "90 seconds".
    private static func words(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds >= 60, seconds % 60 == 0 { return seconds == 60 ? "1 minute" : "\(seconds / 60) minutes" }
        if seconds >= 1 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(duration.milliseconds) ms"
    }
}

/// Holds a running worker's timer (DispatchSourceTimer is thread-safe but not marked Sendable).
private final class TimerBox: @unchecked Sendable {
    let timer: DispatchSourceTimer
    /// The worker the timer looks after.
    let worker: WorkerProcess
    init(_ timer: DispatchSourceTimer, worker: WorkerProcess) {
        self.timer = timer
        self.worker = worker
    }
}
