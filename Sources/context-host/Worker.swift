import ArgumentParser
import ContextHost

extension ContextHostCommand {
    /// `worker`: runs one provider library for a host that isolates it in this process. Started by
    /// the host; not for people (hidden). Frames on stdin/stdout are described in
    /// Sources/ContextHost/Isolation/WorkerFraming.swift.
    struct Worker: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run one provider library for a host (internal; started by context-host).",
            shouldDisplay: false)

        @Option(help: ArgumentHelp("The provider library to load.", valueName: "path"))
        var library: String

        @Option(help: ArgumentHelp("The manifest's sha256 pin, checked on the bytes loaded.", valueName: "hex"))
        var sha256: String?

        @Option(help: ArgumentHelp("The host's pid; the worker exits if its parent is not that process.", valueName: "pid"))
        var parentPid: Int32?

        @Option(help: ArgumentHelp("A cap on the worker's heap, in bytes.", valueName: "bytes"))
        var memoryLimit: Int?

        @Option(help: ArgumentHelp("The provider id (shown in process listings and logs).", valueName: "id"))
        var providerId: String?

        @Option(help: ArgumentHelp("The manifest's runtime (native, swift-static, 'swift-dynamic VERSION'), checked before loading.", valueName: "runtime"))
        var runtime: String?

        @Flag(help: "Load the library even if its path goes through a symbolic link (the host's --allow-outside-library-paths).")
        var allowOutsideLibraryPaths = false

        @Option(help: ArgumentHelp("The sandbox policy: required, best-effort or off.", valueName: "policy"))
        var sandbox: String = "off"

        @Option(help: ArgumentHelp("A path the provider may read (repeatable).", valueName: "path"))
        var sandboxRead: [String] = []

        @Option(help: ArgumentHelp("A folder the provider may write (repeatable).", valueName: "path"))
        var sandboxWrite: [String] = []

        @Option(help: ArgumentHelp("The provider's private read-write folder.", valueName: "dir"))
        var dataDir: String?

        @Flag(help: "The network permission was granted.")
        var allowNetwork = false

        @Flag(help: "The exec permission was granted.")
        var allowExec = false

        @Option(help: ArgumentHelp("The descriptor to send host requests (host/fetch) on, instead of stdout.", valueName: "fd"))
        var hostRequestsFd: Int32?

        @Option(help: ArgumentHelp("Sandbox layers to leave out (tests).", valueName: "list"))
        var sandboxDisable: String?

        @Option(help: ArgumentHelp("Address space, tasks, files, file size.", valueName: "AS,TASKS,FILES,FSIZE"))
        var sandboxLimits: String?

        /// The invocation these options describe (the host writes them as `WorkerInvocation.arguments`).
        var invocation: WorkerInvocation {
            var invocation = WorkerInvocation(libraryPath: library)
            invocation.sha256 = sha256
            invocation.parentPID = parentPid
            invocation.memoryLimit = memoryLimit
            invocation.providerID = providerId
            invocation.runtime = runtime
            invocation.allowOutsideLibraryPaths = allowOutsideLibraryPaths
            invocation.hostRequestsFD = hostRequestsFd
            if let policy = IsolationConfiguration.SandboxPolicy(rawValue: sandbox), policy != .off {
                var options = WorkerSandboxOptions()
                options.policy = policy
                options.readPaths = sandboxRead
                options.writePaths = sandboxWrite
                options.dataDirectory = dataDir
                options.allowNetwork = allowNetwork
                options.allowExec = allowExec
                options.disabledLayers = sandboxDisable ?? ""
                if let sandboxLimits { _ = options.parseLimits(sandboxLimits) }
                invocation.sandbox = options
            }
            return invocation
        }

        func run() throws {
            invocation.run()
        }
    }
}

extension ContextHostCommand.Worker {
    /// The exact argument list the host writes when it starts a worker (`WorkerInvocation`), read
    /// without ArgumentParser: its first parse resolves protocol conformances by reflection, about
    /// 2 ms of every worker's start-up. Anything else (help, a typo, a missing value) returns nil
    /// and goes through ArgumentParser, which explains the problem.
    static func fastInvocation(_ arguments: ArraySlice<String>) -> WorkerInvocation? {
        guard arguments.first == "worker" else { return nil }
        return WorkerInvocation(parsing: arguments.dropFirst())
    }
}
