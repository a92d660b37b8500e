import ContextHost
import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func monotonicMilliseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1_000_000
}

/// Waits (polling) until `condition` holds or `seconds` pass.
private func wait(seconds: Double = 10, until condition: () -> Bool) -> Bool {
    let end = monotonicMilliseconds() + seconds * 1000
    while !condition() {
        if monotonicMilliseconds() > end { return false }
        usleep(1000)
    }
    return true
}

@Suite("DeadlineTimer: request timeouts on one thread")
struct DeadlineTimerTests {
    @Test("an action runs once, never before its delay")
    func firesAfterDelay() {
        let timer = DeadlineTimer(resolution: .milliseconds(5))
        let start = monotonicMilliseconds()
        let firedAt = Mutex<[Double]>([])
        timer.schedule(afterMilliseconds: 40) { firedAt.withLock { $0.append(monotonicMilliseconds()) } }
        #expect(wait { firedAt.withLock { !$0.isEmpty } })
        usleep(60_000)
        let times = firedAt.withLock { $0 }
        #expect(times.count == 1)
        #expect(times[0] - start >= 40)
        #expect(timer.armedCount == 0)
    }

    @Test("a cancelled action never runs; the others do, earliest deadline first across delays")
    func cancelAndOrder() {
        let timer = DeadlineTimer(resolution: .milliseconds(1))
        let fired = Mutex<[Int]>([])
        // Spaced so that a stalled test thread cannot let the cancelled one fire or reorder them.
        let cancelled = timer.schedule(afterMilliseconds: 1000) { fired.withLock { $0.append(0) } }
        timer.schedule(afterMilliseconds: 1200) { fired.withLock { $0.append(3) } }
        timer.schedule(afterMilliseconds: 200) { fired.withLock { $0.append(1) } }
        timer.schedule(afterMilliseconds: 600) { fired.withLock { $0.append(2) } }
        timer.cancel(cancelled)
        #expect(wait { fired.withLock { $0.count == 3 } })
        #expect(fired.withLock { $0 } == [1, 2, 3])
        timer.cancel(cancelled)  // again, after the fact: nothing happens
        #expect(timer.armedCount == 0)
    }

    @Test("a new, earlier deadline wakes a timer sleeping until a later one")
    func earlierDeadlineWakes() {
        let timer = DeadlineTimer(resolution: .milliseconds(1))
        let fired = Mutex<[Int]>([])
        timer.schedule(afterMilliseconds: 5_000) { fired.withLock { $0.append(2) } }
        usleep(20_000)  // the timer thread now sleeps until the 5 s deadline
        let start = monotonicMilliseconds()
        timer.schedule(afterMilliseconds: 30) { fired.withLock { $0.append(1) } }
        #expect(wait(seconds: 3) { fired.withLock { $0 == [1] } })
        #expect(monotonicMilliseconds() - start < 3_000)
        #expect(timer.armedCount == 1)
    }

    @Test("many answered calls (armed then cancelled) leave nothing armed, and later timeouts still fire")
    func manyCancelled() {
        let timer = DeadlineTimer(resolution: .milliseconds(5))
        let fired = Atomic<Int>(0)
        for _ in 0..<20_000 {
            let token = timer.schedule(afterMilliseconds: 30_000) { fired.add(1, ordering: .relaxed) }
            timer.cancel(token)
        }
        #expect(timer.armedCount == 0)
        timer.schedule(afterMilliseconds: 10) { fired.add(1, ordering: .relaxed) }
        #expect(wait { fired.load(ordering: .relaxed) == 1 })
        usleep(20_000)
        let count = fired.load(ordering: .relaxed)
        #expect(count == 1)
    }
}

@Suite("DeadlineTimer: queues")
struct DeadlineTimerQueueTests {
    @Test("past its queues, delays share the overflow queue: deadlines still in order, cancels still found")
    func overflow() {
        // Two FIFOs; the other delays go to the overflow queue, kept in deadline order.
        let timer = DeadlineTimer(resolution: .milliseconds(1), maximumQueues: 2)
        let fired = Mutex<[Int]>([])
        // Spaced by 200 ms or more, so that a stalled test thread cannot reorder them.
        timer.schedule(afterMilliseconds: 2000) { fired.withLock { $0.append(5) } }
        timer.schedule(afterMilliseconds: 2500) { fired.withLock { $0.append(6) } }
        timer.schedule(afterMilliseconds: 1500) { fired.withLock { $0.append(4) } }
        let cancelled = timer.schedule(afterMilliseconds: 500) { fired.withLock { $0.append(0) } }
        timer.schedule(afterMilliseconds: 1000) { fired.withLock { $0.append(3) } }
        timer.schedule(afterMilliseconds: 200) { fired.withLock { $0.append(1) } }
        timer.schedule(afterMilliseconds: 750) { fired.withLock { $0.append(2) } }
        #expect(cancelled.rawValue & UInt64(DeadlineTimer.overflowIndex) == UInt64(DeadlineTimer.overflowIndex))
        timer.cancel(cancelled)
        #expect(timer.armedCount == 6)
        #expect(wait { fired.withLock { $0.count == 6 } })
        #expect(fired.withLock { $0 } == [1, 2, 3, 4, 5, 6])
        #expect(timer.armedCount == 0)
    }

    @Test("a delay too long for the clock's arithmetic is shortened, not a crash; it stays armed until cancelled")
    func hugeDelay() {
        let timer = DeadlineTimer(resolution: .milliseconds(1))
        let fired = Atomic<Bool>(false)
        let token = timer.schedule(afterMilliseconds: .max) { fired.store(true, ordering: .relaxed) }
        timer.schedule(afterMilliseconds: -5) {}  // (negative: now)
        usleep(20_000)
        #expect(timer.armedCount == 1)
        timer.cancel(token)
        #expect(timer.armedCount == 0)
        let didFire = fired.load(ordering: .relaxed)
        #expect(!didFire)
    }

    @Test("a queue emptied of one delay serves another; an old token finds nothing in it")
    func reuse() {
        let timer = DeadlineTimer(resolution: .milliseconds(1), maximumQueues: 1)
        let fired = Mutex<[Int]>([])
        let first = timer.schedule(afterMilliseconds: 10) { fired.withLock { $0.append(1) } }
        #expect(wait { fired.withLock { $0 == [1] } })
        usleep(5_000)
        // The one queue is empty: the new delay takes it over, not the overflow queue.
        let second = timer.schedule(afterMilliseconds: 1000) { fired.withLock { $0.append(2) } }
        #expect(second.rawValue & UInt64(DeadlineTimer.overflowIndex) == first.rawValue & UInt64(DeadlineTimer.overflowIndex))
        timer.cancel(first)  // ran already: cancels nothing, in particular not `second`
        #expect(timer.armedCount == 1)
        #expect(wait { fired.withLock { $0 == [1, 2] } })
    }
}

@Suite("CallThread: in-process provider calls off the reader")
struct CallThreadTests {
    @Test("jobs run one at a time, in submission order, on another thread")
    func order() {
        let thread = CallThread()
        let seen = Mutex<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let caller = pthread_self()
        let onCaller = Atomic<Bool>(false)
        for index in 0..<2_000 {
            thread.submit {
                if running.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                if pthread_equal(pthread_self(), caller) != 0 { onCaller.store(true, ordering: .relaxed) }
                seen.withLock { $0.append(index) }
                running.subtract(1, ordering: .relaxed)
            }
        }
        #expect(wait { seen.withLock { $0.count == 2_000 } })
        #expect(seen.withLock { $0 } == Array(0..<2_000))
        let didOverlap = overlapped.load(ordering: .relaxed)
        let ranOnCaller = onCaller.load(ordering: .relaxed)
        #expect(!didOverlap)
        #expect(!ranOnCaller)
    }

    @Test("a job that blocks does not block submit; later jobs run once it returns")
    func blockedJob() {
        let thread = CallThread()
        let release = Atomic<Bool>(false)
        let done = Mutex<[String]>([])
        thread.submit {
            while !release.load(ordering: .relaxed) { usleep(1000) }
            done.withLock { $0.append("slow") }
        }
        thread.submit { done.withLock { $0.append("next") } }  // returns at once
        usleep(30_000)
        #expect(done.withLock { $0 }.isEmpty)
        release.store(true, ordering: .relaxed)
        #expect(wait { done.withLock { $0.count == 2 } })
        #expect(done.withLock { $0 } == ["slow", "next"])
    }
}

@Suite("CallThread: stopping")
struct CallThreadStopTests {
    @Test("stop lets the queued jobs run, then the thread ends; a never-started one counts as ended")
    func stopAfterJobs() {
        let thread = CallThread()
        let ran = Atomic<Int>(0)
        for _ in 0..<10 {
            thread.submit {
                usleep(2_000)
                ran.add(1, ordering: .relaxed)
            }
        }
        thread.stop()
        #expect(wait { thread.hasExited })
        let count = ran.load(ordering: .relaxed)
        #expect(count == 10)
        let idle = CallThread()
        idle.stop()
        #expect(idle.hasExited)
    }
}

#if os(Linux)
@Suite("Thread names")
struct ThreadNameTests {
    final class Seen: Sendable {
        let name = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
    }

    @Test("a thread started with a name shows it to tools (/proc), cut to 15 bytes")
    func named() {
        let seen = Seen()
        startThread(name: "provider-call-and-more") {
            let path = "/proc/thread-self/comm"  // the calling thread
            let comm = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            seen.name.withLock { $0 = comm }
            seen.done.signal()
        }
        seen.done.wait()
        #expect(seen.name.withLock { $0 } == "provider-call-a")
    }
}
#endif
