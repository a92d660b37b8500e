// A connection to a provider (in-process or a worker): the contract every connection keeps
// (`ProviderConnection`), and the messages of one request over it, in the order they pass:
// the request and its cancellation the host writes (`ProviderMessage`), what the provider sends
// before its response (`RequestEvents`: `$/progress`, `$/log`, host requests and their answers;
// docs/provider-abi.md, "Messages"), and the response (`ReplyRouter`, `ProviderResponse`). The
// in-process connection is in InProcessConnection.swift, the worker's in Isolation/.

import ContextProtocol
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A provider's answer to one request. The bytes are valid only while the completion runs:
/// copy what you keep.
package struct ProviderResponse {
    /// The whole response message.
    package let bytes: UnsafeRawBufferPointer
    /// Byte range of `result`, when the provider succeeded.
    package let result: Range<Int>?
    /// The provider's error, when it failed or the host gave up (timeout, crash, bad reply).
    package let error: RPCError?
    /// Whether `error` was made by the host (cancel, timeout, crash, unreadable reply) rather than
    /// sent by the provider.
    package let errorIsFromHost: Bool
    /// Whether `result` was already found to be a chip `ChipScan` accepts (so valid JSON, and a
    /// valid chip but for its size, which is still to check).
    package let resultIsScannedChip: Bool
    /// Whether `result` was only located, not read: the response was written exactly the SDK's
    /// way, and the caller, which reads every byte of the result anyway (`item/previewMany`),
    /// checks it then. If that finds it unreadable, the caller passes the response through
    /// `ReplyRouter.deliver` again to learn what is wrong, as for any other response.
    package let resultIsUnread: Bool
    /// The request id the response answers (set with `resultIsUnread`, for that second delivery).
    package let requestID: Int64?

    package init(
        bytes: UnsafeRawBufferPointer, result: Range<Int>?, error: RPCError?, errorIsFromHost: Bool = false,
        resultIsScannedChip: Bool = false, resultIsUnread: Bool = false, requestID: Int64? = nil
    ) {
        self.bytes = bytes
        self.result = result
        self.error = error
        self.errorIsFromHost = errorIsFromHost
        self.resultIsScannedChip = resultIsScannedChip
        self.resultIsUnread = resultIsUnread
        self.requestID = requestID
    }

    /// The result bytes.
    package var resultBytes: UnsafeRawBufferPointer? {
        result.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
    }
}

/// Writes the `params` object of a provider request into a message buffer.
package typealias ParamsWriter = (inout [UInt8]) -> Void

/// A live provider instance the host can send requests to: in-process today, a worker process in
/// a later isolation mode. Requests may be sent from any thread.
package protocol ProviderConnection: AnyObject, Sendable {
    /// Sends a request. `completion` runs exactly once, on any thread, with the answer (it may
    /// run before `send` returns). Returns the provider-side request id (for `cancel`), which is
    /// always positive.
    @discardableResult
    func send(
        method: String, params: ParamsWriter,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64

    /// Tells the provider to stop request `id` and answers its completion with `-32800`.
    func cancel(_ id: Int64)

    /// Like `cancel`, because request `id` ran out of time. A worker that still does not answer
    /// within the cancel grace period is treated as hung, killed and restarted.
    func timedOut(_ id: Int64)

    /// `send`, with `events` receiving the notifications (`$/progress`, `$/log`) the provider
    /// sends for this request before its response. The caller closes `events` before it answers.
    @discardableResult
    func send(
        method: String, params: ParamsWriter, events: RequestEvents?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64

    /// Hands the provider the host's answer to one of its host requests (`host/fetch`): a
    /// JSON-RPC response, through `call` with no reply callback, written into the bytes sent.
    /// A requirement, not only an extension method: `RequestEvents` calls it on an `any
    /// ProviderConnection`, which would otherwise always pick the extension's no-op and leave
    /// the provider waiting.
    func answerProviderRequest(_ answer: DeferredJSON)
}

extension ProviderConnection {
    package func timedOut(_ id: Int64) { cancel(id) }

    /// Default for connections that carry no host requests: dropped.
    package func answerProviderRequest(_ answer: DeferredJSON) {}

    /// Without notifications (connections that cannot carry them).
    @discardableResult
    package func send(
        method: String, params: ParamsWriter, events: RequestEvents?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        send(method: method, params: params, completion: completion)
    }
}

// MARK: - The request

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

// MARK: - Before the response

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
    }

    /// Most host requests (`host/fetch`) one provider request may make, and at once.
    static let maximumHostRequests = 1000
    static let maximumConcurrentHostRequests = 16
    /// Largest host request read, in bytes (a fetch's body is at most 1 MiB, as Base64).
    static let maximumHostRequestBytes = 2 << 20

    private let state = Mutex(State())
    /// Where answers to host requests go, for a call sent without events of its own
    /// (`withoutHostRequests`): the connection it was sent on. Held weakly: the request waits in
    /// its connection's table, so a strong reference here would keep a connection nothing else
    /// holds alive (`InstanceCloseTests`).
    private weak let detachedResponder: (any ProviderConnection)?

    // Internal, not `package`: a `package` designated init that the subclass `ProviderCall` does
    // not inherit makes Swift 6.3 warn "function call causes an infinite recursion" on the
    // subclass (a synthesized stub; nothing outside the module makes one of these).
    init(
        providerID: String, token: ProgressToken?, forwardsLogs: Bool, client: any RequestEventsClient,
        detachedResponder: (any ProviderConnection)? = nil
    ) {
        self.providerID = providerID
        self.token = token
        self.forwardsLogs = forwardsLogs
        self.client = client
        self.detachedResponder = detachedResponder
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

    /// The connection host requests are answered on: the one the request was sent on.
    /// `ProviderCall` answers the connection it holds; a call sent without events holds it weakly
    /// (`detachedResponder`). Not weak for every call: a weak reference gives the connection a
    /// side table, which moves each retain and release of it to the runtime's slow path (~1,000
    /// instructions of an in-process `items/preview`).
    var responder: (any ProviderConnection)? { detachedResponder }

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
        guard let responder else { return }
        let admitted = state.withLock { state in
            guard !state.closed else { return false }
            guard state.hostRequests < Self.maximumHostRequests, state.hostRequestsRunning < Self.maximumConcurrentHostRequests else {
                state.dropped += 1
                return false
            }
            state.hostRequests += 1
            state.hostRequestsRunning += 1
            return true
        }
        guard admitted else {
            // Answered at once, so the provider does not wait: too many, or after the response.
            // (From another thread, as every answer: an in-process provider is still inside its
            // reply callback here.)
            let error: JSONValue = ["code": -32600, "message": .string("Host request refused: too many for one request, or sent after its response")]
            let answer = Self.answer(id: id, .failure(ProviderRequestError(error)))
            DispatchQueue.global().async { responder.answerProviderRequest(answer) }
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
    /// Events for a call that has none of its own (see `NoHostRequestsClient`), sent on
    /// `connection` (held weakly).
    static func withoutHostRequests(providerID: String, sentOn connection: any ProviderConnection) -> RequestEvents {
        RequestEvents(providerID: providerID, token: nil, forwardsLogs: false, client: NoHostRequestsClient.shared, detachedResponder: connection)
    }
}

// MARK: - The response

/// Reads a provider's answer and hands it to the completion of the request that caused it. The
/// requests waiting for answers are a host's own (`ReplyTable`); this part holds no state.
package enum ReplyRouter {
    package typealias Completion = @Sendable (ProviderResponse) -> Void

    /// What a request's answer should be, which decides how much of it `deliver` reads.
    enum Expected {
        /// Anything: the response is read in full.
        case any
        /// A chip (`item/preview`): one written the SDK's way is checked with one `ChipScan`.
        case chip
        /// An `item/previewMany` result: one written the SDK's way is only located (its reader
        /// checks it; `resultIsUnread`).
        case previews
        /// A chip for a caller that reads it as a typed value (an `InProcessHost` request): one
        /// written the SDK's way is only located, and checked as it is read (`resultIsUnread`;
        /// `OutputValidation.typedChip`), not scanned first.
        case chipForCaller

        /// - Parameter forCaller: whether the answer goes to a caller as a typed value.
        init(method: String, forCaller: Bool = false) {
            switch method {
            case ItemPreviewRequest.method: self = forCaller ? .chipForCaller : .chip
            case ItemPreviewManyRequest.method: self = .previews
            default: self = .any
            }
        }
    }

    /// The value of a JSON integer written plainly (digits, optional minus), else nil.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < text.count, text.count - index <= 18 else { return nil }
        var value: Int64 = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    /// The range of `result` in a response written exactly as `{"jsonrpc":"2.0","id":ID,"result":…}`
    /// with `ID` = `id` and nothing after the result, not even white space; nil for any other text.
    /// The result itself is not checked.
    static func plainResultRange(_ bytes: UnsafeRawBufferPointer, id: Int64) -> Range<Int>? {
        let prefix: StaticString = #"{"jsonrpc":"2.0","id":"#
        let infix: StaticString = #","result":"#
        guard bytes.count > prefix.utf8CodeUnitCount + infix.utf8CodeUnitCount + 2, bytes.last == UInt8(ascii: "}"),
            memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        else { return nil }
        // A plain positive integer: a leading zero would not be JSON.
        let idStart = prefix.utf8CodeUnitCount
        guard (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[idStart]) else { return nil }
        var end = idStart
        while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
        guard integer(UnsafeRawBufferPointer(rebasing: bytes[idStart..<end])) == id,
            bytes.count - end > infix.utf8CodeUnitCount,
            memcmp(bytes.baseAddress! + end, infix.utf8Start, infix.utf8CodeUnitCount) == 0
        else { return nil }
        let start = end + infix.utf8CodeUnitCount
        // No white space around the result (the range must be the value alone).
        guard start < bytes.count - 1, bytes[start] == UInt8(ascii: "{"), !(bytes[bytes.count - 2] == 0x20 || bytes[bytes.count - 2] == 0x0A
            || bytes[bytes.count - 2] == 0x0D || bytes[bytes.count - 2] == 0x09)
        else { return nil }
        return start..<(bytes.count - 1)
    }

    /// Parses a provider's response bytes and runs the completion.
    ///
    /// - Parameters:
    ///   - expectedID: the id of the request this answers; a response carrying another id is a
    ///     bad reply.
    ///   - maximumBytes: a larger response is a bad reply (its bytes are not passed on).
    ///   - expected: what the answer should be. A chip written the SDK's way
    ///     (`{"jsonrpc":"2.0","id":ID,"result":CHIP}`) that `ChipScan` accepts is passed on after
    ///     that one scan (`resultIsScannedChip`); an `item/previewMany` result written that way is
    ///     passed on unread (`resultIsUnread`). Any other answer is read in full as usual.
    static func deliver(
        _ bytes: UnsafeRawBufferPointer, to completion: Completion, expectedID: Int64? = nil, maximumBytes: Int = .max,
        expected: Expected = .any
    ) {
        if bytes.count > maximumBytes {
            let empty: [UInt8] = []
            empty.withUnsafeBytes { buffer in
                completion(ProviderResponse(bytes: buffer, result: nil, error: tooLarge(bytes.count, limit: maximumBytes), errorIsFromHost: true))
            }
            return
        }
        if expected != .any, let expectedID, let result = plainResultRange(bytes, id: expectedID) {
            if expected == .previews || expected == .chipForCaller {
                completion(ProviderResponse(bytes: bytes, result: result, error: nil, resultIsUnread: true, requestID: expectedID))
                return
            }
            if ChipScan.isValid(UnsafeRawBufferPointer(rebasing: bytes[result])) {
                completion(ProviderResponse(bytes: bytes, result: result, error: nil, resultIsScannedChip: true))
                return
            }
        }
        let (envelope, parseError) = Envelope.scan(bytes)
        if let parseError {
            completion(ProviderResponse(bytes: bytes, result: nil, error: RPCError(.providerBadReply, "its reply is not valid JSON: \(parseError)"), errorIsFromHost: true))
            return
        }
        if let expectedID, envelope.id.flatMap({ Self.integer(UnsafeRawBufferPointer(rebasing: bytes[$0])) }) != expectedID {
            let idText = envelope.id.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
            completion(ProviderResponse(
                bytes: bytes, result: nil,
                error: RPCError(.providerBadReply, "its reply carries id \(idText ?? "(none)"), but answers request \(expectedID)"),
                errorIsFromHost: true))
            return
        }
        if let result = envelope.result {
            completion(ProviderResponse(bytes: bytes, result: result, error: nil))
            return
        }
        if let errorRange = envelope.error,
            let value = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[errorRange])),
            let code = value["code"]?.intValue
        {
            let message = value["message"]?.stringValue ?? "The provider failed without a message."
            completion(ProviderResponse(bytes: bytes, result: nil, error: RPCError(ErrorCode(rawValue: code), message, data: value["data"])))
            return
        }
        completion(ProviderResponse(bytes: bytes, result: nil, error: RPCError(.providerBadReply, "its reply has neither a 'result' nor a valid 'error' member"), errorIsFromHost: true))
    }
}

extension ReplyRouter {
    /// The error for a reply over the host's size limit.
    static func tooLarge(_ count: Int, limit: Int) -> RPCError {
        RPCError(.providerBadReply, "its reply of \(count) bytes exceeds the host's limit of \(limit) bytes", data: ["length": .number(Double(count)), "limit": .number(Double(limit))])
    }
}

extension ReplyRouter {
    /// Delivers an in-process provider's answer to request `id` (taken from the pending table).
    static func deliverInProcess(_ bytes: UnsafeRawBufferPointer, id: Int64, waiting: ReplyTable.Waiting) {
        deliver(bytes, to: waiting.completion, expectedID: id, maximumBytes: waiting.maximumBytes, expected: waiting.expected)
    }
}
