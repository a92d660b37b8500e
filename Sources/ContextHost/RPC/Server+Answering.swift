import ContextProviderKit

/// How a request's answer is made later: after a provider's load, by a provider, or by a task.
/// The session (its pending-request table and cancellation) lives here; the host's methods return
/// values and know nothing of replies.
extension RPCServer {
    /// Runs `body` once provider `id` (nil: every provider) has finished loading.
    ///
    /// When it is not loading (always, once start-up loading is over), `body` runs at once on this
    /// thread and its error goes to the caller, as if called directly. Otherwise this returns at
    /// once, so the reader goes on with other requests, and `body` runs when the load finishes,
    /// its error answered on `reply`. Bodies that waited run one after another in the order their
    /// requests came (a client's requests to one provider reach it in the order sent). While it
    /// waits the request is pending: `$/cancelRequest` answers it (and `body` is skipped), and
    /// stdin EOF waits for it.
    package func whenLoaded(_ id: String?, reply: Reply, _ body: @escaping @Sendable () throws(RPCError) -> Void) throws(RPCError) {
        guard host.mustWait(for: id) else { return try body() }
        track(reply)
        host.afterLoad(of: id) {
            if reply.isAnswered { return }
            do throws(RPCError) {
                try body()
            } catch {
                reply.sendError(error)
            }
        }
    }

    /// Sends a request to a provider and answers `reply` with the provider's result.
    ///
    /// The result is first checked against what `method` must answer (`OutputValidation`: size,
    /// JSON, ctxui shape); a violation answers `-32014` naming the field. Without `transform`, the
    /// checked result bytes are passed through untouched (re-printed only if they contain raw line
    /// breaks, which would break NDJSON framing). With it, the result is decoded,
    /// transformed and printed. Errors become host errors that name the provider.
    /// `$/cancelRequest` tells the provider to stop.
    package func forward(
        reply: Reply, provider: Host.LiveProvider, method: String,
        params: ParamsWriter,
        transform: (@Sendable (JSONValue) throws(RPCError) -> JSONValue)? = nil,
        onError: (@Sendable () -> Void)? = nil,
        progressToken: ProgressToken? = nil
    ) {
        let call = host.providerCall(provider, method: method, progressToken: progressToken, sink: .reply(reply, transform: transform, onError: onError))
        track(reply, onCancel: { call.cancelProviderRequest() })
        call.start(params: params)
    }

    /// Runs `work` in a task that answers `reply` with what `answer` makes of its result, or with
    /// its error; `$/cancelRequest` cancels the task.
    package func respond<Result: Sendable>(
        _ reply: Reply, _ work: @escaping @Sendable () async throws(RPCError) -> Result, answer: @escaping @Sendable (Reply, Result) -> Void
    ) {
        let pending = track(reply)
        let task = Task {
            do throws(RPCError) {
                answer(reply, try await work())
            } catch {
                reply.sendError(error)
            }
        }
        pending.setCancel { task.cancel() }
    }
}
