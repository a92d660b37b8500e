/// `composer/open`: a new draft message with its limits.
public struct ComposerOpenRequest: RequestType, Hashable {
    public typealias Response = ComposerSummary
    public static let method = "composer/open"
    public static let summary = "Opens a composer: one draft message with its limits."
    public static var errors: [ErrorCode] { [.limitExceeded, .stateWriteFailed] }

    /// 1…100, default 10.
    public var maximumItems: Int?
    /// Bytes of encoded content, 1…67108864, default 4194304.
    public var byteBudget: Int?

    /// Creates the params.
    public init(maximumItems: Int? = nil, byteBudget: Int? = nil) {
        self.maximumItems = maximumItems
        self.byteBudget = byteBudget
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader.params(json, path: path)
        maximumItems = try reader.optionalInt("maximumItems")
        byteBudget = try reader.optionalInt("byteBudget")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("maximumItems", maximumItems)
        object.set("byteBudget", byteBudget)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "maximumItems": ["type": "integer", "minimum": 1, "maximum": 100, "description": "Default 10."],
            "byteBudget": ["type": "integer", "minimum": 1, "maximum": 67_108_864, "description": "Bytes of encoded content; default 4194304."],
        ])
    }
}

/// A composer's limits and use: `{composerId, maximumItems, byteBudget, bytesUsed, itemCount}`.
public struct ComposerSummary: SharedWireValue, Hashable {
    public static let schemaName = "ComposerSummary"

    /// The composer.
    public var composerId: String
    /// Its item limit.
    public var maximumItems: Int
    /// Its byte budget for encoded content.
    public var byteBudget: Int
    /// Encoded bytes of its items.
    public var bytesUsed: Int
    /// How many items it has.
    public var itemCount: Int

    /// Creates a summary.
    public init(composerId: String, maximumItems: Int, byteBudget: Int, bytesUsed: Int, itemCount: Int) {
        self.composerId = composerId
        self.maximumItems = maximumItems
        self.byteBudget = byteBudget
        self.bytesUsed = bytesUsed
        self.itemCount = itemCount
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
        maximumItems = try reader.int("maximumItems")
        byteBudget = try reader.int("byteBudget")
        bytesUsed = try reader.int("bytesUsed")
        itemCount = try reader.int("itemCount")
    }

    /// The members, for answers that extend a summary.
    var members: JSONObject {
        [
            "composerId": .string(composerId), "maximumItems": .number(Double(maximumItems)), "byteBudget": .number(Double(byteBudget)),
            "bytesUsed": .number(Double(bytesUsed)), "itemCount": .number(Double(itemCount)),
        ]
    }

    public var json: JSONValue { .object(members) }

    static let properties: KeyValuePairs<String, JSONValue> = [
        "composerId": Schema.string(), "maximumItems": Schema.integer(), "byteBudget": Schema.integer(),
        "bytesUsed": Schema.integer(), "itemCount": Schema.integer(),
    ]

    public static var schema: JSONValue { Schema.object(properties, required: ["composerId", "maximumItems", "byteBudget", "bytesUsed", "itemCount"]) }
}

/// `composer/list`: every open composer, or one composer's items with their chips.
public struct ComposerListRequest: RequestType, Hashable {
    public typealias Response = ComposerListResult
    public static let method = "composer/list"
    public static let summary = "Without composerId every open composer (oldest first); with it, its items and their chips."
    public static var errors: [ErrorCode] { [.composerNotFound] }

    /// The composer to list.
    public var composerId: String?

    /// Creates the params.
    public init(composerId: String? = nil) { self.composerId = composerId }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader.params(json, path: path)
        composerId = try reader.optionalString("composerId")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("composerId", composerId)
        return .object(object)
    }

    public static var schema: JSONValue { Schema.object(["composerId": Schema.string("The composer to list.")]) }
}

/// `composer/list`'s answer: `{composers}` without `composerId`; the summary and `items` with it.
public struct ComposerListResult: WireValue, Hashable {
    /// Without `composerId`: every open composer.
    public var composers: [ComposerSummary]?
    /// With `composerId`: the composer's summary.
    public var composer: ComposerSummary?
    /// With `composerId`: its items, in order.
    public var items: [ComposerItem]?

    /// Creates a result.
    public init(composers: [ComposerSummary]? = nil, composer: ComposerSummary? = nil, items: [ComposerItem]? = nil) {
        self.composers = composers
        self.composer = composer
        self.items = items
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composers = try reader.optionalDecodeArray("composers")
        composer = reader.value("composerId") == nil ? nil : try ComposerSummary(json: json, path: path)
        items = try reader.optionalDecodeArray("items")
    }

    public var json: JSONValue {
        var object = composer?.members ?? JSONObject()
        object.set("composers", composers)
        object.set("items", items)
        return .object(object)
    }

    public static var schema: JSONValue {
        [
            "oneOf": [
                Schema.object(["composers": Schema.array(Schema.shared(ComposerSummary.self))], required: ["composers"]),
                [
                    "allOf": [
                        Schema.shared(ComposerSummary.self),
                        Schema.object(["items": Schema.array(ComposerItem.schema)], required: ["items"]),
                    ]
                ],
            ]
        ]
    }
}

/// One item of a listed composer.
public struct ComposerItem: WireValue, Hashable {
    /// The item.
    public var item: ContextItem
    /// Its chip, from its provider (or the default text chip when the provider failed).
    public var chip: ContextChip
    /// Its encoded size, counted against the byte budget.
    public var encodedBytes: Int
    /// Whether its provider answered.
    public var providerAvailable: Bool
    /// Why not.
    public var providerProblem: ProviderProblem?

    /// Creates an entry.
    public init(item: ContextItem, chip: ContextChip, encodedBytes: Int, providerAvailable: Bool, providerProblem: ProviderProblem? = nil) {
        self.item = item
        self.chip = chip
        self.encodedBytes = encodedBytes
        self.providerAvailable = providerAvailable
        self.providerProblem = providerProblem
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try reader.decode("item")
        chip = try reader.decode("chip")
        encodedBytes = try reader.int("encodedBytes")
        providerAvailable = try reader.bool("providerAvailable")
        providerProblem = try reader.optionalDecode("providerProblem")
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "item": item.json, "chip": chip.json, "encodedBytes": .number(Double(encodedBytes)), "providerAvailable": .bool(providerAvailable),
        ]
        object.set("providerProblem", providerProblem)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "item": ContextItem.schema, "chip": ContextChip.schema, "encodedBytes": Schema.integer(),
            "providerAvailable": Schema.boolean(), "providerProblem": ProviderProblem.schema,
        ], required: ["item", "chip", "encodedBytes", "providerAvailable"])
    }
}

/// `composer/remove`: takes one item out of a composer.
public struct ComposerRemoveRequest: RequestType, Hashable {
    public typealias Response = ComposerRemoveResult
    public static let method = "composer/remove"
    public static let summary = "Takes one item out of a composer."
    public static var errors: [ErrorCode] { [.composerNotFound, .itemNotFound, .stateWriteFailed] }

    /// The composer.
    public var composerId: String
    /// The item's `id`.
    public var itemId: String

    /// Creates the params.
    public init(composerId: String, itemId: String) {
        self.composerId = composerId
        self.itemId = itemId
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
        itemId = try reader.string("itemId")
    }

    public var json: JSONValue { ["composerId": .string(composerId), "itemId": .string(itemId)] }

    public static var schema: JSONValue {
        Schema.object(["composerId": Schema.string(), "itemId": Schema.string()], required: ["composerId", "itemId"])
    }
}

/// `composer/remove`'s answer: the summary after the removal and the removed item.
public struct ComposerRemoveResult: WireValue, Hashable {
    /// The composer after the removal.
    public var composer: ComposerSummary
    /// The item taken out.
    public var removed: ContextItem

    /// Creates a result.
    public init(composer: ComposerSummary, removed: ContextItem) {
        self.composer = composer
        self.removed = removed
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composer = try ComposerSummary(json: json, path: path)
        removed = try reader.decode("removed")
    }

    public var json: JSONValue {
        var object = composer.members
        object["removed"] = removed.json
        return .object(object)
    }

    public static var schema: JSONValue {
        ["allOf": [Schema.shared(ComposerSummary.self), Schema.object(["removed": ContextItem.schema], required: ["removed"])]]
    }
}

/// `composer/send`: the envelope a backend receives; the composer is emptied once it is built.
public struct ComposerSendRequest: RequestType, Hashable {
    public typealias Response = ComposerSendResult
    public static let method = "composer/send"
    public static let summary = "Builds the envelope a chat backend receives and empties the composer."
    public static var errors: [ErrorCode] { [.composerNotFound, .stateWriteFailed, .requestCancelled] }

    /// The composer.
    public var composerId: String
    /// The message text (default empty).
    public var text: String?

    /// Creates the params.
    public init(composerId: String, text: String? = nil) {
        self.composerId = composerId
        self.text = text
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
        text = try reader.optionalString("text")
    }

    public var json: JSONValue {
        var object: JSONObject = ["composerId": .string(composerId)]
        object.set("text", text)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["composerId": Schema.string(), "text": Schema.string("The message text.")], required: ["composerId"])
    }
}

/// `composer/send`'s answer: `{composerId, message}`.
public struct ComposerSendResult: WireValue, Hashable {
    /// The composer.
    public var composerId: String
    /// The message for the backend.
    public var message: OutgoingMessage

    /// Creates a result.
    public init(composerId: String, message: OutgoingMessage) {
        self.composerId = composerId
        self.message = message
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
        message = try reader.decode("message")
    }

    public var json: JSONValue { ["composerId": .string(composerId), "message": message.json] }

    public static var schema: JSONValue {
        Schema.object(["composerId": Schema.string(), "message": OutgoingMessage.schema], required: ["composerId", "message"])
    }
}

/// The message a chat backend receives (ChatKit's field names).
public struct OutgoingMessage: WireValue, Hashable {
    /// The message text.
    public var text: String
    /// The attached items, encoded.
    public var contextItems: [OutgoingContextItem]
    /// The text plus one line per item, for backends that read only text.
    public var summary: String

    /// Creates a message.
    public init(text: String, contextItems: [OutgoingContextItem], summary: String) {
        self.text = text
        self.contextItems = contextItems
        self.summary = summary
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        text = try reader.string("text")
        contextItems = try reader.decodeArray("contextItems")
        summary = try reader.string("summary")
    }

    public var json: JSONValue {
        ["text": .string(text), "contextItems": .array(contextItems.map(\.json)), "summary": .string(summary)]
    }

    public static var schema: JSONValue {
        Schema.object([
            "text": Schema.string(), "contextItems": Schema.array(OutgoingContextItem.schema), "summary": Schema.string(),
        ], required: ["text", "contextItems", "summary"])
    }
}

/// One encoded item of an outgoing message.
public struct OutgoingContextItem: WireValue, Hashable {
    /// The item's `type`.
    public var contextType: String
    /// The item's `displayName`.
    public var displayName: String
    /// Base64 of the provider's `item/encode` data.
    public var encodedContent: String
    /// The host's keys (`provider`, `type`, `encoding`, `contentType`, `localizedDescription`,
    /// `itemId`) plus the provider's encoding metadata.
    public var metadata: [String: String]

    /// Creates an entry.
    public init(contextType: String, displayName: String, encodedContent: String, metadata: [String: String]) {
        self.contextType = contextType
        self.displayName = displayName
        self.encodedContent = encodedContent
        self.metadata = metadata
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        contextType = try reader.string("contextType")
        displayName = try reader.string("displayName")
        encodedContent = try reader.string("encodedContent")
        metadata = try reader.optionalStringMap("metadata") ?? [:]
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "contextType": .string(contextType), "displayName": .string(displayName), "encodedContent": .string(encodedContent),
        ]
        object.set("metadata", metadata)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "contextType": Schema.string(), "displayName": Schema.string(), "encodedContent": Schema.string("Base64."),
            "metadata": ["type": "object", "additionalProperties": ["type": "string"]],
        ], required: ["contextType", "displayName", "encodedContent", "metadata"])
    }
}

/// `composer/close`: discards a composer and its draft.
public struct ComposerCloseRequest: RequestType, Hashable {
    public typealias Response = ComposerCloseResult
    public static let method = "composer/close"
    public static let summary = "Discards a composer and its draft."
    public static var errors: [ErrorCode] { [.composerNotFound, .stateWriteFailed] }

    /// The composer.
    public var composerId: String

    /// Creates the params.
    public init(composerId: String) { self.composerId = composerId }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
    }

    public var json: JSONValue { ["composerId": .string(composerId)] }

    public static var schema: JSONValue { Schema.object(["composerId": Schema.string()], required: ["composerId"]) }
}

/// `composer/close`'s answer.
public struct ComposerCloseResult: WireValue, Hashable {
    /// The composer closed.
    public var composerId: String
    /// How many items its draft had.
    public var discardedItems: Int

    /// Creates a result.
    public init(composerId: String, discardedItems: Int) {
        self.composerId = composerId
        self.discardedItems = discardedItems
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        composerId = try reader.string("composerId")
        discardedItems = try reader.int("discardedItems")
    }

    public var json: JSONValue { ["composerId": .string(composerId), "discardedItems": .number(Double(discardedItems))] }

    public static var schema: JSONValue {
        Schema.object(["composerId": Schema.string(), "discardedItems": Schema.integer()], required: ["composerId", "discardedItems"])
    }
}
