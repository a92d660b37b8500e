import Dispatch
import ContextProviderKit
import Logging

/// A provider's egress rules with its settings applied: the origins it may reach and the secrets
/// injected into requests to each.
package struct ResolvedEgress: Sendable {
    package struct Origin: Sendable, Hashable {
        /// `https://host[:port]`.
        package var origin: String
        package var privateAddresses: Bool
        /// The manifest field that allows it.
        package var field: String
    }

    package struct Injection: Sendable, Hashable {
        package var origin: String
        package var secretName: String
        package var place: SecretInjection.Place
        package var format: String
        /// The user name for `Basic` (from `basicUserSetting`).
        package var basicUser: String?
    }

    package var providerID: String
    package var manifestPath: String
    package var origins: [Origin]
    package var injections: [Injection]
    package var maximumResponseBytes: Int
    package var timeout: Duration

    /// From a manifest and its resolved settings (origins taken from settings use their values;
    /// an empty or invalid value allows nothing).
    package init(manifest: Manifest, settings: JSONObject) {
        providerID = manifest.id
        manifestPath = manifest.manifestPath
        let policy = manifest.network ?? NetworkPolicy()
        maximumResponseBytes = policy.maximumResponseBytes
        timeout = policy.timeout
        func origin(of source: OriginRule.Source) -> String? {
            switch source {
            case .fixed(let origin): return origin
            case .setting(let name):
                guard let text = settings[name]?.stringValue, !text.isEmpty,
                    let url = try? HTTPSURL(parsing: text)
                else { return nil }
                return url.origin
            }
        }
        origins = policy.origins.compactMap { rule in
            origin(of: rule.source).map { Origin(origin: $0, privateAddresses: rule.privateAddresses, field: rule.fieldPath) }
        }
        injections = manifest.settings.compactMap { setting in
            guard setting.type == .secret, let inject = setting.inject, let target = origin(of: inject.origin) else { return nil }
            return Injection(
                origin: target, secretName: setting.name, place: inject.place, format: inject.format,
                basicUser: inject.basicUserSetting.flatMap { settings[$0]?.stringValue })
        }
    }
}

/// Performs `host/fetch` for providers: checks every hop against the provider's allow-list and
/// address rules, injects its secrets, follows redirects itself, caps time and size, scrubs the
/// secrets from what comes back, and logs each hop (docs/security.md, "Egress").
package struct EgressBroker: Sendable {
    package let transport: (any HTTPTransport)?
    package let secrets: (any SecretStore)?
    package let logger: Logger

    /// Most redirects followed.
    package static let maximumRedirects = 5
    /// Methods a provider may use.
    package static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND", "REPORT"]
    /// Headers the host sets or that would let a provider step around it.
    package static let forbiddenHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
        "cookie", "proxy-authorization", "proxy-connection", "expect",
    ]

    package init(transport: (any HTTPTransport)?, secrets: (any SecretStore)?, logger: Logger) {
        self.transport = transport
        self.secrets = secrets
        self.logger = logger
    }

    /// The async form of `fetch(_:egress:completion:)`.
    package func fetch(_ request: ProviderHTTPRequest, egress: ResolvedEgress) async -> Result<ProviderHTTPResponse, EgressRefusal> {
        await withCheckedContinuation { continuation in
            fetch(request, egress: egress) { continuation.resume(returning: $0) }
        }
    }

    /// Performs the fetch, hop by hop: the request is checked once, then each hop's URL is
    /// checked, its secrets injected and it is sent; a redirect starts the next hop.
    /// `completion` is called exactly once, with the final response or the refusal (its message
    /// scrubbed of the secrets that went out: a server may echo one into a Location or an
    /// error).
    ///
    /// Threads: what cannot block runs on the caller's thread (for `host/fetch`, the thread that
    /// read the worker's request), and the answer is handled where the transport completes
    /// (AsyncHTTPTransport: its event loop), with no hop through the task pool. A hop that may
    /// block — a name not resolved within `EgressAddress.cacheLifetime`, or a secret to read (a
    /// keyring may block) — is moved to a global queue first, so neither the caller nor the
    /// event loop waits for the resolver or the keyring.
    package func fetch(
        _ request: ProviderHTTPRequest, egress: ResolvedEgress, completion: @escaping @Sendable (Result<ProviderHTTPResponse, EgressRefusal>) -> Void
    ) {
        guard let transport else {
            return completion(.failure(EgressRefusal(
                code: .unavailable, message: "this host has no HTTPS broker", field: nil,
                hint: "run the provider under context-host, or give the embedded host a HostConfiguration.fetcher")))
        }
        let method: String
        let headers: [(String, String)]
        do {
            (method, headers) = try Self.checkedMethodAndHeaders(request, egress: egress)
        } catch {
            return completion(.failure(error))
        }
        let budget = min(request.timeoutSeconds.map { Duration.milliseconds(Int(min($0, 3600) * 1000)) } ?? egress.timeout, egress.timeout)
        // (Parsed once: the first hop checks the same URL.)
        let firstURL = try? HTTPSURL(parsing: request.url)
        let exchange = Exchange(
            firstOrigin: firstURL?.origin ?? "", headers: headers, budget: budget, deadline: ContinuousClock.now.advanced(by: budget),
            egress: egress, transport: transport, completion: completion)
        step(Hop(index: 0, url: request.url, method: method, body: request.body, usedSecrets: []), exchange, parsed: firstURL)
    }

    /// What stays the same over a fetch's hops.
    private struct Exchange: Sendable {
        /// The origin of the provider's URL: the provider's `Authorization` goes only there.
        var firstOrigin: String
        var headers: [(String, String)]
        var budget: Duration
        var deadline: ContinuousClock.Instant
        var egress: ResolvedEgress
        var transport: any HTTPTransport
        var completion: @Sendable (Result<ProviderHTTPResponse, EgressRefusal>) -> Void
    }

    /// One hop of a fetch.
    private struct Hop: Sendable {
        /// 0 for the provider's URL, then one more per redirect.
        var index: Int
        var url: String
        var method: String
        var body: [UInt8]?
        /// Every secret (and form of it) sent so far: scrubbed from what comes back.
        var usedSecrets: [[UInt8]]
    }

    private func fail(_ refusal: EgressRefusal, _ hop: Hop, _ exchange: Exchange) {
        var clean = refusal
        clean.message = Self.scrub(refusal.message, hop.usedSecrets)
        exchange.completion(.failure(clean))
    }

    /// Checks hop `hop`'s URL against the allow-list and sends it, on this thread when nothing
    /// in it can block (an IP literal or a name resolved lately, no secret to read), else from
    /// a global queue.
    private func step(_ hop: Hop, _ exchange: Exchange, parsed: HTTPSURL? = nil) {
        let url: HTTPSURL
        let allowed: ResolvedEgress.Origin
        do {
            (url, allowed) = try Self.allowedURL(hop.url, hop: hop.index, egress: exchange.egress, parsed: parsed)
        } catch {
            return fail(error, hop, exchange)
        }
        let known: [EgressAddress]? = url.hostIsIPLiteral ? nil : EgressAddress.resolved(url.host)
        if (url.hostIsIPLiteral || known != nil) && !exchange.egress.injections.contains(where: { $0.origin == url.origin }) {
            send(hop, url: url, allowed: allowed, known: known, exchange)
        } else {
            DispatchQueue.global().async { send(hop, url: url, allowed: allowed, known: known, exchange) }
        }
    }

    /// Hop `hop` to `url` (allowed by `allowed`; `known`: its name's addresses, when resolved
    /// lately): its addresses checked, its secrets injected, sent; the answer is handled where
    /// the transport gives it.
    private func send(_ hop: Hop, url: HTTPSURL, allowed: ResolvedEgress.Origin, known: [EgressAddress]?, _ exchange: Exchange) {
        var hop = hop
        let request: BrokeredRequest
        do throws(EgressRefusal) {
            let addresses = try Self.addresses(of: url, allowed: allowed, known: known, egress: exchange.egress)
            // The provider's own `Authorization` goes only to the origin it named.
            let baseHeaders = url.origin == exchange.firstOrigin ? exchange.headers : exchange.headers.filter { $0.0.lowercased() != "authorization" }
            let (hopHeaders, target) = try injectSecrets(
                into: baseHeaders, target: url.target, for: url.origin, egress: exchange.egress, usedSecrets: &hop.usedSecrets)
            guard ContinuousClock.now < exchange.deadline else {
                throw EgressRefusal(code: .timeout, message: "the fetch took longer than \(exchange.budget.manifestText)", field: "network.timeout")
            }
            request = BrokeredRequest(
                providerID: exchange.egress.providerID, method: hop.method, url: url.origin + target, host: url.host, port: url.port,
                address: (addresses.first { !$0.isIPv6 } ?? addresses[0]).text, headers: hopHeaders, body: hop.body,
                deadline: exchange.deadline, maximumResponseBytes: exchange.egress.maximumResponseBytes)
        } catch {
            return fail(error, hop, exchange)
        }
        let started = ContinuousClock.now
        let origin = url.origin
        exchange.transport.perform(request) { [hop] result in
            switch result {
            case .failure(let error):
                let refusal: EgressRefusal
                switch error {
                case .tooLarge:
                    refusal = EgressRefusal(code: .tooLarge, message: "the response from \(origin) is larger than \(request.maximumResponseBytes) bytes", field: "network.maximumResponseBytes")
                case .timeout:
                    refusal = EgressRefusal(code: .timeout, message: "\(origin) did not answer within \(exchange.budget.manifestText)", field: "network.timeout")
                case .failed(let text):
                    refusal = EgressRefusal(code: .transport, message: "\(origin): \(Self.scrub(text, hop.usedSecrets))", field: nil)
                }
                logger.info("fetch \(request.providerID) \(request.method) \(origin) failed: \(refusal.code.rawValue)")
                fail(refusal, hop, exchange)
            case .success(let response):
                logger.info("fetch \(request.providerID) \(request.method) \(origin) \(response.status) \(response.body.count) bytes \((ContinuousClock.now - started).milliseconds) ms")
                answer(response, to: hop, url: url, exchange)
            }
        }
    }

    /// A hop's response: a redirect starts the next hop; anything else is the fetch's answer,
    /// without cookies and scrubbed of the secrets sent.
    private func answer(_ response: BrokeredResponse, to hop: Hop, url: HTTPSURL, _ exchange: Exchange) {
        if [301, 302, 303, 307, 308].contains(response.status), let location = response.headers.first(where: { $0.0 == "location" })?.1 {
            guard hop.index < Self.maximumRedirects else {
                return fail(EgressRefusal(code: .redirect, message: "more than \(Self.maximumRedirects) redirects", field: nil), hop, exchange)
            }
            guard let next = Self.resolve(location, against: url, target: url.target) else {
                return fail(EgressRefusal(code: .redirect, message: "a redirect to '\(Self.shown(location))' that is not an https:// URL", field: nil), hop, exchange)
            }
            var nextHop = hop
            nextHop.index += 1
            nextHop.url = next
            if response.status == 303 || ((response.status == 301 || response.status == 302) && hop.method == "POST") {
                nextHop.method = "GET"
                nextHop.body = nil
            }
            return step(nextHop, exchange)
        }
        var names: [String: String] = [:]
        for (name, value) in response.headers where name != "set-cookie" {
            let clean = Self.scrub(value, hop.usedSecrets)
            names[name] = names[name].map { $0 + ", " + clean } ?? clean
        }
        exchange.completion(.success(ProviderHTTPResponse(status: response.status, headers: names, body: Self.scrub(response.body, hop.usedSecrets))))
    }

    /// The request's method (upper case) and headers, once checked: a method the broker sends, a
    /// body within the limit, and headers that are well formed, not the host's, and not one that
    /// carries an injected secret.
    private static func checkedMethodAndHeaders(_ request: ProviderHTTPRequest, egress: ResolvedEgress) throws(EgressRefusal) -> (String, [(String, String)]) {
        let method = request.method.uppercased()
        guard methods.contains(method) else {
            throw EgressRefusal(code: .invalidRequest, message: "the method '\(request.method.prefix(20))' is not one the broker sends", field: nil,
                hint: "use one of \(methods.sorted().joined(separator: ", "))")
        }
        if let body = request.body, body.count > ProviderHTTPRequest.maximumBodyBytes {
            throw EgressRefusal(code: .invalidRequest, message: "the body is \(body.count) bytes (limit \(ProviderHTTPRequest.maximumBodyBytes))", field: nil)
        }
        var headers: [(String, String)] = []
        let injectedHeaders = Set(egress.injections.compactMap { injection -> String? in
            if case .header(let name) = injection.place { return name.lowercased() }
            return nil
        })
        for (name, value) in request.headers {
            let lower = name.lowercased()
            guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(isTokenByte),
                value.utf8.count <= 8192, value.utf8.allSatisfy({ $0 != 0x0D && $0 != 0x0A && $0 != 0 })
            else {
                throw EgressRefusal(code: .forbiddenHeader, message: "the header '\(name.prefix(40))' is not a valid header name or value", field: nil)
            }
            if forbiddenHeaders.contains(lower) || lower.hasPrefix("proxy-") {
                throw EgressRefusal(code: .forbiddenHeader, message: "the header '\(name)' is set by the host; a provider may not set it", field: nil)
            }
            if injectedHeaders.contains(lower) {
                throw EgressRefusal(code: .forbiddenHeader, message: "the header '\(name)' carries a secret the host injects (settings.*.inject); the provider may not set it", field: nil)
            }
            headers.append((name, value))
        }
        return (method, headers)
    }

    /// Hop `hop`'s URL, parsed (`parsed`: `urlText` parsed already), and the allow-list entry of
    /// its origin.
    private static func allowedURL(
        _ urlText: String, hop: Int, egress: ResolvedEgress, parsed: HTTPSURL? = nil
    ) throws(EgressRefusal) -> (HTTPSURL, ResolvedEgress.Origin) {
        let url: HTTPSURL
        if let parsed {
            url = parsed
        } else {
            do {
                url = try HTTPSURL(parsing: urlText)
            } catch {
                throw EgressRefusal(code: .invalidURL, message: "\(hop == 0 ? "" : "a redirect to ")'\(shown(urlText))': \(error.message)", field: nil)
            }
        }
        guard let allowed = egress.origins.first(where: { $0.origin == url.origin }) else {
            let declared = egress.origins.map(\.origin)
            throw EgressRefusal(
                code: .originNotAllowed,
                message: "\(hop == 0 ? "" : "a redirect to ")\(url.origin) is not an origin \(egress.providerID) declares"
                    + (declared.isEmpty ? " (it declares none)" : " (it declares \(declared.joined(separator: ", ")))"),
                field: "network.origins",
                hint: "add '\(url.origin)' to network.origins in \(egress.manifestPath)")
        }
        return (url, allowed)
    }

    /// The addresses `url`'s host is (an IP literal) or resolves to (`known` when it resolved
    /// lately, else resolved now), checked here against the origin's private-address rule, so
    /// DNS cannot answer differently to the transport, which is given the address to connect to.
    private static func addresses(
        of url: HTTPSURL, allowed: ResolvedEgress.Origin, known: [EgressAddress]?, egress: ResolvedEgress
    ) throws(EgressRefusal) -> [EgressAddress] {
        let addresses: [EgressAddress]
        if url.hostIsIPLiteral {
            guard let literal = EgressAddress.literal(url.host, isIPv6: url.hostIsIPv6) else {
                throw EgressRefusal(code: .invalidURL, message: "'\(url.host)' is not an IP address", field: nil)
            }
            addresses = [literal]
        } else if let known, !known.isEmpty {
            addresses = known
        } else {
            switch EgressAddress.resolve(url.host) {
            case .success(let list): addresses = list
            case .failure(let refusal): throw refusal
            }
        }
        if !allowed.privateAddresses, let bad = addresses.first(where: { $0.nonPublicKind != nil }) {
            throw EgressRefusal(
                code: .privateAddress,
                message: "\(url.host) is \(url.hostIsIPLiteral ? "" : "resolved to ")\(bad.text), a \(bad.nonPublicKind ?? "non-public") address; the host connects to loopback and private ranges only for origins that allow it",
                field: "\(allowed.field).privateAddresses",
                hint: "if \(url.origin) is meant to be on this machine or network, declare it with 'privateAddresses: true' in network.origins of \(egress.manifestPath)")
        }
        return addresses
    }

    /// `headers` and `target` with the secrets injected for `origin` (a header, or a query field
    /// the provider may not set itself); each secret, and each form of it that goes out, is added
    /// to `usedSecrets` so it is scrubbed from what comes back.
    private func injectSecrets(
        into headers: [(String, String)], target: String, for origin: String, egress: ResolvedEgress, usedSecrets: inout [[UInt8]]
    ) throws(EgressRefusal) -> ([(String, String)], String) {
        var headers = headers
        var target = target
        for injection in egress.injections where injection.origin == origin {
            let secret = try readSecret(injection.secretName, egress: egress)
            usedSecrets.append(secret)
            let secretText = String(decoding: secret, as: UTF8.self)
            switch injection.place {
            case .header(let name):
                let value: String
                if let user = injection.basicUser {
                    let encoded = Base64.encode(Array(user.utf8) + [UInt8(ascii: ":")] + secret)
                    usedSecrets.append(Array(encoded.utf8))
                    value = "Basic " + encoded
                } else {
                    value = injection.format.replacingAll("{secret}", with: secretText)
                }
                headers.append((name, value))
            case .query(let name):
                let (path, query) = Self.split(target)
                if query.split(separator: "&").contains(where: { $0.split(separator: "=", maxSplits: 1).first.map(String.init) == name }) {
                    throw EgressRefusal(code: .forbiddenHeader, message: "the query field '\(name)' carries a secret the host injects; the provider may not set it", field: nil)
                }
                let encoded = Self.percentEncode(secret)
                if encoded != secretText { usedSecrets.append(Array(encoded.utf8)) }
                target = path + "?" + (query.isEmpty ? "" : query + "&") + name + "=" + encoded
            }
        }
        return (headers, target)
    }

    /// The provider's secret `name`: set and not empty, or a refusal that says how to set it.
    private func readSecret(_ name: String, egress: ResolvedEgress) throws(EgressRefusal) -> [UInt8] {
        let secret: [UInt8]?
        do {
            secret = try secrets?.secret(provider: egress.providerID, name: name)
        } catch {
            throw EgressRefusal(code: .secretNotSet, message: "the secret '\(name)' could not be read: \(error)", field: nil)
        }
        guard let secret, !secret.isEmpty else {
            throw EgressRefusal(
                code: .secretNotSet, message: "the secret '\(name)' of \(egress.providerID) is not set", field: "settings.\(name)",
                hint: "set it: context-host secrets set \(egress.providerID) \(name) (or secrets/set from the app)")
        }
        return secret
    }

    // MARK: Helpers

    static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    static func shown(_ text: String) -> String { text.count > 200 ? String(text.prefix(200)) + "…" : text }

    static func split(_ target: String) -> (path: String, query: String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    /// RFC 3986 unreserved characters stay; everything else is `%XX`.
    static func percentEncode(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in bytes {
            if (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A `Location` made absolute: an https URL, `//host/path`, `/path` or a relative path.
    static func resolve(_ location: String, against url: HTTPSURL, target: String) -> String? {
        if location.lowercased().hasPrefix("https://") { return location }
        if location.hasPrefix("//") { return "https:" + location }
        if location.lowercased().hasPrefix("http:") || location.contains("://") { return nil }
        if location.hasPrefix("/") { return url.origin + location }
        let path = split(target).path
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
        return url.origin + directory + location
    }

    /// `bytes` with every occurrence of each secret (at least 4 bytes long) replaced by `[secret]`.
    static func scrub(_ bytes: [UInt8], _ secrets: [[UInt8]]) -> [UInt8] {
        var output = bytes
        for secret in secrets where secret.count >= 4 && output.count >= secret.count {
            var result: [UInt8] = []
            result.reserveCapacity(output.count)
            var index = 0
            let first = secret[0]
            while index < output.count {
                if output[index] == first, index + secret.count <= output.count, output[index..<(index + secret.count)].elementsEqual(secret) {
                    result.append(contentsOf: "[secret]".utf8)
                    index += secret.count
                } else {
                    result.append(output[index])
                    index += 1
                }
            }
            output = result
        }
        return output
    }

    static func scrub(_ text: String, _ secrets: [[UInt8]]) -> String {
        String(decoding: scrub(Array(text.utf8), secrets), as: UTF8.self)
    }
}
