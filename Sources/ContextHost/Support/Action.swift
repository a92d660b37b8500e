/// A closure to keep in a collection or a lock, for paths that run once per request.
///
/// A bare function type stored in a generic container (`Array`, `Dictionary`, `Mutex`) is kept
/// in its most general form, and converting a closure to that form allocates a thunk each time
/// one is stored. Wrapped in this struct, the closure keeps its own form: storing it costs
/// nothing, and a closure that captures one object has that object as its context.
struct Action: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
