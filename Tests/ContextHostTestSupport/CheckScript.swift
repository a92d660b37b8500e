import Foundation

/// A check script of the test-only Python venv (Tests/Fixtures/web/ws_check.py,
/// Tests/Fixtures/mcp/mcp_check.py, mcp_http_check.py): it prints one line per check, `PASS name`
/// or `FAIL name: why`, and exits 0 only when every check passed.
public enum CheckScript {
    public struct Outcome: Sendable {
        public var passed: [String]
        public var failed: [String]
        public var output: String
        public var status: Int32
    }

    /// Runs `script` (a path below the package root) with the venv's Python and `arguments`.
    /// Throws, with what to do, when the venv is missing or the script outlives `timeout`.
    public static func run(_ script: String, _ arguments: [String], in directory: String = BuildProducts.packageRoot, timeout: Double) throws -> Outcome {
        let python = BuildProducts.testVenvPython
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw MissingVenv(description: "the test-only Python venv is missing at \(python): run scripts/test-venv.sh (scripts/test.sh does)")
        }
        let command = ([python, BuildProducts.packageRoot + "/" + script] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let result = try Shell.run(command, in: directory, timeout: timeout)
        let lines = result.output.split(separator: "\n").map(String.init)
        return Outcome(
            passed: lines.filter { $0.hasPrefix("PASS ") }, failed: lines.filter { $0.hasPrefix("FAIL ") }, output: result.output,
            status: result.status)
    }

    public struct MissingVenv: Error, CustomStringConvertible {
        public var description: String
    }
}
