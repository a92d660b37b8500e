/// `initialize`: who the client is, its locale, the permissions it grants and the protocol
/// versions it speaks. Every member is optional.
public struct InitializeRequest: RequestType, Hashable {
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

    /// Reads the params as the host does: `protocolVersion` of another JSON type is ignored
    /// (the host reads it as the current version).
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json.isNull ? .object([:]) : json, path: path)
        clientInfo = try reader.optionalDecode("clientInfo")
        protocolVersion = reader.value("protocolVersion")?.intValue
        protocolVersions = try reader.optionalInts("protocolVersions")
        locale = try reader.optionalString("locale")
        grantedPermissions = try reader.optionalStrings("grantedPermissions")
        logLevel = try reader.optionalDecode("logLevel")
        capabilities = try reader.optionalDecode("capabilities")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("clientInfo", clientInfo)
        object.set("protocolVersion", protocolVersion)
        object.setInts("protocolVersions", protocolVersions)
        object.set("locale", locale)
        object.setStrings("grantedPermissions", grantedPermissions)
        object.set("logLevel", logLevel)
        object.set("capabilities", capabilities)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "clientInfo": ClientInfo.schema,
            "protocolVersion": Schema.integer("The one version the client speaks (legacy; other JSON types are read as the current version)."),
            "protocolVersions": Schema.array(Schema.integer(), "Every protocol version the client speaks."),
            "locale": Schema.string("BCP 47 tag, e.g. en-US (default)."),
            "grantedPermissions": Schema.array(Schema.string(), "Permissions the client grants: network, location, health, calendar, files, contacts."),
            "logLevel": LogLevel.schema,
            "capabilities": ClientCapabilities.schema,
        ])
    }
}

extension InitializeRequest {
    /// `initialize`'s `clientInfo`. The host ignores wrongly typed members, and so does this type.
    public struct ClientInfo: WireValue, Hashable {
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

        public init(json: JSONValue, path: String) throws(JSONDecodeError) {
            let reader = try JSONObjectReader(json, path: path)
            name = reader.value("name")?.stringValue
            version = reader.value("version")?.stringValue
            extra = reader.object.removing(["name", "version"])
        }

        public var json: JSONValue {
            var object = JSONObject()
            object.set("name", name)
            object.set("version", version)
            object.append(extra)
            return .object(object)
        }

        public static var schema: JSONValue {
            Schema.object(["name": Schema.string(), "version": Schema.string()], description: "Who the client is; wrongly typed members are ignored.")
        }
    }
}

/// What a client can do, sent in `initialize`.
public struct ClientCapabilities: WireValue, Hashable {
    /// What the client renders.
    public var ui: UICapabilities?

    /// Creates capabilities.
    public init(ui: UICapabilities? = nil) { self.ui = ui }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        ui = try reader.optionalDecode("ui")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("ui", ui)
        return .object(object)
    }

    public static var schema: JSONValue { Schema.object(["ui": UICapabilities.schema]) }
}

// `UICapabilities` (what the client renders) is in Protocol/UICapabilities.swift.

/// `initialize`'s answer.
public struct InitializeResult: WireValue, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        protocolVersion = try reader.int("protocolVersion")
        protocolVersions = try reader.optionalInts("protocolVersions")
        serverInfo = try reader.decode("serverInfo")
        capabilities = try reader.decode("capabilities")
        extra = reader.object.removing(["protocolVersion", "protocolVersions", "serverInfo", "capabilities"])
    }

    public var json: JSONValue {
        var object = JSONObject()
        object["protocolVersion"] = .number(Double(protocolVersion))
        object.setInts("protocolVersions", protocolVersions)
        object["serverInfo"] = serverInfo.json
        object["capabilities"] = capabilities.json
        object.append(extra)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "protocolVersion": Schema.integer("The version the host speaks in this session."),
            "protocolVersions": Schema.array(Schema.integer(), "Every version the host supports."),
            "serverInfo": ServerInfo.schema,
            "capabilities": HostCapabilities.schema,
        ], required: ["protocolVersion", "serverInfo", "capabilities"])
    }
}

/// The host's name and version (`{"name":"context-host","version":…}`).
public struct ServerInfo: WireValue, Hashable {
    /// `context-host`.
    public var name: String
    /// The host's version.
    public var version: String

    /// Creates server info.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        name = try reader.string("name")
        version = try reader.string("version")
    }

    public var json: JSONValue { ["name": .string(name), "version": .string(version)] }

    public static var schema: JSONValue {
        Schema.object(["name": Schema.string(), "version": Schema.string()], required: ["name", "version"])
    }
}

/// `initialize`'s `capabilities`: the methods, features and limits in force.
public struct HostCapabilities: WireValue, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        methods = try reader.optionalStrings("methods") ?? []
        features = try reader.optionalStrings("features") ?? []
        ctxui = try reader.optionalInt("ctxui")
        maximumMessageBytes = try reader.optionalInt("maximumMessageBytes")
        if let limitsReader = try reader.optionalObject("limits") {
            var limits: [String: Int] = [:]
            for (name, _) in limitsReader.object { limits[name] = try limitsReader.int(name) }
            self.limits = limits
        } else {
            limits = nil
        }
        extra = reader.object.removing(["methods", "features", "ctxui", "maximumMessageBytes", "limits"])
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.setStrings("methods", methods)
        object.setStrings("features", features)
        object.set("ctxui", ctxui)
        object.set("maximumMessageBytes", maximumMessageBytes)
        if let limits {
            var members = JSONObject()
            for name in limits.keys.sorted() { members[name] = .number(Double(limits[name]!)) }
            object["limits"] = .object(members)
        }
        object.append(extra)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "methods": Schema.array(Schema.string(), "Every method name the host answers, except $/… ones."),
            "features": Schema.array(Schema.string()),
            "ctxui": Schema.integer("The declarative-view schema version."),
            "maximumMessageBytes": Schema.integer("The message size cap in force."),
            "limits": ["type": "object", "additionalProperties": ["type": "integer"], "description": "The input limits in force (docs/security.md §6)."],
        ], required: ["methods", "features"])
    }
}

/// `initialized`: sent after the `initialize` answer; the host does nothing with it.
public struct InitializedNotification: NotificationType, Hashable {
    public static let method = "initialized"
    public static let summary = "Sent after the initialize answer; the host does nothing with it."
    public static var allowedBeforeInitialize: Bool { true }
    /// The notification (no params).
    public init() {}
    public init(json: JSONValue, path: String) throws(JSONDecodeError) { _ = try EmptyObject(json: json, path: path) }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { EmptyObject.schema }
}

/// `shutdown`: stop accepting requests; only `exit` should follow. Answers `null`.
public struct ShutdownRequest: RequestType, Hashable {
    public typealias Response = NullResult
    public static let method = "shutdown"
    public static let summary = "Stops accepting requests; only exit should follow."
    public static var errors: [ErrorCode] { [.invalidRequest] }
    /// The request (no params).
    public init() {}
    public init(json: JSONValue, path: String) throws(JSONDecodeError) { _ = try EmptyObject(json: json, path: path) }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { EmptyObject.schema }
}

/// `exit`: the host exits, status 0 after `shutdown`, 1 otherwise.
public struct ExitNotification: NotificationType, Hashable {
    public static let method = "exit"
    public static let summary = "The host exits: status 0 after shutdown, 1 otherwise."
    public static var allowedBeforeInitialize: Bool { true }
    /// The notification (no params).
    public init() {}
    public init(json: JSONValue, path: String) throws(JSONDecodeError) { _ = try EmptyObject(json: json, path: path) }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { EmptyObject.schema }
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
public struct PingRequest: RequestType, Hashable {
    public typealias Response = EmptyObject
    public static let method = "ping"
    public static let summary = "The cheapest round trip; answers {} in every lifecycle state."
    public static var allowedBeforeInitialize: Bool { true }
    /// The request (no params).
    public init() {}
    public init(json: JSONValue, path: String) throws(JSONDecodeError) { _ = try EmptyObject(json: json, path: path) }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { EmptyObject.schema }
}
