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
}

/// A provider instance in a `context-host worker` process, supervised: a crashed or hung worker
/// fails the requests it held with `-32016`, is restarted with backoff, and after
/// `maximumCrashes` crashes within `crashWindow` the provider is quarantined (docs/security.md).
///
/// The connection object lives as long as the registry entry; workers come and go behind it.
/// Requests sent while a worker restarts wait for it (their timeouts keep running).
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
    private let watchdog = Mutex<TimerBox?>(nil)

    private enum Phase {
        case running
        case restarting
        case quarantined
    }

    private struct InFlight {
        let completion: Completion
        let method: String
        /// The worker generation it was sent to; nil while it waits for a worker.
        var generation: Int?
        /// The message, kept only while it waits for a worker.
        var message: [UInt8]?
    }

    /// A request the host gave up on; the worker must still answer it within the grace period.
    private struct Stopping {
        let method: String
        let generation: Int
    }

    private struct State {
        var phase = Phase.restarting
        var worker: WorkerProcess?
        var generation = 0
        var inFlight: [Int64: InFlight] = [:]
        var queue: [Int64] = []
        var stopping: [Int64: Stopping] = [:]
        var crashes: [ContinuousClock.Instant] = []
        var restarts = 0
        var lastCrash: String?
        var quarantine: Unavailability?
    }

    /// Starts the first worker and waits until the provider is open.
    package init(
        providerID: String, libraryPath: String, sha256: String?, initJSON: [UInt8],
        configuration: HostConfiguration, logger: Logger, sandbox: WorkerSandboxOptions? = nil
    ) throws(LoadError) {
        self.providerID = providerID
        self.libraryPath = libraryPath
        self.initJSON = initJSON
        self.settings = configuration.isolation
        self.maximumReplyBytes = configuration.maximumMessageBytes
        self.logger = logger
        guard let executable = Self.workerExecutable(configuration) else {
            throw LoadError(
                code: "worker-unavailable",
                message: "Provider '\(providerID)' needs process isolation, but the context-host executable to run as its worker was not found.",
                hint: "Set HostConfiguration.isolation.workerExecutable to the context-host binary, or allow in-process loading (--isolation in-process) for trusted providers.")
        }
        var arguments = [executable, "worker", "--library", libraryPath, "--parent-pid", String(getpid()), "--provider-id", providerID]
        if let sha256 { arguments += ["--sha256", sha256] }
        if configuration.allowOutsideLibraryPaths { arguments += ["--allow-outside-library-paths"] }
        if let limit = settings.workerMemoryLimit { arguments += ["--memory-limit", String(limit)] }
        if let sandbox { arguments += sandbox.arguments }
        self.arguments = arguments
        self.sandboxed = sandbox != nil
        self.environment = sandbox.map { WorkerProcess.scrubbedEnvironment(dataDirectory: $0.dataDirectory) } ?? WorkerProcess.hostEnvironment()
        Self.ignoreBrokenPipes()
        let started = try startWorker(generation: 0).get()
        state.withLock { state in
            state.phase = .running
            state.worker = started.worker
        }
        startReading(started.worker, started.reader)
        startWatchdog()
    }

    /// Where the host's `context-host` executable is.
    private static func workerExecutable(_ configuration: HostConfiguration) -> String? {
        if let explicit = configuration.isolation.workerExecutable { return explicit }
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 {
            let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if path.hasSuffix("/context-host") { return path }
        }
        #endif
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
    package var workerPID: Int32? { state.withLock { $0.worker?.pid } }
    /// How many times a worker was restarted after a crash.
    package var restarts: Int { state.withLock { $0.restarts } }
    /// The last crash, in words.
    package var lastCrash: String? { state.withLock { $0.lastCrash } }
    /// What the worker's sandbox enforces (from its last start); nil when not sandboxed.
    package var sandboxReport: SandboxReport? {
        guard var report = sandboxReportState.withLock({ $0 }) else { return nil }
        // Layers the host enforces from outside.
        report.enforced.append("environment")
        if settings.idleCPUBudget != nil {
            report.enforced.append("cpu-watchdog")
        } else {
            report.missing.append(.init(layer: "cpu-watchdog", reason: "no CPU budget configured"))
        }
        return report
    }
    /// Why the provider is quarantined, if it is.
    package var quarantine: Unavailability? { state.withLock { $0.phase == .quarantined ? $0.quarantine : nil } }

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

    deinit {
        watchdog.withLock { $0 }?.timer.cancel()
        state.withLock { $0.worker }?.kill(nil)
    }

    /// Removes the request `tag` if it was sent to this worker; a late answer to a request the host
    /// gave up on just proves the worker is alive.
    private func take(_ tag: Int64, from worker: WorkerProcess) -> InFlight? {
        state.withLock { state in
            if let entry = state.inFlight[tag], entry.generation == worker.generation {
                state.inFlight[tag] = nil
                return entry
            }
            state.stopping[tag] = nil
            return nil
        }
    }

    private func handleReply(tag: Int64, payload: [UInt8], from worker: WorkerProcess) {
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
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let message = ProviderMessage.request(id: id, method: method, params: params)
        enum Route {
            case write(WorkerProcess)
            case wait
            case refuse(Unavailability)
        }
        let route = state.withLock { state -> Route in
            if state.phase == .quarantined {
                return .refuse(state.quarantine ?? Unavailability(code: "quarantined", message: "It is quarantined."))
            }
            if state.phase == .running, let worker = state.worker {
                state.inFlight[id] = InFlight(completion: completion, method: method, generation: worker.generation)
                return .write(worker)
            }
            state.inFlight[id] = InFlight(completion: completion, method: method, generation: nil, message: message)
            state.queue.append(id)
            return .wait
        }
        switch route {
        case .write(let worker):
            worker.write(WorkerFrame.encode(tag: id, payload: message))
        case .wait:
            break
        case .refuse(let reason):
            Self.fail(completion, RPCError(
                .providerUnavailable, "Provider '\(providerID)' is unavailable: \(reason.message)",
                data: ["providerId": .string(providerID), "reason": reason.json]))
        }
        return id
    }

    package func cancel(_ id: Int64) { stop(id, timedOut: false) }

    package func timedOut(_ id: Int64) { stop(id, timedOut: true) }

    /// Answers `id` with -32800, tells the worker to stop it, and kills the worker if it does not
    /// answer within the grace period.
    private func stop(_ id: Int64, timedOut: Bool) {
        let found = state.withLock { state -> (InFlight, WorkerProcess?)? in
            guard let entry = state.inFlight.removeValue(forKey: id) else { return nil }
            guard let generation = entry.generation, let worker = state.worker, worker.generation == generation else {
                state.queue.removeAll { $0 == id }
                return (entry, nil)
            }
            state.stopping[id] = Stopping(method: entry.method, generation: generation)
            return (entry, worker)
        }
        guard let (entry, worker) = found else { return }
        if let worker {
            worker.write(WorkerFrame.encode(tag: 0, payload: ProviderMessage.cancel(id: id)))
            let grace = settings.cancelGrace
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(grace.milliseconds)) { [weak self] in
                guard let self else { return }
                let hung = state.withLock { state -> Bool in
                    guard let stopping = state.stopping.removeValue(forKey: id) else { return false }
                    return stopping.generation == worker.generation
                }
                if hung {
                    logger.warning("Provider \(providerID): \(entry.method) did not stop within \(grace.milliseconds) ms of its \(timedOut ? "timeout" : "cancellation"); killing worker \(worker.pid).")
                    worker.kill(.hung(method: entry.method, afterTimeout: timedOut, graceMs: grace.milliseconds))
                }
            }
        }
        Self.fail(entry.completion, RPCError(.requestCancelled, "Request cancelled"))
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
            state.phase = .quarantined
            state.quarantine = reason
            let waiting = state.queue.compactMap { state.inFlight.removeValue(forKey: $0) }
            state.queue = []
            return .quarantine(reason, waiting: waiting)
        }
        state.phase = .restarting
        let exponent = min(state.crashes.count - 1, 30)
        let backoff = min(settings.initialBackoff * (1 << exponent), settings.maximumBackoff)
        return .restart(after: backoff)
    }

    private func handleDeath(of worker: WorkerProcess, exit: WorkerExit) {
        let killReason = worker.killReason.withLock { $0 }
        let tail = worker.stderrTail
        var lost: [InFlight] = []
        let decision = state.withLock { state -> Decision in
            guard state.worker === worker else { return .ignore }
            state.worker = nil
            for (id, entry) in state.inFlight where entry.generation == worker.generation {
                lost.append(entry)
                state.inFlight[id] = nil
            }
            state.stopping = state.stopping.filter { $0.value.generation != worker.generation }
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
            return recordCrash(&state, summary: summary)
        }
        if case .ignore = decision { return }
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

    /// Starts a new worker after a crash and sends it the requests that waited.
    private func restart() {
        let generation = state.withLock { state -> Int? in
            guard state.phase == .restarting, state.worker == nil else { return nil }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        switch startWorker(generation: generation) {
        case .success(let started):
            let frames = install(started.worker, countAsRestart: true)
            guard let frames else {
                started.worker.kill(nil)
                _ = started.worker.reap()
                return
            }
            startReading(started.worker, started.reader)
            for frame in frames { started.worker.write(frame) }
            logger.notice("Provider \(providerID): worker restarted (pid \(started.worker.pid)).")
        case .failure(let error):
            logger.warning("Provider \(providerID): restarting its worker failed: \(error)")
            let decision = state.withLock { recordCrash(&$0, summary: "failed to restart: \(error.message)") }
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
    }

    /// Makes `worker` the running one and returns the frames of the requests that waited, or nil
    /// if the connection is no longer restarting.
    private func install(_ worker: WorkerProcess, countAsRestart: Bool) -> [[UInt8]]? {
        state.withLock { state -> [[UInt8]]? in
            guard state.phase == .restarting, state.worker == nil else { return nil }
            state.phase = .running
            state.worker = worker
            if countAsRestart { state.restarts += 1 }
            var frames: [[UInt8]] = []
            for id in state.queue {
                guard var entry = state.inFlight[id], let message = entry.message else { continue }
                frames.append(WorkerFrame.encode(tag: id, payload: message))
                entry.message = nil
                entry.generation = worker.generation
                state.inFlight[id] = entry
            }
            state.queue = []
            return frames
        }
    }

    // MARK: Quarantine

    /// Leaves quarantine: forgets the crash history and starts a worker. Returns false if the
    /// provider was not quarantined. Throws (and stays quarantined) if the worker cannot start.
    @discardableResult
    package func retry() throws(LoadError) -> Bool {
        let generation = state.withLock { state -> Int? in
            guard state.phase == .quarantined else { return nil }
            state.phase = .restarting
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
            state.withLock { $0.quarantine = nil }
            startReading(started.worker, started.reader)
            for frame in frames { started.worker.write(frame) }
            logger.notice("Provider \(providerID): out of quarantine (worker pid \(started.worker.pid)).")
            emit(.recovered)
            return true
        case .failure(let error):
            state.withLock { state in
                state.phase = .quarantined
                state.quarantine = Unavailability(
                    code: "quarantined", message: "It is quarantined, and the last retry failed: \(error.message) Call providers/retry to try again.")
            }
            throw error
        }
    }

    /// "2.5 s".
    private static func seconds(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) s"
    }

    // MARK: CPU watchdog

    /// Every 250 ms: a worker that owes no answer and has used more than `idleCPUBudget` of CPU
    /// (all its processes and threads) since it last owed one is killed (`cause: "cpu"`) and
    /// restarted like a crashed one.
    private func startWatchdog() {
        guard let budget = settings.idleCPUBudget else { return }
        let budgetSeconds = Double(budget.components.seconds) + Double(budget.components.attoseconds) / 1e18
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250), leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let current = state.withLock { state -> (WorkerProcess, Bool)? in
                guard state.phase == .running, let worker = state.worker else { return nil }
                let owes = state.inFlight.values.contains { $0.generation == worker.generation }
                    || state.stopping.values.contains { $0.generation == worker.generation }
                return (worker, owes)
            }
            guard let (worker, owes) = current else { return }
            let used = WorkerProcess.treeCPUSeconds(worker.pid)
            if owes {
                worker.setIdleCPUBaseline(used)
            } else if let spent = worker.idleCPUSpent(used), spent > budgetSeconds {
                logger.warning("Provider \(providerID): worker \(worker.pid) used \(Self.seconds(spent)) of CPU while it owed no answer; killing it.")
                worker.kill(.cpu(seconds: spent, budget: budgetSeconds))
            }
        }
        timer.resume()
        let box = TimerBox(timer)
        watchdog.withLock { $0 = box }
    }

    /// "5 minutes", "90 seconds".
    private static func words(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds >= 60, seconds % 60 == 0 { return seconds == 60 ? "1 minute" : "\(seconds / 60) minutes" }
        if seconds >= 1 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(duration.milliseconds) ms"
    }
}

/// Holds the watchdog's timer (DispatchSourceTimer is thread-safe but not marked Sendable).
private final class TimerBox: @unchecked Sendable {
    let timer: DispatchSourceTimer
    init(_ timer: DispatchSourceTimer) { self.timer = timer }
}
