import ContextProviderKit
import Dispatch
import Synchronization

/// Supervision of process-isolated providers, seen from the host: quarantine and recovery update
/// the registry and send `providers/changed`; `providers/retry` ends a quarantine.
extension Host {
    /// Subscribes to every worker connection's status changes. Idempotent; call after loading
    /// (each provider's load, a reload).
    package func attachSupervision() {
        for (id, connection) in registry.workerConnections() {
            connection.setEventHandler { [weak self] event in self?.supervisionChanged(id: id, event) }
        }
    }

    /// Subscribes to one worker connection's status changes (as each provider's load finishes).
    package func attachSupervision(id: String, connection: WorkerConnection) {
        connection.setEventHandler { [weak self] event in self?.supervisionChanged(id: id, event) }
    }

    private func supervisionChanged(id: String, _ event: SupervisionEvent) {
        switch event {
        case .quarantined(let reason):
            registry.markQuarantined(id: id, reason: reason)
        case .recovered:
            registry.markRecovered(id: id)
        case .started:
            refreshMetadata(id: id)
            return
        }
        // The notification carries the whole list: while other providers still load at start-up,
        // it waits for them, so the client never sees a half-loaded list.
        registry.whenLoaded(nil) { [weak self] in self?.notifyProvidersChanged(changed: [id]) }
    }

    /// After a lazily started worker's first start in this run: asks its provider's availability
    /// check and `provider/info` (on a thread of its own), stores the answers in the metadata
    /// cache, and sends `providers/changed` when they differ from what the list said.
    private func refreshMetadata(id: String) {
        guard let check = registry.beginAvailabilityCheck(id: id) else { return }
        startThread(name: "metadata-refresh") { [weak self] in
            guard let self else { return }
            let unavailability: Unavailability?
            switch ProviderRegistry.availabilityAnswer(check.connection, manifest: check.manifest) {
            case .answered(let answer):
                unavailability = answer
            case .lost(let error):
                // Its worker went away meanwhile: nothing learned; the next start checks again.
                logger.debug("Provider \(id): availability check lost (\(error.message)); checking at its next start.")
                registry.abandonAvailabilityCheck(id: id)
                return
            }
            let info = Self.providerInfo(check.connection, manifest: check.manifest)
            if let key = check.key {
                registry.metadata.store(id: id, key: key, metadata: CachedProviderMetadata(unavailability: unavailability, info: info))
            }
            if registry.finishAvailabilityCheck(id: id, unavailability: unavailability) {
                registry.whenLoaded(nil) { [weak self] in self?.notifyProvidersChanged(changed: [id]) }
            }
        }
    }

    /// The provider's `provider/info` answer (an object), or nil; waits at most its preview timeout.
    private static func providerInfo(_ connection: WorkerConnection, manifest: Manifest) -> JSONValue? {
        let answer = Mutex<JSONValue?>(nil)
        let done = DispatchSemaphore(value: 0)
        let id = connection.send(method: ProviderInfoRequest.method, params: { $0.append(contentsOf: "{}".utf8) }) { response in
            if response.error == nil, let bytes = response.resultBytes, let value = try? JSONReader.parse(bytes), case .object = value {
                answer.withLock { $0 = value }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + .milliseconds(manifest.timeouts.preview.milliseconds)) == .timedOut {
            connection.cancel(id)
            return nil
        }
        return answer.withLock { $0 }
    }

    /// `providers/retry`: takes a quarantined provider out of quarantine and starts a worker.
    /// Returns the provider as `providers/list` describes it. Call once its load finished
    /// (`whenLoaded`).
    package func retryProvider(_ id: String) throws(RPCError) -> JSONValue {
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
        return ["provider": ProviderEntryJSON.json(for: current, locale: locale, configuration: configuration)]
    }

    /// Timeouts capped by the host's maximum call timeout.
    static func capping(_ timeouts: Timeouts, at cap: Duration) -> Timeouts {
        var timeouts = timeouts
        timeouts.collect = min(timeouts.collect, cap)
        timeouts.preview = min(timeouts.preview, cap)
        timeouts.detail = min(timeouts.detail, cap)
        timeouts.encode = min(timeouts.encode, cap)
        return timeouts
    }
}
