import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The registry cache through the real `context-host`: where it goes, how it is turned off, that a
/// bad cache file never stops the host, and that a cached manifest still gets every check of the
/// library's bytes.
@Suite("Registry cache (CLI)")
struct RegistryCacheCLITests {
    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(arguments, environment: environment)
    }

    /// A manifests folder with the fixture provider, old enough to be cached (files changed in the
    /// last second are parsed but not cached).
    private func manifests(extra: String = "") throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(
            writing: "m/fixture.yaml",
            TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", extra: extra))
        usleep(1_100_000)
        return directory
    }

    private func list(_ directory: TemporaryDirectory, _ options: [String]) throws -> (CommandResult, JSONValue) {
        let result = try run(
            ["list", "--json", "--log-level", "debug", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory,
             "--trust", "com.contexthost.fixture"]
                + options)
        let providers = try JSONValue(parsing: Array(result.standardOutput.utf8)).arrayValue ?? []
        return (result, try #require(providers.first { $0["id"] == "com.contexthost.fixture" }, "\(result.standardError)"))
    }

    private func cacheFiles(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("registry-") && $0.hasSuffix(".cache") }
    }

    @Test("the second start reuses the cached manifest and lists the same providers")
    func reuse() throws {
        let directory = try manifests()
        let cache = directory.path + "/cache"
        let (first, firstEntry) = try list(directory, ["--registry-cache", cache])
        #expect(first.status == 0)
        #expect(first.standardError.contains("0 manifest(s) reused, 1 parsed, cache saved"), "\(first.standardError)")
        #expect(cacheFiles(cache).count == 1)

        let (second, secondEntry) = try list(directory, ["--registry-cache", cache])
        #expect(second.status == 0)
        #expect(second.standardError.contains("1 manifest(s) reused, 0 parsed."), "\(second.standardError)")
        #expect(secondEntry == firstEntry)
        #expect(secondEntry["status"] == "loaded")
    }

    @Test("a cached manifest's sha256 pin is still checked against the library's bytes at load")
    func pinStillChecked() throws {
        let library = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("FixtureProviders")))
        let digest = SHA256Digest.hex(Array(library))
        let directory = try manifests(extra: "sha256: \(digest)")
        // The library next to the manifest, found before --library-path.
        let copy = directory.path + "/m/libFixtureProviders.so"
        try library.write(to: URL(fileURLWithPath: copy))
        let cache = directory.path + "/cache"
        var (result, entry) = try list(directory, ["--registry-cache", cache])
        #expect(entry["status"] == "loaded")
        #expect(entry["libraryPath"]?.stringValue == copy)

        // Same manifest (a cache hit), other library bytes.
        var changed = library
        changed.append(0)
        try changed.write(to: URL(fileURLWithPath: copy))
        (result, entry) = try list(directory, ["--registry-cache", cache])
        #expect(result.standardError.contains("1 manifest(s) reused, 0 parsed."), "\(result.standardError)")
        #expect(result.status == 1)
        #expect(entry["status"] == "failed")
        #expect(entry["error"]?["code"] == "sha256-mismatch")

        // And a deleted library is not found, cache or not.
        try FileManager.default.removeItem(atPath: copy)
        (result, entry) = try list(directory, ["--registry-cache", cache])
        #expect(result.standardError.contains("1 manifest(s) reused"), "\(result.standardError)")
        #expect(entry["libraryPath"]?.stringValue != copy)
    }

    @Test("an unusable cache file is ignored with one log line and rebuilt; the host starts normally")
    func corruptCache() throws {
        let directory = try manifests()
        let cache = directory.path + "/cache"
        _ = try list(directory, ["--registry-cache", cache])
        let file = cache + "/" + (try #require(cacheFiles(cache).first))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        bytes.removeLast(bytes.count / 2)
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        var (result, entry) = try list(directory, ["--registry-cache", cache, "--log-level", "notice"])
        #expect(result.status == 0)
        #expect(entry["status"] == "loaded")
        let lines = result.standardError.split(separator: "\n").filter { $0.contains("registry cache") }
        #expect(lines.count == 1, "\(result.standardError)")
        #expect(lines.first?.contains("Ignoring the registry cache \(file): it holds") == true, "\(lines)")
        #expect(lines.first?.contains("(truncated); rebuilding it.") == true, "\(lines)")

        (result, entry) = try list(directory, ["--registry-cache", cache])
        #expect(result.standardError.contains("1 manifest(s) reused, 0 parsed."), "\(result.standardError)")
        #expect(entry["status"] == "loaded")
    }

    @Test("--registry-cache none and --no-state turn the cache off; the default follows XDG_CACHE_HOME and the environment variable")
    func switches() throws {
        let directory = try manifests()
        var (result, _) = try list(directory, ["--registry-cache", "none"])
        #expect(!result.standardError.contains("Registry cache"), "\(result.standardError)")
        (result, _) = try list(directory, ["--no-state"])
        #expect(!result.standardError.contains("Registry cache"), "\(result.standardError)")

        // Default: $XDG_CACHE_HOME/context-host (the test harness points it at a private folder).
        let xdg = directory.path + "/xdg"
        result = try run(
            ["list", "--log-level", "debug", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory],
            environment: ["XDG_CACHE_HOME": xdg])
        #expect(cacheFiles(xdg + "/context-host").count == 1, "\(result.standardError)")

        // $CONTEXT_HOST_REGISTRY_CACHE names the folder; --no-state still wins over it, the flag over both.
        let fromEnvironment = directory.path + "/env-cache"
        let arguments = ["list", "--log-level", "debug", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory]
        _ = try run(arguments + ["--no-state"], environment: ["CONTEXT_HOST_REGISTRY_CACHE": fromEnvironment])
        #expect(cacheFiles(fromEnvironment).isEmpty)
        _ = try run(arguments, environment: ["CONTEXT_HOST_REGISTRY_CACHE": fromEnvironment])
        #expect(cacheFiles(fromEnvironment).count == 1)
        let fromFlag = directory.path + "/flag-cache"
        _ = try run(arguments + ["--no-state", "--registry-cache", fromFlag], environment: ["CONTEXT_HOST_REGISTRY_CACHE": "none"])
        #expect(cacheFiles(fromFlag).count == 1)
        _ = try run(arguments, environment: ["CONTEXT_HOST_REGISTRY_CACHE": "none", "XDG_CACHE_HOME": directory.path + "/xdg2"])
        #expect(cacheFiles(directory.path + "/xdg2/context-host").isEmpty)

        // An empty folder name is a usage error.
        result = try run(["list", "--registry-cache", ""])
        #expect(result.status != 0)
        #expect(result.standardError.contains("--registry-cache needs a folder"), "\(result.standardError)")
    }

    @Test("hot reload keeps working with the cache on, and the next start sees the edit")
    func hotReload() throws {
        let directory = try manifests()
        let cache = directory.path + "/cache"
        let client = try RPCClient(arguments: ["serve", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory, "--registry-cache", cache])
        defer { client.host.terminate() }
        try client.initialize()
        try directory.write(
            "m/fixture.yaml",
            TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so")
                .replacingOccurrences(of: "title: Test com.contexthost.fixture", with: "title: Edited"))
        let notification = try client.nextNotification(method: "providers/changed")
        #expect(notification["params"]?["changed"] == ["com.contexthost.fixture"])
        let providers = try client.call("providers/list")
        #expect(providers["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fixture" }?["title"] == "Edited")
        _ = try client.shutdown()

        let (_, entry) = try list(directory, ["--registry-cache", cache])
        #expect(entry["title"] == "Edited")
    }
}
