import Synchronization

/// One open collection (a collector form being filled in).
package struct CollectionSession: Sendable, Equatable {
    package var id: String
    package var providerID: String
    /// The step the client is on; empty until the provider answers `collect/start`.
    package var stepID: String
    /// The composer the finished item goes to, if any.
    package var composerID: String?
}

/// The open collection sessions, by id.
package final class CollectionSessions: Sendable {
    private let sessions = Mutex<[String: CollectionSession]>([:])

    package init() {}

    package func open(providerID: String, composerID: String? = nil) -> CollectionSession {
        let session = CollectionSession(id: Identifier.uuid(), providerID: providerID, stepID: "", composerID: composerID)
        sessions.withLock { $0[session.id] = session }
        return session
    }

    package func get(_ id: String) throws(RPCError) -> CollectionSession {
        guard let session = sessions.withLock({ $0[id] }) else {
            throw RPCError(
                .sessionNotFound, "No open collection session '\(id)'; it was completed, cancelled or never started.",
                data: ["sessionId": .string(id)])
        }
        return session
    }

    package func update(_ id: String, _ change: (inout CollectionSession) -> Void) {
        sessions.withLock { table in
            if var session = table[id] {
                change(&session)
                table[id] = session
            }
        }
    }

    package func close(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    package var count: Int { sessions.withLock { $0.count } }
}
