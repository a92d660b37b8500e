import ContextProviderKit

/// One HTTP request of the CalDAV client. Same fields as the SDK's `ProviderHTTPRequest` (the
/// host-brokered fetch of issue 37), so a transport over it is a field-for-field copy.
package struct CalDAVRequest: Sendable, Equatable {
    package var method: String
    package var url: String
    package var headers: [String: String]
    package var body: [UInt8]?
    package var timeoutSeconds: Double?

    package init(method: String, url: String, headers: [String: String], body: [UInt8]?, timeoutSeconds: Double?) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }
}

/// One HTTP answer; header names lower-cased (as the SDK's `ProviderHTTPResponse`).
package struct CalDAVResponse: Sendable, Equatable {
    package var status: Int
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// How the CalDAV client reaches the server. The provider's code only talks to this protocol:
/// in the shipped library it will be the host's brokered fetch (issue 37 item 2); tests pass
/// one over URLSession. A transport does not need to follow redirects (the client does, on the
/// same origin); it must not add cookies.
package protocol CalDAVTransport: Sendable {
    func send(_ request: CalDAVRequest) async throws -> CalDAVResponse
}

/// The transport the library uses when no other is given: the host has no brokered fetch yet
/// (issue 37 item 2, branch `accounts`), so every request fails with that reason, and the
/// provider serves its cached copy (if any) as offline.
struct UnavailableTransport: CalDAVTransport {
    package func send(_ request: CalDAVRequest) async throws -> CalDAVResponse {
        throw CalDAVError.transport(
            "this host cannot fetch for providers yet (no brokered HTTPS in this version)",
            hint: "update ContextHost to a version with host-brokered fetch; until then only the cached copy and local .ics files are shown")
    }
}

/// Adds `Authorization: Basic …` to requests for the account's origin, and to no other.
///
/// The ONE place the password is used. When the host injects secrets (a `type: secret` setting
/// sent as a header by the broker), this wrapper goes and the provider never holds the password.
package struct BasicAuthTransport: CalDAVTransport {
    let inner: any CalDAVTransport
    let origin: String
    let user: String
    let password: String

    package init(inner: any CalDAVTransport, origin: String, user: String, password: String) {
        self.inner = inner
        self.origin = origin
        self.user = user
        self.password = password
    }

    package func send(_ request: CalDAVRequest) async throws -> CalDAVResponse {
        var request = request
        if DAVURL(request.url)?.origin == origin, !user.isEmpty || !password.isEmpty {
            request.headers["Authorization"] = "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
        }
        return try await inner.send(request)
    }
}

/// An absolute `http(s)` URL split into its origin and path (query kept in the path).
package struct DAVURL: Sendable, Equatable {
    var scheme: String
    /// `host` or `host:port`, lower-cased.
    var authority: String
    /// Starts with `/`.
    var path: String

    package var origin: String { "\(scheme)://\(authority)" }
    package var string: String { origin + path }

    /// Parses `http://host[:port][/path]`; refuses user info (`user:pass@`), other schemes,
    /// control characters and spaces.
    package init?(_ text: String) {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            scheme = "https"
            rest = text.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            scheme = "http"
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        guard text.utf8.count <= 4096, !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let slash = rest.firstIndex(of: "/")
        let hostPart = slash.map { rest[..<$0] } ?? rest
        guard !hostPart.isEmpty, !hostPart.contains("@"), !hostPart.contains("?"), !hostPart.contains("#") else {
            return nil
        }
        authority = hostPart.lowercased()
        var pathPart = slash.map { String(rest[$0...]) } ?? "/"
        if let hash = pathPart.firstIndex(of: "#") { pathPart = String(pathPart[..<hash]) }
        path = pathPart.isEmpty ? "/" : pathPart
    }

    /// An `href` from a server answer, resolved against this URL. Only the same origin is
    /// followed (a server naming another origin could otherwise get the password).
    func resolve(_ href: String) -> DAVURL? {
        let trimmed = XMLNode.trimmed(href)
        if trimmed.lowercased().hasPrefix("http://") || trimmed.lowercased().hasPrefix("https://") {
            guard let url = DAVURL(trimmed), url.origin == origin else { return nil }
            return url
        }
        guard !trimmed.isEmpty, !trimmed.hasPrefix("//"),
            !trimmed.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F })
        else { return nil }
        var copy = self
        if trimmed.hasPrefix("/") {
            copy.path = trimmed
        } else {
            let base = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            copy.path = base + "/" + trimmed
        }
        return copy
    }
}
