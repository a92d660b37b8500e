import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Integrity (issue 4, part 5): the sha256 pin in a worker process, through the host and through
/// `context-host worker` directly. (`LoadingTests.sha256Pins` covers in-process loading.)
@Suite("Library integrity in workers")
struct IntegrityTests {
    private static func digest(_ product: String) throws -> String {
        SHA256Digest.hex(Array(try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library(product)))))
    }

    private func list(_ directory: TemporaryDirectory) throws -> (Int32, JSONValue) {
        let result = try CommandRunner.run(
            ["list", "--json", "--manifests", directory.path, "--library-path", BuildProducts.directory, "--isolation", "process"])
        let providers = try JSONValue(parsing: Array(result.standardOutput.utf8)).arrayValue ?? []
        return (result.status, try #require(providers.first { $0["id"] == "com.contexthost.fixture" }))
    }

    @Test("a process-isolated provider with a wrong pin is refused; a matching pin loads")
    func workerPins() throws {
        let actual = try Self.digest("FixtureProviders")
        let directory = try TemporaryDirectory()
        let manifest = { (pin: String) in
            TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", isolation: "process", extra: "sha256: \(pin)")
        }
        try directory.write("fixture.yaml", manifest(actual))
        var (status, entry) = try list(directory)
        #expect(status == 0)
        #expect(entry["status"] == "loaded")
        #expect(entry["effectiveIsolation"] == "process")

        let wrong = String(repeating: "cd", count: 32)
        try directory.write("fixture.yaml", manifest(wrong))
        (status, entry) = try list(directory)
        #expect(status == 1)
        #expect(entry["status"] == "failed")
        #expect(entry["error"]?["code"] == "sha256-mismatch")
        let message = try #require(entry["error"]?["message"]?.stringValue)
        #expect(message.contains("has sha256 \(actual), but the manifest pins \(wrong)"), "\(message)")
    }

    /// Runs `context-host worker` with these arguments, sends the init frame and returns the answer.
    private func workerAnswer(_ arguments: [String]) throws -> JSONValue {
        let worker = try DirectWorker(arguments)
        defer {
            try? worker.closeInput()
            worker.process.waitUntilExit()
        }
        worker.send(tag: 0, #"{"ctxpVersion":1,"providerId":"com.contexthost.fixture","hostVersion":"0.1.0","locale":"en-US","settings":{},"grantedPermissions":[]}"#)
        guard let (_, answer) = worker.receive() else { throw WorkerSilent() }
        return try JSONValue(parsing: Array(answer.utf8))
    }

    struct WorkerSilent: Error {}

    @Test("context-host worker checks the pin itself and loads only matching bytes")
    func workerDirectly() throws {
        let library = BuildProducts.library("FixtureProviders")
        let resolved = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
        let actual = try Self.digest("FixtureProviders")
        let wrong = String(repeating: "0", count: 64)
        let refused = try workerAnswer(["--library", resolved, "--sha256", wrong])
        #expect(refused["error"]?["code"] == "sha256-mismatch")
        #expect(refused["error"]?["message"]?.stringValue?.contains("but the manifest pins \(wrong)") == true)
        #expect(refused["error"]?["hint"]?.stringValue?.contains("update the manifest's 'sha256' to \(actual)") == true)

        #expect(try workerAnswer(["--library", resolved, "--sha256", actual]) == ["ok": true])
        #expect(try workerAnswer(["--library", resolved]) == ["ok": true])
    }

    @Test("a worker refuses a library path that goes through a symbolic link")
    func workerConfinement() throws {
        let directory = try TemporaryDirectory()
        let link = directory.path + "/libLinked.so"
        let target = URL(fileURLWithPath: BuildProducts.library("FixtureProviders")).resolvingSymlinksInPath().path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try workerAnswer(["--library", link])
        #expect(refused["error"]?["code"] == "library-path-escape")
        #expect(try workerAnswer(["--library", link, "--allow-outside-library-paths"]) == ["ok": true])
    }
}
