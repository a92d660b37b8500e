import Synchronization

/// Bounds how many workers start at once (start-up storms, docs/security.md §4): each start
/// takes a slot; the others wait in the order they came, and run on the thread that frees a slot.
/// One per registry, shared by its worker connections.
package final class WorkerStartLimiter: Sendable {
    /// How many starts may run at once.
    package let limit: Int
    private struct State {
        var active = 0
        var waiting: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())

    /// A limiter allowing `limit` (at least 1) starts at once.
    package init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` on a thread of its own once a slot is free (at once if one is).
    package func run(_ work: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.active < limit {
                state.active += 1
                return true
            }
            state.waiting.append(work)
            return false
        }
        guard now else { return }
        startThread(name: "worker-start") { [self] in
            var job = work
            while true {
                job()
                let next = state.withLock { state -> (@Sendable () -> Void)? in
                    guard !state.waiting.isEmpty else {
                        state.active -= 1
                        return nil
                    }
                    return state.waiting.removeFirst()
                }
                guard let next else { break }
                job = next
            }
        }
    }
}
