import ContextProviderKit

/// `initialize`: the client says who it is, its locale and which permissions it grants; the host
/// answers its capabilities and starts loading the providers in the background (requests that
/// need a provider wait for its load).
package enum InitializeMethod: MethodHandler {
    package static let method = InitializeRequest.method
    package static var allowedBeforeInitialize: Bool { true }

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard server.state == .uninitialized else {
            throw RPCError(.invalidRequest, "'initialize' may be sent only once.")
        }
        let params = try request.params()
        let client = try ClientInfo(params: params)
        server.transition(to: .running)
        request.reply?.sendResult(server.host.initializeResult(protocolVersion: client.protocolVersion))
        // The answer leaves before the loads compete for the CPU; requests after it in this
        // batch are handled after `initialize(client:)` below, so they see the loads pending.
        server.output.flush()
        server.host.initialize(client: client)
        server.host.startWatchingManifests()
    }
}

/// `initialized`: a notification the client sends after the `initialize` reply. Nothing to do.
package enum InitializedNotification: MethodHandler {
    package static let method = ContextProtocol.InitializedNotification.method
    package static var allowedBeforeInitialize: Bool { true }
    package static var isNotification: Bool { true }
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {}
}

/// `shutdown`: stop accepting requests; `exit` follows.
package enum ShutdownMethod: MethodHandler {
    package static let method = ShutdownRequest.method
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        server.transition(to: .shutdown)
        request.reply?.sendResult(.null)
    }
}

/// `exit`: leave with status 0 after `shutdown`, 1 otherwise (as in LSP).
package enum ExitNotification: MethodHandler {
    package static let method = ContextProtocol.ExitNotification.method
    package static var allowedBeforeInitialize: Bool { true }
    package static var isNotification: Bool { true }
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        server.exit(status: server.state == .shutdown ? 0 : 1)
    }
}

/// `$/cancelRequest`: answers the named request with -32800 and tells its provider to stop.
package enum CancelRequestNotification: MethodHandler {
    package static let method = ContextProtocol.CancelRequestNotification.method
    package static var allowedBeforeInitialize: Bool { true }
    package static var isNotification: Bool { true }
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        let key: String? = try request.withRawParams { bytes, range throws(RPCError) in
            guard let range else { return nil }
            guard let id = try? RawObject.member("id", of: bytes, in: range) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[id]), as: UTF8.self)
        }
        if let key { server.cancel(idText: key) }
    }
}

/// `ping`: answers `{}`. The cheapest round trip, used to measure host overhead.
package enum PingMethod: MethodHandler {
    package static let method = PingRequest.method
    package static var allowedBeforeInitialize: Bool { true }
    private static let empty: [UInt8] = Array("{}".utf8)
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        empty.withUnsafeBytes { request.reply?.sendResult(raw: $0) }
    }
}

/// `log/setLevel {level}`: which provider log lines the client gets as `log/message` from now
/// on (`off`, `error`, `warning`, `info`, `debug`). Answers `{}`.
package enum SetLogLevelMethod: MethodHandler {
    package static let method = SetLogLevelRequest.method
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        let params = try request.params()
        let level: SetLogLevelRequest
        do throws(JSONDecodeError) {
            level = try SetLogLevelRequest(json: .object(params.object), path: "params")
        } catch {
            throw .invalidParams("\(error)")
        }
        server.host.logLevel.withLock { $0 = level.level }
        request.reply?.sendResult([:])
    }
}

/// What the client told the host in `initialize`.
package struct ClientInfo: Sendable, Equatable {
    package var name: String
    package var version: String?
    /// The negotiated protocol version (`ProtocolVersion`).
    package var protocolVersion: Int
    package var locale: String
    package var grantedPermissions: [String]
    /// The `log/message` level asked for at `initialize` (`log/setLevel` changes the host's copy).
    package var logLevel: LogLevel
    /// What the client renders (`capabilities.ui`); passed to providers in the init JSON.
    package var ui: UICapabilities

    package init(
        name: String = "unknown", version: String? = nil, protocolVersion: Int = ProtocolVersion.current, locale: String = "en-US",
        grantedPermissions: [String] = [], logLevel: LogLevel = .off, ui: UICapabilities = .everything
    ) {
        self.name = name
        self.version = version
        self.protocolVersion = protocolVersion
        self.locale = locale
        self.grantedPermissions = grantedPermissions
        self.logLevel = logLevel
        self.ui = ui
    }

    init(params: Params) throws(RPCError) {
        let info = try params.optionalObject("clientInfo")
        let name = info?["name"]?.stringValue ?? "unknown"
        let version = info?["version"]?.stringValue
        var ui = UICapabilities.everything
        if let value = try params.optionalObject("capabilities")?["ui"], !value.isNull {
            do throws(JSONDecodeError) {
                ui = try UICapabilities(json: value, path: "params.capabilities.ui")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
        var logLevel = LogLevel.off
        if let value = params.object["logLevel"], !value.isNull {
            do throws(JSONDecodeError) {
                logLevel = try LogLevel(json: value, path: "params.logLevel")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
        self.init(
            name: name, version: version, protocolVersion: try Self.negotiate(params),
            locale: try params.optionalString("locale") ?? "en-US",
            grantedPermissions: try params.optionalStrings("grantedPermissions") ?? [], logLevel: logLevel, ui: ui)
    }

    /// The highest version both sides speak: from `protocolVersions` (every version the client
    /// speaks), else the legacy `protocolVersion` (one integer; any other JSON type, e.g. an MCP
    /// client's date string, means "the current one"), else the current one.
    static func negotiate(_ params: Params) throws(RPCError) -> Int {
        var requested: [Int]?
        if let value = params.object["protocolVersions"], !value.isNull {
            guard let array = value.arrayValue, !array.isEmpty else {
                throw .invalidParams("params.protocolVersions: expected a non-empty array of integers, got \(value.typeName)")
            }
            var versions: [Int] = []
            for (index, element) in array.prefix(64).enumerated() {
                guard let version = element.intValue else {
                    throw .invalidParams("params.protocolVersions[\(index)]: expected an integer, got \(element.typeName)")
                }
                versions.append(version)
            }
            requested = versions
        } else if let legacy = params.object["protocolVersion"]?.intValue {
            requested = [legacy]
        }
        guard let requested else { return ProtocolVersion.current }
        if let version = ProtocolVersion.negotiate(requested) { return version }
        let supported = ProtocolVersion.supported
        throw RPCError(
            .protocolVersionUnsupported,
            "The client speaks protocol versions \(requested.map(String.init).joined(separator: ", ")), but this host speaks \(supported.map(String.init).joined(separator: ", ")); "
                + "send initialize again with protocolVersions listing one of \(supported.map(String.init).joined(separator: ", ")) (or update the host).",
            data: ["supported": .array(supported.map { .number(Double($0)) }), "requested": .array(requested.map { .number(Double($0)) })])
    }
}
