import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The answer side of one WebSocket connection: takes the session's output (newline-delimited
/// JSON-RPC messages, as `OutputChannel` writes them), frames each message as one unmasked text
/// frame into a buffer, and hands what has gathered to the channel's event loop, which writes it
/// all with one write and one flush. While the event loop is busy (reading the client's next
/// requests, writing), answers gather: under load many frames go out per system call (the stdio
/// host batches its answers the same way), instead of one write and flush per frame through the
/// WebSocket library's writer (an actor hop, an async writer and a flush per answer).
///
/// The bytes go to the pipeline at the WebSocket frame encoder's place: they are frames already.
/// Frames the library writes itself (pings, pongs, the close frame) pass the encoder; everything
/// is written in the event loop's order, so frames never interleave.
///
/// Bytes not yet written to the socket are capped (`limit`): a client that does not read its
/// answers makes `send` fail, and the connection is dropped (`OutputEndReason.slowReader`).
final class FrameWriter: Sendable {
    private struct State {
        /// Frames waiting for the event loop.
        var pending: ByteBuffer?
        /// Whether the event loop has a flush of `pending` queued.
        var scheduled = false
        /// Bytes framed and not yet written to the socket (waiting, or in the channel's buffer).
        var outstanding = 0
        var ending: WebListener.OutputEndReason?
        /// The last write handed to the channel (`drain` waits for it).
        var lastWrite: EventLoopFuture<Void>?
    }

    private let state = Mutex(State())
    private let channel: any Channel
    let limit: Int

    init(channel: any Channel, limit: Int) {
        self.channel = channel
        self.limit = limit
    }

    /// Frames and queues the messages in `bytes` (each ended by a newline; empty lines are
    /// skipped). False when the output has ended, or the client is too far behind (`limit`):
    /// then nothing of `bytes` is queued.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let schedule = state.withLock { state -> Bool? in
            guard state.ending == nil else { return nil }
            // (Taken out of the state while written to, so the buffer is not copied.)
            var buffer = state.pending.take() ?? channel.allocator.buffer(capacity: max(bytes.count + bytes.count / 8 + 16, 1024))
            defer { state.pending = buffer }
            let before = buffer.writerIndex
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                if end > start { buffer.writeTextFrame(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) }
                start = end + 1
            }
            let added = buffer.writerIndex - before
            guard state.outstanding <= limit - added else {
                buffer.moveWriterIndex(to: before)
                return nil
            }
            state.outstanding += added
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        guard let schedule else { return false }
        if schedule {
            if channel.eventLoop.inEventLoop {
                flushPending()
            } else {
                channel.eventLoop.execute { self.flushPending() }
            }
        }
        return true
    }

    /// On the event loop: writes and flushes everything pending.
    private func flushPending() {
        let pending = state.withLock { state -> ByteBuffer? in
            state.scheduled = false
            defer { state.pending = nil }
            return state.pending
        }
        guard let pending, pending.readableBytes > 0 else { return }
        let count = pending.readableBytes
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { _ in self.state.withLock { $0.outstanding -= count } }
        state.withLock { $0.lastWrite = promise.futureResult }
        do {
            let encoder = try channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
            encoder.write(NIOAny(pending), promise: promise)
            encoder.flush()
        } catch {
            // The WebSocket handlers are gone: the connection is closing.
            promise.fail(error)
        }
    }

    /// Records why the output ended (nothing is sent after it); true the first time.
    @discardableResult
    func end(_ reason: WebListener.OutputEndReason) -> Bool {
        state.withLock { state in
            guard state.ending == nil else { return false }
            state.ending = reason
            return true
        }
    }

    var ending: WebListener.OutputEndReason? { state.withLock { $0.ending } }

    /// Returns once everything queued so far is written to the socket (or failed).
    func drain() async {
        let last = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            self.flushPending()
            return self.state.withLock { $0.lastWrite } ?? self.channel.eventLoop.makeSucceededVoidFuture()
        }
        _ = try? await last.get()
    }
}

extension ByteBuffer {
    /// Appends one final, unmasked text frame (RFC 6455 §5.2) holding `payload`.
    fileprivate mutating func writeTextFrame(_ payload: UnsafeRawBufferPointer) {
        let length = payload.count
        writeInteger(UInt8(0x81))  // FIN, opcode 1 (text)
        if length <= 125 {
            writeInteger(UInt8(length))
        } else if length <= Int(UInt16.max) {
            writeInteger(UInt8(126))
            writeInteger(UInt16(length))
        } else {
            writeInteger(UInt8(127))
            writeInteger(UInt64(length))
        }
        writeBytes(payload)
    }
}

/// Unmasks each client frame as it is decoded, eight bytes at a time, into a buffer of its own,
/// and clears its masking key, so the WebSocket library's `unmaskedData` has nothing left to do
/// (NIO's `webSocketMask` goes byte by byte: 6% of the listener's CPU under a preview load).
/// Sits right after the frame decoder. A frame with extension data is left as it is.
final class FrameUnmasker: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        if let key = frame.maskKey, frame.extensionData == nil {
            frame.data = Self.unmasked(frame.data, key: key, allocator: context.channel.allocator)
            frame.maskKey = nil
        }
        context.fireChannelRead(wrapInboundOut(frame))
    }

    static func unmasked(_ data: ByteBuffer, key: WebSocketMaskingKey, allocator: ByteBufferAllocator) -> ByteBuffer {
        let count = data.readableBytes
        var result = allocator.buffer(capacity: count)
        let keyBytes = Array(key)
        data.withUnsafeReadableBytes { source in
            _ = result.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { target in
                unmask(source, key: keyBytes, into: target)
                return count
            }
        }
        return result
    }

    /// Writes `source` XOR the four-byte `key` (byte i with `key[i % 4]`) to the start of
    /// `target`, which holds at least as many bytes.
    static func unmask(_ source: UnsafeRawBufferPointer, key: [UInt8], into target: UnsafeMutableRawBufferPointer) {
        precondition(key.count == 4 && target.count >= source.count)
        let count = source.count
        // The key twice over, as one 64-bit word.
        var wide: UInt64 = 0
        withUnsafeMutableBytes(of: &wide) { word in
            for index in 0..<8 { word[index] = key[index % 4] }
        }
        var index = 0
        while index + 8 <= count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wide
            target.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            target[index] = source[index] ^ key[index % 4]
            index += 1
        }
    }
}
