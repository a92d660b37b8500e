#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs actions after a delay, on one thread of its own: the timeouts of provider calls.
///
/// Every provider call arms a timeout, and almost every call is answered long before it would
/// fire. A Dispatch timer per call costs a timer-descriptor update and a thread wake-up each time,
/// which profiling showed as the largest single cost of `items/preview`. Here, arming a timeout
/// appends to a FIFO (one per distinct delay: with the same delay, deadlines arrive in order) and
/// cancelling removes a dictionary entry; the thread sleeps until the earliest deadline rounded up
/// to `resolution`, so a burst of calls costs one wake-up, not one each.
///
/// Actions run on the timer's thread, never early and at most `resolution` (plus scheduling) late;
/// they must be short (answer a request, tell a provider to stop).
package final class DeadlineTimer: @unchecked Sendable {
    /// The timer the host's request timeouts use.
    package static let shared = DeadlineTimer(resolution: .milliseconds(5))

    /// Identifies an armed action, for `cancel`.
    package struct Token: Sendable, Hashable {
        fileprivate let value: UInt64

        /// The token as a number (never 0), to keep in an `Atomic`.
        package var rawValue: UInt64 { value }

        /// The token `rawValue` gave; a token of 0 or of an action that already ran or was
        /// cancelled cancels nothing.
        package init(rawValue: UInt64) { value = rawValue }
    }

    private struct Entry {
        var deadline: UInt64
        var token: UInt64
    }

    /// Deadlines with one delay, in arrival order.
    private struct Queue {
        var entries: [Entry] = []
        var head = 0

        var front: Entry? { head < entries.count ? entries[head] : nil }
        var count: Int { entries.count - head }

        mutating func removeFront() {
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    private let resolution: UInt64
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`.
    private var queues: [UInt64: Queue] = [:]
    private var actions: [UInt64: Action] = [:]
    private var nextToken: UInt64 = 1
    private var queued = 0
    private var sleepingUntil = UInt64.max
    private var started = false

    /// - Parameter resolution: how late an action may run, in exchange for fewer wake-ups.
    package init(resolution: Duration) {
        let (seconds, attoseconds) = resolution.components
        self.resolution = max(1, UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Runs `action` once, `milliseconds` from now, unless cancelled first.
    @discardableResult
    package func schedule(afterMilliseconds milliseconds: Int, _ action: @escaping @Sendable () -> Void) -> Token {
        let delay = UInt64(max(0, milliseconds)) * 1_000_000
        let deadline = Self.now() + delay
        pthread_mutex_lock(mutex)
        let token = nextToken
        nextToken += 1
        actions[token] = Action(action)
        queues[delay, default: Queue()].entries.append(Entry(deadline: deadline, token: token))
        queued += 1
        if queued > 4096 && queued > 4 * actions.count { compactLocked() }
        if !started {
            started = true
            startThread(name: "deadline-timer") { [self] in run() }
        } else if roundUp(deadline) < sleepingUntil {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
        return Token(rawValue: token)
    }

    /// Forgets an action that has not run; does nothing if it ran or was cancelled.
    ///
    /// The action is released after the lock: it may hold the last reference to something whose
    /// `deinit` does work of its own (a provider connection).
    package func cancel(_ token: Token) {
        pthread_mutex_lock(mutex)
        let action = actions.removeValue(forKey: token.value)
        pthread_mutex_unlock(mutex)
        withExtendedLifetime(action) {}
    }

    /// How many actions are armed (for tests).
    package var armedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return actions.count
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            var due: [Action] = []
            let now = Self.now()
            var earliest = UInt64.max
            for delay in Array(queues.keys) {
                while let front = queues[delay]!.front {
                    if front.deadline > now {
                        earliest = min(earliest, front.deadline)
                        break
                    }
                    queues[delay]!.removeFront()
                    queued -= 1
                    if let action = actions.removeValue(forKey: front.token) { due.append(action) }
                }
            }
            if !due.isEmpty {
                pthread_mutex_unlock(mutex)
                for action in due { action.run() }
                due.removeAll()  // released outside the lock, as in `cancel`
                pthread_mutex_lock(mutex)
                continue
            }
            if earliest == .max {
                sleepingUntil = .max
                pthread_cond_wait(condition, mutex)
            } else {
                sleepingUntil = roundUp(earliest)
                #if canImport(Glibc)
                var time = timespec(tv_sec: Int(sleepingUntil / 1_000_000_000), tv_nsec: Int(sleepingUntil % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &time)
                #else
                let wait = sleepingUntil - now
                var time = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                pthread_cond_timedwait_relative_np(condition, mutex, &time)
                #endif
            }
            sleepingUntil = 0
        }
    }

    /// Drops the entries of cancelled actions, so a long delay with many answered calls does not
    /// keep their entries until it passes.
    private func compactLocked() {
        queued = 0
        for delay in Array(queues.keys) {
            var queue = queues[delay]!
            queue.entries = queue.entries[queue.head...].filter { actions[$0.token] != nil }
            queue.head = 0
            queued += queue.entries.count
            queues[delay] = queue.entries.isEmpty ? nil : queue
        }
    }

    private func roundUp(_ time: UInt64) -> UInt64 {
        (time / resolution + 1) * resolution
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
