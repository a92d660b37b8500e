import ContextProtocol
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

/// A ContextHost running inside the app: the whole protocol as typed async calls, with no child
/// process and without touching standard input or output.
///
/// ```swift
/// let host = InProcessHost(configuration: HostConfiguration(manifestDirectories: ["/path/to/manifests"]))
/// _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "my-app"), grantedPermissions: ["network"]))
/// let providers = try await host.providers()
/// ```
///
/// It runs the same dispatcher as `context-host serve` (limits, validation, waiting for loads,
/// process isolation and sandboxing all apply), reached through an in-memory connection instead
/// of a pipe: requests go in as JSON-RPC messages, handled one at a time on the caller's thread (as
/// the stdio server's one reader handles them; handlers never wait), and answers and notifications
/// come back to `send` and `events()`. Two instances in one process
/// are independent. Providers with `isolation: in-process` run inside the app; run strangers'
/// providers in workers (`configuration.isolation`).
public final class InProcessHost: ContextHostSession {
    private let host: Host
    private let tracker: RequestTracker
    private let server: RPCServer
    private let closed = Mutex(false)

    /// Creates a host. Nothing is loaded until `initialize`.
    ///
    /// - Parameters:
    ///   - configuration: where manifests and libraries are, limits, isolation and state folders.
    ///   - logger: where the host logs (never standard output).
    /// - Throws: `HostConfigurationError` when a manifests folder the configuration names does not
    ///   exist or is not a folder (a host that would silently list no providers).
    public init(configuration: HostConfiguration, logger: Logger = Logger(label: "context-host")) throws(HostConfigurationError) {
        let host = Host(configuration: configuration, logger: logger)
        if let missing = host.registry.missingFolders.first {
            throw HostConfigurationError(code: missing.code.rawValue, message: missing.message, hint: missing.hint)
        }
        // The server's output (framed answers and notifications) and the tracker's transport point
        // at each other; the slot is filled right after both exist. Messages are handled one at a
        // time, in the order callers send them, on the caller's thread (as the stdio server's one
        // reader does; handlers never wait, so the lock is held briefly) — no thread hop.
        let serverSlot = Mutex<RPCServer?>(nil)
        let pendingOutput = Mutex<[UInt8]>([])
        // Requests over the message limit are refused before they are sent (as `ContextHostClient`
        // does once it knows the limit); one that got here anyway is discarded as `serve` does.
        let limit = configuration.maximumMessageBytes
        let tracker = RequestTracker(messageLimit: limit, decodeEvent: HostEvent.init(method:params:)) { message in
            serverSlot.withLock { server in
                guard let server else { return false }
                if message.count > limit {
                    server.handle(.oversized(length: message.count))
                } else {
                    server.receive(message)
                }
                return true
            }
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
        self.host = host
        self.tracker = tracker
        self.server = server
    }

    public func send<Request: RequestType>(_ request: Request) async throws(ResponseError) -> Request.Response {
        try await tracker.send(request)
    }

    public func events() -> AsyncStream<HostEvent> {
        tracker.events()
    }

    /// Sends a request by name and returns its raw result (tests, and clients that keep JSON).
    package func call(method: String, params: JSONValue) async throws(ResponseError) -> JSONValue {
        try await tracker.call(method: method, params: params)
    }

    public func close() async {
        let first = closed.withLock { closed in
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
