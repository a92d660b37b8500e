import ContextProtocol
import ContextProviderKit
import Dispatch
import Synchronization

/// `providers/retry` ends a quarantine (the supervision itself is the provider group's:
/// `ProviderGroup`).
extension Host {
    /// `providers/retry`: takes a quarantined provider out of quarantine and starts a worker.
    /// Returns the provider as `providers/list` describes it. Call once its load finished
    /// (`whenLoaded`).
    package func retryProvider(_ id: String) throws(RPCError) -> ProvidersRetryResult {
        guard let entry = registry.entry(id: id), entry.manifest != nil else {
            throw RPCError(.providerNotFound, "No provider has id '\(id)'. Call providers/list to see the ids.", data: ["providerId": .string(id)])
        }
        if let worker = entry.connection as? WorkerConnection, entry.status == .quarantined {
            do throws(LoadError) {
                try worker.retry()
            } catch {
                registry.markQuarantined(id: id, reason: worker.quarantine ?? .provider(error.message))
                throw RPCError(
                    .providerLoadFailed, "Provider '\(id)' is still quarantined: its worker did not start: \(error.message)",
                    data: ["providerId": .string(id), "code": .string(error.code), "hint": .string(error.hint)])
            }
            registry.markRecovered(id: id)
        } else if entry.status != .loaded {
            throw RPCError(
                .invalidParams, "Provider '\(id)' is not quarantined (status: \(entry.status.rawValue)); providers/retry only ends a quarantine.",
                data: ["providerId": .string(id), "status": .string(entry.status.rawValue)])
        }
        let locale = client?.locale
        let current = registry.entry(id: id) ?? entry
        return ProvidersRetryResult(provider: ProviderEntryJSON.description(for: current, locale: locale, configuration: configuration))
    }
}
