import ContextProviderKit
import Logging
import Synchronization

/// A worker's host-request pipe (its fd 3): the worker writes each host request (`host/fetch`)
/// there, framed as its replies are, and the host reads it on the provider's HTTP event loop
/// (`HostRequestStreams`), which checks the request, runs the fetch and writes the answer to
/// the worker's stdin, all on that thread (docs/architecture.md, "Threads").
///
/// The pipe carries host requests and nothing else: junk, a length shorter than a tag or over
/// `RequestEvents.maximumHostRequestBytes`, a tag that is not a request's, or a frame that is not
/// a host request (a response, a notification) kills the worker as a protocol violation, as a
/// broken frame on stdout does (docs/security.md).
extension WorkerConnection {
    /// Starts reading `worker`'s host-request pipe, when it has one.
    func startReadingHostRequests(_ worker: WorkerProcess) {
        guard let streams = hostRequestStreams else { return }
        let reader = HostRequestReader(connection: self, worker: worker)
        let providerID = providerID
        _ = worker.readHostRequests { fd in
            streams.readStream(fd: fd, providerID: providerID, receive: { reader.receive($0) }, ended: {})
        }
    }

    /// A host request read from `worker`'s pipe (on the event loop): handled as one read from
    /// stdout is, for the request `tag` it belongs to (dropped when that request is over).
    func hostRequest(tag: Int64, payload: [UInt8], from worker: WorkerProcess) {
        let events = self.events(of: tag, from: worker)
        payload.withUnsafeBytes { events?.receiveHostRequest($0) }
    }
}

/// Assembles and checks the frames of one worker's host-request pipe; used only on the event
/// loop that reads it (one `receive` at a time).
final class HostRequestReader: @unchecked Sendable {
    private var assembler = FrameAssembler(maximumPayload: RequestEvents.maximumHostRequestBytes)
    private weak var connection: WorkerConnection?
    private let worker: WorkerProcess
    private var stopped = false

    init(connection: WorkerConnection, worker: WorkerProcess) {
        self.connection = connection
        self.worker = worker
    }

    /// Bytes read from the pipe; false (close the pipe) after a violation, or when the
    /// connection is gone.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !stopped else { return false }
        assembler.append(bytes)
        while let event = assembler.next() {
            switch event {
            case .violation(let reason):
                return violation(reason)
            case .frame(let tag, let payload):
                guard tag > 0 else { return violation("a frame with tag \(tag) on the host-request channel") }
                guard payload.withUnsafeBytes({ RequestEvents.isHostRequest($0) }) else {
                    return violation("a frame on the host-request channel that is not a host request")
                }
                guard let connection else {
                    stopped = true
                    return false
                }
                connection.hostRequest(tag: tag, payload: payload, from: worker)
            }
        }
        return true
    }

    private func violation(_ reason: String) -> Bool {
        stopped = true
        let what = reason.hasPrefix("a frame") && !reason.contains("host-request channel") ? reason + " on the host-request channel" : reason
        connection?.logger.warning("Provider \(connection?.providerID ?? "?"): worker \(worker.pid) broke the host-request channel (\(what)); killing it.")
        worker.kill(.protocolViolation(what))
        return false
    }
}
