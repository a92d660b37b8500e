#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why some bytes are not valid JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset of the problem in the input.
    public var offset: Int
    /// What is wrong.
    public var reason: String

    /// Creates an error at a byte offset.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// The reason and the byte offset, e.g. `unexpected end at byte 12`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 JSON reader over UTF-8 bytes.
///
/// It can build a full `JSONValue` (`parse`) or only check a value and report where it ends
/// (`skipValue`), which is what lets the host keep request params as raw bytes until a handler
/// needs them.
package struct JSONReader {
    package static let maximumDepth = 256

    package let bytes: UnsafeRawBufferPointer
    package var position: Int
    package private(set) var depth = 0

    /// Steps back out of a level entered with `enter`.
    package mutating func leave() { depth -= 1 }
    /// Whether `skipValue` and `skipString` also refuse unpaired UTF-16 surrogate escapes and
    /// numbers out of `Double`'s range, as decoding does (then skipping accepts exactly what
    /// parsing accepts). Off by default: the host passes such values through to the provider,
    /// whose parser decides.
    package var checksSurrogates = false

    package init(_ bytes: UnsafeRawBufferPointer, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    // MARK: Entry points

    /// Parses a whole document: one value, optionally surrounded by white space.
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var reader = JSONReader(bytes)
        reader.skipWhitespace()
        let value = try reader.readValue()
        reader.skipWhitespace()
        guard reader.position == bytes.count else {
            throw JSONParseError(offset: reader.position, reason: "Unexpected data after the JSON value")
        }
        return value
    }

    /// Parses a whole document from an array of bytes.
    package static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { buffer in try parse(buffer) }
        } catch let error as JSONParseError {
            throw error
        } catch {
            fatalError("unreachable")
        }
    }

    // MARK: Primitives

    package var atEnd: Bool { position >= bytes.count }

    package var current: UInt8 { bytes[position] }

    /// The byte at `position`, or nil at the end.
    package var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Skips white space. Inlined where it is called, host included: most calls find none
    /// (compact JSON), and the call cost more than the test.
    @inlinable
    package mutating func skipWhitespace() {
        guard position < bytes.count, bytes[position] <= 0x20 else { return }
        skipWhitespaceRun()
    }

    @usableFromInline
    package mutating func skipWhitespaceRun() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    package func error(_ reason: String) -> JSONParseError {
        JSONParseError(offset: position, reason: reason)
    }

    package func unexpected(_ expected: String) -> JSONParseError {
        if atEnd { return error("Unexpected end of input; expected \(expected)") }
        let byte = current
        let shown =
            byte >= 0x20 && byte < 0x7F
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return error("Unexpected \(shown); expected \(expected)")
    }

    package mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
        guard !atEnd, current == byte else { throw unexpected(what) }
        position += 1
    }

    // MARK: Values

    package mutating func readValue() throws(JSONParseError) -> JSONValue {
        guard !atEnd else { throw unexpected("a value") }
        switch current {
        case UInt8(ascii: "{"): return .object(try readObject())
        case UInt8(ascii: "["): return .array(try readArray())
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try readLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try readNumber())
        default:
            throw unexpected("a value")
        }
    }

    package mutating func readLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        guard position + count <= bytes.count else { throw error("Invalid literal; expected '\(literal)'") }
        for index in 0..<count where bytes[position + index] != start[index] {
            throw error("Invalid literal; expected '\(literal)'")
        }
        position += count
    }

    /// Counts one more level of nesting; throws past `maximumDepth`. (A nested value's reader
    /// steps back out with `leave`.)
    package mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("Nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    /// Past the whitespace after a container's opening byte: whether the container is empty, and
    /// if so, past its closing byte.
    @inline(__always)
    private mutating func closesEmpty(_ closing: UInt8) -> Bool {
        skipWhitespace()
        guard !atEnd, current == closing else { return false }
        position += 1
        return true
    }

    /// After a container's element (and whitespace): past a `,` (`true`: another element follows)
    /// or past `closing` (`false`: the container ended); anything else is an error.
    @inline(__always)
    private mutating func continuesAfterElement(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        if !atEnd {
            if current == UInt8(ascii: ",") {
                position += 1
                return true
            }
            if current == closing {
                position += 1
                return false
            }
        }
        throw unexpected(closing == UInt8(ascii: "}") ? "',' or '}'" : "',' or ']'")
    }

    package mutating func readObject() throws(JSONParseError) -> JSONObject {
        try enter()
        defer { depth -= 1 }
        position += 1  // {
        var object = JSONObject()
        // Repeated keys keep the last value. Small objects find them with a linear scan; past 32
        // members an index keeps parsing linear (a 16 MiB object of tiny members would otherwise
        // take quadratic time).
        var index: [String: Int]?
        if closesEmpty(UInt8(ascii: "}")) { return object }
        object.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard !atEnd, current == UInt8(ascii: "\"") else { throw unexpected("a string key") }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            let value = try readValue()
            if let existing = index != nil ? index![key] : object.keys.firstIndex(of: key) {
                object.replaceValue(at: existing, with: value)
            } else {
                index?[key] = object.count
                object.appendUnchecked(key, value)
                if index == nil, object.count == 32 {
                    var built: [String: Int] = [:]
                    for (position, name) in object.keys.enumerated() { built[name] = position }
                    index = built
                }
            }
            guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { return object }
        }
    }

    package mutating func readArray() throws(JSONParseError) -> [JSONValue] {
        try enter()
        defer { depth -= 1 }
        position += 1  // [
        var array: [JSONValue] = []
        if closesEmpty(UInt8(ascii: "]")) { return array }
        while true {
            skipWhitespace()
            array.append(try readValue())
            guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { return array }
        }
    }

    /// Reads a string token starting at the opening quote.
    package mutating func readString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes.
        position = skipPlainBytes(from: position)
        guard position < bytes.count else { throw error("Unterminated string") }
        if bytes[position] == UInt8(ascii: "\"") {
            let string = Self.string(checkedUTF8: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
            position += 1
            return string
        }
        if bytes[position] != UInt8(ascii: "\\") { throw stringError(at: position) }
        // Slow path: escapes. The decoded text is at most as long as the escaped one, which is at
        // most what is left of the input; a long string is measured first (`skipString`).
        let left = bytes.count - start
        var capacity = left
        if left > Self.unmeasuredDecodingLimit {
            var probe = self
            probe.position = start - 1
            probe.checksSurrogates = true  // (so errors come in the order decoding finds them)
            try probe.skipString()
            capacity = probe.position - 1 - start + 16
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { output throws(JSONParseError) in
            let count = try decodeEscapedString(from: start, into: output)
            return Self.string(checkedUTF8: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: output[..<count])))
        }
    }

    /// A string of UTF-8 that this reader has checked (`skipPlainBytes`, and escapes decoded to
    /// valid scalars), made without the standard library checking it again: for text with
    /// non-ASCII characters that check costs about as much as the rest of reading it.
    @inline(__always)
    package static func string(checkedUTF8 bytes: UnsafeRawBufferPointer) -> String {
        if #available(macOS 26.0, iOS 26.0, *) {
            return String(copying: UTF8Span(unchecked: bytes.assumingMemoryBound(to: UInt8.self).span, isKnownASCII: false))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Strings with escapes that may be longer than this are measured before they are decoded.
    package static let unmeasuredDecodingLimit = 16 << 10

    /// Decodes the string whose text starts at `start` (after the opening quote) into `output`,
    /// checking it, and leaves `position` after the closing quote. Returns the decoded length,
    /// which is at most the escaped one: `output` must hold that many bytes (and 16 more lets the
    /// whole string be copied in blocks).
    private mutating func decodeEscapedString(
        from start: Int, into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(JSONParseError) -> Int {
        // (Locals, no nested functions: a count captured by one lives in memory, and the loop
        // over blocks loaded and stored it for every block.)
        var count = 0
        position = start
        while true {
            (position, count) = Self.copyPlainBlocks(bytes, from: position, to: output, at: count)
            // The rest byte by byte (non-ASCII, checked as UTF-8, and the last bytes of the input).
            if position < bytes.count, bytes[position] >= 0x80 || bytes.count &- position < 16 || output.count &- count < 16 {
                let run = position
                position = skipPlainBytes(from: position)
                if position > run {
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: output[count..<count + position - run]))
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[run..<position]))
                    count += position - run
                }
            }
            guard position < bytes.count else { throw error("Unterminated string") }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return count
            }
            if byte != UInt8(ascii: "\\") { throw stringError(at: position) }
            position += 1
            guard position < bytes.count else { throw error("Unterminated string") }
            let escape = bytes[position]
            position += 1
            let decoded: UInt8
            switch escape {
            case UInt8(ascii: "\""): decoded = 0x22
            case UInt8(ascii: "\\"): decoded = 0x5C
            case UInt8(ascii: "/"): decoded = 0x2F
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            case UInt8(ascii: "n"): decoded = 0x0A
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "t"): decoded = 0x09
            case UInt8(ascii: "u"):
                let code = try pairingSurrogates(try readHex4())
                guard let scalar = Unicode.Scalar(code), let encoded = UTF8.encode(scalar) else {
                    throw error("Invalid Unicode escape")
                }
                // At most 4 bytes of UTF-8 for the 6 (or 12) of the escape.
                for unit in encoded {
                    output[count] = unit
                    count += 1
                }
                continue
            default:
                position -= 1
                throw error("Invalid escape character in string")
            }
            output[count] = decoded
            count += 1
        }
    }

    /// Copies a string's plain text from `input` at `index` into `output` at `written`, 16 bytes
    /// at a time, each block stored whole before it is tested (a note's body is short runs
    /// between `\\n` escapes, and finding each run's end and then copying it cost more than the
    /// rest of reading the body; the bytes stored past a block's first special byte are
    /// overwritten by what follows it). Stops at a `"`, a `\\`, a control byte or a byte that does
    /// not start a well-formed UTF-8 sequence (well-formed ones are copied, and the blocks go on:
    /// text with a word of another language now and then need not leave this loop), or where
    /// fewer than 16 bytes of input or of output are left. Returns where it stopped in both.
    @inline(__always)
    package static func copyPlainBlocks(
        _ input: UnsafeRawBufferPointer, from index: Int, to output: UnsafeMutableBufferPointer<UInt8>, at written: Int
    ) -> (index: Int, written: Int) {
        guard let target = output.baseAddress else { return (index, written) }
        return plainBlocks(input, from: index, copyingTo: target, at: written, outputEnd: output.count &- 16)
    }

    /// `copyPlainBlocks` without the copy: where a string's plain text ends, 16 bytes at a time
    /// (`skipString`).
    @inline(__always)
    package static func scanPlainBlocks(_ input: UnsafeRawBufferPointer, from index: Int) -> Int {
        plainBlocks(input, from: index, copyingTo: nil, at: 0, outputEnd: .max).index
    }

    /// `copyPlainBlocks` (or `scanPlainBlocks`, with no `target`), where `outputEnd` is the last
    /// offset of `target` that 16 bytes may be stored at.
    @inline(__always)
    private static func plainBlocks(
        _ input: UnsafeRawBufferPointer, from index: Int, copyingTo target: UnsafeMutablePointer<UInt8>?, at written: Int,
        outputEnd: Int
    ) -> (index: Int, written: Int) {
        guard let base = input.baseAddress else { return (index, written) }
        let quote = SIMD16<UInt8>(repeating: 0x22), backslash = SIMD16<UInt8>(repeating: 0x5C)
        let space = SIMD16<UInt8>(repeating: 0x20), high = SIMD16<UInt8>(repeating: 0x80)
        var index = index, written = written
        let inputEnd = input.count &- 16
        while index <= inputEnd, written <= outputEnd {
            let block = (base + index).loadUnaligned(as: SIMD16<UInt8>.self)
            if let target { UnsafeMutableRawPointer(target + written).storeBytes(of: block, as: SIMD16<UInt8>.self) }
            let special = (block .== quote) .| (block .== backslash) .| (block .< space) .| (block .>= high)
            let lanes = unsafeBitCast(special, to: SIMD2<UInt64>.self)
            if lanes[0] | lanes[1] == 0 {
                index &+= 16
                written &+= 16
                continue
            }
            let skipped = firstSetLane(lanes)
            index &+= skipped
            written &+= skipped
            guard input[index] >= 0x80 else { break }
            let length = utf8SequenceLength(input, at: index)
            guard length != 0 else { break }
            if let target { for offset in 0..<length { target[written &+ offset] = input[index &+ offset] } }
            index &+= length
            written &+= length
        }
        return (index, written)
    }

    /// The code point of a `\\u` escape whose four digits were just read as `code`: a high
    /// surrogate must be followed by a `\\u` low one (read here too), and a low one alone is an
    /// error.
    package mutating func pairingSurrogates(_ code: UInt32) throws(JSONParseError) -> UInt32 {
        if (0xD800...0xDBFF).contains(code) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                throw error("Unpaired UTF-16 surrogate")
            }
            position += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("Invalid UTF-16 surrogate pair") }
            return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        if (0xDC00...0xDFFF).contains(code) { throw error("Unpaired UTF-16 surrogate") }
        return code
    }

    /// The index of the first byte at or after `index` that is `"`, `\\`, a control byte or the
    /// start of what is not valid UTF-8 (or the end): ASCII 16 bytes at a time while a run of it
    /// lasts, then eight, and each valid multi-byte sequence whole. (JSON text must be UTF-8; the bytes of a string are passed on as
    /// they are, so they are checked here rather than repaired later.)
    @inline(__always)
    package func skipPlainBytes(from index: Int) -> Int {
        var index = index
        // Blocks only in a run of ASCII: text where most characters are not ASCII (Cyrillic,
        // CJK) stops at each one, and would pay a failed block test per character.
        var inASCIIRun = true
        while true {
            if inASCIIRun {
                let blocksStart = index
                index = Self.skipPlainBlocks(bytes, from: index, stoppingAtNonASCII: true, toTheByte: true)
                // A quote, a backslash or a control byte ends the run here. A well-formed
                // non-ASCII character after at least eight plain bytes is taken here and the
                // blocks go on; otherwise it, like the last bytes of the input, is looked at below.
                if index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
                    if byte >= 0x80, index &- blocksStart >= 8, index &+ 16 <= bytes.count {
                        let length = Self.utf8SequenceLength(bytes, at: index)
                        if length == 0 { return index }
                        index &+= length
                        continue
                    }
                }
            }
            let wordsStart = index
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let flags = Self.specialByteFlags(word) | (word & 0x8080_8080_8080_8080)
                if flags != 0 {
                    // Straight to the first flagged byte (the lowest flag is always a true one).
                    index += flags.trailingZeroBitCount &>> 3
                    break
                }
                index += 8
            }
            inASCIIRun = index - wordsStart >= 8
            guard index < bytes.count else { return index }
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
                index += 1
            } else {
                let length = Self.utf8SequenceLength(bytes, at: index)
                if length == 0 { return index }
                index += length
            }
        }
    }

    /// The length of the well-formed UTF-8 sequence (2 to 4 bytes, Unicode Table 3-7: no overlong
    /// forms, no surrogates, nothing past U+10FFFF) whose lead byte is at `index`, or 0.
    package static func utf8SequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the second byte's range
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return 0 }
        return length
    }

    /// The error for the byte `skipPlainBytes` stopped at inside a string when it is neither a
    /// quote nor a backslash.
    package func stringError(at index: Int) -> JSONParseError {
        JSONParseError(offset: index, reason: bytes[index] < 0x20 ? "Unescaped control character in string" : "Invalid UTF-8 in string")
    }

    package mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("Invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("Invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// Checks the number grammar and returns the end of the token; `isInteger` says whether it had
    /// no fraction or exponent.
    package mutating func scanNumber() throws(JSONParseError) -> (start: Int, isInteger: Bool) {
        let start = position
        var isInteger = true
        if current == UInt8(ascii: "-") { position += 1 }
        guard !atEnd else { throw error("Invalid number") }
        if current == UInt8(ascii: "0") {
            position += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(current) {
            while !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(current) { position += 1 }
        } else {
            throw error("Invalid number")
        }
        if !atEnd, current == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(current) else {
                throw error("Invalid number: expected a digit after '.'")
            }
            while !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(current) { position += 1 }
        }
        if !atEnd, current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if !atEnd, current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(current) else {
                throw error("Invalid number: expected a digit in the exponent")
            }
            while !atEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(current) { position += 1 }
        }
        return (start, isInteger)
    }

    package mutating func readNumber() throws(JSONParseError) -> Double {
        let (start, isInteger) = try scanNumber()
        let length = position - start
        if isInteger, length <= 16 {
            var value: Int64 = 0
            var index = start
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            while index < position {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return Double(negative ? -value : value)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw JSONParseError(offset: start, reason: "Invalid number") }
        // `1e999` would be infinity, which JSON cannot write back (the writer makes it `null`)
        // and no reader of a number expects: out of range (RFC 8259 §6 lets a reader limit the
        // range). Tiny numbers (`1e-999`) become 0, as everywhere.
        guard value.isFinite else {
            throw JSONParseError(offset: start, reason: "Number out of range (beyond ±1.8e308)")
        }
        return value
    }

    // MARK: Reading containers piece by piece

    /// Reads the object at `position` member by member: `member` gets each key, decoded, with the
    /// reader at the start of the value, and must read or skip exactly that value. Leaves
    /// `position` after the closing `}`. Throws if the value there is not an object.
    ///
    /// Keys are passed as bytes (`JSONKey`), matched without making a `String` of each: reading a
    /// request member by member otherwise spends more on its keys than on its values.
    package mutating func readMembers(_ member: (JSONKey, inout JSONReader) throws(JSONParseError) -> Void) throws(JSONParseError) {
        guard !atEnd, current == UInt8(ascii: "{") else { throw unexpected("'{'") }
        try enter()
        defer { depth -= 1 }
        position += 1
        if closesEmpty(UInt8(ascii: "}")) { return }
        while true {
            skipWhitespace()
            guard !atEnd, current == UInt8(ascii: "\"") else { throw unexpected("a string key") }
            let start = position + 1
            let end = skipPlainBytes(from: start)
            if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
                // No escapes (the usual case): the input's own bytes.
                position = end + 1
                try readMember(JSONKey(utf8: UnsafeRawBufferPointer(rebasing: bytes[start..<end])), member)
            } else {
                // Escapes, decoded into a buffer of the escaped length (or an error, reported as
                // for any string).
                var probe = self
                probe.checksSurrogates = true  // (so errors come in the order decoding finds them)
                try probe.skipString()
                let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: probe.position - 1 - start + 16)
                defer { buffer.deallocate() }
                let count = try decodeEscapedString(from: start, into: buffer)
                try readMember(JSONKey(utf8: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count]))), member)
            }
            guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { return }
        }
    }

    /// The rest of a member once its key is read: the `:` and the value, which `member` reads.
    private mutating func readMember(
        _ key: JSONKey, _ member: (JSONKey, inout JSONReader) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':'")
        skipWhitespace()
        try member(key, &self)
    }

    /// Reads the array at `position` element by element: `element` starts at each value and must
    /// read or skip exactly that value. Leaves `position` after the closing `]`. Throws if the
    /// value there is not an array.
    package mutating func readElements(_ element: (inout JSONReader) throws(JSONParseError) -> Void) throws(JSONParseError) {
        guard !atEnd, current == UInt8(ascii: "[") else { throw unexpected("'['") }
        try enter()
        defer { depth -= 1 }
        position += 1
        if closesEmpty(UInt8(ascii: "]")) { return }
        while true {
            skipWhitespace()
            try element(&self)
            guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { return }
        }
    }

    // MARK: Skipping

    /// Checks one value without building it and leaves `position` after it.
    package mutating func skipValue() throws(JSONParseError) {
        guard !atEnd else { throw unexpected("a value") }
        switch current {
        case UInt8(ascii: "{"):
            try enter()
            defer { depth -= 1 }
            position += 1
            if closesEmpty(UInt8(ascii: "}")) { return }
            while true {
                skipWhitespace()
                guard !atEnd, current == UInt8(ascii: "\"") else { throw unexpected("a string key") }
                try skipString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':'")
                skipWhitespace()
                try skipValue()
                guard try continuesAfterElement(closing: UInt8(ascii: "}")) else { return }
            }
        case UInt8(ascii: "["):
            try enter()
            defer { depth -= 1 }
            position += 1
            if closesEmpty(UInt8(ascii: "]")) { return }
            while true {
                skipWhitespace()
                try skipValue()
                guard try continuesAfterElement(closing: UInt8(ascii: "]")) else { return }
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"): try readLiteral("true")
        case UInt8(ascii: "f"): try readLiteral("false")
        case UInt8(ascii: "n"): try readLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let (start, isInteger) = try scanNumber()
            // (Short integers are always in range; the rest is checked as `readNumber` does.)
            if checksSurrogates, !isInteger || position - start > 16 {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                guard let value = Double(text), value.isFinite else {
                    throw JSONParseError(offset: start, reason: "Number out of range (beyond ±1.8e308)")
                }
            }
        default:
            throw unexpected("a value")
        }
    }

    /// Checks a string token (starting at its quote) without decoding it.
    package mutating func skipString() throws(JSONParseError) {
        position += 1
        while true {
            // Plain text 16 bytes at a time, then byte by byte where that stopped at what is not
            // well-formed UTF-8 or near the end; then the special byte that stopped the scan.
            position = Self.scanPlainBlocks(bytes, from: position)
            if position < bytes.count, bytes[position] >= 0x80 || bytes.count &- position < 16 {
                position = skipPlainBytes(from: position)
            }
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte != UInt8(ascii: "\\") { throw stringError(at: position) }
            position += 1
            guard position < bytes.count else { break }
            switch bytes[position] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                position += 1
            case UInt8(ascii: "u"):
                position += 1
                let code = try readHex4()
                if checksSurrogates { _ = try pairingSurrogates(code) }
            default:
                throw error("Invalid escape character in string")
            }
        }
        throw error("Unterminated string")
    }

    /// The offset of the first block of 16 bytes, at or after `index`, that holds a `"`, a `\\`, a
    /// byte below 0x20 or (when `stoppingAtNonASCII`) one of 0x80 or above; or of the first offset
    /// with fewer than 16 bytes left. Callers look into that block with `specialByteFlags`; with
    /// `toTheByte`, the offset is that of the block's first such byte instead.
    ///
    /// Strings are most of JSON text, and most of their bytes are plain: 16 at a time in vector
    /// registers (SSE2, NEON) take about half the instructions of 8 at a time in a word.
    @inline(__always)
    package static func skipPlainBlocks(
        _ bytes: UnsafeRawBufferPointer, from index: Int, stoppingAtNonASCII: Bool, toTheByte: Bool = false
    ) -> Int {
        guard let base = bytes.baseAddress else { return index }
        let quote = SIMD16<UInt8>(repeating: 0x22), backslash = SIMD16<UInt8>(repeating: 0x5C)
        let space = SIMD16<UInt8>(repeating: 0x20), high = SIMD16<UInt8>(repeating: 0x80)
        var index = index
        while index &+ 16 <= bytes.count {
            let block = (base + index).loadUnaligned(as: SIMD16<UInt8>.self)
            var special = (block .== quote) .| (block .== backslash) .| (block .< space)
            if stoppingAtNonASCII { special = special .| (block .>= high) }
            // Any lane set: one 128-bit OR, not a reduction across the lanes (which SSE2 does
            // slowly). A mask of 16 one-byte lanes is 16 bytes, each 0 or all ones.
            let lanes = unsafeBitCast(special, to: SIMD2<UInt64>.self)
            if lanes[0] | lanes[1] != 0 {
                if toTheByte { index &+= Self.firstSetLane(lanes) }
                break
            }
            index &+= 16
        }
        return index
    }

    /// The index of the first set lane of a mask of 16 one-byte lanes (each 0 or all ones), seen
    /// as two little-endian words; at least one lane is set.
    @inline(__always)
    package static func firstSetLane(_ lanes: SIMD2<UInt64>) -> Int {
        lanes[0] != 0 ? lanes[0].trailingZeroBitCount &>> 3 : 8 &+ lanes[1].trailingZeroBitCount &>> 3
    }

    /// Whether any of the eight bytes is `"`, `\\` or below 0x20 (SWAR: a byte is zero in
    /// `x ^ pattern` exactly where it equals the pattern's byte).
    @inline(__always)
    package static func hasSpecialByte(_ word: UInt64) -> Bool {
        specialByteFlags(word) != 0
    }

    /// The high bit of each byte of `word` that may be `"`, `\\` or below 0x20: the lowest one
    /// set marks the first such byte exactly (a borrow only carries into higher bytes, which may
    /// be flagged wrongly).
    @inline(__always)
    package static func specialByteFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote & highs
        let hasBackslash = (backslash &- ones) & ~backslash & highs
        let hasControl = (word &- ones &* 0x20) & ~word & highs
        return hasQuote | hasBackslash | hasControl
    }
}

extension JSONValue {
    /// Parses UTF-8 JSON text.
    public init(parsing bytes: [UInt8]) throws(JSONParseError) {
        self = try JSONReader.parse(bytes)
    }

    /// Parses UTF-8 JSON text in a buffer.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        self = try JSONReader.parse(bytes)
    }

    /// Parses JSON text.
    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// An object key as `JSONReader.readMembers` passes it: the key's decoded UTF-8 bytes, valid
/// only during the call. Match it against literals in a `switch` (`case "id":`) or with `==`.
package struct JSONKey {
    /// The decoded key, checked to be UTF-8.
    package let utf8: UnsafeRawBufferPointer

    /// The key as a `String`.
    package var string: String { JSONReader.string(checkedUTF8: utf8) }

    /// Whether the key is exactly `literal` (byte for byte: the keys a reader looks for are ASCII,
    /// and no other UTF-8 text is canonically equivalent to those).
    package static func == (key: JSONKey, literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard key.utf8.count == count else { return false }
        return count == 0 || memcmp(key.utf8.baseAddress!, literal.utf8Start, count) == 0
    }

    /// Whether the key is not exactly `literal`.
    package static func != (key: JSONKey, literal: StaticString) -> Bool { !(key == literal) }

    /// Lets a `switch` over a key match string literals.
    package static func ~= (literal: StaticString, key: JSONKey) -> Bool { key == literal }
}
