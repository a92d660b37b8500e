// Answers a provider gives that the host passes to its client unchanged, so both sides' types.

/// `collect/query`'s answer (also the provider's).
public struct CollectQueryResult: WireValue, Hashable {
    /// The options, in order.
    public var options: [FormOption]

    /// Creates a result.
    public init(options: [FormOption]) { self.options = options }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        options = try reader.decodeArray("options")
    }

    public var json: JSONValue { ["options": .array(options.map(\.json))] }

    public static var schema: JSONValue { Schema.object(["options": Schema.array(Schema.ctxui("option"))], required: ["options"]) }
}

/// `items/describe`'s (and `item/describe`'s) answer: `{text}`.
public struct ItemDescription: WireValue, Hashable {
    /// The description.
    public var text: String

    /// Creates a description.
    public init(text: String) { self.text = text }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        text = try reader.string("text")
    }

    public var json: JSONValue { ["text": .string(text)] }

    public static var schema: JSONValue { Schema.object(["text": Schema.string()], required: ["text"]) }
}
