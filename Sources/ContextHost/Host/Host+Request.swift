import ContextProviderKit
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Host {
    /// Sends one request to a provider and waits for its decoded result, with the manifest's
    /// timeout, checked like `forward` (`OutputValidation`). For host logic that needs several
    /// provider calls (composer attach, list, send); the pass-through hot path uses `forward`.
    package func request(
        _ provider: LiveProvider, method: String, params: JSONValue, progressToken: ProgressToken? = nil
    ) async throws(RPCError) -> JSONValue {
        let events = events(providerID: provider.id, token: progressToken)
        let providerID = provider.id
        let timeout = Self.timeout(for: method, in: provider.timeouts)
        let connection = provider.connection
        let kind = ProviderOutput.expected(for: method)
        let limits = configuration.outputLimits
        let messageLimit = configuration.maximumMessageBytes
        let once = Mutex(false)
        let outcome: Result<JSONValue, RPCError> = await withCheckedContinuation { continuation in
            let finish: @Sendable (Result<JSONValue, RPCError>) -> Void = { result in
                events.close()
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
            let id = connection.send(method: method, params: { JSONWriter.append(params, to: &$0) }, events: events) { response in
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

extension Host {
    /// The notification channel of one provider request made for the client: `$/progress` goes
    /// to the client when it passed `token` and speaks version 2, `$/log` to the host's log and,
    /// under version 2, to the client as `log/message` within its level.
    package func events(providerID: String, token: ProgressToken?) -> RequestEvents {
        let v2 = (client?.protocolVersion ?? 1) >= 2
        return RequestEvents(
            providerID: providerID, token: v2 ? token : nil, forwardsLogs: v2,
            clientLogLevel: { [weak self] in self?.logLevel.withLock { $0 } ?? .off }, logger: logger,
            emit: { [weak self] method, params in self?.notify(method, params: params) })
    }

    /// A request's `progressToken`, read from its raw params only when the bytes name one (the
    /// `items/*` hot path pays one `memmem`).
    package static func progressToken(_ request: Request) throws(RPCError) -> ProgressToken? {
        try request.withRawParams { bytes, range throws(RPCError) -> ProgressToken? in
            guard let range, contains(progressTokenKey, in: UnsafeRawBufferPointer(rebasing: bytes[range])) else { return nil }
            guard let member = try? RawObject.member("progressToken", of: bytes, in: range),
                let value = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[member]))
            else { return nil }
            if value.isNull { return nil }
            do throws(JSONDecodeError) {
                return try ProgressToken(json: value, path: "params.progressToken")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
    }
}

/// The bytes `Host.progressToken` looks for first.
private let progressTokenKey = Array("progressToken".utf8)

/// Whether `haystack` contains `needle` (not empty) anywhere.
private func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
    guard let first = needle.first, needle.count <= haystack.count, let base = haystack.baseAddress else { return false }
    let last = haystack.count - needle.count
    var offset = 0
    while offset <= last {
        guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
        let position = base.distance(to: UnsafeRawPointer(hit))
        if needle.withUnsafeBytes({ memcmp(hit, $0.baseAddress!, needle.count) }) == 0 { return true }
        offset = position + 1
    }
    return false
}
