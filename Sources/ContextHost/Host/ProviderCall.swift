import ContextProviderKit
import Dispatch
import Synchronization

/// One request to a provider, from send to outcome: the one primitive behind every call the host
/// makes — `Host.forward` (the client's answer passed through), `Host.request` (a decoded result
/// for host logic) and the host's own calls that read the response themselves (chip listing,
/// availability checks, `provider/info`). It owns
/// the deadline, cancellation (the client's `$/cancelRequest` or the Swift task's), the mapping of
/// provider errors to host errors, output validation and the request's notification channel,
/// which is closed before any outcome is delivered.
///
/// Each closure it hands out captures only this object, so a call allocates it alone rather than
/// a closure context and a box for each (the reader forwards every `items/*` request).
final class ProviderCall: RequestEvents, @unchecked Sendable {
    /// Where the outcome goes.
    enum Sink: Sendable {
        /// The client's answer: the checked result bytes passed through untouched, or decoded
        /// and given to `transform`.
        case reply(Reply, transform: (@Sendable (JSONValue) throws(RPCError) -> JSONValue)?)
        /// A waiting task, resumed once with the checked, decoded result.
        case task(TaskResumption)
        /// The provider's response as it came, for a caller that reads it itself (chip listing,
        /// availability checks, `provider/info`): nothing is checked or mapped; a timeout, cancel
        /// or crash arrives as a host-made error (`errorIsFromHost`).
        case response(ResponseHandoff)
    }

    /// A response's reader, run at most once.
    final class ResponseHandoff: Sendable {
        private let body: @Sendable (ProviderResponse) -> Void
        private let delivered = Atomic<Bool>(false)

        init(_ body: @escaping @Sendable (ProviderResponse) -> Void) {
            self.body = body
        }

        var isDelivered: Bool { delivered.load(ordering: .acquiring) }

        func deliver(_ response: ProviderResponse) {
            if delivered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
                body(response)
            }
        }

        func deliver(_ error: RPCError) {
            let empty: [UInt8] = []
            empty.withUnsafeBytes { deliver(ProviderResponse(bytes: $0, result: nil, error: error, errorIsFromHost: true)) }
        }
    }

    /// A waiting task's continuation, resumed at most once. A class, so that `Sink` has a fixed
    /// layout: with `CheckedContinuation` (resilient) in it, every `switch` on the sink copied it
    /// through runtime calls, on every `items/preview` too.
    final class TaskResumption: Sendable {
        private let continuation: CheckedContinuation<Result<JSONValue, RPCError>, Never>
        private let resumed = Atomic<Bool>(false)

        init(_ continuation: CheckedContinuation<Result<JSONValue, RPCError>, Never>) {
            self.continuation = continuation
        }

        var isResumed: Bool { resumed.load(ordering: .acquiring) }

        func resume(_ result: Result<JSONValue, RPCError>) {
            if resumed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
                continuation.resume(returning: result)
            }
        }
    }

    let sink: Sink
    let method: String
    /// Milliseconds.
    let timeout: Int
    let connection: any ProviderConnection

    /// Host requests are answered on the connection the call holds anyway.
    override var responder: (any ProviderConnection)? { connection }
    let limits: OutputLimits
    let messageLimit: Int
    /// The provider-side request id once `send` returned (ids are never 0 or negative); before
    /// that, 0, or what to tell the provider once the id is known: `Self.cancelled` or
    /// `Self.timedOut` (a cancel or the deadline came while `send` ran).
    private let providerRequest = Atomic<Int64>(0)
    private static let cancelled: Int64 = -1, timedOut: Int64 = -2
    /// The deadline's token (`DeadlineTimer.Token.rawValue`), stored before the request is sent.
    private let deadline = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - token, forwardsLogs, client: the request's notification channel (`RequestEvents`,
    ///     which the call is: one object per call, not two); closed before the outcome.
    init(
        sink: Sink, providerID: String, method: String, timeout: Int, connection: any ProviderConnection, limits: OutputLimits,
        messageLimit: Int, token: ProgressToken?, forwardsLogs: Bool, client: any RequestEventsClient
    ) {
        self.sink = sink
        self.method = method
        self.timeout = timeout
        self.connection = connection
        self.limits = limits
        self.messageLimit = messageLimit
        super.init(providerID: providerID, token: token, forwardsLogs: forwardsLogs, client: client)
    }

    /// A call whose caller reads the response itself (`Sink.response`): the host's own calls
    /// (chip listing, availability, `provider/info`). `client` gets the provider's notifications
    /// and host requests (default: none; a host request is answered "method not found").
    convenience init(
        providerID: String, method: String, timeout: Int, connection: any ProviderConnection,
        client: any RequestEventsClient = NoHostRequestsClient.shared, forwardsLogs: Bool = false,
        response: @escaping @Sendable (ProviderResponse) -> Void
    ) {
        self.init(
            sink: .response(ResponseHandoff(response)), providerID: providerID, method: method, timeout: timeout, connection: connection,
            limits: OutputLimits(), messageLimit: .max, token: nil, forwardsLogs: forwardsLogs, client: client)
    }

    /// Sends the request and waits for its response, on a thread that may block (never a
    /// reader's, a call thread or the cooperative pool): at most the call's timeout, which the
    /// deadline enforces. Returns what the caller reads itself.
    static func waitForResponse<Answer: Sendable>(
        providerID: String, method: String, timeout: Int, connection: any ProviderConnection,
        read: @escaping @Sendable (ProviderResponse) -> Answer
    ) -> Answer {
        let answer = Mutex<Answer?>(nil)
        let done = DispatchSemaphore(value: 0)
        let call = ProviderCall(providerID: providerID, method: method, timeout: timeout, connection: connection) { response in
            answer.withLock { $0 = read(response) }
            done.signal()
        }
        call.start(params: { $0.append(contentsOf: "{}".utf8) })
        done.wait()
        // (Set before the signal.)
        return answer.withLock { $0 }!
    }

    /// Arms the deadline (before the call, so a provider slow to return from `call` is timed
    /// too), then sends the request.
    func start(params: ParamsWriter) {
        deadline.store(DeadlineTimer.shared.schedule(afterMilliseconds: timeout) { self.timedOut() }.rawValue, ordering: .releasing)
        let id: Int64
        if case .reply(let reply, _) = sink, let inline = reply.inlineCalls, let local = connection as? InProcessConnection {
            id = local.send(method: method, params: params, events: self, inline: inline) { response in self.complete(response) }
        } else {
            id = connection.send(method: method, params: params, events: self) { response in self.complete(response) }
        }
        sent(id)
    }

    /// Whether the outcome was delivered.
    private var isFinished: Bool {
        switch sink {
        case .reply(let reply, _): reply.isAnswered
        case .task(let task): task.isResumed
        case .response(let handoff): handoff.isDelivered
        }
    }

    private func succeed(raw bytes: UnsafeRawBufferPointer) {
        guard case .reply(let reply, _) = sink else { return }
        reply.sendResult(raw: bytes)
    }

    private func succeed(_ value: JSONValue) {
        switch sink {
        case .reply(let reply, _):
            reply.sendResult(value)
        case .task(let task):
            task.resume(.success(value))
        case .response:
            break  // (`complete` hands it the response itself)
        }
    }

    private func fail(_ error: RPCError) {
        switch sink {
        case .reply(let reply, _):
            reply.sendError(error)
        case .task(let task):
            task.resume(.failure(error))
        case .response(let handoff):
            handoff.deliver(error)
        }
    }

    /// The deadline passed: delivers `-32015` and tells the provider to stop. A late answer, if
    /// any, is dropped; a worker that does not stop within the grace period is killed and restarted.
    private func timedOut() {
        guard !isFinished else { return }
        closeEvents()
        let error = Host.timedOutError(providerID: providerID, method: method, timeout: timeout)
        if case .response(let handoff) = sink {
            // Off the timer's one thread: a reader may do much with it (the last chip of a
            // listing builds and writes the whole answer).
            DispatchQueue.global().async { handoff.deliver(error) }
        } else {
            fail(error)
        }
        let (noIDYet, id) = providerRequest.compareExchange(expected: 0, desired: Self.timedOut, ordering: .acquiringAndReleasing)
        if !noIDYet, id > 0 { tellTimedOut(id) }  // (with no id yet, `sent` tells it)
    }

    /// Tells the provider that request `id` ran out of time. Not on the timer's thread: an
    /// in-process provider's `call` could block it, and every other timeout with it.
    private func tellTimedOut(_ id: Int64) {
        let connection = connection
        DispatchQueue.global().async { connection.timedOut(id) }
    }

    /// The request was cancelled: a `.task` or `.response` sink gets `-32800` (the client's
    /// `$/cancelRequest` already answered a `.reply` sink); tells the provider, and disarms the deadline (which
    /// would otherwise keep this call until it passed).
    func cancelProviderRequest() {
        closeEvents()
        switch sink {
        case .reply: break
        case .task, .response: fail(RPCError(.requestCancelled, "Request cancelled"))
        }
        DeadlineTimer.shared.cancel(DeadlineTimer.Token(rawValue: deadline.load(ordering: .acquiring)))
        let (noIDYet, id) = providerRequest.compareExchange(expected: 0, desired: Self.cancelled, ordering: .acquiringAndReleasing)
        if !noIDYet, id > 0 { connection.cancel(id) }  // (with no id yet, `sent` tells it)
    }

    /// `send` returned the provider-side id: passes on a cancel or a timeout that came meanwhile.
    private func sent(_ id: Int64) {
        switch providerRequest.exchange(id, ordering: .acquiringAndReleasing) {
        case Self.cancelled: connection.cancel(id)
        case Self.timedOut: tellTimedOut(id)
        default: break
        }
    }

    /// The provider answered (or the host gave up on it): checks the answer and delivers it.
    private func complete(_ response: ProviderResponse) {
        closeEvents()
        DeadlineTimer.shared.cancel(DeadlineTimer.Token(rawValue: deadline.load(ordering: .acquiring)))
        if case .response(let handoff) = sink { return handoff.deliver(response) }
        if let error = response.error {
            return fail(Host.hostError(error, fromHost: response.errorIsFromHost, providerID: providerID, method: method))
        }
        guard let bytes = response.resultBytes else {
            return fail(RPCError(
                .providerBadReply, "Provider '\(providerID)' answered \(method) without a result.",
                data: ["providerId": .string(providerID), "method": .string(method)]))
        }
        let kind = ProviderOutput.expected(for: method)
        switch sink {
        case .response:
            break  // (handed over above)
        case .task:
            // Decoded for host logic: checked and parsed in one pass.
            do throws(RPCError) {
                if let kind {
                    succeed(try OutputValidation.check(bytes, as: kind, providerID: providerID, method: method, limits: limits, messageLimit: messageLimit))
                } else if let value = try? JSONReader.parse(bytes) {
                    succeed(value)
                } else {
                    throw RPCError(
                        .providerBadReply, "Provider '\(providerID)' answered \(method) without a valid result.",
                        data: ["providerId": .string(providerID), "method": .string(method)])
                }
            } catch {
                fail(error)
            }
        case .reply(let reply, let transform):
            // A chip for a typed caller, located only: read and checked in one pass.
            if kind == .chip, response.resultIsUnread, transform == nil, reply.isDirect,
                let chip = OutputValidation.typedChip(bytes, limits: limits)
            {
                return reply.sendValue(chip)
            }
            if let kind, !(kind == .chip && response.resultIsScannedChip && bytes.count <= limits.chipBytes) {
                do throws(RPCError) {
                    try OutputValidation.validate(bytes, as: kind, providerID: providerID, method: method, limits: limits, messageLimit: messageLimit)
                } catch {
                    return fail(error)
                }
            }
            if let transform {
                do {
                    succeed(try transform(try JSONReader.parse(bytes)))
                } catch let error as RPCError {
                    fail(error)
                } catch {
                    fail(RPCError(
                        .providerBadReply, "Provider '\(providerID)' answered \(method) with invalid JSON: \(error)",
                        data: ["providerId": .string(providerID), "method": .string(method)]))
                }
            } else if Host.containsLineBreak(bytes), let value = try? JSONReader.parse(bytes) {
                succeed(value)
            } else {
                succeed(raw: bytes)
            }
        }
    }
}

extension Host {
    /// Sends one request to a provider and waits for its checked, decoded result, with the
    /// manifest's timeout, for host logic that needs several provider calls (collect, composer
    /// attach, list, send). Cancelling the Swift task cancels the provider request.
    package func request(
        _ provider: LiveProvider, method: String, params: JSONValue, progressToken: ProgressToken? = nil
    ) async throws(RPCError) -> JSONValue {
        let slot = Mutex<ProviderCall?>(nil)
        let outcome: Result<JSONValue, RPCError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let call = providerCall(provider, method: method, progressToken: progressToken, sink: .task(ProviderCall.TaskResumption(continuation)))
                slot.withLock { $0 = call }
                call.start(params: { JSONWriter.append(params, to: &$0) })
                if Task.isCancelled { call.cancelProviderRequest() }
            }
        } onCancel: {
            slot.withLock { $0 }?.cancelProviderRequest()
        }
        return try outcome.get()
    }
}
