import ContextProviderKit
import Foundation

/// A JSON-RPC client for a spawned `context-host`, in either framing.
public final class RPCClient: @unchecked Sendable {
    public enum Framing: Sendable {
        case newlineDelimited
        case contentLength
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let host: HostProcess
    public let framing: Framing
    private var nextID = 1
    /// Notifications and out-of-order responses seen while waiting.
    public private(set) var received: [JSONValue] = []

    public init(host: HostProcess, framing: Framing = .newlineDelimited) {
        self.host = host
        self.framing = framing
    }

    /// Starts a host with these arguments and connects.
    public convenience init(arguments: [String] = [], framing: Framing = .newlineDelimited, directory: String? = nil) throws {
        try self.init(host: HostProcess(arguments: arguments, directory: directory), framing: framing)
    }

    /// Sends one message body with this client's framing.
    public func sendRaw(_ body: String) {
        switch framing {
        case .newlineDelimited: host.write(body + "\n")
        case .contentLength: host.write("Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        }
    }

    /// Sends a request and returns its id.
    @discardableResult
    public func send(_ method: String, _ params: JSONValue? = nil, id: JSONValue? = nil) -> JSONValue {
        let requestID = id ?? .number(Double(nextID))
        nextID += 1
        var message: JSONObject = ["jsonrpc": "2.0", "id": requestID, "method": .string(method)]
        if let params { message["params"] = params }
        sendRaw(JSONValue.object(message).jsonString)
        return requestID
    }

    /// Sends a notification.
    public func notify(_ method: String, _ params: JSONValue? = nil) {
        var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message["params"] = params }
        sendRaw(JSONValue.object(message).jsonString)
    }

    /// The next `count` responses, in the order they arrive (notifications are skipped).
    public func responses(count: Int, timeout: Double = 30) throws -> [JSONValue] {
        var answers: [JSONValue] = []
        while answers.count < count {
            let message = try nextMessage(timeout: timeout)
            if message["method"] == nil { answers.append(message) }
        }
        return answers
    }

    /// The next message from the host, or a failure after `timeout` seconds.
    public func nextMessage(timeout: Double = 10) throws -> JSONValue {
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
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw Failure(description: "The host wrote invalid JSON (\(error)): \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// Waits for the response with this id; other messages are kept in `received`.
    public func response(to id: JSONValue, timeout: Double = 10) throws -> JSONValue {
        if let index = received.firstIndex(where: { $0["id"] == id && $0["method"] == nil }) {
            return received.remove(at: index)
        }
        while true {
            let message = try nextMessage(timeout: timeout)
            if message["id"] == id, message["method"] == nil { return message }
            received.append(message)
        }
    }

    /// Waits for the next notification named `method` (kept ones in `received` first, oldest
    /// first); other messages stay in `received`. Fails after `timeout` seconds.
    public func nextNotification(method: String, timeout: Double = 10) throws -> JSONValue {
        if let index = received.firstIndex(where: { $0["method"] == .string(method) && $0["id"] == nil }) {
            return received.remove(at: index)
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw Failure(description: "No '\(method)' notification within \(timeout) s. stderr:\n\(host.standardError)")
            }
            let message = try nextMessage(timeout: remaining)
            if message["method"] == .string(method), message["id"] == nil { return message }
            received.append(message)
        }
    }

    /// Sends a request and returns its `result`, failing on an error response.
    public func call(_ method: String, _ params: JSONValue? = nil) throws -> JSONValue {
        let id = send(method, params)
        let response = try response(to: id)
        if let error = response["error"] {
            throw Failure(description: "\(method) failed: \(error)")
        }
        guard let result = response["result"] else { throw Failure(description: "\(method): no result in \(response)") }
        return result
    }

    /// `providers/list`'s entry for `id`, which must be listed, loaded and available (else this
    /// throws, saying what was listed).
    public func availableProvider(_ id: String) throws -> JSONValue {
        let providers = try call("providers/list")["providers"]?.arrayValue ?? []
        guard let entry = providers.first(where: { $0["id"] == .string(id) }) else {
            throw Failure(description: "providers/list has no \(id): \(JSONValue.array(providers))")
        }
        guard entry["status"] == "loaded", entry["available"] == true else {
            throw Failure(description: "\(id) is not loaded and available: \(entry)")
        }
        return entry
    }

    /// `collect/submit` of `values` in `session`, which must answer an item (else this throws,
    /// saying what it answered); returns the item.
    public func submitForItem(session: JSONValue, values: JSONValue) throws -> JSONValue {
        let submitted = try call("collect/submit", ["sessionId": session, "values": values])
        guard submitted["outcome"] == "item", let item = submitted["item"] else {
            throw Failure(description: "collect/submit did not answer an item: \(submitted)")
        }
        return item
    }

    /// Sends a request and returns its `error`, failing on success.
    public func callExpectingError(_ method: String, _ params: JSONValue? = nil) throws -> JSONValue {
        let id = send(method, params)
        let response = try response(to: id)
        guard let error = response["error"] else { throw Failure(description: "\(method) succeeded unexpectedly: \(response)") }
        return error
    }

    /// `initialize` + `initialized`.
    @discardableResult
    public func initialize(_ params: JSONValue = ["clientInfo": ["name": "tests"], "locale": "en-US"]) throws -> JSONValue {
        let result = try call("initialize", params)
        notify("initialized", [:])
        return result
    }

    /// `shutdown` + `exit`; returns the exit status.
    public func shutdown() throws -> Int32? {
        _ = try call("shutdown")
        notify("exit")
        return host.waitForExit()
    }
}
