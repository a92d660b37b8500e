import ContextProtocol

/// How a provider's form step becomes MCP schemas, and answers become host values.
///
/// A tool's input schema is the form's first step as a plain object (every property optional: a
/// value missing is asked for, not refused). An elicitation's schema is a step as MCP allows it:
/// a flat object of primitives, so a `location` is two numbers (`<id>_latitude`,
/// `<id>_longitude`), a multi-line text is a string, a choice with static options a titled
/// single-select, a choice with a search source a string resolved with `collect/query`, and a
/// `pattern` (which elicitation cannot carry) is said in the description.
enum FormMapping {
    static let latitudeSuffix = "_latitude"
    static let longitudeSuffix = "_longitude"

    // MARK: Tool input

    /// The input schema of a `<slug>_collect` tool: the first step's fields, all optional.
    static func toolInputSchema(_ form: ContextForm, searchTool: String?) -> JSONValue {
        var properties = JSONObject()
        for field in form.fields {
            var schema = primitiveSchema(field)
            var notes: [String] = []
            switch field.kind {
            case .text:
                if let pattern = field.pattern { schema["pattern"] = .string(pattern) }
            case .number, .date, .datetime, .toggle:
                break
            case .location:
                schema["type"] = "object"
                schema["properties"] = [
                    "latitude": ["type": "number", "minimum": -90, "maximum": 90],
                    "longitude": ["type": "number", "minimum": -180, "maximum": 180],
                ]
                schema["required"] = ["latitude", "longitude"]
            case .choice:
                if let options = field.options, field.search == nil, !options.isEmpty {
                    schema["enum"] = .array(options.map { .string($0.value) })
                    notes.append("One of: " + options.map { "\($0.value) (\($0.label))" }.joined(separator: ", ") + ".")
                } else if field.search != nil {
                    notes.append("Text to search for; one match is used, several are offered to pick from"
                        + (searchTool.map { " (\($0) lists the matches)" } ?? "") + ".")
                }
            }
            schema["title"] = .string(field.label)
            if let description = description(field, notes: notes) { schema["description"] = .string(description) }
            if let value = field.defaultValue, field.kind != .location { schema["default"] = value }
            properties[field.id] = .object(schema)
        }
        return ["type": "object", "properties": .object(properties)]
    }

    // MARK: Elicitation

    /// The `requestedSchema` asking for a step's values: `values` (given so far) are the
    /// defaults, and each field's error is in its description.
    static func elicitationSchema(_ form: ContextForm, values: JSONObject, errors: [String: String]) -> JSONValue {
        var properties = JSONObject()
        var required: [JSONValue] = []
        for field in form.fields {
            let error = errors[field.id].map { "Error: \($0)" }
            let given = values[field.id] ?? field.defaultValue
            if field.kind == .location {
                let point = given?.objectValue
                for (suffix, name, limit) in [(latitudeSuffix, "latitude", 90.0), (longitudeSuffix, "longitude", 180.0)] {
                    var schema: JSONObject = [
                        "type": "number", "title": .string("\(field.label) (\(name))"),
                        "minimum": .number(-limit), "maximum": .number(limit),
                    ]
                    let notes = [name == "latitude" ? "Degrees north (negative: south)." : "Degrees east (negative: west)."]
                    if let text = description(field, notes: notes, error: error) { schema["description"] = .string(text) }
                    if let number = point?[name]?.numberValue { schema["default"] = .number(number) }
                    properties[field.id + suffix] = .object(schema)
                    if field.required { required.append(.string(field.id + suffix)) }
                }
                continue
            }
            var schema = primitiveSchema(field)
            var notes: [String] = []
            switch field.kind {
            case .text:
                if let pattern = field.pattern { notes.append("Must match the regular expression \(pattern).") }
            case .number, .date, .datetime, .toggle:
                break
            case .choice:
                if let options = field.options, field.search == nil, !options.isEmpty {
                    schema["oneOf"] = .array(options.map { ["const": .string($0.value), "title": .string($0.label)] })
                } else if field.search != nil {
                    notes.append("Type what to search for; matches are offered next.")
                }
            case .location:
                break  // (above)
            }
            schema["title"] = .string(field.label)
            if let text = description(field, notes: notes, error: error) { schema["description"] = .string(text) }
            if let given, defaultAllowed(given, for: field) { schema["default"] = given }
            properties[field.id] = .object(schema)
            if field.required { required.append(.string(field.id)) }
        }
        var schema: JSONObject = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { schema["required"] = .array(required) }
        return .object(schema)
    }

    /// The schema asking which of several matches a search field's text meant.
    static func pickSchema(_ field: FormField, options: [FormOption], query: String) -> JSONValue {
        [
            "type": "object",
            "properties": [
                field.id: [
                    "type": "string", "title": .string(field.label),
                    "description": .string("Matches for “\(query)”."),
                    "oneOf": .array(options.map { option in
                        ["const": .string(option.value), "title": .string(option.detail.map { "\(option.label) — \($0)" } ?? option.label)]
                    }),
                ],
            ],
            "required": [.string(field.id)],
        ]
    }

    /// Host values for a step from an accepted elicitation's `content`: a location's two numbers
    /// become one `{latitude, longitude}`; empty strings are absent.
    static func values(fromElicited content: JSONObject, form: ContextForm) -> JSONObject {
        var values = JSONObject()
        for field in form.fields {
            if field.kind == .location {
                if let latitude = content[field.id + latitudeSuffix]?.numberValue,
                    let longitude = content[field.id + longitudeSuffix]?.numberValue
                {
                    values[field.id] = ["latitude": .number(latitude), "longitude": .number(longitude)]
                }
                continue
            }
            guard let value = content[field.id] else { continue }
            if case .string(let text) = value, text.isEmpty { continue }
            values[field.id] = value
        }
        return values
    }

    /// Host values for a step from a tool's arguments: the members named by the step's fields.
    static func values(fromArguments arguments: JSONObject, form: ContextForm) -> JSONObject {
        var values = JSONObject()
        for field in form.fields {
            if let value = arguments[field.id], !value.isNull {
                if case .string(let text) = value, text.isEmpty { continue }
                values[field.id] = value
            } else if field.kind == .location, let latitude = arguments[field.id + latitudeSuffix]?.numberValue,
                let longitude = arguments[field.id + longitudeSuffix]?.numberValue
            {
                values[field.id] = ["latitude": .number(latitude), "longitude": .number(longitude)]
            }
        }
        return values
    }

    /// The required fields of a step with no value (a toggle must be on).
    static func missing(_ form: ContextForm, values: JSONObject) -> [FormField] {
        form.fields.filter { field in
            guard field.required else { return false }
            switch values[field.id] ?? field.defaultValue {
            case nil, .null?: return true
            case .string(let text)?: return text.allSatisfy(\.isWhitespace)
            case .bool(let on)?: return field.kind == .toggle && !on
            default: return false
            }
        }
    }

    /// One line per field: what it takes and its rules (for a client that cannot be asked).
    static func rules(_ form: ContextForm, errors: [String: String] = [:], only: Set<String>? = nil) -> String {
        form.fields.filter { only?.contains($0.id) ?? true }.map { field in
            var rule = "- \(field.id) (\(field.label)): " + kindRule(field)
            if field.required { rule += ", required" }
            if let error = errors[field.id] { rule += ". Error: \(error)" }
            return rule
        }.joined(separator: "\n")
    }

    // MARK: Helpers

    private static func kindRule(_ field: FormField) -> String {
        switch field.kind {
        case .text:
            var rule = "text"
            if let minimum = field.minLength { rule += ", at least \(minimum) characters" }
            if let maximum = field.maxLength { rule += ", at most \(maximum) characters" }
            if let pattern = field.pattern { rule += ", matching \(pattern)" }
            return rule
        case .number:
            var rule = "number"
            if let minimum = field.min { rule += " ≥ \(format(minimum))" }
            if let maximum = field.max { rule += " ≤ \(format(maximum))" }
            if let unit = field.unit { rule += " (\(unit))" }
            return rule
        case .date: return "date YYYY-MM-DD"
        case .datetime: return "date and time (RFC 3339)"
        case .toggle: return "true or false"
        case .location: return "{\"latitude\", \"longitude\"} in degrees"
        case .choice:
            if let options = field.options, field.search == nil, !options.isEmpty {
                return "one of " + options.map(\.value).joined(separator: ", ")
            }
            return "text to search for"
        }
    }

    private static func description(_ field: FormField, notes: [String], error: String? = nil) -> String? {
        var parts: [String] = []
        if let error { parts.append(error) }
        if let help = field.help {
            parts.append(help)
        } else if let placeholder = field.placeholder, placeholder.lowercased() != field.label.lowercased() {
            parts.append("E.g. \(placeholder).")
        }
        if let unit = field.unit { parts.append("In \(unit).") }
        parts.append(contentsOf: notes)
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// What both schemas share: the JSON type, lengths, range and date formats (none for a
    /// location, which each schema shapes its own way).
    private static func primitiveSchema(_ field: FormField) -> JSONObject {
        var schema = JSONObject()
        switch field.kind {
        case .text:
            schema["type"] = "string"
            setLength(field, &schema)
        case .number:
            schema["type"] = "number"
            setRange(field, &schema)
        case .date:
            schema["type"] = "string"
            schema["format"] = "date"
        case .datetime:
            schema["type"] = "string"
            schema["format"] = "date-time"
        case .toggle:
            schema["type"] = "boolean"
        case .choice:
            schema["type"] = "string"
        case .location:
            break
        }
        return schema
    }

    private static func setLength(_ field: FormField, _ schema: inout JSONObject) {
        if let minimum = field.minLength { schema["minLength"] = .number(Double(minimum)) }
        if let maximum = field.maxLength { schema["maxLength"] = .number(Double(maximum)) }
    }

    private static func setRange(_ field: FormField, _ schema: inout JSONObject) {
        if let minimum = field.min { schema["minimum"] = .number(minimum) }
        if let maximum = field.max { schema["maximum"] = .number(maximum) }
    }

    /// Whether `value` can be a default of the field's elicitation schema (its primitive type).
    private static func defaultAllowed(_ value: JSONValue, for field: FormField) -> Bool {
        switch (field.kind, value) {
        case (.toggle, .bool), (.number, .number): true
        case (.text, .string), (.date, .string), (.datetime, .string): true
        case (.choice, .string(let text)):
            // A static choice's default must be one of its options.
            field.search != nil || (field.options ?? []).contains { $0.value == text }
        default: false
        }
    }

    static func format(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }
}
