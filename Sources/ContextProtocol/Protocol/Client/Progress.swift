/// `$/progress` (host → client, protocol version 2): how far a provider got with the request
/// whose params carried `progressToken`. Sent only before that request's response; `done`
/// never decreases, and the last one of a request that knows its total has `done == total`.
public struct ProgressNotification: NotificationType, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(token: .number(0), done: 0), [
        .value("token", \.token, expected: "a string or an integer"),
        .double("done", \.done, "Units done, ≥ 0, never decreasing."),
        .double("total", \.total, "All units, when known (done ≤ total)."),
        .string("message", \.message, "Short status text."),
    ])
}

/// `log/message` (host → client, protocol version 2): a provider's log line at or above the
/// client's level (`initialize` `logLevel`, `log/setLevel`).
public struct LogMessageNotification: NotificationType, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(level: .off, message: "", providerId: ""), [
        .value("level", \.level, expected: "a string"), .string("message", \.message), .string("providerId", \.providerId),
    ])
}

/// `log/setLevel`: changes which provider log lines the client gets as `log/message`.
public struct SetLogLevelRequest: RequestType, WireObject, Hashable {
    public typealias Response = EmptyObject
    public static let method = "log/setLevel"
    public static let summary = "Sets the level of log/message notifications (off, error, warning, info, debug)."

    /// The new level; `off` stops them.
    public var level: LogLevel

    /// A request.
    public init(level: LogLevel) { self.level = level }

    public static let wireFields = WireFields<Self>(Self(level: .off), [.value("level", \.level, expected: "a string")])
}
