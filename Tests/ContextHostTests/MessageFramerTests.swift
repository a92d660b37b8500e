@testable import ContextHost
import Testing

/// The framer is a pure state machine: the same events whatever the chunking.
@Suite("MessageFramer")
struct MessageFramerTests {
    /// Feeds `input` in chunks of `size` bytes and collects the events.
    private func events(_ input: [UInt8], chunk size: Int, limit: Int = 1024, finish: Bool = true) -> [FramedEvent] {
        var framer = MessageFramer(maximumMessageBytes: limit)
        var events: [FramedEvent] = []
        var offset = 0
        while offset < input.count {
            let end = min(offset + size, input.count)
            input[offset..<end].withUnsafeBytes { events += framer.consume($0) }
            offset = end
        }
        if finish { events += framer.finish() }
        return events
    }

    private func message(_ text: String) -> FramedEvent { .message(Array(text.utf8)) }

    @Test("NDJSON: every chunk size yields the same messages", arguments: [1, 2, 3, 7, 64, 4096])
    func newlineDelimited(chunk: Int) {
        let input = Array("{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}".utf8)
        #expect(events(input, chunk: chunk) == [message("{\"a\":1}"), message("{\"b\":2}"), message("{\"c\":3}")])
    }

    @Test("NDJSON: an oversized line is reported once and the next line still arrives", arguments: [1, 5, 100, 5000])
    func oversizedLine(chunk: Int) {
        let long = "{\"pad\":\"" + String(repeating: "x", count: 2000) + "\"}"
        let input = Array((long + "\n{\"ok\":true}\n").utf8)
        #expect(events(input, chunk: chunk) == [.oversized(length: long.utf8.count), message("{\"ok\":true}")])
    }

    @Test("NDJSON: a final line without a newline is delivered at end of input")
    func unterminatedLastLine() {
        #expect(events(Array("{\"a\":1}".utf8), chunk: 3, finish: false) == [])
        #expect(events(Array("{\"a\":1}".utf8), chunk: 3) == [message("{\"a\":1}")])
    }

    @Test("Content-Length: every chunk size yields the same messages", arguments: [1, 2, 5, 13, 4096])
    func contentLength(chunk: Int) {
        let bodies = ["{\"a\":1}", "{\"text\":\"line\\nbreak\"}", "{}"]
        var input: [UInt8] = []
        for body in bodies {
            input += Array("Content-Length: \(body.utf8.count)\r\nContent-Type: application/json\r\n\r\n".utf8)
            input += Array(body.utf8)
        }
        var framer = MessageFramer(maximumMessageBytes: 1024)
        var collected: [FramedEvent] = []
        var offset = 0
        while offset < input.count {
            let end = min(offset + chunk, input.count)
            input[offset..<end].withUnsafeBytes { collected += framer.consume($0) }
            offset = end
        }
        #expect(framer.framing == .contentLength)
        #expect(collected == bodies.map(message))
    }

    @Test("Content-Length: an oversized body is skipped and reported", arguments: [1, 7, 4096])
    func contentLengthOversized(chunk: Int) {
        let big = String(repeating: "y", count: 3000)
        let input = Array("Content-Length: 3000\r\n\r\n\(big)Content-Length: 2\r\n\r\n{}".utf8)
        #expect(events(input, chunk: chunk) == [.oversized(length: 3000), message("{}")])
    }

    @Test("Content-Length: bad headers are reported and the stream resynchronises")
    func badHeaders() {
        let input = Array("Content-Length: nope\r\n\r\nContent-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}".utf8)
        #expect(events(input, chunk: 4) == [
            .badHeader("Content-Length 'nope' is not a non-negative integer"),
            .badHeader("Header block has no Content-Length"),
            message("{}"),
        ])
    }

    @Test("framing is chosen from the first non-space byte")
    func detection() {
        var framer = MessageFramer()
        _ = Array("  \n".utf8).withUnsafeBytes { framer.consume($0) }
        #expect(framer.framing == nil)
        _ = Array("{}\n".utf8).withUnsafeBytes { framer.consume($0) }
        #expect(framer.framing == .newlineDelimited)
    }
}
