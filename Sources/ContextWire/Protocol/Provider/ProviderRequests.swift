// Host → provider requests (docs/provider-abi.md, "Methods"). Providers are the servers here:
// the host sends these through the C ABI's `call` (or a worker's pipe).

/// A provider request without params (`{}`).
public protocol EmptyProviderRequest: RequestType {
    /// The request.
    init()
}

extension EmptyProviderRequest {
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        _ = try EmptyObject(json: json, path: path)
        self.init()
    }
    public var json: JSONValue { .object([:]) }
    public static var schema: JSONValue { EmptyObject.schema }
}

/// `provider/info`: the provider's identity.
public struct ProviderInfoRequest: EmptyProviderRequest, Hashable {
    public typealias Response = ProviderMetadata
    public static let method = "provider/info"
    public static let summary = "The provider's identity: id, title, version, icon and ctxui version."
    public init() {}
}

/// `provider/availability`: whether the provider can work right now.
public struct ProviderAvailabilityRequest: EmptyProviderRequest, Hashable {
    public typealias Response = Availability
    public static let method = "provider/availability"
    public static let summary = "Whether the provider can work right now, and why not."
    public init() {}
}

/// `provider/makeContext`: an item without any form (programmatic providers).
public struct ProviderMakeContextRequest: EmptyProviderRequest, Hashable {
    public typealias Response = ProviderMakeContextResult
    public static let method = "provider/makeContext"
    public static let summary = "An item made without any form, or null."
    public init() {}
}

/// `provider/makeContext`'s answer: `{"item": Item | null}`.
public struct ProviderMakeContextResult: WireValue, Hashable {
    /// The item, or `nil` when the provider made nothing.
    public var item: ContextItem?

    /// Creates a result.
    public init(item: ContextItem?) { self.item = item }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try reader.optionalDecode("item")
    }

    public var json: JSONValue { ["item": item?.json ?? .null] }

    public static var schema: JSONValue { Schema.object(["item": Schema.nullable(ContextItem.schema)], required: ["item"]) }
}

/// `collect/start` (host → provider): the first step of a session's form.
public struct ProviderCollectStartRequest: SessionRequest, Hashable {
    public typealias Response = ContextForm
    public static let method = "collect/start"
    public static let summary = "The first form step of a collection session."

    /// The session the host opened.
    public var sessionId: String

    /// Creates the params.
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// `collect/query` (host → provider): options for a search-backed choice field.
public struct ProviderCollectQueryRequest: RequestType, Hashable {
    public typealias Response = CollectQueryResult
    public static let method = "collect/query"
    public static let summary = "Options for a choice field with a search source."

    /// The session.
    public var sessionId: String
    /// The session's current step.
    public var stepId: String
    /// The choice field.
    public var fieldId: String
    /// What the user typed.
    public var query: String
    /// The step's current values.
    public var values: JSONObject?

    /// Creates the params.
    public init(sessionId: String, stepId: String, fieldId: String, query: String, values: JSONObject? = nil) {
        self.sessionId = sessionId
        self.stepId = stepId
        self.fieldId = fieldId
        self.query = query
        self.values = values
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        sessionId = try reader.string("sessionId")
        stepId = try reader.string("stepId")
        fieldId = try reader.string("fieldId")
        query = try reader.string("query")
        values = try reader.optionalRawObject("values")
    }

    public var json: JSONValue {
        var object: JSONObject = ["sessionId": .string(sessionId), "stepId": .string(stepId), "fieldId": .string(fieldId), "query": .string(query)]
        object.setObject("values", values)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "sessionId": Schema.string(), "stepId": Schema.string(), "fieldId": Schema.string(), "query": Schema.string(),
            "values": Schema.anyObject("{fieldId: value}"),
        ], required: ["sessionId", "stepId", "fieldId", "query"])
    }
}

/// `collect/submit` (host → provider): a step's values.
public struct ProviderCollectSubmitRequest: RequestType, Hashable {
    public typealias Response = SubmitOutcome
    public static let method = "collect/submit"
    public static let summary = "A step's values; answers an item, the next step, or field errors."

    /// The session.
    public var sessionId: String
    /// The step submitted.
    public var stepId: String
    /// `{fieldId: value}`.
    public var values: JSONObject

    /// Creates the params.
    public init(sessionId: String, stepId: String, values: JSONObject) {
        self.sessionId = sessionId
        self.stepId = stepId
        self.values = values
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        sessionId = try reader.string("sessionId")
        stepId = try reader.string("stepId")
        values = try reader.object("values").object
    }

    public var json: JSONValue { ["sessionId": .string(sessionId), "stepId": .string(stepId), "values": .object(values)] }

    public static var schema: JSONValue {
        Schema.object([
            "sessionId": Schema.string(), "stepId": Schema.string(), "values": Schema.anyObject("{fieldId: value}"),
        ], required: ["sessionId", "stepId", "values"])
    }
}

/// `collect/cancel` (host → provider): the session was abandoned.
public struct ProviderCollectCancelRequest: SessionRequest, Hashable {
    public typealias Response = EmptyObject
    public static let method = "collect/cancel"
    public static let summary = "The collection session was abandoned."

    /// The session.
    public var sessionId: String

    /// Creates the params.
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// A provider request whose params are `{"item": Item}`.
public protocol ProviderItemRequest: RequestType {
    /// The item.
    var item: ContextItem { get }
    /// A request for `item`.
    init(item: ContextItem)
}

extension ProviderItemRequest {
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        self.init(item: try reader.decode("item"))
    }
    public var json: JSONValue { ["item": item.json] }
    public static var schema: JSONValue { Schema.object(["item": ContextItem.schema], required: ["item"]) }
}

/// `item/preview`: an item's chip.
public struct ItemPreviewRequest: ProviderItemRequest, Hashable {
    public typealias Response = ContextChip
    public static let method = "item/preview"
    public static let summary = "An item's chip."
    public var item: ContextItem
    public init(item: ContextItem) { self.item = item }
}

/// `item/detail`: an item's detail document.
public struct ItemDetailRequest: ProviderItemRequest, Hashable {
    public typealias Response = ContextDetail
    public static let method = "item/detail"
    public static let summary = "An item's detail document."
    public var item: ContextItem
    public init(item: ContextItem) { self.item = item }
}

/// `item/describe`: an item's one-line description.
public struct ItemDescribeRequest: ProviderItemRequest, Hashable {
    public typealias Response = ItemDescription
    public static let method = "item/describe"
    public static let summary = "An item's localized one-line description."
    public var item: ContextItem
    public init(item: ContextItem) { self.item = item }
}

/// `item/encode`: an item encoded for transport.
public struct ItemEncodeRequest: RequestType, Hashable {
    public typealias Response = EncodedItem
    public static let method = "item/encode"
    public static let summary = "An item encoded for transport; an unknown representation is -32602 naming the allowed ones."

    /// The item.
    public var item: ContextItem
    /// `json`, `text` or `binary`; absent: the provider's default.
    public var representation: String?

    /// Creates the params.
    public init(item: ContextItem, representation: String? = nil) {
        self.item = item
        self.representation = representation
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try reader.decode("item")
        representation = try reader.optionalString("representation")
    }

    public var json: JSONValue {
        var object: JSONObject = ["item": item.json]
        object.set("representation", representation)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["item": ContextItem.schema, "representation": Schema.string()], required: ["item"])
    }
}

/// `item/previewMany` (optional): the chips of several items in one call.
public struct ItemPreviewManyRequest: RequestType, Hashable {
    public typealias Response = ItemPreviewManyResult
    public static let method = "item/previewMany"
    public static let summary = "The chips of several items in one call (optional; -32601 means use item/preview)."

    /// The items, at most 256.
    public var items: [ContextItem]

    /// Creates the params.
    public init(items: [ContextItem]) { self.items = items }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        items = try reader.decodeArray("items")
    }

    public var json: JSONValue { ["items": .array(items.map(\.json))] }

    public static var schema: JSONValue {
        Schema.object(["items": ["type": "array", "items": ContextItem.schema, "maxItems": 256]], required: ["items"])
    }
}

/// `item/previewMany`'s answer: one entry per item, in order.
public struct ItemPreviewManyResult: WireValue, Hashable {
    /// One preview per item.
    public var previews: [ItemPreviewOutcome]

    /// Creates a result.
    public init(previews: [ItemPreviewOutcome]) { self.previews = previews }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        previews = try reader.decodeArray("previews")
    }

    public var json: JSONValue { ["previews": .array(previews.map(\.json))] }

    public static var schema: JSONValue { Schema.object(["previews": Schema.array(ItemPreviewOutcome.schema)], required: ["previews"]) }
}

/// One `item/previewMany` entry: `{"chip": Chip}` or `{"error": {code, message, data?}}`.
public enum ItemPreviewOutcome: WireValue, Hashable {
    /// The item's chip.
    case chip(ContextChip)
    /// The error `item/preview` would have answered for this item.
    case error(code: Int, message: String, data: JSONValue?)

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        if let chip = reader.value("chip") {
            self = .chip(try ContextChip(json: chip, path: reader.path("chip")))
        } else {
            let error = try reader.object("error")
            self = .error(code: try error.int("code"), message: try error.string("message"), data: error.value("data"))
        }
    }

    public var json: JSONValue {
        switch self {
        case .chip(let chip): return ["chip": chip.json]
        case .error(let code, let message, let data):
            var error: JSONObject = ["code": .number(Double(code)), "message": .string(message)]
            if let data { error["data"] = data }
            return ["error": .object(error)]
        }
    }

    public static var schema: JSONValue {
        [
            "oneOf": [
                Schema.object(["chip": ContextChip.schema], required: ["chip"]),
                Schema.object(["error": Schema.object(["code": Schema.integer(), "message": Schema.string(), "data": [:]], required: ["code", "message"])], required: ["error"]),
            ]
        ]
    }
}

/// `conformance/samples` (optional, only the conformance runner calls it): sample collector input.
public struct ConformanceSamplesRequest: EmptyProviderRequest, Hashable {
    public typealias Response = ConformanceSamplesResult
    public static let method = "conformance/samples"
    public static let summary = "Sample collector input for context-host conformance (optional; -32601 lets the runner derive values)."
    public init() {}
}

/// `conformance/samples`' answer.
public struct ConformanceSamplesResult: WireValue, Hashable {
    /// One sample per flow.
    public var samples: [ConformanceSampleFlow]

    /// Creates a result.
    public init(samples: [ConformanceSampleFlow]) { self.samples = samples }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        samples = try reader.decodeArray("samples")
    }

    public var json: JSONValue { ["samples": .array(samples.map(\.json))] }

    public static var schema: JSONValue { Schema.object(["samples": Schema.array(ConformanceSampleFlow.schema)], required: ["samples"]) }
}

/// One sample flow: the values of each step in order.
public struct ConformanceSampleFlow: WireValue, Hashable {
    /// The flow's name.
    public var name: String
    /// Each step's values; an absent `stepId` means the step the collector shows next.
    public var steps: [Step]
    /// `false` marks input the collector must refuse (default `true`).
    public var expectsItem: Bool?

    /// One step's values.
    public struct Step: WireValue, Hashable {
        /// The step, when named.
        public var stepId: String?
        /// `{fieldId: value}`.
        public var values: JSONObject

        /// Creates a step.
        public init(stepId: String? = nil, values: JSONObject) {
            self.stepId = stepId
            self.values = values
        }

        public init(json: JSONValue, path: String) throws(JSONDecodeError) {
            let reader = try JSONObjectReader(json, path: path)
            stepId = try reader.optionalString("stepId")
            values = try reader.optionalRawObject("values") ?? JSONObject()
        }

        public var json: JSONValue {
            var object = JSONObject()
            object.set("stepId", stepId)
            object["values"] = .object(values)
            return .object(object)
        }

        public static var schema: JSONValue {
            Schema.object(["stepId": Schema.string(), "values": Schema.anyObject()], required: ["values"])
        }
    }

    /// Creates a flow.
    public init(name: String, steps: [Step], expectsItem: Bool? = nil) {
        self.name = name
        self.steps = steps
        self.expectsItem = expectsItem
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        name = try reader.string("name")
        steps = try reader.decodeArray("steps")
        expectsItem = try reader.optionalBool("expectsItem")
    }

    public var json: JSONValue {
        var object: JSONObject = ["name": .string(name), "steps": .array(steps.map(\.json))]
        object.set("expectsItem", expectsItem)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["name": Schema.string(), "steps": Schema.array(Step.schema), "expectsItem": Schema.boolean()], required: ["name", "steps"])
    }
}
