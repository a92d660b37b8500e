import ContextProtocol

/// The Model Context Protocol as this bridge speaks it: the two deployed generations, the
/// per-request `_meta` keys of the newer one, and the standard error codes. Host error codes are
/// never sent to an MCP client (MCP reserves −32020…−32099, which overlap the host's): a host
/// failure becomes a tool error (`isError`) or one of these.
enum MCP {
    /// The handshake generation (`initialize`, server → client requests, pushed list changes).
    static let handshakeVersion = "2025-11-25"
    /// Older handshake versions a client may ask for; answered in their own name (the shapes used
    /// here are the same in all of them).
    static let handshakeVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    /// The stateless generation (`server/discover`, `_meta` on every request, `input_required`).
    static let statelessVersion = "2026-07-28"

    enum MetaKey {
        static let protocolVersion = "io.modelcontextprotocol/protocolVersion"
        static let clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
        static let clientInfo = "io.modelcontextprotocol/clientInfo"
        static let serverInfo = "io.modelcontextprotocol/serverInfo"
        static let subscriptionID = "io.modelcontextprotocol/subscriptionId"
    }

    /// JSON-RPC and MCP error codes this bridge sends.
    enum Code {
        static let parseError = -32700
        static let invalidRequest = -32600
        static let methodNotFound = -32601
        static let invalidParams = -32602
        static let internalError = -32603
        /// 2025-11-25: a resource URI that names nothing (2026-07-28 uses `invalidParams`).
        static let resourceNotFound = -32002
        /// 2026-07-28: the request's protocol version is not one this server speaks.
        static let unsupportedProtocolVersion = -32022
    }

    enum Method {
        static let initialize = "initialize"
        static let initialized = "notifications/initialized"
        static let discover = "server/discover"
        static let ping = "ping"
        static let toolsList = "tools/list"
        static let toolsCall = "tools/call"
        static let resourcesList = "resources/list"
        static let resourcesRead = "resources/read"
        static let resourceTemplatesList = "resources/templates/list"
        static let listen = "subscriptions/listen"
        static let setLogLevel = "logging/setLevel"
        static let cancelled = "notifications/cancelled"
        static let progress = "notifications/progress"
        static let elicit = "elicitation/create"
        static let toolsListChanged = "notifications/tools/list_changed"
        static let resourcesListChanged = "notifications/resources/list_changed"
        static let subscriptionAcknowledged = "notifications/subscriptions/acknowledged"
    }
}

/// An error answered to an MCP request.
struct MCPError: Error {
    var code: Int
    var message: String
    var data: JSONValue?

    init(_ code: Int, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    var json: JSONValue {
        var object: JSONObject = ["code": .number(Double(code)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }
}

/// What a client declared it can do, read from `initialize` (2025-11-25) or from each request's
/// `_meta` (2026-07-28).
struct MCPClientCapabilities: Sendable, Equatable {
    /// Form-mode elicitation: `elicitation: {}` or `elicitation: {form: {}}`.
    var formElicitation = false

    init(formElicitation: Bool = false) { self.formElicitation = formElicitation }

    init(json: JSONValue?) {
        guard let elicitation = json?["elicitation"]?.objectValue else { return }
        // `{}` means form (the 2025-06-18 shape); otherwise only the modes it names.
        formElicitation = elicitation.isEmpty || elicitation["form"] != nil
    }
}

extension JSONObject {
    /// Sets `key` to `value` when it is not nil.
    mutating func setIfPresent(_ key: String, _ value: JSONValue?) {
        if let value { self[key] = value }
    }
}
