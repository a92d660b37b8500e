import ContextHost
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Testing

/// The typed host core (issue 36): `InProcessHost.send` hands typed requests to the same handlers
/// as the wire, with no JSON-RPC message between. On one host, each request is sent both ways —
/// typed (`send`) and as JSON (`call`, the wire's dispatcher) — and must get the same answer, or the
/// same error with the same code, message and data; the input limits refuse the same requests.
@Suite("Typed host core")
struct TypedCoreTests {
    static func host(configure: (inout HostConfiguration) -> Void = { _ in }) throws -> InProcessHost {
        var configuration = HostConfiguration(
            manifestDirectories: [EmbeddingTests.relaxedManifests], libraryDirectories: [BuildProducts.directory])
        configuration.watchManifests = false
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.policy = .process
        configure(&configuration)
        return try InProcessHost(configuration: configuration)
    }

    /// The request sent typed and as JSON: both answers, as JSON (an error as its `error` object).
    static func bothWays<R: RequestType>(_ host: InProcessHost, _ request: R) async -> (typed: JSONValue, wire: JSONValue) {
        let typed: JSONValue
        do throws(ResponseError) {
            typed = try await host.send(request).json
        } catch {
            typed = ["error": error.json]
        }
        let wire: JSONValue
        do throws(ResponseError) {
            // Decoded and encoded again, as the typed answer was (the same normal form).
            let raw = try await host.call(method: R.method, params: request.json)
            wire = (try? R.Response(json: raw, path: "result").json) ?? raw
        } catch {
            wire = ["error": error.json]
        }
        return (typed, wire)
    }

    @Test("typed requests get the wire's answers and errors, method by method")
    func sameAnswers() async throws {
        try BuildProducts.checkBuilt()
        let host = try Self.host()
        // Before initialize: the same lifecycle refusal.
        let early = await Self.bothWays(host, ProvidersListRequest())
        #expect(early.typed == early.wire)
        #expect(early.typed["error"]?["code"]?.intValue == ErrorCode.serverNotInitialized.rawValue)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "typed-core-test")))
        // Availability checks run after initialize and change the list ("checking", then
        // "current"): compare the two ways once none is under way (10 s at most; a list still
        // changing then fails the comparison).
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, try await host.providers().contains(where: { $0.availabilityState == "checking" }) {
            try await Task.sleep(for: .milliseconds(20))
        }

        let list = await Self.bothWays(host, ProvidersListRequest())
        #expect(list.typed == list.wire)
        #expect(list.typed["providers"]?.arrayValue?.isEmpty == false)
        let ping = await Self.bothWays(host, PingRequest())
        #expect(ping.typed == ping.wire)

        // Errors: an unknown composer, an unknown provider, a bad value.
        for (typed, wire) in [
            await Self.bothWays(host, ComposerListRequest(composerId: "no-such-composer")),
            await Self.bothWays(host, CollectStartRequest(providerId: "com.example.none")),
            await Self.bothWays(host, ComposerOpenRequest(maximumItems: 0)),
        ] {
            #expect(typed == wire)
            #expect(typed["error"] != nil, "\(typed)")
        }

        // A whole Note flow, typed; each read-only step also as JSON.
        let composer = try await host.openComposer()
        let started = try await host.startCollection(providerId: "com.contexthost.note", composerId: composer.composerId)
        let done = try await host.submit(sessionId: started.sessionId, values: ["title": "Typed", "body": "Both ways."])
        guard case .item(let item) = done.outcome else {
            Issue.record("expected an item, got \(done.outcome)")
            return
        }
        for (typed, wire) in [
            await Self.bothWays(host, ItemsPreviewRequest(item: item)),
            await Self.bothWays(host, ItemsDetailRequest(item: item)),
            await Self.bothWays(host, ItemsDescribeRequest(item: item)),
            await Self.bothWays(host, ComposerListRequest(composerId: composer.composerId)),
            await Self.bothWays(host, ComposerListRequest()),
            await Self.bothWays(host, ProvidersListRequest(composerId: composer.composerId)),
        ] {
            #expect(typed == wire)
            #expect(typed["error"] == nil, "\(typed)")
        }
        await host.close()
    }

    @Test("the typed path applies serve's input limits: the same refusals, nothing handled")
    func sameLimits() async throws {
        try BuildProducts.checkBuilt()
        let host = try Self.host { configuration in
            configuration.inputLimits.maximumStringBytes = 1_000
            configuration.maximumMessageBytes = 64 << 10
        }
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "typed-core-test")))
        let composer = try await host.openComposer()
        let started = try await host.startCollection(providerId: "com.contexthost.note")
        // A value over maximumStringBytes: -32602 naming the field, both ways.
        let long = await Self.bothWays(
            host, CollectSubmitRequest(sessionId: started.sessionId, values: ["title": .string(String(repeating: "x", count: 2_000))]))
        #expect(long.typed == long.wire)
        #expect(long.typed["error"]?["code"]?.intValue == ErrorCode.invalidParams.rawValue)
        #expect(long.typed["error"]?["message"]?.stringValue?.contains("params.values.title") == true, "\(long.typed)")
        // Over the message limit: refused before any handler ran (the composer keeps its text).
        let huge = try await #require(throws: ResponseError.self) {
            try await host.send(ComposerSendRequest(composerId: composer.composerId, text: String(repeating: "y", count: 70_000)))
        }
        #expect(huge.code == .invalidRequest)
        #expect(huge.data?["limit"]?.intValue == 64 << 10)
        #expect(try await host.composer(composer.composerId).composer?.composerId == composer.composerId)
        await host.close()
    }

    /// An app's own type for a method (as the benchmark declares `ping` and `initialize`).
    struct AppProvidersList: RequestType {
        struct Response: WireValue {
            var count: Int
            init(json: JSONValue, path: String) throws(JSONDecodeError) {
                count = json["providers"]?.arrayValue?.count ?? -1
            }
            var json: JSONValue { ["count": .number(Double(count))] }
            static var schema: JSONValue { [:] }
        }
        static let method = "providers/list"
        static let summary = "providers/list, the app's way"
        init() {}
        init(json: JSONValue, path: String) throws(JSONDecodeError) {}
        var json: JSONValue { [:] }
        static var schema: JSONValue { [:] }
    }

    @Test("a request type of the app's own is converted through its JSON, both ways")
    func appOwnTypes() async throws {
        try BuildProducts.checkBuilt()
        let host = try Self.host()
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "typed-core-test")))
        let answer = try await host.send(AppProvidersList())
        #expect(answer.count == (try await host.providers().count))
        #expect(answer.count > 0)
        await host.close()
    }

    @Test("a provider's chip reaches a typed caller checked as on the wire: invalid ones get the same error")
    func chipsCheckedAsOnTheWire() async throws {
        try BuildProducts.checkBuilt()
        // In-process, so the typed preview reads the provider's chip in one pass
        // (`OutputValidation.typedChip`) and the wire's goes through `ChipScan`.
        let host = try Self.host { configuration in
            // (Relaxed: a loaded machine must not turn a checked chip into a timeout.)
            let fixtures = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated/"
            configuration.manifestDirectories = [
                (try? RelaxedManifests.folder(copying: [fixtures + "fixture-isolated.yaml", fixtures + "misbehaving.yaml"])) ?? fixtures
            ]
            configuration.isolation.policy = .inProcess
        }
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "typed-core-test")))
        func item(_ providerID: String, _ content: JSONValue) -> ContextItem {
            ContextItem(id: "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", providerId: providerID, type: "fixture", displayName: "Fixture", content: content)
        }
        let misbehaving = "com.contexthost.misbehaving", fixture = "com.contexthost.fixture.isolated"
        for (content, providerID, field) in [
            (["misbehave": "bad-chip-tone"], misbehaving, "chip.tone"),
            (["misbehave": "big-chip"], misbehaving, "chip"),
            (["invalidView": true], fixture, "chip.thumbnail"),
        ] as [(JSONValue, String, String)] {
            let (typed, wire) = await Self.bothWays(host, ItemsPreviewRequest(item: item(providerID, content)))
            #expect(typed == wire)
            #expect(typed["error"]?["code"]?.intValue == ErrorCode.providerBadReply.rawValue, "\(typed)")
            #expect(typed["error"]?["data"]?["field"] == .string(field), "\(typed)")
        }
        let valid = try await host.send(ItemsPreviewRequest(item: item(fixture, [:])))
        #expect(valid.subtitle == "fixture")
        let (typed, wire) = await Self.bothWays(host, ItemsPreviewRequest(item: item(misbehaving, [:])))
        #expect(typed == wire)
        #expect(typed["tone"] == "neutral")
        await host.close()
    }
}
