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

        @Option(help: ArgumentHelp("Sandbox layers to leave out (tests).", valueName: "list"))
        var sandboxDisable: String?

        @Option(help: ArgumentHelp("Address space, tasks, files, file size.", valueName: "AS,TASKS,FILES,FSIZE"))
        var sandboxLimits: String?

        /// The sandbox options, or nil when off.
        var sandboxOptions: WorkerSandboxOptions? {
            guard let policy = IsolationConfiguration.SandboxPolicy(rawValue: sandbox), policy != .off else { return nil }
            var options = WorkerSandboxOptions()
            options.policy = policy
            options.readPaths = sandboxRead
            options.writePaths = sandboxWrite
            options.dataDirectory = dataDir
            options.allowNetwork = allowNetwork
            options.allowExec = allowExec
            options.disabledLayers = sandboxDisable ?? ""
            if let sandboxLimits { _ = options.parseLimits(sandboxLimits) }
            return options
        }

        func run() throws {
            WorkerMain.run(
                libraryPath: library, sha256: sha256, parentPID: parentPid, memoryLimit: memoryLimit,
                confined: !allowOutsideLibraryPaths, sandbox: sandboxOptions, runtime: runtime)
        }
    }
}

extension ContextHostCommand.Worker {
    /// Parses the exact argument list the host writes when it starts a worker (`worker --library
    /// PATH --parent-pid PID --provider-id ID [--sha256 HEX] [--allow-outside-library-paths]
    /// [--memory-limit BYTES]`, options in any order), without ArgumentParser: its first parse
    /// resolves protocol conformances by reflection, about 2 ms of every worker's start-up.
    /// Anything else (help, a typo, a missing value) returns nil and goes through ArgumentParser,
    /// which explains the problem.
    static func fastParse(_ arguments: ArraySlice<String>) -> Self? {
        guard arguments.first == "worker" else { return nil }
        // Every property is set: an ArgumentParser property that was neither parsed nor assigned
        // cannot be read.
        var worker = Self()
        worker.sha256 = nil
        worker.parentPid = nil
        worker.memoryLimit = nil
        worker.providerId = nil
        worker.runtime = nil
        worker.allowOutsideLibraryPaths = false
        worker.sandbox = "off"
        worker.sandboxRead = []
        worker.sandboxWrite = []
        worker.dataDir = nil
        worker.allowNetwork = false
        worker.allowExec = false
        worker.sandboxDisable = nil
        worker.sandboxLimits = nil
        var library: String?
        var rest = arguments.dropFirst()
        while let name = rest.popFirst() {
            switch name {
            case "--allow-outside-library-paths":
                worker.allowOutsideLibraryPaths = true
                continue
            case "--allow-network":
                worker.allowNetwork = true
                continue
            case "--allow-exec":
                worker.allowExec = true
                continue
            default:
                break
            }
            guard let value = rest.popFirst(), !value.hasPrefix("--") else { return nil }
            switch name {
            case "--library": library = value
            case "--sha256": worker.sha256 = value
            case "--provider-id": worker.providerId = value
            case "--runtime": worker.runtime = value
            case "--sandbox":
                guard IsolationConfiguration.SandboxPolicy(rawValue: value) != nil else { return nil }
                worker.sandbox = value
            case "--sandbox-read": worker.sandboxRead.append(value)
            case "--sandbox-write": worker.sandboxWrite.append(value)
            case "--data-dir": worker.dataDir = value
            case "--sandbox-disable": worker.sandboxDisable = value
            case "--sandbox-limits":
                var probe = WorkerSandboxOptions()
                guard probe.parseLimits(value) else { return nil }
                worker.sandboxLimits = value
            case "--parent-pid":
                guard let pid = Int32(value) else { return nil }
                worker.parentPid = pid
            case "--memory-limit":
                guard let bytes = Int(value) else { return nil }
                worker.memoryLimit = bytes
            default: return nil
            }
        }
        guard let library else { return nil }
        worker.library = library
        return worker
    }
}

