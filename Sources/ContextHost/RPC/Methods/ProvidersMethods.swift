/// `providers/list`: every provider, in the order a client should offer them, with availability.
package enum ProvidersListMethod: MethodHandler {
    package static let method = "providers/list"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        _ = try request.params()  // rejects non-object params
        request.reply?.sendResult(server.host.providersList())
    }
}
