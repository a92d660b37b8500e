import ContextHostTestSupport
import ContextProviderKit
import Foundation

/// A throwaway test CA and a server certificate it signs (Tests/Fixtures/https/make-test-ca.sh):
/// `ca.pem`, `server.pem`, `server.key` in `folder`, for localhost, quotes.test, 127.0.0.1 and ::1.
enum TestCA {
    static func make(in folder: String) throws {
        let script = BuildProducts.packageRoot + "/Tests/Fixtures/https/make-test-ca.sh"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try Shell.run("/bin/bash '\(script)' '\(folder)'", in: folder, timeout: 60)
        guard result.status == 0 else {
            throw SetupFailure(description: "make-test-ca.sh failed with status \(result.status) (is openssl installed? .ci/run installs it): \(result.output.suffix(500))")
        }
    }
}

extension TestCA {
    /// The environment of a `context-host` that a broker test runs: its secrets, state, cache and
    /// data folders all inside `root` (so the test can search every file it wrote for a canary),
    /// and `caFile` trusted for its fetches.
    static func hostEnvironment(root: String, caFile: String) -> [String: String] {
        [
            // The key file, never the keyring of the desktop the tests may run in
            // (SecretKeyringTests runs its own Secret Service).
            "CONTEXT_HOST_SECRETS_DIR": root + "/secrets", "CONTEXT_HOST_SECRETS_BACKEND": "file", "CONTEXT_HOST_EXTRA_CA_FILE": caFile,
            "XDG_STATE_HOME": root + "/state", "XDG_CACHE_HOME": root + "/cache", "XDG_DATA_HOME": root + "/data",
        ]
    }
}

/// A loopback HTTPS server (Tests/Fixtures/https/replay_server.py) with a test CA the test makes
/// (make-test-ca.sh), replaying recorded quote responses and failure modes. Every wait while
/// starting and stopping it is bounded: a server that does not come up fails the test with its log.
final class LoopbackHTTPS: @unchecked Sendable {
    let folder: TemporaryDirectory
    private let process: Process
    let port: Int
    /// `https://localhost:PORT`.
    var baseURL: String { "https://localhost:\(port)" }
    var caFile: String { folder.path + "/ca/ca.pem" }
    var logFile: String { folder.path + "/requests.log" }
    var apiKeyFile: String { folder.path + "/api-key" }
    var recordings: String { folder.path + "/recordings" }

    init(apiKey: String = "") throws {
        let folder = try TemporaryDirectory()
        self.folder = folder
        let fixtures = BuildProducts.packageRoot + "/Tests/Fixtures/https"
        try TestCA.make(in: folder.path + "/ca")
        try FileManager.default.createDirectory(atPath: folder.path + "/recordings", withIntermediateDirectories: true)
        for file in (try? FileManager.default.contentsOfDirectory(atPath: fixtures + "/recordings")) ?? [] {
            try FileManager.default.copyItem(atPath: fixtures + "/recordings/" + file, toPath: folder.path + "/recordings/" + file)
        }
        try apiKey.write(toFile: folder.path + "/api-key", atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: folder.path + "/requests.log", contents: nil)
        let serverLog = folder.path + "/server.log"
        _ = FileManager.default.createFile(atPath: serverLog, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", fixtures + "/replay_server.py", "--cert", folder.path + "/ca/server.pem", "--key", folder.path + "/ca/server.key",
            "--recordings", folder.path + "/recordings", "--log", folder.path + "/requests.log", "--api-key-file", folder.path + "/api-key",
            "--port-file", folder.path + "/port",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: serverLog)
        try process.run()
        self.process = process
        port = try ChildProcess.waitForPort(file: folder.path + "/port", process: process, log: serverLog, what: "the HTTPS test server (replay_server.py)")
    }

    /// What the server received (one JSON object per request).
    var requests: [JSONValue] {
        ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }
    }

    deinit {
        ChildProcess.stop(process)
    }
}
