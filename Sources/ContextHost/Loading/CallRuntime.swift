import CContextProvider
import Synchronization

/// What one host's calls to its in-process providers share: the table of requests waiting for an
/// answer, the largest answer accepted, the reader's relay and how call threads batch their
/// replies. A host owns one (`Host.calls`) and passes it to every connection it opens, so two
/// hosts in one process share nothing on the request path but the deadline timer (which holds no
/// host state).
package final class CallRuntime: Sendable {
    /// The requests this host's in-process providers still owe an answer.
    package let replies: ReplyTable
    /// Answers larger than this become `-32014` errors (the host's message limit).
    package let maximumReplyBytes: Int
    /// Hands answers to the stdio server's reader while it is awake (`ReplyRelay`). Only a reader
    /// drives it; without one (an `InProcessHost`) it always declines.
    package let relay = ReplyRelay()
    /// Wraps each group of jobs a call thread runs (the stdio server buffers the group's replies:
    /// one write per group). nil: no wrapping.
    private let batchScope = Mutex<LockedFunction<@Sendable (() -> Void) -> Void>?>(nil)
    /// Whether `batchScope` is set, read without the lock on every group.
    private let hasBatchScope = Atomic<Bool>(false)

    /// - Parameter maximumReplyBytes: the largest answer an in-process provider may send.
    package init(maximumReplyBytes: Int = .max) {
        self.maximumReplyBytes = maximumReplyBytes
        self.replies = ReplyTable.checkOut()
    }

    deinit {
        replies.checkIn()
    }

    /// Sets what wraps each group of jobs on this host's call threads.
    package func setBatchScope(_ scope: @escaping @Sendable (() -> Void) -> Void) {
        batchScope.withLock { $0 = LockedFunction(scope) }
        hasBatchScope.store(true, ordering: .releasing)
    }

    /// Runs `body` in the batch scope, if one is set.
    func inBatch(_ body: () -> Void) {
        guard hasBatchScope.load(ordering: .acquiring), let scope = batchScope.withLock({ $0 }) else { return body() }
        scope.function(body)
    }
}

/// The requests one host's in-process providers still owe an answer, by request id.
///
/// The C `reply_context` a provider answers with carries a token (this table's slot and the
/// request id) rather than a pointer, so a provider that answers twice, answers a request that
/// timed out, or answers after its host is gone cannot make the host touch freed memory.
///
/// Tables are never freed: a host's table goes back to a pool when its `CallRuntime` goes, and
/// the next host takes it with its ids still counting on, so a late answer to a request of the
/// old host finds nothing waiting and is dropped. The slot directory is written once per table
/// (when it is made) and only read on the request path.
package final class ReplyTable: Sendable {
    package typealias Completion = @Sendable (ProviderResponse) -> Void

    /// A request waiting for its answer.
    struct Waiting {
        let completion: Completion
        let expected: ReplyRouter.Expected
        /// The connection that sent it (its never-reused key; 0 for none), so a connection that
        /// goes away can answer what it still owes (`failAll(owner:)`).
        var owner: UInt = 0
        /// Where the provider's notifications for it go.
        var events: RequestEvents? = nil
        /// The relay of the host that sent it (nil: delivered where it arrives).
        var relay: ReplyRelay? = nil
        /// The largest answer accepted.
        var maximumBytes: Int = .max
    }

    private struct State {
        var pending: [Int64: Waiting] = [:]
        var nextID: Int64 = 1
        var nextOwner: UInt = 1
    }

    /// Bits of a token that carry the request id; the slot sits above them.
    static let idBits = 44
    static let idMask: Int64 = (1 << idBits) - 1
    /// How many tables a process can have at once (hosts alive together, plus private runtimes).
    static let slotCount = 1 << 18

    /// This table's index in `directory`.
    let slot: Int
    private let state = Mutex(State())

    private init(slot: Int) {
        self.slot = slot
    }

    // MARK: The directory

    /// Every table ever made, by slot: written once per slot, before any token for it exists.
    private nonisolated(unsafe) static let directory: UnsafeMutablePointer<Unmanaged<ReplyTable>?> = {
        let slots = UnsafeMutablePointer<Unmanaged<ReplyTable>?>.allocate(capacity: slotCount)
        slots.initialize(repeating: nil, count: slotCount)
        return slots
    }()

    /// Tables no runtime holds, and how many slots are used. Touched when a host is made or goes,
    /// never on the request path.
    private static let pool = Mutex<(free: [ReplyTable], used: Int)>(([], 0))

    /// A table for a new runtime: a free one, else a new one (kept for the life of the process).
    static func checkOut() -> ReplyTable {
        pool.withLock { pool in
            if let table = pool.free.popLast() { return table }
            precondition(pool.used < slotCount, "More than \(slotCount) hosts are open in this process.")
            let table = ReplyTable(slot: pool.used)
            directory[pool.used] = Unmanaged.passRetained(table)
            pool.used += 1
            return table
        }
    }

    /// Gives the table back (its runtime is gone). What still waits is answered first.
    func checkIn() {
        let owed: [Waiting] = state.withLock { state in
            defer { state.pending.removeAll() }
            return Array(state.pending.values)
        }
        Self.fail(owed, RPCError(.providerUnavailable, "The host was closed before the provider answered."))
        Self.pool.withLock { $0.free.append(self) }
    }

    /// The table a reply token names, and the request id in it.
    static func resolve(_ token: UnsafeMutableRawPointer?) -> (ReplyTable, Int64)? {
        let value = Int64(Int(bitPattern: token))
        let slot = Int(truncatingIfNeeded: value >> idBits)
        guard value > 0, slot < slotCount, let table = directory[slot] else { return nil }
        return (table.takeUnretainedValue(), value & idMask)
    }

    /// The `reply_context` for request `id` of this table.
    func token(for id: Int64) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: Int(truncatingIfNeeded: Int64(slot) << Self.idBits | id))
    }

    // MARK: Requests

    /// A never-reused key for a connection's requests in this table.
    func newOwner() -> UInt {
        state.withLock { state in
            defer { state.nextOwner &+= 1 }
            return state.nextOwner
        }
    }

    /// Records a request; returns its id (positive, below 2^44).
    func register(_ waiting: Waiting) -> Int64 {
        state.withLock { state in
            let id = state.nextID
            // Past 2^44 ids (months of requests at a million a second) they start again at 1.
            state.nextID = id >= Self.idMask ? 1 : id + 1
            state.pending[id] = waiting
            return id
        }
    }

    /// Where request `id`'s notifications go, while it waits for its answer.
    func events(_ id: Int64) -> RequestEvents? {
        state.withLock { $0.pending[id]?.events }
    }

    /// Whether `id` still waits for its answer.
    func isPending(_ id: Int64) -> Bool {
        state.withLock { $0.pending[id] != nil }
    }

    /// Removes and returns what waits for `id`, or nil if it was already answered.
    func take(_ id: Int64) -> Waiting? {
        state.withLock { $0.pending.removeValue(forKey: id) }
    }

    /// Completes `id` with a host-made error (cancel, timeout, crash), if still pending.
    func fail(_ id: Int64, _ error: RPCError) {
        guard let waiting = take(id) else { return }
        Self.fail([waiting], error)
    }

    /// Completes every request `owner` sent that still waits, with `error` (a host-made error);
    /// returns how many there were.
    @discardableResult
    func failAll(owner: UInt, _ error: RPCError) -> Int {
        let owed: [Waiting] = state.withLock { state in
            let ids = state.pending.compactMap { $0.value.owner == owner ? $0.key : nil }
            return ids.compactMap { state.pending.removeValue(forKey: $0) }
        }
        Self.fail(owed, error)
        return owed.count
    }

    private static func fail(_ owed: [Waiting], _ error: RPCError) {
        let empty: [UInt8] = []
        empty.withUnsafeBytes { buffer in
            for waiting in owed {
                waiting.completion(ProviderResponse(bytes: buffer, result: nil, error: error, errorIsFromHost: true))
            }
        }
    }

    /// How many requests wait (for tests).
    var pendingCount: Int { state.withLock { $0.pending.count } }
}

/// The C callback every in-process provider instance answers through.
let replyCallback: ctxp_reply_fn = { context, bytes, length in
    guard let (table, id) = ReplyTable.resolve(context) else { return }
    let reply = UnsafeRawBufferPointer(start: bytes, count: length)
    // A notification before the response (`$/progress`, `$/log`): the request still waits.
    if RequestEvents.isNotification(reply) {
        table.events(id)?.receive(reply)
        return
    }
    // A request to the host (`host/fetch`) before the response: answered through `call`.
    if RequestEvents.isHostRequest(reply) {
        table.events(id)?.receiveHostRequest(reply)
        return
    }
    guard let waiting = table.take(id) else { return }  // late or duplicate answer: dropped
    // While the host's reader is awake, it takes over the rest (`ReplyRelay`).
    if let relay = waiting.relay, relay.offer(id: id, waiting: waiting, bytes: reply) { return }
    ReplyRouter.deliverInProcess(reply, id: id, waiting: waiting)
}
