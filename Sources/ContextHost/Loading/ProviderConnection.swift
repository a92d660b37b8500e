import CContextProvider
import ContextProviderKit
import Dispatch
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

/// Collects the JSON error an `open` call reports.
private final class OpenErrorBox {
    var bytes: [UInt8] = []
}

private let openErrorCallback: ctxp_reply_fn = { context, bytes, length in
    guard let context, let bytes else { return }
    let box = Unmanaged<OpenErrorBox>.fromOpaque(context).takeUnretainedValue()
    box.bytes = Array(UnsafeRawBufferPointer(start: bytes, count: length))
}

/// A provider instance living in the host process.
package final class InProcessConnection: ProviderConnection, @unchecked Sendable {
    package let library: ProviderLibrary
    private let instance: UnsafeMutableRawPointer?
    /// Requests run on a thread of their own, in order: the reader goes on reading while the
    /// provider works (two cores share a pipelined load), and a provider stuck inside `call` holds
    /// up only its own requests, which then time out, instead of the whole host. (A second thread
    /// per provider was measured: lock contention made it slower on two cores.)
    private let calls: CallThread
    /// The host's call runtime (its table of waiting requests, reply limit and batching).
    private let runtime: CallRuntime
    /// Request messages, reused.
    private let buffers = MessageBuffers()

    /// Opens an instance with the init JSON.
    ///
    /// - Parameter runtime: the host's call runtime: its table of waiting requests, its reply
    ///   limit (larger replies become `-32014` errors) and its reply batching. Default: a private
    ///   one with no limit (tests, the conformance runner).
    package init(library: ProviderLibrary, initJSON: [UInt8], runtime: CallRuntime = CallRuntime()) throws(LoadError) {
        self.library = library
        self.runtime = runtime
        self.owner = runtime.replies.newOwner()
        self.calls = CallThread(runtime: runtime)
        self.instance = try Self.openInstance(library: library, initJSON: initJSON)
    }

    /// The last step of the C ABI's lifecycle: `close`, once (a hot reload replaced or removed the
    /// provider, or a test or the conformance runner is done with it).
    ///
    /// Nothing can still be queued or inside `call`: every queued request holds this connection.
    /// A request the provider has not answered yet would normally hold it too (its completion or
    /// its deadline does); any that does not is answered `-32011` just before `close`, so no
    /// completion is lost. Both run on another thread: the last reference may go inside a reply
    /// callback or on the call thread, and a provider's `close` waits for its callbacks in
    /// progress (the SDK's does), which could then wait for itself. The library stays loaded for
    /// the process's life, so its table outlives the instance.
    deinit {
        calls.stop()
        let library = library
        let address = Int(bitPattern: instance)
        let owner = owner
        let runtime = runtime
        // A thread of its own, not Dispatch's pool: the SDK's `close` spins while a reply callback
        // runs elsewhere, and the pool's threads also carry the host's timeouts. The owed
        // requests are failed there too, since their completions take locks (the deadline
        // timer's) that the thread dropping the last reference may hold.
        startThread(name: "provider-close") {
            runtime.replies.failAll(
                owner: owner,
                RPCError(.providerUnavailable, "The provider's instance was closed before it answered (a reload replaced or removed the provider); send the request again."))
            library.table.pointee.close(UnsafeMutableRawPointer(bitPattern: address))
        }
    }

    /// How many calls went to the provider's call thread (for tests: the rest were made inline).
    package var queuedCallCount: Int { calls.submittedCount }

    /// This connection's key in the runtime's table of waiting requests: never reused, so
    /// failing a closed connection's requests later cannot touch a newer connection's.
    private let owner: UInt

    /// Calls the provider's `open`; its reported error becomes a `provider-open-failed` LoadError.
    package static func openInstance(library: ProviderLibrary, initJSON: [UInt8]) throws(LoadError) -> UnsafeMutableRawPointer? {
        let box = OpenErrorBox()
        var instance: UnsafeMutableRawPointer?
        let status = initJSON.withUnsafeBufferPointer { buffer in
            library.table.pointee.open(buffer.baseAddress, buffer.count, &instance, openErrorCallback, Unmanaged.passUnretained(box).toOpaque())
        }
        guard status == CTXP_OK else {
            let reported = try? JSONValue(parsing: box.bytes)
            let message = reported?["message"]?.stringValue ?? "The provider refused to open and gave no reason."
            let hint = reported?["hint"]?.stringValue ?? "Check the provider's settings in the host configuration."
            throw LoadError(code: "provider-open-failed", message: message, hint: hint)
        }
        return instance
    }

    @discardableResult
    package func send(
        method: String, params: ParamsWriter,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        send(method: method, params: params, events: nil, completion: completion)
    }

    @discardableResult
    package func send(
        method: String, params: ParamsWriter, events: RequestEvents?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        send(method: method, params: params, events: events, inline: nil, completion: completion)
    }

    /// `send`, with the provider's `call` made by the caller (`inline`, an `InProcessHost`
    /// request) when it still takes calls, else on the call thread.
    @discardableResult
    package func send(
        method: String, params: ParamsWriter, events: RequestEvents?, inline: InlineCalls?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        let events = events ?? RequestEvents.withoutHostRequests(providerID: library.path)
        events.setResponder(self)
        let id = runtime.replies.register(ReplyTable.Waiting(
            completion: completion, expected: ReplyRouter.Expected(method: method, forCaller: inline != nil), owner: owner, events: events,
            relay: runtime.relay, maximumBytes: runtime.maximumReplyBytes))
        var bytes = buffers.take()
        ProviderMessage.write(id: id, method: method, params: params, into: &bytes)
        let queued = QueuedCall(connection: self, id: id, message: bytes)
        if let inline, inline.take({ queued.run() }) { return id }
        calls.submit { queued.run() }  // (captures only `queued`: no closure context)
        return id
    }

    /// One request waiting for the call thread, which takes the message out (so the buffer is
    /// uniquely referenced again when it is given back).
    private final class QueuedCall: @unchecked Sendable {
        let connection: InProcessConnection
        let id: Int64
        /// Taken by `run`, on the call thread.
        var message: [UInt8]

        init(connection: InProcessConnection, id: Int64, message: [UInt8]) {
            self.connection = connection
            self.id = id
            self.message = message
        }

        func run() {
            var message: [UInt8] = []
            swap(&message, &self.message)
            connection.call(id: id, message: message)
        }
    }

    /// Hands one request to the provider's `call` (on the call thread).
    private func call(id: Int64, message: consuming [UInt8]) {
        // Cancelled or timed out while queued: nobody waits for the answer.
        if runtime.replies.isPending(id) {
            message.withUnsafeBufferPointer { buffer in
                library.table.pointee.call(instance, buffer.baseAddress, buffer.count, replyCallback, runtime.replies.token(for: id))
            }
        }
        buffers.giveBack(message)
    }

    /// The host's answer to a provider's host request, through `call` without a reply callback
    /// (as `$/cancelRequest`).
    package func answerProviderRequest(_ answer: DeferredJSON) {
        answer.bytes.withUnsafeBufferPointer { buffer in
            library.table.pointee.call(instance, buffer.baseAddress, buffer.count, nil, nil)
        }
    }

    package func cancel(_ id: Int64) {
        let message = ProviderMessage.cancel(id: id)
        message.withUnsafeBufferPointer { buffer in
            library.table.pointee.call(instance, buffer.baseAddress, buffer.count, nil, nil)
        }
        runtime.replies.fail(id, RPCError(.requestCancelled, "Request cancelled"))
    }
}
