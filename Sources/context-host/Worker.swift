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

        @Flag(help: "Load the library even if its path goes through a symbolic link (the host's --allow-outside-library-paths).")
        var allowOutsideLibraryPaths = false

        func run() throws {
            WorkerMain.run(
                libraryPath: library, sha256: sha256, parentPID: parentPid, memoryLimit: memoryLimit,
                confined: !allowOutsideLibraryPaths)
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
        worker.allowOutsideLibraryPaths = false
        var library: String?
        var rest = arguments.dropFirst()
        while let name = rest.popFirst() {
            if name == "--allow-outside-library-paths" {
                worker.allowOutsideLibraryPaths = true
                continue
            }
            guard let value = rest.popFirst(), !value.hasPrefix("--") else { return nil }
            switch name {
            case "--library": library = value
            case "--sha256": worker.sha256 = value
            case "--provider-id": worker.providerId = value
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

