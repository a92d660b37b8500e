// The host's side of a request's messages with a provider (docs/provider-abi.md, "Messages"):
// what it writes (`ProviderMessage`: the request, its cancellation), and what the provider sends
// back before its response (`RequestEvents`: `$/progress`, `$/log`, host requests and their
// answers). The response itself is read by `ReplyRouter` (ProviderConnection.swift).

import ContextProviderKit
import ContextProtocol
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON-RPC messages the host sends to a provider for a request, built directly as bytes:
/// the request and its cancellation (both `ProviderConnection`s write them).
package enum ProviderMessage {
    /// `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":…}`, with `params` written in place.
    package static func request(id: Int64, method: String, params: ParamsWriter) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(256)
        write(id: id, method: method, params: params, into: &message)
        return message
    }

    /// Appends the request `request(id:method:params:)` makes to `message`.
    package static func write(id: Int64, method: String, params: ParamsWriter, into message: inout [UInt8]) {
        message.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: #","method":"#.utf8)
        JSONWriter.appendString(method, to: &message)
        message.append(contentsOf: #","params":"#.utf8)
        params(&message)
        message.append(UInt8(ascii: "}"))
    }

    /// The `$/cancelRequest` notification for request `id`.
    package static func cancel(id: Int64) -> [UInt8] {
        var message: [UInt8] = Array(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: "}}".utf8)
        return message
    }
}

/// What a provider may send through a request's reply callback before the response: `$/progress`
/// and `$/log` notifications (docs/provider-abi.md, "Messages"). One per provider request; the
/// connection hands it every notification of that request, and the caller closes it (`closeEvents`) before
/// the response reaches the client, so nothing is forwarded after the response.
///
/// Every notification is hostile input: larger than `maximumBytes`, not JSON, or with invalid
/// numbers (not finite, negative, `done > total`, `done` going back) it is dropped (the first
/// such per request is logged). Progress is rate-limited to one per `progressInterval` (a
/// `done == total` one always passes) and at most `maximumProgress` per request; log lines to
/// `maximumLogLines` per request.
///
/// Not final: `ProviderCall` is one, so a provider call allocates one object, not two (its
/// methods are final, so calls on it are direct).
package class RequestEvents: @unchecked Sendable {
    /// Largest notification read, in bytes.
    static let maximumBytes = 8 << 10
    /// Least time between two forwarded `$/progress` of one request (but the final one).
    static let progressInterval: Duration = .milliseconds(50)
    /// Most `$/progress` forwarded per request.
    static let maximumProgress = 1000
    /// Most `$/log` lines handled per request (the rest are counted, and the count logged).
    static let maximumLogLines = 100

    let providerID: String
    /// The client's `progressToken`, when it asked for progress and speaks version 2.
    let token: ProgressToken?
    /// Whether the client speaks version 2 (so gets `log/message`).
    let forwardsLogs: Bool
    /// Where notifications go (the host). A reference, not closures and a `Logger` copy: one of
    /// these is made for every provider call, `items/preview` included.
    let client: any RequestEventsClient

    private struct State {
        var closed = false
        var lastProgress: ContinuousClock.Instant?
        var lastDone = -1.0
        var progressSent = 0
        var logLines = 0
        var dropped = 0
        var loggedInvalid = false
        /// Host requests (`host/fetch`) received and still running.
        var hostRequests = 0
        var hostRequestsRunning = 0
        /// Where answers to host requests go: the connection the request was sent on.
        /// Held weakly: the request waits in its connection's table, so a strong reference here
        /// would keep a connection nothing else holds alive (`InstanceCloseTests`).
        weak var responder: (any ProviderConnection)?
    }

    /// Most host requests (`host/fetch`) one provider request may make, and at once.
    static let maximumHostRequests = 1000
    static let maximumConcurrentHostRequests = 16
    /// Largest host request read, in bytes (a fetch's body is at most 1 MiB, as Base64).
    static let maximumHostRequestBytes = 2 << 20

    private let state = Mutex(State())

    package init(providerID: String, token: ProgressToken?, forwardsLogs: Bool, client: any RequestEventsClient) {
        self.providerID = providerID
        self.token = token
        self.forwardsLogs = forwardsLogs
        self.client = client
    }

    /// Whether `bytes` are a notification (a `method` and no `id`) rather than a response. A
    /// response written the SDK's way is recognised by its first bytes alone.
    static func isNotification(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = #"{"jsonrpc":"2.0","id":"#
        if bytes.count >= prefix.utf8CodeUnitCount,
            memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        {
            return false
        }
        let (envelope, error) = Envelope.scan(bytes)
        return error == nil && envelope.method != nil && envelope.id == nil && !envelope.idIsInvalid
    }

    /// Whether `bytes` are a request from the provider to the host (a `method` and an `id`), sent
    /// before its response, such as `host/fetch` (docs/provider-abi.md, "Host requests").
    /// A response written the SDK's way is recognised by its first bytes alone (a full scan of
    /// each reply was ~4% of an in-process preview).
    static func isHostRequest(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if isPlainResponse(bytes) { return false }
        let (envelope, error) = Envelope.scan(bytes)
        return error == nil && envelope.method != nil && envelope.id != nil
    }

    /// Whether `bytes` begin `{"jsonrpc":"2.0","id":DIGITS,"result":` or `…,"error":`: a response,
    /// whatever follows (a request to the host carries a `method` there instead).
    static func isPlainResponse(_ bytes: UnsafeRawBufferPointer) -> Bool {
        JSONRPCResponsePrefix.matches(bytes)
    }

    /// The connection host requests are answered on (set by the connection when it sends).
    package final func setResponder(_ connection: any ProviderConnection) {
        state.withLock { $0.responder = connection }
    }

    /// Handles a request the provider sent to the host (on the provider's thread): runs it in a
    /// task and answers through the connection's `call` with the JSON-RPC response.
    final func receiveHostRequest(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maximumHostRequestBytes else {
            return invalid("a host request of \(bytes.count) bytes (limit \(Self.maximumHostRequestBytes))")
        }
        guard let message = try? JSONReader.parse(bytes), let method = message["method"]?.stringValue, let id = message["id"],
            id.intValue != nil || id.stringValue != nil
        else {
            return invalid("a host request that is not valid JSON-RPC")
        }
        let params = message["params"] ?? .object([:])
        let responder: (any ProviderConnection)? = state.withLock { state in
            guard !state.closed, let responder = state.responder else { return nil }
            guard state.hostRequests < Self.maximumHostRequests, state.hostRequestsRunning < Self.maximumConcurrentHostRequests else {
                state.dropped += 1
                return nil
            }
            state.hostRequests += 1
            state.hostRequestsRunning += 1
            return responder
        }
        guard let responder else {
            // Answered at once, so the provider does not wait: too many, or after the response.
            let error: JSONValue = ["code": -32600, "message": .string("Host request refused: too many for one request, or sent after its response")]
            // (From another thread, as every answer: an in-process provider is still inside its
            // reply callback here.)
            if let connection = state.withLock({ $0.responder }) {
                let answer = Self.answer(id: id, .failure(ProviderRequestError(error)))
                DispatchQueue.global().async { connection.answerProviderRequest(answer) }
            }
            return
        }
        // Started on this thread and answered where the client finishes it (for `host/fetch`,
        // the HTTP transport's event loop): no hop through the task pool. An answer given before
        // `providerRequest` returns (a refusal) is delivered from another thread: an in-process
        // provider is still inside its reply callback here, and is never called back from it.
        let returned = ReturnFlag()
        client.providerRequest(providerID: providerID, method: method, params: params) { outcome in
            self.state.withLock { $0.hostRequestsRunning -= 1 }
            let answer = Self.answer(id: id, outcome)
            if returned.value.load(ordering: .acquiring) {
                responder.answerProviderRequest(answer)
            } else {
                DispatchQueue.global().async { responder.answerProviderRequest(answer) }
            }
        }
        returned.value.store(true, ordering: .releasing)
    }

    /// Whether `providerRequest` has returned (see `receiveHostRequest`).
    private final class ReturnFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// The JSON-RPC response answering host request `id` with `outcome`, written by the
    /// connection into the bytes it sends (`{"jsonrpc":"2.0","id":ID,"result":…}` or `"error"`).
    static func answer(id: JSONValue, _ outcome: Result<DeferredJSON, ProviderRequestError>) -> DeferredJSON {
        let prefix = #"{"jsonrpc":"2.0","id":"#
        switch outcome {
        case .success(let result):
            return DeferredJSON(capacity: result.capacity + 64) { output in
                output.append(contentsOf: prefix.utf8)
                JSONWriter.append(id, to: &output)
                output.append(contentsOf: #","result":"#.utf8)
                result.write(&output)
                output.append(UInt8(ascii: "}"))
            }
        case .failure(let error):
            return DeferredJSON(capacity: 256) { output in
                output.append(contentsOf: prefix.utf8)
                JSONWriter.append(id, to: &output)
                output.append(contentsOf: #","error":"#.utf8)
                JSONWriter.append(error.json, to: &output)
                output.append(UInt8(ascii: "}"))
            }
        }
    }

    /// Handles one notification the provider sent (on the provider's thread).
    final func receive(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maximumBytes else { return invalid("a notification of \(bytes.count) bytes (limit \(Self.maximumBytes))") }
        guard let message = try? JSONReader.parse(bytes), let method = message["method"]?.stringValue else {
            return invalid("a notification that is not valid JSON")
        }
        let params = message["params"] ?? .object([:])
        switch method {
        case ProviderProgressNotification.method:
            do throws(JSONDecodeError) {
                progress(try ProviderProgressNotification(json: params, path: "params"))
            } catch {
                invalid("$/progress: \(error)")
            }
        case ProviderLogNotification.method:
            do throws(JSONDecodeError) {
                log(try ProviderLogNotification(json: params, path: "params"))
            } catch {
                invalid("$/log: \(error)")
            }
        default:
            break  // unknown notifications are ignored (docs/provider-abi.md)
        }
    }

    private final func progress(_ notification: ProviderProgressNotification) {
        guard let token else { return }
        let final = notification.total.map { notification.done == $0 } ?? false
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.closed else { return }
            guard notification.done >= state.lastDone else {
                state.dropped += 1
                return
            }
            guard state.progressSent < Self.maximumProgress,
                final || state.lastProgress.map({ now - $0 >= Self.progressInterval }) ?? true,
                notification.done > state.lastDone || state.progressSent == 0
            else {
                state.dropped += 1
                return
            }
            state.lastDone = notification.done
            state.lastProgress = now
            state.progressSent += 1
            let message = notification.message.map { String($0.prefix(ProviderProgressNotification.maximumMessageLength)) }
            // (Under the lock: `close` cannot come between the check and the write.)
            client.notify(ProgressNotification.method, params: ProgressNotification(token: token, done: notification.done, total: notification.total, message: message).json)
        }
    }

    private final func log(_ notification: ProviderLogNotification) {
        let text = String(notification.message.prefix(ProviderLogNotification.maximumMessageLength))
        let forward = state.withLock { state -> Bool in
            guard !state.closed, state.logLines < Self.maximumLogLines else {
                state.dropped += 1
                return false
            }
            state.logLines += 1
            return true
        }
        guard forward else { return }
        let line: Logger.Message = "Provider \(providerID): \(text)"
        let logger = client.logger
        switch notification.level {
        case .error: logger.error(line)
        case .warning: logger.warning(line)
        case .info: logger.info(line)
        case .debug, .off: logger.debug(line)
        }
        let level = client.clientLogLevel
        guard forwardsLogs, level != .off, notification.level <= level else { return }
        state.withLock { state in
            guard !state.closed else { return }
            client.notify(LogMessageNotification.method, params: LogMessageNotification(level: notification.level, message: text, providerId: providerID).json)
        }
    }

    private final func invalid(_ what: String) {
        let first = state.withLock { state -> Bool in
            state.dropped += 1
            defer { state.loggedInvalid = true }
            return !state.loggedInvalid
        }
        if first { client.logger.warning("Provider \(providerID) sent \(what); dropped (later ones for this request are dropped silently).") }
    }

    /// The response is about to be delivered: nothing more is forwarded.
    package final func closeEvents() {
        let dropped = state.withLock { state -> Int in
            state.closed = true
            return state.dropped
        }
        if dropped > 0 { client.logger.debug("Provider \(providerID): dropped \(dropped) notification(s) of one request.") }
    }
}

/// Where the notifications of a client's provider requests go: the host, for its client.
package protocol RequestEventsClient: AnyObject, Sendable {
    /// The host's log (provider `$/log` lines are written there whatever the client speaks).
    var logger: Logger { get }
    /// The client's current `log/message` level.
    var clientLogLevel: LogLevel { get }
    /// Writes a host → client notification.
    func notify(_ method: String, params: JSONValue)
    /// Answers a request a provider sent to the host (`host/fetch`) by calling `answer` exactly
    /// once, from any thread, with the JSON-RPC `result` or the `error` object. Called on the
    /// thread that read the request (a worker's reader, or the in-process provider's): it must
    /// not block, nor wait for the answer.
    func providerRequest(providerID: String, method: String, params: JSONValue, answer: @escaping @Sendable (Result<DeferredJSON, ProviderRequestError>) -> Void)
}

/// JSON written when it is sent, by `write`, into the buffer that carries it: the `result` of a
/// provider's host request, and the whole JSON-RPC response a connection writes into the bytes it
/// hands on (in-process: the message passed to `call`; a worker: a tag-0 frame, after its
/// header). A `host/fetch` body's Base64 is so written once, from the response's bytes into that
/// buffer, with no `String` or `JSONValue` between.
package struct DeferredJSON: Sendable {
    /// About how many bytes `write` appends (reserved beforehand).
    package var capacity: Int
    package var write: @Sendable (inout [UInt8]) -> Void

    package init(capacity: Int, write: @escaping @Sendable (inout [UInt8]) -> Void) {
        self.capacity = capacity
        self.write = write
    }

    /// The bytes alone.
    package var bytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(capacity)
        write(&output)
        return output
    }
}

/// A JSON-RPC error object answering a provider's host request.
package struct ProviderRequestError: Error, Sendable {
    package var json: JSONValue
    package init(_ json: JSONValue) { self.json = json }
}

extension RequestEventsClient {
    /// No host requests: each is answered "method not found".
    package func providerRequest(
        providerID: String, method: String, params: JSONValue, answer: @escaping @Sendable (Result<DeferredJSON, ProviderRequestError>) -> Void
    ) {
        answer(.failure(ProviderRequestError(["code": -32601, "message": .string("Host method not found: \(method)")])))
    }
}

/// The client of a call sent without a request's events (the host's own calls: listing chips,
/// checking availability; test harnesses): a provider's host request is answered "method not
/// found" at once instead of never, and its notifications are dropped. Holds no state.
final class NoHostRequestsClient: RequestEventsClient {
    static let shared = NoHostRequestsClient()
    let logger = Logger(label: "context-host.no-host-requests")
    var clientLogLevel: LogLevel { .off }
    func notify(_ method: String, params: JSONValue) {}
}

extension RequestEvents {
    /// Events for a call that has none of its own (see `NoHostRequestsClient`).
    static func withoutHostRequests(providerID: String) -> RequestEvents {
        RequestEvents(providerID: providerID, token: nil, forwardsLogs: false, client: NoHostRequestsClient.shared)
    }
}
