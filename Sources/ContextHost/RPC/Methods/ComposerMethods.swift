import ContextProviderKit

/// `composer/open`: a new draft message with its limits.
package enum ComposerOpenMethod: MethodHandler {
    package static let method = ComposerOpenRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let maximumItems = try params.optionalInt("maximumItems") ?? Composer.defaultMaximumItems
        let byteBudget = try params.optionalInt("byteBudget") ?? Composer.defaultByteBudget
        guard (1...Composer.maximumItemsCap).contains(maximumItems) else {
            throw .invalidParams("params.maximumItems must be between 1 and \(Composer.maximumItemsCap), got \(maximumItems)")
        }
        guard (1...Composer.byteBudgetCap).contains(byteBudget) else {
            throw .invalidParams("params.byteBudget must be between 1 and \(Composer.byteBudgetCap) bytes, got \(byteBudget)")
        }
        try server.host.configuration.inputLimits.checkCanOpenComposer(current: server.host.composers.count)
        let composer = try server.host.composers.open(maximumItems: maximumItems, byteBudget: byteBudget, now: Host.now())
        reply.sendResult(.object(server.host.summary(of: composer)))
    }
}

/// `composer/list`: with `composerId`, its items and their chips; without, every open composer
/// (drafts restored after a restart included).
package enum ComposerListMethod: MethodHandler {
    package static let method = ComposerListRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let host = server.host
        guard let composerID = try params.optionalString("composerId") else {
            let composers = host.composers.all()
            reply.sendResult(capacity: Host.listingCapacity(composers: composers.count)) { host.appendListing(of: composers, to: &$0) }
            return
        }
        let composer = try host.composers.get(composerID)
        // Chips need the items' providers: at start-up (drafts restored) this waits for the
        // loads, in order with other requests that wait. Then the calls go out from this thread,
        // and the answer from the one that brings in the last chip.
        try host.whenLoaded(nil, reply: reply, server: server) { () throws(RPCError) in
            _ = server.track(reply)
            host.list(composer) { capacity, write in reply.sendResult(capacity: capacity, writing: write) }
        }
    }
}

/// `composer/remove`: takes one item out of a composer.
package enum ComposerRemoveMethod: MethodHandler {
    package static let method = ComposerRemoveRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let composerID = try params.string("composerId")
        let removed = try server.host.composers.remove(itemID: try params.string("itemId"), from: composerID)
        var result = server.host.summary(of: try server.host.composers.get(composerID))
        result["removed"] = .object(removed.item)
        reply.sendResult(.object(result))
    }
}

/// `composer/send`: the envelope a backend receives; the composer is emptied once it is built.
package enum ComposerSendMethod: MethodHandler {
    package static let method = ComposerSendRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let composerID = try params.string("composerId")
        let text = try params.optionalString("text") ?? ""
        _ = try server.host.composers.get(composerID)
        let host = server.host
        host.respond(reply, server: server) { () async throws(RPCError) -> JSONValue in
            // Items are encoded again by their providers: at start-up, wait for their loads.
            for providerID in Set(try host.composers.get(composerID).items.map(\.providerID)) {
                await host.registry.waitForLoad(of: providerID)
            }
            return try await host.send(composerID: composerID, text: text)
        }
    }
}

/// `composer/close`: discards a composer and its draft.
package enum ComposerCloseMethod: MethodHandler {
    package static let method = ComposerCloseRequest.method

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let closed = try server.host.composers.close(try params.string("composerId"))
        reply.sendResult(["composerId": .string(closed.id), "discardedItems": .number(Double(closed.items.count))])
    }
}
