import ContextProviderKit
import Foundation
import Synchronization

/// A running `context-host` process with pipes on stdin, stdout and stderr.
public final class HostProcess: @unchecked Sendable {
    public let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stdoutBuffer = SharedBuffer()
    private let stderrBuffer = SharedBuffer()

    /// Starts `context-host` with these arguments, in `directory` (default: the package root).
    public init(arguments: [String], directory: String? = nil, environment: [String: String] = [:]) throws {
        try BuildProducts.checkBuilt()
        process.executableURL = URL(fileURLWithPath: BuildProducts.hostExecutable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory ?? BuildProducts.packageRoot)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "CONTEXT_HOST_MANIFESTS")
        // Drafts and the registry cache of test hosts go to a private folder, never the user's.
        let privateFolder = FileManager.default.temporaryDirectory.appendingPathComponent("ctxhost-state-\(UUID().uuidString)")
        env["XDG_STATE_HOME"] = privateFolder.path
        env["XDG_CACHE_HOME"] = privateFolder.appendingPathComponent("cache").path
        env["XDG_DATA_HOME"] = privateFolder.appendingPathComponent("data").path
        env.removeValue(forKey: "CONTEXT_HOST_REGISTRY_CACHE")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        try process.run()
        Self.drain(stdoutPipe.fileHandleForReading, into: stdoutBuffer)
        Self.drain(stderrPipe.fileHandleForReading, into: stderrBuffer)
    }

    /// Bytes read from a pipe, shared with the thread that reads them.
    final class SharedBuffer: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let closed = Mutex(false)
        func withLock<T>(_ body: (inout [UInt8]) -> T) -> T { bytes.withLock { body(&$0) } }
    }

    private static func drain(_ handle: FileHandle, into buffer: SharedBuffer) {
        let thread = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty {
                    buffer.closed.withLock { $0 = true }
                    return
                }
                buffer.withLock { $0.append(contentsOf: data) }
            }
        }
        thread.start()
    }

    /// Writes raw bytes to the host's stdin.
    public func write(_ bytes: [UInt8]) {
        stdinPipe.fileHandleForWriting.write(Data(bytes))
    }

    /// Writes a string to the host's stdin.
    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Closes the host's stdin.
    public func closeInput() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// Everything the host wrote to stderr so far.
    /// The process's resident memory now (`VmRSS`) and at its peak (`VmHWM`), in MiB, from
    /// `/proc/PID/status` (Linux; `nil` elsewhere or once the process is gone).
    public var residentMiB: Double? { Self.memoryField("VmRSS:", of: process.processIdentifier) }
    public var peakResidentMiB: Double? { Self.memoryField("VmHWM:", of: process.processIdentifier) }

    static func memoryField(_ field: String, of pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    public var standardError: String { String(decoding: stderrBuffer.withLock { $0 }, as: UTF8.self) }

    /// Everything on stdout not yet taken.
    public var pendingOutput: [UInt8] { stdoutBuffer.withLock { $0 } }

    /// Takes bytes from stdout with `take`, which returns how many it consumed (0 = need more),
    /// waiting up to `timeout` seconds.
    public func takeOutput<T>(timeout: Double, _ take: ([UInt8]) -> (T, Int)?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let taken: T? = stdoutBuffer.withLock { buffer in
                guard let (value, count) = take(buffer) else { return nil }
                buffer.removeFirst(count)
                return value
            }
            if let taken { return taken }
            if Date() > deadline || (stdoutBuffer.closed.withLock { $0 } && stdoutBuffer.withLock { $0.isEmpty }) { return nil }
            usleep(1000)
        }
    }

    /// Waits for the process to exit and returns its status, or nil after `timeout` seconds.
    public func waitForExit(timeout: Double = 10) -> Int32? {
        guard ChildProcess.waitForExit(process, timeout: timeout) else { return nil }
        return process.terminationStatus
    }

    /// Waits until both output pipes reached end of file (the process and anything that inherited
    /// them have exited and everything written was read), at most `timeout` seconds; true if so.
    @discardableResult
    public func waitForOutputEnd(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !(stdoutBuffer.closed.withLock { $0 } && stderrBuffer.closed.withLock { $0 }) {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    /// Stops the process if it is still running (SIGTERM, SIGKILL after 5 s) and reaps it.
    public func terminate() {
        ChildProcess.stop(process)
    }

    /// Stops and reaps the process: dropped running or unreaped, it would keep its three pipes
    /// open for the rest of the test run (`ChildProcess`).
    deinit {
        ChildProcess.stop(process)
    }
}
