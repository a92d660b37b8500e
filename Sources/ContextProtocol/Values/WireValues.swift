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
