import ContextProviderKit
import ContextProtocol

/// `providers/list`: every provider, in the order a client should offer them, with availability;
/// with `composerId`, also whether each can still be attached to that composer and why not.
/// Answers once every provider has finished loading (at start-up, loads run after `initialize`).
package enum ProvidersListMethod: RequestHandler {
    package static func handle(_ request: ProvidersListRequest, context: RequestContext<ProvidersListRequest.Response>) throws(RPCError) {
        let (host, composerID) = (context.host, request.composerId)
        if let composerID { _ = try host.composers.get(composerID) }  // an unknown composer fails at once
        try context.whenLoaded(nil) { () throws(RPCError) in
            let composer = try composerID.map { id throws(RPCError) in try host.composers.get(id) }
            context.answer(host.providersList(composer: composer))
        }
    }
}

/// `providers/retry {providerId}`: ends a provider's quarantine (after repeated worker crashes),
/// forgets its crash history and starts a new worker. Answers `{"provider": …}` as in
/// `providers/list`; the client also gets `providers/changed`.
package enum ProvidersRetryMethod: RequestHandler {
    package static func handle(_ request: ProvidersRetryRequest, context: RequestContext<ProvidersRetryRequest.Response>) throws(RPCError) {
        let (host, providerID) = (context.host, request.providerId)
        try context.whenLoaded(providerID) { () throws(RPCError) in
            context.answer(try host.retryProvider(providerID))
        }
    }
}
