// Calling a provider that lives in the host process: the connection (`InProcessConnection`),
// then the call runtime of one host's in-process providers and its parts, in the order a call
// meets them: where calls run (`CallThread`, one per in-process provider, running its jobs in the
// runtime's batch scope), what waits for an answer (`ReplyTable`, and `replyCallback`, the C
// callback providers answer through), how answers reach the stdio reader while it is awake
// (`ReplyRelay`), and the message buffers those threads hand each other (`MessageBuffers`).

import CContextProvider
import ContextProviderKit
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects the JSON error an `open` call reports.
private final class OpenErrorBox {
    var bytes: [UInt8] = []
}

private let openErrorCallback: ctxp_reply_fn = { context, bytes, length in
    guard let context, let bytes else { return }
    let box = Unmanaged<OpenErrorBox>.fromOpaque(context).takeUnretainedValue()
    box.bytes = Array(UnsafeRawBufferPointer(start: bytes, count: length))
}

/// A provider instance living in the host process.
package final class InProcessConnection: ProviderConnection, @unchecked Sendable {
    package let library: ProviderLibrary
    private let instance: UnsafeMutableRawPointer?
    /// Requests run on a thread of their own, in order: the reader goes on reading while the
    /// provider works (two cores share a pipelined load), and a provider stuck inside `call` holds
    /// up only its own requests, which then time out, instead of the whole host. (A second thread
    /// per provider was measured: lock contention made it slower on two cores.)
    private let calls: CallThread
    /// The host's call runtime (its table of waiting requests, reply limit and batching).
    private let runtime: CallRuntime
    /// Request messages, reused.
    private let buffers = MessageBuffers()

    /// Opens an instance with the init JSON.
    ///
    /// - Parameter runtime: the host's call runtime: its table of waiting requests, its reply
    ///   limit (larger replies become `-32014` errors) and its reply batching. Default: a private
    ///   one with no limit (tests, the conformance runner).
    package init(library: ProviderLibrary, initJSON: [UInt8], runtime: CallRuntime = CallRuntime()) throws(LoadError) {
        self.library = library
        self.runtime = runtime
        self.owner = runtime.replies.newOwner()
        self.calls = CallThread(runtime: runtime)
        self.instance = try Self.openInstance(library: library, initJSON: initJSON)
    }

    /// The last step of the C ABI's lifecycle: `close`, once (a hot reload replaced or removed the
    /// provider, or a test or the conformance runner is done with it).
    ///
    /// Nothing can still be queued or inside `call`: every queued request holds this connection.
    /// A request the provider has not answered yet would normally hold it too (its completion or
    /// its deadline does); any that does not is answered `-32011` just before `close`, so no
    /// completion is lost. Both run on another thread: the last reference may go inside a reply
    /// callback or on the call thread, and a provider's `close` waits for its callbacks in
    /// progress (the SDK's does), which could then wait for itself. The library stays loaded for
    /// the process's life, so its table outlives the instance.
    deinit {
        calls.stop()
        let library = library
        let address = Int(bitPattern: instance)
        let owner = owner
        let runtime = runtime
        // A thread of its own, not Dispatch's pool: the SDK's `close` spins while a reply callback
        // runs elsewhere, and the pool's threads also carry the host's timeouts. The owed
        // requests are failed there too, since their completions take locks (the deadline
        // timer's) that the thread dropping the last reference may hold.
        startThread(name: "provider-close") {
            runtime.replies.failAll(
                owner: owner,
                RPCError(.providerUnavailable, "The provider's instance was closed before it answered (a reload replaced or removed the provider); send the request again."))
            library.table.pointee.close(UnsafeMutableRawPointer(bitPattern: address))
        }
    }

    /// How many calls went to the provider's call thread (for tests: the rest were made inline).
    package var queuedCallCount: Int { calls.submittedCount }

    /// This connection's key in the runtime's table of waiting requests: never reused, so
    /// failing a closed connection's requests later cannot touch a newer connection's.
    private let owner: UInt

    /// Calls the provider's `open`; its reported error becomes a `provider-open-failed` LoadError.
    package static func openInstance(library: ProviderLibrary, initJSON: [UInt8]) throws(LoadError) -> UnsafeMutableRawPointer? {
        let box = OpenErrorBox()
        var instance: UnsafeMutableRawPointer?
        let status = initJSON.withUnsafeBufferPointer { buffer in
            library.table.pointee.open(buffer.baseAddress, buffer.count, &instance, openErrorCallback, Unmanaged.passUnretained(box).toOpaque())
        }
        guard status == CTXP_OK else {
            let reported = try? JSONValue(parsing: box.bytes)
            let message = reported?["message"]?.stringValue ?? "The provider refused to open and gave no reason."
            let hint = reported?["hint"]?.stringValue ?? "Check the provider's settings in the host configuration."
            throw LoadError(code: "provider-open-failed", message: message, hint: hint)
        }
        return instance
    }

    @discardableResult
    package func send(
        method: String, params: ParamsWriter,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        send(method: method, params: params, events: nil, completion: completion)
    }

    @discardableResult
    package func send(
        method: String, params: ParamsWriter, events: RequestEvents?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        send(method: method, params: params, events: events, inline: nil, completion: completion)
    }

    /// `send`, with the provider's `call` made by the caller (`inline`, an `InProcessHost`
    /// request) when it still takes calls, else on the call thread.
    @discardableResult
    package func send(
        method: String, params: ParamsWriter, events: RequestEvents?, inline: InlineCalls?,
        completion: @escaping @Sendable (ProviderResponse) -> Void
    ) -> Int64 {
        let events = events ?? RequestEvents.withoutHostRequests(providerID: library.path, sentOn: self)
        let id = runtime.replies.register(ReplyTable.Waiting(
            completion: completion, expected: ReplyRouter.Expected(method: method, forCaller: inline != nil), owner: owner, events: events,
            relay: runtime.relay, maximumBytes: runtime.maximumReplyBytes))
        var bytes = buffers.take()
        ProviderMessage.write(id: id, method: method, params: params, into: &bytes)
        let queued = QueuedCall(connection: self, id: id, message: bytes)
        if let inline, inline.take({ queued.run() }) { return id }
        calls.submit { queued.run() }  // (captures only `queued`: no closure context)
        return id
    }

    /// One request waiting for the call thread, which takes the message out (so the buffer is
    /// uniquely referenced again when it is given back).
    private final class QueuedCall: @unchecked Sendable {
        let connection: InProcessConnection
        let id: Int64
        /// Taken by `run`, on the call thread.
        var message: [UInt8]

        init(connection: InProcessConnection, id: Int64, message: [UInt8]) {
            self.connection = connection
            self.id = id
            self.message = message
        }

        func run() {
            var message: [UInt8] = []
            swap(&message, &self.message)
            connection.call(id: id, message: message)
        }
    }

    /// Hands one request to the provider's `call` (on the call thread).
    private func call(id: Int64, message: consuming [UInt8]) {
        // Cancelled or timed out while queued: nobody waits for the answer.
        if runtime.replies.isPending(id) {
            message.withUnsafeBufferPointer { buffer in
                library.table.pointee.call(instance, buffer.baseAddress, buffer.count, replyCallback, runtime.replies.token(for: id))
            }
        }
        buffers.giveBack(message)
    }

    /// The host's answer to a provider's host request, through `call` without a reply callback
    /// (as `$/cancelRequest`).
    package func answerProviderRequest(_ answer: DeferredJSON) {
        answer.bytes.withUnsafeBufferPointer { buffer in
            library.table.pointee.call(instance, buffer.baseAddress, buffer.count, nil, nil)
        }
    }

    package func cancel(_ id: Int64) {
        let message = ProviderMessage.cancel(id: id)
        message.withUnsafeBufferPointer { buffer in
            library.table.pointee.call(instance, buffer.baseAddress, buffer.count, nil, nil)
        }
        runtime.replies.fail(id, RPCError(.requestCancelled, "Request cancelled"))
    }
}

// MARK: - The call runtime

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

// MARK: - Where calls run

/// A thread that runs submitted jobs one at a time, in submission order.
///
/// In-process providers are called from one of these (one per provider) rather than from the
/// reader: the reader parses the next requests while a provider works on earlier ones, and a
/// provider stuck in `call` delays only its own requests. A busy thread takes new jobs in batches
/// without being woken; only a thread that went to sleep costs a wake-up.
package final class CallThread: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`.
    private var jobs: [Action] = []
    private var sleeping = false
    private var started = false
    private var stopping = false
    private var exited = false
    private var submitted = 0

    /// How many queued jobs run in one batch scope (`CallRuntime.inBatch`). Small groups keep answers flowing to a
    /// pipelining client (it sends more work as answers arrive): with 64 `items/preview` in flight,
    /// groups of 8 did 111k/s against 106k/s for 32 (mean of interleaved rpcload runs, 2026-11-22),
    /// at one write per 8 answers.
    static let groupSize = 8

    /// The host's call runtime, whose batch scope wraps each group of jobs (the stdio server
    /// buffers replies: one write per group).
    private let runtime: CallRuntime?

    package init(runtime: CallRuntime? = nil) {
        self.runtime = runtime
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    /// Queues `job`; the thread starts with the first one.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(Action(job))
        submitted &+= 1
        if !started {
            started = true
            startThread(name: "provider-call") { [self] in run() }
        } else if sleeping {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
    }

    /// Lets the jobs already queued run, then ends the thread (the owner is going away: a provider
    /// replaced by a hot reload).
    package func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        if sleeping { pthread_cond_signal(condition) }
        if !started { exited = true }
        pthread_mutex_unlock(mutex)
    }

    /// How many jobs were queued on it (for tests).
    package var submittedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return submitted
    }

    /// Whether the thread has ended after `stop` (for tests).
    package var hasExited: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return exited
    }

    private func run() {
        var batch: [Action] = []
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty, !stopping {
                sleeping = true
                pthread_cond_wait(condition, mutex)
            }
            if jobs.isEmpty {  // stopping, and nothing left
                exited = true
                pthread_mutex_unlock(mutex)
                return
            }
            sleeping = false
            swap(&batch, &jobs)
            pthread_mutex_unlock(mutex)
            // Replies go out in groups of `groupSize`: fewer writes, while the client already
            // gets (and sends more) work before the whole batch is done.
            var start = 0
            while start < batch.count {
                let end = min(batch.count, start + Self.groupSize)
                if let runtime {
                    runtime.inBatch { for job in batch[start..<end] { job.run() } }
                } else {
                    for job in batch[start..<end] { job.run() }
                }
                start = end
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

// MARK: - What waits for an answer

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

// MARK: - Answers handed to the reader

/// Hands the host's share of in-process providers' answers (checking each reply, writing the
/// client's answer) to the reader thread while that thread is awake anyway.
///
/// An in-process provider answers on its call thread, from inside `call`. Under a pipelined load
/// that thread is the busiest: it runs the provider, then checks and writes each reply, while the
/// reader, which only parses requests, has time to spare. So while the reader works through a
/// chunk of input (`readerWakes` … `drain`), a call thread copies each answer into a queue
/// (`offer`) and goes on to its next request; the reader delivers the queue after each message it
/// handles (`deliverQueued`) and before it reads again. While the reader waits for input, call
/// threads deliver answers themselves, as without a relay, so a lone request never waits for a
/// thread to wake up.
///
/// The rule this adds: **nothing may wait on the reader thread for an in-process provider's
/// answer** (it would wait until that answer's timeout). Handlers already never wait there.
///
/// One per host (`CallRuntime.relay`). Only the stdio server's reader drives it; with no reader,
/// `offer` always declines.
package final class ReplyRelay: Sendable {
    /// An answer taken off a call thread: what waited for it, and a copy of its bytes.
    struct Relayed {
        let id: Int64
        let waiting: ReplyTable.Waiting
        var bytes: [UInt8]
    }

    private struct State {
        var readerBusy = false
        var queue: [Relayed] = []
    }

    private let state = Mutex(State())
    /// `state.readerBusy` as last set, read without the lock: `offer` declines at once while the
    /// reader is idle (and checks again under the lock otherwise).
    private let readerBusyHint = Atomic<Bool>(false)
    /// Whether the queue may hold answers, read without the lock (`deliverQueued` returns at once
    /// when it does not).
    private let queuedHint = Atomic<Bool>(false)
    /// Copies of answers, reused.
    private let buffers = MessageBuffers()

    /// Answers longer than this are delivered where they arrive, not copied.
    static let largestRelayed = 64 << 10

    package init() {}

    /// Queues an answer for the reader if the reader is busy (true); false if the caller must
    /// deliver it itself. `bytes` are the provider's, valid only during this call.
    func offer(id: Int64, waiting: ReplyTable.Waiting, bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= Self.largestRelayed, readerBusyHint.load(ordering: .relaxed) else { return false }
        var copy = buffers.take()
        copy.append(contentsOf: bytes)
        let queued = state.withLock { state -> Bool in
            guard state.readerBusy else { return false }
            state.queue.append(Relayed(id: id, waiting: waiting, bytes: copy))
            queuedHint.store(true, ordering: .relaxed)
            return true
        }
        if !queued {
            // The reader went idle meanwhile.
            buffers.giveBack(copy)
            return false
        }
        return true
    }

    /// The reader starts on a chunk of input: answers are queued for it from now on.
    package func readerWakes() {
        state.withLock { state in
            state.readerBusy = true
            readerBusyHint.store(true, ordering: .relaxed)
        }
    }

    /// Delivers the answers queued so far; the reader stays busy. The reader calls it after each
    /// message, so an answer waits at most for the message being handled, not for the whole
    /// chunk of input.
    package func deliverQueued() {
        guard queuedHint.load(ordering: .relaxed) else { return }
        deliver(goingIdle: false)
    }

    /// The reader is done with its input: delivers every queued answer, including those queued
    /// meanwhile, then lets call threads deliver their own again.
    package func drain() {
        deliver(goingIdle: true)
    }

    private func deliver(goingIdle: Bool) {
        var batch: [Relayed] = []
        while true {
            state.withLock { state in
                swap(&batch, &state.queue)
                queuedHint.store(false, ordering: .relaxed)
                if batch.isEmpty, goingIdle {
                    state.readerBusy = false
                    readerBusyHint.store(false, ordering: .relaxed)
                }
            }
            if batch.isEmpty { return }
            for index in batch.indices {
                // Taken out of the entry, so the buffer goes back to `buffers` unshared.
                var bytes: [UInt8] = []
                swap(&bytes, &batch[index].bytes)
                bytes.withUnsafeBytes { ReplyRouter.deliverInProcess($0, id: batch[index].id, waiting: batch[index].waiting) }
                buffers.giveBack(bytes)
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// How many answers wait for the reader (for tests).
    var queuedCount: Int { state.withLock { $0.queue.count } }
}

// MARK: - Message buffers

/// Message buffers handed back and forth between threads, so a message costs no allocation of its
/// own (and no memory freed on another thread than the one that allocated it, which glibc's
/// allocator makes slow under contention): provider requests from the thread that writes them to
/// the thread that calls the provider, and `ReplyRelay`'s copies of answers from a call thread to
/// the reader.
package final class MessageBuffers: Sendable {
    private struct Spare {
        var buffers: [[UInt8]] = []
        /// The capacity of `buffers`, added up.
        var bytes = 0
    }

    private let spare = Mutex(Spare())
    /// At most this many buffers, of this many bytes in all, are kept; a buffer larger than
    /// `keptCapacity` never is. (An `item/previewMany` of a composer's items, or its answer, is
    /// tens of KB: reusing such a buffer saves allocating and growing one each time, while the
    /// byte cap bounds what one burst of large messages leaves behind.)
    static let keptCount = 64, keptCapacity = 64 << 10, keptBytes = 1 << 20

    package init() {}

    /// An empty buffer, reused if one is spare.
    package func take() -> [UInt8] {
        spare.withLock { spare in
            guard let buffer = spare.buffers.popLast() else { return nil }
            spare.bytes -= buffer.capacity
            return buffer
        } ?? []
    }

    /// Gives a buffer back for reuse (dropped if it grew too large or enough are kept).
    package func giveBack(_ buffer: consuming [UInt8]) {
        var buffer = buffer
        guard buffer.capacity <= Self.keptCapacity else { return }
        buffer.removeAll(keepingCapacity: true)
        spare.withLock { spare in
            guard spare.buffers.count < Self.keptCount, spare.bytes + buffer.capacity <= Self.keptBytes else { return }
            spare.bytes += buffer.capacity
            spare.buffers.append(buffer)
        }
    }

    /// The capacity of the buffers kept, added up (for tests).
    var keptByteCount: Int { spare.withLock { $0.bytes } }
}
