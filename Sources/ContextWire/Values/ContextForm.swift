/// One step of a collector (ctxui 1): a titled list of fields and a submit button.
///
/// Wire form: `{"ctxui":1,"stepId","title","submitLabel"?,"fallbackText","fields":[Field]}`.
public struct ContextForm: JSONConvertible, Hashable {
    /// Identifies the step within the provider's collector, e.g. `note`.
    public var stepId: String
    /// The form title.
    public var title: String
    /// The submit button label, e.g. `Attach`.
    public var submitLabel: String?
    /// Plain text for clients that render no forms.
    public var fallbackText: String
    /// The fields, top to bottom.
    public var fields: [FormField]

    /// Creates a form. `fallbackText` defaults to the title and the field labels.
    public init(
        stepId: String, title: String, submitLabel: String? = nil, fields: [FormField], fallbackText: String? = nil
    ) {
        self.stepId = stepId
        self.title = title
        self.submitLabel = submitLabel
        self.fields = fields
        self.fallbackText =
            fallbackText
            ?? "\(title): \(fields.map { $0.required ? "\($0.label) (required)" : $0.label }.joined(separator: ", "))"
    }

    /// The field with this id.
    public func field(_ id: String) -> FormField? { fields.first { $0.id == id } }

    /// Converts the wire form.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        try reader.checkCtxuiVersion()
        stepId = try reader.string("stepId")
        title = try reader.string("title")
        submitLabel = try reader.optionalString("submitLabel")
        fallbackText = try reader.string("fallbackText")
        fields = try reader.decodeArray("fields")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["ctxui"] = .number(Double(ctxuiVersion))
        object["stepId"] = .string(stepId)
        object["title"] = .string(title)
        object.set("submitLabel", submitLabel)
        object["fallbackText"] = .string(fallbackText)
        object["fields"] = .array(fields.map(\.json))
        return .object(object)
    }
}

/// The kind of a form field, which fixes the JSON type of its value.
public enum FieldKind: String, Sendable, Hashable, CaseIterable {
    /// A string; `multiline` for long text.
    case text
    /// A number.
    case number
    /// A calendar date string, `YYYY-MM-DD`.
    case date
    /// An RFC 3339 date-time string, e.g. `2025-01-31T09:30:00Z` (seconds and offset optional).
    case datetime
    /// The `value` string of one option.
    case choice
    /// A Boolean.
    case toggle
    /// An object `{"latitude","longitude"}` in degrees.
    case location
}

/// How a choice field searches: the client calls `collect/query` as the user types.
public struct ChoiceSearch: JSONConvertible, Hashable {
    /// Characters the user must type before the client queries.
    public var minQueryLength: Int

    /// Creates a search source.
    public init(minQueryLength: Int = 1) {
        self.minQueryLength = minQueryLength
    }

    /// Converts `{"minQueryLength":Int}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        minQueryLength = try reader.optionalInt("minQueryLength") ?? 1
    }

    /// The wire form.
    public var json: JSONValue { ["minQueryLength": .number(Double(minQueryLength))] }
}

/// One option of a choice field, or one answer to `collect/query`.
public struct FormOption: JSONConvertible, Hashable {
    /// The value submitted when chosen.
    public var value: String
    /// What the user sees.
    public var label: String
    /// A secondary line, e.g. a country or a date.
    public var detail: String?

    /// Creates an option.
    public init(value: String, label: String, detail: String? = nil) {
        self.value = value
        self.label = label
        self.detail = detail
    }

    /// Converts `{"value","label","detail"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        value = try reader.string("value")
        label = try reader.string("label")
        detail = try reader.optionalString("detail")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["value"] = .string(value)
        object["label"] = .string(label)
        object.set("detail", detail)
        return .object(object)
    }
}

/// One field of a form. Kind-specific properties are `nil` when they do not apply.
///
/// Use the factory methods (`.text`, `.number`, `.choice`, …) to build fields.
public struct FormField: JSONConvertible, Hashable {
    /// Identifies the field; the key of its value in `values`.
    public var id: String
    /// The field kind.
    public var kind: FieldKind
    /// The label, also used in validation messages ("Title is required.").
    public var label: String
    /// Whether a value must be given (for toggles: must be on).
    public var required: Bool
    /// The initial value.
    public var defaultValue: JSONValue?
    /// Hint text shown in an empty field.
    public var placeholder: String?
    /// Help text shown under the field.
    public var help: String?
    /// Text: whether the field takes several lines.
    public var multiline: Bool?
    /// Text: the least number of characters when not empty.
    public var minLength: Int?
    /// Text: the greatest number of characters.
    public var maxLength: Int?
    /// Text: a regular expression the whole value must match (when not empty).
    public var pattern: String?
    /// Number: the smallest value.
    public var min: Double?
    /// Number: the largest value.
    public var max: Double?
    /// Number: values must be a multiple of `step` from `min` (or 0).
    public var step: Double?
    /// Number: the unit shown next to the field, e.g. `kg`.
    public var unit: String?
    /// Choice: the static options.
    public var options: [FormOption]?
    /// Choice: a search source answered by `collect/query`.
    public var search: ChoiceSearch?
    /// Plain-text stand-in for clients that cannot render this field.
    public var fallback: String?

    /// Creates a field of any kind.
    public init(
        id: String, kind: FieldKind, label: String, required: Bool = false, defaultValue: JSONValue? = nil,
        placeholder: String? = nil, help: String? = nil, multiline: Bool? = nil, minLength: Int? = nil,
        maxLength: Int? = nil, pattern: String? = nil, min: Double? = nil, max: Double? = nil,
        step: Double? = nil, unit: String? = nil, options: [FormOption]? = nil, search: ChoiceSearch? = nil,
        fallback: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.label = label
        self.required = required
        self.defaultValue = defaultValue
        self.placeholder = placeholder
        self.help = help
        self.multiline = multiline
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.min = min
        self.max = max
        self.step = step
        self.unit = unit
        self.options = options
        self.search = search
        self.fallback = fallback
    }

    /// A text field.
    public static func text(
        id: String, label: String, required: Bool = false, multiline: Bool = false, minLength: Int? = nil,
        maxLength: Int? = nil, pattern: String? = nil, placeholder: String? = nil, help: String? = nil,
        defaultValue: String? = nil
    ) -> FormField {
        FormField(
            id: id, kind: .text, label: label, required: required, defaultValue: defaultValue.map(JSONValue.string),
            placeholder: placeholder, help: help, multiline: multiline ? true : nil, minLength: minLength,
            maxLength: maxLength, pattern: pattern)
    }

    /// A number field.
    public static func number(
        id: String, label: String, required: Bool = false, min: Double? = nil, max: Double? = nil,
        step: Double? = nil, unit: String? = nil, placeholder: String? = nil, help: String? = nil,
        defaultValue: Double? = nil
    ) -> FormField {
        FormField(
            id: id, kind: .number, label: label, required: required, defaultValue: defaultValue.map(JSONValue.number),
            placeholder: placeholder, help: help, min: min, max: max, step: step, unit: unit)
    }

    /// A choice field with static options, a search source, or both.
    public static func choice(
        id: String, label: String, required: Bool = false, options: [FormOption]? = nil,
        search: ChoiceSearch? = nil, placeholder: String? = nil, help: String? = nil, defaultValue: String? = nil
    ) -> FormField {
        FormField(
            id: id, kind: .choice, label: label, required: required, defaultValue: defaultValue.map(JSONValue.string),
            placeholder: placeholder, help: help, options: options, search: search)
    }

    /// A toggle; `required` means it must be on.
    public static func toggle(
        id: String, label: String, required: Bool = false, help: String? = nil, defaultValue: Bool? = nil
    ) -> FormField {
        FormField(
            id: id, kind: .toggle, label: label, required: required, defaultValue: defaultValue.map(JSONValue.bool),
            help: help)
    }

    /// A date (`.date`), date-time (`.datetime`) or location (`.location`) field.
    public static func field(
        _ kind: FieldKind, id: String, label: String, required: Bool = false, placeholder: String? = nil,
        help: String? = nil, defaultValue: JSONValue? = nil
    ) -> FormField {
        FormField(
            id: id, kind: kind, label: label, required: required, defaultValue: defaultValue,
            placeholder: placeholder, help: help)
    }

    /// Converts the wire form.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        id = try reader.string("id")
        kind = try reader.enum("kind")
        label = try reader.string("label")
        required = try reader.optionalBool("required") ?? false
        defaultValue = reader.value("default")
        placeholder = try reader.optionalString("placeholder")
        help = try reader.optionalString("help")
        multiline = try reader.optionalBool("multiline")
        minLength = try reader.optionalInt("minLength")
        maxLength = try reader.optionalInt("maxLength")
        pattern = try reader.optionalString("pattern")
        min = try reader.optionalDouble("min")
        max = try reader.optionalDouble("max")
        step = try reader.optionalDouble("step")
        unit = try reader.optionalString("unit")
        options = try reader.optionalDecodeArray("options")
        search = try reader.optionalDecode("search")
        fallback = try reader.optionalString("fallback")
        if let minLength, minLength < 0 {
            throw JSONDecodeError(path: reader.path("minLength"), message: "expected a non-negative integer, got \(minLength)")
        }
        if let maxLength, maxLength < 0 {
            throw JSONDecodeError(path: reader.path("maxLength"), message: "expected a non-negative integer, got \(maxLength)")
        }
        if let step, step <= 0 {
            throw JSONDecodeError(path: reader.path("step"), message: "expected a positive number, got \(formatNumber(step))")
        }
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["kind"] = .string(kind.rawValue)
        object["label"] = .string(label)
        if required { object["required"] = true }
        if let defaultValue { object["default"] = defaultValue }
        object.set("placeholder", placeholder)
        object.set("help", help)
        object.set("multiline", multiline)
        object.set("minLength", minLength)
        object.set("maxLength", maxLength)
        object.set("pattern", pattern)
        object.set("min", min)
        object.set("max", max)
        object.set("step", step)
        object.set("unit", unit)
        object.set("options", options)
        object.set("search", search)
        object.set("fallback", fallback)
        return .object(object)
    }
}

/// The values a user entered, keyed by field id.
public struct FormValues: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The raw values.
    public var object: JSONObject

    /// Wraps raw values.
    public init(_ object: JSONObject = JSONObject()) {
        self.object = object
    }

    /// Values from a literal, e.g. `["title": "Hello"]`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self.object = object
    }

    /// The raw value of a field, `nil` when absent or `null`.
    public subscript(fieldId: String) -> JSONValue? {
        get {
            guard let value = object[fieldId], !value.isNull else { return nil }
            return value
        }
        set { object[fieldId] = newValue }
    }

    /// A text, date, datetime or choice value.
    public func string(_ fieldId: String) -> String? { self[fieldId]?.stringValue }

    /// A number value.
    public func number(_ fieldId: String) -> Double? { self[fieldId]?.numberValue }

    /// A toggle value.
    public func bool(_ fieldId: String) -> Bool? { self[fieldId]?.boolValue }

    /// A location value.
    public func coordinate(_ fieldId: String) -> Coordinate? {
        guard let value = self[fieldId] else { return nil }
        return try? Coordinate(json: value)
    }
}

/// What a collector step's submit produced.
public enum SubmitOutcome: JSONConvertible, Hashable {
    /// The finished item.
    case item(ContextItem)
    /// Another step to show.
    case step(ContextForm)
    /// The values were rejected: messages keyed by field id, and an optional form-wide message.
    case invalid(fieldErrors: [String: String], formError: String? = nil)

    /// Converts `{"outcome":"item"|"step"|"invalid",…}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        let outcome = try reader.string("outcome")
        switch outcome {
        case "item": self = .item(try reader.decode("item"))
        case "step": self = .step(try reader.decode("form"))
        case "invalid":
            self = .invalid(
                fieldErrors: try reader.optionalStringMap("fieldErrors") ?? [:],
                formError: try reader.optionalString("formError"))
        default:
            throw JSONDecodeError(path: reader.path("outcome"), message: "expected one of item, step, invalid, got \"\(outcome)\"")
        }
    }

    /// The wire form (field errors sorted by field id).
    public var json: JSONValue {
        var object = JSONObject()
        switch self {
        case .item(let item):
            object["outcome"] = "item"
            object["item"] = item.json
        case .step(let form):
            object["outcome"] = "step"
            object["form"] = form.json
        case .invalid(let fieldErrors, let formError):
            object["outcome"] = "invalid"
            object.set("fieldErrors", fieldErrors)
            object.set("formError", formError)
        }
        return .object(object)
    }
}
