import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting a worker: spawning it, opening the provider in it, and starting one when a request
/// needs it (through the start limiter).
extension WorkerConnection {
    // MARK: Starting workers

    struct Started: @unchecked Sendable {
        var worker: WorkerProcess
        var reader: FrameReader
    }

    /// Spawns a worker, sends the init JSON and waits for the provider to open.
    func startWorker(generation: Int) -> Result<Started, LoadError> {
        let worker: WorkerProcess
        switch WorkerProcess.spawn(
            arguments: arguments, environment: environment, generation: generation, label: providerID, logger: logger,
            hostRequestPipe: hostRequestStreams != nil)
        {
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

    func startReading(_ worker: WorkerProcess, _ reader: FrameReader) {
        startReadingHostRequests(worker)
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

    // MARK: Starting on demand

    /// Starts worker `generation` through the start limiter (the connection is `starting`).
    func launch(generation: Int, countAsRestart: Bool) {
        starts.run { [weak self] in self?.start(generation: generation, countAsRestart: countAsRestart) }
    }

    /// Spawns and opens worker `generation`, then serves what waited; a failure is counted once
    /// (like a crash) and reported to every request that waited.
    func start(generation: Int, countAsRestart: Bool) {
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
    func startError(_ error: LoadError, method: String, quarantined: Bool) -> RPCError {
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
    func install(_ worker: WorkerProcess, countAsRestart: Bool) -> [[UInt8]]? {
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
}
