import ContextProviderKit
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a provider instance the way its manifest and the host policy ask.
package enum ProviderLauncher {
    /// A started provider and how it runs.
    package struct Launched: Sendable {
        package var connection: any ProviderConnection
        package var isolation: IsolationMode
        /// Why it runs where it does when that is not what its manifest asked (e.g. an untrusted
        /// provider's `isolation: in-process` overruled).
        package var isolationNote: String?
    }

    /// How a provider runs under this host's policy (`HostConfiguration.isolation.policy`).
    package static func isolation(for manifest: Manifest, configuration: HostConfiguration) -> IsolationMode {
        decide(manifest, configuration).mode
    }

    /// The isolation and, when the manifest was overruled, why.
    package static func decide(_ manifest: Manifest, _ configuration: HostConfiguration) -> (mode: IsolationMode, note: String?) {
        switch configuration.isolation.policy {
        case .manifest:
            if manifest.isolation == .inProcess, !isTrusted(manifest, configuration) {
                return (.process, "Its manifest asks for in-process, but only trusted providers (the bundled manifests folder, or the host configuration's 'trust:' list) run in the host; it runs in a sandboxed worker.")
            }
            return (manifest.isolation, nil)
        case .process: return (.process, nil)
        case .inProcess: return (.inProcess, nil)
        }
    }

    /// Whether the operator trusts the provider: listed in the configuration's `trust:` (or
    /// `IsolationConfiguration.trustedProviders`), or found in a trusted manifests folder (default:
    /// the bundled `manifests` folder of the package the executable was built in, or
    /// `<prefix>/share/context-host/manifests` for an installed host).
    package static func isTrusted(_ manifest: Manifest, _ configuration: HostConfiguration) -> Bool {
        if configuration.isolation.trustedProviders.contains(manifest.id) { return true }
        if configuration.configFile?.trust.contains(manifest.id) == true { return true }
        var folders = configuration.isolation.trustedManifestDirectories ?? []
        if configuration.isolation.trustedManifestDirectories == nil, let executable = configuration.executableDirectory {
            folders += [executable + "/../../manifests", executable + "/../share/context-host/manifests", executable + "/manifests"]
            // Built in a package (…/.build/<triple>/debug): that package's manifests folder.
            let parts = executable.split(separator: "/", omittingEmptySubsequences: false)
            if let build = parts.lastIndex(of: ".build") { folders.append(parts[..<build].joined(separator: "/") + "/manifests") }
        }
        let manifestFolder = ManifestFileSystem.directoryName(manifest.manifestPath)
        guard let canonicalManifestFolder = ManifestFileSystem.realPath(manifestFolder) else { return false }
        return folders.contains { ManifestFileSystem.realPath($0) == canonicalManifestFolder }
    }

    /// Loads the library and opens an instance with `context` (its init JSON): in this process, or
    /// in a supervised `context-host worker` process (`WorkerConnection`), sandboxed unless the
    /// policy is `off`. Sets `dataDirectory` (the provider's private folder, created here).
    ///
    /// - Parameters:
    ///   - lazyWorker: a worker starts on the first request rather than here (so its open errors
    ///     reach that request, not the caller).
    ///   - startLimiter: bounds how many workers start at once (the registry's); nil: a private one.
    ///   - calls: the host's call runtime, for an in-process provider; nil: a private one with the
    ///     configuration's message limit.
    package static func open(
        manifest: Manifest, libraryPath: String, context: ProviderContext, configuration: HostConfiguration, logger: Logger,
        lazyWorker: Bool = false, startLimiter: WorkerStartLimiter? = nil, calls: CallRuntime? = nil
    ) throws(LoadError) -> Launched {
        let decision = decide(manifest, configuration)
        var context = context
        let dataDirectory = configuration.isolation.providerDataDirectory(manifest.id)
        if let dataDirectory {
            if !Directories.makePrivate(dataDirectory) {
                logger.warning("Provider \(manifest.id): cannot create its data folder \(dataDirectory): \(String(cString: strerror(errno))).")
            }
            context.dataDirectory = dataDirectory
        }
        let bytes = context.initBytes
        switch decision.mode {
        case .process:
            let sandbox = sandboxOptions(manifest: manifest, context: context, dataDirectory: dataDirectory, configuration: configuration)
            let connection = try WorkerConnection(
                providerID: manifest.id, libraryPath: libraryPath, sha256: manifest.sha256,
                runtime: manifest.runtime.map(\.text), initJSON: bytes,
                configuration: configuration, logger: logger, sandbox: sandbox, lazy: lazyWorker, startLimiter: startLimiter,
                hostRequestStreams: hostRequestStreams(manifest: manifest, configuration: configuration))
            return Launched(connection: connection, isolation: .process, isolationNote: decision.note)
        case .inProcess:
            try checkRuntime(manifest.runtime, libraryPath: libraryPath)
            let library = try ProviderLibrary.load(path: libraryPath, sha256: manifest.sha256, confined: !configuration.allowOutsideLibraryPaths)
            let connection = try InProcessConnection(
                library: library, initJSON: bytes,
                runtime: calls ?? CallRuntime(maximumReplyBytes: configuration.maximumMessageBytes))
            return Launched(connection: connection, isolation: .inProcess, isolationNote: decision.note)
        }
    }

    /// Where a worker's host requests are read: for a provider that uses the broker (declares
    /// network origins) under a transport that reads streams (`context-host`'s), its own pipe
    /// read on its HTTP event loop; else nil (stdout, with its replies).
    static func hostRequestStreams(manifest: Manifest, configuration: HostConfiguration) -> (any HostRequestStreams)? {
        guard manifest.network?.origins.isEmpty == false else { return nil }
        return configuration.fetcher as? any HostRequestStreams
    }

    /// For a manifest that declares its `runtime` (every installed provider does): refuses a
    /// library that cannot run here (another platform, another Swift for `swift-dynamic`, a
    /// missing shared library, too old a glibc) with what, why and how to fix it, before it is
    /// mapped. Runs in the process that maps it: the host for in-process providers, the worker
    /// (before its sandbox closes) for the others, so a lazy worker's library is read only when
    /// it starts, never for `providers/list`.
    package static func checkRuntime(_ declared: ProviderRuntime?, libraryPath: String) throws(LoadError) {
        guard let declared else { return }
        let binary: ProviderBinary
        do {
            binary = try ProviderBinary.inspect(file: libraryPath)
        } catch {
            throw LoadError(code: error.code.rawValue, message: error.message, hint: error.fix)
        }
        if let mismatch = binary.runtimeProblem(declared: declared, name: libraryPath) {
            throw LoadError(code: mismatch.code.rawValue, message: mismatch.message, hint: mismatch.fix)
        }
        // A release build records no Swift version; `package` matched its toolchain to a Swift
        // version and the manifest says it (for an installed provider, pinned by the lock's hash).
        var checked = binary
        if case .swiftDynamic(let found) = binary.runtime, found == ProviderBinary.unknownSwiftVersion,
            case .swiftDynamic = declared
        {
            checked.runtime = declared
        }
        if let problem = checked.problems(on: HostRuntime.current, libraryPath: libraryPath).first {
            throw LoadError(code: problem.code.rawValue, message: problem.message, hint: problem.fix)
        }
    }

    /// The worker sandbox for this provider: `network` and `exec` when the manifest declares them
    /// and the client granted them (a grant never reaches a provider that did not ask for it), read access to what its `path` settings
    /// name, read-write access to its data folder. nil when the policy is `off`.
    package static func sandboxOptions(
        manifest: Manifest, context: ProviderContext, dataDirectory: String?, configuration: HostConfiguration
    ) -> WorkerSandboxOptions? {
        let isolation = configuration.isolation
        guard isolation.sandbox != .off else { return nil }
        var options = WorkerSandboxOptions()
        options.policy = isolation.sandbox
        let granted = context.grantedPermissions
        options.allowNetwork = granted.contains(ManifestPermission.network.rawValue) && manifest.availability.permissions.contains(.network)
        options.allowExec = granted.contains(ManifestPermission.exec.rawValue) && manifest.availability.permissions.contains(.exec)
        for setting in manifest.settings where setting.type == .path {
            guard let value = context.settings.values[setting.name]?.stringValue, value.hasPrefix("/") else { continue }
            if setting.isWritable {
                // A folder the provider writes (a cache): the host makes it, the worker may not.
                _ = Directories.makePrivate(value)
                options.writePaths.append(value)
            } else {
                options.readPaths.append(value)
            }
        }
        options.dataDirectory = dataDirectory
        if let disabled = getenv("CONTEXT_HOST_SANDBOX_DISABLE") { options.disabledLayers = String(cString: disabled) }
        // The address space counts every mapping (shared ones too, unlike the heap cap), plus what
        // the runtime reserves (thread stacks, allocator arenas, libraries): the heap cap + 1 GiB.
        options.addressSpaceLimit = isolation.workerMemoryLimit.map { limit in
            let (sum, overflow) = limit.addingReportingOverflow(1 << 30)
            return overflow ? .max : sum
        } ?? 0
        options.taskLimit = isolation.workerTaskLimit
        options.fileLimit = isolation.workerFileLimit
        options.fileSizeLimit = isolation.workerFileSizeLimit
        return options
    }
}
