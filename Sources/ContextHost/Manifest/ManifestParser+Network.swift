import ContextProviderKit

extension Manifest {
    /// Fields of `network`.
    package static let networkFields = ["origins", "maximumResponseBytes", "timeout"]
    /// Fields of an entry of `network.origins` written as a mapping.
    package static let originFields = ["origin", "setting", "privateAddresses"]
    /// Fields of `settings.NAME.inject`.
    package static let injectFields = ["header", "query", "format", "basicUserSetting", "origin", "originSetting"]
}

extension ManifestValidator {
    /// `network`: `{origins: [https://… | {origin|setting, privateAddresses}], maximumResponseBytes, timeout}`.
    mutating func validateNetwork(_ node: YAMLNode) -> NetworkPolicy? {
        guard let fields = fields(node, "network", known: Manifest.networkFields, expected: "a mapping with 'origins'") else { return nil }
        var policy = NetworkPolicy()
        if let pair = fields["origins"] {
            record("network.origins", pair.value)
            guard let items = pair.value.items else {
                wrongType(pair.value, "network.origins", expected: "a list of origins", hint: "write 'origins: [\"https://api.example.com\"]'")
                return nil
            }
            for (index, item) in items.enumerated() {
                let path = "network.origins[\(index)]"
                record(path, item)
                if item.scalarValue != nil {
                    guard let text = string(item, path) else { continue }
                    if let origin = origin(text, at: item, path) { policy.origins.append(OriginRule(source: .fixed(origin), fieldPath: path)) }
                    continue
                }
                guard let entry = self.fields(item, path, known: Manifest.originFields, expected: "an origin, or a mapping {origin | setting, privateAddresses}") else { continue }
                var isPrivate = false
                if let flag = entry["privateAddresses"]?.value { isPrivate = boolean(flag, "\(path).privateAddresses") ?? false }
                switch (entry["origin"], entry["setting"]) {
                case (let fixed?, nil):
                    guard let text = string(fixed.value, "\(path).origin"), let origin = origin(text, at: fixed.value, "\(path).origin") else { continue }
                    policy.origins.append(OriginRule(source: .fixed(origin), privateAddresses: isPrivate, fieldPath: path))
                case (nil, let setting?):
                    guard let name = string(setting.value, "\(path).setting") else { continue }
                    record("\(path).setting", setting.value)
                    policy.origins.append(OriginRule(source: .setting(name), privateAddresses: isPrivate, fieldPath: path))
                default:
                    report(.invalidValue, at: item, path, "an origin entry needs exactly one of 'origin' and 'setting'",
                        hint: "write 'origin: https://api.example.com' or 'setting: serverURL'")
                }
            }
        }
        if let value = fields["maximumResponseBytes"]?.value, let bytes = integer(value, "network.maximumResponseBytes") {
            if bytes < 1 || bytes > NetworkPolicy.largestResponseBytes {
                report(.invalidValue, at: value, "network.maximumResponseBytes", "maximumResponseBytes must be 1 to \(NetworkPolicy.largestResponseBytes), found \(bytes)",
                    hint: "write at most \(NetworkPolicy.largestResponseBytes) (64 MiB)")
            } else {
                policy.maximumResponseBytes = bytes
            }
        }
        if let value = fields["timeout"]?.value, let text = string(value, "network.timeout") {
            if let duration = Duration(manifestText: text), duration > .zero, duration <= NetworkPolicy.largestTimeout {
                policy.timeout = duration
            } else {
                report(.invalidDuration, at: value, "network.timeout", "'\(text)' is not a duration from 1ms to 2m",
                    hint: "write e.g. 30s")
            }
        }
        return policy
    }

    /// A manifest origin: `https://host[:port]` with nothing after it.
    mutating func origin(_ text: String, at node: YAMLNode, _ path: String) -> String? {
        do {
            return try HTTPSURL(parsing: text, requireOriginOnly: true).origin
        } catch {
            report(.invalidValue, at: node, path, "'\(text)' is not an https origin: \(error.message)",
                hint: "write scheme, host and optional port only, e.g. https://api.example.com")
            return nil
        }
    }

    /// `settings.NAME.inject`.
    mutating func validateInject(_ node: YAMLNode, _ path: String) -> SecretInjection? {
        guard let fields = fields(node, path, known: Manifest.injectFields, expected: "a mapping {header | query, origin | originSetting, format?}") else { return nil }
        var place: SecretInjection.Place?
        switch (fields["header"], fields["query"]) {
        case (let header?, nil):
            if let name = string(header.value, "\(path).header") {
                if name.utf8.allSatisfy(EgressBroker.isTokenByte), !EgressBroker.forbiddenHeaders.contains(name.lowercased()) {
                    place = .header(name)
                } else {
                    report(.invalidValue, at: header.value, "\(path).header", "'\(name)' is not a header the host can set",
                        hint: "write a header name such as Authorization or X-Api-Key")
                }
            }
        case (nil, let query?):
            if let name = string(query.value, "\(path).query") { place = .query(name) }
        default:
            report(.invalidValue, at: node, path, "inject needs exactly one of 'header' and 'query'",
                hint: "write 'header: Authorization' or 'query: apikey'")
        }
        var source: OriginRule.Source?
        switch (fields["origin"], fields["originSetting"]) {
        case (let fixed?, nil):
            if let text = string(fixed.value, "\(path).origin"), let origin = origin(text, at: fixed.value, "\(path).origin") { source = .fixed(origin) }
        case (nil, let setting?):
            if let name = string(setting.value, "\(path).originSetting") { source = .setting(name) }
        default:
            report(.invalidValue, at: node, path, "inject needs exactly one of 'origin' and 'originSetting': the origin whose requests get the secret",
                hint: "write 'origin: https://api.example.com' (one of network.origins)")
        }
        guard let place, let source else { return nil }
        var injection = SecretInjection(place: place, origin: source)
        if let value = fields["format"]?.value, let format = string(value, "\(path).format") {
            if format.contains("{secret}") {
                injection.format = format
            } else {
                report(.invalidValue, at: value, "\(path).format", "the format has no '{secret}'", hint: "write e.g. 'Bearer {secret}'")
            }
        }
        if let value = fields["basicUserSetting"]?.value, let name = string(value, "\(path).basicUserSetting") {
            if case .query = place {
                report(.invalidValue, at: value, "\(path).basicUserSetting", "basicUserSetting is for a header (Authorization)", hint: "write 'header: Authorization'")
            }
            injection.basicUserSetting = name
        }
        return injection
    }

    /// Cross-checks: settings named by `network` and `inject` exist with the right type, and each
    /// injection's origin is one `network.origins` declares.
    mutating func checkNetworkReferences(network: NetworkPolicy?, settings: [ManifestSetting]) {
        func at(_ path: String) -> (Int, Int) {
            let location = locations[path] ?? Manifest.SourceLocation(line: 1, column: 1)
            return (location.line, location.column)
        }
        func check(_ name: String, _ path: String, _ anchor: String) {
            let (line, column) = at(anchor)
            guard let setting = settings.first(where: { $0.name == name }) else {
                report(.invalidValue, line: line, column: column, path, "there is no setting '\(name)'",
                    hint: "declare it under 'settings' with 'type: string'")
                return
            }
            if setting.type != .string {
                report(.invalidValue, line: line, column: column, path,
                    "the setting '\(name)' is of type \(setting.type.rawValue); it must be a string",
                    hint: "give '\(name)' 'type: string'")
            }
        }
        for rule in network?.origins ?? [] {
            if case .setting(let name) = rule.source { check(name, rule.fieldPath + ".setting", rule.fieldPath) }
        }
        for setting in settings {
            guard let inject = setting.inject else { continue }
            let path = "settings.\(setting.name).inject"
            let declared = network?.origins.contains { $0.source == inject.origin } ?? false
            if !declared {
                let shown: String
                switch inject.origin {
                case .fixed(let origin): shown = "'\(origin)'"
                case .setting(let name): shown = "the origin of setting '\(name)'"
                }
                let (line, column) = at(path)
                report(.invalidValue, line: line, column: column, path, "\(shown) is not in network.origins",
                    hint: "add it to network.origins: a secret is injected only into requests to a declared origin")
            }
            if let user = inject.basicUserSetting { check(user, path + ".basicUserSetting", path) }
        }
    }
}
