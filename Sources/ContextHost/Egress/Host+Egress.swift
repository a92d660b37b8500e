import ContextProviderKit

extension Host {
    /// A provider's request to the host: `host/fetch` through the broker; anything else is
    /// answered "method not found".
    package func providerRequest(providerID: String, method: String, params: JSONValue) async -> Result<JSONValue, ProviderRequestError> {
        guard method == ProviderHTTPRequest.method else {
            return .failure(ProviderRequestError(["code": -32601, "message": .string("Host method not found: \(method.prefix(64))")]))
        }
        let request: ProviderHTTPRequest
        do {
            request = try ProviderHTTPRequest(json: params)
        } catch {
            return .failure(ProviderRequestError(["code": -32602, "message": .string("host/fetch: \(error)")]))
        }
        guard let manifest = registry.withEntry(id: providerID, { $0.pointee.manifest }) ?? nil else {
            return .failure(ProviderRequestError(["code": -32601, "message": "host/fetch: the provider is not known to this host"]))
        }
        let settings = (try? configuration.resolvedSettings(for: manifest)) ?? JSONObject()
        let egress = ResolvedEgress(manifest: manifest, settings: settings)
        let broker = EgressBroker(transport: configuration.fetcher, secrets: configuration.secrets, logger: logger)
        switch await broker.fetch(request, egress: egress) {
        case .success(let response): return .success(response.json)
        case .failure(let refusal):
            logger.info("fetch \(providerID) refused: \(refusal.code.rawValue): \(refusal.message)")
            return .failure(ProviderRequestError(refusal.errorJSON))
        }
    }
}
