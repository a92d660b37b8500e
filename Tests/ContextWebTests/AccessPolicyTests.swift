import Testing

@testable import ContextWeb

/// The listener's checks, rule by rule (the real binary is tested against a real WebSocket
/// client in Tests/IntegrationTests/WebListenerTests.swift).
@Suite("serve --listen: address, Host, Origin and token rules")
struct AccessPolicyTests {
    @Test("listen addresses: IP literals and localhost, with a port")
    func addresses() throws {
        let v4 = try ListenAddress(parsing: "127.0.0.1:8765")
        #expect(v4.bindHost == "127.0.0.1" && v4.port == 8765 && v4.isLoopback && !v4.isWildcard)
        let v6 = try ListenAddress(parsing: "[::1]:0")
        #expect(v6.bindHost == "::1" && v6.port == 0 && v6.isLoopback && v6.urlHost == "[::1]")
        let named = try ListenAddress(parsing: "localhost:8765")
        #expect(named.bindHost == "127.0.0.1" && named.namedLocalhost && named.isLoopback)
        #expect(try ListenAddress(parsing: "127.0.0.2:1").isLoopback)
        let any = try ListenAddress(parsing: "0.0.0.0:8765")
        #expect(!any.isLoopback && any.isWildcard)
        #expect(try ListenAddress(parsing: "[::]:1").isWildcard)
        #expect(try !ListenAddress(parsing: "192.168.1.5:80").isLoopback)
        for bad in ["8765", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "example.com:80", "::1:80", "[::1]80",
                    "[::1:80", "256.0.0.1:80", "01.0.0.1:80", "[1:2:3:4:5:6:7:8:9]:80", "[:::]:80", "127.0.0.1:8a"] {
            #expect(throws: ListenAddressError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }

    func policy(_ listen: String = "127.0.0.1:8765", port: Int = 8765, hosts: [String] = [], origins: [String] = [], token: BearerToken? = nil) throws -> AccessPolicy {
        AccessPolicy(address: try ListenAddress(parsing: listen), port: port, extraHosts: hosts, extraOrigins: origins, token: token)
    }

    @Test("Host must be the listener's address (DNS rebinding)")
    func host() throws {
        let p = try policy()
        #expect(p.decide(host: ["127.0.0.1:8765"], origin: [], authorization: [], webSocketProtocols: []) == .allow)
        #expect(p.decide(host: ["LOCALHOST:8765"], origin: [], authorization: [], webSocketProtocols: []) == .allow)
        for bad in ["evil.example:8765", "127.0.0.1:8766", "127.0.0.1", "127.0.0.2:8765", "evil.example"] {
            guard case .refuse(403, _) = p.decide(host: [bad], origin: [], authorization: [], webSocketProtocols: []) else {
                Issue.record("Host \(bad) was not refused with 403")
                continue
            }
        }
        #expect(p.decide(host: [], origin: [], authorization: [], webSocketProtocols: []).status == 400)
        #expect(p.decide(host: ["127.0.0.1:8765", "127.0.0.1:8765"], origin: [], authorization: [], webSocketProtocols: []).status == 400)
        let v6 = try policy("[::1]:8765")
        #expect(v6.decide(host: ["[::1]:8765"], origin: [], authorization: [], webSocketProtocols: []) == .allow)
        #expect(v6.decide(host: ["127.0.0.1:8765"], origin: [], authorization: [], webSocketProtocols: []).status == 403)
        let proxied = try policy(hosts: ["chat.example.com"])
        #expect(proxied.decide(host: ["chat.example.com"], origin: [], authorization: [], webSocketProtocols: []) == .allow)
        // A wildcard bind: any IP literal with the port, never a name.
        let wildcard = try policy("0.0.0.0:8765", token: .generate())
        #expect(wildcard.decide(host: ["10.1.2.3:8765"], origin: [], authorization: [], webSocketProtocols: []).status == 401)
        #expect(wildcard.decide(host: ["[fe80::1]:8765"], origin: [], authorization: [], webSocketProtocols: []).status == 401)
        #expect(wildcard.decide(host: ["evil.example:8765"], origin: [], authorization: [], webSocketProtocols: []).status == 403)
        #expect(wildcard.decide(host: ["10.1.2.3:8766"], origin: [], authorization: [], webSocketProtocols: []).status == 403)
    }

    @Test("Origin, when sent, must be the listener's own or allowed")
    func origin() throws {
        let p = try policy(origins: ["http://localhost:5173", "app://my-app/"])
        let host = ["127.0.0.1:8765"]
        #expect(p.decide(host: host, origin: ["http://127.0.0.1:8765"], authorization: [], webSocketProtocols: []) == .allow)
        #expect(p.decide(host: host, origin: ["http://localhost:5173"], authorization: [], webSocketProtocols: []) == .allow)
        #expect(p.decide(host: host, origin: ["APP://my-app"], authorization: [], webSocketProtocols: []) == .allow)
        for bad in ["http://evil.example", "null", "https://127.0.0.1:8765", "http://127.0.0.1:8766", "http://localhost:5174", "*"] {
            #expect(p.decide(host: host, origin: [bad], authorization: [], webSocketProtocols: []).status == 403, "\(bad)")
        }
        #expect(p.decide(host: host, origin: ["http://127.0.0.1:8765", "http://evil.example"], authorization: [], webSocketProtocols: []).status == 403)
    }

    @Test("behind a TLS proxy (--no-own-origin): the own http:// origin is refused, the listed https one passes")
    func noOwnOrigin() throws {
        let listen = try ListenAddress(parsing: "127.0.0.1:8765")
        let behindProxy = AccessPolicy(
            address: listen, port: 8765, extraHosts: ["chat.example.com"], extraOrigins: ["https://chat.example.com"], token: nil,
            acceptsOwnOrigin: false)
        let host = ["chat.example.com"]
        #expect(behindProxy.decide(host: host, origin: ["http://chat.example.com"], authorization: [], webSocketProtocols: []).status == 403)
        #expect(behindProxy.decide(host: host, origin: ["https://chat.example.com"], authorization: [], webSocketProtocols: []) == .allow)
        #expect(behindProxy.decide(host: host, origin: [], authorization: [], webSocketProtocols: []) == .allow)
        // Control: the same policy with the own-origin rule lets the plain-HTTP page in.
        let ownOrigin = AccessPolicy(
            address: listen, port: 8765, extraHosts: ["chat.example.com"], extraOrigins: ["https://chat.example.com"], token: nil)
        #expect(ownOrigin.decide(host: host, origin: ["http://chat.example.com"], authorization: [], webSocketProtocols: []) == .allow)
    }

    @Test("a token, when set, as a bearer header or a subprotocol entry")
    func token() throws {
        let token = try BearerToken(text: String(repeating: "a1", count: 20) + "\n")
        let p = try policy(token: token)
        let host = ["127.0.0.1:8765"]
        #expect(p.decide(host: host, origin: [], authorization: [], webSocketProtocols: []).status == 401)
        #expect(p.decide(host: host, origin: [], authorization: ["Bearer " + token.value], webSocketProtocols: []) == .allow)
        #expect(p.decide(host: host, origin: [], authorization: ["bearer  " + token.value], webSocketProtocols: []) == .allow)
        #expect(p.decide(host: host, origin: [], authorization: [], webSocketProtocols: ["context-host.jsonrpc, bearer." + token.value]) == .allow)
        #expect(p.decide(host: host, origin: [], authorization: ["Bearer " + token.value + "x"], webSocketProtocols: []).status == 401)
        #expect(p.decide(host: host, origin: [], authorization: ["Bearer " + String(token.value.dropLast())], webSocketProtocols: []).status == 401)
        #expect(p.decide(host: host, origin: [], authorization: ["Basic " + token.value], webSocketProtocols: []).status == 401)
        #expect(p.decide(host: host, origin: [], authorization: [], webSocketProtocols: [token.value]).status == 401)
        // Host and Origin are checked first: a right token does not excuse a rebinding Host.
        #expect(p.decide(host: ["evil.example:8765"], origin: [], authorization: ["Bearer " + token.value], webSocketProtocols: []).status == 403)
        #expect(!token.matches("".utf8))
        #expect(token.matches(token.value.utf8))
    }

    @Test("tokens from files: length and characters checked; generated ones are 64 hex digits")
    func tokenText() throws {
        #expect(throws: TokenError.self) { try BearerToken(text: "short") }
        #expect(throws: TokenError.self) { try BearerToken(text: String(repeating: "a", count: 40) + " b") }
        #expect(throws: TokenError.self) { try BearerToken(text: String(repeating: "a", count: 40) + ",") }
        let a = BearerToken.generate(), b = BearerToken.generate()
        #expect(a.value.count == 64 && a.value.allSatisfy(\.isHexDigit) && a.value != b.value)
    }

    @Test("rate limiter: a burst at once, then the rate")
    func rate() {
        var limiter = RateLimiter(perSecond: 10, burst: 5)
        let start = ContinuousClock.now
        for _ in 0..<5 { #expect(limiter.take(now: start) == nil) }
        let wait = limiter.take(now: start)
        #expect(wait != nil && wait! > .milliseconds(90) && wait! <= .milliseconds(100))
        #expect(limiter.take(now: start + .seconds(1)) == nil)
        var unlimited = RateLimiter(perSecond: 0, burst: 1)
        for _ in 0..<1000 { #expect(unlimited.take(now: start) == nil) }
    }
}

extension AccessPolicy.Decision {
    var status: Int? {
        if case .refuse(let status, _) = self { return status }
        return nil
    }
}
