import ContextHostTestSupport
import ContextProviderKit
import Dispatch
import Logging
import Synchronization
import Testing

@testable import ContextHost

#if canImport(Glibc)
import Glibc
#endif

/// A transport that records what the broker asked and answers from a script.
final class ScriptedTransport: HTTPTransport {
    let sent = Mutex<[BrokeredRequest]>([])
    let answer: @Sendable (BrokeredRequest) -> BrokeredResponse

    init(_ answer: @escaping @Sendable (BrokeredRequest) -> BrokeredResponse = { _ in BrokeredResponse(status: 200, headers: [], body: Array("ok".utf8)) }) {
        self.answer = answer
    }

    func perform(_ request: BrokeredRequest) async throws(BrokeredTransportError) -> BrokeredResponse {
        sent.withLock { $0.append(request) }
        return answer(request)
    }
}

/// A secret store in memory.
final class MemorySecrets: SecretStore {
    let values = Mutex<[String: [UInt8]]>([:])
    func secret(provider: String, name: String) throws -> [UInt8]? { values.withLock { $0["\(provider)/\(name)"] } }
    func isSet(provider: String, name: String) -> Bool { values.withLock { $0["\(provider)/\(name)"] != nil } }
    func set(provider: String, name: String, value: [UInt8]) throws { values.withLock { $0["\(provider)/\(name)"] = value } }
    func remove(provider: String, name: String) throws -> Bool { values.withLock { $0.removeValue(forKey: "\(provider)/\(name)") != nil } }
}

@Suite struct HTTPSURLTests {
    @Test func readsHostPortAndTarget() throws {
        let url = try HTTPSURL(parsing: "HTTPS://API.Example.com:8443/v1/x?a=b#frag")
        #expect(url.host == "api.example.com")
        #expect(url.port == 8443)
        #expect(url.target == "/v1/x?a=b")
        #expect(url.origin == "https://api.example.com:8443")
        #expect(try HTTPSURL(parsing: "https://api.example.com").target == "/")
        #expect(try HTTPSURL(parsing: "https://api.example.com:443/").origin == "https://api.example.com")
    }

    @Test(arguments: [
        "https://allowed.example@other.example/", "https://user:pw@api.example.com/",
        "http://api.example.com/", "https://2130706433/", "https://0x7f.1/", "https://0177.0.0.1/", "https://127.1/",
        "https://127.000.0.1/", "https://api.example.com./", "https://api..example.com/", "https://[::1%25eth0]/",
        "https://api.example.com:0/", "https://api.example.com:65536/", "https://api.example.com/a b", "https://exa%6dple.com/",
        "https://api.example.com\\@other/", "https:///path", "ftp://x/",
    ])
    func refusesAmbiguousURLs(_ text: String) {
        #expect(throws: HTTPSURL.ParseError.self) { try HTTPSURL(parsing: text) }
    }

    @Test func canonicalisesIPv6() throws {
        let url = try HTTPSURL(parsing: "https://[0:0:0:0:0:ffff:7f00:1]:8443/")
        #expect(url.hostIsIPv6)
        #expect(url.host == "::ffff:127.0.0.1")
        #expect(url.origin == "https://[::ffff:127.0.0.1]:8443")
    }

    @Test func classifiesAddresses() {
        #expect(EgressAddress.literal("127.0.0.1", isIPv6: false)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("10.1.2.3", isIPv6: false)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("172.20.0.1", isIPv6: false)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("169.254.169.254", isIPv6: false)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("93.184.216.34", isIPv6: false)?.nonPublicKind == nil)
        #expect(EgressAddress.literal("::1", isIPv6: true)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("::ffff:127.0.0.1", isIPv6: true)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("64:ff9b::a00:1", isIPv6: true)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("fd00::1", isIPv6: true)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("fe80::1", isIPv6: true)?.nonPublicKind != nil)
        #expect(EgressAddress.literal("2606:4700::1111", isIPv6: true)?.nonPublicKind == nil)
    }
}

@Suite struct EgressBrokerTests {
    static let manifestText = """
        \(TestManifest.identity(id: "com.example.quotes", title: "Quotes", iconName: "chart", library: "libQuotes.so"))
        settings:
          apiKey:
            type: secret
            description: "The API key."
            inject: { query: apikey, origin: "https://api.example.com" }
          token:
            type: secret
            inject: { header: Authorization, format: "Bearer {secret}", origin: "https://93.184.216.34" }
          serverURL:
            type: string
            default: "https://localhost:8443/dav/"
        network:
          origins:
            - "https://api.example.com"
            - "https://93.184.216.34"
            - { setting: serverURL }
            - { origin: "https://[::1]:9443", privateAddresses: true }
        """

    static func egress(_ settings: JSONObject? = nil) throws -> ResolvedEgress {
        let manifest = try Manifest.parse(manifestText, file: "/m/quotes.yaml", directory: "/m")
        return ResolvedEgress(manifest: manifest, settings: try settings ?? manifest.resolvedSettings())
    }

    static func broker(_ transport: ScriptedTransport, _ secrets: MemorySecrets = MemorySecrets()) -> EgressBroker {
        EgressBroker(transport: transport, secrets: secrets, logger: Logger(label: "test"))
    }

    /// How the broker refuses a GET of `url` under the test manifest's egress; nil (an issue
    /// recorded) when it fetched it.
    static func refusal(
        _ url: String, _ transport: ScriptedTransport = ScriptedTransport(), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> EgressRefusal? {
        let outcome = await broker(transport).fetch(ProviderHTTPRequest(url: url), egress: try egress())
        guard case .failure(let refusal) = outcome else {
            Issue.record("\(url) was fetched", sourceLocation: sourceLocation)
            return nil
        }
        return refusal
    }

    @Test func manifestDeclaresOriginsAndSecrets() throws {
        let manifest = try Manifest.parse(Self.manifestText, file: "/m/quotes.yaml", directory: "/m")
        #expect(manifest.settings.first?.type == .secret)
        #expect(manifest.network?.origins.count == 4)
        // A secret is never in the provider's settings.
        let settings = try manifest.resolvedSettings()
        #expect(settings["apiKey"] == nil)
        #expect(settings["token"] == nil)
        // And never from configuration.
        #expect(throws: SettingsResolutionError.self) { try manifest.resolvedSettings(overrides: ["apiKey": "plain"]) }
        // The registry cache keeps network and inject.
        let stamp = FileStamp(size: 1, modifiedNanoseconds: 1, changedNanoseconds: 1, inode: 1, device: 1)
        let cache = ManifestCache(folders: ["/m"], entries: [
            "/m/quotes.yaml": .init(absolutePath: "/m/quotes.yaml", file: "/m/quotes.yaml", directory: "/m", stamp: stamp, result: .success(manifest))
        ])
        let read = try ManifestCache.decode(cache.encoded(), folders: ["/m"])
        guard case .success(let decoded)? = read.entries["/m/quotes.yaml"]?.result else {
            Issue.record("the cache lost the manifest")
            return
        }
        #expect(decoded.network == manifest.network)
        #expect(decoded.settings.map(\.inject) == manifest.settings.map(\.inject))
    }

    @Test func manifestRefusesSecretDefaultsAndUndeclaredInjection() {
        let bad = Self.manifestText
            .replacingAll("description: \"The API key.\"", with: "default: \"k\"")
            .replacingAll("origin: \"https://93.184.216.34\" }", with: "origin: \"https://other.example\" }")
        do {
            _ = try Manifest.parse(bad, file: "/m/quotes.yaml", directory: "/m")
            Issue.record("the manifest was accepted")
        } catch {
            let fields = error.diagnostics.map(\.fieldPath)
            #expect(fields.contains("settings.apiKey.default"))
            #expect(fields.contains("settings.token.inject"))
        }
    }

    @Test func undeclaredOriginIsRefusedNamingTheField() async throws {
        let transport = ScriptedTransport()
        guard let refusal = try await Self.refusal("https://evil.example/x", transport) else { return }
        #expect(refusal.code == .originNotAllowed)
        #expect(refusal.field == "network.origins")
        #expect(refusal.hint?.contains("https://evil.example") == true)
        #expect(transport.sent.withLock { $0.isEmpty })
    }

    @Test func userInfoTrickIsRefused() async throws {
        let transport = ScriptedTransport()
        guard let refusal = try await Self.refusal("https://api.example.com@evil.example/", transport) else { return }
        #expect(refusal.code == .invalidURL)
        #expect(transport.sent.withLock { $0.isEmpty })
    }

    @Test func declaredIPLiteralGoesOutAndSecretIsInjected() async throws {
        let transport = ScriptedTransport { request in
            // A server that echoes what it got, secret included.
            BrokeredResponse(status: 200, headers: [("x-echo", request.headers.map { "\($0.0)=\($0.1)" }.joined(separator: ";"))], body: Array(request.headers.description.utf8))
        }
        let secrets = MemorySecrets()
        try secrets.set(provider: "com.example.quotes", name: "token", value: Array("CANARY-token-9f8e".utf8))
        let outcome = await Self.broker(transport, secrets).fetch(ProviderHTTPRequest(url: "https://93.184.216.34/q"), egress: try Self.egress())
        guard case .success(let response) = outcome else { Issue.record("refused: \(outcome)"); return }
        let sent = try #require(transport.sent.withLock { $0.first })
        #expect(sent.address == "93.184.216.34")
        #expect(sent.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer CANARY-token-9f8e" })
        // The provider never sees it, even echoed back.
        #expect(!response.text.contains("CANARY-token-9f8e"))
        #expect(!(response.headers["x-echo"] ?? "").contains("CANARY-token-9f8e"))
        #expect(response.text.contains("[secret]"))
    }

    @Test func queryInjectionAndItsRefusalToBeOverridden() async throws {
        let transport = ScriptedTransport()
        let secrets = MemorySecrets()
        try secrets.set(provider: "com.example.quotes", name: "apiKey", value: Array("k+y/1".utf8))
        // (api.example.com does not resolve here: use the literal origin's test for the wire; this
        // checks the refusal, which comes before any resolution.)
        let refused = await Self.broker(transport, secrets).fetch(
            ProviderHTTPRequest(url: "https://api.example.com/q?apikey=mine"), egress: try Self.egress())
        if case .failure(let refusal) = refused {
            #expect(refusal.code == .forbiddenHeader || refusal.code == .resolveFailed)
        } else {
            Issue.record("a provider set the injected query field")
        }
        #expect(EgressBroker.percentEncode(Array("k+y/1".utf8)) == "k%2By%2F1")
    }

    @Test func providerMayNotSetTheInjectedHeaderOrCookies() async throws {
        let transport = ScriptedTransport()
        for header in ["authorization", "Cookie", "Host", "Proxy-Authorization"] {
            let outcome = await Self.broker(transport).fetch(
                ProviderHTTPRequest(url: "https://93.184.216.34/", headers: [(header, "x")]), egress: try Self.egress())
            guard case .failure(let refusal) = outcome else { Issue.record("\(header) was sent"); continue }
            #expect(refusal.code == .forbiddenHeader)
        }
        #expect(transport.sent.withLock { $0.isEmpty })
    }

    @Test func unsetSecretSaysHowToSetIt() async throws {
        guard let refusal = try await Self.refusal("https://93.184.216.34/") else { return }
        #expect(refusal.code == .secretNotSet)
        #expect(refusal.hint?.contains("context-host secrets set com.example.quotes token") == true)
    }

    @Test func loopbackNeedsPrivateAddresses() async throws {
        // `https://localhost:8443` is declared (from a setting) but without privateAddresses.
        let transport = ScriptedTransport()
        guard let refusal = try await Self.refusal("https://localhost:8443/dav/", transport) else { return }
        #expect(refusal.code == .privateAddress)
        #expect(refusal.field == "network.origins[2].privateAddresses")
        // Control: [::1]:9443 is declared with privateAddresses: true.
        let allowed = await Self.broker(transport).fetch(ProviderHTTPRequest(url: "https://[::1]:9443/x"), egress: try Self.egress())
        guard case .success = allowed else { Issue.record("the declared private origin was refused: \(allowed)"); return }
        #expect(transport.sent.withLock { $0.map(\.address) } == ["::1"])
    }

    @Test func ipv6FormsOfLoopbackAreNotDeclaredOrigins() async throws {
        for url in ["https://[::ffff:127.0.0.1]:9443/", "https://[0:0:0:0:0:0:0:1]:8443/", "https://127.0.0.1:9443/"] {
            let outcome = await Self.broker(ScriptedTransport()).fetch(ProviderHTTPRequest(url: url), egress: try Self.egress())
            guard case .failure(let refusal) = outcome else { Issue.record("\(url) fetched"); continue }
            #expect(refusal.code == .originNotAllowed, "\(url)")
        }
    }

    @Test func redirectsAreRecheckedAndDropSecrets() async throws {
        let transport = ScriptedTransport { request in
            if request.url.hasSuffix("/start") { return BrokeredResponse(status: 302, headers: [("location", "https://evil.example/steal")], body: []) }
            if request.url.hasSuffix("/local") { return BrokeredResponse(status: 301, headers: [("location", "/final")], body: []) }
            return BrokeredResponse(status: 200, headers: [], body: Array("final".utf8))
        }
        let secrets = MemorySecrets()
        try secrets.set(provider: "com.example.quotes", name: "token", value: Array("CANARY-token-9f8e".utf8))
        let refused = await Self.broker(transport, secrets).fetch(ProviderHTTPRequest(url: "https://93.184.216.34/start"), egress: try Self.egress())
        guard case .failure(let refusal) = refused else { Issue.record("followed a redirect off the allow-list"); return }
        #expect(refusal.code == .originNotAllowed)
        #expect(refusal.message.contains("a redirect to https://evil.example"))
        #expect(transport.sent.withLock { $0.count } == 1)
        // Control: a redirect within the origin is followed.
        let followed = await Self.broker(transport, secrets).fetch(ProviderHTTPRequest(url: "https://93.184.216.34/local"), egress: try Self.egress())
        guard case .success(let response) = followed else { Issue.record("\(followed)"); return }
        #expect(response.text == "final")
    }

    @Test func noBrokerIsAClearError() async throws {
        let broker = EgressBroker(transport: nil, secrets: nil, logger: Logger(label: "test"))
        let outcome = await broker.fetch(ProviderHTTPRequest(url: "https://93.184.216.34/"), egress: try Self.egress())
        guard case .failure(let refusal) = outcome else { Issue.record("fetched"); return }
        #expect(refusal.code == .unavailable)
    }
}

/// A transport with its own callback form: records whether each request reached it on the
/// thread that called the broker, and answers from its own queue.
final class ThreadTransport: HTTPTransport {
    static let queueKey = DispatchSpecificKey<Int>()
    let queue = DispatchQueue(label: "thread-transport")
    let caller = Mutex<pthread_t?>(nil)
    let onCallersThread = Mutex<[Bool]>([])
    let sent = Mutex<[BrokeredRequest]>([])
    let asyncFormUsed = Mutex(false)

    init() { queue.setSpecific(key: Self.queueKey, value: 1) }

    func perform(_ request: BrokeredRequest) async throws(BrokeredTransportError) -> BrokeredResponse {
        asyncFormUsed.withLock { $0 = true }
        return BrokeredResponse(status: 500, headers: [], body: [])
    }

    func perform(_ request: BrokeredRequest, completion: @escaping @Sendable (Result<BrokeredResponse, BrokeredTransportError>) -> Void) {
        let same = caller.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        onCallersThread.withLock { $0.append(same) }
        sent.withLock { $0.append(request) }
        queue.async { completion(.success(BrokeredResponse(status: 200, headers: [], body: Array("ok".utf8)))) }
    }
}

/// The broker's callback form (`host/fetch`'s): what cannot block is done on the caller's thread
/// and handed to the transport there; a secret to read or a name to resolve moves the hop off
/// it; the answer comes where the transport gives it.
@Suite(.timeLimit(.minutes(1))) struct EgressBrokerThreadTests {
    static let manifestText = EgressBrokerTests.manifestText + """

            - { origin: "https://localhost:9444", privateAddresses: true }
        """

    /// Fetches from a new thread (the caller) and waits for the answer: the result, and whether it
    /// came on the transport's queue.
    static func fetch(_ url: String, _ transport: ThreadTransport, _ secrets: MemorySecrets = MemorySecrets()) async throws
        -> (Result<ProviderHTTPResponse, EgressRefusal>, onTransportQueue: Bool)
    {
        let manifest = try Manifest.parse(manifestText, file: "/m/quotes.yaml", directory: "/m")
        let egress = ResolvedEgress(manifest: manifest, settings: try manifest.resolvedSettings())
        let broker = EgressBroker(transport: transport, secrets: secrets, logger: Logger(label: "test"))
        return await withCheckedContinuation { continuation in
            startThread(name: "broker-caller") {
                transport.caller.withLock { $0 = pthread_self() }
                broker.fetch(ProviderHTTPRequest(url: url), egress: egress) { result in
                    continuation.resume(returning: (result, DispatchQueue.getSpecific(key: ThreadTransport.queueKey) != nil))
                }
            }
        }
    }

    @Test func literalWithoutSecretIsSentFromTheCallersThread() async throws {
        let transport = ThreadTransport()
        let (result, onTransportQueue) = try await Self.fetch("https://[::1]:9443/x", transport)
        #expect((try? result.get())?.text == "ok")
        #expect(transport.onCallersThread.withLock { $0 } == [true])
        #expect(onTransportQueue)
        #expect(!transport.asyncFormUsed.withLock { $0 })
    }

    @Test func secretIsReadOffTheCallersThread() async throws {
        let transport = ThreadTransport()
        let secrets = MemorySecrets()
        try secrets.set(provider: "com.example.quotes", name: "token", value: Array("CANARY-token-9f8e".utf8))
        let (result, onTransportQueue) = try await Self.fetch("https://93.184.216.34/q", transport, secrets)
        #expect((try? result.get())?.status == 200)
        #expect(transport.onCallersThread.withLock { $0 } == [false])
        #expect(transport.sent.withLock { $0.first?.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer CANARY-token-9f8e" } } == true)
        #expect(onTransportQueue)
    }

    @Test func nameResolvedLatelyIsSentFromTheCallersThread() async throws {
        let transport = ThreadTransport()
        // The first fetch resolves localhost (off the caller's thread unless it was resolved lately).
        let (first, _) = try await Self.fetch("https://localhost:9444/a", transport)
        #expect((try? first.get())?.status == 200)
        #expect(EgressAddress.resolved("localhost") != nil)
        #expect(transport.sent.withLock { $0.first?.address.isEmpty } == false)
        // The next one uses what it resolved, checked again, and goes out from the caller's thread.
        let (second, _) = try await Self.fetch("https://localhost:9444/b", transport)
        #expect((try? second.get())?.status == 200)
        #expect(transport.onCallersThread.withLock { $0.last } == true)
        // Still checked: the same name on an origin without privateAddresses is refused.
        let (refused, _) = try await Self.fetch("https://localhost:8443/dav/", transport)
        guard case .failure(let refusal) = refused else {
            Issue.record("a cached loopback name passed an origin without privateAddresses")
            return
        }
        #expect(refusal.code == .privateAddress)
    }
}
