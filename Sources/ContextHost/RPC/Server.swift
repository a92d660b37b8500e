import ContextProviderKit
import ContextProtocol
import Logging
import Synchronization

/// A handler for one protocol method. One type per method; the list lives in `MethodRegistry`.
package protocol MethodHandler: Sendable {
    /// The JSON-RPC method name.
    static var method: String { get }
    /// Whether the method may be called before `initialize` (lifecycle methods only).
    static var allowedBeforeInitialize: Bool { get }
    /// Whether the method is a notification (sent without an `id`, never answered).
    static var isNotification: Bool { get }
    /// Whether the handler reads the request's params as raw bytes even when a typed value is at
    /// hand (the `items/*` methods pass the item to its provider untouched).
    static var forwardsRawParams: Bool { get }
    /// Handles the request. Throwing answers the error; otherwise the handler answers `request.reply`
    /// (now or later). Notifications have no reply.
    static func handle(_ request: Request, server: RPCServer) throws(RPCError)
}

extension MethodHandler {
    package static var allowedBeforeInitialize: Bool { false }
    package static var isNotification: Bool { false }
    package static var forwardsRawParams: Bool { false }
}

/// Where the client is in the LSP-style lifecycle.
package enum Lifecycle: Sendable, Equatable {
    case uninitialized
    case running
    case shutdown
}

/// The JSON-RPC server: framing in, dispatch to method handlers, replies out.
///
/// Messages are handled in arrival order on the reader's thread; handlers that call a provider
/// return at once and answer when the provider does, so slow requests never block fast ones.
package final class RPCServer: Sendable {
    package let output: OutputChannel
    package let host: Host
    package let logger: Logger
    private let lifecycle = Mutex(Lifecycle.uninitialized)
    private let pending = PendingTable()
    private let exitHandler: @Sendable (Int32) -> Void
    private let handlers: [String: any MethodHandler.Type]
    /// `MethodRegistry.all`, read once: `Envelope.scan` names a method it knows by its index
    /// there, and dispatch looks the handler up in this copy rather than through the registry's
    /// lazily made global (an initialisation check and a call per request).
    private let handlersByIndex: [any MethodHandler.Type]
    /// The host configuration's input limits and item size limit, read once: copying the whole
    /// configuration for each message retains every string and array in it.
    private let paramsLimits: ParamsLimits
    private var inputLimits: InputLimits { paramsLimits.input }
    private var itemLimit: Int { paramsLimits.itemBytes }

    /// - Parameter exit: called for the `exit` notification with the exit status (tests pass a
    ///   closure; the CLI exits the process).
    package init(host: Host, output: OutputChannel, logger: Logger, exit: @escaping @Sendable (Int32) -> Void) {
        self.host = host
        self.output = output
        self.logger = logger
        self.exitHandler = exit
        self.handlers = MethodRegistry.handlers
        self.handlersByIndex = MethodRegistry.all
        self.paramsLimits = ParamsLimits(input: host.configuration.inputLimits, itemBytes: host.configuration.outputLimits.itemBytes)
        host.notificationSink.withLock { $0 = LockedFunction { [weak self] method, params in self?.sendNotification(method, params: params) } }
    }

    package var state: Lifecycle { lifecycle.withLock { $0 } }

    package func transition(to state: Lifecycle) {
        lifecycle.withLock { $0 = state }
    }

    package func exit(status: Int32) {
        // Answers an in-process provider gave while this chunk of input was read go out first.
        host.calls.relay.drain()
        output.flush()
        exitHandler(status)
    }

    // MARK: Input

    /// Handles one framing event.
    package func handle(_ event: FramedEvent) {
        switch event {
        case .message(let bytes):
            receive(bytes)
        case .oversized(let length):
            output.send(Reply.errorMessage(
                id: Array("null".utf8),
                error: RPCError(
                    .invalidRequest,
                    "Message of \(length) bytes exceeds the limit of \(host.configuration.maximumMessageBytes) bytes; it was discarded.",
                    data: ["limit": .number(Double(host.configuration.maximumMessageBytes)), "length": .number(Double(length))])))
        case .badHeader(let reason):
            output.send(Reply.errorMessage(id: Array("null".utf8), error: RPCError(.parseError, reason)))
        }
    }

    /// Handles one complete message body.
    package func receive(_ message: [UInt8]) {
        // One pass: the envelope, and the params against the input limits.
        let (envelope, parseError) = message.withUnsafeBytes { Envelope.scan($0, limits: paramsLimits) }
        let idBytes: [UInt8]? = envelope.id.map { Array(message[$0]) }
        if let parseError {
            // Keep the id when it was read before the fault.
            output.send(Reply.errorMessage(id: idBytes ?? Array("null".utf8), error: RPCError(.parseError, "Parse error: \(parseError)")))
            return
        }
        guard envelope.isObject else {
            let isBatch = message.first(where: { $0 != 0x20 && $0 != 0x09 }) == UInt8(ascii: "[")
            let reason = isBatch
                ? "Batch requests are not supported; send each request as its own message."
                : "A JSON-RPC message must be an object."
            output.send(Reply.errorMessage(id: Array("null".utf8), error: RPCError(.invalidRequest, reason)))
            return
        }
        let replyID = idBytes ?? Array("null".utf8)
        if envelope.idIsInvalid {
            output.send(Reply.errorMessage(id: Array("null".utf8), error: RPCError(.invalidRequest, "'id' must be a string, a number or null.")))
            return
        }
        guard envelope.jsonrpc == "2.0" else {
            output.send(Reply.errorMessage(id: replyID, error: RPCError(.invalidRequest, "'jsonrpc' must be \"2.0\".")))
            return
        }
        guard let method = envelope.method else {
            if envelope.result != nil || envelope.error != nil {
                logger.debug("Ignoring a response from the client; this host sends no requests.")
                return
            }
            let reason = envelope.methodIsInvalid ? "'method' must be a string." : "The message has no 'method'."
            output.send(Reply.errorMessage(id: replyID, error: RPCError(.invalidRequest, reason)))
            return
        }
        if let params = envelope.params {
            let first = message[params.lowerBound]
            if first != UInt8(ascii: "{") && first != UInt8(ascii: "[") {
                if idBytes != nil {
                    output.send(Reply.errorMessage(id: replyID, error: RPCError(.invalidRequest, "'params' must be an object or an array.")))
                }
                return
            }
        }
        if let problem = envelope.paramsProblem {
            if idBytes != nil { output.send(Reply.errorMessage(id: replyID, error: problem)) }
            return
        }
        let reply = idBytes.map { Reply(id: $0, output: output) }
        var request = Request(message: message, envelope: envelope, reply: reply)
        request.itemLocation = envelope.itemLocation
        dispatch(request, method: method)
    }

    private func dispatch(_ request: Request, method: String) {
        guard let handler = request.envelope.methodIndex.map({ handlersByIndex[$0] }) ?? handlers[method] else {
            if let reply = request.reply {
                reply.sendError(Self.methodNotFound(method))
            } else if !method.hasPrefix("$/") {
                logger.debug("Ignoring unknown notification \(method)")
            }
            return
        }
        if handler.isNotification, let reply = request.reply {
            reply.sendError(RPCError(.invalidRequest, "'\(method)' is a notification; send it without an 'id'."))
            return
        }
        if let refusal = admission(of: handler, method: method) {
            request.reply?.sendError(refusal)
            return
        }
        do {
            try handler.handle(request, server: self)
        } catch {
            request.reply?.sendError(error)
        }
    }

    private static func methodNotFound(_ method: String) -> RPCError {
        RPCError(.methodNotFound, "Method not found: \(method)", data: ["method": .string(method)])
    }

    /// Why the lifecycle refuses `method` now, or nil when it may run.
    private func admission(of handler: any MethodHandler.Type, method: String) -> RPCError? {
        switch state {
        case .uninitialized where !handler.allowedBeforeInitialize:
            RPCError(.serverNotInitialized, "The server is not initialized; send 'initialize' first.")
        case .shutdown where method != ExitNotification.method:
            RPCError(.invalidRequest, "The server is shutting down; only 'exit' is accepted.")
        default:
            nil
        }
    }

    // MARK: Typed requests (InProcessHost)

    /// A typed request's params written as JSON and checked against `serve`'s input limits: work
    /// that reads no host state, so `InProcessHost` does it before taking its lock.
    package struct TypedParams {
        let bytes: [UInt8]
        let checked: Result<ItemLocation, RPCError>
    }

    /// Writes a typed request's params as JSON once, to apply `serve`'s input limits to the same
    /// bytes (and, for the `items/*` methods, because the provider reads them).
    package func prepare<Params: RequestType>(_ request: Params) -> TypedParams {
        var params: [UInt8] = []
        let checked: Result<ItemLocation, RPCError>
        do throws(RPCError) {
            if let itemRequest = request as? any PlainItemRequest {
                params.reserveCapacity(4096)  // an item is often a few KB: no regrowing on the way
                let layout = itemRequest.appendJSON(to: &params)  // the hot path: no JSON tree built
                // Its only string outside the item is the token, and a shallow item cannot pass the
                // depth limit: checked from where they were written, without reading them back.
                if itemRequest.item.content.nests(atMost: Self.shallowContentDepth) {
                    checked = .success(try checkWritten(layout, params: params, method: Params.method))
                } else {
                    checked = .success(try checkInput(params: params, method: Params.method))
                }
            } else {
                params.reserveCapacity(256)
                JSONWriter.append(request.json, to: &params)
                checked = .success(try checkInput(params: params, method: Params.method))
            }
        } catch {
            checked = .failure(error)
        }
        return TypedParams(bytes: params, checked: checked)
    }

    /// How deep an item's content may nest for `checkWritten` (far below `JSONReader.maximumDepth`).
    static let shallowContentDepth = 16

    /// `checkInput` for params `PlainItemRequest.appendJSON` wrote, from where it wrote them: the
    /// same checks in the same order (the message; per member its count and name, then the item
    /// whole or the token's string), with the same errors, and the same location a scan finds.
    package func checkWritten(_ layout: ItemParamsLayout, params: [UInt8], method: String) throws(RPCError) -> ItemLocation {
        try checkMessageLength(params.count, method: method)
        var members: [(name: StaticString, value: Range<Int>)] = [("item", layout.item)]
        if let token = layout.progressToken { members.append(("progressToken", token)) }
        for (index, member) in members.enumerated() {
            if index + 1 > inputLimits.maximumElements {
                throw InputLimits.exceeded(
                    "params", "an object with more than \(inputLimits.maximumElements) members", length: index + 1,
                    limit: inputLimits.maximumElements, name: "maximumElements")
            }
            let nameLength = member.name.utf8CodeUnitCount
            if nameLength > inputLimits.maximumStringBytes {
                throw InputLimits.exceeded(
                    "params", "a member name of \(nameLength) bytes", length: nameLength, limit: inputLimits.maximumStringBytes,
                    unit: " bytes", name: "maximumStringBytes")
            }
            let value = member.value
            if index == 0, value.count > itemLimit {
                throw InputLimits.exceeded(
                    "params.item", "an item of \(value.count) bytes", length: value.count, limit: itemLimit, unit: " bytes",
                    name: "maximumItemBytes")
            }
            // A string token's length in bytes of JSON text, without its quotes (a number has none).
            if index == 1, params[value.lowerBound] == UInt8(ascii: "\""), value.count - 2 > inputLimits.maximumStringBytes {
                throw InputLimits.exceeded(
                    "params.progressToken", "a string of \(value.count - 2) bytes", length: value.count - 2,
                    limit: inputLimits.maximumStringBytes, unit: " bytes", name: "maximumStringBytes")
            }
        }
        return ItemLocation(scanned: true, item: layout.item, providerID: layout.providerID, progressToken: layout.progressToken)
    }

    /// Handles a typed request from the embedding API, answered on `reply` (a direct reply: the
    /// answer reaches the caller as a value), with its params from `prepare`. The same lifecycle,
    /// limits and handlers as a message from the wire: a typed handler gets the app's value
    /// itself, and a raw one (the `items/*` pass-through) the params' bytes.
    package func dispatch<Params: RequestType>(typed request: Params, params: TypedParams, reply: Reply) {
        do throws(RPCError) {
            // In the wire's order: the input limits, the method, the lifecycle.
            let location = try params.checked.get()
            guard let handler = handlers[Params.method], !handler.isNotification else { throw Self.methodNotFound(Params.method) }
            if let refusal = admission(of: handler, method: Params.method) { throw refusal }
            if !handler.forwardsRawParams, let typed = handler as? any RequestHandler.Type {
                try typed.handle(typed: request, server: self, reply: reply)
            } else {
                var envelope = Envelope()
                envelope.isObject = true
                envelope.jsonrpc = "2.0"
                envelope.method = Params.method
                envelope.params = 0..<params.bytes.count
                var raw = Request(message: params.bytes, envelope: envelope, reply: reply)
                raw.itemLocation = location
                try handler.handle(raw, server: self)
            }
        } catch {
            reply.sendError(error)
        }
    }

    /// `serve`'s input limits on a typed request's params: the message limit (as if the params
    /// were sent in a JSON-RPC envelope) and every string, array and item limit.
    package func checkInput(params: [UInt8], method: String) throws(RPCError) -> ItemLocation {
        try checkMessageLength(params.count, method: method)
        let checked: Result<ItemLocation, RPCError> = params.withUnsafeBytes { bytes in
            do throws(RPCError) {
                return .success(try inputLimits.checkParams(bytes, range: 0..<bytes.count, itemLimit: itemLimit))
            } catch {
                return .failure(error)
            }
        }
        return try checked.get()
    }

    /// The message limit on typed params of `count` bytes, as if sent in a JSON-RPC envelope.
    private func checkMessageLength(_ count: Int, method: String) throws(RPCError) {
        // `{"jsonrpc":"2.0","id":1,"method":"…","params":…}`: 46 bytes besides the method and params.
        let (length, overflow) = count.addingReportingOverflow(46 + method.utf8.count)
        let limit = host.configuration.maximumMessageBytes
        if overflow || length > limit {
            throw RPCError(
                .invalidRequest,
                "The \(method) request is \(length) bytes, over the host's limit of \(limit) bytes (capabilities.maximumMessageBytes); it was not handled.",
                data: ["length": .number(Double(length)), "limit": .number(Double(limit))])
        }
    }

    // MARK: Pending requests and cancellation

    /// Tracks a request that will be answered later, so `$/cancelRequest` can reach it.
    /// Returns the entry; `onCancel` (or what `setCancel` sets later) runs when the client cancels.
    @discardableResult
    package func track(_ reply: Reply, onCancel: (@Sendable () -> Void)? = nil) -> PendingRequest {
        let entry = PendingRequest(reply: reply, key: reply.idText, table: pending, onCancel: onCancel)
        pending.insert(entry)
        reply.whenAnswered { entry.leaveTable() }  // (captures only `entry`: no closure context)
        return entry
    }

    /// Cancels the request whose raw id text is `key`, if it is still running.
    package func cancel(idText key: String) {
        guard let entry = pending.entry(key) else { return }
        entry.reply.sendError(RPCError(.requestCancelled, "Request cancelled"))
        entry.runCancel()
    }

    /// How many requests are waiting for a provider (for tests and diagnostics).
    package var pendingCount: Int { pending.count }
}

/// A request waiting on a provider.
package final class PendingRequest: Sendable {
    package let reply: Reply
    /// The request's raw id text, its key in `table`.
    let key: String
    /// The table this entry leaves when the request is answered. (Held strongly: an entry may
    /// outlive its server, e.g. a request answered by its timeout after the server is gone.)
    let table: PendingTable
    private let onCancel: Mutex<Action?>

    init(reply: Reply, key: String, table: PendingTable, onCancel: (@Sendable () -> Void)?) {
        self.reply = reply
        self.key = key
        self.table = table
        self.onCancel = Mutex(onCancel.map(Action.init))
    }

    /// What to do when the client cancels (e.g. tell the provider).
    package func setCancel(_ action: @escaping @Sendable () -> Void) {
        onCancel.withLock { $0 = Action(action) }
    }

    func runCancel() {
        let action = onCancel.withLock { $0 }
        action?.run()
    }

    /// Leaves the table (the request was answered).
    func leaveTable() {
        table.remove(self)
    }
}

/// The requests waiting on a provider, by raw id text.
final class PendingTable: Sendable {
    private let entries = Mutex<[String: PendingRequest]>([:])

    func insert(_ entry: PendingRequest) {
        entries.withLock { $0[entry.key] = entry }
    }

    /// Removes `entry` if it is still the one under its key (a client may reuse an id).
    func remove(_ entry: PendingRequest) {
        entries.withLock { table in
            // (One lookup: the key is hashed once.)
            if let index = table.index(forKey: entry.key), table.values[index] === entry { table.remove(at: index) }
        }
    }

    func entry(_ key: String) -> PendingRequest? {
        entries.withLock { $0[key] }
    }

    var count: Int { entries.withLock { $0.count } }
}

// MARK: - Answering later

/// How a request's answer is made later: after a provider's load, by a provider, or by a task.
/// The session (its pending-request table and cancellation) lives here; the host's methods return
/// values and know nothing of replies.
extension RPCServer {
    /// Runs `body` once provider `id` (nil: every provider) has finished loading.
    ///
    /// When it is not loading (always, once start-up loading is over), `body` runs at once on this
    /// thread and its error goes to the caller, as if called directly. Otherwise this returns at
    /// once, so the reader goes on with other requests, and `body` runs when the load finishes,
    /// its error answered on `reply`. Bodies that waited run one after another in the order their
    /// requests came (a client's requests to one provider reach it in the order sent). While it
    /// waits the request is pending: `$/cancelRequest` answers it (and `body` is skipped), and
    /// stdin EOF waits for it.
    package func whenLoaded(_ id: String?, reply: Reply, _ body: @escaping @Sendable () throws(RPCError) -> Void) throws(RPCError) {
        guard host.mustWait(for: id) else { return try body() }
        track(reply)
        host.afterLoad(of: id) {
            if reply.isAnswered { return }
            do throws(RPCError) {
                try body()
            } catch {
                reply.sendError(error)
            }
        }
    }

    /// Sends a request to a provider and answers `reply` with the provider's result.
    ///
    /// The result is first checked against what `method` must answer (`OutputValidation`: size,
    /// JSON, ctxui shape); a violation answers `-32014` naming the field. Without `transform`, the
    /// checked result bytes are passed through untouched (re-printed only if they contain raw line
    /// breaks, which would break NDJSON framing). With it, the result is decoded,
    /// transformed and printed. Errors become host errors that name the provider.
    /// `$/cancelRequest` tells the provider to stop.
    package func forward(
        reply: Reply, provider: Host.LiveProvider, method: String,
        params: ParamsWriter,
        transform: (@Sendable (JSONValue) throws(RPCError) -> JSONValue)? = nil,
        progressToken: ProgressToken? = nil
    ) {
        let call = host.providerCall(provider, method: method, progressToken: progressToken, sink: .reply(reply, transform: transform))
        track(reply, onCancel: { call.cancelProviderRequest() })
        call.start(params: params)
    }

    /// Runs `work` in a task that answers `reply` with what `answer` makes of its result, or with
    /// its error; `$/cancelRequest` cancels the task.
    package func respond<Result: Sendable>(
        _ reply: Reply, _ work: @escaping @Sendable () async throws(RPCError) -> Result, answer: @escaping @Sendable (Reply, Result) -> Void
    ) {
        let pending = track(reply)
        let task = Task {
            do throws(RPCError) {
                answer(reply, try await work())
            } catch {
                reply.sendError(error)
            }
        }
        pending.setCancel { task.cancel() }
    }
}
