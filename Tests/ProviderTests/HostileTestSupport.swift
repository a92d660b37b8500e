import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `context-host` (bundled manifests, the providers' real `.so` files, every provider
/// in-process) with per-provider settings from a `--config` file, for hostile inputs: after
/// each request it checks that the host still answers `ping`, that its memory stayed below a
/// bound, and — with `watching` — which files of a data folder were opened (inotify).
final class HostileSettingsHost {
    let client: RPCClient
    let configFolder: TemporaryDirectory
    /// The bound on the host's peak resident memory (VmHWM), checked after every request.
    let rssLimitKiB: Int
    private var watch: FolderWatch?

    /// Starts a host whose providers get `settings` (provider id → settings object). The bundled
    /// manifests are copied with `previewTimeout` as their `preview` timeout: a debug build on a
    /// loaded machine may take longer than the 500 ms default for a megabyte item or a burst, and
    /// speed is the benchmarks' job; a timeout still fails the test (nil: the manifests as they are).
    init(settings: [String: JSONObject], watching folder: String? = nil, rssLimitMiB: Int = 512, previewTimeout: String? = "5s") throws {
        configFolder = try TemporaryDirectory()
        var yaml = "providers:\n"
        for (provider, values) in settings {
            yaml += "  \(provider):\n    settings:\n"
            for (key, value) in values { yaml += "      \(key): \(value.jsonString)\n" }
        }
        let config = try configFolder.write("host.yaml", yaml)
        if let folder { watch = try FolderWatch(folder) }
        rssLimitKiB = rssLimitMiB * 1024
        // In-process: where a trap in a provider would end the host (the bundled manifests run the
        // providers that read users' files in workers by default).
        var arguments = ["serve", "--no-watch", "--no-state", "--isolation", "in-process", "--config", config]
        if let previewTimeout {
            arguments += ["--manifests", try RelaxedManifests.folder(copying: RelaxedManifests.bundled, previewTimeout: previewTimeout)]
        }
        client = try RPCClient(arguments: arguments)
        _ = try client.initialize()
    }

    deinit { client.host.terminate() }

    var pid: Int32 { client.host.process.processIdentifier }

    /// The host's peak resident memory since it started (VmHWM of /proc/PID/status) in KiB: a
    /// spike between two checks counts, unlike the current VmRSS.
    var peakResidentKiB: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// Sends a request and waits up to `timeout` seconds for its response; then checks the host:
    /// alive, answering `ping`, memory under the bound. Returns the response.
    @discardableResult
    func request(
        _ method: String, _ params: JSONValue, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> JSONValue {
        let id = client.send(method, params)
        let started = Date()
        let response: JSONValue
        do {
            response = try client.response(to: id, timeout: timeout)
        } catch {
            Issue.record("\(method): no answer within \(timeout) s (host running: \(client.host.process.isRunning)); stderr tail: \(client.host.standardError.suffix(600))", sourceLocation: sourceLocation)
            throw error
        }
        #expect(Date().timeIntervalSince(started) < timeout, sourceLocation: sourceLocation)
        try checkHealthy(sourceLocation: sourceLocation)
        return response
    }

    /// The host is running, answers `ping`, and its peak resident memory is below the bound.
    func checkHealthy(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(client.host.process.isRunning, "the host died: \(client.host.standardError.suffix(600))", sourceLocation: sourceLocation)
        let pong = try client.call("ping")
        #expect(pong.objectValue != nil, sourceLocation: sourceLocation)
        let peak = try #require(peakResidentKiB, sourceLocation: sourceLocation)
        #expect(peak < rssLimitKiB, "VmHWM \(peak) KiB ≥ \(rssLimitKiB) KiB", sourceLocation: sourceLocation)
    }

    /// The names of the files in the watched folder opened since the host started.
    func openedFiles() -> Set<String> { watch?.opened() ?? [] }

    /// A result, or an error whose code is one the protocol documents for a provider's answer
    /// (`-32602` invalid params, `-32013` provider error, `-32700` for JSON the host refuses);
    /// never `-32014` (a bad reply), `-32015` (a timeout) or `-32016`.
    static func isResultOrDocumentedError(_ response: JSONValue) -> Bool {
        if response["result"] != nil { return true }
        guard let code = response["error"]?["code"]?.intValue else { return false }
        return [-32602, -32013, -32700].contains(code)
    }
}

/// Files opened (`IN_OPEN`, the default) or read (`IN_ACCESS`) in one folder, seen with inotify.
final class FolderWatch {
    private let descriptor: Int32

    init(_ folder: String, events: UInt32 = UInt32(IN_OPEN)) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0, inotify_add_watch(descriptor, folder, events) >= 0 else {
            throw CocoaError(.fileReadUnknown)
        }
    }

    deinit { close(descriptor) }

    /// The names of the files with an event so far (events are read and consumed).
    func opened() -> Set<String> {
        var names: Set<String> = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !nameBytes.isEmpty { names.insert(String(decoding: nameBytes, as: UTF8.self)) }
                offset += 16 + length
            }
        }
        return names
    }
}

/// Makes a FIFO (named pipe) at `path`.
func makeFIFO(_ path: String) throws {
    guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
}
