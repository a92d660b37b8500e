import Testing

@testable import ContextWire
import ContextProtocol

/// The dependency-free JSON reader and writer.
@Suite("JSON")
struct JSONTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSONValue { try JSONValue(parsing: text) }

    private func parseError(_ text: String) -> JSONParseError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesLiteralsAndStructures() throws {
        #expect(try parse(" null ") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse(#"{"a":[1,{"b":null}],"c":"d"}"#) == ["a": [1, ["b": nil]], "c": "d"])
        #expect(try parse("[]") == .array([]))
        #expect(try parse("{}") == .object(JSONObject()))
        #expect(try parse(" \t\r\n[ 1 , 2 ]\n") == [1, 2])
    }

    @Test func keepsObjectOrderAndLastDuplicate() throws {
        let value = try parse(#"{"z":1,"a":2,"z":3}"#)
        #expect(value.objectValue?.keys == ["z", "a"])
        #expect(value["z"] == 3)
        #expect(value.jsonString == #"{"z":3,"a":2}"#)
    }

    @Test func decodesEscapes() throws {
        #expect(try parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#) == .string("a\"b\\c/d\u{8}e\u{C}f\ng\rh\ti"))
        #expect(try parse(#""\u0041\u00e9\u4e2d""#) == .string("Aé中"))
        #expect(try parse(#""x\u0000y""#) == .string("x\u{0}y"))
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\uD834\uDD1E""#) == .string("𝄞"))
        #expect(try parse("\"😀 raw\"") == .string("😀 raw"))
        #expect(parseError(#""\ud83d""#)?.reason == "Unpaired UTF-16 surrogate")
        #expect(parseError(#""\ude00""#)?.reason == "Unpaired UTF-16 surrogate")
        #expect(parseError(#""\ud83d\u0041""#)?.reason == "Invalid UTF-16 surrogate pair")
    }

    @Test func parsesNumbers() throws {
        #expect(try parse("0") == .number(0))
        #expect(try parse("-0").numberValue == 0)
        #expect(try parse("42").intValue == 42)
        #expect(try parse("-17") == .number(-17))
        #expect(try parse("1.5") == .number(1.5))
        #expect(try parse("1e3") == .number(1000))
        #expect(try parse("1E+3") == .number(1000))
        #expect(try parse("2.5e-3") == .number(0.0025))
        #expect(try parse("9007199254740993").numberValue == 9_007_199_254_740_992)
        #expect(try parse("12345678901234567890").numberValue == 1.2345678901234567e19)
        #expect(try parse("1.7976931348623157e308").numberValue == .greatestFiniteMagnitude)
        #expect(try parse("1.5").intValue == nil)
    }

    @Test func rejectsInvalidNumbers() {
        #expect(parseError("01")?.offset == 1)
        #expect(parseError("-")?.reason == "Invalid number")
        #expect(parseError("1.")?.reason == "Invalid number: expected a digit after '.'")
        #expect(parseError("1e")?.reason == "Invalid number: expected a digit in the exponent")
        #expect(parseError(".5") != nil)
        #expect(parseError("+1") != nil)
        #expect(parseError("0x10") != nil)
        #expect(parseError("NaN") != nil)
    }

    @Test func reportsErrorOffsets() {
        #expect(parseError("[1,]")?.offset == 3)
        #expect(parseError(#"{"a":1,}"#)?.offset == 7)
        #expect(parseError(#"{"a" 1}"#)?.offset == 5)
        #expect(parseError("[1 2]")?.offset == 3)
        #expect(parseError("[1] x")?.reason == "Unexpected data after the JSON value")
        #expect(parseError("[1] x")?.offset == 4)
        #expect(parseError("")?.reason == "Unexpected end of input; expected a value")
        #expect(parseError("tru")?.reason == "Invalid literal; expected 'true'")
        #expect(parseError("nul l") != nil)
        #expect(parseError("{1:2}")?.reason == "Unexpected '1'; expected a string key")
    }

    @Test func rejectsBadStrings() {
        #expect(parseError("\"abc")?.reason == "Unterminated string")
        #expect(parseError("\"a\u{1}b\"")?.reason == "Unescaped control character in string")
        #expect(parseError("\"a\nb\"")?.reason == "Unescaped control character in string")
        #expect(parseError(#""\x""#)?.reason == "Invalid escape character in string")
        #expect(parseError(#""\u12G4""#)?.reason == #"Invalid hex digit in \u escape"#)
        #expect(parseError(#""\u12""#) != nil)
        #expect(parseError(#""abc\"#) != nil)
    }

    /// `readMembers` passes each key's decoded bytes: plain keys as they are in the text, escaped
    /// ones decoded, and a bad key fails exactly as it does when the object is parsed.
    @Test func readsMembersWithKeysAsBytes() throws {
        func keys(_ text: String) throws -> [String] {
            let bytes = Array(text.utf8)
            return try bytes.withUnsafeBytes { buffer in
                var reader = JSONReader(buffer)
                var keys: [String] = []
                try reader.readMembers { key, reader throws(JSONParseError) in
                    keys.append(key.string)
                    switch key {
                    case "id": #expect(key.utf8.elementsEqual("id".utf8))
                    case "": #expect(key.utf8.isEmpty)
                    default: #expect(key != "id" && !key.utf8.isEmpty)
                    }
                    try reader.skipValue()
                }
                #expect(reader.position == buffer.count)
                return keys
            }
        }
        #expect(try keys(#"{"id":1,"":2,"caf\u00e9":3,"\u0069d":4, "a\"b" : [5],"ix":6,"di":7}"#) == ["id", "", "café", "id", #"a"b"#, "ix", "di"])
        #expect(try keys("{}") == [])
        for bad in [#"{"a\x":1}"#, #"{"a"#, #"{"\ud800":1}"#, #"{"\ud800\x":1}"#, #"{"\ud800"#, "{\"a\u{1}\":1}", #"{"a":1,}"#, #"{"a" 1}"#] {
            var members: JSONParseError?
            do { _ = try keys(bad) } catch { members = error as? JSONParseError }
            #expect(members != nil && members == parseError(bad), "\(bad)")
        }
    }

    /// JSON text is UTF-8 (RFC 8259 §8.1): ill-formed sequences in strings are refused where they
    /// are, by every way of reading (parse, skip, the escape path), instead of being passed on or
    /// silently replaced.
    @Test(
        "ill-formed UTF-8 in a string is refused at its first byte",
        arguments: [
            [0x80], [0xBF], [0xC0, 0xAF], [0xC1, 0xBF], [0xC2], [0xC2, 0x41], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xE2, 0x82], [0xE2, 0x28, 0xA1], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xF0, 0x9F, 0x98],
        ] as [[UInt8]])
    func refusesIllFormedUTF8(sequence: [UInt8]) {
        // After plain text (past a whole eight-byte word), after an escape, and after a multi-byte
        // character.
        for prefix in [Array(#"["abcdefghijk"#.utf8), Array(#"["ab\ncdefghi"#.utf8), Array(#"{"k":"é"#.utf8)] {
            let text = prefix + sequence + Array(#"xyz"]"#.utf8)
            let offset = prefix.count
            var parsed: JSONParseError?
            do { _ = try JSONReader.parse(text) } catch { parsed = error }
            #expect(parsed == JSONParseError(offset: offset, reason: "Invalid UTF-8 in string"), "\(sequence)")
            var skipped: JSONParseError?
            text.withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                do throws(JSONParseError) { try reader.skipValue() } catch { skipped = error }
            }
            #expect(skipped == parsed)
        }
        // As a key, too.
        let key = Array(#"{""#.utf8) + sequence + Array(#"":1}"#.utf8)
        #expect(throws: JSONParseError(offset: 2, reason: "Invalid UTF-8 in string")) { try JSONReader.parse(key) }
    }

    @Test("a multi-byte sequence cut off by the end of the text is ill-formed, never read past the end")
    func truncatedUTF8() {
        for cut in [[0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98]] as [[UInt8]] {
            for prefix in ["\"ab", "\"abcdefghij", "\"a\\n"] {
                let text = Array(prefix.utf8) + cut
                #expect(throws: JSONParseError(offset: prefix.utf8.count, reason: "Invalid UTF-8 in string")) {
                    try JSONReader.parse(text)
                }
                // A reader over the start of a longer buffer stops at its own end.
                let longer = text + Array("\u{20AC}\"".utf8)
                longer.withUnsafeBytes { buffer in
                    var reader = JSONReader(UnsafeRawBufferPointer(rebasing: buffer[..<text.count]))
                    #expect(throws: JSONParseError(offset: prefix.utf8.count, reason: "Invalid UTF-8 in string")) {
                        try reader.skipValue()
                    }
                }
            }
        }
    }

    @Test("well-formed UTF-8 of every length, anywhere in a string, reads as the same text")
    func readsWellFormedUTF8() throws {
        let pieces = [
            "é", "€", "😀", "\u{10FFFF}", "\u{E000}", "\u{D7FF}", "ü\u{0301}",
            "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "\u{7F}",  // the edges of each length
        ]
        for piece in pieces {
            for padding in 0..<10 {
                let plain = String(repeating: "a", count: padding) + piece + String(repeating: "b", count: 9 - padding)
                #expect(try parse("\"" + plain + "\"") == .string(plain))
                #expect(try parse("[\"\\t" + plain + "\"]") == [.string("\t" + plain)])
                #expect(try parse("{\"" + plain + "\":1}") == .object([plain: 1]))
            }
        }
    }

    @Test func limitsDepth() throws {
        let ok = String(repeating: "[", count: JSONReader.maximumDepth) + String(repeating: "]", count: JSONReader.maximumDepth)
        #expect(throws: Never.self) { try parse(ok) }
        let deep = String(repeating: "[", count: JSONReader.maximumDepth + 1) + String(repeating: "]", count: JSONReader.maximumDepth + 1)
        let error = parseError(deep)
        #expect(error?.reason == "Nesting deeper than 256 levels")
        #expect(error?.offset == JSONReader.maximumDepth)
    }

    @Test func writesEscapes() {
        #expect(JSONValue.string("a\"b\\c/d").jsonString == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\n\r\t\u{8}\u{C}").jsonString == #""\n\r\t\b\f""#)
        #expect(JSONValue.string("\u{0}\u{1F}").jsonString == #""\u0000\u001f""#)
        #expect(JSONValue.string("é😀").jsonString == "\"é😀\"")
    }

    @Test("escapes anywhere relative to the 16- and 8-byte scan blocks, several per string, match a byte-by-byte writer")
    func writesEscapesAtEveryOffset() throws {
        // The reference: every byte looked at on its own.
        func reference(_ text: String) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for byte in text.utf8 {
                switch byte {
                case 0x22: out += Array(#"\""#.utf8)
                case 0x5C: out += Array(#"\\"#.utf8)
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case 0x08: out += Array(#"\b"#.utf8)
                case 0x0C: out += Array(#"\f"#.utf8)
                case 0..<0x20: out += Array(#"\u00"#.utf8) + Array((byte < 16 ? "0" : "").utf8) + Array(String(byte, radix: 16).utf8)
                default: out.append(byte)
                }
            }
            return out + [0x22]
        }
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}"]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 70] {
            let plain = String((0..<length).map { index in index % 5 == 4 ? "é" : Character(UnicodeScalar(UInt8(97 + index % 26))) })
            for offset in 0...plain.count {
                for special in specials {
                    var text = plain
                    text.insert(special, at: text.index(text.startIndex, offsetBy: offset))
                    text.append(special)  // a second escape after a plain run
                    var written: [UInt8] = []
                    JSONWriter.appendString(text, to: &written)
                    #expect(written == reference(text), "\(text.debugDescription)")
                    #expect(try JSONReader.parse(written) == .string(text))
                }
            }
        }
    }

    @Test func writesNumbers() {
        #expect(JSONValue.number(1).jsonString == "1")
        #expect(JSONValue.number(-0.0).jsonString == "0")
        #expect(JSONValue.number(1.5).jsonString == "1.5")
        #expect(JSONValue.number(-123456789).jsonString == "-123456789")
        #expect(JSONValue.number(1e20).jsonString == "1e+20")
        #expect(JSONValue.number(.infinity).jsonString == "null")
        #expect(JSONValue.number(.nan).jsonString == "null")
    }

    @Test("integers are written as Swift prints them, from Int64.min to Int64.max")
    func writesIntegers() {
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, -1, -9, -10, 1 << 53, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power]
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<1000 { values.append(Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0..<63, using: &random)) }
        for value in values {
            var output: [UInt8] = [UInt8(ascii: "[")]
            JSONWriter.appendInteger(value, to: &output)
            #expect(String(decoding: output, as: UTF8.self) == "[\(value)", "\(value)")
        }
    }

    @Test func roundTripsThroughBytes() throws {
        let value: JSONValue = [
            "s": "line\nnext \"q\" 😀", "n": [0, -1, 2.25, 1e-7, 9_007_199_254_740_991], "b": [true, false, nil],
            "o": ["nested": ["deeper": []]],
        ]
        #expect(try JSONValue(parsing: value.jsonBytes) == value)
        #expect(try JSONValue(parsing: value.jsonString) == value)
    }

    @Test func accessors() throws {
        let value = try parse(#"{"s":"x","n":3,"b":true,"a":[1],"o":{}}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.intValue == 3)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue?.isEmpty == true)
        #expect(value["missing"] == nil)
        #expect(value["s"]?.typeName == "string")
    }
}
