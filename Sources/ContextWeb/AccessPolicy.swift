/// Who may talk to a listener: the checks every HTTP request (the WebSocket upgrade included)
/// passes before anything else runs. Pure, so each rule is tested on its own.
///
/// In order: the `Host` header must name the listener (DNS rebinding: a page whose name
/// resolves to 127.0.0.1 still sends its own name); an `Origin` header, when present, must be
/// the listener's own origin or one allowed with `--allow-origin` (a page on another site, or a
/// hostile page on this machine, sends its origin and cannot forge it); and when a token is set,
/// the request must carry it (`Authorization: Bearer`, or a `bearer.<token>` WebSocket subprotocol
/// entry for browsers, which cannot set headers on a WebSocket). Refusals are HTTP statuses: 400,
/// 403, 401 (docs/web.md).
package struct AccessPolicy: Sendable {
    /// The port the listener is bound to (after binding port 0).
    package var port: Int
    /// `Host` values accepted, lowercased, exactly as a client sends them (`127.0.0.1:8765`).
    package var allowedHosts: Set<String>
    /// A wildcard bind (0.0.0.0, ::): any IP literal with the listener's port is a valid `Host`
    /// too. (A DNS rebinding attack needs a name, so IP literals cannot be rebinding.)
    package var acceptsAnyAddressHost: Bool
    /// Origins accepted besides the listener's own (`http://` + the request's valid `Host`),
    /// lowercased, without a trailing slash.
    package var allowedOrigins: Set<String>
    /// The bearer token, when one is required.
    package var token: BearerToken?
    /// Whether the listener's own origin (`http://` + `Host`) passes without being listed. Off
    /// behind a TLS proxy (`--no-own-origin`): there the own origin is a plain-HTTP page on the
    /// proxy's name, which only `--allow-origin https://…` should let in.
    package var acceptsOwnOrigin = true

    package init(port: Int, allowedHosts: Set<String>, acceptsAnyAddressHost: Bool, allowedOrigins: Set<String>, token: BearerToken?) {
        self.port = port
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.acceptsAnyAddressHost = acceptsAnyAddressHost
        self.allowedOrigins = Set(allowedOrigins.map { Self.normalizedOrigin($0) })
        self.token = token
    }

    /// The policy of a listener bound to `address` on `port`, with the extra hosts and origins
    /// the user allowed.
    package init(
        address: ListenAddress, port: Int, extraHosts: [String], extraOrigins: [String], token: BearerToken?, acceptsOwnOrigin: Bool = true
    ) {
        var hosts: Set<String> = ["\(address.urlHost):\(port)"]
        // `localhost` cannot be rebound (browsers resolve it to loopback themselves).
        if address.isLoopback { hosts.insert("localhost:\(port)") }
        if port == 80 {
            // Browsers leave the default port out of `Host`.
            hosts.insert(address.urlHost)
            if address.isLoopback { hosts.insert("localhost") }
        }
        if address.isWildcard { hosts = [] }
        hosts.formUnion(extraHosts)
        self.init(port: port, allowedHosts: hosts, acceptsAnyAddressHost: address.isWildcard, allowedOrigins: Set(extraOrigins), token: token)
        self.acceptsOwnOrigin = acceptsOwnOrigin
    }

    /// What to do with a request.
    package enum Decision: Sendable, Equatable {
        case allow
        /// Answer `status` with `reason` as the body, then close the connection.
        case refuse(status: Int, reason: String)
    }

    /// Decides on a request from its header values (each list holds every occurrence).
    /// `tokenExempt`: a public file (the composer's), which needs no token; `Host` and `Origin`
    /// are checked all the same.
    package func decide(host: [String], origin: [String], authorization: [String], webSocketProtocols: [String], tokenExempt: Bool = false) -> Decision {
        // 1. Host.
        guard host.count == 1, let hostValue = host.first?.lowercased(), !hostValue.isEmpty else {
            return .refuse(status: 400, reason: host.isEmpty ? "The request has no Host header." : "The request has more than one Host header.")
        }
        guard isAllowedHost(hostValue) else {
            return .refuse(status: 403, reason: "Host '\(Self.printable(hostValue))' is not this listener's address (DNS rebinding protection); connect to \(allowedHostsDescription), or start the host with --allow-host.")
        }
        // 2. Origin (browsers send it; other clients usually do not).
        if !origin.isEmpty {
            guard origin.count == 1, let originValue = origin.first else {
                return .refuse(status: 403, reason: "The request has more than one Origin header.")
            }
            let normalized = Self.normalizedOrigin(originValue)
            guard (acceptsOwnOrigin && normalized == "http://" + hostValue) || allowedOrigins.contains(normalized) else {
                return .refuse(status: 403, reason: "Origin '\(Self.printable(originValue))' is not allowed; start the host with --allow-origin \(Self.printable(originValue)) to let that page connect (docs/web.md).")
            }
        }
        // 3. Token.
        if let token, !tokenExempt {
            var candidates: [Substring] = []
            for value in authorization {
                let trimmed = value.drop { $0 == " " }
                if trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " {
                    candidates.append(trimmed.dropFirst(7).drop { $0 == " " })
                }
            }
            for value in webSocketProtocols {
                for entry in value.split(separator: ",") {
                    let entry = entry.drop { $0 == " " || $0 == "\t" }
                    let trimmed = entry.prefix { $0 != " " && $0 != "\t" }
                    if trimmed.hasPrefix(Self.tokenSubprotocolPrefix) { candidates.append(trimmed.dropFirst(Self.tokenSubprotocolPrefix.count)) }
                }
            }
            guard !candidates.isEmpty else {
                return .refuse(status: 401, reason: "This listener needs its token: send 'Authorization: Bearer <token>', or from a browser the WebSocket subprotocol 'bearer.<token>' (docs/web.md).")
            }
            // Every candidate is compared (in constant time), so the time does not tell which matched.
            var matched = false
            for candidate in candidates.prefix(4) where token.matches(candidate.utf8) { matched = true }
            guard matched else {
                return .refuse(status: 401, reason: "The token does not match this listener's token.")
            }
        }
        return .allow
    }

    /// The subprotocol entry prefix that carries the token from a browser.
    package static let tokenSubprotocolPrefix = "bearer."
    /// The subprotocol the listener speaks (and answers when a client offers it).
    package static let subprotocol = "context-host.jsonrpc"

    private func isAllowedHost(_ value: String) -> Bool {
        if allowedHosts.contains(value) { return true }
        guard acceptsAnyAddressHost else { return false }
        // An IP literal with our port: `1.2.3.4:PORT` or `[::1]:PORT`.
        let host: Substring
        let portText: Substring
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return false }
            host = value[value.index(after: value.startIndex)..<close]
            let rest = value[value.index(after: close)...]
            guard rest.first == ":" else { return false }
            portText = rest.dropFirst()
            guard IPAddressText.isIPv6(host) else { return false }
        } else {
            guard let colon = value.lastIndex(of: ":") else { return false }
            host = value[..<colon]
            portText = value[value.index(after: colon)...]
            guard IPAddressText.isIPv4(host) else { return false }
        }
        return portText == String(port)
    }

    private var allowedHostsDescription: String {
        let names = allowedHosts.sorted()
        if acceptsAnyAddressHost { return (names + ["an IP address of this machine with port \(port)"]).joined(separator: " or ") }
        return names.joined(separator: " or ")
    }

    /// `Origin` values compare lowercased, without a trailing slash.
    static func normalizedOrigin(_ value: String) -> String {
        var value = value.lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }

    /// A header value as it may appear in a refusal: at most 200 printable ASCII characters.
    static func printable(_ value: String) -> String {
        String(value.unicodeScalars.prefix(200).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}
