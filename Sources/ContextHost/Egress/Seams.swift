/// Where a host keeps providers' secret settings (`type: secret`; docs/security.md, "Secrets").
///
/// The host reads a secret only to inject it into a brokered request (`network` and
/// `settings.NAME.inject` in the manifest); it never gives one to a provider, a client or a log.
/// `context-host` uses an encrypted file store (`ContextNetwork.EncryptedSecretStore`); an app
/// that embeds the host gives its own (its keychain), or none.
public protocol SecretStore: Sendable {
    /// The secret's bytes, nil when it is not set. Called only to inject it.
    func secret(provider: String, name: String) throws -> [UInt8]?
    /// Whether the secret is set (what `providers/list` shows).
    func isSet(provider: String, name: String) -> Bool
    /// Sets (replaces) a secret.
    func set(provider: String, name: String, value: [UInt8]) throws
    /// Removes a secret; whether there was one.
    @discardableResult
    func remove(provider: String, name: String) throws -> Bool
}

/// One HTTPS request the broker has already checked: its origin allowed, its address resolved
/// and checked, any secret injected. The transport sends it as it is, to `address`, and follows
/// no redirect.
public struct BrokeredRequest: Sendable {
    /// The provider it is for: a transport keeps one client per provider, so no connection,
    /// TLS session or cookie is shared between providers.
    public var providerID: String
    /// `GET`, `POST`, …
    public var method: String
    /// The whole URL (`https://host[:port]/path?query`).
    public var url: String
    /// The host name, as in `url` (for TLS verification and SNI).
    public var host: String
    /// The port.
    public var port: Int
    /// The IP address to connect to (checked against the origin's private-address rule): the
    /// transport must not resolve `host` again (that would let DNS answer differently).
    public var address: String
    /// Request headers (names as given).
    public var headers: [(String, String)]
    /// The body, if any.
    public var body: [UInt8]?
    /// When the whole exchange must be over (a deadline on the monotonic clock).
    public var deadline: ContinuousClock.Instant
    /// The largest body accepted: a transport stops reading past it and throws `.tooLarge`.
    public var maximumResponseBytes: Int

    public init(
        providerID: String, method: String, url: String, host: String, port: Int, address: String,
        headers: [(String, String)], body: [UInt8]?, deadline: ContinuousClock.Instant, maximumResponseBytes: Int
    ) {
        self.providerID = providerID
        self.method = method
        self.url = url
        self.host = host
        self.port = port
        self.address = address
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.maximumResponseBytes = maximumResponseBytes
    }
}

/// A transport's answer: status, headers (names lowercased) and body.
public struct BrokeredResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a transport failed.
public enum BrokeredTransportError: Error, Sendable {
    /// The body was larger than `maximumResponseBytes`.
    case tooLarge
    /// The deadline passed.
    case timeout
    /// Connecting, TLS or the exchange failed; the text says how.
    case failed(String)
}

/// What performs the HTTPS requests providers ask the host for (`host/fetch`): the seam between
/// the host's policy (allow-lists, address checks, secrets, redirects, logging, all in
/// `ContextHost`) and an HTTP library. `context-host` uses AsyncHTTPClient
/// (`ContextNetwork.AsyncHTTPTransport`); an embedding app gives its own, or none (providers'
/// fetches then fail with `broker-unavailable`).
public protocol HTTPTransport: Sendable {
    /// Sends one request and reads the whole response (up to its cap).
    func perform(_ request: BrokeredRequest) async throws(BrokeredTransportError) -> BrokeredResponse
    /// The same, answering through `completion` (called exactly once, on any thread; it must
    /// not block) instead of returning: the broker's form for `host/fetch`, so that the answer
    /// to a provider can be finished on the thread that read the response (AsyncHTTPTransport:
    /// the NIO event loop) without a hop through Swift's task pool. Default: `perform(_:)` in a
    /// task.
    func perform(_ request: BrokeredRequest, completion: @escaping @Sendable (Result<BrokeredResponse, BrokeredTransportError>) -> Void)
    /// Closes the clients of a provider (its worker or instance is gone). Default: nothing.
    func closeProvider(_ providerID: String)
}

extension HTTPTransport {
    public func closeProvider(_ providerID: String) {}

    public func perform(_ request: BrokeredRequest, completion: @escaping @Sendable (Result<BrokeredResponse, BrokeredTransportError>) -> Void) {
        Task {
            do throws(BrokeredTransportError) {
                completion(.success(try await perform(request)))
            } catch {
                completion(.failure(error))
            }
        }
    }
}

/// A transport that can also read a byte stream on the event loop it runs one provider's fetches
/// on: a worker's host-request pipe (its fd 3; docs/architecture.md, "Threads"), so that a
/// `host/fetch` is read, checked, sent and answered on one thread with no hop between threads.
/// `package`: only `context-host`'s transport (`ContextNetwork.AsyncHTTPTransport`) has it; with
/// any other transport, workers send their host requests on their stdout as before.
package protocol HostRequestStreams: Sendable {
    /// Takes ownership of `fd` (the read end of a pipe) and reads it on `providerID`'s event loop
    /// (one per provider while it has a stream, so its connections are reused there; a fetch for
    /// that provider also runs there). `receive` gets each piece read, on that loop; returning
    /// false closes the stream. `ended` runs once, on the loop, when the stream closed (end of
    /// stream, `receive` refused, `close`, or a failure to start reading, when `fd` is closed
    /// too). Nil when the stream could not be started (`fd` is closed and `ended` has run).
    func readStream(
        fd: Int32, providerID: String, receive: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool, ended: @escaping @Sendable () -> Void
    ) -> (any HostRequestStream)?
}

/// A stream `HostRequestStreams.readStream` reads.
package protocol HostRequestStream: Sendable {
    /// Stops reading and closes the descriptor (from any thread; harmless once closed).
    func close()
}
