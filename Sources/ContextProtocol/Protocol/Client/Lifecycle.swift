/// `initialize`: who the client is, its locale, the permissions it grants and the protocol
/// versions it speaks. Every member is optional.
public struct InitializeRequest: RequestType, WireObject, Hashable {
    public typealias Response = InitializeResult
    public static let method = "initialize"
    public static let summary = "Says who the client is; the host answers its capabilities and starts loading the providers."
    public static var errors: [ErrorCode] { [.invalidRequest, .protocolVersionUnsupported] }
    public static var allowedBeforeInitialize: Bool { true }

    /// The client's name and version.
    public var clientInfo: ClientInfo?
    /// The one version the client speaks (legacy; see `protocolVersions`).
    public var protocolVersion: Int?
    /// Every protocol version the client speaks.
    public var protocolVersions: [Int]?
    /// BCP 47 tag, e.g. `en-US` (the host's default).
    public var locale: String?
    /// Permissions the client grants, e.g. `["network"]`.
    public var grantedPermissions: [String]?
    /// How much `log/message` the client wants.
    public var logLevel: LogLevel?
    /// What the client can render.
    public var capabilities: ClientCapabilities?

    /// Creates the params; every member is optional.
    public init(
        clientInfo: ClientInfo? = nil, protocolVersion: Int? = nil, protocolVersions: [Int]? = nil, locale: String? = nil,
        grantedPermissions: [String]? = nil, logLevel: LogLevel? = nil, capabilities: ClientCapabilities? = nil
    ) {
        self.clientInfo = clientInfo
        self.protocolVersion = protocolVersion
        self.protocolVersions = protocolVersions
        self.locale = locale
        self.grantedPermissions = grantedPermissions
        self.logLevel = logLevel
        self.capabilities = capabilities
    }

    /// The params as the host reads them: `protocolVersion` of another JSON type is ignored
    /// (the host reads it as the current version).
    public static let wireFields = WireFields<Self>(Self(), params: true, [
        .value("clientInfo", \.clientInfo),
        WireField("protocolVersion", schema: Schema.integer("The one version the client speaks (legacy; other JSON types are read as the current version).")) {
            (value, reader) throws(JSONDecodeError) in value.protocolVersion = reader.value("protocolVersion")?.intValue
        } write: { value, object in object.set("protocolVersion", value.protocolVersion) },
        .ints("protocolVersions", \.protocolVersions, "Every protocol version the client speaks."),
        .string("locale", \.locale, "BCP 47 tag, e.g. en-US (default)."),
        .strings("grantedPermissions", \.grantedPermissions, "Permissions the client grants: network, location, health, calendar, files, contacts."),
        .value("logLevel", \.logLevel),
        .value("capabilities", \.capabilities),
    ])
}

extension InitializeRequest {
    /// `initialize`'s `clientInfo`. The host ignores wrongly typed members, and so does this type.
    public struct ClientInfo: WireValue, WireObject, Hashable {
        /// The client's name (the host's default: `unknown`).
        public var name: String?
        /// The client's version.
        public var version: String?
        /// Members this library does not know, kept as sent.
        public var extra: JSONObject

        /// Creates client info.
        public init(name: String? = nil, version: String? = nil, extra: JSONObject = JSONObject()) {
            self.name = name
            self.version = version
            self.extra = extra
        }

        /// Wrongly typed members read as absent.
        public static let wireFields = WireFields<Self>(Self(), extra: \.extra, description: "Who the client is; wrongly typed members are ignored.", [
            lenientString("name", \.name), lenientString("version", \.version),
        ])

        private static func lenientString(_ key: String, _ keyPath: WireKeyPath<Self, String?>) -> WireField<Self> {
            WireField(key, schema: Schema.string()) { (value, reader) throws(JSONDecodeError) in
                value[keyPath: keyPath] = reader.value(key)?.stringValue
            } write: { value, object in object.set(key, value[keyPath: keyPath]) }
        }
    }
}

/// What a client can do, sent in `initialize`.
public struct ClientCapabilities: WireValue, WireObject, Hashable {
    /// What the client renders.
    public var ui: UICapabilities?

    /// Creates capabilities.
    public init(ui: UICapabilities? = nil) { self.ui = ui }

    public static let wireFields = WireFields<Self>(Self(), [.value("ui", \.ui)])
}

// `UICapabilities` (what the client renders) is in Protocol/UICapabilities.swift.

/// `initialize`'s answer.
public struct InitializeResult: WireValue, WireObject, Hashable {
    /// The version the host speaks in this session.
    public var protocolVersion: Int
    /// Every version the host supports (hosts that negotiate).
    public var protocolVersions: [Int]?
    /// The host's name and version.
    public var serverInfo: ServerInfo
    /// What the host answers and its limits.
    public var capabilities: HostCapabilities
    /// Members this library does not know, kept as sent.
    public var extra: JSONObject

    /// Creates a result.
    public init(protocolVersion: Int, protocolVersions: [Int]? = nil, serverInfo: ServerInfo, capabilities: HostCapabilities, extra: JSONObject = JSONObject()) {
        self.protocolVersion = protocolVersion
        self.protocolVersions = protocolVersions
        self.serverInfo = serverInfo
        self.capabilities = capabilities
        self.extra = extra
    }

    public static let wireFields = WireFields<Self>(
        Self(protocolVersion: 0, serverInfo: ServerInfo(name: "", version: ""), capabilities: HostCapabilities(methods: [], features: [])),
        extra: \.extra, [
            .int("protocolVersion", \.protocolVersion, "The version the host speaks in this session."),
            .ints("protocolVersions", \.protocolVersions, "Every version the host supports."),
            .value("serverInfo", \.serverInfo),
            .value("capabilities", \.capabilities),
        ])
}

/// The host's name and version (`{"name":"context-host","version":…}`).
public struct ServerInfo: WireValue, WireObject, Hashable {
    /// `context-host`.
    public var name: String
    /// The host's version.
    public var version: String

    /// Creates server info.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    public static let wireFields = WireFields<Self>(Self(name: "", version: ""), [.string("name", \.name), .string("version", \.version)])
}

/// `initialize`'s `capabilities`: the methods, features and limits in force.
public struct HostCapabilities: WireValue, WireObject, Hashable {
    /// Every method name the host answers, except `$/…` ones.
    public var methods: [String]
    /// Feature names, e.g. `cancellation`, `collect`, `items`, `composer`.
    public var features: [String]
    /// The ctxui version (1).
    public var ctxui: Int?
    /// The message size cap in force.
    public var maximumMessageBytes: Int?
    /// The input limits in force, by name (docs/security.md §6).
    public var limits: [String: Int]?
    /// Members this library does not know, kept as sent.
    public var extra: JSONObject

    /// Creates capabilities.
    public init(
        methods: [String], features: [String], ctxui: Int? = nil, maximumMessageBytes: Int? = nil, limits: [String: Int]? = nil,
        extra: JSONObject = JSONObject()
    ) {
        self.methods = methods
        self.features = features
        self.ctxui = ctxui
        self.maximumMessageBytes = maximumMessageBytes
        self.limits = limits
        self.extra = extra
    }

    public static let wireFields = WireFields<Self>(Self(methods: [], features: []), extra: \.extra, required: ["methods", "features"], [
        .strings("methods", \.methods, "Every method name the host answers, except $/… ones.", whenAbsent: []),
        .strings("features", \.features, whenAbsent: []),
        .int("ctxui", \.ctxui, "The declarative-view schema version."),
        .int("maximumMessageBytes", \.maximumMessageBytes, "The message size cap in force."),
        WireField(
            "limits",
            schema: ["type": "object", "additionalProperties": ["type": "integer"], "description": "The input limits in force (docs/security.md §6)."]
        ) { (value, reader) throws(JSONDecodeError) in
            guard let limitsReader = try reader.optionalObject("limits") else { return }
            var limits: [String: Int] = [:]
            for (name, _) in limitsReader.object { limits[name] = try limitsReader.int(name) }
            value.limits = limits
        } write: { value, object in
            guard let limits = value.limits else { return }
            var members = JSONObject()
            for (name, limit) in limits.sorted(by: { $0.key < $1.key }) { members[name] = .number(Double(limit)) }
            object["limits"] = .object(members)
        },
    ])
}

/// `initialized`: sent after the `initialize` answer; the host does nothing with it.
public struct InitializedNotification: NotificationType, EmptyParams, Hashable {
    public static let method = "initialized"
    public static let summary = "Sent after the initialize answer; the host does nothing with it."
    public static var allowedBeforeInitialize: Bool { true }
    /// The notification (no params).
    public init() {}
}

/// `shutdown`: stop accepting requests; only `exit` should follow. Answers `null`.
public struct ShutdownRequest: RequestType, EmptyParams, Hashable {
    public typealias Response = NullResult
    public static let method = "shutdown"
    public static let summary = "Stops accepting requests; only exit should follow."
    public static var errors: [ErrorCode] { [.invalidRequest] }
    /// The request (no params).
    public init() {}
}

/// `exit`: the host exits, status 0 after `shutdown`, 1 otherwise.
public struct ExitNotification: NotificationType, EmptyParams, Hashable {
    public static let method = "exit"
    public static let summary = "The host exits: status 0 after shutdown, 1 otherwise."
    public static var allowedBeforeInitialize: Bool { true }
    /// The notification (no params).
    public init() {}
}

/// `$/cancelRequest`: cancel a request still waiting (client → host, and host → provider).
public struct CancelRequestNotification: NotificationType, Hashable {
    public static let method = "$/cancelRequest"
    public static let summary = "Cancels a request that is still waiting; it is answered -32800 once."
    public static var allowedBeforeInitialize: Bool { true }

    /// The id of the request to cancel, as written in that request.
    public var id: RequestID

    /// Cancels request `id`.
    public init(id: RequestID) { self.id = id }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        id = try RequestID(json: reader.required("id", expected: "a string, an integer or null"), path: reader.path("id"))
    }

    public var json: JSONValue { ["id": id.json] }

    public static var schema: JSONValue { Schema.object(["id": RequestID.schema], required: ["id"]) }
}

/// `ping`: the cheapest round trip; answers `{}` in every lifecycle state.
public struct PingRequest: RequestType, EmptyParams, Hashable {
    public typealias Response = EmptyObject
    public static let method = "ping"
    public static let summary = "The cheapest round trip; answers {} in every lifecycle state."
    public static var allowedBeforeInitialize: Bool { true }
    /// The request (no params).
    public init() {}
}
