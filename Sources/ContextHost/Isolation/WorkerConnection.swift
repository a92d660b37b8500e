import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    let arguments: [String]
    let libraryPath: String
    let initJSON: [UInt8]
    let settings: IsolationConfiguration
    let maximumReplyBytes: Int
    let logger: Logger
    let nextID = Atomic<Int64>(1)
    let state = Mutex(State())
    let eventHandler = Mutex<LockedFunction<@Sendable (SupervisionEvent) -> Void>?>(nil)
    /// The worker's environment (scrubbed when sandboxed).
    let environment: [String]
    let sandboxed: Bool
    let sandboxReportState = Mutex<SandboxReport?>(nil)
    /// The running worker's timer (idle stop and CPU watchdog); nil while no worker runs.
    let timer = Mutex<TimerBox?>(nil)
    /// Where starts queue (shared by the registry's connections).
    let starts: WorkerStartLimiter
    /// Whether workers start on demand (false: the first one starts in `init`, as before issue 28).
    package let isLazy: Bool
    /// Where workers' host requests are read (their fd 3, on the provider's HTTP event loop);
    /// nil: on stdout with the replies, by the reader thread.
    let hostRequestStreams: (any HostRequestStreams)?

    /// A worker's lifecycle. Every transition happens under `state`'s lock.
    enum Lifecycle {
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

    struct InFlight {
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
    struct Abandoned {
        let method: String
        let generation: Int
    }

    struct State {
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
        lazy: Bool = false, startLimiter: WorkerStartLimiter? = nil, hostRequestStreams: (any HostRequestStreams)? = nil
    ) throws(LoadError) {
        self.providerID = providerID
        self.libraryPath = libraryPath
        self.initJSON = initJSON
        self.settings = configuration.isolation
        self.maximumReplyBytes = configuration.maximumMessageBytes
        self.logger = logger
        self.isLazy = lazy
        self.hostRequestStreams = hostRequestStreams
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
        if hostRequestStreams != nil { invocation.hostRequestsFD = 3 }
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
    static func workerExecutable(_ configuration: HostConfiguration) -> String? {
        if let explicit = configuration.isolation.workerExecutable { return explicit }
        if let running = RunningExecutable.contextHost { return running }
        if let directory = configuration.executableDirectory, access(directory + "/context-host", X_OK) == 0 {
            return directory + "/context-host"
        }
        return nil
    }

    /// Writing to a dead worker must fail with EPIPE, not kill the host.
    static let ignoreBrokenPipesOnce: Void = { signal(SIGPIPE, SIG_IGN) }()
    static func ignoreBrokenPipes() { _ = ignoreBrokenPipesOnce }

    /// Called with status changes (quarantined, recovered); the host updates its registry and
    /// tells the client.
    package func setEventHandler(_ handler: @escaping @Sendable (SupervisionEvent) -> Void) {
        eventHandler.withLock { $0 = LockedFunction(handler) }
    }

    func emit(_ event: SupervisionEvent) {
        let handler = eventHandler.withLock { $0 }?.function
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
    func take(_ tag: Int64, from worker: WorkerProcess) -> InFlight? {
        state.withLock { state in
            if let entry = state.inFlight[tag], entry.generation == worker.generation {
                state.inFlight[tag] = nil
                return entry
            }
            state.abandoned[tag] = nil
            return nil
        }
    }

    /// The events of the request `tag` that `worker` (this generation) is answering, if it
    /// still waits.
    func events(of tag: Int64, from worker: WorkerProcess) -> RequestEvents? {
        state.withLock { state in
            guard let entry = state.inFlight[tag], entry.generation == worker.generation else { return nil }
            return entry.events
        }
    }

    func handleReply(tag: Int64, payload: [UInt8], from worker: WorkerProcess) {
        // A notification before the response (`$/progress`, `$/log`), relayed with the request's tag.
        if payload.withUnsafeBytes({ RequestEvents.isNotification($0) }) {
            let events = self.events(of: tag, from: worker)
            payload.withUnsafeBytes { events?.receive($0) }
            return
        }
        // A request to the host (`host/fetch`), answered with a tag-0 frame (passed to `call`).
        if payload.withUnsafeBytes({ RequestEvents.isHostRequest($0) }) {
            let events = self.events(of: tag, from: worker)
            payload.withUnsafeBytes { events?.receiveHostRequest($0) }
            return
        }
        guard let entry = take(tag, from: worker) else {
            logger.debug("Provider \(providerID): dropped a late or unknown answer (tag \(tag)).")
            return
        }
        payload.withUnsafeBytes { ReplyRouter.deliver($0, to: entry.completion, expectedID: tag) }
    }

    static func fail(_ completion: Completion, _ error: RPCError) {
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
        let events = events ?? RequestEvents.withoutHostRequests(providerID: providerID, sentOn: self)
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
    package func answerProviderRequest(_ answer: DeferredJSON) {
        guard let worker = state.withLock({ state -> WorkerProcess? in
            if case .running(let worker) = state.lifecycle { return worker }
            return nil
        }) else { return }
        worker.write(WorkerFrame.encode(tag: 0, capacity: answer.capacity, writing: answer.write))
    }

    package func cancel(_ id: Int64) { stop(id, timedOut: false) }

    package func timedOut(_ id: Int64) { stop(id, timedOut: true) }

    /// Answers `id` with -32800, tells the worker to stop it, and kills the worker if it does not
    /// answer within the grace period. A request still waiting for a worker just leaves the queue
    /// (the worker being started for it keeps starting, and later stops when idle).
    func stop(_ id: Int64, timedOut: Bool) {
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
}
