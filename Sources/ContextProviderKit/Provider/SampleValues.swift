/// Values derived from a form's own rules: valid sets a collector should accept and invalid
/// variants it must refuse. The conformance runner uses them for providers that declare no
/// samples (docs/conformance.md); the gallery (`context-host gallery`) walks every provider's
/// form with them through the public protocol.
package enum SampleValues {
    /// A value each field accepts by its own rules: its default, else a plain value of its kind.
    /// `searchOptions` gives the first option found by `collect/query` for search fields.
    package static func valid(for form: ContextForm, searchOptions: [String: String]) -> JSONObject {
        var values = JSONObject()
        for field in form.fields {
            if let value = validValue(for: field, searchOption: searchOptions[field.id]) { values[field.id] = value }
        }
        return values
    }

    /// Value sets to try, in order, until the collector accepts one: required fields (and
    /// defaults) only, every field, then required fields plus each optional field alone (for forms
    /// whose optional fields exclude each other, e.g. "a place or coordinates").
    package static func candidates(for form: ContextForm, searchOptions: [String: String]) -> [JSONObject] {
        let all = valid(for: form, searchOptions: searchOptions)
        var minimal = JSONObject()
        for field in form.fields where field.required || field.defaultValue != nil {
            if let value = all[field.id] { minimal[field.id] = value }
        }
        var result = [minimal]
        if all != minimal { result.append(all) }
        for field in form.fields where !field.required && field.defaultValue == nil {
            guard let value = all[field.id] else { continue }
            var one = minimal
            one[field.id] = value
            if !result.contains(one) { result.append(one) }
        }
        return Array(result.prefix(6))
    }

    package static func validValue(for field: FormField, searchOption: String?) -> JSONValue? {
        if let defaultValue = field.defaultValue, field.validate(defaultValue) == nil { return defaultValue }
        switch field.kind {
        case .text:
            var text = "Conformance sample"
            if let maxLength = field.maxLength, text.count > maxLength { text = String(text.prefix(maxLength)) }
            if let minLength = field.minLength, text.count < minLength {
                text += String(repeating: "x", count: minLength - text.count)
            }
            let value = JSONValue.string(text)
            if field.validate(value) == nil { return value }
            return field.required ? value : nil
        case .number:
            var number = field.min ?? (field.max.map { Swift.min($0, 1) } ?? 1)
            if let max = field.max, number > max { number = max }
            return .number(number)
        case .date:
            return "2026-01-15"
        case .datetime:
            return "2026-01-15T10:30:00Z"
        case .choice:
            if let option = field.options?.first { return .string(option.value) }
            if let searchOption { return .string(searchOption) }
            return field.required ? "" : nil
        case .toggle:
            return true
        case .location:
            return ["latitude": 48.8566, "longitude": 2.3522]
        }
    }

    /// Queries to try on a search-backed choice field until one answers an option: short ones
    /// most data sets match, respecting the field's `minQueryLength`.
    package static func searchQueries(minimumLength: Int) -> [String] {
        ["", "a", "e", "1", "s"].filter { $0.count >= minimumLength } + (minimumLength > 1 ? [String(repeating: "a", count: minimumLength)] : [])
    }

    /// `base` (default: `valid`) with each of its fields at its maximum: texts at `maxLength`
    /// (at most 100,000 characters), numbers at `max`.
    package static func maximum(for form: ContextForm, searchOptions: [String: String], base: JSONObject? = nil) -> JSONObject {
        var values = base ?? valid(for: form, searchOptions: searchOptions)
        for field in form.fields where values[field.id] != nil {
            switch field.kind {
            case .text where field.pattern == nil:
                if let maxLength = field.maxLength, maxLength > 0 {
                    let words = String(repeating: "lorem ipsum ", count: Swift.min(maxLength, 100_000) / 12 + 1)
                    values[field.id] = .string(String(words.prefix(Swift.min(maxLength, 100_000))))
                }
            case .number:
                if let max = field.max { values[field.id] = .number(max) }
            default:
                break
            }
        }
        return values
    }

    /// One invalid variant: the values, the field that must be named, and what is wrong.
    package struct Invalid: Sendable {
        package var values: JSONObject
        package var fieldID: String
        package var what: String
    }

    /// Variants of `valid` that break one rule each: a missing required field, a text over
    /// `maxLength` or under `minLength`, a number out of range, a value of the wrong type, an
    /// unknown static choice.
    package static func invalid(for form: ContextForm, valid: JSONObject) -> [Invalid] {
        var variants: [Invalid] = []
        func variant(_ field: FormField, _ value: JSONValue?, _ what: String) {
            var values = valid
            values[field.id] = value
            // Only a value the form's own rules refuse is a fair test.
            if let value, field.validate(value) == nil { return }
            variants.append(Invalid(values: values, fieldID: field.id, what: what))
        }
        for field in form.fields {
            if field.required { variant(field, nil, "required field '\(field.id)' left out") }
            switch field.kind {
            case .text:
                if let maxLength = field.maxLength, maxLength < 1_000_000 {
                    variant(field, .string(String(repeating: "x", count: maxLength + 1)), "'\(field.id)' one character over maxLength \(maxLength)")
                }
                if let minLength = field.minLength, minLength > 1 {
                    variant(field, .string(String(repeating: "x", count: minLength - 1)), "'\(field.id)' one character under minLength \(minLength)")
                }
                variant(field, .number(42), "'\(field.id)' given a number instead of text")
            case .number:
                if let max = field.max { variant(field, .number(max + Swift.max(field.step ?? 1, 1)), "'\(field.id)' above max \(max)") }
                if let min = field.min { variant(field, .number(min - Swift.max(field.step ?? 1, 1)), "'\(field.id)' below min \(min)") }
                variant(field, "not a number", "'\(field.id)' given text instead of a number")
            case .choice:
                if field.options != nil && field.search == nil {
                    variant(field, "__conformance-not-an-option__", "'\(field.id)' given a value that is not one of its options")
                }
            case .toggle:
                variant(field, "yes", "'\(field.id)' given text instead of a Boolean")
            case .date:
                variant(field, "15/01/2026", "'\(field.id)' given a date that is not YYYY-MM-DD")
            case .datetime:
                variant(field, "yesterday", "'\(field.id)' given a date-time that is not RFC 3339")
            case .location:
                variant(field, ["latitude": 123.0, "longitude": 0.0], "'\(field.id)' given a latitude of 123")
            }
        }
        return variants
    }
}
