import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Logging
import Testing

@testable import ContextHost

/// Diagnostics of a configuration text, reduced to position, code and field.
fileprivate func spots(_ yaml: String) -> [ManifestSpot] {
    do {
        _ = try HostConfigFile.parse(yaml, file: "host.yaml", directory: "/config")
        return []
    } catch {
        return error.diagnostics.map(ManifestSpot.init)
    }
}

fileprivate func diagnostics(_ yaml: String) -> [ManifestDiagnostic] {
    do {
        _ = try HostConfigFile.parse(yaml, file: "host.yaml", directory: "/config")
        return []
    } catch {
        return error.diagnostics
    }
}

/// A manifest with settings, for settings resolution.
fileprivate func manifestWithSettings() throws -> Manifest {
    try Manifest.parse(
        """
        \(TestManifest.identity(id: "com.example.quotes", title: "Quotes", iconName: "chart", library: "libQuotes.so"))
        settings:
          quotesDirectory: { type: path, default: "~/quotes" }
          limit: { type: integer, default: 10 }
          live: { type: bool, default: false }
        """, file: "manifests/quotes.yaml", directory: "/manifests")
}

@Suite("Host configuration file")
struct HostConfigFileTests {
    @Test("a valid file is read with every override and its positions")
    func validFile() throws {
        let config = try HostConfigFile.parse(
            """
            # context-host configuration
            providers:
              com.contexthost.note:
                priority: 80
                enabled: true
                settings:
                  quotesDirectory: ~/quotes
                  limit: 5
              com.example.off:
                enabled: false
              com.example.bare:
            """, file: "host.yaml", directory: "/config")
        #expect(config.providers.map(\.id) == ["com.contexthost.note", "com.example.off", "com.example.bare"])
        let note = try #require(config.provider("com.contexthost.note"))
        #expect(note.priority == 80)
        #expect(note.enabled == true)
        #expect(note.location == .init(line: 3, column: 3))
        #expect(note.settings.map(\.name) == ["quotesDirectory", "limit"])
        #expect(note.settings[0].value == "~/quotes")
        #expect(note.settings[0].valueLocation == .init(line: 7, column: 24))
        #expect(note.settings[1].value == 5)
        #expect(config.disabledReason(for: "com.contexthost.note") == nil)
        #expect(
            config.disabledReason(for: "com.example.off")
                == Unavailability(code: "disabled", message: "disabled by the host configuration (host.yaml:10)"))
        #expect(config.provider("com.example.bare")?.priority == nil)
    }

    @Test("empty files and empty sections configure nothing")
    func emptyFiles() throws {
        #expect(try HostConfigFile.parse("", file: "host.yaml").providers.isEmpty)
        #expect(try HostConfigFile.parse("# nothing yet\n", file: "host.yaml").providers.isEmpty)
        #expect(try HostConfigFile.parse("providers:\n", file: "host.yaml").providers.isEmpty)
    }

    @Test("wrong types are reported at the value")
    func wrongTypes() {
        #expect(
            spots(
                """
                providers:
                  com.example.a:
                    priority: high
                    enabled: yes
                    settings: [a, b]
                  com.example.b:
                    priority: 1.5
                    settings:
                      limit: [1, 2]
                      other:
                """)
                == [
                    ManifestSpot(3, 15, .wrongType, "providers.com.example.a.priority"),
                    ManifestSpot(4, 14, .wrongType, "providers.com.example.a.enabled"),
                    ManifestSpot(5, 15, .wrongType, "providers.com.example.a.settings"),
                    ManifestSpot(7, 15, .wrongType, "providers.com.example.b.priority"),
                    ManifestSpot(9, 14, .wrongType, "providers.com.example.b.settings.limit"),
                    ManifestSpot(10, 13, .wrongType, "providers.com.example.b.settings.other"),
                ])
        let enabled = diagnostics("providers:\n  com.example.a:\n    enabled: yes\n")
        #expect(enabled.first?.hint == "write true or false ('yes' is a string in YAML 1.2)")
        #expect(spots("providers: [com.example.a]\n") == [ManifestSpot(1, 12, .wrongType, "providers")])
        #expect(spots("providers:\n  com.example.a: 5\n") == [ManifestSpot(2, 18, .wrongType, "providers.com.example.a")])
        #expect(spots("- providers\n") == [ManifestSpot(1, 1, .notAMapping, "")])
    }

    @Test("unknown keys are reported at the key, with did-you-mean")
    func unknownKeys() {
        let found = diagnostics(
            """
            provider:
              com.example.a: {}
            providers:
              com.example.a:
                priorty: 3
                enable: false
                colour: red
            com.example.b:
              priority: 1
            priority: 4
            """)
        #expect(
            found.map(ManifestSpot.init) == [
                ManifestSpot(1, 1, .unknownField, "provider"),
                ManifestSpot(5, 5, .unknownField, "providers.com.example.a.priorty"),
                ManifestSpot(6, 5, .unknownField, "providers.com.example.a.enable"),
                ManifestSpot(7, 5, .unknownField, "providers.com.example.a.colour"),
                ManifestSpot(8, 1, .unknownField, "com.example.b"),
                ManifestSpot(10, 1, .unknownField, "priority"),
            ])
        #expect(found[0].message == "unknown field 'provider'; did you mean 'providers'?")
        #expect(found[0].hint == "rename it to 'providers'")
        #expect(found[1].message == "unknown field 'priorty'; did you mean 'priority'?")
        #expect(found[2].message == "unknown field 'enable'; did you mean 'enabled'?")
        #expect(found[3].hint == "remove it; the fields allowed in 'providers.com.example.a' are: priority, enabled, settings")
        #expect(found[4].hint == "add a 'providers:' line above it and indent 'com.example.b:' under it")
        #expect(found[5].message == "unknown field 'priority'; 'priority' is set per provider, under 'providers.<id>'")
    }

    @Test("YAML problems and bad ids keep their positions and codes")
    func yamlProblems() {
        #expect(spots("providers:\n  com.example.a: {priority: 1\n") .map(\.code) == [.yamlSyntax])
        #expect(
            spots("providers:\n  com.example.a:\n    priority: 1\n    priority: 2\n")
                == [ManifestSpot(4, 5, .duplicateKey, "providers.com.example.a.priority")])
        #expect(spots("providers: {}\n---\nproviders: {}\n") == [ManifestSpot(2, 1, .multipleDocuments, "")])
        let bad = diagnostics("providers:\n  Com.Example.A:\n    priority: 1\n")
        #expect(bad.map(ManifestSpot.init) == [ManifestSpot(2, 3, .invalidId, "providers.Com.Example.A")])
        #expect(bad.first?.hint == "write 'com.example.a'")
    }

    @Test("diagnostics print like a compiler's, file first")
    func diagnosticText() {
        let text = diagnostics("providers:\n  com.example.a:\n    priority: high\n").first?.description
        #expect(
            text == """
                host.yaml:3:15: error: [wrong-type] providers.com.example.a.priority: expected an integer, found the string 'high'
                  hint: write an integer here
                """)
    }

    @Test("a missing file is unreadable-file, naming --config")
    func missingFile() {
        #expect(throws: HostConfigFile.Failure.self) { try HostConfigFile.load(file: "/nonexistent/host.yaml") }
        do {
            _ = try HostConfigFile.load(file: "/nonexistent/host.yaml")
        } catch {
            #expect(error.diagnostics.map(\.code) == [.unreadableFile])
            #expect(error.diagnostics.first?.hint == "check the path given to --config")
        }
    }

    @Test("ids no manifest declares are warnings with a suggestion")
    func unknownProviders() throws {
        let config = try HostConfigFile.parse(
            "providers:\n  com.contexthost.note: {}\n  com.contexthost.notes: {}\n  com.example.other: {}\n",
            file: "host.yaml")
        let warnings = config.unknownProviderWarnings(knownIDs: ["com.contexthost.note"])
        #expect(
            warnings.map(ManifestSpot.init) == [
                ManifestSpot(3, 3, .unknownProvider, "providers.com.contexthost.notes"),
                ManifestSpot(4, 3, .unknownProvider, "providers.com.example.other"),
            ])
        #expect(warnings[0].message.hasSuffix("did you mean 'com.contexthost.note'?"))
        #expect(
            HostConfigFile.warningText(warnings[1])
                == "host.yaml:4:3: warning: [unknown-provider] providers.com.example.other: no manifest declares the provider 'com.example.other'; its settings here are ignored\n  hint: check the id against 'context-host list', or remove the entry")
    }

    @Test("settings are type-checked against the manifest; problems point into the config file")
    func settings() throws {
        let manifest = try manifestWithSettings()
        let good = try HostConfigFile.parse(
            """
            providers:
              com.example.quotes:
                settings:
                  quotesDirectory: data/quotes
                  limit: 5
                  live: "true"
            """, file: "conf/host.yaml", directory: "/etc/ctx")
        let resolved = try good.resolvedSettings(for: manifest, homeDirectory: "/home/me")
        #expect(resolved["quotesDirectory"] == "/etc/ctx/data/quotes")  // relative to the config file
        #expect(resolved["limit"] == 5)
        #expect(resolved["live"] == true)
        let home = try HostConfigFile.parse(
            "providers:\n  com.example.quotes:\n    settings: { quotesDirectory: ~/q }\n", file: "host.yaml")
        #expect(try home.resolvedSettings(for: manifest, homeDirectory: "/home/me")["quotesDirectory"] == "/home/me/q")
        // No entry for the provider: the manifest's defaults.
        #expect(try HostConfigFile(path: "x", directory: "/").resolvedSettings(for: manifest, homeDirectory: "/h")["limit"] == 10)
        // An empty path means "none", not the config file's (or the manifest's) own folder.
        let empty = try HostConfigFile.parse(
            "providers:\n  com.example.quotes:\n    settings: { quotesDirectory: \"\" }\n", file: "host.yaml", directory: "/etc/ctx")
        #expect(try empty.resolvedSettings(for: manifest, homeDirectory: "/home/me")["quotesDirectory"] == "")

        let bad = try HostConfigFile.parse(
            """
            providers:
              com.example.quotes:
                settings:
                  limit: many
                  live: 3
                  limt: 4
            """, file: "host.yaml", directory: "/etc/ctx")
        do {
            _ = try bad.resolvedSettings(for: manifest, homeDirectory: "/home/me")
            Issue.record("expected a settings error")
        } catch {
            let sorted = error.diagnostics.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
            #expect(
                sorted.map(ManifestSpot.init) == [
                    ManifestSpot(4, 14, .settingTypeMismatch, "providers.com.example.quotes.settings.limit"),
                    ManifestSpot(5, 13, .settingTypeMismatch, "providers.com.example.quotes.settings.live"),
                    ManifestSpot(6, 7, .unknownSetting, "providers.com.example.quotes.settings.limt"),
                ])
            #expect(error.diagnostics.allSatisfy { $0.file == "host.yaml" })
            #expect(sorted[0].message == "the value 'many' for 'limit' is not an integer")
            #expect(sorted[2].message == "there is no setting 'limt'; did you mean 'limit'?")
        }
    }

    @Test("every configuration code is documented in docs/configuration.md")
    func codesDocumented() throws {
        let missing = try BuildProducts.undocumented(ManifestErrorCode.configurationCodes.map(\.rawValue), in: "docs/configuration.md") { "| `\($0)` |" }
        #expect(missing.isEmpty, "docs/configuration.md does not list \(missing)")
    }
}

@Suite("Registry with a host configuration")
struct RegistryConfigurationTests {
    private func registry(_ directory: TemporaryDirectory, config: String?) throws -> ProviderRegistry {
        var configuration = HostConfiguration(manifestDirectories: [directory.path + "/m"])
        if let config {
            configuration.configFile = try HostConfigFile.parse(config, file: directory.path + "/host.yaml")
        }
        return ProviderRegistry(configuration: configuration, logger: Logger(label: "test"))
    }

    private func manifest(_ id: String, title: String, priority: Int) -> String {
        TestManifest.yaml(id: id, library: "libFixtureProviders.so", priority: priority)
            .replacingOccurrences(of: "title: Test \(id)", with: "title: \(title)")
    }

    @Test("order: effective priority (config overrides manifest), then title, then id")
    func ordering() throws {
        let directory = try TemporaryDirectory(writing: "m/a.yaml", manifest("com.example.zeta", title: "Same", priority: 10))
        try directory.write("m/b.yaml", manifest("com.example.alpha", title: "Same", priority: 10))
        try directory.write("m/c.yaml", manifest("com.example.apple", title: "Apple", priority: 10))
        try directory.write("m/d.yaml", manifest("com.example.low", title: "Low", priority: 1))
        try directory.write("m/e.yaml", manifest("com.example.high", title: "High", priority: 90))
        try directory.write("m/broken.yaml", "id: [")

        let plain = try registry(directory, config: nil)
        #expect(
            plain.entries().map(\.changeKey) == [
                "com.example.high", "com.example.apple", "com.example.alpha", "com.example.zeta", "com.example.low",
                directory.path + "/m/broken.yaml",
            ])

        let configured = try registry(
            directory,
            config: """
                providers:
                  com.example.low: { priority: 95 }
                  com.example.high: { priority: 10 }
                  com.example.zeta: { priority: 10 }
                """)
        #expect(
            configured.entries().map(\.changeKey) == [
                "com.example.low", "com.example.apple", "com.example.high", "com.example.alpha", "com.example.zeta",
                directory.path + "/m/broken.yaml",
            ])
        let low = try #require(configured.entry(id: "com.example.low"))
        #expect(low.effectivePriority == 95)
        let description = ProviderEntryJSON.json(for: low, locale: nil)
        #expect(description["priority"] == 95)
        #expect(description["manifestPriority"] == 1)
        let apple = try #require(configured.entry(id: "com.example.apple"))
        #expect(ProviderEntryJSON.json(for: apple, locale: nil)["manifestPriority"] == nil)
    }

    @Test("enabled: false hides a provider with reason 'disabled'; unknown ids are catalog warnings")
    func disabled() throws {
        let directory = try TemporaryDirectory(writing: "m/a.yaml", manifest("com.example.off", title: "Off", priority: 10))
        let registry = try registry(
            directory,
            config: """
                providers:
                  com.example.off:
                    enabled: false
                  com.example.missing:
                    priority: 3
                """)
        registry.load(client: ClientInfo())
        let entry = try #require(registry.entry(id: "com.example.off"))
        #expect(entry.status == .disabled)
        #expect(entry.connection == nil)
        let description = ProviderEntryJSON.json(for: entry, locale: nil)
        #expect(description["status"] == "disabled")
        #expect(description["available"] == false)
        #expect(description["unavailableReason"]?["code"] == "disabled")
        #expect(
            description["unavailableReason"]?["message"]
                == .string("disabled by the host configuration (\(directory.path)/host.yaml:3)"))
        #expect(registry.catalogProblems.count == 1)
        #expect(registry.catalogProblems.first?.contains("host.yaml:4:3: warning: [unknown-provider]") == true)
    }
}
