import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Watching manifest folders while serving: add, edit, break, fix and delete a manifest and see
/// the matching `providers/changed` notifications.
@Suite("Hot reload of manifests")
struct HotReloadTests {
    /// `manifests/note.yaml` with another id (and optionally other lines replaced).
    private func noteCopy(id: String, replacing: [(String, String)] = []) throws -> String {
        var text = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/note.yaml", encoding: .utf8)
        text = text.replacingOccurrences(of: "id: com.contexthost.note", with: "id: \(id)")
        for (old, new) in replacing { text = text.replacingOccurrences(of: old, with: new) }
        return text
    }

    private func ids(_ list: JSONValue?) -> [String] {
        (list?.arrayValue ?? []).compactMap(\.stringValue)
    }

    private func provider(_ params: JSONValue, _ id: String) -> JSONValue? {
        params["providers"]?.arrayValue?.first { $0["id"] == .string(id) }
    }

    private func serve(_ directory: TemporaryDirectory, _ extra: [String] = []) throws -> RPCClient {
        // The test manifests ask for in-process; only trusted providers get it (docs/security.md §9).
        try RPCClient(arguments: [
            "serve", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory, "--no-state",
            "--trust", "com.contexthost.fixture", "--trust", "com.example.note-two", "--trust", "com.contexthost.misbehaving",
        ] + extra)
    }

    @Test("add, edit, break, fix, change library, delete: each sends providers/changed")
    func lifecycle() throws {
        let directory = try TemporaryDirectory(writing: "m/fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so"))
        let client = try serve(directory)
        defer { client.host.terminate() }
        try client.initialize()
        let id = "com.example.note-two"
        let file = directory.path + "/m/note-two.yaml"

        // Add (written via a temporary file and a rename, as editors do).
        try directory.write("m/note-two.yaml", noteCopy(id: id))
        var change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["added"]) == [id])
        #expect(ids(change["changed"]).isEmpty && ids(change["removed"]).isEmpty)
        #expect(provider(change, id)?["status"] == "loaded")
        #expect(provider(change, id)?["available"] == true)
        #expect(change["providers"]?.arrayValue?.count == 2)
        // The notification's list is the providers/list result.
        #expect(try client.call("providers/list")["providers"] == change["providers"])

        // Edit priority and title: the entry is replaced and re-ordered.
        try directory.write("m/note-two.yaml", noteCopy(id: id, replacing: [("priority: 50", "priority: 5"), ("title: Note", "title: Note Two")]))
        change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["changed"]) == [id])
        #expect(ids(change["added"]).isEmpty && ids(change["removed"]).isEmpty)
        #expect(provider(change, id)?["title"] == "Note Two")
        #expect(provider(change, id)?["priority"] == 5)
        #expect(provider(change, id)?["available"] == true)
        #expect(change["providers"]?.arrayValue?.last?["id"] == .string(id))  // 5 < the fixture's 10

        // Break it while editing: the provider is gone, a rejected entry takes its place.
        try directory.write("m/note-two.yaml", "manifestVersion: 1\nid: [\n")
        change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["removed"]) == [id])
        #expect(ids(change["added"]) == [file])
        let rejected = change["providers"]?.arrayValue?.first { $0["manifestPath"] == .string(file) }
        #expect(rejected?["status"] == "rejected")
        #expect(rejected?["diagnostics"]?.arrayValue?.first?["code"] == "yaml-syntax")
        let missing = try client.callExpectingError("collect/start", ["providerId": .string(id)])
        #expect(missing["code"] == -32010)

        // Fix it: loaded again.
        try directory.write("m/note-two.yaml", noteCopy(id: id))
        change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["added"]) == [id])
        #expect(ids(change["removed"]) == [file])
        #expect(provider(change, id)?["status"] == "loaded")

        // Point the in-process provider at another library: needs a restart.
        try directory.write("m/note-two.yaml", noteCopy(id: id, replacing: [("libNoteProvider.so", "libFixtureProviders.so")]))
        change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["changed"]) == [id])
        #expect(provider(change, id)?["available"] == false)
        #expect(provider(change, id)?["unavailableReason"]?["code"] == "restart-required")

        // Delete: removed, and requests for it get providerNotFound.
        try FileManager.default.removeItem(atPath: file)
        change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["removed"]) == [id])
        #expect(ids(change["added"]).isEmpty && ids(change["changed"]).isEmpty)
        #expect(provider(change, id) == nil)
        let gone = try client.callExpectingError("collect/start", ["providerId": .string(id)])
        #expect(gone["code"] == -32010)
        #expect(try client.shutdown() == 0)
        // One notification per change: nothing left over.
        #expect(client.received.filter { $0["method"] == "providers/changed" }.isEmpty)
    }

    @Test("an in-process instance replaced or removed by a reload is closed")
    func closesReplacedInstances() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path + "/close.log"
        let id = "com.contexthost.misbehaving"
        // The misbehaving fixture appends "closed <closeTag>" to `closeLog` in its `close`.
        func manifest(tag: String) -> String {
            TestManifest.yaml(
                id: id, library: "libFixtureMisbehavingProvider.so", collection: "programmatic",
                extra: "settings:\n  closeLog: { type: string, default: \"\(log)\" }\n  closeTag: { type: string, default: \(tag) }")
        }
        func closed(atLeast count: Int) -> [String] {
            let deadline = Date().addingTimeInterval(10)
            while true {
                let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                if lines.count >= count || Date() > deadline { return lines }
                usleep(10_000)
            }
        }
        let item: JSONValue = [
            "item": [
                "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(id), "type": "fixture",
                "displayName": "Fixture", "content": [:],
            ]
        ]
        try directory.write("m/misbehaving.yaml", manifest(tag: "one"))
        let client = try serve(directory)
        defer { client.host.terminate() }
        try client.initialize()
        #expect(try client.call("items/preview", item)["title"] != nil)
        #expect(!FileManager.default.fileExists(atPath: log))

        // A changed setting: a new instance, and the old one is closed.
        try directory.write("m/misbehaving.yaml", manifest(tag: "two"))
        let change = try client.nextNotification(method: "providers/changed")["params"] ?? .null
        #expect(ids(change["changed"]) == [id])
        #expect(closed(atLeast: 1) == ["closed one"])
        #expect(try client.call("items/preview", item)["title"] != nil)  // the new instance serves

        // Removed: its instance is closed too.
        try FileManager.default.removeItem(atPath: directory.path + "/m/misbehaving.yaml")
        _ = try client.nextNotification(method: "providers/changed")
        #expect(closed(atLeast: 2) == ["closed one", "closed two"])
        #expect(try client.shutdown() == 0)
    }

    @Test("--no-watch: no providers/changed, and the list stays as it was")
    func quiet() throws {
        let directory = try TemporaryDirectory(writing: "m/fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so"))
        let client = try serve(directory, ["--no-watch"])
        defer { client.host.terminate() }
        try client.initialize()
        try directory.write("m/other.yaml", TestManifest.yaml(id: "com.example.other", library: "libFixtureProviders.so"))
        #expect(throws: RPCClient.Failure.self) { try client.nextNotification(method: "providers/changed", timeout: 0.6) }
        let list = try client.call("providers/list")
        #expect(list["providers"]?.arrayValue?.count == 1)
        #expect(try client.shutdown() == 0)
    }
}

/// `--config FILE` through the CLI.
@Suite("Host configuration file (CLI)")
struct ConfigFileCLITests {
    private func list(_ directory: TemporaryDirectory, config: String) throws -> CommandResult {
        try directory.write("host.yaml", config)
        return try CommandRunner.run(
            ["list", "--json", "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory,
             "--config", directory.path + "/host.yaml"])
    }

    @Test("priority overrides, disabled providers and settings errors in providers/list")
    func overrides() throws {
        let directory = try TemporaryDirectory(writing: "m/fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", priority: 10))
        try directory.write("m/off.yaml", TestManifest.yaml(id: "com.example.off", library: "libFixtureProviders.so", priority: 99))
        try directory.write(
            "m/set.yaml",
            TestManifest.yaml(
                id: "com.example.set", library: "libFixtureProviders.so",
                extra: "settings:\n  count: { type: integer, default: 1 }", priority: 1))
        let result = try list(
            directory,
            config: """
                providers:
                  com.contexthost.fixture:
                    priority: 80
                  com.example.off:
                    enabled: false
                  com.example.set:
                    settings:
                      count: lots
                  com.example.nobody: {}
                """)
        #expect(result.status == 1, "a provider failed (bad setting), so list exits 1")
        let providers = try JSONValue(parsing: Array(result.standardOutput.utf8)).arrayValue ?? []
        #expect(providers.compactMap { $0["id"]?.stringValue } == ["com.example.off", "com.contexthost.fixture", "com.example.set"])
        let fixture = try #require(providers.first { $0["id"] == "com.contexthost.fixture" })
        #expect(fixture["priority"] == 80)
        #expect(fixture["manifestPriority"] == 10)
        #expect(fixture["status"] == "loaded")
        let off = try #require(providers.first { $0["id"] == "com.example.off" })
        #expect(off["status"] == "disabled")
        #expect(off["available"] == false)
        #expect(off["unavailableReason"]?["code"] == "disabled")
        #expect(off["unavailableReason"]?["message"] == .string("disabled by the host configuration (\(directory.path)/host.yaml:5)"))
        let set = try #require(providers.first { $0["id"] == "com.example.set" })
        #expect(set["status"] == "failed")
        let diagnostic = try #require(set["diagnostics"]?.arrayValue?.first)
        #expect(diagnostic["file"] == .string(directory.path + "/host.yaml"))
        #expect(diagnostic["line"] == 8)
        #expect(diagnostic["column"] == 14)
        #expect(diagnostic["code"] == "setting-type-mismatch")
        #expect(diagnostic["field"] == "providers.com.example.set.settings.count")
        #expect(result.standardError.contains("host.yaml:9:3: warning: [unknown-provider]"))
    }

    @Test("a bad configuration file stops list and serve before anything starts")
    func badFile() throws {
        let directory = try TemporaryDirectory(writing: "m/fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so"))
        let config = "providers:\n  com.contexthost.fixture:\n    priorty: 3\n"
        let listed = try list(directory, config: config)
        #expect(listed.status == 2)
        #expect(listed.standardOutput.isEmpty)
        #expect(listed.standardError.contains(
            "\(directory.path)/host.yaml:3:5: error: [unknown-field] providers.com.contexthost.fixture.priorty: unknown field 'priorty'; did you mean 'priority'?"))
        let served = try CommandRunner.run(
            ["serve", "--manifests", directory.path + "/m", "--config", directory.path + "/host.yaml", "--no-state"])
        #expect(served.status == 2)
        #expect(served.standardOutput.isEmpty)
        #expect(served.standardError.contains("[unknown-field]"))
        let missing = try CommandRunner.run(["list", "--config", directory.path + "/nope.yaml"])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("nope.yaml: error: [unreadable-file] the configuration file does not exist"))
    }
}
