/// Text escaped one Unicode scalar at a time by a table: what the HTML, XML, YAML and diagnostic
/// writers share. A scalar the table names becomes its text; any other goes to `other`, which
/// appends it as it is (the default), an escape of it, or nothing.
package enum TextEscaping {
    package static func escape(
        _ text: String, _ table: [Unicode.Scalar: String],
        other: (Unicode.Scalar, inout String) -> Void = { scalar, result in result.unicodeScalars.append(scalar) }
    ) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if let replacement = table[scalar] { result += replacement } else { other(scalar, &result) }
        }
        return result
    }

    /// Whether `scalar` is a C0 control character or DEL (what the escapes spell out).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7f }
}
