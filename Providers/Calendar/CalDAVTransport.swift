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
/// in the shipped library it is the host's brokered fetch (`HostFetchTransport`); the library
/// tests and caldav-bench pass their own. A transport does not need to follow redirects (the
/// client does, on the same origin); it must not add cookies.
package protocol CalDAVTransport: Sendable {
    func send(_ request: CalDAVRequest) async throws -> CalDAVResponse
}

/// The shipped transport: the host's brokered fetch (`context.fetch`, `host/fetch`). The host
/// fetches only from the origins `network.origins` allows (caldavURL's), adds the
/// `Authorization: Basic` header from caldavUser and the `caldavPassword` secret it keeps (the
/// provider never holds the password), follows and re-checks redirects, and caps time and size.
/// A refusal or a failed connection becomes `CalDAVError.transport` with the host's message and
/// hint, so the account falls back to its cached copy.
struct HostFetchTransport: CalDAVTransport {
    let context: ProviderContext

    func send(_ request: CalDAVRequest) async throws -> CalDAVResponse {
        let response: ProviderHTTPResponse
        do {
            response = try await context.fetch(ProviderHTTPRequest(
                method: request.method, url: request.url, headers: request.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                body: request.body, timeoutSeconds: request.timeoutSeconds))
        } catch let error as ProviderError {
            throw CalDAVError.transport(
                error.message,
                hint: error.hint ?? "check the caldavURL setting and that the host may reach it (network.origins in the manifest)")
        }
        return CalDAVResponse(status: response.status, headers: response.headers, body: response.body)
    }
}

/// Adds `Authorization: Basic …` to requests for `origin`, and to no other: for the library tests
/// and caldav-bench, which call the CalDAV client without a host. The shipped provider never
/// uses it: there the host injects the `caldavPassword` secret (`HostFetchTransport`).
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
