import ContextProviderKit

extension Host {
    /// A provider's request to the host: `host/fetch` through the broker; anything else is
    /// answered "method not found". `answer` is called exactly once: at once for a refusal the
    /// host sees before fetching, else where the broker finishes (the transport's event loop;
    /// `EgressBroker.fetch(_:egress:completion:)` says which threads).
    package func providerRequest(
        providerID: String, method: String, params: JSONValue, answer: @escaping @Sendable (Result<DeferredJSON, ProviderRequestError>) -> Void
    ) {
        guard method == ProviderHTTPRequest.method else {
            return answer(.failure(ProviderRequestError(["code": -32601, "message": .string("Host method not found: \(method.prefix(64))")])))
        }
        let request: ProviderHTTPRequest
        do {
            request = try ProviderHTTPRequest(json: params)
        } catch {
            return answer(.failure(ProviderRequestError(["code": -32602, "message": .string("host/fetch: \(error)")])))
        }
        guard let manifest = registry.withEntry(id: providerID, { $0.pointee.manifest }) ?? nil else {
            return answer(.failure(ProviderRequestError(["code": -32601, "message": "host/fetch: the provider is not known to this host"])))
        }
        let settings = (try? configuration.resolvedSettings(for: manifest)) ?? JSONObject()
        let egress = ResolvedEgress(manifest: manifest, settings: settings)
        let broker = EgressBroker(transport: configuration.fetcher, secrets: configuration.secrets, logger: logger)
        let logger = logger
        broker.fetch(request, egress: egress) { outcome in
            switch outcome {
            case .success(let response):
                // (The body's Base64 written straight into the bytes sent to the provider.)
                answer(.success(DeferredJSON(capacity: response.jsonCapacity) { response.writeJSON(to: &$0) }))
            case .failure(let refusal):
                logger.info("fetch \(providerID) refused: \(refusal.code.rawValue): \(refusal.message)")
                answer(.failure(ProviderRequestError(refusal.errorJSON)))
            }
        }
    }
}
