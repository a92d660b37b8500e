/// Why a JSON value does not convert to an SDK type, and where.
///
/// `path` names the offending member from the root of the conversion, for example
/// `params.item.displayName` or `blocks[2].facts[0].label`; `description` joins the two:
/// `"params.item.displayName: expected a string, got number"`.
public struct JSONDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The member path, e.g. `params.item.displayName`; empty for the root value.
    public var path: String
    /// What is wrong, e.g. `expected a string, got number`.
    public var message: String

    /// Creates an error for `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `"<path>: <message>"`, or `"value: <message>"` at the root.
    public var description: String { "\(path.isEmpty ? "value" : path): \(message)" }

    /// A value of the wrong JSON type.
    public static func typeMismatch(at path: String, expected: String, got value: JSONValue) -> JSONDecodeError {
        JSONDecodeError(path: path, message: "expected \(expected), got \(value.typeName)")
    }

    /// A required member that is absent.
    public static func missing(at path: String, expected: String) -> JSONDecodeError {
        JSONDecodeError(path: path, message: "missing; expected \(expected)")
    }

    /// Joins a member name to a path.
    public static func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    /// Joins an array index to a path.
    public static func join(_ path: String, index: Int) -> String {
        "\(path.isEmpty ? "value" : path)[\(index)]"
    }
}

/// A type that converts to and from `JSONValue` with path-aware errors.
///
/// Every ctxui value type in the SDK conforms. `path` is the location of `json` in the enclosing
/// document, used only for error messages.
public protocol JSONConvertible: Sendable {
    /// Converts `json`, reporting problems relative to `path`.
    init(json: JSONValue, path: String) throws(JSONDecodeError)
    /// The wire form.
    var json: JSONValue { get }
}

extension JSONConvertible {
    /// Converts `json`, reporting problems relative to the root.
    public init(json: JSONValue) throws(JSONDecodeError) {
        try self.init(json: json, path: "")
    }
}

/// Reads members of a JSON object with path-aware errors.
///
/// A `null` member counts as absent for optional reads, and as the wrong type for required ones.
///
/// ```swift
/// let reader = try JSONObjectReader(item.content, path: "item.content")
/// let title = try reader.string("title")
/// let wordCount = try reader.optionalInt("wordCount") ?? 0
/// ```
public struct JSONObjectReader: Sendable {
    /// The object being read.
    public let object: JSONObject
    /// The object's path in its document.
    public let path: String

    /// Reads `value`, which must be an object.
    public init(_ value: JSONValue, path: String = "") throws(JSONDecodeError) {
        guard case .object(let object) = value else {
            throw .typeMismatch(at: path, expected: "an object", got: value)
        }
        self.object = object
        self.path = path
    }

    /// The path of member `key`.
    public func path(_ key: String) -> String { JSONDecodeError.join(path, key) }

    /// The member `key`, or `nil` if it is absent or `null`.
    public func value(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    /// The member `key`, which must be present (it may be `null`).
    public func required(_ key: String, expected: String) throws(JSONDecodeError) -> JSONValue {
        guard let value = object[key] else { throw .missing(at: path(key), expected: expected) }
        return value
    }

    // MARK: Strings

    /// A required string member.
    public func string(_ key: String) throws(JSONDecodeError) -> String {
        let value = try required(key, expected: "a string")
        guard case .string(let string) = value else {
            throw .typeMismatch(at: path(key), expected: "a string", got: value)
        }
        return string
    }

    /// An optional string member.
    public func optionalString(_ key: String) throws(JSONDecodeError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else {
            throw .typeMismatch(at: path(key), expected: "a string", got: value)
        }
        return string
    }

    /// An optional array of strings.
    public func optionalStrings(_ key: String) throws(JSONDecodeError) -> [String]? {
        guard value(key) != nil else { return nil }
        return try strings(key)
    }

    /// A required array of strings.
    public func strings(_ key: String) throws(JSONDecodeError) -> [String] {
        try array(key) { (element, elementPath) throws(JSONDecodeError) in
            guard case .string(let string) = element else {
                throw .typeMismatch(at: elementPath, expected: "a string", got: element)
            }
            return string
        }
    }

    // MARK: Numbers and Booleans

    /// A required number member.
    public func double(_ key: String) throws(JSONDecodeError) -> Double {
        let value = try required(key, expected: "a number")
        guard case .number(let number) = value else {
            throw .typeMismatch(at: path(key), expected: "a number", got: value)
        }
        return number
    }

    /// An optional number member.
    public func optionalDouble(_ key: String) throws(JSONDecodeError) -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value else {
            throw .typeMismatch(at: path(key), expected: "a number", got: value)
        }
        return number
    }

    /// A required integer member.
    public func int(_ key: String) throws(JSONDecodeError) -> Int {
        let value = try required(key, expected: "an integer")
        guard let int = value.intValue else {
            if case .number = value {
                throw JSONDecodeError(path: path(key), message: "expected an integer, got \(value.jsonString)")
            }
            throw .typeMismatch(at: path(key), expected: "an integer", got: value)
        }
        return int
    }

    /// An optional integer member.
    public func optionalInt(_ key: String) throws(JSONDecodeError) -> Int? {
        guard value(key) != nil else { return nil }
        return try int(key)
    }

    /// A required Boolean member.
    public func bool(_ key: String) throws(JSONDecodeError) -> Bool {
        let value = try required(key, expected: "a boolean")
        guard case .bool(let flag) = value else {
            throw .typeMismatch(at: path(key), expected: "a boolean", got: value)
        }
        return flag
    }

    /// An optional Boolean member.
    public func optionalBool(_ key: String) throws(JSONDecodeError) -> Bool? {
        guard value(key) != nil else { return nil }
        return try bool(key)
    }

    // MARK: Enumerations

    /// A required string member that must be one of `E`'s raw values.
    public func `enum`<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type = E.self)
        throws(JSONDecodeError) -> E where E.RawValue == String
    {
        let raw = try string(key)
        guard let value = E(rawValue: raw) else {
            let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw JSONDecodeError(path: path(key), message: "expected one of \(allowed), got \"\(raw)\"")
        }
        return value
    }

    /// An optional string member that must be one of `E`'s raw values.
    public func optionalEnum<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type = E.self)
        throws(JSONDecodeError) -> E? where E.RawValue == String
    {
        guard value(key) != nil else { return nil }
        return try self.enum(key, type)
    }

    // MARK: Nested values

    /// A required member converted to `T`.
    public func decode<T: JSONConvertible>(_ key: String, as type: T.Type = T.self) throws(JSONDecodeError) -> T {
        let value = try required(key, expected: "an object")
        return try T(json: value, path: path(key))
    }

    /// An optional member converted to `T`.
    public func optionalDecode<T: JSONConvertible>(_ key: String, as type: T.Type = T.self)
        throws(JSONDecodeError) -> T?
    {
        guard let value = value(key) else { return nil }
        return try T(json: value, path: path(key))
    }

    /// A required array member whose elements convert to `T`.
    public func decodeArray<T: JSONConvertible>(_ key: String, of type: T.Type = T.self)
        throws(JSONDecodeError) -> [T]
    {
        try array(key) { (element, elementPath) throws(JSONDecodeError) in try T(json: element, path: elementPath) }
    }

    /// An optional array member whose elements convert to `T`.
    public func optionalDecodeArray<T: JSONConvertible>(_ key: String, of type: T.Type = T.self)
        throws(JSONDecodeError) -> [T]?
    {
        guard value(key) != nil else { return nil }
        return try decodeArray(key, of: type)
    }

    /// A required array member, each element converted by `transform(element, elementPath)`.
    public func array<T>(_ key: String, _ transform: (JSONValue, String) throws(JSONDecodeError) -> T)
        throws(JSONDecodeError) -> [T]
    {
        let value = try required(key, expected: "an array")
        guard case .array(let elements) = value else {
            throw .typeMismatch(at: path(key), expected: "an array", got: value)
        }
        let arrayPath = path(key)
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            result.append(try transform(element, JSONDecodeError.join(arrayPath, index: index)))
        }
        return result
    }

    /// A required object member.
    public func object(_ key: String) throws(JSONDecodeError) -> JSONObjectReader {
        try JSONObjectReader(try required(key, expected: "an object"), path: path(key))
    }

    /// An optional object member.
    public func optionalObject(_ key: String) throws(JSONDecodeError) -> JSONObjectReader? {
        guard let value = value(key) else { return nil }
        return try JSONObjectReader(value, path: path(key))
    }

    /// An optional object of string values (e.g. `metadata`, `fieldErrors`).
    public func optionalStringMap(_ key: String) throws(JSONDecodeError) -> [String: String]? {
        guard let reader = try optionalObject(key) else { return nil }
        var result: [String: String] = [:]
        for (member, _) in reader.object { result[member] = try reader.string(member) }
        return result
    }

    /// Checks that an optional `ctxui` member, if present, is a version this SDK reads (1).
    public func checkCtxuiVersion() throws(JSONDecodeError) {
        guard let version = try optionalInt("ctxui") else { return }
        guard version == ctxuiVersion else {
            throw JSONDecodeError(path: path("ctxui"), message: "unsupported ctxui version \(version); this SDK reads \(ctxuiVersion)")
        }
    }
}

/// The declarative-view schema version this SDK writes and reads.
public let ctxuiVersion = 1

extension JSONObject {
    /// Sets `key` to `value` when `value` is not `nil`.
    @inline(__always)
    package mutating func set(_ key: String, _ value: String?) {
        if let value { self[key] = .string(value) }
    }

    @inline(__always)
    package mutating func set(_ key: String, _ value: Double?) {
        if let value { self[key] = .number(value) }
    }

    @inline(__always)
    package mutating func set(_ key: String, _ value: Int?) {
        if let value { self[key] = .number(Double(value)) }
    }

    @inline(__always)
    package mutating func set(_ key: String, _ value: Bool?) {
        if let value { self[key] = .bool(value) }
    }

    @inline(__always)
    package mutating func set<T: JSONConvertible>(_ key: String, _ value: T?) {
        if let value { self[key] = value.json }
    }

    @inline(__always)
    package mutating func set<T: JSONConvertible>(_ key: String, _ values: [T]?) {
        if let values { self[key] = .array(values.map(\.json)) }
    }

    /// Sets a string map with its keys sorted, so output is deterministic.
    package mutating func set(_ key: String, _ map: [String: String]?) {
        guard let map else { return }
        var object = JSONObject()
        for name in map.keys.sorted() { object[name] = .string(map[name]!) }
        self[key] = .object(object)
    }
}
