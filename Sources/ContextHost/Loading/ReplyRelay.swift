import Synchronization

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
