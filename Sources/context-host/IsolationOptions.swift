import ArgumentParser
import ContextHost

/// Options for where providers run and how worker processes are supervised (docs/security.md).
struct IsolationOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Where providers run: 'manifest' honours each manifest's isolation (default), 'process' forces every provider into a worker process, 'in-process' loads every provider into the host (trusted deployments only).",
        valueName: "policy"))
    var isolation: String = IsolationConfiguration.Policy.manifest.rawValue

    @Option(help: ArgumentHelp("The longest any provider call may take, in seconds, whatever its manifest says.", valueName: "seconds"))
    var maxCallTimeout: Double = 60

    @Option(help: ArgumentHelp(
        "How long a worker has to stop a timed-out or cancelled request, in milliseconds, before it is killed and restarted.",
        valueName: "ms"))
    var cancelGrace: Int = 1000

    @Option(help: ArgumentHelp("Crashes within --crash-window that quarantine a process-isolated provider.", valueName: "count"))
    var maxCrashes: Int = 3

    @Option(help: ArgumentHelp("The window for --max-crashes, in seconds.", valueName: "seconds"))
    var crashWindow: Int = 300

    @Option(help: ArgumentHelp("A cap on each worker's heap, in MiB (0: none).", valueName: "MiB"))
    var workerMemoryLimit: Int = 1024

    func validate() throws {
        guard IsolationConfiguration.Policy(rawValue: isolation) != nil else {
            throw ValidationError("--isolation must be one of manifest, process, in-process (got '\(isolation)').")
        }
        guard maxCallTimeout > 0 else { throw ValidationError("--max-call-timeout must be more than 0 seconds.") }
        guard cancelGrace > 0 else { throw ValidationError("--cancel-grace must be more than 0 ms.") }
        guard maxCrashes >= 1 else { throw ValidationError("--max-crashes must be at least 1.") }
        guard crashWindow >= 1 else { throw ValidationError("--crash-window must be at least 1 second.") }
        guard workerMemoryLimit == 0 || workerMemoryLimit >= 64 else {
            throw ValidationError("--worker-memory-limit must be 0 (no cap) or at least 64 MiB.")
        }
    }

    /// Applies these options to a host configuration.
    func apply(to configuration: inout HostConfiguration) {
        configuration.isolation.policy = IsolationConfiguration.Policy(rawValue: isolation) ?? .manifest
        configuration.isolation.maximumCallTimeout = .milliseconds(Int64(maxCallTimeout * 1000))
        configuration.isolation.cancelGrace = .milliseconds(cancelGrace)
        configuration.isolation.maximumCrashes = maxCrashes
        configuration.isolation.crashWindow = .seconds(crashWindow)
        configuration.isolation.workerMemoryLimit = workerMemoryLimit == 0 ? nil : workerMemoryLimit << 20
    }
}
