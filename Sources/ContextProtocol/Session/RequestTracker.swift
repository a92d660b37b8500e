import Synchronization

/// The client half of a JSON-RPC connection, shared by the in-process host and the process
/// client: numbers requests, sends them through a transport, matches answers to waiting callers,
/// fans notifications out to `events()` subscribers, and fails everything when the transport ends.
package final class RequestTracker: Sendable {
    private typealias Waiter = CheckedContinuation<Result<JSONValue, ResponseError>, Never>

    /// A request waiting for its answer, and its message's size (a host that discards a message
    /// over its limit answers without an id, naming the size; see `receive`).
    private struct Waiting {
        let waiter: Waiter
        let method: String
        let length: Int
    }

    private struct State {
        var nextID = 1
        var waiting: [Int: Waiting] = [:]
        /// The host's message limit, once known (`initialize`'s `capabilities.maximumMessageBytes`,
        /// or given): larger requests are refused here, never sent.
        var messageLimit: Int?
        var subscribers: [Int: AsyncStream<HostEvent>.Continuation] = [:]
        var nextSubscriber = 0
        /// Set once the transport ended: why, for every later request.
        var closed: ResponseError?
    }

    private let state = Mutex(State())
    /// Writes one message body to the host; false when the transport is gone, in which case its
    /// owner must call `close(_:)` (requests wait for that reason).
    private let transport: @Sendable ([UInt8]) -> Bool
    /// Turns a notification into an event (typed where the library knows the method).
    private let decodeEvent: @Sendable (String, JSONValue) -> HostEvent

    /// - Parameter messageLimit: the host's message limit when the caller knows it (an in-process
    ///   host); otherwise learnt from `initialize`.
    package init(
        messageLimit: Int? = nil,
        decodeEvent: @escaping @Sendable (String, JSONValue) -> HostEvent = { .notification(method: $0, params: $1) },
        transport: @escaping @Sendable ([UInt8]) -> Bool
    ) {
        self.transport = transport
        self.decodeEvent = decodeEvent
        state.withLock { $0.messageLimit = messageLimit }
    }

    /// Sends a request and waits for its answer, decoded as `Request.Response`.
    package func send<Request: RequestType>(_ request: Request) async throws(ResponseError) -> Request.Response {
        let result = try await call(method: Request.method, params: request.json)
        do {
            return try Request.Response(json: result, path: "result")
        } catch {
            throw ResponseError(
                code: .invalidResponse, message: "The host's answer to \(Request.method) does not match its result type: \(error)",
                data: ["method": .string(Request.method)])
        }
    }

    /// Sends a request by name and waits for its raw result.
    package func call(method: String, params: JSONValue) async throws(ResponseError) -> JSONValue {
        if Task.isCancelled { throw ResponseError(code: .requestCancelled, message: "Request cancelled") }
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let message = JSONValue.object(["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(method), "params": params]).jsonBytes
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let refusal = state.withLock { state -> ResponseError? in
                    if let closed = state.closed { return closed }
                    if let limit = state.messageLimit, message.count > limit {
                        return Self.tooLarge(method: method, length: message.count, limit: limit, sent: false)
                    }
                    state.waiting[id] = Waiting(waiter: continuation, method: method, length: message.count)
                    return nil
                }
                if let refusal { return continuation.resume(returning: .failure(refusal)) }
                // A transport that fails is ending: its owner calls `close(_:)` with the reason
                // (e.g. how the process died), which answers this request too.
                if transport(message), Task.isCancelled {
                    // Cancelled while being registered: the handler below may have run too early.
                    notify(method: "$/cancelRequest", params: ["id": .number(Double(id))])
                }
            }
        } onCancel: {
            // The host answers the request -32800 and tells its provider to stop.
            notify(method: "$/cancelRequest", params: ["id": .number(Double(id))])
        }
        let value = try result.get()
        if method == "initialize", let limit = value["capabilities"]?["maximumMessageBytes"]?.intValue, limit > 0 {
            state.withLock { $0.messageLimit = limit }
        }
        return value
    }

    /// The error for a request over the host's message limit.
    private static func tooLarge(method: String, length: Int, limit: Int, sent: Bool) -> ResponseError {
        ResponseError(
            code: .invalidRequest,
            message: "The \(method) request is \(length) bytes, over the host's limit of \(limit) bytes (capabilities.maximumMessageBytes)"
                + (sent ? "; the host discarded it." : "; it was not sent.") + " Send less (fewer or smaller values), or raise the host's maximumMessageBytes.",
            data: ["method": .string(method), "length": .number(Double(length)), "limit": .number(Double(limit))])
    }

    /// Sends a notification; false when the transport is gone.
    @discardableResult
    package func notify(method: String, params: JSONValue?) -> Bool {
        var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message["params"] = params }
        return transport(JSONValue.object(message).jsonBytes)
    }

    /// Handles one message body from the host: an answer or a notification. Anything else
    /// (unparsable, an answer nobody waits for) is dropped.
    package func receive(_ body: [UInt8]) {
        guard let message = try? JSONValue(parsing: body), case .object(let object) = message else { return }
        if let method = object["method"]?.stringValue {
            guard object["id"] == nil else { return }  // a request: this side answers none
            publish(decodeEvent(method, object["params"] ?? .object([:])))
            return
        }
        guard let id = object["id"]?.intValue else {
            // An error without an id: the host could not read the message's id. One that names the
            // length of a message it discarded as too large answers the request of that size.
            if let error = object["error"], let length = error["data"]?["length"]?.intValue {
                failDiscarded(length: length, limit: error["data"]?["limit"]?.intValue)
            }
            return
        }
        if let error = object["error"] {
            let decoded = (try? ResponseError(json: error)) ?? ResponseError(code: .internalError, message: "The host answered with a malformed error: \(error.jsonString)")
            finish(id: id, with: .failure(decoded))
        } else {
            finish(id: id, with: .success(object["result"] ?? .null))
        }
    }

    /// The transport ended: every waiting request and every later one fails with `error`, and the
    /// event sequences finish.
    package func close(_ error: ResponseError) {
        let (waiters, subscribers) = state.withLock { state in
            if state.closed == nil { state.closed = error }
            defer {
                state.waiting.removeAll()
                state.subscribers.removeAll()
            }
            return (Array(state.waiting.values), Array(state.subscribers.values))
        }
        for waiting in waiters { waiting.waiter.resume(returning: .failure(error)) }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Whether the transport ended.
    package var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// A new subscription to the host's notifications.
    package func events() -> AsyncStream<HostEvent> {
        let (stream, continuation) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let key = state.withLock { state -> Int? in
            guard state.closed == nil else { return nil }
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    private func publish(_ event: HostEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    private func finish(id: Int, with result: Result<JSONValue, ResponseError>) {
        let waiting = state.withLock { $0.waiting.removeValue(forKey: id) }
        waiting?.waiter.resume(returning: result)
    }

    /// Fails the oldest request whose message was `length` bytes: the host discarded it unread.
    private func failDiscarded(length: Int, limit: Int?) {
        let waiting = state.withLock { state -> Waiting? in
            guard let id = state.waiting.filter({ $0.value.length == length }).keys.min() else { return nil }
            return state.waiting.removeValue(forKey: id)
        }
        guard let waiting else { return }
        waiting.waiter.resume(returning: .failure(Self.tooLarge(method: waiting.method, length: length, limit: limit ?? 0, sent: true)))
    }
}
