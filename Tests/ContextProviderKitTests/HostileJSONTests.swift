import Testing

@testable import ContextProviderKit

/// The SDK's JSON reader and ctxui decoding on hostile input (issue 24): bounded nesting, numbers
/// out of range, lone surrogates, truncated text, and what decodes encoding back.
@Suite("Hostile JSON")
struct HostileJSONTests {
    private func error(_ bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONReader.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    private func error(_ text: String) -> JSONParseError? { error(Array(text.utf8)) }

    @Test("nesting is bounded at 256 levels, also 100,000 levels deep (no stack overflow)")
    func deepNesting() throws {
        let ok = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(error(ok) == nil)
        let deeper = String(repeating: "[", count: 257) + String(repeating: "]", count: 257)
        #expect(error(deeper)?.reason == "Nesting deeper than 256 levels")
        let objects = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(error(objects)?.reason == "Nesting deeper than 256 levels")
        let unclosed = String(repeating: "[", count: 1_000_000)
        #expect(error(unclosed)?.offset == 256)
        // Skipping counts levels the same way.
        let bytes = Array(deeper.utf8)
        bytes.withUnsafeBytes { buffer in
            var reader = JSONReader(buffer)
            #expect(throws: JSONParseError.self) { try reader.skipValue() }
        }
    }

    @Test("numbers beyond ±1.8e308 are refused (infinity cannot be written back); tiny ones are 0")
    func numberRange() throws {
        for text in ["1e999", "-1e999", "1" + String(repeating: "0", count: 400), "123456789e301", "0.1e310"] {
            #expect(error(text)?.reason == "Number out of range (beyond ±1.8e308)", "\(text.prefix(20))")
        }
        #expect(try JSONReader.parse(Array("1e-999".utf8)) == 0)
        #expect(try JSONReader.parse(Array("1.7976931348623157e308".utf8)) == .number(.greatestFiniteMagnitude))
        #expect(try JSONReader.parse(Array("-1e16".utf8)).intValue == nil)
        // A huge number as an integer member is an error, not a trap.
        let value = try JSONReader.parse(Array(#"{"n":1e300}"#.utf8))
        #expect(throws: JSONDecodeError.self) { try JSONObjectReader(value).int("n") }
        // Strict skipping refuses what parsing refuses; plain skipping (the host's) passes it on.
        let bytes = Array(#"[1e999]"#.utf8)
        bytes.withUnsafeBytes { buffer in
            var strict = JSONReader(buffer)
            strict.checksSurrogates = true
            #expect(throws: JSONParseError.self) { try strict.skipValue() }
            var plain = JSONReader(buffer)
            #expect(throws: Never.self) { try plain.skipValue() }
        }
    }

    @Test("lone and reversed surrogate escapes are refused; a pair decodes")
    func surrogates() throws {
        #expect(error(#""\ud800""#)?.reason == "Unpaired UTF-16 surrogate")
        #expect(error(#""\udc00\ud800""#)?.reason == "Unpaired UTF-16 surrogate")
        #expect(error(#""\ud800\u0041""#)?.reason == "Invalid UTF-16 surrogate pair")
        #expect(error(#""\ud800\""#) != nil)
        #expect(try JSONReader.parse(Array(#""\ud83d\ude00""#.utf8)) == "😀")
        #expect(error([0x22, 0xED, 0xA0, 0x80, 0x22])?.reason == "Invalid UTF-8 in string")
    }

    @Test("every truncation of a valid document is refused with an offset inside it")
    func truncated() throws {
        let document = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\ud83d\ude00\n"],"b":{"c":{}}}"#.utf8)
        #expect(error(document) == nil)
        for length in 0..<document.count {
            let cut = Array(document[..<length])
            let found = try #require(error(cut), "accepted \(length) bytes")
            #expect(found.offset >= 0 && found.offset <= length)
        }
    }

    @Test("a request whose item cannot be read is answered with its own id")
    func parseErrorKeepsID() throws {
        let message = Array(#"{"jsonrpc":"2.0","id":7,"method":"item/preview","params":{"item":{"id":"x","content":1e999}}}"#.utf8)
        message.withUnsafeBytes { buffer in
            do throws(ProviderRequest.Failure) {
                _ = try ProviderRequest(scanning: buffer)
                Issue.record("accepted")
            } catch {
                guard case .parse(_, let id) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(id == 7)
            }
        }
    }

    @Test("hostile ctxui values decode or fail with a path, and what decodes encodes back")
    func ctxuiRoundTrips() throws {
        let documents = [
            #"{"ctxui":1,"icon":"i","title":"t","fallbackText":"f","accessory":{"kind":"sparkline","values":[1e308,-1e308,0]}}"#,
            #"{"ctxui":1,"title":"D","fallbackText":"F","blocks":[{"type":"map","center":{"latitude":90,"longitude":-180},"zoom":1e308,"markers":[{"latitude":1e300,"longitude":0}]}]}"#,
            #"{"ctxui":1,"stepId":"s","title":"t","fallbackText":"f","fields":[{"id":"a","kind":"text","label":"A","maxLength":9007199254740992,"minLength":0}]}"#,
            #"{"representation":"binary","contentType":"x","data":"AB=="}"#,
            #"{"ctxui":9007199254740993,"icon":"i","title":"t","fallbackText":"f"}"#,
            #"{"latitude":90.0000001,"longitude":0}"#,
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            bytes.withUnsafeBytes { SDKFuzzEntry.ctxui($0) }
            bytes.withUnsafeBytes { SDKFuzzEntry.json($0) }
        }
        let value = try JSONReader.parse(Array(documents[4].utf8))
        #expect(throws: JSONDecodeError.self) { try ContextChip(json: value) }
        let point = try JSONReader.parse(Array(documents[5].utf8))
        #expect(throws: JSONDecodeError.self) { try Coordinate(json: point) }
    }
}
