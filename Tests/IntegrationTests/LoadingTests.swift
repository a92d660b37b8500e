import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Loading real libraries: ABI checks, open failures, pins, availability — seen through the CLI.
@Suite("Loading providers")
struct LoadingTests {
    /// `context-host list --json` over a folder of manifests, libraries from the build folder.
    private func list(_ directory: TemporaryDirectory, _ extra: [String] = []) throws -> (Int32, [JSONValue]) {
        let result = try CommandRunner.run(
            ["list", "--json", "--manifests", directory.path, "--library-path", BuildProducts.directory] + extra)
        let providers = try JSONValue(parsing: Array(result.standardOutput.utf8)).arrayValue ?? []
        return (result.status, providers)
    }

    private func provider(_ providers: [JSONValue], _ id: String) throws -> JSONValue {
        try #require(providers.first { $0["id"] == .string(id) })
    }

    @Test("list with no flags finds the bundled Note provider in the build folder")
    func listDefaults() throws {
        let result = try CommandRunner.run(["list"])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let line = try #require(result.standardOutput.split(separator: "\n").first { $0.contains("com.contexthost.note") })
        #expect(line.contains("loaded"))
        #expect(line.contains("yes"))
        #expect(line.contains(BuildProducts.library("NoteProvider").components(separatedBy: "/").last!))
        #expect(result.standardOutput.hasPrefix("PRIORITY"))
    }

    @Test("a library built for another ABI version is refused with both versions named")
    func abiMismatch() throws {
        let directory = try TemporaryDirectory(writing: "old.yaml", TestManifest.yaml(id: "com.example.old", library: "libFixtureOldABIProvider.so"))
        let (status, providers) = try list(directory)
        #expect(status == 1)
        let old = try provider(providers, "com.example.old")
        #expect(old["status"] == "failed")
        #expect(old["error"]?["code"] == "abi-version-mismatch")
        let message = try #require(old["error"]?["message"]?.stringValue)
        #expect(message.contains("implements provider ABI version 99; this host supports version 1"))
    }

    @Test("a provider that refuses to open reports its own reason")
    func openFailure() throws {
        let directory = try TemporaryDirectory(
            writing: "fixture.yaml",
            TestManifest.yaml(
                id: "com.contexthost.fixture", library: "libFixtureProviders.so",
                extra: "settings:\n  failOpen: { type: string, default: \"no database at /nowhere\" }"))
        let (status, providers) = try list(directory)
        #expect(status == 1)
        let fixture = try provider(providers, "com.contexthost.fixture")
        #expect(fixture["status"] == "failed")
        #expect(fixture["error"]?["code"] == "provider-open-failed")
        #expect(fixture["error"]?["message"] == "no database at /nowhere")
    }

    @Test("sha256 pins are checked on the bytes loaded")
    func sha256Pins() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("FixtureProviders")))
        let actual = SHA256Digest.hex(Array(bytes))
        let directory = try TemporaryDirectory(writing: "good.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", extra: "sha256: \(actual)"))
        var (status, providers) = try list(directory)
        #expect(status == 0)
        #expect(try provider(providers, "com.contexthost.fixture")["status"] == "loaded")

        let wrong = String(repeating: "ab", count: 32)
        try directory.write("good.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", extra: "sha256: \(wrong)"))
        (status, providers) = try list(directory)
        #expect(status == 1)
        let pinned = try provider(providers, "com.contexthost.fixture")
        #expect(pinned["status"] == "failed")
        #expect(pinned["error"]?["code"] == "sha256-mismatch")
        #expect(pinned["error"]?["message"]?.stringValue?.contains(actual) == true)
        let diagnostic = try #require(pinned["diagnostics"]?.arrayValue?.first)
        #expect(diagnostic["line"] == 16)
        #expect(diagnostic["field"] == "sha256")
    }

    @Test("availability: permission, host version and the provider's own check")
    func availability() throws {
        let directory = try TemporaryDirectory(writing: "a.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", permissions: "[network]"))
        var (_, providers) = try list(directory)
        var fixture = try provider(providers, "com.contexthost.fixture")
        #expect(fixture["status"] == "loaded")
        #expect(fixture["available"] == false)
        #expect(fixture["unavailableReason"]?["code"] == "permission")
        (_, providers) = try list(directory, ["--grant", "network"])
        #expect(try provider(providers, "com.contexthost.fixture")["available"] == true)

        try directory.write("a.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", host: ">=2.0.0"))
        (_, providers) = try list(directory)
        fixture = try provider(providers, "com.contexthost.fixture")
        #expect(fixture["unavailableReason"]?["code"] == "host-version")
        #expect(fixture["unavailableReason"]?["message"]?.stringValue?.contains("0.1.0") == true)

        try directory.write(
            "a.yaml",
            TestManifest.yaml(
                id: "com.contexthost.fixture", library: "libFixtureProviders.so",
                extra: "settings:\n  unavailableReason: { type: string, default: \"quotes folder is empty\" }"))
        (_, providers) = try list(directory)
        fixture = try provider(providers, "com.contexthost.fixture")
        #expect(fixture["unavailableReason"]?["code"] == "provider")
        #expect(fixture["unavailableReason"]?["message"] == "quotes folder is empty")
    }

    @Test("availability: a provider for another platform is listed, not loaded, with the reason")
    func otherPlatform() throws {
        let directory = try TemporaryDirectory()
        #if os(Linux)
        let other = "macos"
        #else
        let other = "linux"
        #endif
        try directory.write(
            "a.yaml",
            TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so")
                .replacingOccurrences(of: "platforms: [linux, macos]", with: "platforms: [\(other)]"))
        let (status, providers) = try list(directory)
        #expect(status == 0)
        let fixture = try provider(providers, "com.contexthost.fixture")
        #expect(fixture["status"] == "discovered")
        #expect(fixture["available"] == false)
        #expect(fixture["unavailableReason"]?["code"] == "platform")
        #expect(fixture["libraryPath"] == nil)
    }

    @Test("one bad manifest never stops the others; order is priority, then title, then id")
    func mixedCatalog() throws {
        let directory = try TemporaryDirectory(writing: "a-broken.yaml", "manifestVersion: 1\nid: [oops\n")
        try directory.write("b.yaml", TestManifest.yaml(id: "com.example.low", library: "libFixtureProviders.so", priority: 1))
        try directory.write("c.yaml", TestManifest.yaml(id: "com.example.missing", library: "libNothing.so", priority: 50))
        try directory.write("d.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", priority: 20))
        let (status, providers) = try list(directory)
        #expect(status == 1)
        #expect(providers.map { $0["id"] ?? .null } == ["com.example.missing", "com.contexthost.fixture", "com.example.low", nil])
        #expect(providers[0]["status"] == "failed")
        #expect(providers[0]["error"]?["code"] == "library-not-found")
        #expect(providers[3]["status"] == "rejected")
        #expect(providers[3]["diagnostics"]?.arrayValue?.first?["code"] == "yaml-syntax")
    }

    @Test("validate: exit 0 for good manifests, 1 with positioned errors for bad ones")
    func validate() throws {
        let good = try CommandRunner.run(["validate", "manifests/note.yaml"])
        #expect(good.status == 0, "\(good.standardOutput)\(good.standardError)")
        #expect(good.standardOutput.contains("manifests/note.yaml: ok"))

        let directory = try TemporaryDirectory()
        let bad = try directory.write("bad.yaml", TestManifest.yaml(id: "com.example.bad", library: "libNoteProvider.so").replacingOccurrences(of: "priority: 10", with: "priority: high"))
        let result = try CommandRunner.run(["validate", bad])
        #expect(result.status == 1)
        #expect(result.standardOutput.contains("\(bad):7:11: error: [wrong-type] priority"))
    }
}
