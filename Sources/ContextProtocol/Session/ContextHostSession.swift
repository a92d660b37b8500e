/// A conversation with a ContextHost: the same typed API whether the host runs in this process
/// (`InProcessHost` in the ContextHost library) or as a `context-host` child process
/// (`ContextHostClient`).
///
/// Every protocol method is a `RequestType`; `send` sends one and returns its typed answer. The
/// extension methods (`providers()`, `preview(_:)`, …) are shorthands for `send`. Many requests
/// may be in flight at once; cancelling the Swift task that awaits one cancels it at the host
/// (`$/cancelRequest`), which tells the provider to stop.
public protocol ContextHostSession: Sendable {
    /// Sends `request` and waits for its answer.
    ///
    /// - Throws: the host's error (`ResponseError.code` from docs/protocol.md §2);
    ///   `.requestCancelled` when the task was cancelled; `.connectionClosed` when the host went
    ///   away (the message says why); `.invalidResponse` when the answer does not decode as
    ///   `Request.Response`.
    func send<Request: RequestType>(_ request: Request) async throws(ResponseError) -> Request.Response

    /// The host's notifications from now on (providers changed, progress, log lines), until the
    /// session ends. Each call returns a new, independent sequence.
    func events() -> AsyncStream<HostEvent>

    /// Ends the session politely (`shutdown`, then `exit`) and releases what it holds (the child
    /// process, or the in-process host's workers). Requests still waiting fail with
    /// `.connectionClosed`. Calling it again does nothing.
    func close() async
}

/// A JSON-RPC error answered by the host, or a failure on this side of the connection.
public struct ResponseError: Error, WireValue, Hashable, CustomStringConvertible {
    /// What went wrong (docs/protocol.md §2; the client-side codes are `connectionClosed` and
    /// `invalidResponse`).
    public var code: ErrorCode
    /// The host's message: it says what, where and how to fix.
    public var message: String
    /// Details (e.g. `providerId`, a field error's `field`), when the code defines them.
    public var data: JSONValue?

    /// An error.
    public init(code: ErrorCode, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        code = ErrorCode(rawValue: try reader.int("code"))
        message = try reader.string("message")
        data = reader.object["data"]
    }

    public var json: JSONValue {
        var object: JSONObject = ["code": .number(Double(code.rawValue)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["code": Schema.integer(), "message": Schema.string(), "data": [:]], required: ["code", "message"])
    }

    /// `"[-32011] Provider 'x' is unavailable: …"`.
    public var description: String { "[\(code.rawValue)] \(message)" }
}

extension ErrorCode {
    /// Client side only, never on the wire: the host went away (the process exited, the session
    /// was closed) before answering.
    public static let connectionClosed = ErrorCode(rawValue: -32090)
    /// Client side only, never on the wire: the answer does not decode as the method's result type.
    public static let invalidResponse = ErrorCode(rawValue: -32091)
}

/// A notification from the host.
public enum HostEvent: Sendable {
    /// `providers/changed`: providers were added, changed or removed; carries the whole new list.
    case providersChanged(ProvidersChangedNotification)
    /// `$/progress`: how far a request sent with a `progressToken` has got (protocol version 2).
    case progress(ProgressNotification)
    /// `log/message`: a provider's log line at or above the session's level (protocol version 2).
    case log(LogMessageNotification)
    /// A notification this library has no type for (a newer host's, or one that did not decode):
    /// its method and params.
    case notification(method: String, params: JSONValue)
}

extension HostEvent {
    /// The event for a notification: typed when this library knows the method.
    package init(method: String, params: JSONValue) {
        switch method {
        case ProvidersChangedNotification.method:
            if let changed = try? ProvidersChangedNotification(json: params) {
                self = .providersChanged(changed)
                return
            }
        case ProgressNotification.method:
            if let progress = try? ProgressNotification(json: params) {
                self = .progress(progress)
                return
            }
        case LogMessageNotification.method:
            if let line = try? LogMessageNotification(json: params) {
                self = .log(line)
                return
            }
        default:
            break
        }
        self = .notification(method: method, params: params)
    }
}
