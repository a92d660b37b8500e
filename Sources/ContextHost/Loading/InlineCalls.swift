import Synchronization

/// Calls to in-process providers that an `InProcessHost` caller makes itself, on its own thread,
/// once it has let go of the host's lock: no hand-off to the provider's call thread and back. The
/// C ABI lets a host call `call` from any thread, concurrently, and requires it to return
/// promptly; a provider that answers inside `call` (the SDK does for cheap methods such as
/// `item/preview`) answers before the caller's `await` would suspend.
///
/// One per typed request. A call made after the caller ran its calls (a request that waited for
/// a provider's load runs later, on another thread) goes to the provider's call thread as usual.
package final class InlineCalls: Sendable {
    private let state = Mutex<(calls: [Action], closed: Bool)>(([], false))

    package init() {}

    /// Takes `call` to run on the caller's thread; false once the caller ran its calls.
    func take(_ call: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.calls.append(Action(call))
            return true
        }
    }

    /// Runs the calls taken so far, in order, on this thread; later ones are not taken.
    package func runAndClose() {
        let calls = state.withLock { state in
            state.closed = true
            return state.calls
        }
        for call in calls { call.run() }
    }
}
