@testable import ContextHost
import Testing

/// `FrameAssembler`: the frames of a worker's host-request pipe, read in pieces of any size by an
/// event loop, with the length checked at the header.
@Suite("Frame assembler")
struct FrameAssemblerTests {
    static func frames(_ assembler: inout FrameAssembler, _ bytes: [UInt8], pieceSize: Int) -> [FrameAssembler.Event] {
        var events: [FrameAssembler.Event] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            bytes[offset..<end].withUnsafeBytes { assembler.append($0) }
            while let event = assembler.next() {
                events.append(event)
                if case .violation = event { return events }
            }
            offset = end
        }
        return events
    }

    @Test("frames split anywhere come out whole and in order", arguments: [1, 2, 5, 11, 12, 13, 64, 4096])
    func splitAnywhere(pieceSize: Int) {
        let payloads: [[UInt8]] = [Array(#"{"jsonrpc":"2.0","method":"host/fetch","id":1}"#.utf8), [], Array(repeating: 0x41, count: 3000)]
        var stream: [UInt8] = []
        for (index, payload) in payloads.enumerated() { stream += WorkerFrame.encode(tag: Int64(index + 7), payload: payload) }
        var assembler = FrameAssembler(maximumPayload: 4096)
        let events = Self.frames(&assembler, stream, pieceSize: pieceSize)
        #expect(events == payloads.enumerated().map { .frame(tag: Int64($0.offset + 7), payload: $0.element) })
        #expect(assembler.next() == nil)
    }

    @Test("a length shorter than the tag, or over the limit, is refused at the header")
    func badLengths() {
        var short = FrameAssembler(maximumPayload: 100)
        let shortFrame: [UInt8] = [4, 0, 0, 0] + Array(repeating: 1, count: 8)
        #expect(Self.frames(&short, shortFrame, pieceSize: 12) == [.violation("a frame of 4 bytes is shorter than its tag")])
        // Over the limit: refused as soon as the header is in, with no payload read or kept.
        var huge = FrameAssembler(maximumPayload: 100)
        let hugeHeader: [UInt8] = [0xF0, 0xFF, 0xFF, 0xFF] + Array(repeating: 1, count: 8)
        #expect(Self.frames(&huge, hugeHeader, pieceSize: 3) == [.violation("a frame of 4294967272 bytes (limit 100)")])
        // Once broken, it stays broken.
        WorkerFrame.encode(tag: 1, payload: [1, 2]).withUnsafeBytes { huge.append($0) }
        #expect(huge.next() == .violation("a frame of 4294967272 bytes (limit 100)"))
        // Control: exactly the limit is a frame.
        var exact = FrameAssembler(maximumPayload: 100)
        #expect(Self.frames(&exact, WorkerFrame.encode(tag: 3, payload: Array(repeating: 7, count: 100)), pieceSize: 50)
            == [.frame(tag: 3, payload: Array(repeating: 7, count: 100))])
    }
}
