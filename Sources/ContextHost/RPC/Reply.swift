import ContextProviderKit
import Synchronization

/// An error answered to a request: code, message and optional machine-readable data.
package struct RPCError: Error, Sendable, Equatable {
    package var code: ErrorCode
    package var message: String
    package var data: JSONValue?

    package init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    package static func invalidParams(_ message: String) -> RPCError { RPCError(.invalidParams, message) }

    /// The `error` member of a response.
    package var json: JSONValue {
        var object: JSONObject = ["code": .number(Double(code.rawValue)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }
}

/// Answers one request exactly once. Later answers are dropped; a handle that is released without
/// answering sends an internal error, so a client never waits forever on a host bug.
package final class Reply: Sendable {
    /// Raw bytes of the request's id.
    package let id: [UInt8]
    private let output: OutputChannel
    private let answered = Atomic<Bool>(false)
    /// What runs once the answer is written, and whether it was (so an action registered after
    /// the answer runs at once instead of never).
    private let onAnswer: Mutex<(action: Action?, done: Bool)>

    package init(id: [UInt8], output: OutputChannel) {
        self.id = id
        self.output = output
        self.onAnswer = Mutex((nil, false))
    }

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

    /// Answers with a result.
    package func sendResult(_ value: JSONValue) {
        let bytes = value.jsonBytes
        bytes.withUnsafeBytes { sendResult(raw: $0) }
    }

    /// Answers with an error.
    package func sendError(_ error: RPCError) {
        guard claim() else { return }
        output.send(Self.errorMessage(id: id, error: error))
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
