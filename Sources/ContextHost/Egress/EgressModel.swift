import ContextProviderKit

/// A manifest's `network` field: the origins the provider may ask the host to fetch from
/// (docs/manifest.md, "network"; docs/security.md, "Egress").
package struct NetworkPolicy: Sendable, Hashable {
    /// Where each allowed origin comes from, in file order.
    package var origins: [OriginRule] = []
    /// The largest response body accepted, in bytes.
    package var maximumResponseBytes: Int = NetworkPolicy.defaultResponseBytes
    /// The longest one fetch (and its redirects) may take.
    package var timeout: Duration = .seconds(30)

    package static let defaultResponseBytes = 8 << 20
    package static let largestResponseBytes = 64 << 20
    package static let largestTimeout: Duration = .seconds(120)

    package init(origins: [OriginRule] = []) { self.origins = origins }

    /// As stored in the registry cache.
    package var json: JSONValue {
        [
            "origins": .array(origins.map(\.json)), "maximumResponseBytes": .number(Double(maximumResponseBytes)),
            "timeoutMs": .number(Double(timeout.milliseconds)),
        ]
    }

    package init?(json: JSONValue) {
        guard let origins = json["origins"]?.arrayValue, let bytes = json["maximumResponseBytes"]?.intValue,
            let milliseconds = json["timeoutMs"]?.intValue
        else { return nil }
        var rules: [OriginRule] = []
        for origin in origins {
            guard let rule = OriginRule(json: origin) else { return nil }
            rules.append(rule)
        }
        self.origins = rules
        self.maximumResponseBytes = bytes
        self.timeout = .milliseconds(milliseconds)
    }
}

/// One entry of `network.origins`.
package struct OriginRule: Sendable, Hashable {
    /// A fixed origin (`https://api.example.com`), or the origin of a setting's value.
    package enum Source: Sendable, Hashable {
        case fixed(String)
        case setting(String)
    }

    package var source: Source
    /// `privateAddresses: true`: the host may connect to loopback and private-range addresses
    /// for this origin (a server on the user's own network). Off by default.
    package var privateAddresses: Bool = false
    /// The field path of the entry in the manifest (`network.origins[1]`), for errors.
    package var fieldPath: String

    package init(source: Source, privateAddresses: Bool = false, fieldPath: String) {
        self.source = source
        self.privateAddresses = privateAddresses
        self.fieldPath = fieldPath
    }

    var json: JSONValue {
        var object: JSONObject = ["privateAddresses": .bool(privateAddresses), "field": .string(fieldPath)]
        switch source {
        case .fixed(let origin): object["origin"] = .string(origin)
        case .setting(let name): object["setting"] = .string(name)
        }
        return .object(object)
    }

    init?(json: JSONValue) {
        guard let field = json["field"]?.stringValue, let isPrivate = json["privateAddresses"]?.boolValue else { return nil }
        if let origin = json["origin"]?.stringValue {
            source = .fixed(origin)
        } else if let name = json["setting"]?.stringValue {
            source = .setting(name)
        } else {
            return nil
        }
        privateAddresses = isPrivate
        fieldPath = field
    }
}

/// Where the host puts a secret setting's value in requests (`settings.NAME.inject`).
package struct SecretInjection: Sendable, Hashable {
    package enum Place: Sendable, Hashable {
        /// A request header of this name.
        case header(String)
        /// A query field of this name.
        case query(String)
    }

    package var place: Place
    /// The value written, with `{secret}` where the secret goes (headers; default `{secret}`).
    package var format: String = "{secret}"
    /// `basicUserSetting`: the header is `Basic base64(user:secret)`, the user taken from this
    /// (string) setting.
    package var basicUserSetting: String?
    /// The origin whose requests get it: fixed, or a setting's.
    package var origin: OriginRule.Source

    package init(place: Place, origin: OriginRule.Source) {
        self.place = place
        self.origin = origin
    }

    var json: JSONValue {
        var object: JSONObject = ["format": .string(format)]
        switch place {
        case .header(let name): object["header"] = .string(name)
        case .query(let name): object["query"] = .string(name)
        }
        switch origin {
        case .fixed(let origin): object["origin"] = .string(origin)
        case .setting(let name): object["originSetting"] = .string(name)
        }
        if let basicUserSetting { object["basicUserSetting"] = .string(basicUserSetting) }
        return .object(object)
    }

    init?(json: JSONValue) {
        if let name = json["header"]?.stringValue {
            place = .header(name)
        } else if let name = json["query"]?.stringValue {
            place = .query(name)
        } else {
            return nil
        }
        if let origin = json["origin"]?.stringValue {
            self.origin = .fixed(origin)
        } else if let name = json["originSetting"]?.stringValue {
            self.origin = .setting(name)
        } else {
            return nil
        }
        guard let format = json["format"]?.stringValue else { return nil }
        self.format = format
        basicUserSetting = json["basicUserSetting"]?.stringValue
    }
}

/// Why the broker refused or failed a fetch: a JSON-RPC error the provider gets, naming the
/// manifest field to change where one would allow it.
package struct EgressRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// The origin is not declared (`network.origins`).
        case originNotAllowed = "origin-not-allowed"
        /// The URL is not one the broker reads (user info, odd IPv4, http://).
        case invalidURL = "invalid-url"
        /// The host resolves to (or is) a loopback or private address and the origin does not say
        /// `privateAddresses: true`.
        case privateAddress = "private-address"
        /// The name did not resolve.
        case resolveFailed = "resolve-failed"
        /// A header the provider may not set (`Host`, `Cookie`, the injected header…).
        case forbiddenHeader = "forbidden-header"
        /// A secret the manifest injects is not set.
        case secretNotSet = "secret-not-set"
        /// The response was larger than `network.maximumResponseBytes`.
        case tooLarge = "response-too-large"
        /// More than the allowed redirects, or one without a usable `Location`.
        case redirect = "redirect-refused"
        /// Took longer than the fetch's time limit.
        case timeout = "timeout"
        /// The connection or TLS failed.
        case transport = "transport-failed"
        /// This host has no broker (`HostConfiguration.fetcher`).
        case unavailable = "broker-unavailable"
        /// The request itself is malformed (method, body size).
        case invalidRequest = "invalid-request"
    }

    package var code: Code
    package var message: String
    /// The manifest field to change (`network.origins`), when changing it would allow the fetch.
    package var field: String?
    package var hint: String?

    package init(code: Code, message: String, field: String?, hint: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.hint = hint
    }

    package var description: String { "\(code.rawValue): \(message)" }

    /// The JSON-RPC error object sent to the provider (`-32060`, `ErrorCode.egressRefused`).
    package var errorJSON: JSONValue {
        var data: JSONObject = ["reason": .string(code.rawValue)]
        if let field { data["field"] = .string(field) }
        if let hint { data["hint"] = .string(hint) }
        return ["code": .number(Double(Self.rpcCode)), "message": .string(message), "data": .object(data)]
    }

    /// The JSON-RPC code of every broker refusal.
    package static let rpcCode = ErrorCode.egressRefused.rawValue
}
