import ContextProviderKit
import ContextProtocol
import Synchronization

/// An error answered to a request: the protocol's `ResponseError`, the one error type of both
/// sides (what a handler throws is what a client catches).
package typealias RPCError = ResponseError

extension ResponseError {
    /// An error with `code`, `message` and optional machine-readable `data`.
    package init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.init(code: code, message: message, data: data)
    }

    package static func invalidParams(_ message: String) -> ResponseError { ResponseError(.invalidParams, message) }
}

/// Answers one request exactly once. Later answers are dropped; a handle that is released without
/// answering sends an internal error, so a client never waits forever on a host bug.
///
/// It has two destinations: the wire (a JSON-RPC response written to an `OutputChannel`: `serve`)
/// and a direct one (`InProcessHost`: the answer handed to the waiting caller as it is — a typed
/// value, a host-made `JSONValue`, or a provider's checked result bytes — with no envelope, no
/// output buffer and no parse of a response).
package final class Reply: Sendable {
    /// An answer given to a direct destination.
    package enum Answer: Sendable {
        /// A typed result (`sendValue`).
        case value(any WireValue)
        /// A result the host built as JSON.
        case json(JSONValue)
        /// A result as checked JSON bytes (a provider's answer, passed through).
        case raw([UInt8])
        /// An error.
        case error(RPCError)
    }

    /// Raw bytes of the request's id (a direct reply: a key unique within its server, for the
    /// cancellation table).
    package let id: [UInt8]
    private let output: OutputChannel?
    private let direct: (@Sendable (Answer) -> Void)?
    /// For a direct reply: where its in-process provider calls go to be made on the caller's
    /// thread (`InlineCalls`); nil: on the provider's call thread.
    package let inlineCalls: InlineCalls?
    private let answered = Atomic<Bool>(false)
    /// What runs once the answer is written, and whether it was (so an action registered after
    /// the answer runs at once instead of never).
    private let onAnswer: Mutex<(action: Action?, done: Bool)>

    /// A reply written to the wire as a JSON-RPC response with `id`.
    package init(id: [UInt8], output: OutputChannel) {
        self.id = id
        self.output = output
        self.direct = nil
        self.inlineCalls = nil
        self.onAnswer = Mutex((nil, false))
    }

    /// A reply handed to `deliver` (once), with `key` as its id in the cancellation table;
    /// in-process provider calls it causes go to `inlineCalls` when given.
    package init(key: [UInt8], inlineCalls: InlineCalls? = nil, deliver: @escaping @Sendable (Answer) -> Void) {
        self.id = key
        self.output = nil
        self.direct = deliver
        self.inlineCalls = inlineCalls
        self.onAnswer = Mutex((nil, false))
    }

    /// Whether answers go to a direct destination (no JSON needed), not the wire.
    package var isDirect: Bool { direct != nil }

    deinit {
        if !answered.load(ordering: .acquiring) {
            sendError(RPCError(.internalError, "The host dropped this request without answering; please report it."))
        }
    }

    /// The id as text, for logs and the cancellation table.
    package var idText: String { String(decoding: id, as: UTF8.self) }

    /// Whether an answer was already sent.
    package var isAnswered: Bool { answered.load(ordering: .acquiring) }

    /// Called once, after the answer is written (used to leave the pending table); at once if the
    /// answer was already written. A later call replaces an action that has not run yet.
    package func whenAnswered(_ action: @escaping @Sendable () -> Void) {
        let runNow = onAnswer.withLock { state -> Bool in
            if state.done { return true }
            state.action = Action(action)
            return false
        }
        if runNow { action() }
    }

    /// Claims the right to answer. Returns false if an answer was already sent.
    private func claim() -> Bool {
        answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    private func finish() {
        let action = onAnswer.withLock { state -> Action? in
            defer { state = (nil, true) }
            return state.action
        }
        action?.run()
    }

    /// Answers with a result given as raw JSON bytes (compact: no raw newlines).
    package func sendResult(raw: UnsafeRawBufferPointer) {
        guard claim() else { return }
        guard let output else {
            direct?(.raw(Array(raw)))
            return finish()
        }
        let (prefix, infix) = (Self.resultPrefix, Self.resultInfix)
        output.send(length: prefix.count + id.count + infix.count + raw.count + 1) { message in
            message.append(contentsOf: prefix)
            message.append(contentsOf: id)
            message.append(contentsOf: infix)
            message.append(contentsOf: raw)
            message.append(UInt8(ascii: "}"))
        }
        finish()
    }

    /// Answers with a result that `write` appends as raw JSON text (compact: no raw newlines)
    /// straight into the message, which the output then takes whole (no copy of a large result:
    /// `OutputChannel.send(taking:)`). `capacity`: about how many bytes `write` appends.
    package func sendResult(capacity: Int, writing write: (inout [UInt8]) -> Void) {
        guard claim() else { return }
        guard let output else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(capacity)
            write(&bytes)
            direct?(.raw(bytes))
            return finish()
        }
        let (prefix, infix) = (Self.resultPrefix, Self.resultInfix)
        // (2: the closing brace, and the newline the output adds.)
        var message = output.messageBuffer(capacity: prefix.count + id.count + infix.count + capacity + 2)
        message.append(contentsOf: prefix)
        message.append(contentsOf: id)
        message.append(contentsOf: infix)
        write(&message)
        message.append(UInt8(ascii: "}"))
        output.send(taking: &message)
        finish()
    }

    /// A result response's text before the id, and between the id and the result.
    private static let resultPrefix = #"{"jsonrpc":"2.0","id":"#.utf8
    private static let resultInfix = #","result":"#.utf8

    /// Answers with a result the host built as JSON.
    package func sendResult(_ value: JSONValue) {
        guard output != nil else {
            guard claim() else { return }
            direct?(.json(value))
            return finish()
        }
        let bytes = value.jsonBytes
        bytes.withUnsafeBytes { sendResult(raw: $0) }
    }

    /// Answers with a typed result: handed over as it is to a direct destination, written as
    /// JSON to the wire.
    package func sendValue(_ value: some WireValue) {
        guard output != nil else {
            guard claim() else { return }
            direct?(.value(value))
            return finish()
        }
        sendResult(value.json)
    }

    /// Answers with an error.
    package func sendError(_ error: RPCError) {
        guard claim() else { return }
        if let output {
            output.send(Self.errorMessage(id: id, error: error))
        } else {
            direct?(.error(error))
        }
        finish()
    }

    /// A complete error response.
    package static func errorMessage(id: [UInt8], error: RPCError) -> [UInt8] {
        var message: [UInt8] = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        message.append(contentsOf: id)
        message.append(contentsOf: #","error":"#.utf8)
        JSONWriter.append(error.json, to: &message)
        message.append(UInt8(ascii: "}"))
        return message
    }
}
