import ContextProtocol
import Testing

/// The parser stays linear on objects with many members (found while fuzzing: member insertion was
/// a linear scan, so one 16 MiB object of tiny members took quadratic time).
@Suite("JSON objects at scale")
struct JSONObjectScaleTests {
    @Test("an object with 200,000 members parses quickly, and a repeated key keeps its last value")
    func manyMembers() throws {
        var text = "{"
        for index in 0..<200_000 { text += "\"k\(index)\":\(index)," }
        text += "\"k5\":\"last\",\"k199999\":true}"
        let clock = ContinuousClock()
        var value: JSONValue = .null
        let elapsed = try clock.measure { value = try JSONValue(parsing: text) }
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        let object = try #require(value.objectValue)
        #expect(object.count == 200_000)
        #expect(object["k5"] == "last")
        #expect(object["k199999"] == true)
        #expect(object.keys.first == "k0")
        #expect(object["k77"] == 77)
    }

    @Test("small objects keep first-position order for repeated keys")
    func smallRepeated() throws {
        let value = try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
    }
}
