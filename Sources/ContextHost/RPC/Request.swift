import ContextProviderKit

/// One incoming request or notification, with its raw bytes. `params` stays undecoded until a
/// handler asks for it.
package struct Request: Sendable {
    /// The whole message.
    package let message: [UInt8]
    package let envelope: Envelope
    /// How to answer; nil for a notification.
    package let reply: Reply?
    /// Where `params.item` and its `providerId` are, as the input limits check found them.
    package var itemLocation = ItemLocation()

    package var method: String { envelope.method ?? "" }

    /// Runs `body` with the message bytes and the range of `params` (nil when absent).
    package func withRawParams<R>(_ body: (UnsafeRawBufferPointer, Range<Int>?) throws(RPCError) -> R) throws(RPCError) -> R {
        let range = envelope.params
        do {
            return try message.withUnsafeBytes { buffer in
                do {
                    return try body(buffer, range)
                } catch let error as RPCError {
                    throw error
                }
            }
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(.internalError, "\(error)")
        }
    }

    /// Decodes `params` as an object; absent params are an empty object.
    package func params() throws(RPCError) -> Params {
        guard let range = envelope.params else { return Params(object: JSONObject()) }
        let value: JSONValue
        do {
            value = try message.withUnsafeBytes { buffer throws(JSONParseError) in
                try JSONReader.parse(UnsafeRawBufferPointer(rebasing: buffer[range]))
            }
        } catch {
            throw RPCError(.parseError, "params: \(error)")
        }
        guard case .object(let object) = value else {
            throw RPCError.invalidParams("params must be an object, got \(value.typeName)")
        }
        return Params(object: object)
    }
}

/// Typed access to a params object, with errors that name the field and the expected type.
package struct Params: Sendable {
    package var object: JSONObject

    private func wrongType(_ key: String, _ expected: String, _ value: JSONValue) -> RPCError {
        .invalidParams("params.\(key): expected \(expected), got \(value.typeName)")
    }

    private func missing(_ key: String, _ expected: String) -> RPCError {
        .invalidParams("params.\(key) is required (\(expected))")
    }

    package func string(_ key: String) throws(RPCError) -> String {
        guard let value = object[key] else { throw missing(key, "a string") }
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    package func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw wrongType(key, "a string", value) }
        return string
    }

    package func optionalInt(_ key: String) throws(RPCError) -> Int? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let number = value.intValue else { throw wrongType(key, "an integer", value) }
        return number
    }

    package func optionalStrings(_ key: String) throws(RPCError) -> [String]? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let array = value.arrayValue else { throw wrongType(key, "an array of strings", value) }
        var strings: [String] = []
        for (index, element) in array.enumerated() {
            guard let string = element.stringValue else {
                throw .invalidParams("params.\(key)[\(index)]: expected a string, got \(element.typeName)")
            }
            strings.append(string)
        }
        return strings
    }

    package func object(_ key: String) throws(RPCError) -> JSONObject {
        guard let value = object[key] else { throw missing(key, "an object") }
        guard let nested = value.objectValue else { throw wrongType(key, "an object", value) }
        return nested
    }

    package func optionalObject(_ key: String) throws(RPCError) -> JSONObject? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let nested = value.objectValue else { throw wrongType(key, "an object", value) }
        return nested
    }
}
