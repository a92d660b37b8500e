import ContextProtocol

/// The Model Context Protocol as this bridge speaks it: the two deployed generations, the
/// per-request `_meta` keys of the newer one, and the error codes (the bridge's and the HTTP transport's). Host error codes are
/// never sent to an MCP client (MCP reserves −32020…−32099, which overlap the host's): a host
/// failure becomes a tool error (`isError`) or one of these.
package enum MCP {
    /// The handshake generation (`initialize`, server → client requests, pushed list changes).
    package static let handshakeVersion = "2025-11-25"
    /// Older handshake versions a client may ask for; answered in their own name (the shapes used
    /// here are the same in all of them).
    package static let handshakeVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    /// The stateless generation (`server/discover`, `_meta` on every request, `input_required`).
    package static let statelessVersion = "2026-07-28"

    package enum MetaKey {
        package static let protocolVersion = "io.modelcontextprotocol/protocolVersion"
        package static let clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
        package static let clientInfo = "io.modelcontextprotocol/clientInfo"
        package static let serverInfo = "io.modelcontextprotocol/serverInfo"
        package static let subscriptionID = "io.modelcontextprotocol/subscriptionId"
    }

    /// JSON-RPC and MCP error codes this bridge sends (JSON-RPC's own are the protocol's `ErrorCode`s).
    package enum Code {
        package static let parseError = ErrorCode.parseError.rawValue
        package static let invalidRequest = ErrorCode.invalidRequest.rawValue
        package static let methodNotFound = ErrorCode.methodNotFound.rawValue
        package static let invalidParams = ErrorCode.invalidParams.rawValue
        package static let internalError = ErrorCode.internalError.rawValue
        /// Streamable HTTP: a session id that names no open session (the SDKs' "session not found").
        package static let sessionNotFound = -32001
        /// 2026-07-28 over HTTP: a routing header missing, or different from the body.
        package static let headerMismatch = -32020
        /// 2025-11-25: a resource URI that names nothing (2026-07-28 uses `invalidParams`).
        package static let resourceNotFound = -32002
        /// 2026-07-28: the request's protocol version is not one this server speaks.
        package static let unsupportedProtocolVersion = -32022
    }

    package enum Method {
        package static let initialize = "initialize"
        package static let initialized = "notifications/initialized"
        package static let discover = "server/discover"
        package static let ping = "ping"
        package static let toolsList = "tools/list"
        package static let toolsCall = "tools/call"
        package static let resourcesList = "resources/list"
        package static let resourcesRead = "resources/read"
        package static let resourceTemplatesList = "resources/templates/list"
        package static let listen = "subscriptions/listen"
        package static let setLogLevel = "logging/setLevel"
        package static let cancelled = "notifications/cancelled"
        package static let progress = "notifications/progress"
        package static let elicit = "elicitation/create"
        package static let toolsListChanged = "notifications/tools/list_changed"
        package static let resourcesListChanged = "notifications/resources/list_changed"
        package static let subscriptionAcknowledged = "notifications/subscriptions/acknowledged"
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
