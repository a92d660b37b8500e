import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// The listener's state every connection shares: the policy (set once the port is known) and
/// the count of open connections.
package final class ListenerGate: Sendable {
    private let policy = Mutex<AccessPolicy?>(nil)
    private let open = Atomic<Int>(0)
    /// The most connections open at once (HTTP and WebSocket); more are answered 503.
    package let maximumConnections: Int
    /// How long a new connection may take to send its request head.
    package let headerTimeout: TimeAmount
    /// Paths a `GET` or `HEAD` may fetch without the token (the composer's public files; the
    /// `Host` and `Origin` checks still apply).
    package let publicPaths: Set<String>
    /// A request whose `Content-Length` is larger is answered 413 before its body is read (nil:
    /// no check here; WebSocket messages have their own limit).
    package let maximumBodyBytes: Int?
    /// Close a connection once the client has closed its side (MCP over HTTP: a client that
    /// leaves while its request runs is gone, and the request is cancelled).
    package let closeOnInputClosed: Bool

    package init(
        maximumConnections: Int, headerTimeout: TimeAmount = .seconds(10), publicPaths: Set<String> = [],
        maximumBodyBytes: Int? = nil, closeOnInputClosed: Bool = false
    ) {
        self.maximumConnections = maximumConnections
        self.headerTimeout = headerTimeout
        self.publicPaths = publicPaths
        self.maximumBodyBytes = maximumBodyBytes
        self.closeOnInputClosed = closeOnInputClosed
    }

    package func setPolicy(_ newPolicy: AccessPolicy) { policy.withLock { $0 = newPolicy } }
    package var currentPolicy: AccessPolicy? { policy.withLock { $0 } }

    /// Counts a new connection; false when it is over the cap (it is still counted until closed).
    func admit() -> Bool {
        open.add(1, ordering: .relaxed).newValue <= maximumConnections
    }

    func release() { open.subtract(1, ordering: .relaxed) }

    /// Connections open now (for tests and logs).
    package var openConnections: Int { open.load(ordering: .relaxed) }
}

/// A Hummingbird HTTP/1 channel (plain, or with the WebSocket upgrade) with the gate in front:
/// every request head passes `AccessPolicy` (and the connection cap) before Hummingbird's router
/// or the WebSocket upgrader sees it, so a refused upgrade is an HTTP 403/401/503 answer, not a
/// WebSocket. `serve --listen` and `mcp --http` use this one gate.
struct GatedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        let refused: RefusedFlag
        var channel: any Channel { inner.channel }
    }

    let inner: Inner
    let gate: ListenerGate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = gate.admit()
        let gate = self.gate
        channel.closeFuture.whenComplete { _ in gate.release() }
        let refused = RefusedFlag()
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(
                GateHandler(gate: gate, admitted: admitted, refused: refused, logger: logger), position: .after(decoder))
            return Value(inner: value, refused: refused)
        }
    }

    func handle(value: Value, logger: Logger) async {
        // A refused connection is closed before Hummingbird's upgrade handler saw a request, which
        // it reports as an error; the gate has logged the refusal already.
        var quiet = logger
        quiet.handler = QuietWhenRefused(base: logger.handler, refused: value.refused)
        await inner.handle(value: value.inner, logger: quiet)
    }
}

/// Set by the gate when it refuses the connection's request.
final class RefusedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// Drops log messages about a connection once the gate has refused it.
struct QuietWhenRefused: LogHandler {
    var base: any LogHandler
    let refused: RefusedFlag

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard !refused.isSet else { return }
        base.log(event: event)
    }
}

/// Checks each request head; refuses with a plain-text HTTP answer and closes, or lets the
/// request through. After letting a WebSocket upgrade through it leaves the pipeline (what
/// follows is WebSocket frames).
final class GateHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: ListenerGate
    private let admitted: Bool
    private let refused: RefusedFlag
    private let logger: Logger
    private var refusing = false
    private var sawHead = false
    private var headerDeadline: Scheduled<Void>?

    init(gate: ListenerGate, admitted: Bool, refused: RefusedFlag, logger: Logger) {
        self.gate = gate
        self.admitted = admitted
        self.refused = refused
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A connection that sends no request head in time is closed (it holds a slot).
        headerDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: gate.headerTimeout) { [weak self] in
            guard let self, !self.sawHead else { return }
            self.refused.set()
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        headerDeadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !refusing else { return }
        guard case .head(let head) = part else {
            context.fireChannelRead(data)
            return
        }
        if !sawHead {
            sawHead = true
            headerDeadline?.cancel()
        }
        var decision: AccessPolicy.Decision
        if !admitted {
            decision = .refuse(status: 503, reason: "Too many connections (the limit is \(gate.maximumConnections), --max-connections); try again later.")
        } else if let policy = gate.currentPolicy {
            let path = String(head.uri.prefix { $0 != "?" && $0 != "#" })
            let isPublic = (head.method == .GET || head.method == .HEAD) && gate.publicPaths.contains(path)
                && !head.headers.contains(name: "Upgrade")
            decision = policy.decide(
                host: head.headers["Host"], origin: head.headers["Origin"],
                authorization: head.headers["Authorization"], webSocketProtocols: head.headers["Sec-WebSocket-Protocol"],
                tokenExempt: isPublic)
        } else {
            decision = .refuse(status: 503, reason: "The listener is starting; try again.")
        }
        if case .allow = decision, let limit = gate.maximumBodyBytes,
            let length = head.headers["Content-Length"].first.flatMap({ Int($0.filter { $0 != " " && $0 != "\t" }) }), length > limit
        {
            decision = .refuse(status: 413, reason: "The body of \(length) bytes is larger than the limit (\(limit) bytes, --max-message-bytes).")
        }
        switch decision {
        case .allow:
            let isUpgrade = head.headers["Upgrade"].contains { $0.lowercased() == "websocket" }
            context.fireChannelRead(data)
            if isUpgrade { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
        case .refuse(let status, let reason):
            refusing = true
            refused.set()
            // (Over the connection cap only at info: under a flood that would be a line per attempt.)
            logger.log(level: status == 503 ? .info : .notice, "Refused \(head.method) \(AccessPolicy.printable(head.uri)): \(status) \(reason)")
            refuse(context: context, version: head.version, status: status, reason: reason)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if gate.closeOnInputClosed, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func refuse(context: ChannelHandlerContext, version: HTTPVersion, status: Int, reason: String) {
        let body = "\(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase): \(reason)\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Cache-Control", value: "no-store")
        if status == 401 { headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"context-host\"") }
        if status == 503 { headers.add(name: "Retry-After", value: "1") }
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
