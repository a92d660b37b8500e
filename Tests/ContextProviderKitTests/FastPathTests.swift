@testable import ContextProviderKit
import Testing

/// The block- and word-at-a-time string scans (JSONReader, JSONWriter) and the Base64 encoder:
/// each special byte at every offset around the 16- and eight-byte boundaries, against the plain
/// definitions.
@Suite("JSON and Base64 fast paths")
struct FastPathTests {
    static let specials: [(byte: UInt8, escaped: String)] = [
        (0x22, #"\""#), (0x5C, #"\\"#), (0x0A, #"\n"#), (0x09, #"\t"#), (0x01, #"\u0001"#), (0x1F, #"\u001f"#),
    ]

    @Test("hasSpecialByte is true exactly when a word holds a quote, a backslash or a control byte")
    func specialByteDetector() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes = (0..<8).map { _ in UInt8.random(in: 0x20...0xFF, using: &generator) }
            if Bool.random(using: &generator) {
                bytes[Int.random(in: 0..<8, using: &generator)] = UInt8.random(in: 0...0x5C, using: &generator)
            }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let expected = bytes.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
            #expect(JSONReader.hasSpecialByte(word) == expected, "\(bytes)")
        }
    }

    @Test("a special character anywhere in a long string is read, skipped and written correctly")
    func everyOffset() throws {
        for (byte, escaped) in Self.specials {
            for length in [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 47, 48, 49, 70] {
                for offset in 0..<length {
                    var text = Array(repeating: UInt8(ascii: "a"), count: length)
                    text[offset] = byte
                    let string = String(decoding: text, as: UTF8.self)
                    // Writing escapes it; reading the JSON gives the string back.
                    let json = JSONValue.string(string).jsonBytes
                    let expectedJSON = "\"" + String(repeating: "a", count: offset) + escaped
                        + String(repeating: "a", count: length - offset - 1) + "\""
                    #expect(String(decoding: json, as: UTF8.self) == expectedJSON)
                    #expect(try JSONValue(parsing: json) == .string(string))
                    // Skipping stops right after the closing quote.
                    let document = Array("[\(expectedJSON),1]".utf8)
                    #expect(try JSONValue(parsing: document) == [.string(string), 1])
                    // Raw (unescaped) control bytes are refused wherever they are.
                    if byte < 0x20 {
                        let raw = [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]
                        #expect(throws: JSONParseError.self) { try JSONValue(parsing: raw) }
                        let nested = Array("{\"k\":".utf8) + raw + Array("}".utf8)
                        #expect(throws: JSONParseError.self) { try JSONValue(parsing: nested) }
                    }
                }
            }
        }
    }

    /// SplitMix64: random cases that a failure message can name and a rerun repeats.
    typealias SeededGenerator = SplitMix64

    @Test("skipPlainBlocks stops at the block holding the first special byte, or at that byte, with or without non-ASCII bytes counted")
    func plainBlocks() {
        var generator = SeededGenerator(state: 0x5EED)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...80, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7F, using: &generator) }.map { $0 == 0x22 || $0 == 0x5C ? 0x41 : $0 }
            for _ in 0..<Int.random(in: 0...2, using: &generator) where length > 0 {
                bytes[Int.random(in: 0..<length, using: &generator)] = [0x00, 0x1F, 0x22, 0x5C, 0x7F, 0x80, 0xC3, 0xFF].randomElement(using: &generator)!
            }
            let start = Int.random(in: 0...length, using: &generator)
            for stoppingAtNonASCII in [false, true] {
                func isSpecial(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 || (stoppingAtNonASCII && byte >= 0x80) }
                // The reference: whole blocks of 16 plain bytes from `start`, and no more.
                var expected = start
                while expected + 16 <= length, !bytes[expected..<expected + 16].contains(where: isSpecial) { expected += 16 }
                let found = bytes.withUnsafeBytes { JSONReader.skipPlainBlocks($0, from: start, stoppingAtNonASCII: stoppingAtNonASCII) }
                #expect(found == expected, "\(bytes) from \(start), non-ASCII stops: \(stoppingAtNonASCII)")
                // To the byte: the first special byte of that block, if it is a whole one.
                if expected + 16 <= length { expected = bytes[expected...].firstIndex(where: isSpecial)! }
                let exact = bytes.withUnsafeBytes {
                    JSONReader.skipPlainBlocks($0, from: start, stoppingAtNonASCII: stoppingAtNonASCII, toTheByte: true)
                }
                #expect(exact == expected, "\(bytes) from \(start) to the byte, non-ASCII stops: \(stoppingAtNonASCII)")
            }
        }
    }

    @Test("non-ASCII text at every offset of a long string is read, and bytes that are not UTF-8 are refused")
    func nonASCIIEveryOffset() throws {
        for length in [2, 15, 16, 17, 31, 32, 33, 48] {
            for offset in 0..<(length - 1) {
                var text = Array(repeating: UInt8(ascii: "a"), count: length)
                text[offset] = 0xC3; text[offset + 1] = 0xA9  // é
                let quoted = [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]
                #expect(try JSONValue(parsing: quoted) == .string(String(decoding: text, as: UTF8.self)))
                // Written back: non-ASCII text is copied as it is, and a special character in the
                // same or the next block is still escaped.
                for (special, escaped) in Self.specials {
                    var written = text
                    written[min(offset + 2 + offset % 17, length - 1)] = special
                    guard written[offset] == 0xC3, written[offset + 1] == 0xA9 else { continue }
                    let string = String(decoding: written, as: UTF8.self)
                    let json = JSONValue.string(string).jsonBytes
                    #expect(String(decoding: json, as: UTF8.self).contains(escaped))
                    #expect(try JSONValue(parsing: json) == .string(string))
                }
                text[offset + 1] = 0x41  // a lead byte without its continuation
                #expect(throws: JSONParseError.self) { try JSONValue(parsing: [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]) }
            }
        }
    }

    @Test("text mostly not ASCII (Cyrillic, CJK, emoji) is read back as written, whatever its length")
    func mostlyNonASCII() throws {
        for sample in ["Привет, мир", "日本語のテキスト", "👋🏽🎉", "mixé ASCII and 中文 text"] {
            for repeats in [1, 3, 9] {
                let string = String(repeating: sample + "\n", count: repeats)
                let json = JSONValue.string(string).jsonBytes
                #expect(try JSONValue(parsing: json) == .string(string))
                #expect(try JSONValue(parsing: Array("[".utf8) + json + Array(",1]".utf8)) == [.string(string), 1])
            }
        }
    }

    @Test("strings with escapes around the length that is measured before decoding, and as keys, decode exactly")
    func longEscapedStrings() throws {
        let limit = JSONReader.unmeasuredDecodingLimit
        var generator = SeededGenerator(state: 0xE5C)
        for length in [limit - 40, limit - 17, limit - 1, limit, limit + 1, limit + 15, limit + 16, limit + 33] {
            // Plain text with an escape every so often, and one near each end.
            var text = (0..<length).map { _ in UInt8.random(in: 0x61...0x7A, using: &generator) }
            for index in [0, 1, length / 3, length / 2, length - 18, length - 2, length - 1] { text[index] = 0x0A }
            let string = String(decoding: text, as: UTF8.self)
            let json = JSONValue.string(string).jsonBytes
            #expect(try JSONValue(parsing: json) == .string(string), "length \(length)")
            let object = Array("{".utf8) + json + Array(":1}".utf8)
            #expect(try JSONValue(parsing: object) == .object([string: 1]), "key of length \(length)")
        }
    }

    @Test("strings written with escapes of every kind, non-ASCII text and plain runs of any length decode exactly")
    func escapedStringsSeeded() throws {
        var generator = SeededGenerator(state: 0xDEC0DE)
        let pieces: [String] = ["a", "Z", " ", "~", "é", "中", "😀", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{7F}"]
        for _ in 0..<3_000 {
            var string = ""
            var json: [UInt8] = [UInt8(ascii: "\"")]
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                // A plain run of 0 to 40 bytes (so runs end anywhere in a 16-byte block), then a
                // character written as it is, as a short escape or as \u escapes.
                let run = String(repeating: "x", count: Int.random(in: 0...40, using: &generator))
                string += run
                json += Array(run.utf8)
                let piece = pieces.randomElement(using: &generator)!
                string += piece
                let scalar = piece.unicodeScalars.first!
                let short: [Character: String] = ["\"": #"\""#, "\\": #"\\"#, "/": #"\/"#, "\n": #"\n"#, "\t": #"\t"#]
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where scalar.value >= 0x20 && scalar != "\"" && scalar != "\\":
                    json += Array(piece.utf8)
                case 1 where short[Character(piece)] != nil:
                    json += Array(short[Character(piece)]!.utf8)
                default:
                    for unit in piece.utf16 { json += Array(("\\u" + String(unit, radix: 16).leftPadded(to: 4)).utf8) }
                }
            }
            json.append(UInt8(ascii: "\""))
            #expect(try JSONValue(parsing: json) == .string(string), "\(String(decoding: json, as: UTF8.self))")
            // Inside a document, with members after it, and as a key.
            let array = Array("[".utf8) + json + Array(",\"after\"]".utf8)
            #expect(try JSONValue(parsing: array) == [.string(string), "after"])
            let object = Array("{".utf8) + json + Array(":1,\"k\":2}".utf8)
            #expect(try JSONValue(parsing: object) == .object([string: 1, "k": 2]))
            // Skipped (as the host checks params it passes on): it ends right after the quote.
            #expect(try Self.skipped(array, from: 1).get() == 1 + json.count)
            // Bytes that are not UTF-8 (0xFF, a lone continuation byte, an overlong form, a lead
            // byte without its continuation, a surrogate, past U+10FFFF, a sequence cut short,
            // also at the string's end) anywhere are refused.
            let bad: [[UInt8]] = [
                [0xFF], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC3, 0x41], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80],
                [0xE2, 0x82, 0x41], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98],
            ]
            var broken = Array(json.dropLast())
            broken.insert(contentsOf: bad.randomElement(using: &generator)!, at: Int.random(in: 1...broken.count, using: &generator))
            broken += Array(String(repeating: "y", count: Int.random(in: 0...20, using: &generator)).utf8) + [UInt8(ascii: "\"")]
            if broken.count > 1, broken[broken.count - 2] != UInt8(ascii: "\\") {
                #expect(throws: JSONParseError.self, "\(broken)") { try JSONValue(parsing: broken) }
                #expect(throws: JSONParseError.self, "\(broken)") { try JSONValue(parsing: Array("[".utf8) + broken + Array(",1]".utf8)) }
                #expect(throws: JSONParseError.self, "\(broken)") { try Self.skipped(broken).get() }
            }
        }
    }

    /// Where `skipValue` leaves a reader that starts at `start`, or the error it throws.
    private static func skipped(_ bytes: [UInt8], from start: Int = 0) -> Result<Int, JSONParseError> {
        bytes.withUnsafeBytes { buffer -> Result<Int, JSONParseError> in
            var reader = JSONReader(buffer, position: start)
            do throws(JSONParseError) {
                try reader.skipValue()
                return .success(reader.position)
            } catch {
                return .failure(error)
            }
        }
    }

    @Test("an unterminated long string is an error, not a read past the end")
    func unterminated() {
        for length in 0..<40 {
            let bytes = Array("[\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: length)
            #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        }
    }

    @Test("Base64 encoding matches RFC 4648's test vectors and round-trips every length")
    func base64() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy",
            // Long enough for the six-bytes-at-a-time loop, with every remainder after it.
            "Many hands make light work.": "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsu",
            "Many hands make light work.!": "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsuIQ==",
            "Many hands make light work.!?": "TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsuIT8=",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.encode(plain.utf8) == encoded)  // a String's UTF-8 view (contiguous)
            #expect(Base64.encode(plain.utf8.reversed().reversed()) == encoded)  // not contiguous
        }
        var generator = SystemRandomNumberGenerator()
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64.encode(bytes)
            #expect(text.utf8.count == (length + 2) / 3 * 4)
            #expect(Base64.decode(text) == bytes)
            var appended = Array("data:,".utf8)
            Base64.append(bytes, to: &appended)
            #expect(appended == Array(("data:," + text).utf8))
            let uri = bytes.withUnsafeBytes { Base64.dataURI(mediaType: "image/png", $0) }
            #expect(uri == "data:image/png;base64," + text)
            // Into a buffer, in two parts: after a first part whose length is a multiple of 3, the
            // text of the rest continues the first part's unchanged.
            #expect(Base64.encodedCount(length) == text.utf8.count)
            let split = length / 3 * 3 / 2 / 3 * 3
            var output = [UInt8](repeating: 0, count: Base64.encodedCount(split) + Base64.encodedCount(length - split))
            output.withUnsafeMutableBufferPointer { output in
                let middle = Base64.encodedCount(split)
                bytes.withUnsafeBytes { bytes in
                    Base64.encode(UnsafeRawBufferPointer(rebasing: bytes[..<split]), into: UnsafeMutableBufferPointer(rebasing: output[..<middle]))
                    Base64.encode(UnsafeRawBufferPointer(rebasing: bytes[split...]), into: UnsafeMutableBufferPointer(rebasing: output[middle...]))
                }
            }
            #expect(output == Array(text.utf8), "split at \(split) of \(length)")
        }
        #expect(Array("<svg/>".utf8).withUnsafeBytes { Base64.dataURI(mediaType: "image/svg+xml", $0) } == "data:image/svg+xml;base64,PHN2Zy8+")
    }
}

@Suite("GregorianDays")
struct GregorianDaysTests {
    @Test("day numbers match counting day by day from 1600 to 2400, both ways; known weekdays")
    func countDays() {
        // Walk backwards and forwards from 1970-01-01, one day at a time.
        var mismatches: [String] = []
        func check(_ number: Int, _ year: Int, _ month: Int, _ day: Int) {
            if GregorianDays.days(year: year, month: month, day: day) != number || GregorianDays.date(days: number) != (year, month, day) {
                mismatches.append("\(number) ~ \(year)-\(month)-\(day)")
            }
        }
        var (year, month, day) = (1970, 1, 1)
        for number in 0...(430 * 366) {
            check(number, year, month, day)
            day += 1
            if day > GregorianDays.daysInMonth(year: year, month: month) {
                (month, day) = (month + 1, 1)
                if month > 12 { (year, month) = (year + 1, 1) }
            }
        }
        (year, month, day) = (1970, 1, 1)
        for number in stride(from: 0, through: -(370 * 366), by: -1) {
            check(number, year, month, day)
            day -= 1
            if day == 0 {
                (year, month) = month == 1 ? (year - 1, 12) : (year, month - 1)
                day = GregorianDays.daysInMonth(year: year, month: month)
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(year == 1599)  // the walk really went back to before 1600
        #expect(GregorianDays.isLeapYear(2000) && GregorianDays.isLeapYear(2024))
        #expect(!GregorianDays.isLeapYear(1900) && !GregorianDays.isLeapYear(2023))
        #expect(GregorianDays.weekday(days: 0) == 3)  // 1970-01-01, Thursday
        #expect(GregorianDays.weekday(days: GregorianDays.days(year: 2026, month: 11, day: 21)) == 5)  // Saturday
        #expect(GregorianDays.weekday(days: GregorianDays.days(year: 1969, month: 12, day: 29)) == 0)  // Monday
        #expect(GregorianDays.days(year: 2024, month: 1, day: 32) == GregorianDays.days(year: 2024, month: 2, day: 1))
    }
}

extension String {
    /// The string with zeros before it up to `length` characters.
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
