#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The framing between the host and a `context-host worker` (over the worker's stdin and stdout).
///
/// Each frame is a 4-byte little-endian length `L`, then `L` bytes: an 8-byte little-endian tag
/// and the payload. Payloads are JSON and may contain raw newlines, hence the length prefix.
///
/// | direction | tag | payload |
/// |---|---|---|
/// | host → worker, first frame | 0 | the init JSON passed to `open` |
/// | worker → host, first frame | 0 | `{"ok":true}`, or `{"error":{"code","message","hint"}}` |
/// | host → worker | request id (> 0) | a JSON-RPC request, passed to the provider's `call` |
/// | host → worker | 0 | a notification (`$/cancelRequest`), passed to `call` with no reply |
/// | worker → host | request id | whatever bytes the provider answered that request with |
/// | worker → host, on fd 3 (`--host-requests-fd 3`) | request id | a host request (`host/fetch`) the provider sent for that request, and nothing else |
///
/// The tag travels outside the provider's bytes, so a reply that is not JSON (or carries the wrong
/// id) still reaches the request it answers, as a clear error.
package enum WorkerFrame {
    /// Bytes of length prefix plus tag.
    package static let headerSize = 12

    /// Encodes one frame.
    package static func encode(tag: Int64, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(headerSize + payload.count)
        appendHeader(tag: tag, payloadCount: payload.count, to: &frame)
        frame.append(contentsOf: payload)
        return frame
    }

    package static func encode(tag: Int64, payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { encode(tag: tag, payload: $0) }
    }

    /// A frame whose payload `write` appends (about `capacity` bytes) right after the header,
    /// in one buffer.
    package static func encode(tag: Int64, capacity: Int, writing write: (inout [UInt8]) -> Void) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(headerSize + capacity)
        appendHeader(tag: tag, payloadCount: 0, to: &frame)
        write(&frame)
        let length = UInt32(truncatingIfNeeded: frame.count - headerSize + 8)
        withUnsafeBytes(of: length.littleEndian) { bytes in
            for index in 0..<4 { frame[index] = bytes[index] }
        }
        return frame
    }

    /// The little-endian integer at `offset` of `bytes` (the caller checked there are enough).
    static func littleEndian<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { target in
            for index in 0..<MemoryLayout<T>.size { target[index] = bytes[offset + index] }
        }
        return T(littleEndian: value)
    }

    package static func appendHeader(tag: Int64, payloadCount: Int, to frame: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: payloadCount + 8)
        withUnsafeBytes(of: length.littleEndian) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: tag.littleEndian) { frame.append(contentsOf: $0) }
    }
}

/// Reads frames from a descriptor, buffering partial reads.
package struct FrameReader {
    package enum Event {
        /// A whole frame.
        case frame(tag: Int64, payload: [UInt8])
        /// A frame whose payload is larger than allowed; its bytes were read and discarded.
        case oversized(tag: Int64, length: Int)
        /// The peer closed the stream (a partial frame at the end is dropped).
        case endOfStream
        /// The stream is not framed correctly; nothing more can be read from it.
        case malformed(String)
        /// The deadline passed before a whole frame arrived.
        case timedOut
    }

    private let fd: Int32
    private var buffer = UnreadBytes()
    /// What each `read` fills, made once (not 64 KiB allocated and zeroed per read).
    private var chunk: [UInt8] = []

    package init(fd: Int32) {
        self.fd = fd
    }

    /// Reads more bytes; false at end of stream or on error (or timeout, with `timedOut` set).
    private mutating func fill(deadline: ContinuousClock.Instant?, timedOut: inout Bool) -> Bool {
        buffer.compact(keepingAtMost: 1 << 20)
        if let deadline {
            while true {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero {
                    timedOut = true
                    return false
                }
                var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let status = poll(&pollFD, 1, Int32(clamping: max(1, remaining.milliseconds)))
                if status < 0 && errno == EINTR { continue }
                if status == 0 { continue }
                break
            }
        }
        if chunk.isEmpty { chunk = [UInt8](repeating: 0, count: 1 << 16) }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            return true
        }
    }

    /// The next frame. Payloads over `maximumPayload` bytes are skipped and reported as `oversized`.
    package mutating func next(maximumPayload: Int, deadline: ContinuousClock.Instant? = nil) -> Event {
        var timedOut = false
        while buffer.available < WorkerFrame.headerSize {
            guard fill(deadline: deadline, timedOut: &timedOut) else { return timedOut ? .timedOut : .endOfStream }
        }
        let length = Int(buffer.integer(at: 0, as: UInt32.self))
        guard length >= 8 else { return .malformed("a frame of \(length) bytes is shorter than its tag") }
        let tag = buffer.integer(at: 4, as: Int64.self)
        let payloadCount = length - 8
        if payloadCount > maximumPayload {
            // Skip the payload without keeping it.
            buffer.skip(WorkerFrame.headerSize)
            var remaining = payloadCount
            while remaining > 0 {
                if buffer.available == 0 {
                    guard fill(deadline: deadline, timedOut: &timedOut) else { return timedOut ? .timedOut : .endOfStream }
                }
                let take = min(remaining, buffer.available)
                buffer.skip(take)
                remaining -= take
            }
            return .oversized(tag: tag, length: payloadCount)
        }
        while buffer.available < WorkerFrame.headerSize + payloadCount {
            guard fill(deadline: deadline, timedOut: &timedOut) else { return timedOut ? .timedOut : .endOfStream }
        }
        return .frame(tag: tag, payload: buffer.takeFrame(payloadCount: payloadCount))
    }
}

/// Frames from a byte stream read in pieces by someone else (an event loop reading a worker's
/// host-request pipe): `append` what was read, then take whole frames with `next` until it
/// answers nil. Holds at most one frame and a piece: a frame whose payload is over
/// `maximumPayload` bytes, or whose length is shorter than its tag, is a violation at its header
/// (nothing more is read or kept; the stream is of no further use).
package struct FrameAssembler {
    package enum Event: Equatable {
        /// A whole frame.
        case frame(tag: Int64, payload: [UInt8])
        /// The stream broke the framing; every later `next` answers the same.
        case violation(String)
    }

    package let maximumPayload: Int
    private var buffer = UnreadBytes()
    private var failure: String?

    package init(maximumPayload: Int) {
        self.maximumPayload = maximumPayload
    }

    /// Adds bytes read (ignored after a violation).
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.compact(keepingAtMost: 1 << 16)
        buffer.append(bytes)
    }

    /// The next whole frame, a violation, or nil while more bytes are needed.
    package mutating func next() -> Event? {
        if let failure { return .violation(failure) }
        guard buffer.available >= WorkerFrame.headerSize else { return nil }
        let length = Int(buffer.integer(at: 0, as: UInt32.self))
        guard length >= 8 else { return fail("a frame of \(length) bytes is shorter than its tag") }
        let payloadCount = length - 8
        guard payloadCount <= maximumPayload else {
            return fail("a frame of \(payloadCount) bytes (limit \(maximumPayload))")
        }
        guard buffer.available - WorkerFrame.headerSize >= payloadCount else { return nil }
        let tag = buffer.integer(at: 4, as: Int64.self)
        return .frame(tag: tag, payload: buffer.takeFrame(payloadCount: payloadCount))
    }

    private mutating func fail(_ reason: String) -> Event {
        failure = reason
        buffer = UnreadBytes()
        return .violation(reason)
    }
}

/// Bytes read from a stream and not yet taken, for the two frame readers: taken from the front,
/// and the taken part dropped before more is added (all at once when everything was taken, else
/// once it passes a bound, so a steady stream is not copied down on every read).
private struct UnreadBytes {
    private var bytes: [UInt8] = []
    private var start = 0

    var available: Int { bytes.count - start }

    /// Drops the taken bytes when nothing is left unread, or when more than `limit` were taken.
    mutating func compact(keepingAtMost limit: Int) {
        if start > 0 && start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        } else if start > limit {
            bytes.removeFirst(start)
            start = 0
        }
    }

    mutating func append(_ more: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: more)
    }

    /// The little-endian integer `offset` bytes into what is unread (the caller checked it is there).
    func integer<T: FixedWidthInteger>(at offset: Int, as: T.Type) -> T {
        WorkerFrame.littleEndian(bytes, at: start + offset)
    }

    mutating func skip(_ count: Int) {
        start += count
    }

    /// Takes a frame whose header and `payloadCount` payload bytes are all unread; answers the payload.
    mutating func takeFrame(payloadCount: Int) -> [UInt8] {
        let payloadStart = start + WorkerFrame.headerSize
        let payload = Array(bytes[payloadStart..<(payloadStart + payloadCount)])
        start = payloadStart + payloadCount
        return payload
    }
}
