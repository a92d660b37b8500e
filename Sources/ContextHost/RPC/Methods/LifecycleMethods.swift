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
        request.reply?.sendResult(server.host.initializeResult(clientProtocolVersion: client.protocolVersion))
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

/// What the client told the host in `initialize`.
package struct ClientInfo: Sendable, Equatable {
    package var name: String
    package var version: String?
    package var protocolVersion: Int
    package var locale: String
    package var grantedPermissions: [String]

    package init(name: String = "unknown", version: String? = nil, protocolVersion: Int = 1, locale: String = "en-US", grantedPermissions: [String] = []) {
        self.name = name
        self.version = version
        self.protocolVersion = protocolVersion
        self.locale = locale
        self.grantedPermissions = grantedPermissions
    }

    init(params: Params) throws(RPCError) {
        let info = try params.optionalObject("clientInfo")
        let name = info?["name"]?.stringValue ?? "unknown"
        let version = info?["version"]?.stringValue
        self.init(
            name: name, version: version,
            // An integer; other kinds (e.g. an MCP client's date string) mean "the current one".
            protocolVersion: params.object["protocolVersion"]?.intValue ?? HostConfiguration.protocolVersion,
            locale: try params.optionalString("locale") ?? "en-US",
            grantedPermissions: try params.optionalStrings("grantedPermissions") ?? [])
    }
}
