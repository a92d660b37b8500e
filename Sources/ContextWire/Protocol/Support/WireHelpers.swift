// Small helpers shared by the message types.

extension JSONObject {
    /// The members whose names are not in `known`, in order (a message's unknown members).
    /// Linear: the source's keys are already unique.
    package func removing(_ known: Set<String>) -> JSONObject {
        var rest = JSONObject()
        for (key, value) in self where !known.contains(key) { rest.appendUnchecked(key, value) }
        return rest
    }

    /// Appends `other`'s members that this object does not have yet (unknown members after the
    /// known ones).
    package mutating func append(_ other: JSONObject) {
        guard !other.isEmpty else { return }
        var present = Set(keys)
        for (key, value) in other where present.insert(key).inserted { appendUnchecked(key, value) }
    }

    /// Sets an array of strings when not `nil`.
    package mutating func setStrings(_ key: String, _ values: [String]?) {
        if let values { self[key] = .array(values.map(JSONValue.string)) }
    }

    /// Sets an array of integers when not `nil`.
    package mutating func setInts(_ key: String, _ values: [Int]?) {
        if let values { self[key] = .array(values.map { .number(Double($0)) }) }
    }

    /// Sets an object member when not `nil`.
    package mutating func setObject(_ key: String, _ value: JSONObject?) {
        if let value { self[key] = .object(value) }
    }
}

extension JSONObjectReader {
    /// An optional array of integers.
    package func optionalInts(_ key: String) throws(JSONDecodeError) -> [Int]? {
        guard value(key) != nil else { return nil }
        return try array(key) { (element, elementPath) throws(JSONDecodeError) in
            guard let int = element.intValue else { throw .typeMismatch(at: elementPath, expected: "an integer", got: element) }
            return int
        }
    }

    /// An optional object member, as it is.
    package func optionalRawObject(_ key: String) throws(JSONDecodeError) -> JSONObject? {
        try optionalObject(key)?.object
    }

    /// An optional array of objects, as they are.
    package func optionalRawObjects(_ key: String) throws(JSONDecodeError) -> [JSONObject]? {
        guard value(key) != nil else { return nil }
        return try array(key) { (element, elementPath) throws(JSONDecodeError) in
            guard case .object(let object) = element else { throw .typeMismatch(at: elementPath, expected: "an object", got: element) }
            return object
        }
    }

    /// A params object: absent or `null` params read as `{}`.
    package static func params(_ json: JSONValue, path: String) throws(JSONDecodeError) -> JSONObjectReader {
        try JSONObjectReader(json.isNull ? .object([:]) : json, path: path)
    }
}

extension Schema {
    /// `{"$ref": "#/components/schemas/<name>"}`: a shape listed once in the OpenRPC document.
    public static func shared<T: SharedWireValue>(_ type: T.Type) -> JSONValue {
        ["$ref": .string("#/components/schemas/\(T.schemaName)")]
    }

    /// An object with any members (`{"type":"object"}`) and a description.
    public static func anyObject(_ description: String? = nil) -> JSONValue {
        var object: JSONObject = ["type": "object"]
        if let description { object["description"] = .string(description) }
        return .object(object)
    }

    /// `schema` or `null`.
    public static func nullable(_ schema: JSONValue) -> JSONValue {
        ["oneOf": [schema, ["type": "null"]]]
    }
}

/// A wire value whose schema is listed once under `components.schemas` of docs/openrpc.json and
/// referred to by name (`Schema.shared`).
public protocol SharedWireValue: WireValue {
    /// The name under `components.schemas`.
    static var schemaName: String { get }
}

/// A request whose params are exactly `{"sessionId": String}` (`collect/cancel` from a client,
/// `collect/start` and `collect/cancel` to a provider): its wire form comes from here, once.
public protocol SessionRequest: RequestType {
    /// The session.
    var sessionId: String { get }
    /// The params.
    init(sessionId: String)
}

extension SessionRequest {
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        self.init(sessionId: try reader.string("sessionId"))
    }

    public var json: JSONValue { ["sessionId": .string(sessionId)] }

    public static var schema: JSONValue { Schema.object(["sessionId": Schema.string()], required: ["sessionId"]) }
}

/// A request whose params are exactly `{providerId, composerId?, progressToken?}` (`collect/start`,
/// `collect/make`): its wire form comes from here, once.
public protocol ProviderScopedRequest: RequestType {
    /// The provider.
    var providerId: String { get }
    /// Attach the item to this composer.
    var composerId: String? { get }
    /// Receives `$/progress` for this request.
    var progressToken: ProgressToken? { get }
    /// The params.
    init(providerId: String, composerId: String?, progressToken: ProgressToken?)
    /// The schema's description of `composerId`.
    static var composerIdSummary: String { get }
}

extension ProviderScopedRequest {
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        let providerId = try reader.string("providerId")
        let composerId = try reader.optionalString("composerId")
        self.init(providerId: providerId, composerId: composerId, progressToken: try reader.optionalDecode("progressToken"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["providerId": .string(providerId)]
        object.set("composerId", composerId)
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "providerId": Schema.string(), "composerId": Schema.string(composerIdSummary),
            "progressToken": ProgressToken.schema,
        ], required: ["providerId"])
    }
}
