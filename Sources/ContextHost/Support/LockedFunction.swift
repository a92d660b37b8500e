/// A closure to keep in a `Mutex`: `Mutex<LockedFunction<F>?>`, never `Mutex<F?>`.
///
/// `Mutex` stores its value generically. When that value is itself a closure (or an optional
/// one), each `withLock` converts it to the caller's concrete form and, because the body takes it
/// `inout`, converts it back and stores the result: every read wraps the stored closure in two
/// more reabstraction thunks. A closure read once per request then grows a chain that every call
/// walks (a host serving 200,000 previews in-process slowed from ~40 µs to ~700 µs of CPU per
/// preview). A generic struct around the closure has one layout in both forms, so nothing is
/// converted or written back. `LockedFunctionTests` checks the depth stays the same.
package struct LockedFunction<Function: Sendable>: Sendable {
    /// The closure.
    package let function: Function

    package init(_ function: Function) { self.function = function }
}
