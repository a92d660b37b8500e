import Foundation

/// Runs shell command lines for tests that build or run things outside the package (a scaffolded
/// provider, an app that embeds the host); output goes to a log file, so no pipe can fill up.
public enum Shell {
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
    }

    public struct Timeout: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `command` with `/bin/sh -c` in `directory`, with stdout and stderr together.
    public static func run(_ command: String, in directory: String, timeout: Double = 600) throws -> Result {
        let log = directory + "/.shell-\(UUID().uuidString).log"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(command) > '\(log)' 2>&1"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw Timeout(description: "'\(command)' did not finish in \(timeout) s")
            }
            usleep(50_000)
        }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        return Result(status: process.terminationStatus, output: output)
    }
}
