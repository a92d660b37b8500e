import ContextHostTestSupport
import Foundation
import Testing

/// `context-host mcp` against the official MCP Python SDK (PyPI `mcp` 2.x, in the test-only venv)
/// in each of its connect modes: the real binary, the bundled providers, and the fixture provider
/// added while connected. The checks themselves are in Tests/Fixtures/mcp/mcp_check.py (one line
/// each, PASS or FAIL).
@Suite("MCP bridge (official Python SDK)")
struct MCPBridgeTests {
    static let root = BuildProducts.packageRoot

    static var python: String {
        let venv = ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? root + "/.build/test-venv"
        return venv + "/bin/python"
    }

    @Test("tools, forms through elicitation, resources, list changes, cancellation and progress", arguments: ["legacy", "auto", "2026-07-28"])
    func sdkClient(mode: String) throws {
        try Self.runChecks(mode: mode, http: false)
    }

    /// The same checks over Streamable HTTP (`mcp --http`, the SDK's `streamable_http_client`):
    /// sessions, SSE, elicitation on a request's stream, the 2026-07-28 headers.
    @Test("the same over Streamable HTTP", arguments: ["legacy", "auto", "2026-07-28"])
    func sdkClientOverHTTP(mode: String) throws {
        try Self.runChecks(mode: mode, http: true)
    }

    static func runChecks(mode: String, http: Bool) throws {
        try BuildProducts.checkBuilt()
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "the test-only Python venv is missing at \(Self.python): run scripts/test-venv.sh (scripts/test.sh does)")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mcp-\(mode)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch + "/extra", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let command = ([
            Self.python, Self.root + "/Tests/Fixtures/mcp/mcp_check.py", mode, BuildProducts.hostExecutable,
            "--manifests", Self.root + "/manifests", "--extra-manifests", scratch + "/extra",
            "--library-path", BuildProducts.directory, "--state-dir", scratch + "/state",
            "--fixture-manifest", Self.root + "/Tests/Fixtures/manifests/fixture.yaml",
        ] + (http ? ["--http"] : [])).map { "'\($0)'" }.joined(separator: " ")
        let result = try Shell.run(command, in: scratch, timeout: 300)
        let lines = result.output.split(separator: "\n").map(String.init)
        let passed = lines.filter { $0.hasPrefix("PASS ") }
        let failed = lines.filter { $0.hasPrefix("FAIL ") }
        #expect(failed.isEmpty, "\(failed.joined(separator: "\n"))")
        #expect(passed.count == 11, "\(result.output)")
        #expect(result.status == 0, "\(result.output)")
    }
}
