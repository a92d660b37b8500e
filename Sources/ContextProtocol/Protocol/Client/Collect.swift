/// `collect/start`: opens a collection session with a form provider and answers its first step.
public struct CollectStartRequest: ProviderScopedRequest, Hashable {
    public typealias Response = CollectStartResult
    public static let method = "collect/start"
    public static let summary = "Opens a collection session with a provider and answers its first form step."
    public static var errors: [ErrorCode] {
        ErrorCode.providerCallErrors + [.collectionNotSupported, .composerNotFound, .attachmentLimitReached, .byteBudgetExceeded, .limitExceeded]
    }

    /// The provider.
    public var providerId: String
    /// Attach the finished item to this composer.
    public var composerId: String?
    /// Receives `$/progress` for this request.
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(providerId: String, composerId: String? = nil, progressToken: ProgressToken? = nil) {
        self.providerId = providerId
        self.composerId = composerId
        self.progressToken = progressToken
    }

    public static let composerIdSummary = "Attach the finished item to this composer."
}

/// `collect/start`'s answer: the session and its first step.
public struct CollectStartResult: WireValue, Hashable {
    /// The session (a UUID).
    public var sessionId: String
    /// The provider.
    public var providerId: String
    /// The first step.
    public var form: ContextForm
    /// The composer the item will be attached to.
    public var composerId: String?

    /// Creates a result.
    public init(sessionId: String, providerId: String, form: ContextForm, composerId: String? = nil) {
        self.sessionId = sessionId
        self.providerId = providerId
        self.form = form
        self.composerId = composerId
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        sessionId = try reader.string("sessionId")
        providerId = try reader.string("providerId")
        form = try reader.decode("form")
        composerId = try reader.optionalString("composerId")
    }

    public var json: JSONValue {
        var object: JSONObject = ["sessionId": .string(sessionId), "providerId": .string(providerId), "form": form.json]
        object.set("composerId", composerId)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "sessionId": Schema.string(), "providerId": Schema.string(), "form": ContextForm.schema, "composerId": Schema.string(),
        ], required: ["sessionId", "providerId", "form"])
    }
}

/// `collect/query`: options for a `choice` field with a search source.
public struct CollectQueryRequest: RequestType, Hashable {
    public typealias Response = CollectQueryResult
    public static let method = "collect/query"
    public static let summary = "Options for a choice field that has a search source, as the user types."
    public static var errors: [ErrorCode] { [.sessionNotFound] + ErrorCode.providerCallErrors }

    /// The session.
    public var sessionId: String
    /// The choice field's `id`.
    public var fieldId: String
    /// What the user typed (default empty).
    public var query: String?
    /// The step's current values (default `{}`).
    public var values: JSONObject?
    /// Receives `$/progress` for this request.
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(sessionId: String, fieldId: String, query: String? = nil, values: JSONObject? = nil, progressToken: ProgressToken? = nil) {
        self.sessionId = sessionId
        self.fieldId = fieldId
        self.query = query
        self.values = values
        self.progressToken = progressToken
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        sessionId = try reader.string("sessionId")
        fieldId = try reader.string("fieldId")
        query = try reader.optionalString("query")
        values = try reader.optionalRawObject("values")
        progressToken = try reader.optionalDecode("progressToken")
    }

    public var json: JSONValue {
        var object: JSONObject = ["sessionId": .string(sessionId), "fieldId": .string(fieldId)]
        object.set("query", query)
        object.setObject("values", values)
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "sessionId": Schema.string(), "fieldId": Schema.string("The choice field's id."),
            "query": Schema.string("What the user typed (default \"\")."),
            "values": Schema.anyObject("The step's current values, {fieldId: value} (default {})."),
            "progressToken": ProgressToken.schema,
        ], required: ["sessionId", "fieldId"])
    }
}

/// `collect/submit`: submits the current step's values.
public struct CollectSubmitRequest: RequestType, Hashable {
    public typealias Response = CollectSubmitResult
    public static let method = "collect/submit"
    public static let summary = "Submits the current step's values; answers an item, the next step, or field errors."
    public static var errors: [ErrorCode] {
        [.sessionNotFound] + ErrorCode.providerCallErrors + [.attachmentLimitReached, .byteBudgetExceeded, .stateWriteFailed]
    }

    /// The session.
    public var sessionId: String
    /// `{fieldId: value}` (default `{}`).
    public var values: JSONObject?
    /// Receives `$/progress` for this request.
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(sessionId: String, values: JSONObject? = nil, progressToken: ProgressToken? = nil) {
        self.sessionId = sessionId
        self.values = values
        self.progressToken = progressToken
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        sessionId = try reader.string("sessionId")
        values = try reader.optionalRawObject("values")
        progressToken = try reader.optionalDecode("progressToken")
    }

    public var json: JSONValue {
        var object: JSONObject = ["sessionId": .string(sessionId)]
        object.setObject("values", values)
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "sessionId": Schema.string(), "values": Schema.anyObject("{fieldId: value} (default {})."), "progressToken": ProgressToken.schema,
        ], required: ["sessionId"])
    }
}

/// `collect/submit`'s answer: the outcome and, when an item was attached to a composer, its summary.
public struct CollectSubmitResult: WireValue, Hashable {
    /// An item, the next step, or field errors.
    public var outcome: SubmitOutcome
    /// In a composer session, the composer after the item was attached.
    public var composer: ComposerSummary?

    /// Creates a result.
    public init(outcome: SubmitOutcome, composer: ComposerSummary? = nil) {
        self.outcome = outcome
        self.composer = composer
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        outcome = try SubmitOutcome(json: json, path: path)
        composer = try reader.optionalDecode("composer")
    }

    public var json: JSONValue {
        guard let composer, case .object(var object) = outcome.json else { return outcome.json }
        object["composer"] = composer.json
        return .object(object)
    }

    public static var schema: JSONValue {
        ["allOf": [SubmitOutcome.schema, Schema.object(["composer": Schema.shared(ComposerSummary.self)])]]
    }
}

/// `collect/cancel`: ends a session without an item.
public struct CollectCancelRequest: SessionRequest, Hashable {
    public typealias Response = EmptyObject
    public static let method = "collect/cancel"
    public static let summary = "Ends a collection session without an item."
    public static var errors: [ErrorCode] { [.sessionNotFound, .providerError, .providerBadReply, .providerTimedOut, .providerCrashed, .requestCancelled] }

    /// The session.
    public var sessionId: String

    /// Creates the params.
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// `collect/make`: an item from a programmatic provider, without a form.
public struct CollectMakeRequest: ProviderScopedRequest, Hashable {
    public typealias Response = CollectMakeResult
    public static let method = "collect/make"
    public static let summary = "Asks a programmatic provider for an item without any form."
    public static var errors: [ErrorCode] {
        ErrorCode.providerCallErrors + [.collectionNotSupported, .composerNotFound, .attachmentLimitReached, .byteBudgetExceeded, .stateWriteFailed]
    }

    /// The provider.
    public var providerId: String
    /// Attach the item to this composer.
    public var composerId: String?
    /// Receives `$/progress` for this request.
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(providerId: String, composerId: String? = nil, progressToken: ProgressToken? = nil) {
        self.providerId = providerId
        self.composerId = composerId
        self.progressToken = progressToken
    }

    public static let composerIdSummary = "Attach the item to this composer."
}

/// `collect/make`'s answer (and the provider's `provider/makeContext`, without `composer`).
public struct CollectMakeResult: WireValue, Hashable {
    /// The item, or `nil` when the provider made nothing.
    public var item: ContextItem?
    /// When attached, the composer after the attachment.
    public var composer: ComposerSummary?

    /// Creates a result.
    public init(item: ContextItem?, composer: ComposerSummary? = nil) {
        self.item = item
        self.composer = composer
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        item = try reader.optionalDecode("item")
        composer = try reader.optionalDecode("composer")
    }

    public var json: JSONValue {
        var object: JSONObject = ["item": item?.json ?? .null]
        object.set("composer", composer)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["item": Schema.nullable(ContextItem.schema), "composer": Schema.shared(ComposerSummary.self)], required: ["item"])
    }
}
