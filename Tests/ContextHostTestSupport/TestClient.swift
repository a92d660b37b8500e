import ContextHost
import ContextProviderKit
import Foundation
import Logging
import Synchronization

/// A test's client of a host, in one of two forms with one call surface (`RPCTestSession`: raw
/// bytes, requests, notifications, typed requests, answers and notifications read back), as
/// Hummingbird's test framework offers `.router` beside `.live`:
///
/// - `TestClient.inMemory(configuration)`: an `RPCServer` over a `Host` in the test's own process,
///   writing to an in-memory output. Each `send(bytes:)` is one message handed to the server as
///   the stdio reader hands it a framed message (no framing, no pipes, no process); what the
///   server writes is read back message by message. `server` gives a unit test the server, its
///   host and its output channel, so it need not build them by hand.
/// - `TestClient.live(arguments:)`: a spawned `context-host` over pipes (an `RPCClient`).
public final class TestClient: RPCTestSession, @unchecked Sendable {
    /// Where the messages go.
    private enum Form {
        case inMemory(InMemoryOutput)
        case live(RPCClient)
    }

    /// What an in-memory server wrote, and how it exited.
    private final class InMemoryOutput: Sendable {
        struct State {
            /// Bytes written and not yet taken as messages.
            var pending: [UInt8] = []
            /// Bytes written in all.
            var written = 0
            /// The status `exit` asked for, and how many bytes had been written by then.
            var exit: (status: Int32, written: Int)?
        }
        let state = Mutex(State())
    }

    private let form: Form
    /// The in-memory form's server (its `host`, its `output`); nil for a live host.
    package let server: RPCServer?
    private var nextID = 1
    /// Notifications and out-of-order responses seen while waiting.
    public var received: [JSONValue] = []

    private init(form: Form, server: RPCServer?) {
        self.form = form
        self.server = server
    }

    /// A host in this process, answering into memory.
    public static func inMemory(_ configuration: HostConfiguration = HostConfiguration(), logger: Logger = Logger(label: "test")) -> TestClient {
        let written = InMemoryOutput()
        let output = OutputChannel { bytes in
            written.state.withLock { state in
                state.pending.append(contentsOf: bytes)
                state.written += bytes.count
            }
            return true
        }
        let server = RPCServer(host: Host(configuration: configuration, logger: logger), output: output, logger: logger) { status in
            written.state.withLock { $0.exit = (status, $0.written) }
        }
        return TestClient(form: .inMemory(written), server: server)
    }

    /// A spawned `context-host` with these arguments (e.g. `["serve", "--manifests", dir]`).
    public static func live(
        arguments: [String], framing: RPCClient.Framing = .newlineDelimited, directory: String? = nil
    ) throws -> TestClient {
        TestClient(form: .live(try RPCClient(arguments: arguments, framing: framing, directory: directory)), server: nil)
    }

    /// The live form's process; nil in memory.
    public var process: HostProcess? {
        if case .live(let client) = form { return client.host }
        return nil
    }

    /// A new request id (1, 2, 3…).
    public func nextRequestID() -> JSONValue {
        defer { nextID += 1 }
        return .number(Double(nextID))
    }

    /// Sends one message: handed to the in-memory server as one framed message, or written to a
    /// live host's stdin with the client's framing.
    public func send(bytes: [UInt8]) {
        switch form {
        case .inMemory: server?.handle(.message(bytes))
        case .live(let client): client.send(bytes: bytes)
        }
    }

    /// The next message the host wrote, or `RPCClient.Failure` after `timeout` seconds.
    public func takeMessage(timeout: Double) throws -> JSONValue {
        switch form {
        case .live(let client): return try client.takeMessage(timeout: timeout)
        case .inMemory(let written):
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                let body: [UInt8]? = written.state.withLock { state in
                    guard let newline = state.pending.firstIndex(of: 0x0A) else { return nil }
                    defer { state.pending.removeFirst(newline + 1) }
                    return Array(state.pending[..<newline])
                }
                if let body { return try Self.parse(body) }
                if Date() > deadline { throw RPCClient.Failure(description: "No message from the in-memory host within \(timeout) s") }
                usleep(1000)
            }
        }
    }

    /// A live host's stderr so far; nothing to quote in memory.
    public var diagnostics: String {
        if case .live(let client) = form { return client.diagnostics }
        return "(in-memory host)"
    }

    /// What the in-memory server wrote that was not yet read as messages, as text (a live host's
    /// unread stdout).
    public var pendingText: String {
        switch form {
        case .inMemory(let written): String(decoding: written.state.withLock { $0.pending }, as: UTF8.self)
        case .live(let client): String(decoding: client.host.pendingOutput, as: UTF8.self)
        }
    }

    /// The status the in-memory server's `exit` asked for, and how many bytes it had written by
    /// then; nil until it exits (and for a live host: see `process`).
    public var exit: (status: Int32, bytesWritten: Int)? {
        guard case .inMemory(let written) = form else { return nil }
        return written.state.withLock { $0.exit }.map { (status: $0.status, bytesWritten: $0.written) }
    }

    /// Ends the host: the in-memory host's providers and workers are closed; a live host is sent
    /// `shutdown` and `exit` (then stopped if it does not exit).
    public func close() {
        switch form {
        case .inMemory: server?.host.close()
        case .live(let client):
            _ = try? client.shutdown()
            client.host.terminate()
        }
    }
}
