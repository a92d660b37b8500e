#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `first` on a thread of its own while `second` runs on the calling thread, and returns both
/// results once both are done; with `when: false` (work too small to be worth a thread) both run
/// on the calling thread, one after the other.
///
/// A thread is started for each call (~50 µs) rather than borrowed from Dispatch: a pool busy with
/// other work would run the two one after the other, and the caller (host start-up, a reload) is
/// rare enough that the start costs nothing that matters.
func sideBySide<First: Sendable, Second>(
    when parallel: Bool = true, _ first: @Sendable () -> First, _ second: () -> Second
) -> (First, Second) {
    guard parallel else { return (first(), second()) }
    var firstResult: First?
    let secondResult = withoutActuallyEscaping(first) { first in
        withUnsafeMutablePointer(to: &firstResult) { slot in
            // `slot` is written by the thread alone, and read only after it has been joined.
            let job = Unmanaged.passRetained(SideBySideJob { slot.pointee = first() })
            var thread = pthread_t()
            let status = pthread_create(&thread, nil, { job in
                Unmanaged<SideBySideJob>.fromOpaque(job!).takeRetainedValue().body()
                return nil
            }, job.toOpaque())
            guard status == 0 else {  // no thread to be had: one after the other, here
                job.release()
                slot.pointee = first()
                return second()
            }
            let result = second()
            pthread_join(thread, nil)
            return result
        }
    }
    return (firstResult!, secondResult)
}

/// `sideBySide`'s work for the other thread.
private final class SideBySideJob {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
