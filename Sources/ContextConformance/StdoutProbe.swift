import CHostSupport
import ContextHost
import ContextProviderKit
import ContextWire
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One verdict per manifest for `robustness.stdout-clean`: the probe runs once, whatever the modes.
final class StdoutProbeCache: Sendable {
    private let verdicts = Mutex<[String: Verdict]>([:])

    func verdict(manifestPath: String, _ make: () async -> Verdict) async -> Verdict {
        if let known = verdicts.withLock({ $0[manifestPath] }) { return known }
        let verdict = await make()
        verdicts.withLock { $0[manifestPath] = verdict }
        return verdict
    }
}

/// `robustness.stdout-clean`: replays the run's calls in a child process whose stdout is a pipe
/// the runner reads, so every byte there was written by the provider.
///
/// The host and its workers point fd 1 at stderr before loading providers (docs/security.md), so
/// stray output cannot corrupt the protocol, but it still ends up in the host's log, and a
/// provider that writes to stdout usually writes to the protocol of hosts that do not protect it.
/// The probe (`context-host conformance-probe`, hidden) loads the library like an in-process host
/// but leaves fd 1 alone.
public enum StdoutProbe {
    static func run(
        executable: String, libraryPath: String, sha256: String?, initJSON: [UInt8], calls: [RecordedCall], timeoutMs: Int
    ) -> Verdict {
        var request = JSONObject()
        request["library"] = .string(libraryPath)
        if let sha256 { request["sha256"] = .string(sha256) }
        request["init"] = (try? JSONValue(parsing: initJSON)) ?? [:]
        request["calls"] = .array(calls.map { ["method": .string($0.method), "params": $0.params] })
        let input = JSONValue.object(request).jsonBytes

        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0]
        guard ctxh_pipe_cloexec(&stdinPipe) == 0 else { return .skip("skipped: pipe failed") }
        guard ctxh_pipe_cloexec(&stdoutPipe) == 0 else {
            stdinPipe.forEach { close($0) }
            return .skip("skipped: pipe failed")
        }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let arguments = [executable, "conformance-probe"]
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArguments.append(nil)
        var pid: pid_t = 0
        let status = ctxh_spawn(executable, &cArguments, nil, stdinPipe[0], stdoutPipe[1], devNull, &pid)
        cArguments.forEach { free($0) }
        close(stdinPipe[0])
        close(stdoutPipe[1])
        if devNull >= 0 { close(devNull) }
        guard status == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            return .skip("skipped: cannot start '\(executable) conformance-probe': \(String(cString: strerror(status)))")
        }
        // Feed the request from another thread, so a provider flooding stdout cannot deadlock us.
        let writerFD = stdinPipe[1]
        let written = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = input.withUnsafeBytes { buffer -> Bool in
                var offset = 0
                while offset < buffer.count {
                    let count = write(writerFD, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { return false }
                    offset += count
                }
                return true
            }
            close(writerFD)
            written.signal()
        }
        let readFD = stdoutPipe[0]
        let (total, output, timedOut) = drain(readFD, timeoutMs: timeoutMs)
        close(readFD)
        if timedOut { kill(pid, SIGKILL) }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
        written.wait()
        if total > 0 {
            let shown = String(decoding: output.prefix(200), as: UTF8.self)
                .replacingControlCharacters()
            return .fail(
                "The provider wrote \(total) byte(s) to stdout while handling \(calls.count) call(s).",
                ["first bytes: \"\(shown)\"", "fix: log to stderr (FileHandle.standardError, fputs(…, stderr), swift-log); never print() in a provider"])
        }
        if timedOut { return .warn("The stdout probe did not finish within \(timeoutMs) ms; nothing was written to stdout before that.") }
        let exitCode = (exitStatus >> 8) & 0xff
        let signal = exitStatus & 0x7f
        if signal != 0 { return .warn("Nothing was written to stdout, but the probe process died (signal \(signal)).") }
        if exitCode == 3 { return .skip("skipped: the probe could not open the provider") }
        return .pass("Nothing was written to stdout during \(calls.count) call(s).")
    }

    /// Reads `fd` to its end or until `timeoutMs` pass: how many bytes came, the first 4096 of
    /// them, and whether time ran out.
    private static func drain(_ fd: Int32, timeoutMs: Int) -> (total: Int, output: [UInt8], timedOut: Bool) {
        var output: [UInt8] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 8192)
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return (total, output, true) }
            let ready = poll(&descriptor, 1, Int32(min(remaining.milliseconds, 1000)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return (total, output, false) }
            total += count
            if output.count < 4096 { output.append(contentsOf: chunk[0..<min(count, 4096 - output.count)]) }
        }
    }

    /// The body of `context-host conformance-probe`: reads `{"library","sha256"?,"init","calls"}`
    /// from stdin, opens the provider in this process without touching fd 1, makes each call in
    /// turn (at most 10 s each) and exits: 0 done, 2 bad input, 3 the provider did not open.
    public static func probeMain() -> Never {
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            input.append(contentsOf: chunk[0..<count])
        }
        guard let request = try? JSONValue(parsing: input), let libraryPath = request["library"]?.stringValue,
            let initValue = request["init"]
        else { _exit(2) }
        let connection: InProcessConnection
        do throws(LoadError) {
            let library = try ProviderLibrary.load(path: libraryPath, sha256: request["sha256"]?.stringValue)
            connection = try InProcessConnection(library: library, initJSON: initValue.jsonBytes)
        } catch {
            _exit(3)
        }
        for call in request["calls"]?.arrayValue ?? [] {
            guard let method = call["method"]?.stringValue else { continue }
            let params = call["params"] ?? [:]
            let done = DispatchSemaphore(value: 0)
            let id = connection.send(method: method, params: { JSONWriter.append(params, to: &$0) }) { _ in done.signal() }
            if done.wait(timeout: .now() + .seconds(10)) == .timedOut { connection.cancel(id) }
        }
        fflush(nil)
        _exit(0)
    }
}

extension String {
    /// Control characters shown as `\n`, `\u{1}`…
    func replacingControlCharacters(quotes: Bool = true) -> String {
        var table: [Unicode.Scalar: String] = ["\n": "\\n", "\r": "\\r", "\t": "\\t"]
        if quotes { table["\""] = "\\\"" }
        return TextEscaping.escape(self, table) { scalar, result in
            if TextEscaping.isControl(scalar) { result += "\\u{\(String(scalar.value, radix: 16))}" } else { result.unicodeScalars.append(scalar) }
        }
    }
}
