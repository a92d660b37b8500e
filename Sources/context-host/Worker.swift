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
