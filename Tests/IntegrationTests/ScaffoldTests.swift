import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host new provider`: a developer who has never seen this repository scaffolds a provider
/// outside it, follows the README's three commands (build, run in a host, run conformance), and
/// ends with a loaded, conformant provider.
@Suite("Scaffolding new providers", .serialized)
struct ScaffoldTests {
    private func shell(_ command: String, in directory: String, timeout: Double = 600) throws -> Shell.Result {
        try Shell.run(command, in: directory, timeout: timeout)
    }

    /// The command lines of the README's first ```sh block, comments removed.
    private func readmeCommands(_ project: String) throws -> [String] {
        let readme = try String(contentsOfFile: project + "/README.md", encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        return block.split(separator: "\n").map { line in
            String(line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    /// Scaffolds, then runs the README's three commands and checks each outcome.
    private func scaffoldBuildLoadConform(language: String, name: String, id: String, manifest: String, library: String) throws {
        try BuildProducts.checkBuilt()
        let temporary = try TemporaryDirectory()
        let project = temporary.path + "/\(name)Provider"
        let created = try CommandRunner.run(["new", "provider", name, "--language", language, "--output", project])
        #expect(created.status == 0, "\(created.standardError)")
        #expect(!project.hasPrefix(BuildProducts.packageRoot))

        let commands = try readmeCommands(project)
        try #require(commands.count == 3, "README commands: \(commands)")
        #expect(commands[0] == (language == "c" ? "make" : "swift build -Xswiftc -static-stdlib"))

        // 1. Build.
        let build = try shell(commands[0], in: project)
        try #require(build.status == 0, "\(commands[0]) failed:\n\(build.output)")
        #expect(FileManager.default.fileExists(atPath: project + "/" + library))

        // The generated manifest validates once the library exists.
        let validate = try CommandRunner.run(["validate", project + "/" + manifest])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")

        // 2. Run in a host: loaded and available.
        #expect(commands[1].hasSuffix("list --manifests ."))
        let list = try shell(commands[1], in: project)
        #expect(list.status == 0, "\(list.output)")
        let row = list.output.split(separator: "\n").first { $0.contains(id) }
        #expect(row?.contains("loaded") == true, "\(list.output)")
        #expect(row?.contains("yes") == true, "\(list.output)")

        // 3. Conformance, both modes, no failures.
        let conformance = try shell(commands[2], in: project)
        #expect(conformance.status == 0, "\(conformance.output)")
        #expect(conformance.output.contains("PASS: 2 run(s)"), "\(conformance.output)")
        #expect(conformance.output.contains(", 0 failed"))

        // 4. Share it: package, sign, install, upgrade, roll back, uninstall (docs/packages.md).
        try packageRoundTrip(
            language: language, project: project, manifest: manifest, id: id, rebuild: commands[0])
    }

    /// The author's and the user's whole workflow with a scaffolded provider: keygen, package
    /// --sign, install into a running host (which picks it up), collect an item from it in a
    /// worker and in-process next to the bundled providers, upgrade, roll back, uninstall, gc.
    private func packageRoundTrip(language: String, project: String, manifest: String, id: String, rebuild: String) throws {
        let home = try TemporaryDirectory()
        let environment = [
            "XDG_CONFIG_HOME": home.path + "/config", "XDG_DATA_HOME": home.path + "/data",
            "XDG_STATE_HOME": home.path + "/state", "XDG_CACHE_HOME": home.path + "/cache",
        ]
        func run(_ arguments: [String], timeout: Double = 120) throws -> CommandResult {
            try CommandRunner.run(arguments, directory: project, environment: environment, timeout: timeout)
        }
        // The author: a key and a signed bundle.
        let keygen = try run(["keygen", "--output", home.path + "/author"])
        try #require(keygen.status == 0, "\(keygen.standardError)")
        let publicKey = try #require(
            String(contentsOfFile: home.path + "/author.pub", encoding: .utf8).split(separator: "\n").last.map(String.init))
        let first = home.path + "/v1.ctxp"
        let packaged = try run(["package", manifest, "--sign", home.path + "/author.key", "--output", first])
        try #require(packaged.status == 0, "\(packaged.standardError)")
        #expect(packaged.standardOutput.contains(language == "c" ? "runtime: native" : "runtime: swift-static"), "\(packaged.standardOutput)")

        // The user: a host already running, then the install; the host picks it up.
        let host = try HostProcess(
            arguments: ["--manifests", BuildProducts.packageRoot + "/manifests", "--no-state", "--sandbox", "best-effort"],
            environment: environment)
        let client = RPCClient(host: host)
        defer { _ = try? client.shutdown() }
        _ = try client.initialize()
        #expect(try providerEntry(client, id) == nil)

        let unknown = try run(["install", first])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("[key-unknown]"), "\(unknown.standardError)")
        let install = try run(["install", first, "--trust-key", publicKey])
        try #require(install.status == 0, "\(install.standardError)")
        #expect(install.standardOutput.contains("probed in a sandboxed worker"), "\(install.standardOutput)")
        _ = try client.nextNotification(method: "providers/changed", timeout: 20)
        let installed = try #require(try providerEntry(client, id))
        #expect(installed["status"] == "loaded", "\(installed)")
        #expect(installed["effectiveIsolation"] == "process")
        #expect(installed["version"] == "0.1.0", "\(installed)")
        #expect(installed["worker"] == "stopped", "\(installed)")
        try collectItem(client, id: id, language: language)
        try expectFirstCheck(client, id: id)

        let listed = try run(["list", "--installed"])
        #expect(listed.standardOutput.contains(id) && listed.standardOutput.contains("0.1.0"), "\(listed.standardOutput)")
        let table = try run(["list", "--manifests", BuildProducts.packageRoot + "/manifests"])
        #expect(table.standardOutput.split(separator: "\n").contains { $0.contains(id) && $0.contains("loaded") }, "\(table.standardOutput)")

        // Trusted, in-process next to the bundled providers (a static Swift runtime beside the host's).
        let trusted = try HostProcess(
            arguments: ["--manifests", BuildProducts.packageRoot + "/manifests", "--no-state", "--isolation", "in-process", "--no-watch"],
            environment: environment)
        let trustedClient = RPCClient(host: trusted)
        _ = try trustedClient.initialize()
        let inProcess = try #require(try providerEntry(trustedClient, id))
        #expect(inProcess["effectiveIsolation"] == "in-process", "\(inProcess)")
        try collectItem(trustedClient, id: id, language: language)
        _ = try trustedClient.call("collect/start", ["providerId": "com.contexthost.note"])
        _ = try trustedClient.shutdown()

        // Version 0.2.0: upgrade, then roll back, then uninstall.
        try bumpVersion(project)
        let rebuilt = try shell(rebuild, in: project)
        try #require(rebuilt.status == 0, "\(rebuilt.output)")
        let second = home.path + "/v2.ctxp"
        let repackaged = try run(["package", manifest, "--sign", home.path + "/author.key", "--output", second])
        try #require(repackaged.status == 0, "\(repackaged.standardError)")
        let upgrade = try run(["upgrade", second])
        try #require(upgrade.status == 0, "\(upgrade.standardError)")
        _ = try client.nextNotification(method: "providers/changed", timeout: 20)
        #expect(try providerEntry(client, id)?["version"] == "0.2.0")
        try collectItem(client, id: id, language: language)
        try expectFirstCheck(client, id: id)

        let rollback = try run(["rollback", id])
        try #require(rollback.status == 0, "\(rollback.standardError)")
        _ = try client.nextNotification(method: "providers/changed", timeout: 20)
        #expect(try providerEntry(client, id)?["version"] == "0.1.0")

        let uninstall = try run(["uninstall", id])
        try #require(uninstall.status == 0, "\(uninstall.standardError)")
        _ = try client.nextNotification(method: "providers/changed", timeout: 20)
        #expect(try providerEntry(client, id) == nil)
        let gc = try run(["gc"])
        #expect(gc.status == 0)
        #expect(!FileManager.default.fileExists(atPath: home.path + "/data/context-host/packages/\(id)"), "\(gc.standardOutput)")
    }

    /// A process-isolated provider's worker starts on first use (issue 28); its first availability
    /// check then updates the list (`availabilityState` `unchecked` → `current`) and the client
    /// gets `providers/changed`.
    private func expectFirstCheck(_ client: RPCClient, id: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let checked = try client.nextNotification(method: "providers/changed", timeout: 20)
        #expect(checked["params"]?["changed"] == [.string(id)], "\(checked)", sourceLocation: sourceLocation)
        let entry = checked["params"]?["providers"]?.arrayValue?.first { $0["id"] == .string(id) }
        #expect(entry?["availabilityState"] == "current", sourceLocation: sourceLocation)
        #expect(entry?["available"] == true, sourceLocation: sourceLocation)
    }

    private func providerEntry(_ client: RPCClient, _ id: String) throws -> JSONValue? {
        try client.call("providers/list")["providers"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    /// An item from the provider: through its form (Swift scaffold) or `collect/make` (C scaffold).
    private func collectItem(_ client: RPCClient, id: String, language: String) throws {
        if language == "c" {
            let made = try client.call("collect/make", ["providerId": .string(id)])
            #expect(made["item"]?["providerId"]?.stringValue == id, "\(made)")
        } else {
            let start = try client.call("collect/start", ["providerId": .string(id)])
            let submitted = try client.call(
                "collect/submit", ["sessionId": start["sessionId"] ?? .null, "values": ["text": "from the bundle", "important": true]])
            #expect(submitted["item"]?["providerId"]?.stringValue == id, "\(submitted)")
        }
    }

    /// 0.1.0 → 0.2.0 in the manifest and the provider's metadata.
    private func bumpVersion(_ project: String) throws {
        let files = FileManager.default.enumerator(atPath: project)?.compactMap { $0 as? String }
            .filter { !$0.hasPrefix(".build") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".swift") || $0.hasSuffix(".c") || $0.hasSuffix(".h")) } ?? []
        for file in files {
            let path = project + "/" + file
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let bumped = text.replacingOccurrences(of: "\"0.1.0\"", with: "\"0.2.0\"")
                .replacingOccurrences(of: "version: 0.1.0", with: "version: 0.2.0")
            if bumped != text { try bumped.write(toFile: path, atomically: true, encoding: .utf8) }
        }
    }

    @Test("a C provider: make, list, conformance")
    func cProvider() throws {
        try scaffoldBuildLoadConform(
            language: "c", name: "Weather Station", id: "com.example.weather-station",
            manifest: "weather-station.yaml", library: "libWeatherStationProvider.so")
    }

    @Test("a Swift provider: swift build, list, conformance")
    func swiftProvider() throws {
        try scaffoldBuildLoadConform(
            language: "swift", name: "RecentFiles", id: "com.example.recent-files",
            manifest: "recent-files.yaml", library: ".build/debug/libRecentFilesProvider.so")
    }

    @Test("the C scaffold answers a request it cannot parse (an item nested 200 deep) with that request's id, not id null (was: null, refused by the host)")
    func cScaffoldKeepsTheID() throws {
        try BuildProducts.checkBuilt()
        let temporary = try TemporaryDirectory()
        let project = temporary.path + "/p"
        let created = try CommandRunner.run(["new", "provider", "Deep Probe", "--language", "c", "--output", project])
        try #require(created.status == 0, "\(created.standardError)")
        let build = try shell("make", in: project)
        try #require(build.status == 0, "make:\n\(build.output)")
        let client = try RPCClient(arguments: ["serve", "--manifests", project, "--no-watch", "--no-state", "--isolation", "in-process"])
        defer { client.host.terminate() }
        _ = try client.initialize()
        var deep: JSONValue = "x"
        for _ in 0..<200 { deep = ["nested": deep] }
        let id = "com.example.deep-probe"
        for method in ["items/preview", "items/detail"] {
            let item: JSONValue = ["providerId": .string(id), "type": "deep_probe", "content": ["message": deep, "madeAt": "x"]]
            let response = try client.response(to: client.send(method, ["item": item]), timeout: 20)
            let error = response["error"]
            // The provider's own parse error, passed on for this request (-32013 with its code):
            // neither a reply the host had to refuse for its null id (-32014, what main answered)
            // nor a timeout (-32015).
            #expect(error?["code"]?.intValue == -32013, "\(method): \(response)")
            #expect(error?["data"]?["providerCode"]?.intValue == -32700, "\(method): \(response)")
            #expect(error?["message"]?.stringValue?.contains("nests deeper than 128 levels") == true, "\(method): \(response)")
        }
        #expect(try client.call("ping").objectValue != nil)
    }

    @Test("the C scaffold vendors the ABI header and JSON helpers byte for byte")
    func embeddedHeaders() throws {
        let temporary = try TemporaryDirectory()
        let created = try CommandRunner.run(["new", "provider", "Probe", "--language", "c", "--output", temporary.path + "/p"])
        #expect(created.status == 0, "\(created.standardError)")
        let pairs = [
            ("include/context_provider.h", "Sources/CContextProvider/include/context_provider.h"),
            ("include/ctxp_json.h", "Providers/DeviceInfo/ctxp_json.h"),
        ]
        for (written, source) in pairs {
            let copy = try Data(contentsOf: URL(fileURLWithPath: temporary.path + "/p/" + written))
            let original = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.packageRoot + "/" + source))
            #expect(copy == original, "\(written) differs from \(source): the scaffold embeds Sources/context-host/New/Headers/, links to the sources")
        }
    }

    @Test("the Swift scaffold depends on this checkout by path, or on --kit-path")
    func kitPath() throws {
        let temporary = try TemporaryDirectory()
        let created = try CommandRunner.run(["new", "provider", "Alpha", "--output", temporary.path + "/a"])
        #expect(created.status == 0, "\(created.standardError)")
        let package = try String(contentsOfFile: temporary.path + "/a/Package.swift", encoding: .utf8)
        let root = URL(fileURLWithPath: BuildProducts.packageRoot).resolvingSymlinksInPath().path
        #expect(package.contains(".package(path: \"\(root)\")"), "\(package)")
        #expect(package.contains("package: \"\(root.split(separator: "/").last!.lowercased())\""))
        #expect(package.contains(".library(name: \"AlphaProvider\", type: .dynamic"))

        let other = try CommandRunner.run(["new", "provider", "Beta", "--kit-path", temporary.path, "--output", temporary.path + "/b"])
        #expect(other.status == 0, "\(other.standardError)")
        let betaPackage = try String(contentsOfFile: temporary.path + "/b/Package.swift", encoding: .utf8)
        let resolvedTemporary = URL(fileURLWithPath: temporary.path).resolvingSymlinksInPath().path
        #expect(betaPackage.contains(".package(path: \"\(resolvedTemporary)\")"), "\(betaPackage)")
    }

    @Test("bad names, bad ids and non-empty folders are refused with a clear message")
    func refusals() throws {
        let temporary = try TemporaryDirectory()
        let badName = try CommandRunner.run(["new", "provider", "9lives", "--output", temporary.path + "/x"])
        #expect(badName.status == 64)
        #expect(badName.standardError.contains("not a usable name"))
        let badID = try CommandRunner.run(["new", "provider", "Good", "--id", "Com.Example", "--output", temporary.path + "/y"])
        #expect(badID.status == 64)
        #expect(badID.standardError.contains("reverse-DNS"))
        try temporary.write("full/file.txt", "x")
        let full = try CommandRunner.run(["new", "provider", "Good", "--output", temporary.path + "/full"])
        #expect(full.status != 0)
        #expect(full.standardError.contains("not empty"))
    }
}
