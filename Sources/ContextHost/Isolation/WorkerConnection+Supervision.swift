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

/// Supervision: a dead worker fails what it held, is restarted with backoff, and after too many
/// crashes the provider is quarantined until `retry`.
extension WorkerConnection {
    // MARK: Crashes

    enum Decision {
        case ignore
        case restart(after: Duration)
        case quarantine(Unavailability, waiting: [InFlight])
    }

    /// Records a crash; returns whether to restart or quarantine. Called with the lock held.
    func recordCrash(_ state: inout State, summary: String) -> Decision {
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

    func handleDeath(of worker: WorkerProcess, exit: WorkerExit) {
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

    func unavailableError(_ reason: Unavailability) -> RPCError {
        RPCError(
            .providerUnavailable, "Provider '\(providerID)' is unavailable: \(reason.message)",
            data: ["providerId": .string(providerID), "reason": reason.json])
    }

    func crashError(method: String, exit: WorkerExit, kill: KillReason?, tail: [String], outcome: String, decision: Decision) -> RPCError {
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
    func restart() {
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
    static func seconds(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) s"
    }

    /// "5 minutes", "90 seconds".
    static func words(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds >= 60, seconds % 60 == 0 { return seconds == 60 ? "1 minute" : "\(seconds / 60) minutes" }
        if seconds >= 1 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(duration.milliseconds) ms"
    }
}
