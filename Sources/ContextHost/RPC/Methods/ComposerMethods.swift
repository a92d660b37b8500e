import ContextProviderKit
import ContextProtocol

/// `composer/open`: a new draft message with its limits.
package enum ComposerOpenMethod: RequestHandler {
    package static func handle(_ request: ComposerOpenRequest, context: RequestContext<ComposerOpenRequest.Response>) throws(RPCError) {
        let maximumItems = request.maximumItems ?? Composer.defaultMaximumItems
        let byteBudget = request.byteBudget ?? Composer.defaultByteBudget
        guard (1...Composer.maximumItemsCap).contains(maximumItems) else {
            throw .invalidParams("params.maximumItems must be between 1 and \(Composer.maximumItemsCap), got \(maximumItems)")
        }
        guard (1...Composer.byteBudgetCap).contains(byteBudget) else {
            throw .invalidParams("params.byteBudget must be between 1 and \(Composer.byteBudgetCap) bytes, got \(byteBudget)")
        }
        let host = context.host
        try host.configuration.inputLimits.checkCanOpenComposer(current: host.composers.count)
        let composer = try host.composers.open(maximumItems: maximumItems, byteBudget: byteBudget, now: Host.now())
        context.answer(host.summary(of: composer))
    }
}

/// `composer/list`: with `composerId`, its items and their chips; without, every open composer
/// (drafts restored after a restart included).
package enum ComposerListMethod: RequestHandler {
    package static func handle(_ request: ComposerListRequest, context: RequestContext<ComposerListRequest.Response>) throws(RPCError) {
        let (host, reply) = (context.host, context.reply)
        guard let composerID = request.composerId else {
            let composers = host.composers.all()
            reply.sendResult(capacity: Host.listingCapacity(composers: composers.count)) { host.appendListing(of: composers, to: &$0) }
            return
        }
        let composer = try host.composers.get(composerID)
        // Chips need the items' providers: at start-up (drafts restored) this waits for the
        // loads, in order with other requests that wait. Then the calls go out from this thread,
        // and the answer from the one that brings in the last chip.
        let server = context.server
        try context.whenLoaded(nil) { () throws(RPCError) in
            _ = server.track(reply)
            host.list(composer) { capacity, write in reply.sendResult(capacity: capacity, writing: write) }
        }
    }
}

/// `composer/remove`: takes one item out of a composer.
package enum ComposerRemoveMethod: RequestHandler {
    package static func handle(_ request: ComposerRemoveRequest, context: RequestContext<ComposerRemoveRequest.Response>) throws(RPCError) {
        let host = context.host
        let removed = try host.composers.remove(itemID: request.itemId, from: request.composerId)
        // The item as its provider made it (members `ContextItem` does not model included).
        var result = host.summary(of: try host.composers.get(request.composerId)).members
        result["removed"] = .object(removed.item)
        context.answer(json: .object(result))
    }
}

/// `composer/send`: the envelope a backend receives; the composer is emptied once it is built.
package enum ComposerSendMethod: RequestHandler {
    package static func handle(_ request: ComposerSendRequest, context: RequestContext<ComposerSendRequest.Response>) throws(RPCError) {
        let (host, composerID, text) = (context.host, request.composerId, request.text ?? "")
        _ = try host.composers.get(composerID)
        context.respond(json: { () async throws(RPCError) -> JSONValue in
            // Items are encoded again by their providers: at start-up, wait for their loads.
            for providerID in Set(try host.composers.get(composerID).items.map(\.providerID)) {
                await host.registry.waitForLoad(of: providerID)
            }
            return try await host.send(composerID: composerID, text: text)
        })
    }
}

/// `composer/close`: discards a composer and its draft.
package enum ComposerCloseMethod: RequestHandler {
    package static func handle(_ request: ComposerCloseRequest, context: RequestContext<ComposerCloseRequest.Response>) throws(RPCError) {
        let closed = try context.host.composers.close(request.composerId)
        context.answer(ComposerCloseResult(composerId: closed.id, discardedItems: closed.items.count))
    }
}
