/// `$/progress` (host → client, protocol version 2): how far a provider got with the request
/// whose params carried `progressToken`. Sent only before that request's response; `done`
/// never decreases, and the last one of a request that knows its total has `done == total`.
public struct ProgressNotification: NotificationType, Hashable {
    public static let method = "$/progress"
    public static let summary = "Progress of a request that carried a progressToken (protocol version 2)."

    /// The request's `progressToken`, unchanged.
    public var token: ProgressToken
    /// Units done so far (for the Health provider: bytes read).
    public var done: Double
    /// All units, when known.
    public var total: Double?
    /// A short human-readable status.
    public var message: String?

    /// A notification.
    public init(token: ProgressToken, done: Double, total: Double? = nil, message: String? = nil) {
        self.token = token
        self.done = done
        self.total = total
        self.message = message
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        token = try ProgressToken(json: reader.required("token", expected: "a string or an integer"), path: reader.path("token"))
        done = try reader.double("done")
        total = try reader.optionalDouble("total")
        message = try reader.optionalString("message")
    }

    public var json: JSONValue {
        var object: JSONObject = ["token": token.json, "done": .number(done)]
        if let total { object["total"] = .number(total) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(
            [
                "token": ProgressToken.schema, "done": Schema.number("Units done, ≥ 0, never decreasing."),
                "total": Schema.number("All units, when known (done ≤ total)."), "message": Schema.string("Short status text."),
            ], required: ["token", "done"])
    }
}

/// `log/message` (host → client, protocol version 2): a provider's log line at or above the
/// client's level (`initialize` `logLevel`, `log/setLevel`).
public struct LogMessageNotification: NotificationType, Hashable {
    public static let method = "log/message"
    public static let summary = "A provider's log line at or above the client's log level (protocol version 2)."

    /// `error`, `warning`, `info` or `debug`.
    public var level: LogLevel
    /// The line (at most `ProviderLogNotification.maximumMessageLength` characters).
    public var message: String
    /// The provider that logged it.
    public var providerId: String

    /// A notification.
    public init(level: LogLevel, message: String, providerId: String) {
        self.level = level
        self.message = message
        self.providerId = providerId
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        level = try LogLevel(json: reader.required("level", expected: "a string"), path: reader.path("level"))
        message = try reader.string("message")
        providerId = try reader.string("providerId")
    }

    public var json: JSONValue { ["level": level.json, "message": .string(message), "providerId": .string(providerId)] }

    public static var schema: JSONValue {
        Schema.object(["level": LogLevel.schema, "message": Schema.string(), "providerId": Schema.string()], required: ["level", "message", "providerId"])
    }
}

/// `log/setLevel`: changes which provider log lines the client gets as `log/message`.
public struct SetLogLevelRequest: RequestType, Hashable {
    public typealias Response = EmptyObject
    public static let method = "log/setLevel"
    public static let summary = "Sets the level of log/message notifications (off, error, warning, info, debug)."

    /// The new level; `off` stops them.
    public var level: LogLevel

    /// A request.
    public init(level: LogLevel) { self.level = level }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        level = try LogLevel(json: reader.required("level", expected: "a string"), path: reader.path("level"))
    }

    public var json: JSONValue { ["level": level.json] }

    public static var schema: JSONValue { Schema.object(["level": LogLevel.schema], required: ["level"]) }
}
