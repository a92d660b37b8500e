import ContextProviderKit
import Foundation

/// A JSON-RPC client for a spawned `context-host`, in either framing. Its calls are
/// `RPCTestSession`'s, shared with `TestClient.inMemory`.
public final class RPCClient: RPCTestSession, @unchecked Sendable {
    /// How messages are framed on the pipes.
    public enum Framing: Sendable {
        /// One message per line.
        case newlineDelimited
        /// LSP's `Content-Length` header before each message.
        case contentLength
    }

    /// A test client's failure: no answer in time, an error answer where a result was due, or
    /// output that is not JSON.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with what the host said.
        public var description: String
        /// A failure saying `description`.
        public init(description: String) { self.description = description }
    }

    /// The spawned host.
    public let host: HostProcess
    /// The framing both ways.
    public let framing: Framing
    private var nextID = 1
    /// Notifications and out-of-order responses seen while waiting.
    public var received: [JSONValue] = []

    /// A client of a host already started.
    public init(host: HostProcess, framing: Framing = .newlineDelimited) {
        self.host = host
        self.framing = framing
    }

    /// Starts a host with these arguments and connects.
    public convenience init(arguments: [String] = [], framing: Framing = .newlineDelimited, directory: String? = nil) throws {
        try self.init(host: HostProcess(arguments: arguments, directory: directory), framing: framing)
    }

    /// A new request id (1, 2, 3…).
    public func nextRequestID() -> JSONValue {
        defer { nextID += 1 }
        return .number(Double(nextID))
    }

    /// Sends one message body with this client's framing.
    public func send(bytes body: [UInt8]) {
        switch framing {
        case .newlineDelimited: host.write(body + [0x0A])
        case .contentLength: host.write(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
    }

    /// The next message from the host, or a failure after `timeout` seconds.
    public func takeMessage(timeout: Double) throws -> JSONValue {
        let framing = self.framing
        let body: [UInt8]? = host.takeOutput(timeout: timeout) { buffer in
            switch framing {
            case .newlineDelimited:
                guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
                return (Array(buffer[..<newline]), newline + 1)
            case .contentLength:
                let separator: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
                guard buffer.count >= 4, let end = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<$0 + 4]) == separator }) else { return nil }
                let header = String(decoding: buffer[..<end], as: UTF8.self)
                guard header.hasPrefix("Content-Length: "), let length = Int(header.dropFirst("Content-Length: ".count)) else {
                    return ([], buffer.count)
                }
                guard buffer.count >= end + 4 + length else { return nil }
                return (Array(buffer[(end + 4)..<(end + 4 + length)]), end + 4 + length)
            }
        }
        guard let body else {
            throw Failure(description: "No message from the host within \(timeout) s. stderr:\n\(host.standardError)")
        }
        return try Self.parse(body)
    }

    /// The host's stderr so far.
    public var diagnostics: String { "stderr:\n\(host.standardError)" }

    /// `shutdown` + `exit`; returns the exit status.
    public func shutdown() throws -> Int32? {
        _ = try call("shutdown")
        notify("exit")
        return host.waitForExit()
    }
}
