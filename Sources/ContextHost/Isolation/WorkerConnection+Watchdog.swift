import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running worker's timer: the idle stop and the CPU watchdog.
extension WorkerConnection {
    // MARK: Idle stop and CPU watchdog

    /// While `worker` runs, a timer looks at it every quarter of the idle timeout (at most every
    /// 250 ms): a worker with nothing in flight and no request since the last look for
    /// `workerIdleTimeout` is stopped cleanly (its stdin closed; killed if it lingers); and one
    /// that owes no answer and has used more than `idleCPUBudget` of CPU (all its processes and
    /// threads) since it last owed one is killed (`cause: "cpu"`) and restarted like a crashed one.
    /// No timer runs while no worker does.
    func startTimer(for worker: WorkerProcess) {
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
    func stopTimer(for worker: WorkerProcess) {
        let box = timer.withLock { current -> TimerBox? in
            guard let box = current, box.worker === worker else { return nil }
            current = nil
            return box
        }
        box?.timer.cancel()
    }

    func tick(_ box: TimerBox, idleTimeout: Duration?, budgetSeconds: Double?) {
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
}

/// Holds a running worker's timer (DispatchSourceTimer is thread-safe but not marked Sendable).
final class TimerBox: @unchecked Sendable {
    let timer: DispatchSourceTimer
    /// The worker the timer looks after.
    let worker: WorkerProcess
    init(_ timer: DispatchSourceTimer, worker: WorkerProcess) {
        self.timer = timer
        self.worker = worker
    }
}
