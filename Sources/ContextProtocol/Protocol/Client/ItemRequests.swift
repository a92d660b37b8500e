/// Members shared by the `items/*` requests: the item as its provider made it and an optional
/// progress token. The host passes the item to its provider untouched.
public protocol ItemRequest: RequestType {
    /// The item, as its provider made it.
    var item: ContextItem { get }
    /// Receives `$/progress` for this request.
    var progressToken: ProgressToken? { get }
}

extension ItemRequest {
    public static var errors: [ErrorCode] { ErrorCode.providerCallErrors }

    static func itemSchema(_ extra: KeyValuePairs<String, JSONValue> = [:]) -> JSONValue {
        var properties: JSONObject = ["item": ContextItem.schema]
        for (key, value) in extra { properties[key] = value }
        properties["progressToken"] = ProgressToken.schema
        return ["type": "object", "properties": .object(properties), "required": ["item"]]
    }
}

/// An `items/*` request whose params are exactly `{item, progressToken?}`: its wire form comes
/// from here, once.
public protocol PlainItemRequest: ItemRequest {
    /// The params.
    init(item: ContextItem, progressToken: ProgressToken?)
}

extension PlainItemRequest {
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        let item: ContextItem = try reader.decode("item")
        self.init(item: item, progressToken: try reader.optionalDecode("progressToken"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["item": item.json]
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue { itemSchema() }

    /// Appends the text of `json` (the same bytes) without building its tree (`InProcessHost`
    /// writes the params of each typed request once), and says where its members' values went.
    @discardableResult
    package func appendJSON(to output: inout [UInt8]) -> ItemParamsLayout {
        output.append(contentsOf: #"{"item":"#.utf8)
        let itemStart = output.count
        let providerID = item.appendJSON(to: &output)
        let itemRange = itemStart..<output.count
        var token: Range<Int>?
        if let progressToken {
            output.append(contentsOf: #","progressToken":"#.utf8)
            let tokenStart = output.count
            JSONWriter.append(progressToken.json, to: &output)
            token = tokenStart..<output.count
        }
        output.append(UInt8(ascii: "}"))
        return ItemParamsLayout(item: itemRange, providerID: providerID, progressToken: token)
    }
}

/// Where `PlainItemRequest.appendJSON` wrote its members' values (token ranges in its output):
/// the host checks and routes a typed request by them instead of scanning the text it just wrote.
package struct ItemParamsLayout: Equatable, Sendable {
    /// The `item` object.
    package var item: Range<Int>
    /// The item's `providerId` string, quotes included.
    package var providerID: Range<Int>
    /// The `progressToken` value, when there is one.
    package var progressToken: Range<Int>?
}

/// `items/preview`: the item's chip (its provider's `item/preview`).
public struct ItemsPreviewRequest: PlainItemRequest, Hashable {
    public typealias Response = ContextChip
    public static let method = "items/preview"
    public static let summary = "The chip that shows an item in the composer."

    public var item: ContextItem
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(item: ContextItem, progressToken: ProgressToken? = nil) {
        self.item = item
        self.progressToken = progressToken
    }
}

/// `items/detail`: the item's full-screen detail document (its provider's `item/detail`).
public struct ItemsDetailRequest: PlainItemRequest, Hashable {
    public typealias Response = ContextDetail
    public static let method = "items/detail"
    public static let summary = "The item's full-screen detail document."

    public var item: ContextItem
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(item: ContextItem, progressToken: ProgressToken? = nil) {
        self.item = item
        self.progressToken = progressToken
    }
}

/// `items/describe`: a localized one-line description (its provider's `item/describe`).
public struct ItemsDescribeRequest: PlainItemRequest, Hashable {
    public typealias Response = ItemDescription
    public static let method = "items/describe"
    public static let summary = "A localized one-line description of an item, for summaries and accessibility."

    public var item: ContextItem
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(item: ContextItem, progressToken: ProgressToken? = nil) {
        self.item = item
        self.progressToken = progressToken
    }
}

/// `items/encode`: the item encoded for a chat backend (its provider's `item/encode`).
public struct ItemsEncodeRequest: ItemRequest, Hashable {
    public typealias Response = EncodedItem
    public static let method = "items/encode"
    public static let summary = "The item encoded for transport to a chat backend."

    public var item: ContextItem
    /// `json`, `text` or `binary` as the provider supports; absent: the provider's default.
    public var representation: String?
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(item: ContextItem, representation: String? = nil, progressToken: ProgressToken? = nil) {
        self.item = item
        self.representation = representation
        self.progressToken = progressToken
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try reader.decode("item")
        representation = try reader.optionalString("representation")
        progressToken = try reader.optionalDecode("progressToken")
    }

    public var json: JSONValue {
        var object: JSONObject = ["item": item.json]
        object.set("representation", representation)
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue {
        itemSchema(["representation": Schema.string("json, text or binary as the provider supports; absent: its default.")])
    }
}
