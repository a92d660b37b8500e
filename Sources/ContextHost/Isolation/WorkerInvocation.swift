#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a host starts `context-host worker` for one provider: the one place that writes the
/// worker's arguments (`WorkerConnection`) and reads them back (the worker's own start-up), so the
/// two cannot drift apart.
///
/// `arguments` is what follows `worker` on the command line; `init?(parsing:)` reads exactly that
/// list (options in any order) without ArgumentParser, whose first parse costs about 2 ms of every
/// worker's start-up. Anything else (help, a typo) is nil, and the CLI explains it.
public struct WorkerInvocation: Sendable {
    /// The provider library to load.
    public var libraryPath: String
    /// The manifest's sha256 pin, checked on the bytes loaded.
    public var sha256: String?
    /// The host's pid: the worker exits if its parent is not that process.
    public var parentPID: Int32?
    /// The provider id (process listings, logs).
    public var providerID: String?
    /// The manifest's runtime, checked before loading.
    public var runtime: String?
    /// Load the library even through a symbolic link (the host's `--allow-outside-library-paths`).
    public var allowOutsideLibraryPaths = false
    /// A cap on the worker's heap, in bytes.
    public var memoryLimit: Int?
    /// The sandbox; nil runs none.
    public var sandbox: WorkerSandboxOptions?
    /// The descriptor (3) the host reads the worker's host requests (`host/fetch`) from, on its
    /// HTTP event loop; nil: they go on stdout with the replies (docs/architecture.md, "Threads").
    public var hostRequestsFD: Int32?

    /// An invocation of `libraryPath` with nothing else set.
    public init(libraryPath: String) {
        self.libraryPath = libraryPath
    }

    /// The arguments after `worker`.
    public var arguments: [String] {
        var result = ["--library", libraryPath]
        if let parentPID { result += ["--parent-pid", String(parentPID)] }
        if let providerID { result += ["--provider-id", providerID] }
        if let sha256 { result += ["--sha256", sha256] }
        if let runtime { result += ["--runtime", runtime] }
        if allowOutsideLibraryPaths { result.append("--allow-outside-library-paths") }
        if let memoryLimit { result += ["--memory-limit", String(memoryLimit)] }
        if let hostRequestsFD { result += ["--host-requests-fd", String(hostRequestsFD)] }
        if let sandbox { result += sandbox.arguments }
        return result
    }

    /// Reads the arguments after `worker` as `arguments` writes them; nil for anything else.
    public init?(parsing arguments: some Sequence<String>) {
        var library: String?
        var sandbox = WorkerSandboxOptions()
        var sandboxed = false
        var parsed = WorkerInvocation(libraryPath: "")
        var rest = arguments.makeIterator()
        while let name = rest.next() {
            switch name {
            case "--allow-outside-library-paths": parsed.allowOutsideLibraryPaths = true; continue
            case "--allow-network": sandbox.allowNetwork = true; continue
            case "--allow-exec": sandbox.allowExec = true; continue
            default: break
            }
            guard let value = rest.next(), !value.hasPrefix("--") else { return nil }
            switch name {
            case "--library": library = value
            case "--sha256": parsed.sha256 = value
            case "--provider-id": parsed.providerID = value
            case "--runtime": parsed.runtime = value
            case "--parent-pid":
                guard let pid = Int32(value) else { return nil }
                parsed.parentPID = pid
            case "--memory-limit":
                guard let bytes = Int(value) else { return nil }
                parsed.memoryLimit = bytes
            case "--host-requests-fd":
                guard let fd = Int32(value), fd > 2 else { return nil }
                parsed.hostRequestsFD = fd
            case "--sandbox":
                guard let policy = IsolationConfiguration.SandboxPolicy(rawValue: value) else { return nil }
                sandbox.policy = policy
                sandboxed = policy != .off
            case "--sandbox-read": sandbox.readPaths.append(value)
            case "--sandbox-write": sandbox.writePaths.append(value)
            case "--data-dir": sandbox.dataDirectory = value
            case "--sandbox-disable": sandbox.disabledLayers = value
            case "--sandbox-limits":
                guard sandbox.parseLimits(value) else { return nil }
            default: return nil
            }
        }
        guard let library else { return nil }
        parsed.libraryPath = library
        parsed.sandbox = sandboxed ? sandbox : nil
        self = parsed
    }

    /// Runs the worker (`WorkerMain.run`); never returns.
    public func run() -> Never {
        WorkerMain.run(
            libraryPath: libraryPath, sha256: sha256, parentPID: parentPID, memoryLimit: memoryLimit,
            confined: !allowOutsideLibraryPaths, sandbox: sandbox, runtime: runtime, hostRequestsFD: hostRequestsFD)
    }
}
