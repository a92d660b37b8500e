/// A JSON value.
///
/// Items carry provider-defined content as `JSONValue`, and the SDK converts every wire type to and
/// from it. It is deliberately small and has no Foundation dependency: the host and every provider
/// library parse and print it on the hot path.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number (JSON has one number type; integers up to 2^53 are exact).
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, keys in insertion order.
    case object(JSONObject)
}

/// A JSON object that keeps its keys in insertion order, so output is deterministic.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The member names, in insertion order.
    public private(set) var keys: [String]
    /// The member values, in the order of `keys`.
    public private(set) var values: [JSONValue]

    /// An empty object.
    public init() {
        keys = []
        values = []
    }

    /// An object with these members, in this order; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }

    /// Makes room for `count` members (the parser, so a small object's arrays are allocated once
    /// rather than grown member by member).
    package mutating func reserveCapacity(_ count: Int) {
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    /// Appends a member whose key is known to be absent (the parser's fast path).
    package mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        keys.append(key)
        values.append(value)
    }

    /// Replaces the value of the member at `index` (the parser, for a repeated key).
    package mutating func replaceValue(at index: Int, with value: JSONValue) {
        values[index] = value
    }

    /// The value for `key`, or `nil`. Setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = keys.firstIndex(of: key) else { return nil }
            return values[index]
        }
        set {
            if let index = keys.firstIndex(of: key) {
                if let newValue {
                    values[index] = newValue
                } else {
                    keys.remove(at: index)
                    values.remove(at: index)
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    /// The number of members.
    public var count: Int { keys.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { keys.isEmpty }

    /// Iterates the members in insertion order.
    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var index = 0
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            return (keys[index], values[index])
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is JSON `null`.
    public init(nilLiteral: ()) { self = .null }
    /// `true`/`false` are JSON Booleans.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal is a JSON number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A floating-point literal is a JSON number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string literal is a JSON string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal is a JSON array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal is a JSON object, keys kept in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension JSONValue {
    /// Whether arrays and objects nest at most `limit` deep in this value (a scalar is 0 deep):
    /// a check that stops at `limit`, so its recursion is bounded by it, whatever the value.
    package func nests(atMost limit: Int) -> Bool {
        switch self {
        case .array(let elements):
            guard limit > 0 else { return false }
            return elements.allSatisfy { $0.nests(atMost: limit - 1) }
        case .object(let object):
            guard limit > 0 else { return false }
            return object.values.allSatisfy { $0.nests(atMost: limit - 1) }
        case .null, .bool, .number, .string:
            return true
        }
    }
}

extension JSONValue {
    /// The member `key` of an object, or `nil` for a missing member or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is a number.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, if this is a number with no fractional part that fits.
    public var intValue: Int? {
        guard case .number(let value) = self, value.rounded() == value,
            value >= -9_007_199_254_740_992, value <= 9_007_199_254_740_992
        else { return nil }
        return Int(value)
    }

    /// The Boolean, if this is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type name, for error messages ("string", "number", …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
