import ContextProviderKit
import Dispatch
import Synchronization

extension Host {
    /// Sends one request to a provider and waits for its decoded result, with the manifest's
    /// timeout, checked like `forward` (`OutputValidation`). For host logic that needs several
    /// provider calls (composer attach, list, send); the pass-through hot path uses `forward`.
    package func request(_ provider: LiveProvider, method: String, params: JSONValue) async throws(RPCError) -> JSONValue {
        let providerID = provider.id
        let timeout = Self.timeout(for: method, in: provider.timeouts)
        let connection = provider.connection
        let kind = ProviderOutput.expected(for: method)
        let limits = configuration.outputLimits
        let messageLimit = configuration.maximumMessageBytes
        let once = Mutex(false)
        let outcome: Result<JSONValue, RPCError> = await withCheckedContinuation { continuation in
            let finish: @Sendable (Result<JSONValue, RPCError>) -> Void = { result in
                let first = once.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: result) }
            }
            // The provider-side id once `send` returned, and whether the deadline passed: whichever
            // comes second tells the provider to stop, so a deadline that passes while `send`
            // runs still cancels the request (its entry would otherwise wait for an answer).
            let providerRequest = Mutex<(id: Int64?, timedOut: Bool)>((nil, false))
            let timer = DeadlineTimer.shared.schedule(afterMilliseconds: timeout) {
                finish(.failure(RPCError(
                    .providerTimedOut, "Provider '\(providerID)' did not answer \(method) within \(timeout) ms.",
                    data: ["providerId": .string(providerID), "method": .string(method), "timeoutMs": .number(Double(timeout))])))
                // Off the timer's thread, like `forward`.
                let sentID = providerRequest.withLock { state in
                    state.timedOut = true
                    return state.id
                }
                if let sentID { DispatchQueue.global().async { connection.cancel(sentID) } }
            }
            let id = connection.send(method: method, params: { JSONWriter.append(params, to: &$0) }) { response in
                DeadlineTimer.shared.cancel(timer)
                if let error = response.error {
                    finish(.failure(Self.hostError(error, fromHost: response.errorIsFromHost, providerID: providerID, method: method)))
                } else if let bytes = response.resultBytes, let kind {
                    do throws(RPCError) {
                        finish(.success(try OutputValidation.check(
                            bytes, as: kind, providerID: providerID, method: method, limits: limits, messageLimit: messageLimit)))
                    } catch {
                        finish(.failure(error))
                    }
                } else if let bytes = response.resultBytes, let value = try? JSONReader.parse(bytes) {
                    finish(.success(value))
                } else {
                    finish(.failure(RPCError(
                        .providerBadReply, "Provider '\(providerID)' answered \(method) without a valid result.",
                        data: ["providerId": .string(providerID), "method": .string(method)])))
                }
            }
            let timedOut = providerRequest.withLock { state in
                state.id = id
                return state.timedOut
            }
            if timedOut { DispatchQueue.global().async { connection.cancel(id) } }
        }
        return try outcome.get()
    }

    /// Runs `work` in a task that answers `reply` with its result or error; `$/cancelRequest`
    /// cancels the task.
    package func respond(_ reply: Reply, server: RPCServer, _ work: @escaping @Sendable () async throws(RPCError) -> JSONValue) {
        let pending = server.track(reply)
        let task = Task {
            do throws(RPCError) {
                let result = try await work()
                reply.sendResult(result)
            } catch {
                reply.sendError(error)
            }
        }
        pending.setCancel { task.cancel() }
    }
}
