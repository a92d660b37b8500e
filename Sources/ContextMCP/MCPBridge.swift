import ContextHost
import ContextProtocol
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `context-host mcp`: the providers as an MCP server on stdin/stdout, through an in-process host.
///
/// Both deployed generations are served, chosen by how the client opens: `initialize` starts a
/// 2025-11-25 session (elicitation by `elicitation/create` requests, pushed list changes); a
/// request carrying the 2026-07-28 `_meta` envelope is served statelessly (`server/discover`,
/// `input_required` with a `requestState`, list changes on `subscriptions/listen` streams).
/// Messages are newline-delimited JSON in both. Every request runs in its own task;
/// `notifications/cancelled` cancels it, and the host request under it.
package final class MCPBridge: Sendable {
    package struct Options: Sendable {
        /// Where collected items are kept (nil: memory only).
        package var itemsDirectory: String?
        package var grantedPermissions: [String] = []
        package var locale: String?

        package init(itemsDirectory: String?, grantedPermissions: [String] = [], locale: String? = nil) {
            self.itemsDirectory = itemsDirectory
            self.grantedPermissions = grantedPermissions
            self.locale = locale
        }
    }

    /// How long a 2026-07-28 `requestState` stays valid.
    static let requestStateLifetime: Duration = .seconds(600)
    /// The most collections waiting for a retry at once (the oldest is dropped past it).
    static let maximumPendingRuns = 64
    /// The most requests handled at once.
    static let maximumRunning = 256
    /// The most open `subscriptions/listen` streams.
    static let maximumListeners = 16

    let host: InProcessHost
    let options: Options
    /// Where messages go: the message and the key (`id.jsonString`) of the client request it
    /// belongs to, nil for none (stdio ignores the key; Streamable HTTP routes by it).
    let sink: @Sendable (JSONValue, String?) -> Void
    /// The stdio output (flushed at the end of input); nil over HTTP.
    let output: OutputChannel?
    let logger: Logger
    let store: ItemStore
    let catalog: ToolCatalog
    let serverInfo: JSONValue = ["name": "context-host", "title": "ContextHost", "version": .string(HostConfiguration.hostVersion)]

    enum Era: Sendable, Equatable {
        case undecided
        case handshake(version: String, capabilities: MCPClientCapabilities)
        case stateless
    }

    struct Listener: Sendable {
        var id: JSONValue
        var tools: Bool
        var resources: Bool
    }

    struct PendingRun: Sendable {
        var run: CollectionRun
        var toolName: String
        var expires: ContinuousClock.Instant
    }

    struct State: Sendable {
        var era = Era.undecided
        /// Requests being handled, by their id's JSON text.
        var running: [String: Task<Void, Never>] = [:]
        /// Requests the client cancelled: nothing more is sent for them.
        var cancelled: Set<String> = []
        /// Our requests to the client (elicitation), by id.
        var outgoing: [Int: CheckedContinuation<JSONValue?, Never>] = [:]
        var nextOutgoingID = 1
        /// Host progress tokens (`mcp-N`) → the client's token and the request's key.
        var progress: [String: (token: JSONValue, request: String)] = [:]
        var nextToken = 1
        /// Open `subscriptions/listen` requests by id text.
        var listeners: [String: Listener] = [:]
        /// Collections waiting for a 2026-07-28 retry, by `requestState`.
        var runs: [String: PendingRun] = [:]
    }

    let state = Mutex(State())

    package init(host: InProcessHost, options: Options, output: OutputChannel, logger: Logger) {
        self.host = host
        self.options = options
        self.output = output
        self.sink = { message, _ in output.send(message.jsonBytes) }
        self.logger = logger
        self.store = ItemStore(directory: options.itemsDirectory, logger: logger)
        self.catalog = ToolCatalog(host: host)
    }

    /// A bridge whose messages go to `sink` with the key of the client request each belongs to
    /// (Streamable HTTP: each MCP session its own bridge). `store` is shared by every session of
    /// one server, so items collected in one are resources in all.
    package init(
        host: InProcessHost, options: Options, store: ItemStore, logger: Logger,
        sink: @escaping @Sendable (_ message: JSONValue, _ requestKey: String?) -> Void
    ) {
        self.host = host
        self.options = options
        self.output = nil
        self.sink = sink
        self.logger = logger
        self.store = store
        self.catalog = ToolCatalog(host: host)
    }

    /// The request whose task is running (routes its elicitations and notifications).
    @TaskLocal static var currentRequest: String?

    /// Initializes the host (protocol version 2, the granted permissions and locale) and starts
    /// forwarding its events.
    package func start() async throws(ResponseError) {
        _ = try await host.initialize(InitializeRequest(
            clientInfo: .init(name: "context-host mcp", version: HostConfiguration.hostVersion), protocolVersion: 2,
            locale: options.locale, grantedPermissions: options.grantedPermissions))
        let events = host.events()
        Task { [self] in
            for await event in events { await hostEvent(event) }
        }
    }

    /// Reads messages from `fd` until end of input; returns when every request has ended.
    package func run(input fd: Int32, maximumMessageBytes: Int) {
        var framer = MessageFramer(maximumMessageBytes: maximumMessageBytes, framing: .newlineDelimited)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            chunk.withUnsafeBytes { buffer in
                framer.consume(UnsafeRawBufferPointer(rebasing: buffer[..<count])) { event in
                    switch event {
                    case .message(let bytes): receive(bytes)
                    case .oversized(let length):
                        send(["jsonrpc": "2.0", "id": nil, "error": MCPError(MCP.Code.invalidRequest, "A message of \(length) bytes is larger than the limit (\(maximumMessageBytes) bytes).").json])
                    case .badHeader(let reason):
                        send(["jsonrpc": "2.0", "id": nil, "error": MCPError(MCP.Code.parseError, reason).json])
                    }
                }
            }
        }
        for event in framer.finish() {
            if case .message(let bytes) = event { receive(bytes) }
        }
        // End of input: the client is gone. Cancel what runs and wait for it to end.
        let done = Mutex(false)
        Task {
            await shutdown()
            done.withLock { $0 = true }
        }
        while !done.withLock({ $0 }) { usleep(2000) }
        output?.flush()
    }

    /// Ends the session: cancels what runs (open elicitations answer nothing), waits for it,
    /// closes the waiting collections and the host (its workers stop).
    package func shutdown() async {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            for (_, continuation) in state.outgoing { continuation.resume(returning: nil) }
            state.outgoing = [:]
            return Array(state.running.values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        let runs = state.withLock { state in
            defer { state.runs = [:] }
            return state.runs.values.map(\.run)
        }
        for run in runs { await run.cancel() }
        await host.close()
    }

    // MARK: Messages

    /// Handles one message (a JSON-RPC object's text, no framing).
    package func receive(_ bytes: [UInt8]) {
        guard let message = try? JSONReader.parse(bytes) else {
            return send(["jsonrpc": "2.0", "id": nil, "error": MCPError(MCP.Code.parseError, "Not valid JSON.").json])
        }
        guard case .object(let object) = message else {
            return send(["jsonrpc": "2.0", "id": nil, "error": MCPError(MCP.Code.invalidRequest, "A message must be a JSON object (batches are not supported).").json])
        }
        let id = object["id"]
        if let method = object["method"]?.stringValue {
            let params = object["params"]?.objectValue ?? JSONObject()
            if let id {
                guard Self.isValidID(id) else {
                    return send(["jsonrpc": "2.0", "id": nil, "error": MCPError(MCP.Code.invalidRequest, "The id must be a string or an integer.").json])
                }
                request(id: id, method: method, params: params)
            } else {
                notification(method: method, params: params)
            }
        } else if let id, object["result"] != nil || object["error"] != nil {
            // The answer to one of our requests.
            guard let number = id.intValue else { return }
            let continuation = state.withLock { $0.outgoing.removeValue(forKey: number) }
            continuation?.resume(returning: object["result"])
        } else if let id {
            send(["jsonrpc": "2.0", "id": Self.isValidID(id) ? id : nil, "error": MCPError(MCP.Code.invalidRequest, "A request needs a method.").json])
        }
    }

    package static func isValidID(_ id: JSONValue) -> Bool {
        switch id {
        case .string: true
        case .number(let number): number.isFinite && number == number.rounded() && abs(number) < 9e15
        default: false
        }
    }

    private func notification(method: String, params: JSONObject) {
        switch method {
        case MCP.Method.cancelled:
            guard let id = params["requestId"] else { return }
            cancelRequest(key: id.jsonString)
        default:
            break  // notifications/initialized, roots changes and unknown ones need nothing
        }
    }

    /// Cancels the request with key `key` (`id.jsonString`): its task, the host request under it,
    /// and anything more it would send. Ends a `subscriptions/listen` stream too. Streamable HTTP
    /// calls it when a 2026-07-28 request's response stream closes.
    package func cancelRequest(key: String) {
        let task = state.withLock { state -> Task<Void, Never>? in
            if state.listeners.removeValue(forKey: key) != nil { return nil }
            guard let task = state.running[key] else { return nil }
            state.cancelled.insert(key)
            return task
        }
        task?.cancel()
    }

    /// What a request says of its era; checks the 2026-07-28 envelope.
    private enum Admission {
        case handshake(MCPClientCapabilities)
        case stateless(MCPClientCapabilities)
        case refused(MCPError)
    }

    private func admit(method: String, params: JSONObject) -> Admission {
        let meta = params["_meta"]?.objectValue
        if method != MCP.Method.initialize, let version = meta?[MCP.MetaKey.protocolVersion] {
            return state.withLock { state -> Admission in
                if case .handshake = state.era {
                    return .refused(MCPError(MCP.Code.invalidRequest, "This connection serves the \(MCP.handshakeVersion) handshake; requests carrying the 2026-07-28 envelope are not accepted on it."))
                }
                guard version.stringValue == MCP.statelessVersion else {
                    return .refused(MCPError(
                        MCP.Code.unsupportedProtocolVersion, "Unsupported protocol version",
                        data: ["supported": [.string(MCP.statelessVersion), .string(MCP.handshakeVersion)], "requested": version]))
                }
                guard let capabilities = meta?[MCP.MetaKey.clientCapabilities], capabilities.objectValue != nil else {
                    return .refused(MCPError(MCP.Code.invalidParams, "params._meta is missing the required envelope key \(MCP.MetaKey.clientCapabilities)."))
                }
                state.era = .stateless
                return .stateless(MCPClientCapabilities(json: capabilities))
            }
        }
        return state.withLock { state -> Admission in
            switch state.era {
            case .handshake(_, let capabilities):
                return .handshake(capabilities)
            case .stateless where method == MCP.Method.initialize:
                return .refused(MCPError(
                    MCP.Code.unsupportedProtocolVersion, "This connection serves the 2026-07-28 protocol; the initialize handshake is not accepted.",
                    data: ["supported": [.string(MCP.statelessVersion)], "requested": params["protocolVersion"] ?? .null]))
            case .stateless:
                return .refused(MCPError(MCP.Code.invalidParams, "params._meta needs \(MCP.MetaKey.protocolVersion) and \(MCP.MetaKey.clientCapabilities) (2026-07-28)."))
            case .undecided where method == MCP.Method.initialize || method == MCP.Method.ping:
                return .handshake(MCPClientCapabilities())
            case .undecided:
                return .refused(MCPError(
                    MCP.Code.invalidRequest,
                    "Not initialized: send initialize (\(MCP.handshakeVersion)) first, or the 2026-07-28 envelope in params._meta."))
            }
        }
    }

    private func request(id: JSONValue, method: String, params: JSONObject) {
        let stateless: Bool
        let capabilities: MCPClientCapabilities
        switch admit(method: method, params: params) {
        case .refused(let error): return fail(id, error)
        case .handshake(let declared):
            stateless = false
            capabilities = declared
        case .stateless(let declared):
            stateless = true
            capabilities = declared
        }
        let context = RequestContext(id: id, stateless: stateless, capabilities: capabilities, progressToken: params["_meta"]?["progressToken"])
        switch method {
        case MCP.Method.initialize:
            initialize(id: id, params: params)
        case MCP.Method.ping where !stateless:
            respond(context, [:])
        case MCP.Method.discover where stateless:
            respond(context, [
                "supportedVersions": [.string(MCP.statelessVersion), .string(MCP.handshakeVersion)],
                "capabilities": Self.capabilities, "instructions": .string(Self.instructions),
            ], cacheable: true)
        case MCP.Method.listen where stateless:
            listen(context, params: params)
        case MCP.Method.setLogLevel where !stateless:
            respond(context, [:])
        case MCP.Method.toolsList, MCP.Method.toolsCall, MCP.Method.resourcesList, MCP.Method.resourcesRead, MCP.Method.resourceTemplatesList:
            spawn(context) { [self] in
                switch method {
                case MCP.Method.toolsList: await listTools(context)
                case MCP.Method.toolsCall: await callTool(context, params: params)
                case MCP.Method.resourcesList: listResources(context, params: params)
                case MCP.Method.resourcesRead: readResource(context, params: params)
                default: respond(context, ["resourceTemplates": [Self.itemTemplate]], cacheable: true)
                }
            }
        default:
            fail(id, MCPError(MCP.Code.methodNotFound, "Method not found: \(method)", data: ["method": .string(method)]))
        }
    }

    private func initialize(id: JSONValue, params: JSONObject) {
        let requested = params["protocolVersion"]?.stringValue ?? MCP.handshakeVersion
        let version = MCP.handshakeVersions.contains(requested) ? requested : MCP.handshakeVersion
        let capabilities = MCPClientCapabilities(json: params["capabilities"])
        state.withLock { $0.era = .handshake(version: version, capabilities: capabilities) }
        send(["jsonrpc": "2.0", "id": id, "result": [
            "protocolVersion": .string(version), "capabilities": Self.capabilities, "serverInfo": serverInfo,
            "instructions": .string(Self.instructions),
        ]], for: id.jsonString)
    }

    static let capabilities: JSONValue = ["tools": ["listChanged": true], "resources": ["listChanged": true]]
    static let instructions = "Tools collect context items from ContextHost providers (forms ask the user for what the arguments leave out); each item becomes a contexthost:// resource."
    static let itemTemplate: JSONValue = [
        "uriTemplate": "contexthost://items/{providerId}/{itemId}", "name": "item", "title": "Collected context item",
        "description": "An item collected with a tool; readable in each of its encodings.",
    ]

    // MARK: Requests

    struct RequestContext: Sendable {
        var id: JSONValue
        var stateless: Bool
        var capabilities: MCPClientCapabilities
        var progressToken: JSONValue?
        var key: String { id.jsonString }
    }

    /// Runs `work` as the request's task, cancelled by `notifications/cancelled`. At most
    /// `maximumRunning` at once, and an id may not be reused while its request runs.
    private func spawn(_ context: RequestContext, _ work: @escaping @Sendable () async -> Void) {
        let key = context.key
        let refusal = state.withLock { state -> MCPError? in
            guard state.running[key] == nil else {
                return MCPError(MCP.Code.invalidRequest, "Request id \(key) is already in use by a request that has not been answered.")
            }
            guard state.running.count < Self.maximumRunning else {
                return MCPError(MCP.Code.invalidRequest, "Too many requests in flight (\(Self.maximumRunning)); wait for answers before sending more.")
            }
            // (Stored under the lock the task needs to remove itself: it cannot finish first.)
            state.running[key] = Task {
                await Self.$currentRequest.withValue(key) { await work() }
                self.state.withLock { state in
                    state.running.removeValue(forKey: key)
                    state.cancelled.remove(key)
                }
            }
            return nil
        }
        if let refusal { send(["jsonrpc": "2.0", "id": context.id, "error": refusal.json], for: key) }
    }

    func respond(_ context: RequestContext, _ result: JSONObject, cacheable: Bool = false) {
        var result = result
        if context.stateless {
            result["resultType"] = "complete"
            result["_meta"] = [MCP.MetaKey.serverInfo: serverInfo]
            if cacheable {
                result["ttlMs"] = 0
                result["cacheScope"] = "private"
            }
        }
        guard !isCancelled(context) else { return }
        send(["jsonrpc": "2.0", "id": context.id, "result": .object(result)], for: context.key)
    }

    func fail(_ id: JSONValue, _ error: MCPError) {
        guard !state.withLock({ $0.cancelled.contains(id.jsonString) }) else { return }
        send(["jsonrpc": "2.0", "id": id, "error": error.json], for: id.jsonString)
    }

    func isCancelled(_ context: RequestContext) -> Bool {
        state.withLock { $0.cancelled.contains(context.key) }
    }

    /// Sends `message`, as part of the request `key` (default: the request whose task runs).
    func send(_ message: JSONValue, for key: String? = MCPBridge.currentRequest) {
        sink(message, key)
    }

    // MARK: Listening (2026-07-28)

    private func listen(_ context: RequestContext, params: JSONObject) {
        let filter = params["notifications"]?.objectValue ?? JSONObject()
        let listener = Listener(id: context.id, tools: filter["toolsListChanged"]?.boolValue == true, resources: filter["resourcesListChanged"]?.boolValue == true)
        let accepted = state.withLock { state -> Bool in
            guard state.listeners[context.key] != nil || state.listeners.count < Self.maximumListeners else { return false }
            state.listeners[context.key] = listener
            return true
        }
        guard accepted else {
            return fail(context.id, MCPError(MCP.Code.invalidRequest, "Too many open subscriptions (\(Self.maximumListeners)); cancel one first."))
        }
        var honored = JSONObject()
        if listener.tools { honored["toolsListChanged"] = true }
        if listener.resources { honored["resourcesListChanged"] = true }
        send(["jsonrpc": "2.0", "method": .string(MCP.Method.subscriptionAcknowledged), "params": [
            "_meta": [MCP.MetaKey.subscriptionID: context.id], "notifications": .object(honored),
        ]], for: context.key)
    }

    /// Tells the client the tools or the resources changed: pushed in a 2025-11-25 session, on
    /// each listening stream that asked for it under 2026-07-28.
    func listChanged(tools: Bool) {
        let method = tools ? MCP.Method.toolsListChanged : MCP.Method.resourcesListChanged
        let (era, listeners) = state.withLock { ($0.era, Array($0.listeners.values)) }
        switch era {
        case .handshake:
            // Of no request: over Streamable HTTP it goes on the session's GET stream.
            send(["jsonrpc": "2.0", "method": .string(method)], for: nil)
        case .stateless:
            for listener in listeners where tools ? listener.tools : listener.resources {
                send(["jsonrpc": "2.0", "method": .string(method), "params": ["_meta": [MCP.MetaKey.subscriptionID: listener.id]]], for: listener.id.jsonString)
            }
        case .undecided:
            break
        }
    }

    private func hostEvent(_ event: HostEvent) async {
        switch event {
        case .progress(let progress):
            guard case .string(let token) = progress.token, let (clientToken, request) = state.withLock({ $0.progress[token] }) else { return }
            var params: JSONObject = ["progressToken": clientToken, "progress": .number(progress.done)]
            params.setIfPresent("total", progress.total.map(JSONValue.number))
            params.setIfPresent("message", progress.message.map(JSONValue.string))
            send(["jsonrpc": "2.0", "method": .string(MCP.Method.progress), "params": .object(params)], for: request)
        case .providersChanged:
            if await catalog.invalidate() { listChanged(tools: true) }
        case .log, .notification:
            break  // (provider log lines are in the host's log, on stderr)
        }
    }

    /// A host progress token for the request's client token, forwarded while `body` runs.
    func withProgress<T: Sendable>(_ context: RequestContext, _ body: (ProgressToken?) async -> T) async -> T {
        guard let clientToken = context.progressToken, clientToken.stringValue != nil || clientToken.intValue != nil else {
            return await body(nil)
        }
        let token = state.withLock { state -> String in
            defer { state.nextToken += 1 }
            let token = "mcp-\(state.nextToken)"
            state.progress[token] = (clientToken, context.key)
            return token
        }
        let result = await body(.string(token))
        _ = state.withLock { $0.progress.removeValue(forKey: token) }
        return result
    }

    // MARK: Elicitation (2025-11-25)

    /// Sends `elicitation/create` and waits for the answer: `(action, content)`, or nil when the
    /// client answered an error, left, or the request was cancelled.
    func elicit(message: String, schema: JSONValue) async -> (String, JSONObject)? {
        let id = state.withLock { state -> Int in
            defer { state.nextOutgoingID += 1 }
            return state.nextOutgoingID
        }
        let answer: JSONValue? = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let registered = state.withLock { state -> Bool in
                    guard !Task.isCancelled else { return false }
                    state.outgoing[id] = continuation
                    return true
                }
                guard registered else { return continuation.resume(returning: nil) }
                send(["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(MCP.Method.elicit), "params": [
                    "mode": "form", "message": .string(message), "requestedSchema": schema,
                ]])
            }
        } onCancel: {
            state.withLock { $0.outgoing.removeValue(forKey: id) }?.resume(returning: nil)
        }
        guard let answer, let action = answer["action"]?.stringValue else { return nil }
        return (action, answer["content"]?.objectValue ?? JSONObject())
    }

    // MARK: Pending runs (2026-07-28)

    /// Keeps `run` for the retry and returns its `requestState`: 128 random bits (unguessable; the
    /// state itself stays here), valid for `requestStateLifetime` and for this tool only.
    func park(_ run: CollectionRun, toolName: String) async -> String {
        var generator = SystemRandomNumberGenerator()
        let token = "v1." + (0..<2).map { _ in
            let word = UInt64.random(in: 0...UInt64.max, using: &generator)
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        let now = ContinuousClock.now
        let dropped = state.withLock { state -> [CollectionRun] in
            var dropped = state.runs.filter { $0.value.expires < now }.map(\.value.run)
            state.runs = state.runs.filter { $0.value.expires >= now }
            if state.runs.count >= Self.maximumPendingRuns, let oldest = state.runs.min(by: { $0.value.expires < $1.value.expires }) {
                dropped.append(oldest.value.run)
                state.runs[oldest.key] = nil
            }
            state.runs[token] = PendingRun(run: run, toolName: toolName, expires: now + Self.requestStateLifetime)
            return dropped
        }
        for old in dropped { await old.cancel() }
        return token
    }

    /// The run a retry's `requestState` names, taken out (one retry per state).
    func unpark(_ token: String, toolName: String) -> CollectionRun? {
        state.withLock { state in
            guard let pending = state.runs[token], pending.toolName == toolName, pending.expires >= ContinuousClock.now else { return nil }
            state.runs[token] = nil
            return pending.run
        }
    }
}
