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

    public init() {}

    /// `timeout` capped by `maximumCallTimeout`, in milliseconds.
    package func cappedMilliseconds(_ timeout: Duration) -> Int {
        min(timeout, maximumCallTimeout).milliseconds
    }
}
