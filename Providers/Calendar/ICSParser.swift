/// A problem found in a calendar file: where, and what was done about it.
struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The file's name (last path component).
    var file: String
    /// The 1-based line of the (first physical line of the) content line.
    var line: Int
    /// What is wrong and what was skipped.
    var message: String

    var description: String { "\(file):\(line): \(message)" }
}

/// One unfolded content line: `NAME;PARAM=VALUE:value` (RFC 5545 §3.1).
struct ICSProperty: Sendable {
    /// The property name, upper-cased.
    var name: String
    /// The parameters as written, between the name's `;` and the value's `:` (already checked
    /// by the parser; read on demand, since most are never asked for).
    var rawParameters: String
    /// The raw value (still escaped for TEXT values).
    var value: String
    /// The line where it starts.
    var line: Int

    /// The first value of a parameter.
    func parameter(_ name: String) -> String? {
        if rawParameters.isEmpty { return nil }
        for parameter in parameters where parameter.name == name { return parameter.values.first }
        return nil
    }

    /// Parameters, names upper-cased, values unquoted (a parameter may have several values).
    var parameters: [(name: String, values: [String])] {
        var result: [(name: String, values: [String])] = []
        let bytes = Array(rawParameters.utf8)
        var index = 0
        while index < bytes.count {
            let nameStart = index
            while index < bytes.count, bytes[index] != 61 { index += 1 }  // =
            let name = ICSParser.upper(bytes[nameStart..<index])
            index += 1
            var values: [String] = []
            while index <= bytes.count {
                if index < bytes.count, bytes[index] == 34 {  // quoted
                    let start = index + 1
                    let close = bytes[start...].firstIndex(of: 34) ?? bytes.count
                    values.append(String(decoding: bytes[start..<close], as: UTF8.self))
                    index = close + 1
                } else {
                    let start = index
                    while index < bytes.count, bytes[index] != 44, bytes[index] != 59 { index += 1 }
                    values.append(String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self))
                }
                if index < bytes.count, bytes[index] == 44 {
                    index += 1
                    continue
                }
                break
            }
            result.append((name, values))
            index += 1  // the ';' before the next parameter
        }
        return result
    }

    /// The value read as TEXT: `\n`, `\,`, `\;` and `\\` unescaped.
    var text: String { ICSText.unescape(value) }
}

/// A component (`BEGIN:X` … `END:X`) with its properties and sub-components.
struct ICSComponent: Sendable {
    var name: String
    var properties: [ICSProperty] = []
    var children: [ICSComponent] = []
    /// The line of `BEGIN`.
    var line: Int

    /// The first property with this name.
    func property(_ name: String) -> ICSProperty? {
        for property in properties where property.name == name { return property }
        return nil
    }

    /// Every property with this name.
    func properties(_ name: String) -> [ICSProperty] { properties.filter { $0.name == name } }
}

/// TEXT escaping (RFC 5545 §3.3.11).
enum ICSText {
    static func unescape(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "\\")) else { return value }
        let utf8 = value.utf8
        return String(unsafeUninitializedCapacity: utf8.count) { out in
            var count = 0
            var escaped = false
            for byte in utf8 {
                if escaped {
                    out[count] = byte == UInt8(ascii: "n") || byte == UInt8(ascii: "N") ? 10 : byte
                    count += 1
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else {
                    out[count] = byte
                    count += 1
                }
            }
            if escaped {
                out[count] = UInt8(ascii: "\\")
                count += 1
            }
            return count
        }
    }

    static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\n": result += "\\n"
            case "\r": break
            default: result.append(character)
            }
        }
        return result
    }

    /// Folds a content line at 75 octets (never inside a UTF-8 sequence), CRLF-terminated.
    static func fold(_ line: String) -> String {
        let bytes = Array(line.utf8)
        guard bytes.count > 75 else { return line + "\r\n" }
        var out: [UInt8] = []
        var start = 0
        var limit = 75
        while start < bytes.count {
            var end = min(start + limit, bytes.count)
            while end < bytes.count, end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            if start > 0 { out.append(32) }
            out.append(contentsOf: bytes[start..<end])
            out.append(contentsOf: [13, 10])
            start = end
            limit = 74
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Parses iCalendar bytes into components. Never fails: malformed lines are reported with their
/// line number and skipped.
struct ICSParser {
    let file: String
    private(set) var diagnostics: [Diagnostic] = []

    init(file: String) { self.file = file }

    /// The top-level components (normally one `VCALENDAR`) of `bytes`.
    mutating func parse(_ bytes: [UInt8]) -> [ICSComponent] {
        var stack: [ICSComponent] = []
        var roots: [ICSComponent] = []
        bytes.withUnsafeBufferPointer { buffer in
            let count = buffer.count
            var index = 0
            var physicalLine = 1
            // Skip a UTF-8 byte order mark.
            if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { index = 3 }
            var logical: [UInt8] = []
            logical.reserveCapacity(256)
            while index < count {
                let startLine = physicalLine
                logical.removeAll(keepingCapacity: true)
                // Read one logical line: physical lines joined where the next starts with a space
                // or tab (a fold). Unfolded lines are parsed in place, without copying.
                var segmentStart = index
                var folded = false
                var lineRange = index..<index
                while true {
                    var end = segmentStart
                    while end < count, buffer[end] != 10, buffer[end] != 13 { end += 1 }
                    var next = end
                    if next < count {
                        next += buffer[next] == 13 && next + 1 < count && buffer[next + 1] == 10 ? 2 : 1
                        physicalLine += 1
                    }
                    if next < count, next > end, buffer[next] == 32 || buffer[next] == 9 {
                        logical.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[segmentStart..<end]))
                        folded = true
                        segmentStart = next + 1
                        continue
                    }
                    if folded { logical.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[segmentStart..<end])) }
                    lineRange = segmentStart..<end
                    index = next
                    break
                }
                let parsed: ICSProperty?
                if folded {
                    if logical.isEmpty { continue }
                    parsed = logical.withUnsafeBufferPointer { parseLine($0, line: startLine) }
                } else {
                    if lineRange.isEmpty { continue }
                    parsed = parseLine(UnsafeBufferPointer(rebasing: buffer[lineRange]), line: startLine)
                }
                guard let property = parsed else { continue }
                if property.name == "BEGIN" {
                    let name = property.value.uppercased()
                    // Components never nest in themselves: a second BEGIN:VEVENT means the first
                    // one's END is missing.
                    if let open = stack.lastIndex(where: { $0.name == name }) {
                        while stack.count > open {
                            let unclosed = stack.removeLast()
                            report(
                                unclosed.line,
                                "BEGIN:\(unclosed.name) has no END:\(unclosed.name) before BEGIN:\(name) on line \(startLine); the \(unclosed.name) is skipped"
                            )
                        }
                    }
                    var component = ICSComponent(name: name, line: startLine)
                    component.properties.reserveCapacity(16)
                    stack.append(component)
                } else if property.name == "END" {
                    let name = property.value.uppercased()
                    guard let open = stack.lastIndex(where: { $0.name == name }) else {
                        report(startLine, "END:\(property.value) without a matching BEGIN; line skipped")
                        continue
                    }
                    // Components opened after the matching BEGIN were never closed.
                    while stack.count - 1 > open {
                        let unclosed = stack.removeLast()
                        report(
                            unclosed.line,
                            "BEGIN:\(unclosed.name) has no END:\(unclosed.name) before END:\(name) on line \(startLine); the \(unclosed.name) is skipped"
                        )
                    }
                    let done = stack.removeLast()
                    if stack.isEmpty { roots.append(done) } else { stack[stack.count - 1].children.append(done) }
                } else if stack.isEmpty {
                    report(startLine, "\(property.name) outside any BEGIN/END component; line skipped")
                } else {
                    stack[stack.count - 1].properties.append(property)
                }
            }
        }
        // Components still open at the end of the file.
        while let unclosed = stack.popLast() {
            if unclosed.name == "VCALENDAR", !stack.isEmpty || roots.isEmpty {
                // A calendar missing only its final END is common; keep what it holds.
                report(unclosed.line, "BEGIN:VCALENDAR has no END:VCALENDAR; read to the end of the file")
                roots.append(unclosed)
            } else {
                report(unclosed.line, "BEGIN:\(unclosed.name) has no END:\(unclosed.name) before the end of the file; the \(unclosed.name) is skipped")
            }
        }
        return roots
    }

    private mutating func report(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(file: file, line: line, message: message))
    }

    /// Splits `NAME *(;param) : value`.
    private mutating func parseLine(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) -> ICSProperty? {
        let count = bytes.count
        var index = 0
        func isNameByte(_ b: UInt8) -> Bool {
            (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b == 45 || b == 95
        }
        while index < count, isNameByte(bytes[index]) { index += 1 }
        guard index > 0 else {
            report(line, "malformed content line (expected NAME:value): \(Self.excerpt(bytes)); line skipped")
            return nil
        }
        let name = Self.upper(bytes[0..<index])
        let parametersStart = index + 1
        while index < count, bytes[index] == 59 {  // ;
            index += 1
            let nameStart = index
            while index < count, isNameByte(bytes[index]) { index += 1 }
            guard index > nameStart, index < count, bytes[index] == 61 else {  // =
                report(line, "malformed parameter in \(name): \(Self.excerpt(bytes)); line skipped")
                return nil
            }
            index += 1
            while true {
                if index < count, bytes[index] == 34 {  // quoted
                    guard let close = bytes[(index + 1)...].firstIndex(of: 34) else {
                        let parameterName = Self.upper(bytes[nameStart..<(index - 1)])
                        report(line, "unterminated quoted value of parameter \(parameterName) in \(name); line skipped")
                        return nil
                    }
                    index = close + 1
                } else {
                    while index < count, bytes[index] != 44, bytes[index] != 59, bytes[index] != 58, bytes[index] != 34 {
                        index += 1
                    }
                }
                if index < count, bytes[index] == 44 {
                    index += 1
                    continue
                }
                break
            }
        }
        guard index < count, bytes[index] == 58 else {  // :
            report(line, "malformed content line (no ':' after \(name)): \(Self.excerpt(bytes)); line skipped")
            return nil
        }
        let rawParameters =
            index > parametersStart ? String(decoding: bytes[parametersStart..<index], as: UTF8.self) : ""
        let value = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        return ICSProperty(name: name, rawParameters: rawParameters, value: value, line: line)
    }

    /// An ASCII name, upper-cased.
    static func upper(_ bytes: some Collection<UInt8>) -> String {
        if !bytes.contains(where: { $0 >= 97 && $0 <= 122 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }, as: UTF8.self)
    }

    /// The start of a line for messages, control and invalid bytes shown as `?`.
    static func excerpt(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self)
        let clean = String(text.unicodeScalars.map { $0.value < 32 || $0 == "\u{FFFD}" || $0.value == 127 ? "?" : Character($0) })
        return "\"\(clean)\(bytes.count > 40 ? "…" : "")\""
    }
}
