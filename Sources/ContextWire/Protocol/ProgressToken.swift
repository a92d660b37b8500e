/// The token a client puts in a request's `progressToken` to receive `$/progress` notifications
/// for it: a string or an integer, echoed unchanged in each notification's `token`.
public enum ProgressToken: WireValue, Hashable, CustomStringConvertible {
    case number(Int)
    case string(String)

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        if case .string(let string) = json {
            self = .string(string)
        } else if let number = json.intValue {
            self = .number(number)
        } else {
            throw .typeMismatch(at: path, expected: "a string or an integer", got: json)
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let number): .number(Double(number))
        case .string(let string): .string(string)
        }
    }

    public var description: String { json.jsonString }

    public static var schema: JSONValue { ["type": ["string", "integer"]] }
}

/// How much a client wants to hear: `log/message` carries lines at this level and more severe.
public enum LogLevel: String, WireValue, CaseIterable, Comparable {
    case off, error, warning, info, debug

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        guard case .string(let raw) = json else { throw .typeMismatch(at: path, expected: "a string", got: json) }
        guard let level = LogLevel(rawValue: raw) else {
            throw JSONDecodeError(path: path, message: "expected one of off, error, warning, info, debug, got \"\(raw)\"")
        }
        self = level
    }

    public var json: JSONValue { .string(rawValue) }

    public static var schema: JSONValue { Schema.oneOf(allCases.map(\.rawValue)) }

    /// Ordered by verbosity: `off` < `error` < … < `debug`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
