import CHostSupport
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON-RPC 2.0 error answered by the host.
public struct HostError: Error, CustomStringConvertible, Sendable {
    /// The JSON-RPC error code (docs/protocol.md §2).
    public var code: Int
    /// The host's message.
    public var message: String
    /// The error's `data`, if any.
    public var data: JSONValue?

    public var description: String { message }
}

/// A `context-host serve` child process spoken to over pipes with NDJSON JSON-RPC: the public
/// protocol only. Requests are synchronous (one in flight); notifications that arrive meanwhile
/// are kept in `notifications`.
public final class HostConnection {
    /// The child's process id.
    public let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Notifications received while waiting for responses (e.g. `providers/changed`), oldest first.
    public private(set) var notifications: [JSONValue] = []

    /// Spawns `executable` with `arguments` (`arguments[0]` is the program name). The child's
    /// stderr goes to `stderrFD`.
    public init(executable: String, arguments: [String], stderrFD: Int32) throws {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard ctxh_pipe_cloexec(&toChild) == 0, ctxh_pipe_cloexec(&fromChild) == 0 else {
            throw HostError(code: -1, message: "cannot create pipes: \(String(cString: strerror(errno)))")
        }
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var childPID: pid_t = 0
        let status = ctxh_spawn(executable, &cArguments, nil, toChild[0], fromChild[1], stderrFD, &childPID)
        closeDescriptor(toChild[0])
        closeDescriptor(fromChild[1])
        guard status == 0 else {
            closeDescriptor(toChild[1])
            closeDescriptor(fromChild[0])
            throw HostError(code: -1, message: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        pid = childPID
        input = toChild[1]
        output = fromChild[0]
    }

    /// Sends a request and waits for its response; notifications in between are kept.
    @discardableResult
    public func call(_ method: String, _ params: JSONValue = .object([:])) throws(HostError) -> JSONValue {
        let id = nextID
        nextID += 1
        let message: JSONValue = ["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(method), "params": params]
        send(message)
        while true {
            guard let reply = readMessage() else {
                throw HostError(code: -1, message: "context-host closed the connection while answering \(method).")
            }
            guard let replyID = reply["id"]?.intValue else {
                if reply["method"] != nil { notifications.append(reply) }
                continue
            }
            guard replyID == id else { continue }
            if let error = reply["error"] {
                throw HostError(code: error["code"]?.intValue ?? -1, message: error["message"]?.stringValue ?? "error", data: error["data"])
            }
            return reply["result"] ?? .null
        }
    }

    /// Sends a notification.
    public func notify(_ method: String, _ params: JSONValue? = nil) {
        var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message["params"] = params }
        send(.object(message))
    }

    /// Takes the notifications received so far.
    public func takeNotifications() -> [JSONValue] {
        defer { notifications.removeAll() }
        return notifications
    }

    /// `shutdown`, `exit`, then waits for the child.
    public func shutdown() -> Int32 {
        _ = try? call("shutdown", .null)
        notify("exit")
        closeDescriptor(input)
        closeDescriptor(output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    private func send(_ message: JSONValue) {
        var bytes = message.jsonBytes
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    private func readMessage() -> JSONValue? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                if line.isEmpty { continue }
                if let value = try? JSONValue(parsing: line) { return value }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}

/// The C `close`, under a name no method hides.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
