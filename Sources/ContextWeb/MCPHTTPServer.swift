import ContextMCP
import ContextProtocol
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// What `mcp --http` was asked for: the listener's own options (address, allow-lists, token,
/// connection cap, rate, body limit: the same as `serve --listen`) and the sessions' limits.
package struct MCPHTTPOptions: Sendable {
    package var listener: WebListenerOptions
    /// The most MCP sessions (2025-11-25 handshakes) at once; another `initialize` is answered 503.
    package var maximumSessions = 32
    /// A session with no request and no open stream for this long is ended.
    package var sessionIdleTimeout: Duration = .seconds(1800)
    /// How often an open GET stream gets a `: ping` comment (a client that vanished without
    /// closing fails a write in the end, which ends the stream and lets the session expire).
    package var pingInterval: Duration = .seconds(30)

    package init(listener: WebListenerOptions) {
        self.listener = listener
    }
}

/// Makes the bridge behind a new MCP session: its own host, started, its messages going to `sink`.
package typealias MCPBridgeFactory = @Sendable (
    _ sink: @escaping @Sendable (_ message: JSONValue, _ requestKey: String?) -> Void
) async throws -> MCPBridge

/// `context-host mcp --http`: the MCP Streamable HTTP transport at `/mcp` (docs/mcp.md), behind
/// the same gate as `serve --listen` (Host and Origin allow-lists, the token, the connection cap,
/// the body limit), checked before any of this runs.
///
/// - 2025-11-25 (and 2025-06-18, 2025-03-26): `initialize` without `Mcp-Session-Id` opens a
///   session (its own bridge and host) and answers its id in `Mcp-Session-Id`; every later POST,
///   GET and DELETE carries it (missing: 400, unknown or ended: 404). A POST with a request is
///   answered as JSON when its answer is the first thing the bridge sends for it, else as an SSE
///   stream carrying the request's progress and elicitation requests, then its answer. GET opens
///   the session's stream for what belongs to no request (list changes); DELETE ends the session.
/// - 2026-07-28: no session; each POST carries `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method`
///   (and `Mcp-Name`), checked against the body's `_meta` envelope (mismatch: 400, -32020). One
///   shared stateless bridge serves them, each request under an id of the server's own (the
///   client's id is restored in what is sent back); closing the response stream cancels it.
package enum MCPHTTPServer {
    /// The MCP endpoint's path.
    package static let endpointPath = "/mcp"

    /// Serves until the process is asked to stop (SIGTERM, SIGINT).
    ///
    /// - Parameter listening: called once bound, with the endpoint URL (real port filled in).
    package static func run(
        options: MCPHTTPOptions, factory: @escaping MCPBridgeFactory, logger: Logger,
        listening: @escaping @Sendable (String) -> Void
    ) async throws {
        let gate = ListenerGate(
            maximumConnections: options.listener.maximumConnections, maximumBodyBytes: options.listener.maximumMessageBytes,
            closeOnInputClosed: true)
        let sessions = MCPHTTPSessions(options: options, factory: factory, logger: logger)
        let connections = ConnectionWatches(options: options)
        let router = Router(context: MCPRequestContext.self)
        router.get("/") { _, _ -> Response in
            plainText(.ok, "context-host: MCP over Streamable HTTP at \(endpointPath) (docs/mcp.md).\n")
        }
        router.post(RouterPath(endpointPath)) { request, context -> Response in
            try await post(request, context: context, sessions: sessions, connections: connections, options: options)
        }
        router.get(RouterPath(endpointPath)) { request, context -> Response in
            await get(request, context: context, sessions: sessions, connections: connections, pingInterval: options.pingInterval)
        }
        router.delete(RouterPath(endpointPath)) { request, _ -> Response in
            await delete(request, sessions: sessions)
        }
        let server = HTTPServerBuilder { responder in
            GatedChannel(inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: .seconds(30))), gate: gate)
        }
        let app = Application(
            router: router, server: server, configuration: options.listener.applicationConfiguration,
            onServerRunning: options.listener.onServerRunning(gate: gate, scheme: "http", path: endpointPath, listening: listening),
            logger: logger)
        let sweeper = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(30))
                await sessions.sweep()
            }
        }
        defer { sweeper.cancel() }
        try await app.runService()
        await sessions.closeAll()
    }

    // MARK: POST

    static func post(
        _ request: Request, context: MCPRequestContext, sessions: MCPHTTPSessions, connections: ConnectionWatches,
        options: MCPHTTPOptions
    ) async throws -> Response {
        let watch = connections.watch(context.channel)
        if let wait = watch.takeRateToken() { try await Task.sleep(for: wait) }
        let posted: PostedMessage
        switch await readPost(request, options: options) {
        case .answer(let response): return response
        case .next(let message): posted = message
        }
        let id = posted.id
        let session: MCPHTTPSession
        let newSession: Bool
        switch await route(posted, request: request, sessions: sessions) {
        case .answer(let response): return response
        case .next(let routed):
            session = routed.0
            newSession = routed.1
        }

        // Notifications and responses: 202, nothing more on this POST.
        guard posted.isRequest, let id else {
            return accept(posted, session: session)
        }

        // A request: its own stream of what the bridge sends for it (a client that does not read
        // it loses the oldest past `streamBuffer`, progress first: the answer comes last).
        let (stream, continuation) = makeStream()
        let (key, forwarded) = forwarding(posted, id: id, session: session)
        // (Optional spelled out: JSONValue takes `nil` as its own .null.)
        let clientID: JSONValue? = session.stateless ? .some(id) : .none
        guard session.open(key: key, continuation: continuation, clientID: clientID) else {
            continuation.finish()
            if session.isClosed { return sessionNotFound(id: id) }
            return jsonError(.conflict, id: id, code: MCP.Code.invalidRequest, "Request id \(AccessPolicy.printable(key)) is in use by a request that has not been answered.")
        }
        watch.begin(session: session, key: key)
        // Until the answer is written (by the handler, or by the SSE body after it returns), the
        // connection closing abandons the request.
        var handedOver = false
        defer { if !handedOver { watch.end(key: key) } }
        guard let bridge = session.bridge else {
            session.abandon(key: key, cancel: false)
            return sessionNotFound(id: id)
        }
        bridge.receive(forwarded)
        let reader = StreamReader(stream)
        guard let first = await reader.next() else {
            // The client left, or the session ended.
            return sessionNotFound(id: id)
        }
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if newSession { headers[.mcpSessionID] = session.id }
        if isAnswer(first) {
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: first.jsonBytes)))
        }
        headers[.contentType] = "text/event-stream"
        handedOver = true
        let detached = watch.detach(key: key)
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { detached.end() }
                try await writer.write(event(first))
                while let message = await reader.next() {
                    try await writer.write(event(message))
                    if isAnswer(message) { break }
                }
                try await writer.finish(nil)
            })
    }

    /// A step of a POST: go on with a value, or answer now.
    enum PostStep<Value> {
        case next(Value)
        case answer(Response)
    }

    /// A POST's JSON-RPC message with what routing needs from it and its headers.
    struct PostedMessage {
        /// The body as it came.
        var bytes: [UInt8]
        var object: JSONObject
        var method: String?
        var id: JSONValue?
        /// A method and an id (not a notification or a response).
        var isRequest: Bool
        /// `MCP-Protocol-Version`, when sent.
        var version: String?
        /// `Mcp-Session-Id`, when sent.
        var sessionID: String?
    }

    /// The POST's body read and checked: accepted types, one JSON-RPC message within the size
    /// limit with a valid id, and at most one protocol-version and one session header.
    static func readPost(_ request: Request, options: MCPHTTPOptions) async -> PostStep<PostedMessage> {
        guard accepts(request, "application/json") && accepts(request, "text/event-stream") else {
            return .answer(jsonError(.notAcceptable, code: MCP.Code.invalidRequest, "A POST must accept both application/json and text/event-stream (Accept header)."))
        }
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/json") else {
            return .answer(jsonError(.unsupportedMediaType, code: MCP.Code.invalidRequest, "The body must be one JSON-RPC message with Content-Type: application/json."))
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: options.listener.maximumMessageBytes)
        } catch {
            return .answer(jsonError(.contentTooLarge, code: MCP.Code.invalidRequest, "The body is larger than the limit (\(options.listener.maximumMessageBytes) bytes, --max-message-bytes)."))
        }
        let bytes = Array(body.readableBytesView)
        guard let message = try? JSONReader.parse(bytes) else {
            return .answer(jsonError(.badRequest, code: MCP.Code.parseError, "The body is not valid JSON."))
        }
        guard case .object(let object) = message else {
            return .answer(jsonError(.badRequest, code: MCP.Code.invalidRequest, "The body must be one JSON-RPC message, a JSON object (batches are not supported)."))
        }
        let method = object["method"]?.stringValue
        let id = object["id"]
        let isRequest = method != nil && id != nil
        guard method != nil || (id != nil && (object["result"] != nil || object["error"] != nil)) else {
            return .answer(jsonError(.badRequest, code: MCP.Code.invalidRequest, "Not a JSON-RPC request, notification or response."))
        }
        if isRequest, let id, !MCPBridge.isValidID(id) {
            return .answer(jsonError(.badRequest, code: MCP.Code.invalidRequest, "The id must be a string or an integer."))
        }
        let versions = request.headers[values: .mcpProtocolVersion]
        guard versions.count <= 1 else {
            return .answer(jsonError(.badRequest, id: id, code: MCP.Code.invalidRequest, "More than one MCP-Protocol-Version header."))
        }
        let sessionIDs = request.headers[values: .mcpSessionID]
        guard sessionIDs.count <= 1 else {
            return .answer(jsonError(.badRequest, id: id, code: MCP.Code.invalidRequest, "More than one Mcp-Session-Id header."))
        }
        return .next(PostedMessage(
            bytes: bytes, object: object, method: method, id: id, isRequest: isRequest, version: versions.first, sessionID: sessionIDs.first))
    }

    /// Which bridge serves the message: the session it names; a new session for `initialize`; the
    /// stateless bridge for a 2026-07-28 request (its headers checked); else 400. The flag says
    /// whether the session is new (its id goes back in `Mcp-Session-Id`).
    static func route(_ posted: PostedMessage, request: Request, sessions: MCPHTTPSessions) async -> PostStep<(MCPHTTPSession, Bool)> {
        let (id, method, version) = (posted.id, posted.method, posted.version)
        if let sessionID = posted.sessionID {
            guard let found = sessions.find(sessionID) else {
                return .answer(sessionNotFound(id: id))
            }
            if let version, !MCP.handshakeVersions.contains(version) {
                return .answer(jsonError(.badRequest, id: id, code: MCP.Code.invalidRequest, "Unsupported MCP-Protocol-Version '\(AccessPolicy.printable(version))' for this session; supported: \(MCP.handshakeVersions.joined(separator: ", "))."))
            }
            if method == "initialize" {
                return .answer(jsonError(.badRequest, id: id, code: MCP.Code.invalidRequest, "This session is initialized already; send initialize without Mcp-Session-Id to open another."))
            }
            return .next((found, false))
        } else if method == "initialize", posted.isRequest {
            do throws(MCPHTTPRefusal) {
                return .next((try await sessions.create(), true))
            } catch {
                return .answer(jsonError(error.status, id: id, code: MCP.Code.internalError, error.message, retryAfter: error.status == .serviceUnavailable))
            }
        } else if version == MCP.statelessVersion || posted.object["params"]?["_meta"]?[MCP.MetaKey.protocolVersion] != nil
            || (version != nil && !MCP.handshakeVersions.contains(version ?? ""))
        {
            if let refusal = checkStatelessHeaders(request, object: posted.object, version: version) { return .answer(refusal) }
            do throws(MCPHTTPRefusal) {
                return .next((try await sessions.stateless(), false))
            } catch {
                return .answer(jsonError(error.status, id: id, code: MCP.Code.internalError, error.message))
            }
        } else {
            return .answer(jsonError(.badRequest, id: id, code: MCP.Code.invalidRequest, "Missing Mcp-Session-Id: send initialize first (MCP \(MCP.handshakeVersions[0])) and then its Mcp-Session-Id with every request, or send requests with the \(MCP.statelessVersion) envelope and MCP-Protocol-Version header."))
        }
    }

    /// A notification or a response: passed to the session's bridge (a cancellation also
    /// abandons its request) and answered 202.
    static func accept(_ posted: PostedMessage, session: MCPHTTPSession) -> Response {
        if session.stateless {
            // 2026-07-28 has no client notifications over HTTP (closing a response stream cancels).
            return Response(status: .accepted)
        }
        if posted.method == "notifications/cancelled", let requestID = posted.object["params"]?["requestId"] {
            session.abandon(key: requestID.jsonString, cancel: false)
        }
        session.bridge?.receive(posted.bytes)
        return Response(status: .accepted)
    }

    /// The request's key in the session and the bytes the bridge is given: on the stateless
    /// bridge, the request under an id of the server's own; else the body as it came.
    static func forwarding(_ posted: PostedMessage, id: JSONValue, session: MCPHTTPSession) -> (key: String, bytes: [UInt8]) {
        guard session.stateless else { return (id.jsonString, posted.bytes) }
        let internalID = JSONValue.string(session.nextInternalID())
        var object = posted.object
        object["id"] = internalID
        return (internalID.jsonString, JSONValue.object(object).jsonBytes)
    }

    /// The 2026-07-28 routing headers: `MCP-Protocol-Version` equal to the envelope's version,
    /// `Mcp-Method` to the body's method, `Mcp-Name` to the name a `tools/call`, `resources/read`
    /// or `prompts/get` carries. A missing or different one: 400 with -32020.
    static func checkStatelessHeaders(_ request: Request, object: JSONObject, version: String?) -> Response? {
        let id = object["id"]
        let method = object["method"]?.stringValue
        let envelope = object["params"]?["_meta"]?[MCP.MetaKey.protocolVersion]?.stringValue
        guard let version else {
            return jsonError(.badRequest, id: id, code: MCP.Code.headerMismatch, "Missing MCP-Protocol-Version header (\(MCP.statelessVersion) requests carry it, equal to params._meta.\(MCP.MetaKey.protocolVersion)).")
        }
        guard version == MCP.statelessVersion else {
            return jsonError(.badRequest, id: id, code: MCP.Code.unsupportedProtocolVersion, "Unsupported protocol version", data: [
                "supported": .array(([MCP.statelessVersion] + MCP.handshakeVersions).map(JSONValue.string)), "requested": .string(version),
            ])
        }
        if let envelope, envelope != version {
            return jsonError(.badRequest, id: id, code: MCP.Code.headerMismatch, "The MCP-Protocol-Version header (\(AccessPolicy.printable(version))) does not match params._meta.\(MCP.MetaKey.protocolVersion) (\(AccessPolicy.printable(envelope))).")
        }
        let methods = request.headers[values: .mcpMethod]
        guard methods.count == 1, let header = methods.first, header == method else {
            return jsonError(.badRequest, id: id, code: MCP.Code.headerMismatch, methods.isEmpty ? "Missing Mcp-Method header (\(MCP.statelessVersion) requests carry their method in it)." : "The Mcp-Method header does not match the body's method.")
        }
        let nameKey: String? = switch method {
        case "tools/call", "prompts/get": "name"
        case "resources/read": "uri"
        default: nil
        }
        if let nameKey, let value = object["params"]?[nameKey]?.stringValue {
            let names = request.headers[values: .mcpName]
            guard names.count == 1, let header = names.first, header == value || header == encodedHeaderValue(value) else {
                return jsonError(.badRequest, id: id, code: MCP.Code.headerMismatch, names.isEmpty ? "Missing Mcp-Name header (a \(method ?? "") request carries params.\(nameKey) in it)." : "The Mcp-Name header does not match params.\(nameKey).")
            }
        }
        return nil
    }

    /// A header value as 2026-07-28 clients write it: verbatim when plain printable ASCII without
    /// edge spaces, else `=?base64?…?=` of its UTF-8.
    static func encodedHeaderValue(_ value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
            && value.first != " " && value.last != " " && !(value.hasPrefix("=?base64?") && value.hasSuffix("?="))
        return plain ? value : "=?base64?" + Base64.encode(Array(value.utf8)) + "?="
    }

    /// Messages kept for one stream whose client does not read (the oldest dropped past it).
    static let streamBuffer = 4096

    /// A stream of what the bridge sends towards one response: at most `streamBuffer` messages
    /// wait while the client does not read (the writer waits for the socket, so nothing else piles up).
    static func makeStream() -> (AsyncStream<JSONValue>, AsyncStream<JSONValue>.Continuation) {
        AsyncStream<JSONValue>.makeStream(bufferingPolicy: .bufferingNewest(streamBuffer))
    }

    // MARK: GET, DELETE

    static func get(
        _ request: Request, context: MCPRequestContext, sessions: MCPHTTPSessions, connections: ConnectionWatches, pingInterval: Duration
    ) async -> Response {
        guard let sessionID = request.headers[.mcpSessionID] else {
            if request.headers[.mcpProtocolVersion] == MCP.statelessVersion {
                return jsonError(.methodNotAllowed, code: MCP.Code.invalidRequest, "\(MCP.statelessVersion) has no GET stream; POST requests (subscriptions/listen for list changes).", allow: "POST")
            }
            return jsonError(.badRequest, code: MCP.Code.invalidRequest, "Missing Mcp-Session-Id: GET opens the stream of an initialized session.")
        }
        guard accepts(request, "text/event-stream") else {
            return jsonError(.notAcceptable, code: MCP.Code.invalidRequest, "GET must accept text/event-stream.")
        }
        guard let session = sessions.find(sessionID) else { return sessionNotFound(id: nil) }
        let (stream, continuation) = makeStream()
        guard let token = session.openGeneral(continuation) else {
            continuation.finish()
            return jsonError(.conflict, code: MCP.Code.invalidRequest, "This session's GET stream is open already (one per session).")
        }
        let watch = connections.watch(context.channel)
        watch.begin(session: session, key: nil, generalToken: token)
        let detached = watch.detach(key: nil)
        let reader = StreamReader(stream)
        // A comment every `pingInterval`: a client that vanished without closing (a dropped
        // network) fails a write in the end, which ends the stream and lets the idle session
        // expire. The pinger ends with the stream (a finished continuation) or the body.
        let pinger = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: pingInterval)
                if case .terminated = continuation.yield(.null) { return }
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                defer {
                    pinger.cancel()
                    detached.end()
                    session.closeGeneral(token)
                }
                // A comment first, so the client sees the stream open at once.
                try await writer.write(ByteBuffer(string: ": stream open\n\n"))
                while let message = await reader.next() {
                    try await writer.write(message == .null ? ByteBuffer(string: ": ping\n\n") : event(message))
                }
                try await writer.finish(nil)
            })
    }

    static func delete(_ request: Request, sessions: MCPHTTPSessions) async -> Response {
        guard let sessionID = request.headers[.mcpSessionID] else {
            return jsonError(.badRequest, code: MCP.Code.invalidRequest, "Missing Mcp-Session-Id: DELETE ends an initialized session.")
        }
        guard let session = sessions.remove(sessionID) else { return sessionNotFound(id: nil) }
        await session.close()
        return Response(status: .noContent)
    }

    // MARK: Helpers

    /// Whether the request's `Accept` takes `type` (or `*/*`).
    static func accepts(_ request: Request, _ type: String) -> Bool {
        request.headers[values: .accept].contains { value in
            value.split(separator: ",").contains { entry in
                let media = entry.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }.lowercased()
                return media == type || media == "*/*"
            }
        }
    }

    /// Whether `message` is an answer (result or error), the last thing sent for a request.
    static func isAnswer(_ message: JSONValue) -> Bool {
        message["method"] == nil && (message["result"] != nil || message["error"] != nil)
    }

    static func event(_ message: JSONValue) -> ByteBuffer {
        var buffer = ByteBuffer(string: "event: message\ndata: ")
        buffer.writeBytes(message.jsonBytes)  // (JSON text has no raw newline)
        buffer.writeString("\n\n")
        return buffer
    }

    static func sessionNotFound(id: JSONValue?) -> Response {
        jsonError(.notFound, id: id, code: MCP.Code.sessionNotFound, "Session not found: it ended or never existed; send initialize (without Mcp-Session-Id) to open a new one.")
    }

    static func jsonError(
        _ status: HTTPResponse.Status, id: JSONValue? = nil, code: Int, _ message: String, data: JSONValue? = nil, retryAfter: Bool = false,
        allow: String? = nil
    ) -> Response {
        var error: JSONObject = ["code": .number(Double(code)), "message": .string(message)]
        if let data { error["data"] = data }
        let body: JSONValue = ["jsonrpc": "2.0", "id": id ?? .null, "error": .object(error)]
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if retryAfter { headers[.retryAfter] = "1" }
        if let allow { headers[.allow] = allow }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body.jsonBytes)))
    }

    private static func plainText(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}


extension HTTPField.Name {
    static let mcpSessionID = Self("Mcp-Session-Id")!
    static let mcpProtocolVersion = Self("MCP-Protocol-Version")!
    static let mcpMethod = Self("Mcp-Method")!
    static let mcpName = Self("Mcp-Name")!
}

/// The request context: Hummingbird's, plus the connection (to learn when the client leaves).
package struct MCPRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// A stream read first by the handler and then by the response body it returns: one reader at a
/// time, in that order, never at once.
final class StreamReader: @unchecked Sendable {
    private var iterator: AsyncStream<JSONValue>.AsyncIterator

    init(_ stream: AsyncStream<JSONValue>) { iterator = stream.makeAsyncIterator() }

    func next() async -> JSONValue? { await iterator.next() }
}

/// Why a session could not be had.
struct MCPHTTPRefusal: Error {
    var status: HTTPResponse.Status
    var message: String
}

// MARK: Sessions

/// One MCP session: its bridge and where each message the bridge sends goes.
final class MCPHTTPSession: Sendable {
    /// The `Mcp-Session-Id` (128 random bits, hex); empty for the stateless bridge.
    let id: String
    let stateless: Bool
    private let bridgeSlot = Mutex<MCPBridge?>(nil)

    private struct Stream {
        var continuation: AsyncStream<JSONValue>.Continuation
        /// Stateless: the client's own id, put back in what is sent.
        var clientID: JSONValue?
    }

    private struct Routing {
        var streams: [String: Stream] = [:]
        var general: AsyncStream<JSONValue>.Continuation?
        var generalToken = 0
        /// Messages for the GET stream while none is open (the oldest dropped past 64).
        var backlog: [JSONValue] = []
        var lastUsed = ContinuousClock.now
        var closed = false
        var nextInternalID = 1
    }

    private let routing = Mutex(Routing())

    init(id: String, stateless: Bool) {
        self.id = id
        self.stateless = stateless
    }

    var bridge: MCPBridge? { bridgeSlot.withLock { $0 } }
    func setBridge(_ bridge: MCPBridge) { bridgeSlot.withLock { $0 = bridge } }
    var isClosed: Bool { routing.withLock { $0.closed } }

    func nextInternalID() -> String {
        routing.withLock { routing in
            defer { routing.nextInternalID += 1 }
            return "http-\(routing.nextInternalID)"
        }
    }

    /// Where a message of the bridge goes: the stream of the request it belongs to (ended by the
    /// request's answer); else, in a session, the GET stream (kept until one opens).
    func deliver(_ message: JSONValue, key: String?) {
        routing.withLock { routing in
            routing.lastUsed = .now
            if let key, let stream = routing.streams[key] {
                var message = message
                if let clientID = stream.clientID { message = Self.restoring(clientID, in: message, key: key) }
                stream.continuation.yield(message)
                if MCPHTTPServer.isAnswer(message) {
                    routing.streams[key] = nil
                    stream.continuation.finish()
                }
                return
            }
            // A request whose client left (its answer has nowhere to go), or the stateless bridge.
            guard key == nil, !stateless, !routing.closed else { return }
            if let general = routing.general {
                general.yield(message)
            } else {
                if routing.backlog.count >= 64 { routing.backlog.removeFirst() }
                routing.backlog.append(message)
            }
        }
    }

    /// `message` with the client's id where the bridge has `key`'s (the answer's `id`, a listen
    /// stream's `subscriptionId`).
    static func restoring(_ clientID: JSONValue, in message: JSONValue, key: String) -> JSONValue {
        guard case .object(var object) = message else { return message }
        if let id = object["id"], id.jsonString == key { object["id"] = clientID }
        let subscriptionKey = "io.modelcontextprotocol/subscriptionId"
        if case .object(var params)? = object["params"], case .object(var meta)? = params["_meta"],
            let subscription = meta[subscriptionKey], subscription.jsonString == key
        {
            meta[subscriptionKey] = clientID
            params["_meta"] = .object(meta)
            object["params"] = .object(params)
        }
        return .object(object)
    }

    /// Registers a request's stream; false when its key is in use or the session ended.
    func open(key: String, continuation: AsyncStream<JSONValue>.Continuation, clientID: JSONValue?) -> Bool {
        routing.withLock { routing in
            guard !routing.closed, routing.streams[key] == nil else { return false }
            routing.streams[key] = Stream(continuation: continuation, clientID: clientID)
            routing.lastUsed = .now
            return true
        }
    }

    /// The client left the request `key` (closed its stream, or cancelled it): its stream ends;
    /// with `cancel`, the bridge's request too.
    func abandon(key: String, cancel: Bool) {
        let stream = routing.withLock { $0.streams.removeValue(forKey: key) }
        stream?.continuation.finish()
        if cancel, stream != nil { bridge?.cancelRequest(key: key) }
    }

    /// Opens the GET stream (one at a time): the backlog first. Nil when one is open.
    func openGeneral(_ continuation: AsyncStream<JSONValue>.Continuation) -> Int? {
        routing.withLock { routing in
            guard !routing.closed, routing.general == nil else { return nil }
            for message in routing.backlog { continuation.yield(message) }
            routing.backlog = []
            routing.general = continuation
            routing.generalToken += 1
            return routing.generalToken
        }
    }

    func closeGeneral(_ token: Int) {
        let continuation = routing.withLock { routing -> AsyncStream<JSONValue>.Continuation? in
            guard routing.generalToken == token, let general = routing.general else { return nil }
            routing.general = nil
            routing.lastUsed = .now
            return general
        }
        continuation?.finish()
    }

    /// Idle since: no open stream, and nothing sent or asked since `lastUsed`.
    func idleSince() -> ContinuousClock.Instant? {
        routing.withLock { $0.streams.isEmpty && $0.general == nil ? $0.lastUsed : nil }
    }

    func touch() { routing.withLock { $0.lastUsed = .now } }

    /// Ends the session: every stream ends, the bridge cancels what runs and closes its host.
    func close() async {
        let (streams, general) = routing.withLock { routing in
            routing.closed = true
            defer {
                routing.streams = [:]
                routing.general = nil
            }
            return (Array(routing.streams.values), routing.general)
        }
        for stream in streams { stream.continuation.finish() }
        general?.finish()
        await bridge?.shutdown()
    }
}

/// The open sessions, and the one stateless bridge.
final class MCPHTTPSessions: Sendable {
    let options: MCPHTTPOptions
    let factory: MCPBridgeFactory
    let logger: Logger

    private struct State {
        var sessions: [String: MCPHTTPSession] = [:]
        /// Sessions being created (counted against the cap).
        var creating = 0
        var stateless: Task<MCPHTTPSession?, Never>?
    }
    private let state = Mutex(State())

    init(options: MCPHTTPOptions, factory: @escaping MCPBridgeFactory, logger: Logger) {
        self.options = options
        self.factory = factory
        self.logger = logger
    }

    func find(_ id: String) -> MCPHTTPSession? {
        let session = state.withLock { $0.sessions[id] }
        session?.touch()
        return session
    }

    func remove(_ id: String) -> MCPHTTPSession? {
        state.withLock { $0.sessions.removeValue(forKey: id) }
    }

    /// A new session with its own bridge (and host).
    func create() async throws(MCPHTTPRefusal) -> MCPHTTPSession {
        let admitted = state.withLock { state -> Bool in
            guard state.sessions.count + state.creating < options.maximumSessions else { return false }
            state.creating += 1
            return true
        }
        guard admitted else {
            throw MCPHTTPRefusal(status: .serviceUnavailable, message: "Too many MCP sessions open (the limit is \(options.maximumSessions), --max-sessions); end one (DELETE) or try again later.")
        }
        var generator = SystemRandomNumberGenerator()
        let id = (0..<2).map { _ in
            let hex = String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        let session = MCPHTTPSession(id: id, stateless: false)
        do {
            let bridge = try await factory { [weak session] message, key in session?.deliver(message, key: key) }
            session.setBridge(bridge)
        } catch {
            state.withLock { $0.creating -= 1 }
            logger.error("Could not start an MCP session's host: \(error)")
            throw MCPHTTPRefusal(status: .internalServerError, message: "The session's host did not start: \(error)")
        }
        state.withLock { state in
            state.creating -= 1
            state.sessions[id] = session
        }
        return session
    }

    /// The stateless (2026-07-28) bridge, started on first use.
    func stateless() async throws(MCPHTTPRefusal) -> MCPHTTPSession {
        let task = state.withLock { state -> Task<MCPHTTPSession?, Never> in
            if let task = state.stateless { return task }
            let factory = self.factory
            let logger = self.logger
            let task = Task<MCPHTTPSession?, Never> {
                let session = MCPHTTPSession(id: "", stateless: true)
                do {
                    let bridge = try await factory { [weak session] message, key in session?.deliver(message, key: key) }
                    session.setBridge(bridge)
                    return session
                } catch {
                    logger.error("Could not start the stateless MCP bridge's host: \(error)")
                    return nil
                }
            }
            state.stateless = task
            return task
        }
        guard let session = await task.value else {
            state.withLock { $0.stateless = nil }
            throw MCPHTTPRefusal(status: .internalServerError, message: "The host did not start; see the server's log.")
        }
        return session
    }

    /// Ends the sessions idle longer than the timeout.
    func sweep() async {
        let now = ContinuousClock.now
        let expired = state.withLock { state -> [MCPHTTPSession] in
            let old = state.sessions.values.filter { session in
                guard let since = session.idleSince() else { return false }
                return since.duration(to: now) > options.sessionIdleTimeout
            }
            for session in old { state.sessions[session.id] = nil }
            return old
        }
        for session in expired {
            logger.info("Ending MCP session \(session.id.prefix(8))…: idle for more than \(options.sessionIdleTimeout).")
            await session.close()
        }
    }

    func closeAll() async {
        let (all, stateless) = state.withLock { state in
            defer {
                state.sessions = [:]
                state.stateless = nil
            }
            return (Array(state.sessions.values), state.stateless)
        }
        for session in all { await session.close() }
        if let session = await stateless?.value { await session.close() }
    }
}

// MARK: Connections

/// Per connection: its rate limiter, and the request running on it (ended when the client leaves).
final class ConnectionWatch: Sendable {
    private struct State {
        var limiter: RateLimiter
        var current: [Running] = []
        var closed = false
    }

    struct Running: Sendable {
        var session: MCPHTTPSession
        var key: String?
        var generalToken: Int?
    }

    private let state: Mutex<State>

    init(options: MCPHTTPOptions) {
        state = Mutex(State(limiter: RateLimiter(perSecond: options.listener.messagesPerSecond, burst: options.listener.messageBurst)))
    }

    func takeRateToken() -> Duration? { state.withLock { $0.limiter.take(now: .now) } }

    func begin(session: MCPHTTPSession, key: String?, generalToken: Int? = nil) {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.current.append(Running(session: session, key: key, generalToken: generalToken)) }
            return state.closed
        }
        if closed { Self.leave(Running(session: session, key: key, generalToken: generalToken)) }
    }

    func end(key: String?) {
        state.withLock { state in
            if let index = state.current.firstIndex(where: { $0.key == key }) { state.current.remove(at: index) }
        }
    }

    /// Hands the running request over to its response body (the handler returns first): a token
    /// that ends it when the body is written.
    func detach(key: String?) -> Detached { Detached(watch: self, key: key) }

    struct Detached: Sendable {
        let watch: ConnectionWatch
        let key: String?
        func end() { watch.end(key: key) }
    }

    /// The connection closed: what runs on it is abandoned (and cancelled).
    func closed() {
        let current = state.withLock { state -> [Running] in
            state.closed = true
            defer { state.current = [] }
            return state.current
        }
        for running in current { Self.leave(running) }
    }

    private static func leave(_ running: Running) {
        if let token = running.generalToken { running.session.closeGeneral(token) }
        if let key = running.key { running.session.abandon(key: key, cancel: true) }
    }
}

/// The watch of each open connection.
final class ConnectionWatches: Sendable {
    let options: MCPHTTPOptions
    private let watches = Mutex<[ObjectIdentifier: ConnectionWatch]>([:])

    init(options: MCPHTTPOptions) { self.options = options }

    func watch(_ channel: any Channel) -> ConnectionWatch {
        let key = ObjectIdentifier(channel)
        let (watch, isNew) = watches.withLock { watches -> (ConnectionWatch, Bool) in
            if let watch = watches[key] { return (watch, false) }
            let watch = ConnectionWatch(options: options)
            watches[key] = watch
            return (watch, true)
        }
        if isNew {
            channel.closeFuture.whenComplete { [weak self] _ in
                _ = self?.watches.withLock { $0.removeValue(forKey: key) }
                watch.closed()
            }
        }
        return watch
    }
}
