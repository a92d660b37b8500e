import ContextProviderKit

/// Supervision status changes for process-isolated providers (docs/security.md).
extension ProviderRegistry {
    /// Marks a provider quarantined with `reason`; returns the updated entry.
    @discardableResult
    package func markQuarantined(id: String, reason: Unavailability) -> ProviderEntry? {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }) else { return nil }
            switch entries[index].state {
            case .loaded(let manifest, let connection):
                entries[index].state = .quarantined(manifest, connection, before: entries[index].unavailability)
            case .quarantined:
                break
            case .rejected, .discovered, .disabled, .failed:
                return entries[index]  // nothing runs that could be quarantined
            }
            entries[index].unavailability = reason
            return entries[index]
        }
    }

    /// Marks a quarantined provider loaded again; returns the updated entry.
    @discardableResult
    package func markRecovered(id: String) -> ProviderEntry? {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }) else { return nil }
            guard case .quarantined(let manifest, let connection, let before) = entries[index].state else { return entries[index] }
            entries[index].state = .loaded(manifest, connection)
            entries[index].unavailability = before
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

    // MARK: Metadata of lazily started workers

    /// Called when provider `id`'s worker started: if its availability is not current (cached or
    /// never computed), marks it `checking` and returns what the check needs; else nil.
    package func beginAvailabilityCheck(id: String) -> (manifest: Manifest, connection: WorkerConnection, key: ProviderMetadataKey?)? {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }), let manifest = entries[index].manifest,
                let connection = entries[index].connection as? WorkerConnection
            else { return nil }
            switch entries[index].availabilityState {
            case .cached, .unchecked:
                entries[index].availabilityState = .checking(previous: entries[index].availabilityState)
                return (manifest, connection, entries[index].metadataKey)
            case .current, .checking:
                return nil
            }
        }
    }

    /// Records what provider `id`'s worker said (its availability now current); returns whether
    /// its listing changed: it was never computed, or it differs from the cache. (A quarantined
    /// provider keeps its quarantine; the answer applies when it recovers.)
    package func finishAvailabilityCheck(id: String, unavailability: Unavailability?) -> Bool {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }) else { return false }
            guard case .checking(let previous) = entries[index].availabilityState else { return false }
            entries[index].availabilityState = .current
            if case .quarantined(let manifest, let connection, let before) = entries[index].state {
                entries[index].state = .quarantined(manifest, connection, before: unavailability)
                return previous == .unchecked || before != unavailability
            }
            let before = entries[index].unavailability
            entries[index].unavailability = unavailability
            return previous == .unchecked || before != unavailability
        }
    }

    /// Puts provider `id`'s availability back to what it was before a check that learned nothing
    /// (its worker went away meanwhile), so the next start checks again.
    package func abandonAvailabilityCheck(id: String) {
        state.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.manifest?.id == id }),
                case .checking(let previous) = entries[index].availabilityState
            else { return }
            entries[index].availabilityState = previous
        }
    }
}
