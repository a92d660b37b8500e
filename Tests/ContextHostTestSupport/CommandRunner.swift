import Foundation

/// Runs `context-host` to completion and captures its output.
public struct CommandResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

public enum CommandRunner {
    /// Runs `context-host` with these arguments in `directory` (default: the package root), with
    /// extra `environment` variables.
    public static func run(
        _ arguments: [String], directory: String? = nil, environment: [String: String] = [:], timeout: Double = 30
    ) throws -> CommandResult {
        let host = try HostProcess(arguments: arguments, directory: directory, environment: environment)
        host.closeInput()
        guard let status = host.waitForExit(timeout: timeout) else {
            host.terminate()
            throw RPCClient.Failure(description: "context-host \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        // The drain threads read up to end of file: nothing written is lost on a slow machine.
        host.waitForOutputEnd()
        let output = host.takeOutput(timeout: 0.1) { buffer in (String(decoding: buffer, as: UTF8.self), buffer.count) } ?? ""
        return CommandResult(status: status, standardOutput: output, standardError: host.standardError)
    }
}
