/// `composer/open`: a new draft message with its limits.
public struct ComposerOpenRequest: RequestType, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(), params: true, [
        WireField("maximumItems", schema: ["type": "integer", "minimum": 1, "maximum": 100, "description": "Default 10."]) {
            (value, reader) throws(JSONDecodeError) in value.maximumItems = try reader.optionalInt("maximumItems")
        } write: { value, object in object.set("maximumItems", value.maximumItems) },
        WireField("byteBudget", schema: ["type": "integer", "minimum": 1, "maximum": 67_108_864, "description": "Bytes of encoded content; default 4194304."]) {
            (value, reader) throws(JSONDecodeError) in value.byteBudget = try reader.optionalInt("byteBudget")
        } write: { value, object in object.set("byteBudget", value.byteBudget) },
    ])
}

/// A composer's limits and use: `{composerId, maximumItems, byteBudget, bytesUsed, itemCount}`.
public struct ComposerSummary: SharedWireValue, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(composerId: "", maximumItems: 0, byteBudget: 0, bytesUsed: 0, itemCount: 0), [
        .string("composerId", \.composerId), .int("maximumItems", \.maximumItems), .int("byteBudget", \.byteBudget),
        .int("bytesUsed", \.bytesUsed), .int("itemCount", \.itemCount),
    ])

    /// The members, for answers that extend a summary.
    package var members: JSONObject { Self.wireFields.members(of: self) }
}

/// `composer/list`: every open composer, or one composer's items with their chips.
public struct ComposerListRequest: RequestType, WireObject, Hashable {
    public typealias Response = ComposerListResult
    public static let method = "composer/list"
    public static let summary = "Without composerId every open composer (oldest first); with it, its items and their chips."
    public static var errors: [ErrorCode] { [.composerNotFound] }

    /// The composer to list.
    public var composerId: String?

    /// Creates the params.
    public init(composerId: String? = nil) { self.composerId = composerId }

    public static let wireFields = WireFields<Self>(Self(), params: true, [.string("composerId", \.composerId, "The composer to list.")])
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
public struct ComposerItem: WireValue, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(item: .blank, chip: ContextChip(icon: "", title: ""), encodedBytes: 0, providerAvailable: false), [
        .value("item", \.item), .value("chip", \.chip), .int("encodedBytes", \.encodedBytes),
        .bool("providerAvailable", \.providerAvailable), .value("providerProblem", \.providerProblem),
    ])
}

/// `composer/remove`: takes one item out of a composer.
public struct ComposerRemoveRequest: RequestType, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(composerId: "", itemId: ""), [.string("composerId", \.composerId), .string("itemId", \.itemId)])
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
public struct ComposerSendRequest: RequestType, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(composerId: ""), [.string("composerId", \.composerId), .string("text", \.text, "The message text.")])
}

/// `composer/send`'s answer: `{composerId, message}`.
public struct ComposerSendResult: WireValue, WireObject, Hashable {
    /// The composer.
    public var composerId: String
    /// The message for the backend.
    public var message: OutgoingMessage

    /// Creates a result.
    public init(composerId: String, message: OutgoingMessage) {
        self.composerId = composerId
        self.message = message
    }

    public static let wireFields = WireFields<Self>(Self(composerId: "", message: OutgoingMessage(text: "", contextItems: [], summary: "")), [
        .string("composerId", \.composerId), .value("message", \.message),
    ])
}

/// The message a chat backend receives (ChatKit's field names).
public struct OutgoingMessage: WireValue, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(Self(text: "", contextItems: [], summary: ""), [
        .string("text", \.text), .values("contextItems", \.contextItems, schema: Schema.array(OutgoingContextItem.schema)),
        .string("summary", \.summary),
    ])
}

/// One encoded item of an outgoing message.
public struct OutgoingContextItem: WireValue, WireObject, Hashable {
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

    public static let wireFields = WireFields<Self>(
        Self(contextType: "", displayName: "", encodedContent: "", metadata: [:]), required: ["contextType", "displayName", "encodedContent", "metadata"], [
            .string("contextType", \.contextType), .string("displayName", \.displayName), .string("encodedContent", \.encodedContent, "Base64."),
            WireField("metadata", schema: ["type": "object", "additionalProperties": ["type": "string"]]) { (value, reader) throws(JSONDecodeError) in
                value.metadata = try reader.optionalStringMap("metadata") ?? [:]
            } write: { value, object in object.set("metadata", value.metadata) },
        ])
}

/// `composer/close`: discards a composer and its draft.
public struct ComposerCloseRequest: RequestType, WireObject, Hashable {
    public typealias Response = ComposerCloseResult
    public static let method = "composer/close"
    public static let summary = "Discards a composer and its draft."
    public static var errors: [ErrorCode] { [.composerNotFound, .stateWriteFailed] }

    /// The composer.
    public var composerId: String

    /// Creates the params.
    public init(composerId: String) { self.composerId = composerId }

    public static let wireFields = WireFields<Self>(Self(composerId: ""), [.string("composerId", \.composerId)])
}

/// `composer/close`'s answer.
public struct ComposerCloseResult: WireValue, WireObject, Hashable {
    /// The composer closed.
    public var composerId: String
    /// How many items its draft had.
    public var discardedItems: Int

    /// Creates a result.
    public init(composerId: String, discardedItems: Int) {
        self.composerId = composerId
        self.discardedItems = discardedItems
    }

    public static let wireFields = WireFields<Self>(Self(composerId: "", discardedItems: 0), [
        .string("composerId", \.composerId), .int("discardedItems", \.discardedItems),
    ])
}
