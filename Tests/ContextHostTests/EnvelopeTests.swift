@testable import ContextHost
import Testing

@Suite("Envelope scanning")
struct EnvelopeTests {
    private func scan(_ text: String) -> (Envelope, String?, [UInt8]) {
        let bytes = Array(text.utf8)
        let (envelope, error) = bytes.withUnsafeBytes { Envelope.scan($0) }
        return (envelope, error?.description, bytes)
    }

    @Test("members are found without decoding params")
    func members() {
        let (envelope, error, bytes) = scan(#"{"params":{"item":{"x":[1,2,{"y":"\"}"}]}},"id":"abc","method":"items/preview","jsonrpc":"2.0"}"#)
        #expect(error == nil)
        #expect(envelope.jsonrpc == "2.0")
        #expect(envelope.method == "items/preview")
        #expect(envelope.id.map { String(decoding: bytes[$0], as: UTF8.self) } == "\"abc\"")
        #expect(envelope.params.map { String(decoding: bytes[$0], as: UTF8.self) } == #"{"item":{"x":[1,2,{"y":"\"}"}]}}"#)
    }

    @Test("the id survives a later syntax error")
    func idBeforeError() {
        let (envelope, error, bytes) = scan(#"{"jsonrpc":"2.0","id":42,"method":"ping","params":{"a":tru}}"#)
        #expect(error != nil)
        #expect(envelope.id.map { String(decoding: bytes[$0], as: UTF8.self) } == "42")
    }

    @Test("ids of the wrong type and non-string methods are flagged")
    func wrongTypes() {
        #expect(scan(#"{"id":[1],"method":"x"}"#).0.idIsInvalid)
        #expect(scan(#"{"id":true,"method":"x"}"#).0.idIsInvalid)
        #expect(scan(#"{"id":null,"method":3}"#).0.methodIsInvalid)
        #expect(!scan(#"{"id":null,"method":"x"}"#).0.idIsInvalid)
    }

    @Test("arrays and trailing data")
    func nonObjects() {
        let (batch, batchError, _) = scan(#"[{"id":1}]"#)
        #expect(!batch.isObject)
        #expect(batchError == nil)
        #expect(scan(#"{"id":1} x"#).1 == "Unexpected data after the JSON value at byte 9")
    }

    @Test("RawObject finds nested members")
    func rawObject() throws {
        let bytes = Array(#"{"item":{"providerId":"com.x","content":{"providerId":"inner"}},"representation":"text"}"#.utf8)
        try bytes.withUnsafeBytes { buffer in
            let item = try #require(try RawObject.member("item", of: buffer, in: 0..<buffer.count))
            let provider = try #require(try RawObject.member("providerId", of: buffer, in: item))
            #expect(RawObject.string(buffer, in: provider) == "com.x")
        }
    }
}
