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

        /// What is wrong with this run of a script that should pass exactly `expectedPasses`
        /// checks: its failed checks, another number of passes, a non-zero exit. Empty when
        /// nothing is; else one line a problem, then the script's output.
        public func problems(expectedPasses: Int) -> String {
            var problems = failed
            if passed.count != expectedPasses { problems.append("\(passed.count) checks passed, expected \(expectedPasses)") }
            if status != 0 { problems.append("the script exited \(status)") }
            return problems.isEmpty ? "" : (problems + ["output:", output]).joined(separator: "\n")
        }
    }

    /// One scenario of a check script that takes `SCENARIO HOST-EXECUTABLE` (ws_check.py,
    /// mcp_http_check.py), after checking that the host was built.
    public static func scenario(_ script: String, _ name: String, timeout: Double = 240) throws -> Outcome {
        try BuildProducts.checkBuilt()
        return try run(script, [name, BuildProducts.hostExecutable], timeout: timeout)
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
