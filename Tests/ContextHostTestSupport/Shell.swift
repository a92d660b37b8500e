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
                ChildProcess.stop(process)
                throw Timeout(description: "'\(command)' did not finish in \(timeout) s")
            }
            usleep(50_000)
        }
        ChildProcess.reap(process)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        return Result(status: process.terminationStatus, output: output)
    }

    /// Runs `executable` with `arguments` to completion, `input` on its standard input (closed
    /// after it) and its standard error discarded; its exit status and standard output.
    public static func runProgram(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inputPipe.fileHandleForWriting.close()  // no throw between run() and waitUntilExit()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
