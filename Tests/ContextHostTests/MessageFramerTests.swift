@testable import ContextHost
import Testing

/// The framer is a pure state machine: the same events whatever the chunking.
@Suite("MessageFramer")
struct MessageFramerTests {
    /// Feeds `input` in chunks of `size` bytes and collects the events.
    private func events(_ input: [UInt8], chunk size: Int, limit: Int = 1024, finish: Bool = true) -> [FramedEvent] {
        var framer = MessageFramer(maximumMessageBytes: limit)
        var events = feed(&framer, input, chunk: size)
        if finish { events += framer.finish() }
        return events
    }

    /// Feeds `input` to `framer` in chunks of `size` bytes and collects the events (without
    /// finishing).
    private func feed(_ framer: inout MessageFramer, _ input: [UInt8], chunk size: Int) -> [FramedEvent] {
        var events: [FramedEvent] = []
        var offset = 0
        while offset < input.count {
            let end = min(offset + size, input.count)
            input[offset..<end].withUnsafeBytes { events += framer.consume($0) }
            offset = end
        }
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
        let collected = feed(&framer, input, chunk: chunk)
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

    /// The server's way of feeding the framer: the callback form, told the framing before the
    /// first event, each message handled (and usually dropped) before the next is framed.
    private func served(_ chunks: [String]) -> (framings: [Framing], messages: [String]) {
        var framer = MessageFramer()
        var framings: [Framing] = []
        var messages: [String] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { bytes in
                framer.consume(bytes, framingChosen: { framing in
                    #expect(messages.isEmpty)  // before the first event
                    framings.append(framing)
                }) { event in
                    if case .message(let body) = event { messages.append(String(decoding: body, as: UTF8.self)) }
                }
            }
        }
        return (framings, messages)
    }

    @Test("white space before the first message is skipped, however the input is split, in both framings")
    func leadingWhiteSpace() {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        let headed = "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        for chunks in [["\n" + headed], [" \r\n", headed], ["\r\n\r\n" + headed + headed]] {
            let (framings, messages) = served(chunks)
            #expect(framings == [.contentLength])
            #expect(messages == Array(repeating: body, count: chunks.joined().components(separatedBy: "Content-Length").count - 1))
        }
        for chunks in [["  " + body + "\n"], [" ", " " + body + "\n"], ["\n\t", body + "\n" + body + "\n"]] {
            let (framings, messages) = served(chunks)
            #expect(framings == [.newlineDelimited])
            #expect(messages.first == body)
        }
        #expect(served(["  ", "\n"]).framings.isEmpty)  // all white space: still undecided
    }

    @Test("a message a handler keeps stays as it was; one it drops lends its buffer to the next")
    func messageBuffers() {
        var framer = MessageFramer()
        var kept: [UInt8] = []
        var addresses: [UInt] = []
        let lines = ["{\"first\":1}\n", "{\"second\":22}\n", "{\"third\":333}\n"]
        for (index, line) in lines.enumerated() {
            Array(line.utf8).withUnsafeBytes { bytes in
                framer.consume(bytes) { event in
                    guard case .message(let body) = event else { return }
                    if index == 0 { kept = body }
                    addresses.append(body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
                }
            }
        }
        #expect(String(decoding: kept, as: UTF8.self) == "{\"first\":1}")
        #expect(addresses[1] != addresses[0])  // the first was kept: the second got a buffer of its own
        #expect(addresses[2] == addresses[1])  // the second was dropped: the third reuses its buffer
        // A message larger than the spare gets its own buffer, and the next small one is right.
        let large = "{\"x\":\"" + String(repeating: "y", count: MessageFramer.largestSpare) + "\"}\n"
        var sizes: [Int] = []
        for line in [large, "{}\n"] {
            Array(line.utf8).withUnsafeBytes { bytes in
                framer.consume(bytes) { event in
                    if case .message(let body) = event { sizes.append(body.count) }
                }
            }
        }
        #expect(sizes == [large.utf8.count - 1, 2])
    }
}
