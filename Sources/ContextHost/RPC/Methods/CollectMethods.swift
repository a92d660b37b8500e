import ContextProviderKit

/// `collect/start`: opens a collection session with a provider and answers its first form step.
package enum CollectStartMethod: MethodHandler {
    package static let method = "collect/start"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let providerID = try params.string("providerId")
        let provider = try server.host.provider(providerID, for: .form)
        let session = server.host.sessions.open(providerID: providerID)
        server.host.forward(
            reply: reply, server: server, provider: provider, method: "collect/start",
            params: { out in JSONWriter.append(["sessionId": .string(session.id)], to: &out) },
            transform: { result throws(RPCError) in
                guard case .object(let form) = result, let stepID = form["stepId"]?.stringValue else {
                    server.host.sessions.close(session.id)
                    throw RPCError(.providerBadReply, "Provider '\(providerID)' answered collect/start without a form (an object with a 'stepId').")
                }
                server.host.sessions.update(session.id) { $0.stepID = stepID }
                return ["sessionId": .string(session.id), "providerId": .string(providerID), "form": result]
            },
            onError: { server.host.sessions.close(session.id) })
    }
}

/// `collect/query`: answers options for a `choice` field with a search source.
package enum CollectQueryMethod: MethodHandler {
    package static let method = "collect/query"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let session = try server.host.sessions.get(try params.string("sessionId"))
        let fieldID = try params.string("fieldId")
        let query = try params.optionalString("query") ?? ""
        let values = try params.optionalObject("values") ?? JSONObject()
        let provider = try server.host.provider(session.providerID, for: .form)
        let providerParams: JSONValue = [
            "sessionId": .string(session.id), "stepId": .string(session.stepID), "fieldId": .string(fieldID),
            "query": .string(query), "values": .object(values),
        ]
        server.host.forward(reply: reply, server: server, provider: provider, method: "collect/query") { out in
            JSONWriter.append(providerParams, to: &out)
        }
    }
}

/// `collect/submit`: submits the current step's values; answers an item, the next step, or
/// per-field errors.
package enum CollectSubmitMethod: MethodHandler {
    package static let method = "collect/submit"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let session = try server.host.sessions.get(try params.string("sessionId"))
        let values = try params.optionalObject("values") ?? JSONObject()
        let provider = try server.host.provider(session.providerID, for: .form)
        let providerParams: JSONValue = ["sessionId": .string(session.id), "stepId": .string(session.stepID), "values": .object(values)]
        server.host.forward(
            reply: reply, server: server, provider: provider, method: "collect/submit",
            params: { out in JSONWriter.append(providerParams, to: &out) },
            transform: { result throws(RPCError) in
                switch result["outcome"]?.stringValue {
                case "item":
                    guard let item = result["item"] else {
                        throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered outcome 'item' without an item.")
                    }
                    try server.host.checkItem(item, from: session.providerID)
                    server.host.sessions.close(session.id)
                case "step":
                    guard let stepID = result["form"]?["stepId"]?.stringValue else {
                        throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered outcome 'step' without a form with a 'stepId'.")
                    }
                    server.host.sessions.update(session.id) { $0.stepID = stepID }
                case "invalid":
                    break
                default:
                    throw RPCError(.providerBadReply, "Provider '\(session.providerID)' answered collect/submit with an unknown outcome; expected 'item', 'step' or 'invalid'.")
                }
                return result
            })
    }
}

/// `collect/cancel`: ends a session without an item.
package enum CollectCancelMethod: MethodHandler {
    package static let method = "collect/cancel"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let session = try server.host.sessions.get(try params.string("sessionId"))
        server.host.sessions.close(session.id)
        guard let provider = try? server.host.provider(session.providerID, for: .form) else {
            reply.sendResult([:])
            return
        }
        server.host.forward(
            reply: reply, server: server, provider: provider, method: "collect/cancel",
            params: { out in JSONWriter.append(["sessionId": .string(session.id)], to: &out) },
            transform: { _ in [:] })
    }
}

/// `collect/make`: asks a provider for an item without any form (the seed's `makeContext`).
package enum CollectMakeMethod: MethodHandler {
    package static let method = "collect/make"

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let params = try request.params()
        let providerID = try params.string("providerId")
        let provider = try server.host.provider(providerID, for: .programmatic)
        server.host.forward(
            reply: reply, server: server, provider: provider, method: "provider/makeContext",
            params: { out in out.append(contentsOf: "{}".utf8) },
            transform: { result throws(RPCError) in
                if let item = result["item"], !item.isNull {
                    try server.host.checkItem(item, from: providerID)
                }
                return result
            })
    }
}
