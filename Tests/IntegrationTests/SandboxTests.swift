import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The worker sandbox (issue 25): a hostile C provider (Tests/Fixtures/FixtureHostileProvider)
/// tries every escape, one per request, in a worker under `--sandbox required`, and each attempt
/// must be refused by the kernel, with the errno of the layer docs/security.md credits, while the
/// provider keeps answering its legitimate calls. Every probe also runs as a control in a worker
/// with `--sandbox off` (or with the one layer turned off), where it must succeed: a probe that
/// cannot escape there proves nothing. Probes aimed at another process target a victim this test
/// starts (a dumpable `sleep` holding a secret in its environment), which exists and is reachable
/// without the sandbox. The host runs as root in CI, so these also prove that root gains nothing
/// inside a worker.
@Suite("Sandbox", .serialized)
struct SandboxTests {
    static let sandboxManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-sandbox"
    static let bundledManifests = BuildProducts.packageRoot + "/manifests"
    static let hostile = "com.contexthost.hostile"
    /// A variable of the host's environment a sandboxed worker must not see.
    static let secretVariable = "CONTEXT_HOST_TEST_SECRET"
    static let secretValue = "hunter2-the-host-s-token"

    /// A host with the hostile provider in a worker, its folders in `folder`: under `--sandbox
    /// required` by default; `sandbox: "off"` is the control (an unconfined worker).
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
            sandbox: String = "required", extra: [String] = [], environment: [String: String] = [:],
            manifests: String = SandboxTests.sandboxManifests, providerID: String = SandboxTests.hostile, grant: [String] = []
        ) throws {
            self.providerID = providerID
            folder = try TemporaryDirectory()
            secret = try folder.write("home/secret.txt", "the user's secret")
            otherProviderSecret = try folder.write("data/providers/com.contexthost.other/token.txt", "another provider's token")
            // A TCP listener on 127.0.0.1 the provider must not reach (and reaches in the control).
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(fd >= 0, "socket: \(String(cString: strerror(errno)))")
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            try #require(bound == 0, "bind 127.0.0.1:0: \(String(cString: strerror(errno)))")
            try #require(listen(fd, 8) == 0, "listen: \(String(cString: strerror(errno)))")
            var name = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &name) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            try #require(named == 0 && name.sin_port != 0, "getsockname: \(String(cString: strerror(errno)))")
            listener = fd
            port = Int(UInt16(bigEndian: name.sin_port))
            var hostEnvironment = [SandboxTests.secretVariable: SandboxTests.secretValue]
            for (key, value) in environment { hostEnvironment[key] = value }
            let host = try HostProcess(
                arguments: [
                    "--manifests", manifests, "--state-dir", folder.path + "/state",
                    "--data-dir", folder.path + "/data", "--sandbox", sandbox, "--no-watch",
                ] + (sandbox == "off" ? ["--isolation", "process"] : []) + extra,
                environment: hostEnvironment)
            client = RPCClient(host: host)
            _ = try client.initialize(["clientInfo": ["name": "tests"], "grantedPermissions": .array(grant.map(JSONValue.string))])
            // A real composer draft in the state folder (the host removes files that are not drafts).
            let composer = try #require(try client.call("composer/open")["composerId"]?.stringValue)
            stateFile = folder.path + "/state/composers/" + composer + ".json"
            try #require(FileManager.default.fileExists(atPath: stateFile), "no draft at \(stateFile)")
        }

        deinit {
            close(listener)
            if client.host.process.isRunning { _ = try? client.shutdown() }
        }

        var hostPID: Int32 { client.host.process.processIdentifier }

        /// Runs one escape and returns the provider's account of it (the chip's subtitle).
        func attempt(_ escape: String, path: String = "", pid: Int32 = -1, count: Int = 0, timeout: Double = 10) throws -> String {
            let item: JSONValue = [
                "id": "5d2c6a1e-0000-4000-8000-000000000001", "providerId": .string(providerID), "type": "hostile",
                "displayName": "Hostile",
                "content": [
                    "escape": .string(escape), "pid": .number(Double(pid)), "path": .string(path), "port": .number(Double(port)),
                    "count": .number(Double(count)),
                ],
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

        /// The names of the layers its worker reports enforced.
        func enforcedLayers() throws -> Set<String> {
            Set(try entry()["sandbox"]?["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
    }

    /// A process the hostile provider aims at: a dumpable `sleep` of the same user (root in CI)
    /// with a secret in its environment and pipes on its standard descriptors. Without the
    /// sandbox a worker reads its environment, traces, signals it and writes into its pipes.
    final class Victim {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["3600"]
            process.environment = ["VICTIM_SECRET": "the victim's secret"]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        var pid: Int32 { process.processIdentifier }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()  // reaped even when already gone (`ChildProcess`)
        }
    }

    /// `escape` is refused with `errno` (its name, e.g. "EACCES": the layer that refused it),
    /// and the provider still answers its legitimate calls.
    private func expectRefused(
        _ setup: Setup, _ escape: String, path: String = "", pid: Int32 = -1, count: Int = 0, errno: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = try setup.attempt(escape, path: path, pid: pid, count: count)
        #expect(outcome.hasPrefix("refused:") && outcome.contains(": \(errno) ("), "\(escape) \(path): expected \(errno), got: \(outcome)", sourceLocation: sourceLocation)
        try setup.expectLegitimateCallsWork(sourceLocation: sourceLocation)
    }

    /// The control: `escape` succeeds (the fixture says "ESCAPED: …"). Returns what it said.
    @discardableResult
    private func expectEscapes(
        _ setup: Setup, _ escape: String, path: String = "", pid: Int32 = -1, count: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let outcome = try setup.attempt(escape, path: path, pid: pid, count: count)
        #expect(outcome.hasPrefix("ESCAPED: "), "control: \(escape) \(path) should succeed without the sandbox, got: \(outcome)", sourceLocation: sourceLocation)
        return outcome
    }

    /// A host whose hostile provider runs in a worker with no sandbox: the control.
    private func control(extra: [String] = [], grant: [String] = []) throws -> Setup {
        let setup = try Setup(sandbox: "off", extra: extra, grant: grant)
        try setup.expectLegitimateCallsWork()
        let entry = try setup.entry()
        #expect(entry["effectiveIsolation"] == "process", "\(entry)")
        #expect(entry["workerPid"]?.intValue != nil, "the control must run in a worker: \(entry)")
        return setup
    }

    static let allLayers = [
        "no-new-privs", "capabilities", "landlock-filesystem", "landlock-network", "landlock-scope", "seccomp",
        "pid-namespace", "mount-namespace", "network-namespace", "resource-limits", "task-limit", "environment", "cpu-watchdog",
    ]

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
        for layer in Self.allLayers {
            #expect(enforced.contains(layer), "\(layer) in \(enforced)")
        }
        try setup.expectLegitimateCallsWork()
        // The control: with `--sandbox off` no layer is claimed.
        let off = try control()
        let offSandbox = try off.entry()["sandbox"]
        #expect(offSandbox?["policy"] == "off" && offSandbox?["enforced"]?.arrayValue?.isEmpty == true, "\(String(describing: offSandbox))")
    }

    @Test("files: /etc/shadow, the user's files, another provider's folder, the state folder, manifests — EACCES (Landlock); read without it")
    func files() throws {
        let open = try control()
        let setup = try Setup()
        // The control reads the same kind of file (its own host's copy for per-host paths).
        for (path, controlPath) in [
            ("/etc/shadow", "/etc/shadow"), (setup.secret, open.secret), (setup.otherProviderSecret, open.otherProviderSecret),
            (setup.stateFile, open.stateFile), (Self.bundledManifests + "/note.yaml", Self.bundledManifests + "/note.yaml"),
        ] {
            try expectEscapes(open, "read-file", path: controlPath)
            try expectRefused(setup, "read-file", path: path, errno: "EACCES")
        }
        let outside = setup.folder.path + "/home/written.txt"
        try expectRefused(setup, "write-file", path: outside, errno: "EACCES")
        #expect(!FileManager.default.fileExists(atPath: outside))
        let controlOutside = open.folder.path + "/home/written.txt"
        try expectEscapes(open, "write-file", path: controlOutside)
        #expect(FileManager.default.fileExists(atPath: controlOutside))
        let own = try setup.attempt("write-own")
        #expect(own.hasPrefix("ok: wrote " + setup.folder.path + "/data/providers/" + Self.hostile + "/"), "\(own)")
    }

    @Test("network: TCP to 127.0.0.1 — EPERM (seccomp), then EACCES (Landlock), then ENETUNREACH (network namespace); netlink EPERM")
    func network() throws {
        let open = try control()
        try expectEscapes(open, "tcp-connect")
        try expectEscapes(open, "netlink")
        let setup = try Setup()
        try expectRefused(setup, "tcp-connect", errno: "EPERM")
        try expectRefused(setup, "netlink", errno: "EPERM")
        // Each layer behind seccomp refuses on its own.
        let noSeccomp = try Setup(sandbox: "best-effort", environment: ["CONTEXT_HOST_SANDBOX_DISABLE": "seccomp"])
        try expectRefused(noSeccomp, "tcp-connect", errno: "EACCES")
        #expect(try noSeccomp.enforcedLayers().contains("landlock-network"))
        #expect(try !noSeccomp.enforcedLayers().contains("seccomp"))
        let namespaceOnly = try Setup(sandbox: "best-effort", environment: ["CONTEXT_HOST_SANDBOX_DISABLE": "seccomp,landlock-network"])
        try expectRefused(namespaceOnly, "tcp-connect", errno: "ENETUNREACH")
        #expect(try namespaceOnly.enforcedLayers().contains("network-namespace"))
    }

    /// An abstract UNIX socket listening in the test's network namespace.
    private func abstractListener() throws -> (fd: Int32, name: String) {
        let name = "context-host-test-" + UUID().uuidString
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw[0] = 0
            for (index, byte) in bytes.enumerated() where index + 1 < raw.count { raw[index + 1] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        try #require(bound == 0, "bind @\(name): \(String(cString: strerror(errno)))")
        try #require(listen(fd, 8) == 0, "listen: \(String(cString: strerror(errno)))")
        return (fd, name)
    }

    @Test("abstract UNIX sockets: ECONNREFUSED (network namespace), EPERM (Landlock scope) with network granted; reached without them")
    func abstractSockets() throws {
        let (fd, name) = try abstractListener()
        defer { close(fd) }
        let open = try control()
        try expectEscapes(open, "abstract-unix", path: name)
        // Without `network`: the worker's network namespace has its own abstract names.
        let setup = try Setup()
        try expectRefused(setup, "abstract-unix", path: name, errno: "ECONNREFUSED")
        // With `network` declared and granted there is no network namespace: Landlock's scope refuses it.
        let networkID = "com.contexthost.hostile-network", networkManifests = Self.sandboxManifests + "-network"
        let networked = try Setup(manifests: networkManifests, providerID: networkID, grant: ["network"])
        _ = try networked.startedEntry()
        #expect(try !networked.enforcedLayers().contains("network-namespace"))
        #expect(try networked.enforcedLayers().contains("landlock-scope"))
        try expectRefused(networked, "abstract-unix", path: name, errno: "EPERM")
        // … and it is Landlock's scope: without it, the same worker reaches the socket.
        let unscoped = try Setup(
            sandbox: "best-effort", environment: ["CONTEXT_HOST_SANDBOX_DISABLE": "landlock-scope"],
            manifests: networkManifests, providerID: networkID, grant: ["network"])
        try expectEscapes(unscoped, "abstract-unix", path: name)
    }

    @Test("processes: fork + execve, a child left behind, 200 processes, unshare — EPERM (seccomp); all work without it")
    func processes() throws {
        let open = try control()
        try expectEscapes(open, "fork-exec")
        let left = try expectEscapes(open, "leave-child")
        // The control's child sleeps for an hour outside any namespace: end it.
        if let pid = Int32(left.split(separator: " ").last ?? "") { kill(pid, SIGKILL) }
        try expectEscapes(open, "processes")
        try expectEscapes(open, "unshare")
        let setup = try Setup()
        try expectRefused(setup, "fork-exec", errno: "EPERM")
        try expectRefused(setup, "leave-child", errno: "EPERM")
        try expectRefused(setup, "processes", errno: "EPERM")
        try expectRefused(setup, "unshare", errno: "EPERM")
    }

    @Test("another process: its /proc files, ptrace, signals, its pipes — ENOENT/EPERM/ESRCH (PID namespace, seccomp); then EACCES/EPERM (Landlock) without the namespace; all reached without the sandbox")
    func otherProcesses() throws {
        let victim = try Victim()
        let pid = victim.pid
        let open = try control()
        let environ = try expectEscapes(open, "proc-environ", pid: pid)
        #expect(environ.contains("/proc/\(pid)/environ"), "\(environ)")
        for escape in ["proc-cmdline", "proc-mem", "ptrace", "signal-host", "forge-response"] {
            try expectEscapes(open, escape, pid: pid)
        }
        // Sandboxed: the victim has no pid in the worker's PID namespace (its own /proc).
        let setup = try Setup()
        for escape in ["proc-environ", "proc-cmdline", "proc-mem", "forge-response"] {
            try expectRefused(setup, escape, pid: pid, errno: "ENOENT")
        }
        try expectRefused(setup, "ptrace", pid: pid, errno: "EPERM")
        try expectRefused(setup, "signal-host", pid: pid, errno: "ESRCH")
        // Without the namespaces the victim is visible; Landlock (ptrace and signal scope) and
        // seccomp still refuse. Its command line is readable then, as docs/security.md says.
        let visible = try Setup(sandbox: "best-effort", environment: ["CONTEXT_HOST_SANDBOX_DISABLE": "namespaces"])
        _ = try visible.startedEntry()
        #expect(try !visible.enforcedLayers().contains("pid-namespace"))
        #expect(try visible.enforcedLayers().isSuperset(of: ["landlock-scope", "seccomp", "landlock-filesystem"]))
        for escape in ["proc-environ", "proc-mem", "forge-response"] {
            try expectRefused(visible, escape, pid: pid, errno: "EACCES")
        }
        try expectRefused(visible, "ptrace", pid: pid, errno: "EPERM")
        try expectRefused(visible, "signal-host", pid: pid, errno: "EPERM")
        try expectEscapes(visible, "proc-cmdline", pid: pid)
        // Nothing forged reached the client: the next message is the answer to the next request.
        let list = try setup.client.call("providers/list")
        #expect(list["providers"] != nil)
        #expect(victim.process.isRunning)
    }

    @Test("resources: a 4 GiB MAP_SHARED mapping (ENOMEM, RLIMIT_AS) and 200 threads (EAGAIN, the task cap) are refused; both work without the sandbox")
    func resources() throws {
        let open = try control()
        try expectEscapes(open, "mmap-shared")
        let setup = try Setup()
        try expectRefused(setup, "mmap-shared", errno: "ENOMEM")
        // Threads: without the heap cap (--worker-memory-limit 0), which also stops thread stacks
        // near 127 × 8 MiB, so that the task cap is what refuses them.
        let uncapped = try control(extra: ["--worker-memory-limit", "0"])
        try expectEscapes(uncapped, "threads")
        let capped = try Setup(extra: ["--worker-memory-limit", "0"])
        let threads = try capped.attempt("threads")
        #expect(threads.hasPrefix("refused: thread ") && threads.contains(": EAGAIN ("), "\(threads)")
        try capped.expectLegitimateCallsWork()
    }

    @Test("limits: 2,000 open files (EMFILE at RLIMIT_NOFILE 1024) and a write past 1 GiB (EFBIG at RLIMIT_FSIZE); both work without the sandbox")
    func fileLimits() throws {
        // The control needs room for 2,000 descriptors: raise this process's soft limit (the
        // host and its workers inherit it) to the hard limit.
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        }
        try #require(limit.rlim_cur >= 4096, "the control needs RLIMIT_NOFILE >= 4096 (hard limit here: \(limit.rlim_max)); raise it (ulimit -Hn)")
        let open = try control()
        try expectEscapes(open, "open-files", count: 2000)
        try expectEscapes(open, "file-size")
        let setup = try Setup()
        let files = try setup.attempt("open-files", count: 2000)
        #expect(files.hasPrefix("refused: open #") && files.contains(": EMFILE ("), "\(files)")
        // Under 1024 descriptors in all: the worker's own plus the ones it opened.
        let opened = Int(files.dropFirst("refused: open #".count).prefix { $0.isNumber }) ?? 0
        #expect(opened > 900 && opened <= 1024, "\(files)")
        try expectRefused(setup, "file-size", errno: "EFBIG")
        try setup.expectLegitimateCallsWork()
    }

    @Test("environment: the host's variables are out of reach, the layer is reported from what the worker holds; with it off, the secret leaks")
    func environment() throws {
        let open = try control()
        let leaked = try expectEscapes(open, "getenv", path: Self.secretVariable)
        #expect(leaked == "ESCAPED: \(Self.secretVariable)=\(Self.secretValue)")

        let setup = try Setup()
        #expect(try setup.startedEntry()["sandbox"]?["enforced"]?.arrayValue?.contains("environment") == true)
        #expect(try setup.attempt("getenv", path: Self.secretVariable) == "refused: getenv: \(Self.secretVariable) is not set")
        let names = try setup.attempt("environ-names")
        #expect(names.hasPrefix("ok: "), "\(names)")
        let allowed: Set<String> = ["LANG", "TZ", "PATH", "SWIFT_BACKTRACE", "HOME", "TMPDIR", "MALLOC_ARENA_MAX"]
        for name in names.dropFirst(4).split(separator: ",") {
            #expect(allowed.contains(String(name)) || name.hasPrefix("LC_"), "\(name) is not on the allow-list: \(names)")
        }
        #expect(names.contains("HOME") && names.contains("TMPDIR"), "\(names)")

        // The layer turned off: reported missing (not claimed), and the secret reaches the worker.
        let environment = ["CONTEXT_HOST_SANDBOX_DISABLE": "environment"]
        let off = try Setup(sandbox: "best-effort", environment: environment)
        let sandbox = try #require(try off.startedEntry()["sandbox"])
        #expect(sandbox["enforced"]?.arrayValue?.contains("environment") == false, "\(sandbox)")
        #expect(sandbox["missing"]?.arrayValue?.contains { $0["layer"] == "environment" } == true, "\(sandbox)")
        try expectEscapes(off, "getenv", path: Self.secretVariable)
        // … and `--sandbox required` refuses to run it so.
        let required = try Setup(environment: environment)
        let refused = try required.attempt("none")
        #expect(refused.contains("sandbox-unavailable") && refused.contains("environment"), "\(refused)")
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
        try expectRefused(setup, "tcp-connect", errno: "EPERM")
        try expectRefused(setup, "read-file", path: "/etc/shadow", errno: "EACCES")
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
        let bestEffort = try Setup(sandbox: "best-effort", environment: environment)
        let sandbox = try #require(try bestEffort.startedEntry()["sandbox"])
        let missing = sandbox["missing"]?.arrayValue ?? []
        #expect(missing.count == 1)
        #expect(missing.first?["layer"] == "landlock-network")
        #expect(missing.first?["reason"]?.stringValue?.contains("CONTEXT_HOST_SANDBOX_DISABLE") == true)
        #expect(sandbox["enforced"]?.arrayValue?.contains("landlock-network") == false)
        // The other layers still refuse the connection (seccomp, the network namespace).
        try expectRefused(bestEffort, "tcp-connect", errno: "EPERM")

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

    @Test("a provider's raw socket works in its sandboxed worker only with the network permission")
    func rawNetworkPermission() throws {
        // (Stock Quote no longer opens sockets: its web sources go through the host's broker,
        // Tests/IntegrationTests/EgressTests.swift. The fetch fixture opens one itself.)
        let server = try LoopbackHTTPS()
        for declared in [true, false] {
            let folder = try TemporaryDirectory()
            try folder.write("manifests/fetch.yaml", TestManifest.yaml(
                id: "com.contexthost.fetch-fixture", library: "libFixtureFetchProvider.so", isolation: "process",
                collection: "programmatic", timeouts: "{ collect: 30s, preview: 10s, detail: 10s, encode: 10s }",
                permissions: declared ? "[network]" : "[]"))
            let host = try HostProcess(arguments: [
                "--manifests", folder.path + "/manifests", "--no-installed", "--no-state", "--data-dir", folder.path + "/data",
                "--sandbox", "required", "--no-watch",
            ])
            let client = RPCClient(host: host)
            _ = try client.initialize(["clientInfo": ["name": "tests"], "grantedPermissions": ["network"]])
            let item: JSONValue = [
                "id": "0d6f4b1e-0000-4000-8000-000000000001", "providerId": "com.contexthost.fetch-fixture", "type": "fetch",
                "displayName": "socket", "content": ["socket": "127.0.0.1", "port": .number(Double(server.port))],
                "createdAt": "2026-11-28T00:00:00Z",
            ]
            let described = try client.call("items/describe", ["item": item])
            let answer = try JSONValue(parsing: Array((described["text"]?.stringValue ?? "").utf8))
            let list = try client.call("providers/list")
            let entry = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fetch-fixture" })
            #expect(entry["effectiveIsolation"] == "process")
            #expect(entry["sandbox"]?["missing"]?.arrayValue?.isEmpty == true, "\(entry)")
            let enforced = entry["sandbox"]?["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(enforced.contains("network-namespace") == !declared)
            #expect(enforced.contains("landlock-network") == !declared)
            if declared {
                #expect(answer["socket"] == "ok", "\(answer)")
                #expect(entry["networkAccess"] == "raw")
            } else {
                #expect(answer["call"] == "socket", "\(answer)")
                #expect(answer["errno"]?.intValue == Int(EPERM), "\(answer)")
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
