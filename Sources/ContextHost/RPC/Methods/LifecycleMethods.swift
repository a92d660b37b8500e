import ContextProviderKit
import ContextProtocol

/// `initialize`: the client says who it is, its locale and which permissions it grants; the host
/// answers its capabilities and starts loading the providers in the background (requests that
/// need a provider wait for its load).
package enum InitializeMethod: RequestHandler {
    package static var allowedBeforeInitialize: Bool { true }

    package static func handle(_ request: InitializeRequest, context: RequestContext<InitializeResult>) throws(RPCError) {
        let server = context.server
        guard server.state == .uninitialized else {
            throw RPCError(.invalidRequest, "'initialize' may be sent only once.")
        }
        let client = try ClientInfo(request)
        server.transition(to: .running)
        context.answer(server.host.initializeResult(protocolVersion: client.protocolVersion))
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
package enum ShutdownMethod: RequestHandler {
    package static func handle(_ request: ShutdownRequest, context: RequestContext<NullResult>) throws(RPCError) {
        context.server.transition(to: .shutdown)
        context.answer(NullResult())
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
package enum PingMethod: RequestHandler {
    package static var allowedBeforeInitialize: Bool { true }
    private static let empty: [UInt8] = Array("{}".utf8)

    /// The wire's specialisation: the answer's bytes are written as they are, params unread.
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        empty.withUnsafeBytes { request.reply?.sendResult(raw: $0) }
    }

    package static func handle(_ request: PingRequest, context: RequestContext<EmptyObject>) throws(RPCError) {
        context.answer(EmptyObject())
    }
}

/// `log/setLevel {level}`: which provider log lines the client gets as `log/message` from now
/// on (`off`, `error`, `warning`, `info`, `debug`). Answers `{}`.
package enum SetLogLevelMethod: RequestHandler {
    package static func handle(_ request: SetLogLevelRequest, context: RequestContext<EmptyObject>) throws(RPCError) {
        context.host.logLevel.withLock { $0 = request.level }
        context.answer(EmptyObject())
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

    /// The client of an `initialize` request; fails when no protocol version is shared.
    init(_ request: InitializeRequest) throws(RPCError) {
        self.init(
            name: request.clientInfo?.name ?? "unknown", version: request.clientInfo?.version,
            protocolVersion: try Self.negotiate(request), locale: request.locale ?? "en-US",
            grantedPermissions: request.grantedPermissions ?? [], logLevel: request.logLevel ?? .off,
            ui: request.capabilities?.ui ?? .everything)
    }

    /// The highest version both sides speak: from `protocolVersions` (every version the client
    /// speaks), else the legacy `protocolVersion` (one integer; any other JSON type, e.g. an MCP
    /// client's date string, means "the current one"), else the current one.
    static func negotiate(_ request: InitializeRequest) throws(RPCError) -> Int {
        var requested: [Int]?
        if let versions = request.protocolVersions {
            guard !versions.isEmpty else {
                throw .invalidParams("params.protocolVersions: expected a non-empty array of integers, got an empty array")
            }
            requested = Array(versions.prefix(64))
        } else if let legacy = request.protocolVersion {
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
