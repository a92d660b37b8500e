// The ctxui values are wire values: their schemas live in docs/ctxui.schema.json.

extension ContextItem: WireValue {
    public static var schema: JSONValue { Schema.ctxui("item") }
}

extension ContextChip: WireValue {
    public static var schema: JSONValue { Schema.ctxui("chip") }
}

extension ContextDetail: WireValue {
    public static var schema: JSONValue { Schema.ctxui("detail") }
}

extension ContextForm: WireValue {
    public static var schema: JSONValue { Schema.ctxui("form") }
}

extension EncodedItem: WireValue {
    public static var schema: JSONValue { Schema.ctxui("encodedItem") }
}

extension SubmitOutcome: WireValue {
    public static var schema: JSONValue { Schema.ctxui("submitOutcome") }
}

extension FormOption: WireValue {
    public static var schema: JSONValue { Schema.ctxui("option") }
}

extension Availability: WireValue {
    public static var schema: JSONValue {
        Schema.object(["available": Schema.boolean(), "reason": Schema.string("Why not, in words a user can act on.")], required: ["available"])
    }
}

extension ProviderMetadata: WireValue {
    public static var schema: JSONValue {
        Schema.object([
            "id": Schema.string(), "title": Schema.string(), "version": Schema.string(), "iconName": Schema.string(),
            "ctxui": Schema.integer("The ctxui version the provider writes (1)."),
        ], required: ["id", "title", "version"])
    }
}
