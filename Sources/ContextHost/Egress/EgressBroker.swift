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

    package func fetch(_ request: ProviderHTTPRequest, egress: ResolvedEgress) async -> Result<ProviderHTTPResponse, EgressRefusal> {
        var usedSecrets: [[UInt8]] = []
        let outcome = await run(request, egress: egress, usedSecrets: &usedSecrets)
        // (A server may echo a secret into a Location or an error: nothing of it goes back.)
        return outcome.mapError { refusal in
            var clean = refusal
            clean.message = Self.scrub(refusal.message, usedSecrets)
            return clean
        }
    }

    private func run(_ request: ProviderHTTPRequest, egress: ResolvedEgress, usedSecrets: inout [[UInt8]]) async -> Result<ProviderHTTPResponse, EgressRefusal> {
        guard let transport else {
            return .failure(EgressRefusal(
                code: .unavailable, message: "this host has no HTTPS broker", field: nil,
                hint: "run the provider under context-host, or give the embedded host a HostConfiguration.fetcher"))
        }
        let method = request.method.uppercased()
        guard Self.methods.contains(method) else {
            return .failure(EgressRefusal(code: .invalidRequest, message: "the method '\(request.method.prefix(20))' is not one the broker sends", field: nil,
                hint: "use one of \(Self.methods.sorted().joined(separator: ", "))"))
        }
        if let body = request.body, body.count > ProviderHTTPRequest.maximumBodyBytes {
            return .failure(EgressRefusal(code: .invalidRequest, message: "the body is \(body.count) bytes (limit \(ProviderHTTPRequest.maximumBodyBytes))", field: nil))
        }
        var headers: [(String, String)] = []
        let injectedHeaders = Set(egress.injections.compactMap { injection -> String? in
            if case .header(let name) = injection.place { return name.lowercased() }
            return nil
        })
        for (name, value) in request.headers {
            let lower = name.lowercased()
            guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(Self.isTokenByte),
                value.utf8.count <= 8192, value.utf8.allSatisfy({ $0 != 0x0D && $0 != 0x0A && $0 != 0 })
            else {
                return .failure(EgressRefusal(code: .forbiddenHeader, message: "the header '\(name.prefix(40))' is not a valid header name or value", field: nil))
            }
            if Self.forbiddenHeaders.contains(lower) || lower.hasPrefix("proxy-") {
                return .failure(EgressRefusal(code: .forbiddenHeader, message: "the header '\(name)' is set by the host; a provider may not set it", field: nil))
            }
            if injectedHeaders.contains(lower) {
                return .failure(EgressRefusal(code: .forbiddenHeader, message: "the header '\(name)' carries a secret the host injects (settings.*.inject); the provider may not set it", field: nil))
            }
            headers.append((name, value))
        }
        let budget = min(request.timeoutSeconds.map { Duration.milliseconds(Int(min($0, 3600) * 1000)) } ?? egress.timeout, egress.timeout)
        let deadline = ContinuousClock.now.advanced(by: budget)
        var currentMethod = method
        var body = request.body
        var urlText = request.url
        for hop in 0...Self.maximumRedirects {
            let url: HTTPSURL
            do {
                url = try HTTPSURL(parsing: urlText)
            } catch {
                return .failure(EgressRefusal(code: .invalidURL, message: "\(hop == 0 ? "" : "a redirect to ")'\(Self.shown(urlText))': \(error.message)", field: nil))
            }
            guard let allowed = egress.origins.first(where: { $0.origin == url.origin }) else {
                let declared = egress.origins.map(\.origin)
                return .failure(EgressRefusal(
                    code: .originNotAllowed,
                    message: "\(hop == 0 ? "" : "a redirect to ")\(url.origin) is not an origin \(egress.providerID) declares"
                        + (declared.isEmpty ? " (it declares none)" : " (it declares \(declared.joined(separator: ", ")))"),
                    field: "network.origins",
                    hint: "add '\(url.origin)' to network.origins in \(egress.manifestPath)"))
            }
            // The address: checked here and pinned, so DNS cannot answer differently to the transport.
            let addresses: [EgressAddress]
            if url.hostIsIPLiteral {
                guard let literal = EgressAddress.literal(url.host, isIPv6: url.hostIsIPv6) else {
                    return .failure(EgressRefusal(code: .invalidURL, message: "'\(url.host)' is not an IP address", field: nil))
                }
                addresses = [literal]
            } else {
                switch EgressAddress.resolve(url.host) {
                case .success(let list): addresses = list
                case .failure(let refusal): return .failure(refusal)
                }
            }
            if !allowed.privateAddresses, let bad = addresses.first(where: { $0.nonPublicKind != nil }) {
                return .failure(EgressRefusal(
                    code: .privateAddress,
                    message: "\(url.host) is \(url.hostIsIPLiteral ? "" : "resolved to ")\(bad.text), a \(bad.nonPublicKind ?? "non-public") address; the host connects to loopback and private ranges only for origins that allow it",
                    field: "\(allowed.field).privateAddresses",
                    hint: "if \(url.origin) is meant to be on this machine or network, declare it with 'privateAddresses: true' in network.origins of \(egress.manifestPath)"))
            }
            // Secrets for this origin.
            var hopHeaders = url.origin == URLOriginOf(request.url) ? headers : headers.filter { $0.0.lowercased() != "authorization" }
            var target = url.target
            for injection in egress.injections where injection.origin == url.origin {
                let secret: [UInt8]?
                do {
                    secret = try secrets?.secret(provider: egress.providerID, name: injection.secretName)
                } catch {
                    return .failure(EgressRefusal(code: .secretNotSet, message: "the secret '\(injection.secretName)' could not be read: \(error)", field: nil))
                }
                guard let secret, !secret.isEmpty else {
                    return .failure(EgressRefusal(
                        code: .secretNotSet, message: "the secret '\(injection.secretName)' of \(egress.providerID) is not set", field: "settings.\(injection.secretName)",
                        hint: "set it: context-host secrets set \(egress.providerID) \(injection.secretName) (or secrets/set from the app)"))
                }
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
                    hopHeaders.append((name, value))
                case .query(let name):
                    let (path, query) = Self.split(target)
                    if query.split(separator: "&").contains(where: { $0.split(separator: "=", maxSplits: 1).first.map(String.init) == name }) {
                        return .failure(EgressRefusal(code: .forbiddenHeader, message: "the query field '\(name)' carries a secret the host injects; the provider may not set it", field: nil))
                    }
                    let encoded = Self.percentEncode(secret)
                    if encoded != secretText { usedSecrets.append(Array(encoded.utf8)) }
                    target = path + "?" + (query.isEmpty ? "" : query + "&") + name + "=" + encoded
                }
            }
            guard ContinuousClock.now < deadline else {
                return .failure(EgressRefusal(code: .timeout, message: "the fetch took longer than \(budget.manifestText)", field: "network.timeout"))
            }
            let started = ContinuousClock.now
            let response: BrokeredResponse
            do {
                response = try await transport.perform(BrokeredRequest(
                    providerID: egress.providerID, method: currentMethod, url: url.origin + target, host: url.host, port: url.port,
                    address: (addresses.first { !$0.isIPv6 } ?? addresses[0]).text, headers: hopHeaders, body: body, deadline: deadline,
                    maximumResponseBytes: egress.maximumResponseBytes))
            } catch {
                let refusal: EgressRefusal
                switch error {
                case .tooLarge:
                    refusal = EgressRefusal(code: .tooLarge, message: "the response from \(url.origin) is larger than \(egress.maximumResponseBytes) bytes", field: "network.maximumResponseBytes")
                case .timeout:
                    refusal = EgressRefusal(code: .timeout, message: "\(url.origin) did not answer within \(budget.manifestText)", field: "network.timeout")
                case .failed(let text):
                    refusal = EgressRefusal(code: .transport, message: "\(url.origin): \(Self.scrub(text, usedSecrets))", field: nil)
                }
                logger.info("fetch \(egress.providerID) \(currentMethod) \(url.origin) failed: \(refusal.code.rawValue)")
                return .failure(refusal)
            }
            let elapsed = ContinuousClock.now - started
            logger.info("fetch \(egress.providerID) \(currentMethod) \(url.origin) \(response.status) \(response.body.count) bytes \(elapsed.milliseconds) ms")
            if [301, 302, 303, 307, 308].contains(response.status),
                let location = response.headers.first(where: { $0.0 == "location" })?.1
            {
                guard hop < Self.maximumRedirects else {
                    return .failure(EgressRefusal(code: .redirect, message: "more than \(Self.maximumRedirects) redirects", field: nil))
                }
                guard let next = Self.resolve(location, against: url, target: url.target) else {
                    return .failure(EgressRefusal(code: .redirect, message: "a redirect to '\(Self.shown(location))' that is not an https:// URL", field: nil))
                }
                urlText = next
                if response.status == 303 || ((response.status == 301 || response.status == 302) && currentMethod == "POST") {
                    currentMethod = "GET"
                    body = nil
                }
                continue
            }
            var names: [String: String] = [:]
            for (name, value) in response.headers where name != "set-cookie" {
                let clean = Self.scrub(value, usedSecrets)
                names[name] = names[name].map { $0 + ", " + clean } ?? clean
            }
            return .success(ProviderHTTPResponse(status: response.status, headers: names, body: Self.scrub(response.body, usedSecrets)))
        }
        return .failure(EgressRefusal(code: .redirect, message: "more than \(Self.maximumRedirects) redirects", field: nil))
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

/// The origin of a URL text, or "" when it does not parse.
func URLOriginOf(_ text: String) -> String {
    (try? HTTPSURL(parsing: text))?.origin ?? ""
}
