import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Logging
import Testing

@testable import ContextHost

/// `ProviderRegistry.reload`: the diff between the registry and the manifest folders (no client,
/// so nothing is loaded).
@Suite("Registry reload")
struct ProviderReloadTests {
    private func manifest(_ id: String, title: String = "T", priority: Int = 10) -> String {
        TestManifest.yaml(id: id, library: "libFixtureProviders.so", priority: priority)
            .replacingOccurrences(of: "title: Test \(id)", with: "title: \(title)")
    }

    @Test("added, changed, unchanged, renamed, broken, fixed and removed manifests")
    func diff() throws {
        let directory = try TemporaryDirectory(writing: "m/a.yaml", manifest("com.example.a"))
        let registry = ProviderRegistry(
            configuration: HostConfiguration(manifestDirectories: [directory.path + "/m"]), logger: Logger(label: "test"))
        #expect(registry.reload(client: nil).isEmpty)

        try directory.write("m/b.yaml", manifest("com.example.b"))
        #expect(registry.reload(client: nil) == ProviderChanges(added: ["com.example.b"]))
        #expect(registry.entry(id: "com.example.b")?.status == .discovered)

        try directory.write("m/b.yaml", manifest("com.example.b", title: "Bee"))
        #expect(registry.reload(client: nil) == ProviderChanges(changed: ["com.example.b"]))
        #expect(registry.entry(id: "com.example.b")?.manifest?.title.description == "Bee")

        // A comment changes nothing a client sees.
        try directory.write("m/b.yaml", "# hello\n" + manifest("com.example.b", title: "Bee"))
        #expect(registry.reload(client: nil).isEmpty)

        // The same id in another file: a change, not a removal and an addition.
        try FileManager.default.moveItem(atPath: directory.path + "/m/b.yaml", toPath: directory.path + "/m/c.yaml")
        #expect(registry.reload(client: nil) == ProviderChanges(changed: ["com.example.b"]))
        #expect(registry.entry(id: "com.example.b")?.manifestPath == directory.path + "/m/c.yaml")

        let broken = directory.path + "/m/c.yaml"
        try directory.write("m/c.yaml", "id: [")
        #expect(registry.reload(client: nil) == ProviderChanges(added: [broken], removed: ["com.example.b"]))
        #expect(registry.entry(id: "com.example.b") == nil)
        #expect(registry.entries().last?.status == .rejected)

        try directory.write("m/c.yaml", manifest("com.example.b"))
        #expect(registry.reload(client: nil) == ProviderChanges(added: ["com.example.b"], removed: [broken]))

        try FileManager.default.removeItem(atPath: directory.path + "/m/a.yaml")
        #expect(registry.reload(client: nil) == ProviderChanges(removed: ["com.example.a"]))
        #expect(registry.entries().map(\.changeKey) == ["com.example.b"])
    }

    @Test("reloaded entries keep the host configuration (priority, disabled)")
    func configuration() throws {
        let directory = try TemporaryDirectory()
        var configuration = HostConfiguration(manifestDirectories: [directory.path + "/m"])
        configuration.configFile = try HostConfigFile.parse(
            "providers:\n  com.example.a: { priority: 70 }\n  com.example.b: { enabled: false }\n", file: "host.yaml")
        let registry = ProviderRegistry(configuration: configuration, logger: Logger(label: "test"))
        try directory.write("m/a.yaml", manifest("com.example.a"))
        try directory.write("m/b.yaml", manifest("com.example.b"))
        #expect(registry.reload(client: ClientInfo()) == ProviderChanges(added: ["com.example.a", "com.example.b"]))
        #expect(registry.entry(id: "com.example.a")?.effectivePriority == 70)
        let b = try #require(registry.entry(id: "com.example.b"))
        #expect(b.status == .disabled)
        #expect(b.unavailability?.code == "disabled")
    }
}
