import ContextProviderKit

/// One incoming request or notification, with its raw bytes. `params` stays undecoded until a
/// handler asks for it (`decode`, for a typed handler; the `items/*` methods read only where the
/// item is).
package struct Request: Sendable {
    /// The whole message.
    package let message: [UInt8]
    package let envelope: Envelope
    /// How to answer; nil for a notification.
    package let reply: Reply?
    /// Where `params.item` and its `providerId` are, as the input limits check found them.
    package var itemLocation = ItemLocation()

    package var method: String { envelope.method ?? "" }

    /// Runs `body` with the message bytes and the range of `params` (nil when absent).
    package func withRawParams<R>(_ body: (UnsafeRawBufferPointer, Range<Int>?) throws(RPCError) -> R) throws(RPCError) -> R {
        let range = envelope.params
        do {
            return try message.withUnsafeBytes { buffer in
                do {
                    return try body(buffer, range)
                } catch let error as RPCError {
                    throw error
                }
            }
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(.internalError, "\(error)")
        }
    }
}
