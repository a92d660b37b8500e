/// `$/progress` (provider → host): progress of the request whose reply callback carries it,
/// sent before that request's response (docs/provider-abi.md, "Messages"). Hosts forward it to
/// clients that asked (`progressToken`) and drop it otherwise.
public struct ProviderProgressNotification: NotificationType, WireObject, Hashable {
    public static let method = "$/progress"
    public static let summary = "Progress of the request being handled (provider → host, before its response)."

    /// Longest `message` a host passes on, in characters (longer ones are cut).
    public static let maximumMessageLength = 200

    /// Units done: finite, ≥ 0.
    public var done: Double
    /// All units, when known: finite, ≥ `done`.
    public var total: Double?
    /// A short status.
    public var message: String?

    /// A notification.
    public init(done: Double, total: Double? = nil, message: String? = nil) {
        self.done = done
        self.total = total
        self.message = message
    }

    /// The params; non-finite or negative numbers and `done > total` are refused.
    public static let wireFields = WireFields<Self>(Self(done: 0), [
        .double("done", \.done, "≥ 0"), .double("total", \.total, "≥ done"), .string("message", \.message),
    ]) { (notification, reader) throws(JSONDecodeError) in
        guard notification.done.isFinite, notification.done >= 0 else {
            throw JSONDecodeError(path: reader.path("done"), message: "expected a finite number ≥ 0")
        }
        if let total = notification.total {
            guard total.isFinite, total >= notification.done else {
                throw JSONDecodeError(path: reader.path("total"), message: "expected a finite number ≥ done")
            }
        }
    }
}

/// `$/log` (provider → host): a log line, sent through the reply callback of the request being
/// handled. Hosts write it to their own log and forward it to clients as `log/message`.
public struct ProviderLogNotification: NotificationType, WireObject, Hashable {
    public static let method = "$/log"
    public static let summary = "A log line (provider → host, through the current request's reply callback)."

    /// Longest `message` a host passes on, in characters (longer ones are cut).
    public static let maximumMessageLength = 1000

    /// `error`, `warning`, `info` or `debug` (not `off`).
    public var level: LogLevel
    /// The line.
    public var message: String

    /// A notification.
    public init(level: LogLevel, message: String) {
        self.level = level
        self.message = message
    }

    /// The params; `off` is not a level a line is logged at.
    public static let wireFields = WireFields<Self>(Self(level: .error, message: ""), [
        WireField("level", schema: Schema.oneOf(["error", "warning", "info", "debug"]), required: true) { (value, reader) throws(JSONDecodeError) in
            value.level = try LogLevel(json: reader.required("level", expected: "a string"), path: reader.path("level"))
            guard value.level != .off else { throw JSONDecodeError(path: reader.path("level"), message: "expected error, warning, info or debug") }
        } write: { value, object in object["level"] = value.level.json },
        .string("message", \.message),
    ])
}
