import ContextHost
import Logging
import Synchronization

/// One client connection's protocol session: messages in (`receive`), framed answers and
/// notifications out through the `send` closure it was made with, `close` when the connection
/// ends. The transport knows only this type and `WebSessionFactory`, so what stands behind a
/// session (a host session of the factory's `HostCore`) can change without touching the transport.
package final class WebSession: Sendable {
    private let state: SessionState
    private let server: RPCServer
    private let output: OutputChannel
    /// Serialises `receive` (the server handles one message at a time, in order).
    private let reader = Mutex(())

    fileprivate init(state: SessionState, server: RPCServer, output: OutputChannel) {
        self.state = state
        self.server = server
        self.output = output
    }

    /// Handles one message (a JSON-RPC object, the text of one WebSocket message).
    package func receive(_ message: [UInt8]) {
        guard !state.isClosed else { return }
        reader.withLock { _ in
            output.batch { server.receive(message) }
        }
    }

    /// Handles a message over the size limit as `serve` does: a JSON-RPC error, the message
    /// discarded. (The WebSocket transport closes the connection before that; kept for others.)
    package func receiveOversized(length: Int) {
        reader.withLock { _ in server.handle(.oversized(length: length)) }
    }

    /// Ends the session: it leaves its providers' group (the last session out stops their
    /// workers), requests still waiting are abandoned and nothing more is sent. Safe to call more than once, and from the `exit` handler.
    package func close() { state.close() }

    /// Whether `close` ran.
    package var isClosed: Bool { state.isClosed }

    /// Requests waiting on a provider (for tests and diagnostics).
    package var pendingCount: Int { server.pendingCount }
}

/// Makes the session of each new connection: a host session of one `HostCore`, so every
/// connection whose client loads providers the same way shares one set of them (and their
/// workers); composers, drafts, subscriptions and limits stay per connection.
package struct WebSessionFactory: Sendable {
    /// The providers the sessions share.
    package let core: HostCore
    package let logger: Logger

    package init(configuration: HostConfiguration, logger: Logger) {
        self.core = HostCore(uncheckedConfiguration: configuration, logger: logger)
        self.logger = logger
    }

    /// Each session's host configuration.
    package var configuration: HostConfiguration { core.configuration }

    /// A new session.
    ///
    /// - Parameters:
    ///   - send: takes outgoing messages, each a JSON-RPC object ended by a newline (JSON text
    ///     has no raw newline), as many as the session wrote at once; returns false when the
    ///     connection cannot take more (gone, or not reading), which ends the output.
    ///   - exit: called once when the client sends `exit` (after the session is closed).
    package func makeSession(
        send: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool, exit: @escaping @Sendable () -> Void
    ) -> WebSession {
        let host = Host(core: core)
        // `OutputChannel` writes whole messages; should a write ever end inside one, the part is
        // kept until its end arrives.
        let partial = Mutex<[UInt8]>([])
        let output = OutputChannel(lateFlushMilliseconds: 1) { bytes in
            partial.withLock { partial in
                if partial.isEmpty {
                    guard let last = bytes.lastIndex(of: 0x0A) else {
                        partial.append(contentsOf: bytes)
                        return true
                    }
                    defer { partial.append(contentsOf: bytes[(last + 1)...]) }
                    return send(UnsafeRawBufferPointer(rebasing: bytes[...last]))
                }
                partial.append(contentsOf: bytes)
                guard let last = partial.lastIndex(of: 0x0A) else { return true }
                defer { partial.removeFirst(last + 1) }
                return partial.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[...last])) }
            }
        }
        let state = SessionState(host: host)
        let server = RPCServer(host: host, output: output, logger: logger) { _ in
            // `exit`: this client's session is over (the process serves the others).
            state.close()
            exit()
        }
        return WebSession(state: state, server: server, output: output)
    }
}

/// What `close` needs, shared by the session and its `exit` handler (no reference cycle
/// through the server).
private final class SessionState: Sendable {
    let host: Host
    private let closed = Atomic<Bool>(false)

    init(host: Host) { self.host = host }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        host.close()
    }
}
