import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ContextHost

@Suite("Side by side")
struct SideBySideTests {
    @Test("both results come back, whichever finishes first, run together or one after the other")
    func bothResults() {
        for parallel in [true, false] {
            let (text, numbers) = sideBySide(when: parallel, { String(repeating: "a", count: 3) }, { Array(1...1000) })
            #expect(text == "aaa")
            #expect(numbers.count == 1000 && numbers.last == 1000)
            // The first one slower: the second's result is still kept.
            let (slow, fast) = sideBySide(when: parallel, { usleep(20_000); return 1 }, { 2 })
            #expect(slow == 1 && fast == 2)
        }
    }

    @Test("with when: false both run on the calling thread, first then second")
    func inOrderOnTheCallingThread() {
        let caller = pthread_self()
        let order = Mutex<[String]>([])
        let (first, second) = sideBySide(
            when: false, { order.withLock { $0.append("first") }; return pthread_equal(pthread_self(), caller) != 0 },
            { order.withLock { $0.append("second") }; return pthread_equal(pthread_self(), caller) != 0 })
        #expect(order.withLock { $0 } == ["first", "second"])
        #expect(first && second)
    }

    @Test("with when: true the two run at the same time: each sees the other start")
    func atTheSameTime() {
        let firstStarted = DispatchSemaphore(value: 0)
        let secondStarted = DispatchSemaphore(value: 0)
        let caller = pthread_self()
        // Each waits (at most 10 s, so one after the other fails rather than hangs) for the other.
        let (first, second) = sideBySide(
            { firstStarted.signal(); return (secondStarted.wait(timeout: .now() + 10) == .success, pthread_equal(pthread_self(), caller) != 0) },
            { secondStarted.signal(); return (firstStarted.wait(timeout: .now() + 10) == .success, pthread_equal(pthread_self(), caller) != 0) })
        #expect(first.0 && second.0)
        #expect(!first.1 && second.1, "the first on a thread of its own, the second on the caller's")
    }
}
