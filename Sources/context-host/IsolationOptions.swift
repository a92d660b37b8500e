import ArgumentParser
import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4097)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(cString: buffer)
}

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

    @Option(help: ArgumentHelp(
        "Worker sandbox: 'required' refuses to start a provider whose worker cannot enforce every layer, 'best-effort' uses every layer the kernel offers and reports the rest (default), 'off' confines nothing.",
        valueName: "policy"))
    var sandbox: IsolationConfiguration.SandboxPolicy = .bestEffort

    @Option(help: ArgumentHelp(
        "The host's data folder; each provider gets providers/<id> in it, its only writable folder when sandboxed. Default: $XDG_DATA_HOME/context-host, else ~/.local/share/context-host.",
        valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp(
        "Trust this provider id (repeatable): its manifest's 'isolation: in-process' is honoured, as for the bundled providers and the configuration file's 'trust:' list.",
        valueName: "id"))
    var trust: [String] = []

    @Option(help: ArgumentHelp("CPU seconds a worker may use while it owes no answer before it is killed and restarted (0: no watchdog).", valueName: "seconds"))
    var workerIdleCpu: Double = 5

    @Option(help: ArgumentHelp(
        "Seconds a worker may have nothing in flight before it exits; the next request starts it again (0: never). Fractions allowed.",
        valueName: "seconds"))
    var workerIdleTimeout: Double = 60

    @Flag(help: "Start every worker at initialize, as before lazy workers (for comparison; default: on first use).")
    var eagerWorkers = false

    @Option(help: ArgumentHelp("Workers that may be starting at once; the others queue (default: the number of cores, at least 2).", valueName: "count"))
    var maxWorkerStarts: Int?

    func validate() throws {
        // Bounded before they become durations (`Int64(seconds * 1000)` traps beyond Int64's range).
        guard workerIdleTimeout >= 0, workerIdleTimeout <= Self.longestSeconds else {
            throw ValidationError("--worker-idle-timeout must be 0 (never) or a number of seconds up to \(Int(Self.longestSeconds)) (one year).")
        }
        if let maxWorkerStarts, maxWorkerStarts < 1 { throw ValidationError("--max-worker-starts must be at least 1.") }
        guard workerIdleCpu >= 0, workerIdleCpu <= Self.longestSeconds else {
            throw ValidationError("--worker-idle-cpu must be 0 (no watchdog) or a number of seconds up to \(Int(Self.longestSeconds)) (one year).")
        }
        guard IsolationConfiguration.Policy(rawValue: isolation) != nil else {
            throw ValidationError("--isolation must be one of manifest, process, in-process (got '\(isolation)').")
        }
        guard maxCallTimeout > 0, maxCallTimeout <= Self.longestSeconds else {
            throw ValidationError("--max-call-timeout must be more than 0 and at most \(Int(Self.longestSeconds)) seconds (one year).")
        }
        guard cancelGrace > 0, cancelGrace <= Int(Self.longestSeconds) * 1000 else {
            throw ValidationError("--cancel-grace must be more than 0 and at most \(Int(Self.longestSeconds) * 1000) ms (one year).")
        }
        guard maxCrashes >= 1 else { throw ValidationError("--max-crashes must be at least 1.") }
        guard crashWindow >= 1, crashWindow <= Int(Self.longestSeconds) else {
            throw ValidationError("--crash-window must be at least 1 and at most \(Int(Self.longestSeconds)) seconds (one year).")
        }
        guard workerMemoryLimit == 0 || (64...Self.largestMemoryLimit).contains(workerMemoryLimit) else {
            throw ValidationError("--worker-memory-limit must be 0 (no cap) or 64 to \(Self.largestMemoryLimit) MiB.")
        }
    }

    /// The longest duration any option takes: one year, in seconds.
    static let longestSeconds: Double = 86_400 * 365
    /// The largest `--worker-memory-limit`: 1 PiB in MiB (its bytes, plus the address space's
    /// extra GiB, fit in an `Int`).
    static let largestMemoryLimit = 1 << 30

    /// Applies these options to a host configuration.
    func apply(to configuration: inout HostConfiguration) {
        configuration.isolation.policy = IsolationConfiguration.Policy(rawValue: isolation) ?? .manifest
        configuration.isolation.maximumCallTimeout = .milliseconds(Int64(maxCallTimeout * 1000))
        configuration.isolation.cancelGrace = .milliseconds(cancelGrace)
        configuration.isolation.maximumCrashes = maxCrashes
        configuration.isolation.crashWindow = .seconds(crashWindow)
        configuration.isolation.workerMemoryLimit = workerMemoryLimit == 0 ? nil : workerMemoryLimit << 20
        configuration.isolation.sandbox = sandbox
        if let dataDir { configuration.isolation.dataDirectory = dataDir.hasPrefix("/") ? dataDir : currentDirectory() + "/" + dataDir }
        configuration.isolation.trustedProviders.formUnion(trust)
        configuration.isolation.idleCPUBudget = workerIdleCpu == 0 ? nil : .milliseconds(Int64(workerIdleCpu * 1000))
        configuration.isolation.workerIdleTimeout = workerIdleTimeout == 0 ? nil : .milliseconds(max(1, Int64(workerIdleTimeout * 1000)))
        configuration.isolation.lazyWorkers = !eagerWorkers
        if let maxWorkerStarts { configuration.isolation.maximumConcurrentStarts = maxWorkerStarts }
    }
}

/// `--sandbox required|best-effort|off`, parsed (and refused when it is none of them) by
/// ArgumentParser for every command that takes it.
extension IsolationConfiguration.SandboxPolicy: ExpressibleByArgument {}
