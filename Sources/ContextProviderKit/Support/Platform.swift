#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small mutual-exclusion lock over `pthread_mutex_t`, for providers that keep caches in a
/// class shared between concurrent calls.
///
/// Public so providers need not write their own: `Synchronization.Mutex` needs macOS 15, and
/// Foundation's `NSLock` would pull Foundation into every provider library.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// State guarded by a lock and kept behind a pointer: as a class's stored `var`s, each access
/// would also be checked for exclusivity at run time (two runtime calls), several times per
/// request on the SDK's request path.
final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let state: UnsafeMutablePointer<State>

    init(_ initial: State) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the state with the lock held.
    @inline(__always)
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}

/// A thread's identity.
typealias ThreadHandle = pthread_t

/// Thread identity and yielding, for waiting out in-flight replies at `close`.
enum ThreadID {
    static var current: pthread_t { pthread_self() }

    static func equal(_ lhs: pthread_t, _ rhs: pthread_t) -> Bool { pthread_equal(lhs, rhs) != 0 }

    static func yield() { sched_yield() }
}

/// Reads an environment variable without Foundation.
func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}
