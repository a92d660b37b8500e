import Testing

@testable import ContextWeb

/// `FrameUnmasker`'s word-at-a-time unmasking against the definition (RFC 6455 §5.3: byte i
/// XOR key[i mod 4]); the listener's real client tests (ws_check.py) send every message masked.
@Suite("serve --listen: frame unmasking")
struct FrameUnmaskerTests {
    @Test("every length from 0 to 40 bytes, at every offset of a larger buffer, matches byte-by-byte unmasking")
    func matchesDefinition() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...40 {
            let key = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
            for offset in 0..<8 where offset <= count {
                let source = Array(payload[offset...])
                var target = [UInt8](repeating: 0, count: source.count + 3)
                source.withUnsafeBytes { bytes in
                    target.withUnsafeMutableBytes { FrameUnmasker.unmask(bytes, key: key, into: $0) }
                }
                let reference = source.enumerated().map { $0.element ^ key[$0.offset % 4] }
                #expect(Array(target[..<source.count]) == reference, "length \(source.count)")
                #expect(target[source.count...].allSatisfy { $0 == 0 }, "nothing written past the payload")
                if offset == 0 { #expect(reference == expected) }
            }
        }
    }

    @Test("unmasking twice gives the payload back")
    func involution() {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let payload = Array(#"{"jsonrpc":"2.0","id":1,"method":"items/preview","params":{"é":"ü"}}"#.utf8)
        var masked = [UInt8](repeating: 0, count: payload.count)
        var back = [UInt8](repeating: 0, count: payload.count)
        payload.withUnsafeBytes { source in masked.withUnsafeMutableBytes { FrameUnmasker.unmask(source, key: key, into: $0) } }
        masked.withUnsafeBytes { source in back.withUnsafeMutableBytes { FrameUnmasker.unmask(source, key: key, into: $0) } }
        #expect(masked != payload)
        #expect(back == payload)
    }
}
