import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Stopping and reaping the child processes tests start with Foundation's `Process`; every wait
/// is bounded.
///
/// **Reap every `Process` with `waitUntilExit`**, even one seen to have exited through
/// `isRunning`: swift-corelibs-foundation's `Process` and the run-loop source it adds to the
/// spawning thread's run loop retain each other until `waitUntilExit` breaks the cycle. A process
/// only polled is never freed, nor the `Pipe`s given as its standard streams, so each leaked its
/// three descriptors.
/// The suite reached ~1,400 open descriptors, and past that `Process.run()` itself crashed
/// (SIGSEGV in its scan of /proc/self/fd, a Foundation bug fixed upstream in
/// swift-corelibs-foundation#5472 but present in Swift 6.3.1): the CI failure of 2026-11-29.
public enum ChildProcess {
    /// SIGTERM, then SIGKILL after `grace` seconds; returns once the process has exited and been
    /// reaped (or after `2 × grace` seconds if even SIGKILL did not end it).
    public static func stop(_ process: Process, grace: Double = 5) {
        if process.isRunning {
            process.terminate()
            if !waitForExit(process, timeout: grace) {
                kill(process.processIdentifier, SIGKILL)
                _ = waitForExit(process, timeout: grace)
            }
        }
        reap(process)
    }

    /// Waits up to `timeout` seconds for the process to exit; true (and reaped) if it did.
    @discardableResult
    public static func waitForExit(_ process: Process, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        reap(process)
        return true
    }

    /// Frees a process that has exited: `waitUntilExit` returns at once then, and drops the
    /// run-loop source that kept the `Process` and its pipes alive. Does nothing while it runs
    /// (that would block). Harmless on a process whose `run()` threw.
    public static func reap(_ process: Process) {
        guard !process.isRunning else { return }
        process.waitUntilExit()
    }

    /// Waits up to `timeout` seconds for `file` to hold a port number (written by the child);
    /// throws, naming `what` and the child's log, when it does not (and stops the child).
    public static func waitForPort(file: String, process: Process, log: String, what: String, timeout: Double = 20) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: file, encoding: .utf8),
                let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), (1...65535).contains(port)
            {
                return port
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let running = process.isRunning
        stop(process)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw SetupFailure(description: "\(what) \(running ? "did not say its port within \(timeout) s" : "exited before it said its port"): \(output.suffix(1500))")
    }
}

/// A test's setup failed (a helper server did not start, a tool is missing): says what, and the
/// helper's own output.
public struct SetupFailure: Error, CustomStringConvertible {
    /// What failed, with the helper's output.
    public var description: String
    /// A failure saying `description`.
    public init(description: String) { self.description = description }
}
