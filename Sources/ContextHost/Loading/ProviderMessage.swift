import ContextProviderKit

/// The JSON-RPC messages the host sends to a provider, built directly as bytes.
package enum ProviderMessage {
    /// `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":…}`, with `params` written in place.
    package static func request(id: Int64, method: String, params: ParamsWriter) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(256)
        message.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: #","method":"#.utf8)
        JSONWriter.appendString(method, to: &message)
        message.append(contentsOf: #","params":"#.utf8)
        params(&message)
        message.append(UInt8(ascii: "}"))
        return message
    }

    /// The `$/cancelRequest` notification for request `id`.
    package static func cancel(id: Int64) -> [UInt8] {
        var message: [UInt8] = Array(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"#.utf8)
        JSONWriter.appendInteger(id, to: &message)
        message.append(contentsOf: "}}".utf8)
        return message
    }
}
