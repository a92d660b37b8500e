/// `items/preview`: the item's chip (its provider's `item/preview`).
public struct ItemsPreviewRequest: RequestType, Hashable {
    public typealias Response = ContextChip
    public static let method = "items/preview"
    public static let summary = "The chip that shows an item in the composer."
    public static var errors: [ErrorCode] { ErrorCode.providerCallErrors }

    /// The item, as its provider made it.
    public var item: ContextItem

    public init(item: ContextItem) { self.item = item }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try ContextItem(json: reader.required("item", expected: "an object"), path: reader.path("item"))
    }

    public var json: JSONValue { ["item": item.json] }

    public static var schema: JSONValue { Schema.object(["item": ContextItem.schema], required: ["item"]) }
}
