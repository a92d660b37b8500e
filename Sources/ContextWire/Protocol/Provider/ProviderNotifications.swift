/// `$/progress` (provider → host): progress of the request whose reply callback carries it,
/// sent before that request's response (docs/provider-abi.md, "Messages"). Hosts forward it to
/// clients that asked (`progressToken`) and drop it otherwise.
public struct ProviderProgressNotification: NotificationType, Hashable {
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

    /// Converts the params, refusing non-finite or negative numbers and `done > total`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        done = try reader.double("done")
        total = try reader.optionalDouble("total")
        message = try reader.optionalString("message")
        guard done.isFinite, done >= 0 else {
            throw JSONDecodeError(path: reader.path("done"), message: "expected a finite number ≥ 0")
        }
        if let total {
            guard total.isFinite, total >= done else {
                throw JSONDecodeError(path: reader.path("total"), message: "expected a finite number ≥ done")
            }
        }
    }

    public var json: JSONValue {
        var object: JSONObject = ["done": .number(done)]
        if let total { object["total"] = .number(total) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["done": Schema.number("≥ 0"), "total": Schema.number("≥ done"), "message": Schema.string()], required: ["done"])
    }
}

/// `$/log` (provider → host): a log line, sent through the reply callback of the request being
/// handled. Hosts write it to their own log and forward it to clients as `log/message`.
public struct ProviderLogNotification: NotificationType, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        level = try LogLevel(json: reader.required("level", expected: "a string"), path: reader.path("level"))
        guard level != .off else { throw JSONDecodeError(path: reader.path("level"), message: "expected error, warning, info or debug") }
        message = try reader.string("message")
    }

    public var json: JSONValue { ["level": level.json, "message": .string(message)] }

    public static var schema: JSONValue {
        Schema.object(["level": Schema.oneOf(["error", "warning", "info", "debug"]), "message": Schema.string()], required: ["level", "message"])
    }
}
