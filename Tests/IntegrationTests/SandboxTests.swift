import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The worker sandbox (issue 25): a hostile C provider (Tests/Fixtures/FixtureHostileProvider)
/// tries every escape, one per request, in a worker under `--sandbox required`, and each attempt
/// must be refused by the kernel while the provider keeps answering its legitimate calls. The
/// host runs as root in CI, so these also prove that root gains nothing inside a worker.
@Suite("Sandbox", .serialized)
struct SandboxTests {
    static let sandboxManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-sandbox"
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"
    static let hostile = "com.contexthost.hostile"

    /// A host with the hostile provider under `--sandbox required`, its folders in `folder`.
    final class Setup {
        let folder: TemporaryDirectory
        let client: RPCClient
        let secret: String
        let otherProviderSecret: String
        let stateFile: String
        let listener: Int32
        let port: Int

        let providerID: String

        init(
            extra: [String] = [], environment: [String: String] = [:], manifests: String = SandboxTests.sandboxManifests,
            providerID: String = SandboxTests.hostile, grant: [String] = []
        ) throws {
            self.providerID = providerID
            folder = try TemporaryDirectory()
            secret = try folder.write("home/secret.txt", "the user's secret")
            otherProviderSecret = try folder.write("data/providers/com.contexthost.other/token.txt", "another provider's token")
            stateFile = try folder.write("state/composers/draft.json", "{\"draft\":true}")
            let host = try HostProcess(
                arguments: [
                    "--manifests", manifests, "--state-dir", folder.path + "/state",
                    "--data-dir", folder.path + "/data", "--sandbox", "required", "--no-watch",
                ] + extra,
                environment: environment)
            client = RPCClient(host: host)
            _ = try client.initialize(["clientInfo": ["name": "tests"], "grantedPermissions": .array(grant.map(JSONValue.string))])
            // A TCP listener on 127.0.0.1 the provider must not reach.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            _ = listen(fd, 8)
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            listener = fd
            port = Int(UInt16(bigEndian: bound.sin_port))
        }

        deinit {
            close(listener)
            if client.host.process.isRunning { _ = try? client.shutdown() }
        }

        var hostPID: Int32 { client.host.process.processIdentifier }

        /// Runs one escape and returns the provider's account of it (the chip's subtitle).
        func attempt(_ escape: String, path: String = "", timeout: Double = 10) throws -> String {
            let item: JSONValue = [
                "id": "5d2c6a1e-0000-4000-8000-000000000001", "providerId": .string(providerID), "type": "hostile",
                "displayName": "Hostile",
                "content": ["escape": .string(escape), "hostPid": .number(Double(hostPID)), "path": .string(path), "port": .number(Double(port))],
            ]
            let id = client.send("items/preview", ["item": item])
            let response = try client.response(to: id, timeout: timeout)
            if let error = response["error"] { return "error: \(error)" }
            return response["result"]?["subtitle"]?.stringValue ?? "no subtitle: \(response)"
        }

        /// The provider still answers a legitimate call.
        func expectLegitimateCallsWork(sourceLocation: SourceLocation = #_sourceLocation) throws {
            let item: JSONValue = [
                "id": "5d2c6a1e-0000-4000-8000-000000000002", "providerId": .string(providerID), "type": "hostile",
                "displayName": "Hostile", "content": [:],
            ]
            let chip = try client.call("items/preview", ["item": item])
            #expect(chip["subtitle"] == "normal", sourceLocation: sourceLocation)
        }

        /// The provider's entry once its worker runs: workers start on first use (issue 28), so
        /// this first sends a legitimate call, which starts it; the sandbox report comes from it.
        func startedEntry(sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
            #expect(try entry()["workerPid"] == nil, "a worker ran before any request needed it", sourceLocation: sourceLocation)
            #expect(try entry()["sandbox"] == nil, "a sandbox report before any worker ran", sourceLocation: sourceLocation)
            try expectLegitimateCallsWork(sourceLocation: sourceLocation)
            return try entry()
        }

        func entry(_ id: String? = nil) throws -> JSONValue {
            let list = try client.call("providers/list")
            return try #require(list["providers"]?.arrayValue?.first { $0["id"] == .string(id ?? providerID) })
        }
    }

    private func expectRefused(_ setup: Setup, _ escape: String, path: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let outcome = try setup.attempt(escape, path: path)
        #expect(outcome.hasPrefix("refused:"), "\(escape) \(path): \(outcome)", sourceLocation: sourceLocation)
        try setup.expectLegitimateCallsWork(sourceLocation: sourceLocation)
    }

    @Test("the hostile provider runs in a worker with every layer enforced, though its manifest asks for in-process")
    func everyLayerEnforced() throws {
        let setup = try Setup()
        let entry = try setup.startedEntry()
        #expect(entry["status"] == "loaded")
        #expect(entry["effectiveIsolation"] == "process")
        #expect(entry["isolationNote"]?.stringValue?.contains("only trusted providers") == true)
        let sandbox = try #require(entry["sandbox"])
        #expect(sandbox["policy"] == "required")
        #expect(sandbox["missing"]?.arrayValue?.isEmpty == true, "\(sandbox)")
        let enforced = Set(sandbox["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        for layer in [
            "no-new-privs", "capabilities", "landlock-filesystem", "landlock-network", "landlock-scope", "seccomp",
            "pid-namespace", "mount-namespace", "network-namespace", "resource-limits", "task-limit", "environment", "cpu-watchdog",
        ] {
            #expect(enforced.contains(layer), "\(layer) in \(enforced)")
        }
        try setup.expectLegitimateCallsWork()
    }

    @Test("files: /etc/shadow, the user's files, another provider's folder, the state folder, manifests — refused; its own folder works")
    func files() throws {
        let setup = try Setup()
        try expectRefused(setup, "read-file", path: "/etc/shadow")
        try expectRefused(setup, "read-file", path: setup.secret)
        try expectRefused(setup, "read-file", path: setup.otherProviderSecret)
        try expectRefused(setup, "read-file", path: setup.stateFile)
        try expectRefused(setup, "read-file", path: Self.bundledManifests + "/note.yaml")
        let outside = setup.folder.path + "/home/written.txt"
        try expectRefused(setup, "write-file", path: outside)
        #expect(!FileManager.default.fileExists(atPath: outside))
        let own = try setup.attempt("write-own")
        #expect(own.hasPrefix("ok: wrote " + setup.folder.path + "/data/providers/" + Self.hostile + "/"), "\(own)")
    }

    @Test("network: TCP to 127.0.0.1 and netlink sockets are refused without the network permission")
    func network() throws {
        let setup = try Setup()
        try expectRefused(setup, "tcp-connect")
        try expectRefused(setup, "netlink")
    }

    @Test("processes: fork + execve, a child left behind, 200 processes — refused without the exec permission")
    func processes() throws {
        let setup = try Setup()
        try expectRefused(setup, "fork-exec")
        try expectRefused(setup, "leave-child")
        try expectRefused(setup, "processes")
        try expectRefused(setup, "unshare")
    }

    @Test("the host: /proc/<host>/environ, cmdline, mem, ptrace, signals, its protocol pipe — out of reach")
    func host() throws {
        let setup = try Setup()
        for escape in ["proc-environ", "proc-cmdline", "proc-mem", "ptrace", "signal-host", "forge-response"] {
            try expectRefused(setup, escape)
        }
        // Nothing forged reached the client: the next message is the answer to the next request.
        let list = try setup.client.call("providers/list")
        #expect(list["providers"] != nil)
    }

    @Test("resources: a 4 GiB MAP_SHARED mapping and 200 threads are refused")
    func resources() throws {
        let setup = try Setup()
        try expectRefused(setup, "mmap-shared")
        let threads = try setup.attempt("threads")
        #expect(threads.hasPrefix("refused: thread "), "\(threads)")
        try setup.expectLegitimateCallsWork()
    }

    @Test("with exec declared and granted it may run /bin/sh, and a child it leaves dies with its worker")
    func execPermission() throws {
        let id = "com.contexthost.hostile-exec"
        let setup = try Setup(manifests: Self.sandboxManifests + "-exec", providerID: id, grant: ["exec"])
        let entry = try setup.startedEntry()
        #expect(entry["available"] == true, "\(entry)")
        #expect(entry["sandbox"]?["missing"]?.arrayValue?.isEmpty == true, "\(entry)")
        #expect(try setup.attempt("fork-exec") == "ESCAPED: ran /bin/sh")
        let left = try setup.attempt("leave-child")
        #expect(left.hasPrefix("ESCAPED: left child"), "\(left)")
        // Still no network, no files outside its folder.
        try expectRefused(setup, "tcp-connect")
        try expectRefused(setup, "read-file", path: "/etc/shadow")
        // The child sleeps for an hour; killing the worker (here: the host exits) ends it.
        #expect(Self.processes(matching: "--provider-id " + id).count >= 3, "relay, init, worker, child")
        _ = try setup.client.shutdown()
        var remaining = Self.processes(matching: "--provider-id " + id)
        for _ in 0..<50 where !remaining.isEmpty {
            usleep(100_000)
            remaining = Self.processes(matching: "--provider-id " + id)
        }
        #expect(remaining.isEmpty, "left behind: \(remaining)")
    }

    /// Pids of processes whose command line contains `text`.
    static func processes(matching text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> Int32? in
            guard let pid = Int32(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return line.contains(text) ? pid : nil
        }
    }

    @Test("a worker that spins after answering is killed for its CPU use and restarted")
    func cpuWatchdog() throws {
        let setup = try Setup(extra: ["--worker-idle-cpu", "1"])
        let first = try #require(try setup.startedEntry()["workerPid"]?.intValue)
        let answered = try setup.attempt("busy-after")
        #expect(answered.hasPrefix("answered"))
        var crash: String?
        for _ in 0..<100 {
            let entry = try setup.entry()
            if let last = entry["lastCrash"]?.stringValue, entry["workerPid"]?.intValue != first {
                crash = last
                break
            }
            usleep(100_000)
        }
        let reason = try #require(crash)
        #expect(reason.contains("CPU while it owed no answer"), "\(reason)")
        try setup.expectLegitimateCallsWork()
    }

    @Test("a layer turned off is reported missing, and --sandbox required then refuses to start the provider")
    func missingLayerReported() throws {
        let environment = ["CONTEXT_HOST_SANDBOX_DISABLE": "landlock-network"]
        let bestEffort = try Setup(extra: ["--sandbox", "best-effort"], environment: environment)
        let sandbox = try #require(try bestEffort.startedEntry()["sandbox"])
        let missing = sandbox["missing"]?.arrayValue ?? []
        #expect(missing.count == 1)
        #expect(missing.first?["layer"] == "landlock-network")
        #expect(missing.first?["reason"]?.stringValue?.contains("CONTEXT_HOST_SANDBOX_DISABLE") == true)
        #expect(sandbox["enforced"]?.arrayValue?.contains("landlock-network") == false)
        // The other layers still refuse the connection (seccomp, the network namespace).
        try expectRefused(bestEffort, "tcp-connect")

        let required = try Setup(environment: environment)
        // Its worker starts on first use (issue 28): that request is refused with the reason.
        let refused = try required.attempt("none")
        #expect(refused.contains("-32012"), "\(refused)")
        #expect(refused.contains("sandbox-unavailable"), "\(refused)")
        #expect(refused.contains("landlock-network"), "\(refused)")
        let entry = try required.entry()
        #expect(entry["workerPid"] == nil)
        #expect(entry["crashes"] == 1)
        #expect(entry["lastCrash"]?.stringValue?.contains("landlock-network") == true, "\(entry)")

        // `context-host list` shows the same.
        let folder = try TemporaryDirectory()
        let list = try runHost(
            ["list", "--manifests", Self.sandboxManifests, "--no-state", "--data-dir", folder.path, "--sandbox", "best-effort"],
            environment: environment)
        #expect(list.contains("partial (1 missing)"), "\(list)")
        #expect(list.contains("not enforced: landlock-network: turned off by CONTEXT_HOST_SANDBOX_DISABLE"), "\(list)")
    }

    @Test("no same-user process reaches the host's protocol pipe, environment or memory (the host is non-dumpable)")
    func hostIsNotDumpable() throws {
        let setup = try Setup()
        let pid = setup.hostPID
        // A process of the same user without capabilities (as root: an empty bounding set).
        let probe = """
            for f in environ mem; do cat /proc/\(pid)/$f >/dev/null 2>&1 && echo "read $f"; done
            for n in 0 1 2 3 4 5 6 7 8 9; do (echo forged > /proc/\(pid)/fd/$n) 2>/dev/null && echo "wrote fd $n"; done
            echo done
            """
        let output = try runCommand("/usr/bin/setpriv", ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs", "/bin/sh", "-c", probe])
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "done", "\(output)")
        try setup.expectLegitimateCallsWork()
    }

    @Test("Stock Quote's HTTP source works in its sandboxed worker with network granted")
    func stockQuoteNetwork() throws {
        let folder = try TemporaryDirectory()
        try folder.write("www/ACME.csv", """
            Date,Open,High,Low,Close,Adj Close,Volume
            2026-11-20,80.10,81.20,80.00,80.76,80.76,5000000
            2026-11-23,80.80,81.50,80.50,81.20,81.20,5100000
            2026-11-24,81.20,82.00,81.00,81.90,81.90,5200000

            """)
        // A local file for another symbol, so the provider is available without the network.
        try folder.write("quotes/GLBX.csv", "Date,Open,High,Low,Close,Adj Close,Volume\n2026-11-20,10,11,9,10.5,10.5,100\n")
        let server = Process()
        let output = Pipe()
        let input = Pipe()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-c", """
            import http.server, functools, sys, threading, os
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            class Quiet(handler.func):
                def log_message(self, *args): pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
            print(server.server_address[1], flush=True)
            threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
            server.serve_forever()
            """, folder.path + "/www"]
        server.standardOutput = output
        server.standardInput = input
        try server.run()
        defer {
            try? input.fileHandleForWriting.close()
            server.waitUntilExit()
        }
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let port = try #require(Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        let config = try folder.write("host.yaml", """
            providers:
              com.contexthost.stock-quote:
                settings:
                  quotesDirectory: \(folder.path)/quotes
                  symbolsFile: \(BuildProducts.packageRoot)/data/stock-quote/symbols.csv
                  httpURLTemplate: "http://127.0.0.1:\(port)/{symbol}.csv"
                  httpCacheSeconds: 0
            """)
        for granted in [true, false] {
            let host = try HostProcess(arguments: [
                "--manifests", Self.bundledManifests, "--config", config, "--no-state", "--data-dir", folder.path + "/data",
                "--sandbox", "required", "--no-watch",
            ])
            let client = RPCClient(host: host)
            _ = try client.initialize(["clientInfo": ["name": "tests"], "grantedPermissions": granted ? ["network"] : []])
            // collect/start starts its worker (workers start on first use, issue 28).
            let start = try client.call("collect/start", ["providerId": "com.contexthost.stock-quote"])
            let list = try client.call("providers/list")
            let entry = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.stock-quote" })
            #expect(entry["effectiveIsolation"] == "process")
            #expect(entry["sandbox"]?["missing"]?.arrayValue?.isEmpty == true, "\(entry)")
            let enforced = entry["sandbox"]?["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(enforced.contains("network-namespace") == !granted)
            #expect(enforced.contains("landlock-network") == !granted)
            let submitted = try client.call("collect/submit", ["sessionId": start["sessionId"] ?? .null, "values": ["symbol": "ACME", "range": "1M"]])
            if granted {
                #expect(submitted["item"]?["content"]?["source"]?["kind"] == "http", "\(submitted)")
                #expect(submitted["item"]?["content"]?["quote"]?["close"] == 81.9)
            } else {
                #expect(submitted["item"] == nil, "\(submitted)")
                #expect(submitted["fieldErrors"]?["symbol"]?.stringValue?.contains("network permission") == true, "\(submitted)")
            }
            _ = try client.shutdown()
        }
    }

    // MARK: Helpers

    private func runHost(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        return try runCommand(BuildProducts.hostExecutable, arguments, environment: env)
    }

    private func runCommand(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
