/// `providers/list`: every provider, in the order a client should offer them, with availability;
/// with `composerId`, also whether each can still be attached to that composer and why not.
package enum ProvidersListMethod: MethodHandler {
    package static let method = "providers/list"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        let params = try request.params()
        let composer = try params.optionalString("composerId").map { id throws(RPCError) in try server.host.composers.get(id) }
        request.reply?.sendResult(server.host.providersList(composer: composer))
    }
}
