import AsyncHTTPClient
import ContextHost
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTPS transport of `context-host`'s broker, on AsyncHTTPClient (docs/security.md,
/// "Egress"; the choice and its measurements: docs/architecture.md, "HTTP library").
///
/// - One client per provider and pinned address: no connection, TLS session or cookie is ever
///   shared between providers, and each client connects only to the address the host checked
///   (`dnsOverride`), while TLS still verifies the certificate for the host name.
/// - No redirects (the broker follows and re-checks them), no decompression (no zip bombs), no
///   cookie jar; bodies are read up to the request's cap, then the exchange is dropped.
/// - The system trust store; `CONTEXT_HOST_EXTRA_CA_FILE` adds one PEM file of roots (tests
///   and enterprise proxies that re-sign TLS).
/// - `https_proxy`/`HTTPS_PROXY` (an `http://host:port` CONNECT proxy) and `no_proxy`/`NO_PROXY`
///   are honoured. Through a proxy the proxy resolves names, so the private-address check
///   covers only what this machine resolves: the proxy is then the operator's egress control.
public final class AsyncHTTPTransport: HTTPTransport {
    private struct Key: Hashable {
        var provider: String
        var host: String
        var address: String
        /// The provider's event loop the client runs on, when it has one (`readStream`).
        var loop: ObjectIdentifier?
    }

    private let clients = Mutex<[Key: HTTPClient]>([:])
    /// The event loop of each provider that has host-request streams (`readStream`), and how many
    /// it has: its fetches run there too. An entry goes when its last stream closes.
    private let loops = Mutex<[String: ProviderLoop]>([:])
    private let tls: TLSConfiguration
    private let proxy: ProxySettings?
    /// Most clients kept per provider (one per pinned host and address).
    static let clientsPerProvider = 8

    /// A transport reading the trust and proxy settings from the environment.
    public convenience init() throws {
        try self.init(extraCAFile: getenv("CONTEXT_HOST_EXTRA_CA_FILE").map { String(cString: $0) })
    }

    /// A transport that trusts the roots in the PEM file `extraCAFile` (when not nil or empty)
    /// besides the system's, with the proxy settings from the environment.
    package init(extraCAFile: String?) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let extra = extraCAFile, !extra.isEmpty {
            let roots = try NIOSSLCertificate.fromPEMFile(extra)
            tls.additionalTrustRoots = [.certificates(roots)]
        }
        self.tls = tls
        self.proxy = ProxySettings.fromEnvironment()
    }

    deinit {
        for client in clients.withLock({ Array($0.values) }) { try? client.syncShutdown() }
    }

    private struct ProviderLoop {
        var loop: any EventLoop
        var streams: Int
    }

    /// How many host-request streams are open (tests: a stopped worker's goes).
    package var hostRequestStreamCount: Int { loops.withLock { $0.values.reduce(0) { $0 + $1.streams } } }

    /// Bytes read from host-request streams so far (tests: a worker's fetch really came that way).
    package var hostRequestBytesRead: Int { bytesRead.load(ordering: .relaxed) }
    private let bytesRead = Atomic<Int>(0)

    /// Whether `providerID` has an event loop of its own now (tests: pruned with its last stream).
    package func hasEventLoop(for providerID: String) -> Bool { loops.withLock { $0[providerID] != nil } }

    /// The client for `request`: on the provider's own event loop when it has one (its group is
    /// that loop alone, so its connections are made and reused there; a request that merely
    /// required that loop from a client of the whole group would get a connection made for it
    /// and closed after it, a TLS handshake per fetch), else on NIO's shared group.
    private func client(for request: BrokeredRequest) -> HTTPClient {
        let loop = loops.withLock { $0[request.providerID]?.loop }
        let key = Key(provider: request.providerID, host: request.host, address: request.address, loop: loop.map { ObjectIdentifier($0) })
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            let mine = clients.keys.filter { $0.provider == request.providerID }
            if mine.count >= Self.clientsPerProvider, let oldest = mine.first, let old = clients.removeValue(forKey: oldest) {
                old.shutdown { _ in }
            }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(10), read: .seconds(30)),
                proxy: proxy?.proxy(for: request.host), decompression: .disabled)
            if !request.host.isEmpty, request.host != request.address {
                configuration.dnsOverride = [request.host: request.address]
            }
            let client = HTTPClient(eventLoopGroup: loop ?? MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    public func perform(_ request: BrokeredRequest) async throws(BrokeredTransportError) -> BrokeredResponse {
        let running = Mutex<(task: HTTPClient.Task<HTTPClient.Response>?, cancelled: Bool)>((nil, false))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<BrokeredResponse, BrokeredTransportError>, Never>) in
                let task = start(request) { continuation.resume(returning: $0) }
                let cancelled = running.withLock { running in
                    running.task = task
                    return running.cancelled
                }
                if cancelled { task?.cancel() }
            }
        } onCancel: {
            running.withLock { running in
                running.cancelled = true
                return running.task
            }?.cancel()
        }
        return try result.get()
    }

    /// Sends `request` with AsyncHTTPClient's delegate API (`ResponseAccumulator`, capped at the
    /// request's `maximumResponseBytes`): `completion` runs on the event loop that read the
    /// response, so nothing hops to Swift's task pool.
    public func perform(_ request: BrokeredRequest, completion: @escaping @Sendable (Result<BrokeredResponse, BrokeredTransportError>) -> Void) {
        start(request, completion: completion)
    }

    /// The request started (nil when it failed before it could start: `completion` has been
    /// called then).
    @discardableResult
    private func start(
        _ request: BrokeredRequest, completion: @escaping @Sendable (Result<BrokeredResponse, BrokeredTransportError>) -> Void
    ) -> HTTPClient.Task<HTTPClient.Response>? {
        let remaining = request.deadline - ContinuousClock.now
        guard remaining > .zero else {
            completion(.failure(.timeout))
            return nil
        }
        let http: HTTPClient.Request
        do {
            http = try HTTPClient.Request(
                url: request.url, method: HTTPMethod(rawValue: request.method), headers: HTTPHeaders(request.headers),
                body: request.body.map { .bytes($0) })
        } catch {
            completion(.failure(.failed(String(describing: error))))
            return nil
        }
        // (ResponseAccumulator refuses a cap outside 0...2^32; the manifest's is far below.)
        let cap = min(max(request.maximumResponseBytes, 0), 1 << 32)
        let nanoseconds = min(remaining.components.seconds, 1 << 32) &* 1_000_000_000 &+ remaining.components.attoseconds / 1_000_000_000
        // (On the provider's own loop when it has one, the loop that read its request: the
        // connection, the response and the answer to the worker stay on that thread.)
        let task = client(for: request).execute(
            request: http, delegate: ResponseAccumulator(request: http, maxBodySize: cap), deadline: .now() + .nanoseconds(nanoseconds))
        task.futureResult.whenComplete { result in
            switch result {
            case .success(let response):
                completion(.success(BrokeredResponse(
                    status: Int(response.status.code), headers: response.headers.map { ($0.name.lowercased(), $0.value) },
                    body: response.body.map { Array(buffer: $0) } ?? [])))
            case .failure(let error):
                completion(.failure(Self.transportError(error)))
            }
        }
        return task
    }

    /// What an AsyncHTTPClient error means to the broker.
    static func transportError(_ error: any Error) -> BrokeredTransportError {
        switch error {
        case let error as BrokeredTransportError: error
        case is ResponseAccumulator.ResponseTooBigError, is NIOTooManyBytesError: .tooLarge
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout: .timeout
        default: .failed(String(describing: error))
        }
    }

    public func closeProvider(_ providerID: String) {
        let owned = clients.withLock { clients -> [HTTPClient] in
            let keys = clients.keys.filter { $0.provider == providerID }
            return keys.compactMap { clients.removeValue(forKey: $0) }
        }
        for client in owned { client.shutdown { _ in } }
    }
}

extension AsyncHTTPTransport: HostRequestStreams {
    /// Reads `fd` with NIO's pipe bootstrap on `providerID`'s event loop (chosen when its first
    /// stream opens, dropped when its last one closes).
    package func readStream(
        fd: Int32, providerID: String, receive: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool, ended: @escaping @Sendable () -> Void
    ) -> (any HostRequestStream)? {
        let loop = loops.withLock { loops -> any EventLoop in
            if var entry = loops[providerID] {
                entry.streams += 1
                loops[providerID] = entry
                return entry.loop
            }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            loops[providerID] = ProviderLoop(loop: loop, streams: 1)
            return loop
        }
        let finish: @Sendable () -> Void = { [weak self] in
            guard let self else { return ended() }
            let gone = loops.withLock { loops -> ObjectIdentifier? in
                guard var entry = loops[providerID] else { return nil }
                entry.streams -= 1
                loops[providerID] = entry.streams > 0 ? entry : nil
                return entry.streams > 0 ? nil : ObjectIdentifier(entry.loop)
            }
            // The provider's clients on that loop go with it (its next worker may get another).
            if let gone {
                let owned = clients.withLock { clients -> [HTTPClient] in
                    let keys = clients.keys.filter { $0.provider == providerID && $0.loop == gone }
                    return keys.compactMap { clients.removeValue(forKey: $0) }
                }
                for client in owned { client.shutdown { _ in } }
            }
            ended()
        }
        let channel = NIOPipeBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture(withResultOf: {
                    try channel.pipeline.syncOperations.addHandler(StreamReader { [weak self] bytes in
                        self?.bytesRead.add(bytes.count, ordering: .relaxed)
                        return receive(bytes)
                    })
                })
            }
            .takingOwnershipOfDescriptor(input: fd)
        channel.whenComplete { result in
            switch result {
            case .success(let channel): channel.closeFuture.whenComplete { _ in finish() }
            case .failure:
                // (Still ours when the bootstrap failed.)
                close(fd)
                finish()
            }
        }
        return PipeStream(channel: channel)
    }

    /// Hands what a pipe channel reads to `receive`; closes the channel when it says so.
    private final class StreamReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let receive: @Sendable (UnsafeRawBufferPointer) -> Bool

        init(receive: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) {
            self.receive = receive
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            if !buffer.withUnsafeReadableBytes(receive) { context.close(promise: nil) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// A stream being read (its channel, once the bootstrap made it).
    private struct PipeStream: HostRequestStream {
        let channel: EventLoopFuture<any Channel>

        func close() {
            channel.whenSuccess { $0.close(promise: nil) }
        }
    }
}

/// `https_proxy` and `no_proxy`, read once.
struct ProxySettings: Sendable {
    var host: String
    var port: Int
    /// `no_proxy` entries: host names (a leading `.` or none matches subdomains too), `*` for all.
    var bypass: [String]

    static func fromEnvironment() -> ProxySettings? {
        func value(_ names: String...) -> String? {
            for name in names { if let text = getenv(name).map({ String(cString: $0) }), !text.isEmpty { return text } }
            return nil
        }
        guard var text = value("https_proxy", "HTTPS_PROXY") else { return nil }
        if text.hasPrefix("http://") { text.removeFirst("http://".count) }
        if let slash = text.firstIndex(of: "/") { text = String(text[..<slash]) }
        if let at = text.lastIndex(of: "@") { text = String(text[text.index(after: at)...]) }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), port > 0, port < 65536 else { return nil }
        let bypass = (value("no_proxy", "NO_PROXY") ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: " ").lowercased() }.filter { !$0.isEmpty }
        return ProxySettings(host: String(text[..<colon]), port: port, bypass: bypass)
    }

    func proxy(for host: String) -> HTTPClient.Configuration.Proxy? {
        let host = host.lowercased()
        for entry in bypass {
            if entry == "*" { return nil }
            let bare = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if host == bare || host.hasSuffix("." + bare) { return nil }
        }
        return .server(host: self.host, port: port)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text.removeFirst() }
        while text.last == set { text.removeLast() }
        return String(text)
    }
}
