import ContextProviderKit
import Synchronization

/// The JSON-RPC messages the host sends to a provider, built directly as bytes.
package enum ProviderMessage {
    /// `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":…}`, with `params` written in place.
    package static func request(id: Int64, method: String, params: ParamsWriter) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(256)
        write(id: id, method: method, params: params, into: &message)
        return message
    }

    /// Appends the request `request(id:method:params:)` makes to `message`.
    package static func write(id: Int64, method: String, params: ParamsWriter, into message: inout [UInt8]) {
        message.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: #","method":"#.utf8)
        JSONWriter.appendString(method, to: &message)
        message.append(contentsOf: #","params":"#.utf8)
        params(&message)
        message.append(UInt8(ascii: "}"))
    }

    /// The `$/cancelRequest` notification for request `id`.
    package static func cancel(id: Int64) -> [UInt8] {
        var message: [UInt8] = Array(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: "}}".utf8)
        return message
    }
}

/// Message buffers handed back and forth between threads, so a message costs no allocation of its
/// own (and no memory freed on another thread than the one that allocated it, which glibc's
/// allocator makes slow under contention): provider requests from the thread that writes them to
/// the thread that calls the provider, and `ReplyRelay`'s copies of answers from a call thread to
/// the reader.
package final class MessageBuffers: Sendable {
    private struct Spare {
        var buffers: [[UInt8]] = []
        /// The capacity of `buffers`, added up.
        var bytes = 0
    }

    private let spare = Mutex(Spare())
    /// At most this many buffers, of this many bytes in all, are kept; a buffer larger than
    /// `keptCapacity` never is. (An `item/previewMany` of a composer's items, or its answer, is
    /// tens of KB: reusing such a buffer saves allocating and growing one each time, while the
    /// byte cap bounds what one burst of large messages leaves behind.)
    static let keptCount = 64, keptCapacity = 64 << 10, keptBytes = 1 << 20

    package init() {}

    /// An empty buffer, reused if one is spare.
    package func take() -> [UInt8] {
        spare.withLock { spare in
            guard let buffer = spare.buffers.popLast() else { return nil }
            spare.bytes -= buffer.capacity
            return buffer
        } ?? []
    }

    /// Gives a buffer back for reuse (dropped if it grew too large or enough are kept).
    package func giveBack(_ buffer: consuming [UInt8]) {
        var buffer = buffer
        guard buffer.capacity <= Self.keptCapacity else { return }
        buffer.removeAll(keepingCapacity: true)
        spare.withLock { spare in
            guard spare.buffers.count < Self.keptCount, spare.bytes + buffer.capacity <= Self.keptBytes else { return }
            spare.bytes += buffer.capacity
            spare.buffers.append(buffer)
        }
    }

    /// The capacity of the buffers kept, added up (for tests).
    var keptByteCount: Int { spare.withLock { $0.bytes } }
}
