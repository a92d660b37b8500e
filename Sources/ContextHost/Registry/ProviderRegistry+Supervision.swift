import ContextProviderKit

/// Supervision status changes for process-isolated providers (docs/security.md).
extension ProviderRegistry {
    /// Marks a provider quarantined with `reason`; returns the updated entry.
    @discardableResult
    package func markQuarantined(id: String, reason: Unavailability) -> ProviderEntry? {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }) else { return nil }
            if entries[index].status != .quarantined {
                entries[index].unavailabilityBeforeQuarantine = entries[index].unavailability
            }
            entries[index].status = .quarantined
            entries[index].unavailability = reason
            return entries[index]
        }
    }

    /// Marks a quarantined provider loaded again; returns the updated entry.
    @discardableResult
    package func markRecovered(id: String) -> ProviderEntry? {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }) else { return nil }
            guard entries[index].status == .quarantined else { return entries[index] }
            entries[index].status = .loaded
            entries[index].unavailability = entries[index].unavailabilityBeforeQuarantine
            entries[index].unavailabilityBeforeQuarantine = nil
            return entries[index]
        }
    }

    /// The supervised worker connections, by provider id.
    package func workerConnections() -> [(id: String, connection: WorkerConnection)] {
        state.withLock { entries in
            entries.compactMap { entry in
                guard let id = entry.id, let connection = entry.connection as? WorkerConnection else { return nil }
                return (id, connection)
            }
        }
    }
}
