import ContextProviderKit

/// `providers/retry {providerId}`: ends a provider's quarantine (after repeated worker crashes),
/// forgets its crash history and starts a new worker. Answers `{"provider": …}` as in
/// `providers/list`; the client also gets `providers/changed`.
package enum ProvidersRetryMethod: MethodHandler {
    package static let method = ProvidersRetryRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        let params = try request.params()
        let providerID = try params.string("providerId")
        let host = server.host
        try host.whenLoaded(providerID, reply: request.reply, server: server) { () throws(RPCError) in
            request.reply?.sendResult(try host.retryProvider(providerID))
        }
    }
}
