#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
/// How messages are delimited on the byte stream.
package enum Framing: Sendable, Equatable {
    /// One JSON value per line (NDJSON), the default.
    case newlineDelimited
    /// LSP-style `Content-Length: N\r\n\r\n` headers before each body.
    case contentLength
}

/// One event produced by the framer.
package enum FramedEvent: Equatable, Sendable {
    /// A complete message body (without its delimiter or headers).
    case message([UInt8])
    /// A message longer than the cap; its bytes were discarded. `length` is how many bytes were
    /// seen (for `Content-Length`, the declared length).
    case oversized(length: Int)
    /// A header block that could not be understood; the stream resynchronises at the next header.
    case badHeader(String)
}

/// Splits a byte stream into messages. A pure state machine: feed it chunks of any size, in any
/// split, and it yields the same events. It never buffers more than the size cap plus one chunk.
///
/// The framing is chosen from the first non-white-space byte: `C` selects `Content-Length`
/// framing, anything else newline-delimited JSON.
package struct MessageFramer: Sendable {
    /// Largest message body accepted, in bytes.
    package let maximumMessageBytes: Int
    /// The framing, once detected.
    package private(set) var framing: Framing?

    private var buffer: [UInt8] = []
    /// Scan position inside `buffer` for the delimiter, so a long line is not rescanned.
    private var scanned = 0
    /// Discarding an oversized NDJSON line until its newline; the count seen so far.
    private var discarding: Int?
    /// Content-Length state: the body length still expected, once headers are read.
    private var expectedBody: Int?
    /// Content-Length state: bytes of an oversized body still to skip.
    private var skipRemaining = 0
    /// The buffer of the last message delivered, reused for the next one when no handler kept it
    /// (a kept message stays as it was: the next one then gets a buffer of its own). A message a
    /// handler is done with thus costs no allocation; most are done with when `handle` returns.
    private var spare: [UInt8] = []
    /// Messages larger than this get a buffer of their own, not the spare.
    static let largestSpare = 64 << 10

    package init(maximumMessageBytes: Int = 16 << 20, framing: Framing? = nil) {
        self.maximumMessageBytes = maximumMessageBytes
        self.framing = framing
    }

    /// Consumes a chunk of bytes and returns the events it completes, in order.
    package mutating func consume(_ chunk: UnsafeRawBufferPointer) -> [FramedEvent] {
        var events: [FramedEvent] = []
        consume(chunk) { events.append($0) }
        return events
    }

    /// Consumes a chunk of bytes and calls `handle` for each event it completes, in order.
    package mutating func consume(_ chunk: UnsafeRawBufferPointer, _ handle: (FramedEvent) -> Void) {
        consume(chunk, framingChosen: { _ in }, handle)
    }

    /// `consume`, telling `framingChosen` the framing as soon as it is chosen (from the first
    /// chunk that is not all white space), before the first event: a server answers in the
    /// client's framing.
    package mutating func consume(
        _ chunk: UnsafeRawBufferPointer, framingChosen: (Framing) -> Void, _ handle: (FramedEvent) -> Void
    ) {
        var chunk = chunk
        if framing == nil {
            // Skip leading white space before deciding.
            var index = 0
            while index < chunk.count, chunk[index] == 0x20 || chunk[index] == 0x0A || chunk[index] == 0x0D || chunk[index] == 0x09 {
                index += 1
            }
            guard index < chunk.count else { return }
            let chosen: Framing = chunk[index] == UInt8(ascii: "C") ? .contentLength : .newlineDelimited
            framing = chosen
            framingChosen(chosen)
            chunk = UnsafeRawBufferPointer(rebasing: chunk[index...])
        }
        switch framing! {
        case .newlineDelimited: consumeLines(chunk, handle)
        case .contentLength: consumeContentLength(chunk, handle)
        }
    }

    /// A message event with a copy of `body`, in the spare buffer when nobody kept it.
    private mutating func message(_ body: UnsafeRawBufferPointer) -> FramedEvent {
        // A large message gets an array of its own: the spare stays small, so neither it nor a
        // kept message (which takes the spare's capacity along) holds on to much more than it needs.
        guard body.count <= Self.largestSpare else { return .message(Array(body)) }
        prepareSpare(for: body.count)
        spare.append(contentsOf: body)
        return .message(spare)
    }

    /// `message` for bytes of `buffer`.
    private mutating func bufferedMessage(_ range: Range<Int>) -> FramedEvent {
        guard range.count <= Self.largestSpare else { return .message(Array(buffer[range])) }
        prepareSpare(for: range.count)
        spare.append(contentsOf: buffer[range])
        return .message(spare)
    }

    /// Empties the spare for a message of `count` bytes, replacing it when it is much larger.
    private mutating func prepareSpare(for count: Int) {
        if spare.capacity > 2 * max(count, 4096) { spare = [] }
        spare.removeAll(keepingCapacity: true)
    }

    /// Signals end of input: a final unterminated NDJSON line is delivered as a message.
    package mutating func finish() -> [FramedEvent] {
        var events: [FramedEvent] = []
        if framing == .newlineDelimited {
            if let seen = discarding {
                events.append(.oversized(length: seen))
            } else if !buffer.isEmpty {
                var line = buffer
                if line.last == 0x0D { line.removeLast() }
                if !isBlank(line) { events.append(.message(line)) }
            }
        }
        buffer = []
        scanned = 0
        discarding = nil
        return events
    }

    // MARK: NDJSON

    private mutating func consumeLines(_ chunk: UnsafeRawBufferPointer, _ handle: (FramedEvent) -> Void) {
        var start = 0
        while start < chunk.count {
            let rest = UnsafeRawBufferPointer(rebasing: chunk[start...])
            let newline = rest.isEmpty ? nil : memchr(rest.baseAddress!, 0x0A, rest.count).map { rest.baseAddress!.distance(to: UnsafeRawPointer($0)) + start }
            if let seen = discarding {
                if let newline {
                    handle(.oversized(length: seen + (newline - start)))
                    discarding = nil
                    start = newline + 1
                    continue
                }
                discarding = seen + rest.count
                return
            }
            if let newline {
                if buffer.isEmpty {
                    // Fast path: the whole line is inside this chunk.
                    deliverLine(UnsafeRawBufferPointer(rebasing: chunk[start..<newline]), handle)
                } else {
                    buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<newline]))
                    let line = buffer
                    buffer.removeAll(keepingCapacity: true)
                    line.withUnsafeBytes { deliverLine($0, handle) }
                }
                start = newline + 1
            } else {
                if buffer.count + rest.count > maximumMessageBytes {
                    discarding = buffer.count + rest.count
                    buffer.removeAll()
                } else {
                    buffer.append(contentsOf: rest)
                }
                return
            }
        }
    }

    private mutating func deliverLine(_ line: UnsafeRawBufferPointer, _ handle: (FramedEvent) -> Void) {
        var count = line.count
        if count > 0, line[count - 1] == 0x0D { count -= 1 }
        if count > maximumMessageBytes {
            handle(.oversized(length: count))
            return
        }
        let body = UnsafeRawBufferPointer(rebasing: line[0..<count])
        if isBlank(body) { return }
        handle(message(body))
    }

    private func isBlank(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    }

    // MARK: Content-Length

    private mutating func consumeContentLength(_ chunk: UnsafeRawBufferPointer, _ handle: (FramedEvent) -> Void) {
        var chunk = chunk
        if skipRemaining > 0 {
            let skip = min(skipRemaining, chunk.count)
            skipRemaining -= skip
            chunk = UnsafeRawBufferPointer(rebasing: chunk[skip...])
            if skipRemaining > 0 { return }
        }
        buffer.append(contentsOf: chunk)
        var consumed = 0
        defer {
            if consumed > 0 {
                buffer.removeFirst(consumed)
                scanned = max(0, scanned - consumed)
            }
        }
        while true {
            if let expected = expectedBody {
                guard buffer.count - consumed >= expected else { return }
                handle(bufferedMessage(consumed..<consumed + expected))
                consumed += expected
                expectedBody = nil
                continue
            }
            // Look for the end of the header block.
            guard let end = headerEnd(from: consumed) else {
                if buffer.count - consumed > 8192 {
                    handle(.badHeader("Header block longer than 8192 bytes without a blank line"))
                    consumed = buffer.count
                }
                return
            }
            let header = String(decoding: buffer[consumed..<end], as: UTF8.self)
            consumed = end + 4
            scanned = consumed
            switch parseHeader(header) {
            case .failure(let error):
                handle(.badHeader(error.message))
            case .success(let length):
                if length > maximumMessageBytes {
                    handle(.oversized(length: length))
                    let available = buffer.count - consumed
                    if available >= length {
                        consumed += length
                    } else {
                        skipRemaining = length - available
                        consumed = buffer.count
                        return
                    }
                } else {
                    expectedBody = length
                }
            }
        }
    }

    private mutating func headerEnd(from start: Int) -> Int? {
        var index = max(start, scanned)
        while index + 3 < buffer.count {
            if buffer[index] == 0x0D, buffer[index + 1] == 0x0A, buffer[index + 2] == 0x0D, buffer[index + 3] == 0x0A {
                return index
            }
            index += 1
        }
        scanned = max(start, buffer.count - 3)
        return nil
    }

    private func parseHeader(_ header: String) -> Result<Int, HeaderError> {
        var length: Int?
        for line in header.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else {
                return .failure(HeaderError(message: "Malformed header line '\(line.prefix(80))': expected 'Name: value'"))
            }
            let name = line[..<colon].trimmingSpaces().lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if name == "content-length" {
                guard let parsed = Int(value), parsed >= 0 else {
                    return .failure(HeaderError(message: "Content-Length '\(value.prefix(40))' is not a non-negative integer"))
                }
                length = parsed
            }
        }
        guard let length else { return .failure(HeaderError(message: "Header block has no Content-Length")) }
        return .success(length)
    }

    private struct HeaderError: Error {
        var message: String
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
