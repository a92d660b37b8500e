/// Requests an instance sent to its host (`host/fetch`) that still wait for the host's answer,
/// by id. The host answers by calling the instance's `call` with a JSON-RPC response (no
/// `method`), which `ProviderInstance` hands here (docs/provider-abi.md, "Host requests").
final class HostCalls: @unchecked Sendable {
    private struct State {
        var nextID = 1
        var waiting: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
        var closed = false
    }

    private let state = Locked(State())

    /// Sends `method` with `params` through `send` (the request's reply channel) and waits for
    /// the host's answer; throws the host's error as a `ProviderError`, or `CancellationError`.
    func request(_ method: String, params: JSONValue, send: (_ message: [UInt8]) -> Bool) async throws -> JSONValue {
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            defer { state.nextID = state.nextID == Int.max ? 1 : state.nextID + 1 }
            return state.nextID
        }
        guard let id else { throw ProviderError("The provider instance is closed.") }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                let registered = state.withLock { state -> Bool in
                    guard !state.closed else { return false }
                    state.waiting[id] = continuation
                    return true
                }
                guard registered else {
                    continuation.resume(throwing: ProviderError("The provider instance is closed."))
                    return
                }
                // `method` before `id`, so hosts never mistake it for a response by its first bytes.
                var message: [UInt8] = Array(#"{"jsonrpc":"2.0","method":"#.utf8)
                JSONWriter.appendString(method, to: &message)
                message.append(contentsOf: #","id":\#(id),"params":"#.utf8)
                JSONWriter.append(params, to: &message)
                message.append(UInt8(ascii: "}"))
                if !send(message) {
                    if let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) {
                        waiting.resume(throwing: ProviderError(
                            "\(method) can only be called while a request is being handled (from a provider method, before it returns)",
                            hint: "call context.fetch from inside preview, detail, submit and the other request methods"))
                    }
                }
            }
        } onCancel: {
            if let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) {
                waiting.resume(throwing: CancellationError())
            }
        }
    }

    /// The host's answer (a message without `method`): resumes the request it answers; unknown
    /// ids are dropped.
    func deliver(_ message: JSONValue) {
        guard let id = message["id"]?.intValue, let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        if let error = message["error"] {
            let code = error["code"]?.intValue ?? ProviderError.Code.internalError
            let text = error["message"]?.stringValue ?? "The host refused the request."
            let data = error["data"]
            waiting.resume(throwing: ProviderError(code: code, message: text, data: data.flatMap { $0.isNull ? nil : $0 }, hint: data?["hint"]?.stringValue))
        } else {
            waiting.resume(returning: message["result"] ?? .null)
        }
    }

    /// The instance closes: every waiting request fails.
    func close() {
        let waiting = state.withLock { state -> [CheckedContinuation<JSONValue, any Error>] in
            state.closed = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: ProviderError("The provider instance was closed.")) }
    }
}

extension ProviderContext {
    /// Fetches over HTTPS through the host (`host/fetch`): the host checks the URL against the
    /// manifest's `network.origins`, connects only to allowed addresses, injects any secret the
    /// manifest names (the provider never sees it), follows and re-checks redirects, and caps time
    /// and size. Call it from a request method (preview, detail, submit…), not from `init`.
    ///
    /// Throws a `ProviderError` with code `-32060` when the host refuses (its `data` has
    /// `reason`, `field` — the manifest field to change — and `hint`), `CancellationError` when
    /// the request is cancelled.
    public func fetch(_ request: ProviderHTTPRequest) async throws -> ProviderHTTPResponse {
        guard let channel = RequestChannel.current else {
            throw ProviderError(
                "context.fetch was called outside a request", hint: "call it from a provider method (preview, detail, submit, …)")
        }
        let result = try await channel.hostRequest(ProviderHTTPRequest.method, params: request.json)
        do {
            return try ProviderHTTPResponse(json: result)
        } catch {
            throw ProviderError("The host's answer to host/fetch is unreadable: \(error)")
        }
    }

    /// `fetch` of a GET.
    public func fetch(_ url: String, headers: [(String, String)] = []) async throws -> ProviderHTTPResponse {
        try await fetch(ProviderHTTPRequest(url: url, headers: headers))
    }
}
