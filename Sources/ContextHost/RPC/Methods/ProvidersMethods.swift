import ContextProviderKit

/// `providers/list`: every provider, in the order a client should offer them, with availability;
/// with `composerId`, also whether each can still be attached to that composer and why not.
/// Answers once every provider has finished loading (at start-up, loads run after `initialize`).
package enum ProvidersListMethod: MethodHandler {
    package static let method = ProvidersListRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        let params = try request.params()
        let composerID = try params.optionalString("composerId")
        let host = server.host
        if let composerID { _ = try host.composers.get(composerID) }  // an unknown composer fails at once
        try host.whenLoaded(nil, reply: request.reply, server: server) { () throws(RPCError) in
            let composer = try composerID.map { id throws(RPCError) in try host.composers.get(id) }
            request.reply?.sendResult(host.providersList(composer: composer))
        }
    }
}
