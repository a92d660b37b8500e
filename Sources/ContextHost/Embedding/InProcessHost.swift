import ContextProtocol
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

/// A ContextHost running inside the app: the whole protocol as typed async calls, with no host
/// process of its own and without touching standard input or output. Providers not trusted to run
/// in-process still run in worker processes (`configuration.isolation`).
///
/// ```swift
/// let host = InProcessHost(configuration: HostConfiguration(manifestDirectories: ["/path/to/manifests"]))
/// _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "my-app"), grantedPermissions: ["network"]))
/// let providers = try await host.providers()
/// ```
///
/// It runs the same handlers as `context-host serve` (lifecycle, limits, validation, waiting for
/// loads, process isolation and sandboxing all apply), called directly: `send` hands the typed
/// request to its handler on the caller's thread (one at a time, as the stdio server's one reader
/// handles messages; handlers never wait), then makes the request's in-process provider calls on
/// that thread too (`InlineCalls`), and the answer comes back as a value — no JSON-RPC
/// envelope, output buffer or response parse in between. The params are written as JSON once, to
/// apply `serve`'s input limits to them (and because an `items/*` provider reads them); a
/// provider's answer is checked as JSON and decoded. Notifications come to `events()`. Two
/// instances in one process are independent, unless both are sessions of one `HostCore`
/// (`init(core:)`), which then share providers and workers but nothing else. Providers with `isolation: in-process` run inside the app; run strangers'
/// providers in workers (`configuration.isolation`).
public final class InProcessHost: ContextHostSession {
    /// The host session behind it (tests look at its providers).
    package let host: Host
    private let tracker: RequestTracker
    private let server: RPCServer
    /// Whether the host was closed; its lock is held while a request is handled, so requests are
    /// handled one at a time, in the order callers send them.
    private let gate: Gate
    /// The next direct request's key in the cancellation table.
    private let nextKey = Atomic<UInt64>(1)

    /// Creates a host. Nothing is loaded until `initialize`.
    ///
    /// - Parameters:
    ///   - configuration: where manifests and libraries are, limits, isolation and state folders.
    ///   - logger: where the host logs (never standard output).
    /// - Throws: `HostConfigurationError` when a manifests folder the configuration names does not
    ///   exist or is not a folder (a host that would silently list no providers), or an isolation
    ///   setting is out of its range (`invalid-setting`).
    public convenience init(configuration: HostConfiguration, logger: Logger = Logger(label: "context-host")) throws(HostConfigurationError) {
        if let invalid = configuration.isolation.outOfRange() { throw invalid }
        let host = Host(configuration: configuration, logger: logger)
        if let missing = host.registry.missingFolders.first {
            throw HostConfigurationError(code: missing.code.rawValue, message: missing.message, hint: missing.hint)
        }
        self.init(host: host)
    }

    /// Creates a session of `core`: from `initialize` on it uses the core's providers (and
    /// workers), shared with the core's other sessions whose clients grant the same permissions,
    /// locale and UI capabilities; its composers, drafts (in memory only), collection sessions and
    /// pending requests are its own. Closing it leaves the others working; the last session of a group to close
    /// stops that group's workers.
    public convenience init(core: HostCore) {
        self.init(host: Host(core: core))
    }

    private init(host: Host) {
        let configuration = host.configuration
        let logger = host.logger
        // The server's output (framed answers and notifications) and the tracker's transport point
        // at each other; the slot is filled right after both exist. Messages are handled one at a
        // time, in the order callers send them, on the caller's thread (as the stdio server's one
        // reader does; handlers never wait, so the lock is held briefly) — no thread hop.
        let serverSlot = Mutex<RPCServer?>(nil)
        // Held while any request is handled, typed (`send`) or JSON (`call`, `close`).
        let gate = Gate()
        let pendingOutput = Mutex<[UInt8]>([])
        // Requests over the message limit are refused before they are sent (as `ContextHostClient`
        // does once it knows the limit); one that got here anyway is discarded as `serve` does.
        let limit = configuration.maximumMessageBytes
        let tracker = RequestTracker(messageLimit: limit, decodeEvent: HostEvent.init(method:params:)) { message in
            guard let server = serverSlot.withLock({ $0 }) else { return false }
            gate.closed.withLock { _ in
                if message.count > limit {
                    server.handle(.oversized(length: message.count))
                } else {
                    server.receive(message)
                }
            }
            return true
        }
        let output = OutputChannel(lateFlushMilliseconds: 1) { bytes in
            // Newline-delimited messages; a write may hold several, or (in principle) part of one.
            var complete: [[UInt8]] = []
            pendingOutput.withLock { pending in
                pending.append(contentsOf: bytes)
                var start = 0
                while let newline = pending[start...].firstIndex(of: 0x0A) {
                    if newline > start { complete.append(Array(pending[start..<newline])) }
                    start = newline + 1
                }
                pending.removeFirst(start)
            }
            for message in complete { tracker.receive(message) }
            return true
        }
        let server = RPCServer(host: host, output: output, logger: logger) { _ in
            // `exit`: the session is over (the process is the app's, so it is not ended).
            host.close()
            tracker.close(ResponseError(code: .connectionClosed, message: "The in-process host was closed."))
        }
        serverSlot.withLock { $0 = server }
        self.gate = gate
        self.host = host
        self.tracker = tracker
        self.server = server
    }

    // The hot methods specialised (an outside caller otherwise runs the generic body: a dynamic
    // cast and generic metadata lookups per call); the generic entry jumps to these on a match.
    @_specialize(exported: false, kind: full, where Request == ItemsPreviewRequest)
    @_specialize(exported: false, kind: full, where Request == ItemsDetailRequest)
    public func send<Request: RequestType>(_ request: Request) async throws(ResponseError) -> Request.Response {
        // `~`: no JSON id looks like this, so a direct key never meets a wire id in the table.
        var keyBytes: [UInt8] = [UInt8(ascii: "~")]
        keyBytes.reserveCapacity(21)
        JSONWriter.appendInteger(Int64(truncatingIfNeeded: nextKey.add(1, ordering: .relaxed).oldValue), to: &keyBytes)
        let key = keyBytes
        let server = server
        let outcome: Result<Request.Response, ResponseError> = await withTaskCancellationHandler {
            // Unchecked: `Reply` resumes exactly once (its own guarantee), so the checked form's
            // per-call canary object would only cost an allocation.
            await withUnsafeContinuation { continuation in
                // Written and checked before the lock: that part reads no host state.
                let params = server.prepare(request)
                let inline = InlineCalls()
                let reply = Reply(key: key, inlineCalls: inline) { answer in
                    continuation.resume(returning: Self.decode(answer, as: Request.self))
                }
                let refused = gate.closed.withLock { closed -> Bool in
                    if closed { return true }
                    server.dispatch(typed: request, params: params, reply: reply)
                    return false
                }
                if refused { reply.sendError(ResponseError(code: .connectionClosed, message: "The in-process host was closed.")) }
                // Its in-process provider calls, made here, outside the lock: a provider that
                // answers inside `call` resumes this continuation before the task suspends.
                inline.runAndClose()
            }
        } onCancel: {
            server.cancel(idText: String(decoding: key, as: UTF8.self))
        }
        return try outcome.get()
    }

    /// The caller's result from a direct answer: a typed value as it is, host-made JSON or a
    /// provider's checked bytes decoded as `Request.Response`.
    private static func decode<Request: RequestType>(_ answer: Reply.Answer, as: Request.Type) -> Result<Request.Response, ResponseError> {
        let json: JSONValue
        switch answer {
        case .error(let error):
            return .failure(error)
        case .value(let value):
            if let typed = value as? Request.Response { return .success(typed) }
            json = value.json
        case .json(let value):
            json = value
        case .raw(let bytes):
            // A chip (the hot path) straight from the text; the tree decides anything unusual.
            if Request.Response.self == ContextChip.self,
                let chip = bytes.withUnsafeBytes(ContextChip.init(text:)), let typed = chip as? Request.Response
            {
                return .success(typed)
            }
            do throws(JSONParseError) {
                json = try JSONReader.parse(bytes)
            } catch {
                return .failure(ResponseError(code: .invalidResponse, message: "The host's answer to \(Request.method) is not JSON: \(error)"))
            }
        }
        do throws(JSONDecodeError) {
            return .success(try Request.Response(json: json, path: "result"))
        } catch {
            return .failure(ResponseError(
                code: .invalidResponse, message: "The host's answer to \(Request.method) does not match its result type: \(error)"))
        }
    }

    public func events() -> AsyncStream<HostEvent> {
        tracker.events()
    }

    /// Sends a request by name and returns its raw result (tests, and clients that keep JSON).
    package func call(method: String, params: JSONValue) async throws(ResponseError) -> JSONValue {
        try await tracker.call(method: method, params: params)
    }

    public func close() async {
        let first = gate.closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        _ = try? await tracker.send(ShutdownRequest())
        tracker.notify(method: ContextProtocol.ExitNotification.method, params: nil)
        // `exit` is handled on the reader; wait for it so the workers are stopped on return.
        while !tracker.isClosed { try? await Task.sleep(for: .milliseconds(1)) }
    }

    deinit {
        if !tracker.isClosed {
            host.close()
            tracker.close(ResponseError(code: .connectionClosed, message: "The in-process host was released."))
        }
    }
}

/// Whether an in-process host was closed, behind the lock its requests are handled under.
private final class Gate: Sendable {
    let closed = Mutex(false)
}
