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

/// Message buffers handed back and forth between the thread that writes provider requests and
/// the thread that calls the provider, so a request costs no allocation of its own (and no
/// memory freed on another thread than the one that allocated it, which glibc's allocator makes
/// slow under contention).
package final class MessageBuffers: Sendable {
    private let spare = Mutex<[[UInt8]]>([])
    /// Buffers kept for reuse, and the largest capacity worth keeping (an `item/previewMany` of
    /// a composer's items, or its answer, is tens of KB: allocating one of those each time costs
    /// more than copying it).
    static let keptCount = 64, keptCapacity = 64 << 10

    package init() {}

    /// An empty buffer, reused if one is spare.
    package func take() -> [UInt8] {
        spare.withLock { $0.popLast() } ?? []
    }

    /// Gives a buffer back for reuse (dropped if there are enough or it grew too large).
    package func giveBack(_ buffer: consuming [UInt8]) {
        var buffer = buffer
        guard buffer.capacity <= Self.keptCapacity else { return }
        buffer.removeAll(keepingCapacity: true)
        spare.withLock { spare in
            if spare.count < Self.keptCount { spare.append(buffer) }
        }
    }
}
