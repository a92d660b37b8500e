/// A value with a JSON wire form and a JSON Schema describing it.
///
/// Every params, result and error `data` shape of the protocol conforms, so the registry can
/// produce `docs/openrpc.json` and the tests can check every exchange against it.
public protocol WireValue: JSONConvertible {
    /// The JSON Schema (draft 2020-12) of `json`. ctxui values refer to `ctxui.schema.json`.
    static var schema: JSONValue { get }
}

/// A JSON-RPC request: one type per method, with its params as the type's members and the type
/// of its answer.
///
/// The same shape serves both channels: client → host (`MessageRegistry.client`) and host →
/// provider (`MessageRegistry.provider`).
public protocol RequestType: WireValue {
    /// What a successful answer carries in `result`.
    associatedtype Response: WireValue
    /// The JSON-RPC method name.
    static var method: String { get }
    /// One line for docs/openrpc.json and error messages.
    static var summary: String { get }
    /// The method-specific error codes it may answer (beyond the generic JSON-RPC ones).
    static var errors: [ErrorCode] { get }
    /// Whether it may be sent before `initialize` (lifecycle methods only).
    static var allowedBeforeInitialize: Bool { get }
}

extension RequestType {
    public static var errors: [ErrorCode] { [] }
    public static var allowedBeforeInitialize: Bool { false }
}

/// A JSON-RPC notification (no `id`, never answered): one type per method.
public protocol NotificationType: WireValue {
    /// The JSON-RPC method name.
    static var method: String { get }
    /// One line for docs/openrpc.json.
    static var summary: String { get }
    /// Whether it may be sent before `initialize`.
    static var allowedBeforeInitialize: Bool { get }
}

extension NotificationType {
    public static var allowedBeforeInitialize: Bool { false }
}

/// Params or a result with no members: `{}` on the wire (absent params are read as `{}`).
public struct EmptyObject: WireValue, Hashable {
    /// The empty value.
    public init() {}
    /// Accepts any object (members are ignored, as JSON-RPC servers do), `null` or an array.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        switch json {
        case .object, .null, .array: break
        default: throw .typeMismatch(at: path, expected: "an object", got: json)
        }
    }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { ["type": "object"] }
}

/// A `null` result (e.g. `shutdown`).
public struct NullResult: WireValue, Hashable {
    /// The null value.
    public init() {}
    /// Accepts any value: the answer carries no information.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {}
    public var json: JSONValue { .null }
    public static var schema: JSONValue { ["type": "null"] }
}

/// A request id as the client wrote it: a string, a number or `null`.
public enum RequestID: WireValue, Hashable, CustomStringConvertible {
    case number(Int)
    case string(String)
    case null

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        switch json {
        case .string(let string): self = .string(string)
        case .null: self = .null
        default:
            guard let number = json.intValue else {
                throw .typeMismatch(at: path, expected: "a string, an integer or null", got: json)
            }
            self = .number(number)
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let number): .number(Double(number))
        case .string(let string): .string(string)
        case .null: .null
        }
    }

    public var description: String { json.jsonString }

    public static var schema: JSONValue { ["type": ["string", "integer", "null"]] }
}

/// Schema helpers for the wire types' `schema` properties.
public enum Schema {
    /// `{"$ref": "ctxui.schema.json#/$defs/<name>"}`: a ctxui value (docs/ctxui.schema.json).
    public static func ctxui(_ name: String) -> JSONValue {
        ["$ref": .string("ctxui.schema.json#/$defs/\(name)")]
    }

    /// An object schema; `required` lists the members that must be present.
    public static func object(
        _ properties: KeyValuePairs<String, JSONValue>, required: [String] = [], additional: Bool = true, description: String? = nil
    ) -> JSONValue {
        var object: JSONObject = ["type": "object"]
        if let description { object["description"] = .string(description) }
        var members = JSONObject()
        for (key, value) in properties { members[key] = value }
        object["properties"] = .object(members)
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        if !additional { object["additionalProperties"] = false }
        return .object(object)
    }

    /// `{"type": "string"}` with an optional description.
    public static func string(_ description: String? = nil) -> JSONValue { typed("string", description) }
    /// `{"type": "integer"}` with an optional description.
    public static func integer(_ description: String? = nil) -> JSONValue { typed("integer", description) }
    /// `{"type": "number"}` with an optional description.
    public static func number(_ description: String? = nil) -> JSONValue { typed("number", description) }
    /// `{"type": "boolean"}` with an optional description.
    public static func boolean(_ description: String? = nil) -> JSONValue { typed("boolean", description) }
    /// An array of `items`.
    public static func array(_ items: JSONValue, _ description: String? = nil) -> JSONValue {
        var object: JSONObject = ["type": "array", "items": items]
        if let description { object["description"] = .string(description) }
        return .object(object)
    }
    /// A string that must be one of `values`.
    public static func oneOf(_ values: [String], _ description: String? = nil) -> JSONValue {
        var object: JSONObject = ["type": "string", "enum": .array(values.map(JSONValue.string))]
        if let description { object["description"] = .string(description) }
        return .object(object)
    }

    private static func typed(_ type: String, _ description: String?) -> JSONValue {
        var object: JSONObject = ["type": .string(type)]
        if let description { object["description"] = .string(description) }
        return .object(object)
    }
}
