import ContextProviderKit
import ContextProtocol

/// `collect/start`: opens a collection session with a provider and answers its first form step.
/// With `composerId`, the limits are checked first and the finished item is attached there.
package enum CollectStartMethod: RequestHandler {
    package static func handle(_ request: CollectStartRequest, context: RequestContext<CollectStartRequest.Response>) throws(RPCError) {
        let (providerID, composerID, token) = (request.providerId, request.composerId, request.progressToken)
        let host = context.host
        try context.whenLoaded(providerID) { () throws(RPCError) in
            let provider = try host.provider(providerID, for: .form)
            if let composerID { try host.checkCanStartCollection(providerID: providerID, composerID: composerID) }
            try host.configuration.inputLimits.checkCanOpenSession(current: host.sessions.count)
            let session = host.sessions.open(providerID: providerID, composerID: composerID)
            context.respond(json: { () async throws(RPCError) -> JSONValue in
                do throws(RPCError) {
                    let form = try await host.request(provider, method: ProviderCollectStartRequest.method, params: ["sessionId": .string(session.id)], progressToken: token)
                    guard let stepID = form["stepId"]?.stringValue else {
                        throw RPCError(.providerBadReply, "Provider '\(providerID)' answered collect/start without a form (an object with a 'stepId').")
                    }
                    host.sessions.update(session.id) { $0.stepID = stepID }
                    var result: JSONObject = ["sessionId": .string(session.id), "providerId": .string(providerID), "form": form]
                    if let composerID { result["composerId"] = .string(composerID) }
                    return .object(result)
                } catch {
                    host.sessions.close(session.id)
                    throw error
                }
            })
        }
    }
}

// collect/query, collect/submit and collect/cancel name a session, which exists only once its
// provider loaded (collect/start waited), so they look the provider up directly.

/// `collect/query`: answers options for a `choice` field with a search source.
package enum CollectQueryMethod: RequestHandler {
    package static func handle(_ request: CollectQueryRequest, context: RequestContext<CollectQueryRequest.Response>) throws(RPCError) {
        let host = context.host
        let session = try host.sessions.get(request.sessionId)
        let (fieldID, query, values) = (request.fieldId, request.query ?? "", request.values ?? JSONObject())
        try host.configuration.inputLimits.checkFormValues(values)
        let provider = try host.provider(session.providerID, for: .form)
        let providerParams: JSONValue = [
            "sessionId": .string(session.id), "stepId": .string(session.stepID), "fieldId": .string(fieldID),
            "query": .string(query), "values": .object(values),
        ]
        context.forward(
            provider: provider, method: ProviderCollectQueryRequest.method,
            params: { out in JSONWriter.append(providerParams, to: &out) }, progressToken: request.progressToken)
    }
}

/// `collect/submit`: submits the current step's values; answers an item, the next step, or
/// per-field errors. In a composer session the item is attached before the answer.
package enum CollectSubmitMethod: RequestHandler {
    package static func handle(_ request: CollectSubmitRequest, context: RequestContext<CollectSubmitRequest.Response>) throws(RPCError) {
        let host = context.host
        let session = try host.sessions.get(request.sessionId)
        let values = request.values ?? JSONObject()
        try host.configuration.inputLimits.checkFormValues(values)
        let provider = try host.provider(session.providerID, for: .form)
        let providerParams: JSONValue = ["sessionId": .string(session.id), "stepId": .string(session.stepID), "values": .object(values)]
        let token = request.progressToken
        context.respond(json: { () async throws(RPCError) -> JSONValue in
            let result = try await host.request(provider, method: ProviderCollectSubmitRequest.method, params: providerParams, progressToken: token)
            switch result["outcome"]?.stringValue {
            case "item":
                guard let item = result["item"] else {
                    throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered outcome 'item' without an item.")
                }
                try host.checkItem(item, from: session.providerID)
                host.sessions.close(session.id)
                guard let composerID = session.composerID else { return result }
                let composer = try await host.attach(item, from: provider, to: composerID)
                return ["outcome": "item", "item": item, "composer": host.summary(of: composer).json]
            case "step":
                guard let stepID = result["form"]?["stepId"]?.stringValue else {
                    throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered outcome 'step' without a form with a 'stepId'.")
                }
                host.sessions.update(session.id) { $0.stepID = stepID }
                return result
            case "invalid":
                return result
            default:
                throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered collect/submit with an unknown outcome; expected 'item', 'step' or 'invalid'.")
            }
        })
    }
}

/// `collect/cancel`: ends a session without an item.
package enum CollectCancelMethod: RequestHandler {
    package static func handle(_ request: CollectCancelRequest, context: RequestContext<CollectCancelRequest.Response>) throws(RPCError) {
        let host = context.host
        let session = try host.sessions.get(request.sessionId)
        host.sessions.close(session.id)
        guard let provider = try? host.provider(session.providerID, for: .form) else {
            context.answer(EmptyObject())
            return
        }
        context.forward(
            provider: provider, method: ProviderCollectCancelRequest.method,
            params: { out in JSONWriter.append(["sessionId": .string(session.id)], to: &out) },
            transform: { _ in [:] })
    }
}

/// `collect/make`: asks a provider for an item without any form (the seed's `makeContext`).
/// With `composerId`, the item is attached.
package enum CollectMakeMethod: RequestHandler {
    package static func handle(_ request: CollectMakeRequest, context: RequestContext<CollectMakeRequest.Response>) throws(RPCError) {
        let (providerID, composerID, token) = (request.providerId, request.composerId, request.progressToken)
        let host = context.host
        try context.whenLoaded(providerID) { () throws(RPCError) in
            let provider = try host.provider(providerID, for: .programmatic)
            if let composerID { try host.checkCanStartCollection(providerID: providerID, composerID: composerID) }
            context.respond(json: { () async throws(RPCError) -> JSONValue in
                let result = try await host.request(provider, method: ProviderMakeContextRequest.method, params: [:], progressToken: token)
                guard let item = result["item"], !item.isNull else { return ["item": nil] }
                try host.checkItem(item, from: providerID)
                guard let composerID else { return ["item": item] }
                let composer = try await host.attach(item, from: provider, to: composerID)
                return ["item": item, "composer": host.summary(of: composer).json]
            })
        }
    }
}
