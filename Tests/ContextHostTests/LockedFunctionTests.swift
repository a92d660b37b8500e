import Synchronization
import Testing

@testable import ContextHost

/// A closure kept in a `Mutex` must not grow with each read: `Mutex<F?>` re-wraps the stored
/// closure in reabstraction thunks on every `withLock`, so a call through it walks one more pair
/// of frames each time (the in-process stdio host slowed from ~40 µs to ~700 µs of CPU per
/// `items/preview` over 200,000 of them, and the chain only ends in a stack overflow).
/// Depth is read as the distance on the stack between the caller and the closure's body.
@Suite("Closures kept in a Mutex")
struct LockedFunctionTests {
    /// The address of a local in a frame of its own (the stack grows down).
    @inline(never)
    static func stackAddress() -> UInt {
        var marker = 0
        return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
    }

    @Test("the host's batch scope is called through the same depth on the 1,000th group as on the first")
    func batchScopeKeepsItsDepth() {
        let runtime = CallRuntime()
        runtime.setBatchScope { body in body() }
        var depths: [UInt] = []
        for _ in 0..<1000 {
            let outer = Self.stackAddress()
            runtime.inBatch { depths.append(outer &- Self.stackAddress()) }
        }
        #expect(depths.count == 1000)
        #expect(depths.first == depths.last, "depth went from \(depths.first ?? 0) to \(depths.last ?? 0) bytes")
    }

    @Test("control: the same closure stored as Mutex<F?> is called through a deeper stack after each read")
    func optionalClosureGrows() {
        let raw = Mutex<(@Sendable (() -> Void) -> Void)?>({ body in body() })
        var depths: [UInt] = []
        for _ in 0..<1000 {
            let outer = Self.stackAddress()
            raw.withLock({ $0 })?({ depths.append(outer &- Self.stackAddress()) })
        }
        #expect(depths.count == 1000)
        #expect((depths.last ?? 0) > (depths.first ?? 0) + 50_000, "depth went from \(depths.first ?? 0) to \(depths.last ?? 0) bytes")
    }
}
