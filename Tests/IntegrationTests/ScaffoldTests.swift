import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host new provider`: a developer who has never seen this repository scaffolds a provider
/// outside it, follows the README's three commands (build, run in a host, run conformance), and
/// ends with a loaded, conformant provider.
@Suite("Scaffolding new providers", .serialized)
struct ScaffoldTests {
    /// Runs a shell command line in `directory`; output goes to a log file (no pipe deadlocks).
    private struct ShellResult {
        var status: Int32
        var output: String
    }

    private struct ShellTimeout: Error, CustomStringConvertible {
        var description: String
    }

    private func shell(_ command: String, in directory: String, timeout: Double = 600) throws -> ShellResult {
        let log = directory + "/.scaffold-test-\(UUID().uuidString).log"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(command) > '\(log)' 2>&1"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw ShellTimeout(description: "'\(command)' did not finish in \(timeout) s")
            }
            usleep(50_000)
        }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        return ShellResult(status: process.terminationStatus, output: output)
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
        #expect(commands[0] == (language == "c" ? "make" : "swift build"))

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
            #expect(copy == original, "\(written) differs from \(source): run scripts/embed-scaffold-headers.sh")
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
