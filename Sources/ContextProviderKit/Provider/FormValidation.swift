extension ContextForm {
    /// Checks `values` against every field: presence of required fields, the JSON type each kind
    /// needs, text length and pattern, number range and step, static choice membership, and date,
    /// date-time and location syntax.
    ///
    /// - Returns: a message per invalid field id, saying what to fix ("Title is required."); empty
    ///   when everything is valid. Values for unknown field ids are ignored.
    public func validate(_ values: FormValues) -> [String: String] {
        var errors: [String: String] = [:]
        for field in fields {
            if let message = field.validate(values[field.id]) { errors[field.id] = message }
        }
        return errors
    }
}

extension FormField {
    /// Checks one value (`nil` when absent or `null`); answers a message saying what to fix, or
    /// `nil` when the value is acceptable.
    public func validate(_ value: JSONValue?) -> String? {
        guard let value, !Self.isEmpty(value) else {
            return required ? "\(label) is required." : nil
        }
        switch kind {
        case .text: return validateText(value)
        case .number: return validateNumber(value)
        case .date:
            guard let string = value.stringValue, DateSyntax.isDate(string) else {
                return "\(label) must be a date like 2025-01-31."
            }
        case .datetime:
            guard let string = value.stringValue, DateSyntax.isDateTime(string) else {
                return "\(label) must be a date and time like 2025-01-31T09:30:00Z."
            }
        case .choice:
            guard let string = value.stringValue else { return "\(label) must be one of the offered options." }
            if search == nil, let options, !options.isEmpty, !options.contains(where: { $0.value == string }) {
                if options.count <= 8 {
                    return "\(label) must be one of: \(options.map(\.label).joined(separator: ", "))."
                }
                return "\(label) must be one of the offered options."
            }
        case .toggle:
            guard let flag = value.boolValue else { return "\(label) must be on or off." }
            if required, !flag { return "\(label) must be turned on." }
        case .location:
            guard (try? Coordinate(json: value)) != nil else {
                return "\(label) must be a location with a latitude from -90 to 90 and a longitude from -180 to 180."
            }
        }
        return nil
    }

    /// Absent-like values: `null`, and strings of only white space.
    static func isEmpty(_ value: JSONValue) -> Bool {
        switch value {
        case .null: true
        case .string(let string): string.allSatisfy(\.isWhitespace)
        default: false
        }
    }

    private func validateText(_ value: JSONValue) -> String? {
        guard let string = value.stringValue else { return "\(label) must be text." }
        let length = string.count
        if let minLength, length < minLength {
            return "\(label) must be at least \(minLength) \(minLength == 1 ? "character" : "characters")."
        }
        if let maxLength, length > maxLength {
            return "\(label) must be at most \(maxLength) \(maxLength == 1 ? "character" : "characters")."
        }
        if let pattern {
            guard let regex = try? Regex(pattern) else {
                return "\(label) cannot be checked: the provider's pattern is invalid."
            }
            if (try? regex.wholeMatch(in: string)) == nil {
                return help.map { "\(label) is not in the expected format: \($0)" }
                    ?? "\(label) is not in the expected format."
            }
        }
        return nil
    }

    private func validateNumber(_ value: JSONValue) -> String? {
        guard let number = value.numberValue, number.isFinite else { return "\(label) must be a number." }
        let unitSuffix = unit.map { " \($0)" } ?? ""
        if let min, number < min { return "\(label) must be at least \(formatNumber(min))\(unitSuffix)." }
        if let max, number > max { return "\(label) must be at most \(formatNumber(max))\(unitSuffix)." }
        if let step, step > 0 {
            let steps = (number - (min ?? 0)) / step
            if abs(steps - steps.rounded()) > 1e-9 * Swift.max(1, abs(steps)) {
                return "\(label) must be a multiple of \(formatNumber(step))\(unitSuffix)."
            }
        }
        return nil
    }
}

/// Syntax checks for `date` and `datetime` values, without Foundation.
enum DateSyntax {
    /// `YYYY-MM-DD` naming a real calendar day.
    static func isDate(_ string: String) -> Bool {
        let bytes = Array(string.utf8)
        return bytes.count == 10 && isDate(bytes[...])
    }

    /// RFC 3339 date-time; the seconds and the offset may be omitted (local time), and the
    /// separator may be `T`, `t` or a space.
    static func isDateTime(_ string: String) -> Bool {
        let bytes = Array(string.utf8)
        guard bytes.count >= 16, isDate(bytes[0..<10]) else { return false }
        guard bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " ")
        else { return false }
        guard let hour = number(bytes[11..<13]), hour < 24, bytes[13] == UInt8(ascii: ":"),
            let minute = number(bytes[14..<16]), minute < 60
        else { return false }
        var index = 16
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            guard index + 3 <= bytes.count, let second = number(bytes[(index + 1)..<(index + 3)]), second <= 60
            else { return false }
            index += 3
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                let start = index
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                guard index > start else { return false }
            }
        }
        if index == bytes.count { return true }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"): return index + 1 == bytes.count
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, let offsetHour = number(bytes[(index + 1)..<(index + 3)]),
                offsetHour < 24, bytes[index + 3] == UInt8(ascii: ":"),
                let offsetMinute = number(bytes[(index + 4)..<(index + 6)]), offsetMinute < 60
            else { return false }
            return true
        default: return false
        }
    }

    private static func isDate(_ bytes: ArraySlice<UInt8>) -> Bool {
        let base = bytes.startIndex
        guard bytes.count >= 10, let year = number(bytes[base..<(base + 4)]), bytes[base + 4] == UInt8(ascii: "-"),
            let month = number(bytes[(base + 5)..<(base + 7)]), bytes[base + 7] == UInt8(ascii: "-"),
            let day = number(bytes[(base + 8)..<(base + 10)]), (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
