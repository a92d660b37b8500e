import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// What `serve --listen` was asked for.
package struct WebListenerOptions: Sendable {
    package var address: ListenAddress
    /// `Host` values accepted besides the listener's own address (`--allow-host`).
    package var extraHosts: [String] = []
    /// Origins accepted besides the listener's own (`--allow-origin`).
    package var extraOrigins: [String] = []
    /// Whether the listener's own origin passes unlisted (`--no-own-origin` turns it off).
    package var acceptsOwnOrigin = true
    /// The token clients must send; nil: none (loopback only).
    package var token: BearerToken?
    /// The most connections open at once; more are answered 503.
    package var maximumConnections = 32
    /// Messages a connection may send per second, on average (0: no limit); `messageBurst` at
    /// once. Past the rate the listener stops reading that connection until it may go on.
    package var messagesPerSecond = 2000
    package var messageBurst = 256
    /// The largest message (the host's `maximumMessageBytes`): a larger frame or message closes
    /// the connection with 1009.
    package var maximumMessageBytes = 16 << 20
    /// Answers waiting for a client that does not read; past it the connection is closed.
    package var maximumQueuedBytes = 32 << 20
    /// The composer's files, served at `/` (nil: `/` answers a short note).
    package var site: StaticSite?

    package init(address: ListenAddress) {
        self.address = address
    }

    /// Where the application binds: `address`, the port 0 of `[::1]:0` left to the system.
    var applicationConfiguration: ApplicationConfiguration {
        .init(address: .hostname(address.bindHost, port: address.port), serverName: nil)
    }

    /// What a listener does once bound: sets `gate`'s access policy (these options, with the real
    /// port) and tells `listening` the endpoint's URL, `scheme://host:port` + `path`. Shared by
    /// `serve --listen` (WebSocket) and `mcp --http` (Streamable HTTP), so both gate alike.
    func onServerRunning(
        gate: ListenerGate, scheme: String, path: String, listening: @escaping @Sendable (String) -> Void
    ) -> @Sendable (any Channel) async -> Void {
        { [self] channel in
            let port = channel.localAddress?.port ?? address.port
            gate.setPolicy(AccessPolicy(
                address: address, port: port, extraHosts: extraHosts, extraOrigins: extraOrigins, token: token,
                acceptsOwnOrigin: acceptsOwnOrigin))
            listening("\(scheme)://\(address.namedLocalhost ? "localhost" : address.urlHost):\(port)\(path)")
        }
    }
}

/// The WebSocket listener of `serve --listen`: JSON-RPC, one message per text frame, at `/rpc`;
/// each connection its own session (`WebSessionFactory`). See docs/web.md.
package enum WebListener {
    /// The path of the WebSocket endpoint.
    package static let endpointPath = "/rpc"

    /// Serves until the process is asked to stop (SIGTERM, SIGINT).
    ///
    /// - Parameter listening: called once bound, with the WebSocket URL (real port filled in).
    package static func run(
        options: WebListenerOptions, factory: WebSessionFactory, logger: Logger,
        listening: @escaping @Sendable (String) -> Void
    ) async throws {
        let gate = ListenerGate(maximumConnections: options.maximumConnections, publicPaths: options.site?.paths ?? [])
        let router = Router()
        if let site = options.site {
            for (path, file) in site.files {
                router.get(RouterPath(path)) { _, _ -> Response in staticFile(file) }
            }
        } else {
            router.get("/") { _, _ -> Response in
                plainText(.ok, "context-host: JSON-RPC over WebSocket at \(endpointPath) (docs/web.md); the composer's files were not found (--web-root).\n")
            }
        }
        router.get(RouterPath(endpointPath)) { _, _ -> Response in
            plainText(.upgradeRequired, "Connect with a WebSocket (Upgrade: websocket) to \(endpointPath).\n")
        }
        let shouldUpgrade:
            @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            > = { request, channel, _ in
                let path = (request.path ?? "").prefix { $0 != "?" }
                guard path == endpointPath else { return .dontUpgrade }
                var headers = HTTPFields()
                let offered = request.headerFields[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }
                    .map { $0.trimmingSpaces() }
                if offered.contains(Substring(AccessPolicy.subprotocol)) {
                    headers[.secWebSocketProtocol] = AccessPolicy.subprotocol
                }
                return .upgrade(headers) { inbound, outbound, context in
                    try await serveConnection(
                        inbound: inbound, outbound: outbound, channel: channel, options: options, factory: factory,
                        logger: context.logger)
                }
            }
        let server = HTTPServerBuilder { responder in
            GatedChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder,
                    configuration: .init(
                        http1: .init(idleTimeout: .seconds(30)),
                        ws: .init(
                            maxFrameSize: options.maximumMessageBytes, autoPing: .enabled(timePeriod: .seconds(30)),
                            closeTimeout: .seconds(5), validateUTF8: true)),  // (close frames; messages: `InboundMessage`)
                    shouldUpgrade: shouldUpgrade),
                gate: gate)
        }
        let app = Application(
            router: router, server: server, configuration: options.applicationConfiguration,
            onServerRunning: options.onServerRunning(gate: gate, scheme: "ws", path: endpointPath, listening: listening),
            logger: logger)
        try await app.runService()
    }

    /// A file of the composer with the security headers (StaticSite).
    private static func staticFile(_ file: StaticSite.File) -> Response {
        var headers: HTTPFields = [.contentType: file.contentType]
        for (name, value) in StaticSite.securityHeaders {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    private static func plainText(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// One WebSocket connection: its session, the reader (rate-limited) and the writer
    /// (`FrameWriter`, which writes the session's answers from whichever thread made them: no
    /// task of its own).
    static func serveConnection(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel,
        options: WebListenerOptions, factory: WebSessionFactory, logger: Logger
    ) async throws {
        // Frames decoded from now on come unmasked (`FrameUnmasker`); any before were unmasked by
        // the library, as they would be without it.
        try? await channel.eventLoop.submit {
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FrameUnmasker(), position: .after(decoder))
        }.get()
        let writer = FrameWriter(channel: channel, limit: options.maximumQueuedBytes)
        let session = factory.makeSession(
            send: { messages in
                guard writer.send(messages) else {
                    if writer.end(.slowReader) {
                        logger.notice("Dropping a WebSocket connection whose client does not read its answers (over \(options.maximumQueuedBytes) bytes waiting).")
                        // It does not read, so a close frame would wait behind the rest: drop the connection.
                        channel.close(promise: nil)
                    }
                    return false
                }
                return true
            },
            exit: { writer.end(.exit) })
        defer { session.close() }
        var limiter = RateLimiter(perSecond: options.messagesPerSecond, burst: options.messageBurst)
        var frames = inbound.makeAsyncIterator()
        var message = InboundMessage()
        var closing = false
        while let frame = try await frames.next() {
            // After `exit` or a slow reader, the rest is read and dropped until the connection closes.
            guard writer.ending == nil else { continue }
            switch message.add(frame, maximumBytes: options.maximumMessageBytes) {
            case .partial:
                continue
            case .text(let bytes):
                if let wait = limiter.take(now: .now) { try await Task.sleep(for: wait) }
                session.receive(bytes)
            case .refused(let code, let reason):
                // The close handshake (the library waits a few seconds for the client's close).
                try? await outbound.close(code, reason: reason)
                if case .unacceptableData = code { channel.close(promise: nil) }
                return
            }
            if writer.ending == .exit, !closing {
                // The answers written so far go out, then the close frame.
                closing = true
                await writer.drain()
                try? await outbound.close(.normalClosure, reason: "exit")
            }
        }
    }
}

/// Gathers one WebSocket message from its frames (the library's `messages(maxSize:)` does the
/// same, but makes a `String` of each text message, which the session would turn back into
/// bytes): the text's bytes as they came, checked to be UTF-8 (RFC 6455 §8.1).
struct InboundMessage {
    /// The fragments of a message so far.
    private var fragments: [UInt8]?

    enum Outcome {
        /// A fragment: the message goes on in the next frame.
        case partial
        /// A whole text message, valid UTF-8.
        case text([UInt8])
        /// The connection is to be closed with this code.
        case refused(WebSocketErrorCode, String)
    }

    mutating func add(_ frame: WebSocketDataFrame, maximumBytes: Int) -> Outcome {
        switch frame.opcode {
        case .binary:
            return .refused(.unacceptableData, "send JSON-RPC messages as text frames")
        case .text:
            guard fragments == nil else { return .refused(.protocolError, "a new message inside a fragmented one") }
            guard frame.data.readableBytes <= maximumBytes else { return .refused(.messageTooLarge, "message too large") }
            guard !frame.fin else { return Self.checked(Array(frame.data.readableBytesView)) }
            fragments = Array(frame.data.readableBytesView)
            return .partial
        case .continuation:
            guard var bytes = fragments.take() else { return .refused(.protocolError, "a continuation frame outside a message") }
            guard frame.data.readableBytes <= maximumBytes - bytes.count else {
                return .refused(.messageTooLarge, "message too large")
            }
            bytes.append(contentsOf: frame.data.readableBytesView)
            guard frame.fin else {
                fragments = bytes
                return .partial
            }
            return Self.checked(bytes)
        }
    }

    private static func checked(_ bytes: [UInt8]) -> Outcome {
        do {
            _ = try UTF8Span(validating: bytes.span)
        } catch {
            return .refused(.dataInconsistentWithMessage, "a text message that is not UTF-8")
        }
        return .text(bytes)
    }
}

extension WebListener {
    /// Why a connection's output ended before its input.
    enum OutputEndReason: Sendable {
        case exit
        case slowReader
    }
}

/// A token bucket: `burst` messages at once, then `perSecond` on average.
struct RateLimiter {
    let perSecond: Int
    let burst: Int
    private var tokens: Double
    private var last: ContinuousClock.Instant?

    init(perSecond: Int, burst: Int) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
        self.tokens = Double(max(1, burst))
    }

    /// Takes one message's token; returns how long to wait first, if the bucket is empty.
    mutating func take(now: ContinuousClock.Instant) -> Duration? {
        guard perSecond > 0 else { return nil }
        if let last {
            let elapsed = last.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(Double(burst), tokens + max(0, seconds) * Double(perSecond))
        }
        last = now
        tokens -= 1
        guard tokens < 0 else { return nil }
        // Wait until the deficit is paid back (at most one message's worth: one token at a time).
        let wait = -tokens / Double(perSecond)
        return .nanoseconds(Int64(min(wait, 60) * 1e9))
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
