@testable import ContextProviderKit
import Testing

/// The word-at-a-time string scans (JSONReader, JSONWriter) and the Base64 encoder: each special
/// byte at every offset around the eight-byte boundaries, against the plain definitions.
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
            for length in [1, 7, 8, 9, 15, 16, 17, 40] {
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

    @Test("an unterminated long string is an error, not a read past the end")
    func unterminated() {
        for length in 0..<24 {
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
