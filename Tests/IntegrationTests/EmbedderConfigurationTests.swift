import ContextHost
import ContextHostTestSupport
import ContextProtocol
import Foundation
import Testing

/// What an embedding app sets in code (issue 36): per-provider settings, priority and enabled
/// through `HostConfiguration.providerOptions`, and a manifests folder that does not exist as an
/// error it sees instead of an empty provider list.
@Suite("Embedder configuration")
struct EmbedderConfigurationTests {
    static let fixture = "com.contexthost.fixture"
    static let note = "com.contexthost.note"

    /// Note's manifest and the fixture's, the fixture declaring the `unavailableReason` setting it
    /// reads (no default: left out unless configured).
    static let manifests: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-options-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fixture = (try? String(contentsOfFile: BuildProducts.packageRoot + "/Tests/Fixtures/manifests/fixture.yaml", encoding: .utf8)) ?? ""
        try? (fixture.replacingOccurrences(of: "preview: 500ms", with: "preview: 10s")
            + "settings:\n  unavailableReason: { type: string }\n")
            .write(toFile: folder + "/fixture.yaml", atomically: true, encoding: .utf8)
        let note = (try? String(contentsOfFile: BuildProducts.packageRoot + "/manifests/note.yaml", encoding: .utf8)) ?? ""
        try? note.replacingOccurrences(of: "preview: 500ms", with: "preview: 10s")
            .write(toFile: folder + "/note.yaml", atomically: true, encoding: .utf8)
        return folder
    }()

    static func providers(_ options: [String: ProviderOptions]) async throws -> [ProviderDescription] {
        var configuration = HostConfiguration(manifestDirectories: [manifests], libraryDirectories: [BuildProducts.directory])
        configuration.isolation.workerExecutable = BuildProducts.hostExecutable
        configuration.isolation.policy = .process
        // Workers start at once, so the list says what the providers themselves say.
        configuration.isolation.lazyWorkers = false
        configuration.providerOptions = options
        let host = try InProcessHost(configuration: configuration)
        _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "options-test")))
        let listed = try await host.providers()
        await host.close()
        return listed
    }

    @Test("priority, enabled and settings set in code apply as a configuration file's would")
    func providerOptions() async throws {
        try BuildProducts.checkBuilt()
        // Control: the manifests' own order (Note 100, fixture 10), both enabled, the fixture available.
        let plain = try await Self.providers([:])
        #expect(plain.compactMap(\.id) == [Self.note, Self.fixture])
        #expect(plain.first { $0.id == Self.fixture }?.available == true)

        let configured = try await Self.providers([
            Self.fixture: ProviderOptions(priority: 1000, settings: ["unavailableReason": "Sign in first."]),
            Self.note: ProviderOptions(enabled: false),
        ])
        #expect(configured.compactMap(\.id) == [Self.fixture, Self.note])
        let fixture = try #require(configured.first { $0.id == Self.fixture })
        #expect(fixture.available == false)
        #expect(fixture.unavailableReason?.message.contains("Sign in first.") == true, "\(String(describing: fixture.unavailableReason))")
        let note = try #require(configured.first { $0.id == Self.note })
        #expect(note.status == "disabled")
        #expect(note.unavailableReason?.message == "disabled by the host configuration (HostConfiguration.providerOptions)")
    }

    @Test("a setting the manifest does not declare fails that provider's load, naming where it came from")
    func unknownSetting() async throws {
        try BuildProducts.checkBuilt()
        let listed = try await Self.providers([Self.fixture: ProviderOptions(settings: ["unavailableReasn": "x"])])
        let fixture = try #require(listed.first { $0.id == Self.fixture })
        #expect(fixture.available == false)
        let diagnostic = try #require(fixture.diagnostics?.first)
        #expect(diagnostic["code"] == "unknown-setting")
        #expect(diagnostic["file"] == "HostConfiguration.providerOptions")
        #expect(diagnostic["message"]?.stringValue?.contains("unavailableReason") == true, "\(diagnostic)")
        // The other provider is not affected.
        #expect(listed.first { $0.id == Self.note }?.available == true)
    }

    @Test("a manifests folder that does not exist is an error the embedder sees")
    func missingManifestsFolder() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-missing-\(UUID().uuidString)").path
        let error = #expect(throws: HostConfigurationError.self) {
            _ = try InProcessHost(configuration: HostConfiguration(manifestDirectories: [Self.manifests, missing]))
        }
        #expect(error?.code == "directory-not-found")
        #expect(error?.message == "the manifests folder '\(missing)' does not exist")
        #expect(error?.hint.contains("HostConfiguration.manifestDirectories") == true)
    }

    /// Isolation settings out of range, each with what the error must name.
    static let outOfRange: [(String, @Sendable (inout IsolationConfiguration) -> Void)] = [
        ("IsolationConfiguration.workerMemoryLimit is -1;", { $0.workerMemoryLimit = -1 }),
        ("IsolationConfiguration.maximumConcurrentStarts is 0;", { $0.maximumConcurrentStarts = 0 }),
        ("IsolationConfiguration.maximumCallTimeout is -1.0 seconds;", { $0.maximumCallTimeout = .seconds(-1) }),
        ("IsolationConfiguration.workerIdleTimeout is 0.0 seconds;", { $0.workerIdleTimeout = .zero }),
        ("IsolationConfiguration.maximumCrashes is 0;", { $0.maximumCrashes = 0 }),
    ]

    @Test("an isolation setting out of range is an error the embedder sees, naming it; in range, the host is made", arguments: 0..<5)
    func settingOutOfRange(index: Int) throws {
        let (expected, change) = Self.outOfRange[index]
        var configuration = HostConfiguration(manifestDirectories: [Self.manifests])
        // Control: the same configuration in range makes both kinds of host.
        _ = try InProcessHost(configuration: configuration)
        _ = try HostCore(configuration: configuration)
        change(&configuration.isolation)
        for make in [{ _ = try InProcessHost(configuration: configuration) }, { _ = try HostCore(configuration: configuration) }] as [() throws -> Void] {
            let error = #expect(throws: HostConfigurationError.self) { try make() }
            #expect(error?.code == "invalid-setting")
            #expect(error?.message.hasPrefix(expected) == true, "\(error?.message ?? "nil")")
            #expect(error?.hint.contains("HostConfiguration.isolation.") == true)
        }
    }
}
