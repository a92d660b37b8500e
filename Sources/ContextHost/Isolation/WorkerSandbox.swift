import CHostSupport
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a worker's sandbox enforces, layer by layer (docs/security.md, "Sandbox").
///
/// Shown per provider in `providers/list` (`sandbox: {policy, enforced: [...], missing: [{layer,
/// reason}]}`) and by `context-host list`.
package struct SandboxReport: Sendable, Equatable {
    package struct Missing: Sendable, Equatable {
        package var layer: String
        package var reason: String
    }

    package var policy: String
    package var enforced: [String] = []
    package var missing: [Missing] = []

    package init(policy: String, enforced: [String] = [], missing: [Missing] = []) {
        self.policy = policy
        self.enforced = enforced
        self.missing = missing
    }

    package var json: JSONValue {
        [
            "policy": .string(policy),
            "enforced": .array(enforced.map(JSONValue.string)),
            "missing": .array(missing.map { ["layer": .string($0.layer), "reason": .string($0.reason)] }),
        ]
    }

    package init?(json: JSONValue?) {
        guard let json, let policy = json["policy"]?.stringValue else { return nil }
        self.policy = policy
        enforced = json["enforced"]?.arrayValue?.compactMap(\.stringValue) ?? []
        missing = json["missing"]?.arrayValue?.compactMap { entry in
            guard let layer = entry["layer"]?.stringValue else { return nil }
            return Missing(layer: layer, reason: entry["reason"]?.stringValue ?? "")
        } ?? []
    }

    /// One line for people: "enforced: a, b; missing: c (why)".
    package var summary: String {
        var parts: [String] = []
        if !enforced.isEmpty { parts.append("enforced: " + enforced.joined(separator: ", ")) }
        if !missing.isEmpty { parts.append("missing: " + missing.map { "\($0.layer) (\($0.reason))" }.joined(separator: "; ")) }
        return parts.isEmpty ? "none" : parts.joined(separator: "; ")
    }

    mutating func add(_ c: ctxh_sandbox_report) {
        var copy = c
        withUnsafeBytes(of: &copy.layers) { raw in
            let layers = raw.bindMemory(to: ctxh_sandbox_layer.self)
            for index in 0..<Int(c.count) where index < layers.count {
                var layer = layers[index]
                let name = withUnsafeBytes(of: &layer.name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                let reason = withUnsafeBytes(of: &layer.reason) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                if layer.enforced != 0 { enforced.append(name) } else { missing.append(Missing(layer: name, reason: reason)) }
            }
        }
    }
}

/// The sandbox options the host passes to `context-host worker` (`--sandbox MODE`,
/// `--sandbox-read PATH`…, `--data-dir PATH`, `--allow-network`, `--allow-exec`).
public struct WorkerSandboxOptions: Sendable {
    /// `required` or `best-effort` (`off` runs no sandbox).
    public var policy: IsolationConfiguration.SandboxPolicy = .bestEffort
    /// Extra read-only paths (what the provider's `type: path` settings name).
    public var readPaths: [String] = []
    /// Extra read-write folders (`path` settings with `access: write`).
    public var writePaths: [String] = []
    /// The provider's private read-write folder.
    public var dataDirectory: String?
    /// The `network` permission was granted: inet sockets and TCP allowed, no network namespace.
    public var allowNetwork = false
    /// The `exec` permission was declared and granted: new processes and execve allowed.
    public var allowExec = false
    /// Layers left out on purpose (tests: `CONTEXT_HOST_SANDBOX_DISABLE`, comma-separated).
    public var disabledLayers = ""
    /// RLIMIT_AS, in bytes (0: none).
    public var addressSpaceLimit = 0
    /// Tasks (threads + processes) of the worker.
    public var taskLimit = 128
    /// RLIMIT_NOFILE.
    public var fileLimit = 1024
    /// RLIMIT_FSIZE, in bytes.
    public var fileSizeLimit = 1 << 30

    public init() {}

    /// Whether `layer` is turned off (`disabledLayers` names it, or `all`), as `sandbox.c` reads it.
    package func isDisabled(_ layer: String) -> Bool {
        disabledLayers.split(separator: ",").contains { $0 == layer || $0 == "all" }
    }

    /// The worker's command-line arguments for these options.
    package var arguments: [String] {
        var result = ["--sandbox", policy.rawValue]
        for path in readPaths { result += ["--sandbox-read", path] }
        for path in writePaths { result += ["--sandbox-write", path] }
        if let dataDirectory { result += ["--data-dir", dataDirectory] }
        if allowNetwork { result.append("--allow-network") }
        if allowExec { result.append("--allow-exec") }
        if !disabledLayers.isEmpty { result += ["--sandbox-disable", disabledLayers] }
        result += ["--sandbox-limits", "\(addressSpaceLimit),\(taskLimit),\(fileLimit),\(fileSizeLimit)"]
        return result
    }

    /// Reads `--sandbox-limits AS,TASKS,FILES,FSIZE`; false if malformed.
    public mutating func parseLimits(_ text: String) -> Bool {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let values = parts.compactMap { Int($0) }.filter { $0 >= 0 }
        guard parts.count == 4, values.count == 4 else { return false }
        addressSpaceLimit = values[0]
        taskLimit = values[1]
        fileLimit = values[2]
        fileSizeLimit = values[3]
        return true
    }
}

/// The worker side of the sandbox: called by `WorkerMain` before the provider's library is loaded.
enum WorkerSandbox {
    /// Step 1, first thing in the worker while it is single-threaded: the task cap and the
    /// namespaces (the process forks; see `ctxh_sandbox_enter_namespaces`).
    static func enterNamespaces(_ options: WorkerSandboxOptions, report: inout SandboxReport) {
        var c = ctxh_sandbox_report()
        options.disabledLayers.withCString { disabled in
            ctxh_sandbox_limit_tasks(UInt64(options.taskLimit), disabled, &c)
            ctxh_sandbox_enter_namespaces(options.allowNetwork ? 0 : 1, disabled, &c)
        }
        report.add(c)
    }

    /// Step 2, after the init JSON is read: limits, no-new-privs, capabilities, Landlock, seccomp.
    static func confine(_ options: WorkerSandboxOptions, libraryPath: String, pinned: Bool, report: inout SandboxReport) {
        var read = systemReadPaths(allowNetwork: options.allowNetwork, allowExec: options.allowExec)
        read.append(libraryPath)
        if !pinned, let slash = libraryPath.lastIndex(of: "/") {
            // An unpinned library is loaded by path, so `$ORIGIN` dependencies next to it resolve.
            read.append(String(libraryPath[..<slash]))
        }
        read += runtimeDirectories()
        read += options.readPaths
        // Runtimes read /proc/<thread id>/stat by that path (not under /proc/self), so the worker
        // reads /proc. With its own PID namespace and /proc mount that /proc shows only its own
        // processes; without them it is the system's (other processes of this user included: the
        // mount-namespace layer is then reported missing).
        read.append("/proc")
        var write = ["/dev/null", "/dev/zero"] + options.writePaths
        if let data = options.dataDirectory {
            _ = Directories.makePrivate(data + "/tmp")
            write.append(data)
        }
        var c = ctxh_sandbox_report()
        withCStrings(read) { readPointers in
            withCStrings(write) { writePointers in
                options.disabledLayers.withCString { disabled in
                    var policy = ctxh_sandbox_policy()
                    policy.read_paths = readPointers.baseAddress
                    policy.read_count = Int32(readPointers.count)
                    policy.write_paths = writePointers.baseAddress
                    policy.write_count = Int32(writePointers.count)
                    policy.allow_network = options.allowNetwork ? 1 : 0
                    policy.allow_exec = options.allowExec ? 1 : 0
                    policy.address_space_limit = UInt64(options.addressSpaceLimit)
                    policy.task_limit = 0  // set by ctxh_sandbox_limit_tasks
                    policy.file_limit = UInt64(options.fileLimit)
                    policy.file_size_limit = UInt64(options.fileSizeLimit)
                    policy.disabled = disabled
                    ctxh_sandbox_apply(&policy, &c)
                }
            }
        }
        report.add(c)
        checkEnvironment(options, report: &report)
    }

    /// Whether a sandboxed worker's environment may hold variable `name`: what the host passes
    /// through (`LANG`, `LC_*`, `TZ`, `PATH`, `SWIFT_BACKTRACE`) and what it sets (`HOME`,
    /// `TMPDIR`, `MALLOC_ARENA_MAX`); `WorkerProcess.scrubbedEnvironment` builds it.
    static func isAllowedVariable<S: StringProtocol>(_ name: S) -> Bool {
        name == "LANG" || name.hasPrefix("LC_") || name == "TZ" || name == "PATH" || name == "SWIFT_BACKTRACE"
            || name == "HOME" || name == "TMPDIR" || name == "MALLOC_ARENA_MAX"
    }

    /// The `environment` layer, checked from inside: enforced only when every variable this
    /// process holds is on the allow-list (the host scrubs it; this proves the scrub happened).
    static func checkEnvironment(_ options: WorkerSandboxOptions, report: inout SandboxReport) {
        if options.isDisabled("environment") {
            report.missing.append(.init(layer: "environment", reason: "turned off by CONTEXT_HOST_SANDBOX_DISABLE (tests only)"))
            return
        }
        var outside: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            let name = text.prefix { $0 != "=" }
            if !isAllowedVariable(name) { outside.append(String(name)) }
            pointer += 1
        }
        if outside.isEmpty {
            report.enforced.append("environment")
        } else {
            report.missing.append(.init(
                layer: "environment",
                reason: "the worker's environment holds variables outside the allow-list: " + outside.prefix(8).joined(separator: ", ")
                    + (outside.count > 8 ? " and \(outside.count - 8) more" : "")))
        }
    }

    /// What any worker reads: the dynamic loader's files, system libraries, time-zone and locale
    /// data and the CPU list (and `/proc`, added by `confine`).
    static func systemReadPaths(allowNetwork: Bool, allowExec: Bool) -> [String] {
        var paths = [
            "/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib",
            "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
            "/usr/share/zoneinfo", "/etc/localtime", "/etc/timezone", "/usr/share/locale", "/usr/share/i18n",
            "/etc/locale.alias", "/etc/os-release", "/dev/urandom", "/dev/random",
            "/sys/devices/system/cpu",
        ]
        if allowNetwork {
            paths += ["/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/services", "/etc/host.conf", "/etc/ssl", "/usr/share/ca-certificates"]
        }
        if allowExec {
            paths += ["/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/libexec", "/usr/local/bin"]
        }
        return paths
    }

    /// The folders of the shared libraries this process has mapped (the Swift runtime under the
    /// toolchain, for example), so a provider's `dlopen` finds the same ones. The executable's own
    /// folder is left out.
    static func runtimeDirectories() -> [String] {
        guard let bytes = try? FileBytes.read("/proc/self/maps") else { return [] }
        let executable = executablePath()
        var folders: [String] = []
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            guard let slash = line.firstIndex(of: UInt8(ascii: "/")) else { continue }
            let path = String(decoding: line[slash...], as: UTF8.self)
            guard path.contains(".so"), path != executable, let last = path.lastIndex(of: "/") else { continue }
            let folder = String(path[..<last])
            if !folder.isEmpty, !folders.contains(folder) { folders.append(folder) }
        }
        return folders
    }

    private static func executablePath() -> String? { RunningExecutable.path }

    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> T) -> T {
        let owned = strings.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let pointers = owned.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer(body)
    }
}
