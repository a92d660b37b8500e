#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

/// A property name the reader looks for. Names are recognised once, when the line is parsed, so
/// the reader compares small enum values instead of strings.
enum ICSName: String, Sendable {
    case begin = "BEGIN", end = "END"
    case uid = "UID", summary = "SUMMARY", location = "LOCATION", description = "DESCRIPTION"
    case organizer = "ORGANIZER", attendee = "ATTENDEE", status = "STATUS", url = "URL"
    case dtstart = "DTSTART", dtend = "DTEND", duration = "DURATION", recurrenceID = "RECURRENCE-ID", sequence = "SEQUENCE"
    case rrule = "RRULE", rdate = "RDATE", exdate = "EXDATE", exrule = "EXRULE"
    case tzid = "TZID", tzoffsetfrom = "TZOFFSETFROM", tzoffsetto = "TZOFFSETTO"
    case calendarName = "X-WR-CALNAME", calendarTimeZone = "X-WR-TIMEZONE"
    /// Any other name (read from the source when needed).
    case other = ""

    /// The name of upper-cased name bytes.
    static func named(_ bytes: UnsafeBufferPointer<UInt8>) -> ICSName {
        // The candidates of each length (up to four), compared without building a string.
        func matches(_ name: ICSName) -> Bool {
            var raw = name.rawValue
            return raw.withUTF8 { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) } == 0
        }
        func first(_ a: ICSName, _ b: ICSName = .other, _ c: ICSName = .other, _ d: ICSName = .other) -> ICSName {
            if matches(a) { return a }
            if b != .other, matches(b) { return b }
            if c != .other, matches(c) { return c }
            if d != .other, matches(d) { return d }
            return .other
        }
        switch bytes.count {
        case 3: return first(.end, .uid, .url)
        case 4: return first(.tzid)
        case 5: return first(.begin, .dtend, .rrule, .rdate)
        case 6: return first(.status, .exdate, .exrule)
        case 7: return first(.dtstart, .summary)
        case 8: return first(.location, .attendee, .duration, .sequence)
        case 9: return first(.organizer)
        case 10: return first(.tzoffsetto)
        case 11: return first(.description)
        case 12: return first(.tzoffsetfrom, .calendarName)
        case 13: return first(.recurrenceID, .calendarTimeZone)
        default: return .other
        }
    }
}

/// One unfolded content line, `NAME;PARAM=VALUE:value` (RFC 5545 §3.1), as offsets into its
/// `ICSSource`: strings are made only for the parts that are read.
struct ICSProperty: Sendable {
    /// The name, if it is one the reader looks for.
    var name: ICSName
    /// The first byte of the (upper-cased) name.
    var start: Int
    /// Where the name ends: the `;` before the parameters or the `:` before the value.
    var nameEnd: Int
    /// The first byte of the value (after the `:`).
    var valueStart: Int
    /// The end of the line.
    var end: Int
    /// The line where it starts.
    var line: Int

    var nameRange: Range<Int> { start..<nameEnd }
    /// The parameters as written, between the name's `;` and the value's `:` (empty without).
    var parametersRange: Range<Int> { nameEnd + 1 < valueStart ? (nameEnd + 1)..<(valueStart - 1) : valueStart..<valueStart }
    /// The raw value (still escaped for TEXT values).
    var valueRange: Range<Int> { valueStart..<end }
}

/// The unfolded content lines of one file, which its properties point into.
final class ICSSource: Sendable {
    /// The file's bytes with folds removed and property names upper-cased.
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Calls `body` with the bytes of `range`.
    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// The bytes of `range` as a string (invalid UTF-8 repaired).
    func string(_ range: Range<Int>) -> String { withBytes(range) { String(decoding: $0, as: UTF8.self) } }

    /// The property's name, upper-cased.
    func name(_ property: ICSProperty) -> String {
        property.name == .other ? string(property.nameRange) : property.name.rawValue
    }

    /// The property's raw value (still escaped for TEXT values).
    func value(_ property: ICSProperty) -> String { string(property.valueRange) }

    /// The property's parameters as written (without the leading `;`).
    func rawParameters(_ property: ICSProperty) -> String { string(property.parametersRange) }

    /// The value read as TEXT: `\n`, `\,`, `\;` and `\\` unescaped.
    func text(_ property: ICSProperty) -> String { withBytes(property.valueRange, ICSText.unescape) }

    /// Whether the value's bytes are exactly `expected`, ignoring ASCII case.
    func value(_ property: ICSProperty, equalsIgnoringCase expected: StaticString) -> Bool {
        withBytes(property.valueRange) { ICSText.equalsIgnoringCase($0, expected) }
    }

    /// The first value of a parameter (unquoted), or `nil` when the property does not have it.
    func parameter(_ name: StaticString, of property: ICSProperty) -> String? {
        parameterRange(name, of: property).map(parameterValue)
    }

    /// A parameter value's bytes as a string, with the TEXT escapes some exporters use in
    /// parameters undone: `\,` and `\;` (Outlook's `TZID="Kuala Lumpur\, Singapore"`).
    func parameterValue(_ range: Range<Int>) -> String {
        withBytes(range) { bytes in
            guard bytes.contains(UInt8(ascii: "\\")) else { return String(decoding: bytes, as: UTF8.self) }
            return String(decoding: ICSText.unescapeSeparators(bytes), as: UTF8.self)
        }
    }

    /// Where the first value of a parameter (unquoted) is, or `nil` when the property does not
    /// have it. `name` is upper-case; parameter names match in any case.
    func parameterRange(_ name: StaticString, of property: ICSProperty) -> Range<Int>? {
        let range = property.parametersRange
        if range.isEmpty { return nil }
        return bytes.withUnsafeBufferPointer { all -> Range<Int>? in
            // The parser checked the syntax: `NAME=value[,value…]` separated by `;`, each value
            // either quoted (any byte but `"`) or plain (no `,`, `;`, `:`, `"`).
            var index = range.lowerBound
            let end = range.upperBound
            while index < end {
                let nameStart = index
                while index < end, all[index] != UInt8(ascii: "=") { index += 1 }
                let matches = ICSText.equalsIgnoringCase(UnsafeBufferPointer(rebasing: all[nameStart..<index]), name)
                index += 1
                var first: Range<Int>?
                while true {
                    let value: Range<Int>
                    if index < end, all[index] == UInt8(ascii: "\"") {
                        var close = index + 1
                        while close < end, all[close] != UInt8(ascii: "\"") { close += 1 }
                        value = (index + 1)..<close
                        index = close + 1
                    } else {
                        // A backslash keeps the next byte in the value: Outlook writes
                        // `TZID=Kuala Lumpur\, Singapore` unquoted, and means one value.
                        let start = index
                        while index < end, all[index] != UInt8(ascii: ","), all[index] != UInt8(ascii: ";") {
                            if all[index] == UInt8(ascii: "\\"), index + 1 < end, all[index + 1] == UInt8(ascii: ",") { index += 1 }
                            index += 1
                        }
                        value = start..<index
                    }
                    if first == nil { first = value }
                    guard index < end, all[index] == UInt8(ascii: ",") else { break }
                    index += 1
                }
                if matches { return first }
                index += 1  // the ';' before the next parameter
            }
            return nil
        }
    }
}

/// A component (`BEGIN:X` … `END:X`) with its properties and sub-components.
struct ICSComponent: Sendable {
    var name: String
    /// Offsets into the file's `ICSSource`.
    var properties: [ICSProperty] = []
    var children: [ICSComponent] = []
    /// The line of `BEGIN`.
    var line: Int

    /// The first property with this name.
    func property(_ name: ICSName) -> ICSProperty? {
        for property in properties where property.name == name { return property }
        return nil
    }

    /// Every property with this name.
    func properties(_ name: ICSName) -> [ICSProperty] { properties.filter { $0.name == name } }
}

/// TEXT escaping (RFC 5545 §3.3.11).
enum ICSText {
    /// TEXT value bytes, unescaped (RFC 5545 §3.3.11): `\n` and `\N` become a line feed, `\\`,
    /// `\;` and `\,` the character. Any other backslash is kept, as the reference implementation
    /// keeps it (`\"` is not an escape).
    static func unescape(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard value.contains(UInt8(ascii: "\\")) else { return String(decoding: value, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: value.count) { out in
            var count = 0
            var escaped = false
            for byte in value {
                if escaped {
                    switch byte {
                    case UInt8(ascii: "n"), UInt8(ascii: "N"): out[count] = 10
                    case UInt8(ascii: "\\"), UInt8(ascii: ";"), UInt8(ascii: ","): out[count] = byte
                    default:
                        out[count] = UInt8(ascii: "\\")
                        count += 1
                        out[count] = byte
                    }
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

    /// The bytes with `\;` and `\,` read as `;` and `,` (other backslashes kept): TEXT escapes
    /// where the value type has none, as exporters write them in parameters (`TZID="Kuala
    /// Lumpur\, Singapore"`) and `RRULE`s (`FREQ=DAILY\;COUNT=10`).
    static func unescapeSeparators(_ bytes: some RandomAccessCollection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let next = bytes.index(after: index)
            if bytes[index] == UInt8(ascii: "\\"), next != bytes.endIndex,
                bytes[next] == UInt8(ascii: ";") || bytes[next] == UInt8(ascii: ",")
            {
                index = next
            }
            out.append(bytes[index])
            index = bytes.index(after: index)
        }
        return out
    }

    /// Whether `bytes` spell `expected` (upper-case ASCII), ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ expected: StaticString) -> Bool {
        guard bytes.count == expected.utf8CodeUnitCount else { return false }
        let upper = expected.utf8Start
        for index in 0..<bytes.count {
            let byte = bytes[index]
            if (byte >= 97 && byte <= 122 ? byte - 32 : byte) != upper[index] { return false }
        }
        return true
    }

    /// A TEXT value escaped (RFC 5545 §3.3.11); a lone CR is dropped.
    static func escape(_ value: String) -> String {
        value.replacing(characters: ["\\": "\\\\", ";": "\\;", ",": "\\,", "\n": "\\n", "\r": ""])
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
    /// Whether an indented content line was reported (once per file).
    private var reportedIndent = false

    init(file: String) { self.file = file }

    /// How deep components nest at most (a calendar holds events that hold alarms: 3).
    static let maximumDepth = 16

    /// The components that belong directly in a VCALENDAR (RFC 5545 §3.6, RFC 7953).
    static let calendarComponents: Set<String> = ["VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY", "VTIMEZONE", "VAVAILABILITY"]

    /// The top-level components (normally one `VCALENDAR`) of a file's bytes, and the unfolded
    /// bytes their properties point into.
    ///
    /// Folded lines are joined in place: a logical line's continuation bytes are moved back over
    /// the line break and the space or tab that folded it, so no line is copied out, and property
    /// names are upper-cased in place. The file's bytes are taken, not copied: the caller passes
    /// them with `consume`, so joining the folds does not first copy the whole file.
    mutating func parse(_ bytes: consuming [UInt8]) -> (source: ICSSource, components: [ICSComponent]) {
        var buffer = consume bytes
        var stack: [ICSComponent] = []
        var roots: [ICSComponent] = []
        // Components nested deeper than `maximumDepth` are skipped whole (counted, not kept).
        var skippedDepth = 0
        buffer.withUnsafeMutableBufferPointer { buffer in
            let count = buffer.count
            var index = 0
            var physicalLine = 1
            // Skip a UTF-8 byte order mark.
            if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { index = 3 }
            while index < count {
                // Read one logical line: physical lines joined where the next starts with a space
                // or tab (a fold). It ends up in `lineStart..<lineEnd`.
                let startLine = physicalLine
                let lineStart = index
                var lineEnd = index
                var segmentStart = index
                while true {
                    let end = Self.lineBreak(in: UnsafeBufferPointer(buffer), from: segmentStart)
                    if lineEnd != segmentStart {
                        // After a fold: move this segment back to the end of the line so far.
                        let source = UnsafeMutableBufferPointer(rebasing: buffer[segmentStart..<end])
                        UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[lineEnd...])
                            .copyMemory(from: UnsafeRawBufferPointer(source))
                    }
                    lineEnd += end - segmentStart
                    var next = end
                    if next < count {
                        next += buffer[next] == 13 && next + 1 < count && buffer[next + 1] == 10 ? 2 : 1
                        physicalLine += 1
                    }
                    index = next
                    guard next < count, next > end, buffer[next] == 32 || buffer[next] == 9 else { break }
                    segmentStart = next + 1
                }
                // A logical line can only start with a space or tab at the start of the file (or
                // after a blank line): an indented `   BEGIN:VCALENDAR`. It is read without them,
                // as the reference implementation reads it.
                var contentStart = lineStart
                while contentStart < lineEnd, buffer[contentStart] == 32 || buffer[contentStart] == 9 { contentStart += 1 }
                if contentStart == lineEnd { continue }
                if contentStart > lineStart, !reportedIndent {
                    reportedIndent = true
                    report(startLine, "the line starts with spaces or tabs, which only a folded line may; read without them (reported once per file)")
                }
                guard let property = parseLine(buffer, contentStart..<lineEnd, line: startLine) else { continue }
                if skippedDepth > 0 {
                    if property.name == .begin {
                        skippedDepth += 1
                    } else if property.name == .end {
                        skippedDepth -= 1
                    }
                    continue
                }
                switch property.name {
                case .begin:
                    let name = Self.componentName(UnsafeBufferPointer(rebasing: buffer[property.valueRange]))
                    guard stack.count < Self.maximumDepth else {
                        report(startLine, "BEGIN:\(RecurrenceRule.excerpt(name)) is nested more than \(Self.maximumDepth) components deep; skipped to its END")
                        skippedDepth = 1
                        continue
                    }
                    // A calendar's own components (events, to-dos, time zones…) only sit in the
                    // VCALENDAR: one that opens inside another means that one's END is missing.
                    if Self.calendarComponents.contains(name), let calendar = stack.lastIndex(where: { $0.name == "VCALENDAR" }),
                        stack.count - 1 > calendar
                    {
                        while stack.count - 1 > calendar {
                            let unclosed = stack.removeLast()
                            report(
                                unclosed.line,
                                "BEGIN:\(unclosed.name) has no END:\(unclosed.name) before BEGIN:\(name) on line \(startLine); the \(unclosed.name) is skipped"
                            )
                        }
                    }
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
                case .end:
                    let value = UnsafeBufferPointer(rebasing: buffer[property.valueRange])
                    let name = Self.componentName(value)
                    guard let open = stack.lastIndex(where: { $0.name == name }) else {
                        let written = RecurrenceRule.excerpt(String(decoding: value, as: UTF8.self))
                        if stack.count > 1 {
                            // A misspelt END (END:VTODDO) closes what is open, as icalendar reads it,
                            // so the components after it are not lost.
                            let done = stack.removeLast()
                            report(startLine, "END:\(written) does not match BEGIN:\(done.name) on line \(done.line); read as END:\(done.name)")
                            stack[stack.count - 1].children.append(done)
                        } else {
                            report(startLine, "END:\(written) without a matching BEGIN; line skipped")
                        }
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
                default:
                    if stack.isEmpty {
                        let name = String(decoding: UnsafeBufferPointer(rebasing: buffer[property.nameRange]), as: UTF8.self)
                        report(startLine, "\(name) outside any BEGIN/END component; line skipped")
                    } else {
                        stack[stack.count - 1].properties.append(property)
                    }
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
        return (ICSSource(bytes: buffer), roots)
    }

    /// Where the physical line from `start` ends: the first CR or LF, or the end of the bytes.
    static func lineBreak(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        // memchr is vectorized; a line has at most one LF, and a CR normally just before it.
        let base = bytes.baseAddress!
        let length = bytes.count - start
        let newline = memchr(base + start, 10, length).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
        let carriageReturn = memchr(base + start, 13, newline - start).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
        return carriageReturn ?? newline
    }

    private mutating func report(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(file: file, line: line, message: message))
    }

    /// Splits the logical line `range` of `buffer`, `NAME *(;param) : value`, and upper-cases the
    /// name in place.
    private mutating func parseLine(_ buffer: UnsafeMutableBufferPointer<UInt8>, _ range: Range<Int>, line: Int) -> ICSProperty? {
        let bytes = UnsafeBufferPointer(rebasing: buffer[range])
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
        let nameEnd = index
        while index < count, bytes[index] == 59 {  // ;
            index += 1
            let nameStart = index
            while index < count, isNameByte(bytes[index]) { index += 1 }
            guard index > nameStart, index < count, bytes[index] == 61 else {  // =
                report(line, "malformed parameter in \(Self.upper(bytes[0..<nameEnd])): \(Self.excerpt(bytes)); line skipped")
                return nil
            }
            index += 1
            while true {
                if index < count, bytes[index] == 34 {  // quoted
                    guard let close = bytes[(index + 1)...].firstIndex(of: 34) else {
                        let parameterName = Self.upper(bytes[nameStart..<(index - 1)])
                        report(line, "unterminated quoted value of parameter \(parameterName) in \(Self.upper(bytes[0..<nameEnd])); line skipped")
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
            report(line, "malformed content line (no ':' after \(Self.upper(bytes[0..<nameEnd]))): \(Self.excerpt(bytes)); line skipped")
            return nil
        }
        // Upper-case the name in place (names are ASCII letters, digits, '-' and '_').
        for i in range.lowerBound..<(range.lowerBound + nameEnd) where buffer[i] >= 97 && buffer[i] <= 122 { buffer[i] -= 32 }
        return ICSProperty(
            name: ICSName.named(UnsafeBufferPointer(rebasing: buffer[range.lowerBound..<(range.lowerBound + nameEnd)])),
            start: range.lowerBound, nameEnd: range.lowerBound + nameEnd, valueStart: range.lowerBound + index + 1,
            end: range.upperBound, line: line)
    }

    /// A component name (`BEGIN`/`END` value), upper-cased: its first word (an indented file's
    /// folds join `  BEGIN:VCALENDAR` and `  VERSION:2.0` into `BEGIN:VCALENDAR VERSION:2.0`).
    static func componentName(_ value: UnsafeBufferPointer<UInt8>) -> String {
        let end = value.firstIndex { $0 == 32 || $0 == 9 } ?? value.count
        let bytes = UnsafeBufferPointer(rebasing: value[0..<end])
        if bytes.allSatisfy({ $0 < 128 }) { return upper(bytes) }
        return String(decoding: bytes, as: UTF8.self).uppercased()
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
