/// `secrets/set {providerId, name, value}`: sets (or, with `value: null`, removes) one of a
/// provider's secret settings (`type: secret` in its manifest), for an app with its own settings
/// UI. The host keeps it encrypted and injects it into the provider's brokered requests; no
/// method reads a secret back (`providers/list` shows only whether each is set).
public struct SecretsSetRequest: RequestType, Hashable {
    public typealias Response = SecretsSetResult
    public static let method = "secrets/set"
    public static let summary = "Sets or removes a provider's secret setting; never reads one back."
    public static var errors: [ErrorCode] { [.providerNotFound, .invalidParams, .secretsUnavailable] }

    /// The provider.
    public var providerId: String
    /// The secret setting's name, as its manifest declares it.
    public var name: String
    /// The value; nil removes the secret.
    public var value: String?

    /// Creates the params.
    public init(providerId: String, name: String, value: String?) {
        self.providerId = providerId
        self.name = name
        self.value = value
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader.params(json, path: path)
        providerId = try reader.string("providerId")
        name = try reader.string("name")
        value = try reader.optionalString("value")
    }

    public var json: JSONValue {
        ["providerId": .string(providerId), "name": .string(name), "value": value.map(JSONValue.string) ?? .null]
    }

    /// Never includes the value (this description may be logged).
    public var description: String { "secrets/set \(providerId) \(name)" }

    public static var schema: JSONValue {
        Schema.object([
            "providerId": Schema.string(), "name": Schema.string("A setting of type secret."),
            "value": ["type": ["string", "null"], "description": "The secret; null removes it."],
        ], required: ["providerId", "name", "value"])
    }
}

/// `secrets/set`'s answer: whether the secret is now set.
public struct SecretsSetResult: WireValue, WireObject, Hashable {
    /// Whether the secret is set after the call.
    public var isSet: Bool

    /// Creates a result.
    public init(isSet: Bool) { self.isSet = isSet }

    /// `{"set":Bool}`.
    public static let wireFields = WireFields<Self>(Self(isSet: false), [.bool("set", \.isSet)])
}
