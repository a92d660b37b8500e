import ContextProviderKit

/// A handler for one client request, typed as sourcekit-lsp's `MessageHandler`: it receives the
/// request decoded as its protocol type and answers that type's `Response` through its context —
/// at once (`answer`), from a task (`respond`), once a provider loaded (`whenLoaded`) or from a
/// provider (`forward`) — or throws the error to answer.
///
/// The wire (`serve`) decodes `params` through `Params` and writes the answer as JSON;
/// `InProcessHost` hands the app's typed value in and the typed answer back, with no JSON between.
/// An answer that carries a provider's JSON (a form, an item, an encoding) is answered as that
/// JSON, checked (`answer(json:)`, `respond(json:)`): the wire passes it on as the provider wrote
/// it, members this host does not model included; the in-process caller gets it decoded as
/// `Response`.
package protocol RequestHandler: MethodHandler {
    /// The request's protocol type (`ContextProtocol`), whose `Response` the handler answers.
    associatedtype Params: RequestType
    /// Handles a decoded request.
    static func handle(_ request: Params, context: RequestContext<Params.Response>) throws(RPCError)
}

/// What a typed handler answers through, and what it may use.
package struct RequestContext<Response: WireValue>: Sendable {
    /// The session the request came on (its host, lifecycle and pending requests).
    package let server: RPCServer
    /// The answer, given exactly once.
    package let reply: Reply

    package var host: Host { server.host }

    /// Answers with a typed result.
    package func answer(_ value: Response) { reply.sendValue(value) }

    /// Answers with a result in `Response`'s wire form that carries a provider's checked JSON.
    package func answer(json: JSONValue) { reply.sendResult(json) }

    /// Answers with what `work` returns, or its error, from a task; `$/cancelRequest` cancels it.
    package func respond(_ work: @escaping @Sendable () async throws(RPCError) -> Response) {
        server.respond(reply, work) { reply, value in reply.sendValue(value) }
    }

    /// As `respond`, for a result that carries a provider's checked JSON (`answer(json:)`).
    package func respond(json work: @escaping @Sendable () async throws(RPCError) -> JSONValue) {
        server.respond(reply, work) { reply, value in reply.sendResult(value) }
    }

    /// Runs `body` now, or once provider `id` (nil: every provider) has loaded while it is still
    /// loading, the request pending meanwhile (`RPCServer.whenLoaded`).
    package func whenLoaded(_ id: String?, _ body: @escaping @Sendable () throws(RPCError) -> Void) throws(RPCError) {
        try server.whenLoaded(id, reply: reply, body)
    }

    /// Answers with `provider`'s checked result of `method` (`RPCServer.forward`).
    package func forward(
        provider: Host.LiveProvider, method: String, params: ParamsWriter,
        transform: (@Sendable (JSONValue) throws(RPCError) -> JSONValue)? = nil, progressToken: ProgressToken? = nil
    ) {
        server.forward(reply: reply, provider: provider, method: method, params: params, transform: transform, progressToken: progressToken)
    }
}

extension RequestHandler {
    package static var method: String { Params.method }

    /// From the wire: decodes `params` as `Params` (absent params are `{}`), then handles it.
    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        try handle(try request.decode(Params.self), context: RequestContext(server: server, reply: reply))
    }

    /// From the typed API. A request of another type with this method (an app's own type) is
    /// converted through its JSON form.
    package static func handle(typed request: some RequestType, server: RPCServer, reply: Reply) throws(RPCError) {
        let params: Params
        if let same = request as? Params {
            params = same
        } else {
            do throws(JSONDecodeError) {
                params = try Params(json: request.json, path: "params")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
        try handle(params, context: RequestContext(server: server, reply: reply))
    }
}

extension Request {
    /// Decodes `params` as `type`; absent params are read as `{}`. A mismatch is `-32602` naming
    /// the field (`params.composerId: missing; expected a string`).
    package func decode<Params: RequestType>(_ type: Params.Type) throws(RPCError) -> Params {
        let value: JSONValue
        if let range = envelope.params {
            do {
                value = try message.withUnsafeBytes { buffer throws(JSONParseError) in
                    try JSONReader.parse(UnsafeRawBufferPointer(rebasing: buffer[range]))
                }
            } catch {
                throw RPCError(.parseError, "params: \(error)")
            }
        } else {
            value = .object([:])
        }
        do throws(JSONDecodeError) {
            return try Params(json: value, path: "params")
        } catch {
            // By-position params (an array) where the method takes named ones.
            if case .array = value { throw .invalidParams("params must be an object, got array") }
            throw .invalidParams("\(error)")
        }
    }
}
