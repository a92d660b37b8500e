#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where providers run and how the host supervises worker processes (docs/security.md).
public struct IsolationConfiguration: Sendable {
    /// Which isolation wins: the manifest's or the operator's.
    public enum Policy: String, Sendable, CaseIterable {
        /// Honour each manifest's `isolation` (the default). Manifests default to `process`.
        case manifest
        /// Run every provider in a worker process, whatever its manifest says.
        case process
        /// Run every provider in the host process (trusted deployments, platforms that cannot spawn).
        case inProcess = "in-process"
    }

    /// Whether workers are confined (docs/security.md, "Sandbox").
    public enum SandboxPolicy: String, Sendable, CaseIterable {
        /// Every layer must be in force; a provider whose worker cannot have them all is not started
        /// (`sandbox-unavailable`, naming each missing layer and why).
        case required
        /// Every layer the kernel offers; what is missing is reported per provider (the default).
        case bestEffort = "best-effort"
        /// No confinement: workers are only a crash boundary, with the host's environment.
        case off
    }

    /// The policy; default `.manifest`.
    public var policy: Policy = .manifest
    /// The longest any provider call may take, whatever the manifest asks (default 60 s).
    public var maximumCallTimeout: Duration = .seconds(60)
    /// How long a worker has to answer a request after its timeout or cancellation before it is
    /// considered hung, killed (SIGKILL) and restarted (default 1 s).
    public var cancelGrace: Duration = .seconds(1)
    /// How long a worker may take to load its library and open the provider (default 10 s).
    public var startTimeout: Duration = .seconds(10)
    /// Crashes within `crashWindow` that quarantine a provider (default 3 in 5 minutes).
    public var maximumCrashes: Int = 3
    public var crashWindow: Duration = .seconds(300)
    /// Restart delay after the first crash; doubles with each crash in the window, up to the maximum.
    public var initialBackoff: Duration = .milliseconds(100)
    public var maximumBackoff: Duration = .seconds(5)
    /// A cap on each worker's data segment (heap), in bytes (RLIMIT_DATA); nil = no cap.
    /// Default 1 GiB. A worker that leaks past it fails to allocate and crashes, and is restarted.
    public var workerMemoryLimit: Int? = 1 << 30
    /// The `context-host` executable run as `context-host worker`. nil: the running executable
    /// when it is `context-host`, else `context-host` in `HostConfiguration.executableDirectory`.
    public var workerExecutable: String?

    /// The worker sandbox policy; default `.bestEffort`.
    public var sandbox: SandboxPolicy = .bestEffort
    /// The host's data folder; each provider gets `providers/<id>` inside it, read-write (its only
    /// writable folder when sandboxed), passed as `dataDirectory` in the init JSON. nil: the
    /// default, `$XDG_DATA_HOME/context-host`, else `~/.local/share/context-host`.
    public var dataDirectory: String?
    /// Providers whose `isolation: in-process` is honoured besides the bundled ones (the host
    /// configuration's `trust:` list, provider ids).
    public var trustedProviders: Set<String> = []
    /// Manifest folders whose providers are trusted (the host's bundled manifests). nil: the
    /// `manifests` folder next to the executable's package (see `ProviderLauncher.isTrusted`).
    public var trustedManifestDirectories: [String]?
    /// CPU time a worker may burn while it owes no answer before it is killed and restarted
    /// (`cause: "cpu"`); nil: no watchdog. Default 5 s of CPU within one idle stretch.
    public var idleCPUBudget: Duration? = .seconds(5)
    /// Tasks (threads and processes) per sandboxed worker (pids cgroup as root, else RLIMIT_NPROC).
    public var workerTaskLimit: Int = 128
    /// Open descriptors per sandboxed worker (RLIMIT_NOFILE).
    public var workerFileLimit: Int = 1024
    /// Largest file a sandboxed worker may write, in bytes (RLIMIT_FSIZE).
    public var workerFileSizeLimit: Int = 1 << 30

    /// Start workers on the first request that needs their provider rather than at `initialize`
    /// (default true; `--eager-workers` turns it off, for comparison). docs/security.md §3.
    public var lazyWorkers: Bool = true
    /// How long a worker may have nothing in flight before it exits cleanly; it restarts on the
    /// next request. nil: never (`--worker-idle-timeout 0`). Default 60 s.
    public var workerIdleTimeout: Duration? = .seconds(60)
    /// How many workers may be starting at once; the others queue (start-up storms). Default: the
    /// number of cores, at least 2.
    public var maximumConcurrentStarts: Int = IsolationConfiguration.defaultConcurrentStarts

    /// The number of online cores, at least 2.
    public static var defaultConcurrentStarts: Int {
        max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    public init() {}

    /// The default data folder: `$XDG_DATA_HOME/context-host`, else `~/.local/share/context-host`.
    public static func defaultDataDirectory() -> String? {
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") {
            return data + "/context-host"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        return home + "/.local/share/context-host"
    }

    /// The private folder of provider `id`: `<data folder>/providers/<id>`.
    public func providerDataDirectory(_ id: String) -> String? {
        guard let root = dataDirectory ?? Self.defaultDataDirectory() else { return nil }
        return root + "/providers/" + id
    }
}

extension IsolationConfiguration {
    /// The first setting that cannot work, as the error an embedder sees when it makes a host
    /// (`invalid-setting`), rather than a load error per provider or a host that never starts a
    /// worker: a duration of 0 or less where one must pass, a negative memory cap, a count below
    /// its least. Large values are taken (durations and the memory cap saturate where they are
    /// converted); the command line's options are checked to narrower ranges before they get here.
    package func outOfRange() -> HostConfigurationError? {
        func duration(_ name: String, _ value: Duration?, zeroAllowed: Bool = false) -> HostConfigurationError? {
            guard let value, value < .zero || (value == .zero && !zeroAllowed) else { return nil }
            return Self.invalid(name, "\(value)", range: zeroAllowed ? "0 or more" : "more than 0")
        }
        func count(_ name: String, _ value: Int, atLeast minimum: Int) -> HostConfigurationError? {
            value >= minimum ? nil : Self.invalid(name, "\(value)", range: "at least \(minimum)")
        }
        let problems: [HostConfigurationError?] = [
            duration("maximumCallTimeout", maximumCallTimeout),
            duration("cancelGrace", cancelGrace),
            duration("startTimeout", startTimeout),
            duration("crashWindow", crashWindow),
            duration("initialBackoff", initialBackoff, zeroAllowed: true),
            duration("maximumBackoff", maximumBackoff, zeroAllowed: true),
            duration("idleCPUBudget", idleCPUBudget),
            duration("workerIdleTimeout", workerIdleTimeout),
            count("maximumCrashes", maximumCrashes, atLeast: 1),
            count("maximumConcurrentStarts", maximumConcurrentStarts, atLeast: 1),
            count("workerTaskLimit", workerTaskLimit, atLeast: 1),
            count("workerFileLimit", workerFileLimit, atLeast: 16),
            count("workerFileSizeLimit", workerFileSizeLimit, atLeast: 0),
            workerMemoryLimit.flatMap { count("workerMemoryLimit", $0, atLeast: 1) },
        ]
        return problems.lazy.compactMap { $0 }.first
    }

    private static func invalid(_ name: String, _ value: String, range: String) -> HostConfigurationError {
        HostConfigurationError(
            code: "invalid-setting", message: "IsolationConfiguration.\(name) is \(value); it must be \(range).",
            hint: "set HostConfiguration.isolation.\(name) to a value in that range, or to nil where the setting may be turned off.")
    }
}
