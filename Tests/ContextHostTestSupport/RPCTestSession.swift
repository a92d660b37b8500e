import ContextProviderKit
import Foundation

/// What a test says to a host and reads back, over any way of reaching it: a spawned
/// `context-host` (`RPCClient`, `TestClient.live`) or an `RPCServer` in the test's own process
/// (`TestClient.inMemory`). A conforming type moves one message's bytes each way; the calls
/// (requests, notifications, typed requests, waiting for a given answer) are written once, here.
public protocol RPCTestSession: AnyObject {
    /// Sends one message's bytes (the transport adds its framing, if any).
    func send(bytes: [UInt8])
    /// The next message the host wrote, or `RPCClient.Failure` after `timeout` seconds.
    func takeMessage(timeout: Double) throws -> JSONValue
    /// Notifications and out-of-order responses seen while waiting for another message.
    var received: [JSONValue] { get set }
    /// A new request id (1, 2, 3…).
    func nextRequestID() -> JSONValue
    /// What to quote when an answer did not come (the host's stderr, for a process).
    var diagnostics: String { get }
}

extension RPCTestSession {
    /// Parses a message body the host wrote.
    static func parse(_ body: [UInt8]) throws -> JSONValue {
        do {
            return try JSONValue(parsing: body)
        } catch {
            throw RPCClient.Failure(description: "The host wrote invalid JSON (\(error)): \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// Sends one message body given as text.
    public func sendRaw(_ body: String) { send(bytes: Array(body.utf8)) }

    /// The next message from the host, or a failure after `timeout` seconds.
    public func nextMessage(timeout: Double = 10) throws -> JSONValue { try takeMessage(timeout: timeout) }

    /// Sends a request and returns its id.
    @discardableResult
    public func send(_ method: String, _ params: JSONValue? = nil, id: JSONValue? = nil) -> JSONValue {
        let requestID = id ?? nextRequestID()
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

    /// Sends a typed request and decodes its answer as the method's `Response`; an error answer
    /// throws `RPCClient.Failure` with the error.
    public func send<Request: RequestType>(_ request: Request) throws -> Request.Response {
        let result = try call(Request.method, request.json)
        do {
            return try Request.Response(json: result, path: "result")
        } catch {
            throw RPCClient.Failure(description: "\(Request.method): the result does not decode (\(error)): \(result)")
        }
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
                throw RPCClient.Failure(description: "No '\(method)' notification within \(timeout) s. \(diagnostics)")
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
            throw RPCClient.Failure(description: "\(method) failed: \(error)")
        }
        guard let result = response["result"] else { throw RPCClient.Failure(description: "\(method): no result in \(response)") }
        return result
    }

    /// `providers/list`'s entry for `id`, which must be listed, loaded and available (else this
    /// throws, saying what was listed).
    public func availableProvider(_ id: String) throws -> JSONValue {
        let providers = try call("providers/list")["providers"]?.arrayValue ?? []
        guard let entry = providers.first(where: { $0["id"] == .string(id) }) else {
            throw RPCClient.Failure(description: "providers/list has no \(id): \(JSONValue.array(providers))")
        }
        guard entry["status"] == "loaded", entry["available"] == true else {
            throw RPCClient.Failure(description: "\(id) is not loaded and available: \(entry)")
        }
        return entry
    }

    /// `collect/submit` of `values` in `session`, which must answer an item (else this throws,
    /// saying what it answered); returns the item.
    public func submitForItem(session: JSONValue, values: JSONValue) throws -> JSONValue {
        let submitted = try call("collect/submit", ["sessionId": session, "values": values])
        guard submitted["outcome"] == "item", let item = submitted["item"] else {
            throw RPCClient.Failure(description: "collect/submit did not answer an item: \(submitted)")
        }
        return item
    }

    /// Sends a request and returns its `error`, failing on success.
    public func callExpectingError(_ method: String, _ params: JSONValue? = nil) throws -> JSONValue {
        let id = send(method, params)
        let response = try response(to: id)
        guard let error = response["error"] else { throw RPCClient.Failure(description: "\(method) succeeded unexpectedly: \(response)") }
        return error
    }

    /// `initialize` + `initialized`.
    @discardableResult
    public func initialize(_ params: JSONValue = ["clientInfo": ["name": "tests"], "locale": "en-US"]) throws -> JSONValue {
        let result = try call("initialize", params)
        notify("initialized", [:])
        return result
    }
}
