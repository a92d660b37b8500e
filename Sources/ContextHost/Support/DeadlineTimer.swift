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
/// cancelling clears the entry's action, found by binary search (a token names its queue and
/// tokens only grow); nothing is hashed. The thread sleeps until the earliest armed deadline
/// rounded up to `resolution`, so a burst of calls costs one wake-up, not one each, and drops
/// cancelled entries from the queues' fronts as it goes.
///
/// Actions run on the timer's thread, never early and at most `resolution` (plus scheduling) late;
/// they must be short (answer a request, tell a provider to stop).
package final class DeadlineTimer: @unchecked Sendable {
    /// The timer the host's request timeouts use.
    package static let shared = DeadlineTimer(resolution: .milliseconds(5))

    /// Identifies an armed action, for `cancel`: a serial number (above `queueBits`) and the
    /// index of the queue that holds it.
    package struct Token: Sendable, Hashable {
        fileprivate let value: UInt64

        /// The token as a number (never 0), to keep in an `Atomic`.
        package var rawValue: UInt64 { value }

        /// The token `rawValue` gave; a token of 0 or of an action that already ran or was
        /// cancelled cancels nothing.
        package init(rawValue: UInt64) { value = rawValue }

        fileprivate var queueIndex: Int { Int(truncatingIfNeeded: value & DeadlineTimer.queueMask) }
    }

    /// Bits of a token that name its queue, and so how many distinct delays have a FIFO each
    /// (the rest share `overflowIndex`). Serial numbers have the other 48: at a million timeouts
    /// a second, they last nine years.
    private static let queueBits: UInt64 = 16
    private static let queueMask: UInt64 = (1 << queueBits) - 1
    /// The queue for delays beyond the others: kept in deadline order by insertion, searched
    /// linearly by `cancel`.
    package static let overflowIndex = Int(queueMask)

    private struct Entry {
        var deadline: UInt64
        var token: UInt64
        /// Nil once cancelled.
        var action: Action?
    }

    /// Deadlines with one delay, in arrival order (so in token order too).
    private struct Queue {
        var delay: UInt64
        var entries: [Entry] = []
        var head = 0

        var isEmpty: Bool { head == entries.count }

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

        /// The position of `token`'s entry, if it is still queued.
        func position(of token: UInt64, ordered: Bool) -> Int? {
            guard ordered else { return entries[head...].firstIndex { $0.token == token } }
            var low = head, high = entries.count
            while low < high {
                let middle = low + (high - low) / 2
                if entries[middle].token < token { low = middle + 1 } else { high = middle }
            }
            return low < entries.count && entries[low].token == token ? low : nil
        }
    }

    /// Everything `mutex` guards, behind a pointer: as a class's stored properties, each access
    /// would be checked for exclusivity at run time.
    private struct State {
        var queues: [Queue] = []
        /// The queue the last `schedule` used (most calls have the same delay as the one before).
        var lastQueue = 0
        var overflow = Queue(delay: 0)
        var nextSerial: UInt64 = 1
        /// Entries with an action.
        var armed = 0
        /// Entries queued, armed or not.
        var queued = 0
        var sleepingUntil = UInt64.max
        var started = false
    }

    private let resolution: UInt64
    private let maximumQueues: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let state = UnsafeMutablePointer<State>.allocate(capacity: 1)

    /// - Parameters:
    ///   - resolution: how late an action may run, in exchange for fewer wake-ups.
    ///   - maximumQueues: how many distinct delays get a FIFO each (at most 65,535; tests use
    ///     fewer, to reach the overflow queue).
    package init(resolution: Duration, maximumQueues: Int = DeadlineTimer.overflowIndex) {
        self.maximumQueues = min(max(0, maximumQueues), Self.overflowIndex)
        let (seconds, attoseconds) = resolution.components
        self.resolution = max(1, UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
        state.initialize(to: State())
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// The longest delay, in milliseconds (~24.8 days): longer ones are shortened to it, so the
    /// deadline's arithmetic cannot overflow whatever a configuration asks for.
    package static let maximumDelayMilliseconds = Int(Int32.max)

    /// Runs `action` once, `milliseconds` from now (at most `maximumDelayMilliseconds`), unless
    /// cancelled first.
    @discardableResult
    package func schedule(afterMilliseconds milliseconds: Int, _ action: @escaping @Sendable () -> Void) -> Token {
        let delay = UInt64(min(max(0, milliseconds), Self.maximumDelayMilliseconds)) * 1_000_000
        let deadline = Self.now() + delay
        pthread_mutex_lock(mutex)
        let index = queueIndex(for: delay)
        let token = state.pointee.nextSerial << Self.queueBits | UInt64(index)
        state.pointee.nextSerial += 1
        let entry = Entry(deadline: deadline, token: token, action: Action(action))
        if index == Self.overflowIndex {
            let head = state.pointee.overflow.head
            let position = state.pointee.overflow.entries[head...].firstIndex { $0.deadline > deadline } ?? state.pointee.overflow.entries.count
            state.pointee.overflow.entries.insert(entry, at: position)
        } else {
            state.pointee.queues[index].entries.append(entry)
        }
        state.pointee.armed += 1
        state.pointee.queued += 1
        if state.pointee.queued > 4096 && state.pointee.queued > 4 * state.pointee.armed { compactLocked() }
        if !state.pointee.started {
            state.pointee.started = true
            startThread(name: "deadline-timer") { [self] in run() }
        } else if roundUp(deadline) < state.pointee.sleepingUntil {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
        return Token(rawValue: token)
    }

    /// The queue for `delay`: the last one used, another with that delay, an empty one given
    /// that delay, a new one, or (past `overflowIndex` queues) the overflow queue. Under the lock.
    private func queueIndex(for delay: UInt64) -> Int {
        let last = state.pointee.lastQueue
        if last < state.pointee.queues.count, state.pointee.queues[last].delay == delay { return last }
        let index: Int
        if let found = state.pointee.queues.firstIndex(where: { $0.delay == delay }) {
            index = found
        } else if let empty = state.pointee.queues.firstIndex(where: \.isEmpty) {
            // (Tokens naming its former delay's entries find nothing there: serials only grow.)
            state.pointee.queues[empty].delay = delay
            index = empty
        } else if state.pointee.queues.count < maximumQueues {
            state.pointee.queues.append(Queue(delay: delay))
            index = state.pointee.queues.count - 1
        } else {
            return Self.overflowIndex
        }
        state.pointee.lastQueue = index
        return index
    }

    /// Forgets an action that has not run; does nothing if it ran or was cancelled.
    ///
    /// The action is released after the lock: it may hold the last reference to something whose
    /// `deinit` does work of its own (a provider connection).
    package func cancel(_ token: Token) {
        let index = token.queueIndex
        pthread_mutex_lock(mutex)
        var action: Action?
        if index == Self.overflowIndex {
            if let position = state.pointee.overflow.position(of: token.value, ordered: false) {
                swap(&action, &state.pointee.overflow.entries[position].action)
            }
        } else if index < state.pointee.queues.count, let position = state.pointee.queues[index].position(of: token.value, ordered: true) {
            swap(&action, &state.pointee.queues[index].entries[position].action)
        }
        if action != nil { state.pointee.armed -= 1 }
        pthread_mutex_unlock(mutex)
        withExtendedLifetime(action) {}
    }

    /// How many actions are armed (for tests).
    package var armedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return state.pointee.armed
    }

    private func run() {
        pthread_mutex_lock(mutex)
        var due: [Action] = []
        while true {
            let now = Self.now()
            var earliest = UInt64.max
            var removed = 0
            for index in state.pointee.queues.indices {
                removed += Self.takeDue(from: &state.pointee.queues[index], now: now, into: &due, earliest: &earliest)
            }
            removed += Self.takeDue(from: &state.pointee.overflow, now: now, into: &due, earliest: &earliest)
            state.pointee.queued -= removed
            state.pointee.armed -= due.count
            if !due.isEmpty {
                pthread_mutex_unlock(mutex)
                for action in due { action.run() }
                due.removeAll(keepingCapacity: true)  // released outside the lock, as in `cancel`
                pthread_mutex_lock(mutex)
                continue
            }
            if earliest == .max {
                state.pointee.sleepingUntil = .max
                pthread_cond_wait(condition, mutex)
            } else {
                let until = roundUp(earliest)
                state.pointee.sleepingUntil = until
                #if canImport(Glibc)
                var time = timespec(tv_sec: Int(until / 1_000_000_000), tv_nsec: Int(until % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &time)
                #else
                let wait = until - now
                var time = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                pthread_cond_timedwait_relative_np(condition, mutex, &time)
                #endif
            }
            state.pointee.sleepingUntil = 0
        }
    }

    /// Moves the actions due by `now` from the front of `queue` into `due`, drops cancelled
    /// entries from its front, and lowers `earliest` to its first armed deadline; returns how
    /// many entries it removed. Under the lock.
    private static func takeDue(from queue: inout Queue, now: UInt64, into due: inout [Action], earliest: inout UInt64) -> Int {
        var removed = 0
        while !queue.isEmpty {
            let head = queue.head
            if let action = queue.entries[head].action {
                let deadline = queue.entries[head].deadline
                if deadline > now {
                    earliest = min(earliest, deadline)
                    break
                }
                due.append(action)
            }
            queue.removeFront()
            removed += 1
        }
        return removed
    }

    /// Drops the entries of cancelled actions, so a long delay with many answered calls does not
    /// keep their entries until the thread next wakes.
    private func compactLocked() {
        var queued = 0
        for index in state.pointee.queues.indices {
            Self.compact(&state.pointee.queues[index])
            queued += state.pointee.queues[index].entries.count
        }
        Self.compact(&state.pointee.overflow)
        state.pointee.queued = queued + state.pointee.overflow.entries.count
    }

    private static func compact(_ queue: inout Queue) {
        queue.entries = queue.entries[queue.head...].filter { $0.action != nil }
        queue.head = 0
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
