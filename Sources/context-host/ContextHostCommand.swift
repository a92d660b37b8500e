import ArgumentParser
import ContextHost
import ContextNetwork
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `context-host`: hosts context providers for chat apps.
@main
struct ContextHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "context-host",
        abstract: "Hosts context providers for chat apps and serves them over JSON-RPC on stdin/stdout.",
        discussion: "Run with no subcommand to serve. See docs/protocol.md for the protocol.",
        version: HostConfiguration.hostVersion,
        subcommands: [
            Serve.self, List.self, Validate.self, Conformance.self, Compose.self, Gallery.self, New.self,
            PackageProvider.self, Keygen.self, Keys.self, Install.self, Upgrade.self, Rollback.self, Uninstall.self, GarbageCollect.self,
            Secrets.self,
            MCPServe.self, Worker.self, ConformanceProbe.self, ProtocolDocument.self,
        ],
        defaultSubcommand: Serve.self
    )

    /// Starts the command; a worker started by the host skips ArgumentParser (see
    /// `Worker.fastInvocation`), since six of them start with every host in process isolation.
    static func main() {
        if let worker = Worker.fastInvocation(CommandLine.arguments.dropFirst()) {
            worker.run()
        }
        if let serve = Serve.fastParse(CommandLine.arguments.dropFirst()) {
            do {
                try serve.run()
            } catch {
                exit(withError: error)
            }
            return
        }
        main(nil)
    }
}

extension ContextHostCommand.Serve {
    /// The default subcommand parsed on its own: the root parser would pick `serve` for these
    /// arguments anyway, and parsing `Serve` alone skips the rest of the command tree, about a
    /// quarter of the host's start-up instructions (every client spawns a host). `Serve` takes no
    /// positional arguments, so another subcommand's name, `help`, `--help` or `--version` makes
    /// this parse fail, as does a typo or a missing value: nil, and the root parser handles and
    /// explains them as before.
    static func fastParse(_ arguments: ArraySlice<String>) -> Self? {
        var arguments = arguments
        if arguments.first == "serve" { arguments = arguments.dropFirst() }
        return try? parseAsRoot(Array(arguments)) as? Self
    }
}

/// Options every subcommand that reads manifests shares.
struct HostOptions: ParsableArguments {
    @Option(name: .customLong("manifests"), help: ArgumentHelp(
        "A folder of provider manifests (repeatable). Default: $CONTEXT_HOST_MANIFESTS (colon-separated), else ./manifests.",
        valueName: "dir"))
    var manifestDirectories: [String] = []

    @OptionGroup var libraries: LibraryPathOptions

    @Option(help: ArgumentHelp("Largest protocol message accepted, in bytes.", valueName: "bytes"))
    var maxMessageBytes: Int = 16 << 20

    @Option(help: ArgumentHelp(
        "Folder where drafts are saved so they survive a crash. Default: $XDG_STATE_HOME/context-host, else ~/.local/state/context-host.",
        valueName: "dir"))
    var stateDir: String?

    @Flag(help: "Keep drafts in memory only and use no registry cache (nothing is written to disk).")
    var noState = false

    @Option(help: ArgumentHelp(
        "Folder of the registry cache, which lets a start skip parsing manifests that did not change; 'none' turns it off. Default: $CONTEXT_HOST_REGISTRY_CACHE, else $XDG_CACHE_HOME/context-host, else ~/.cache/context-host; none with --no-state.",
        valueName: "dir|none"))
    var registryCache: String?

    @Option(help: ArgumentHelp(
        "Most composers open at once (drafts restored at start count; docs/security.md §6).", valueName: "n"))
    var maxComposers: Int = InputLimits().maximumComposers

    @Option(help: ArgumentHelp("Log level on stderr: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: String = "notice"

    @Option(name: .customLong("config"), help: ArgumentHelp(
        "A host configuration file (YAML): per-provider priority, enabled, settings (docs/configuration.md). Default: none.",
        valueName: "file"))
    var configFile: String?

    @Flag(help: "Load no installed providers (those of `context-host install`), only the --manifests folders.")
    var noInstalled = false

    @OptionGroup var isolationOptions: IsolationOptions

    func validate() throws {
        guard maxMessageBytes >= 1024 else {
            throw ValidationError("--max-message-bytes must be at least 1024 (got \(maxMessageBytes)).")
        }
        guard maxComposers >= 1 else {
            throw ValidationError("--max-composers must be at least 1 (got \(maxComposers)).")
        }
        if let registryCache, registryCache.isEmpty {
            throw ValidationError("--registry-cache needs a folder, or 'none' to turn the cache off.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical (got '\(logLevel)').")
        }
    }

    /// The host configuration these options describe.
    func hostConfiguration() -> HostConfiguration {
        var configuration = HostConfiguration(
            manifestDirectories: manifestDirectories,
            libraryDirectories: libraries.directories,
            executableDirectory: Self.executableDirectory(),
            allowOutsideLibraryPaths: libraries.allowOutside,
            maximumMessageBytes: maxMessageBytes,
            stateDirectory: noState ? nil : (stateDir ?? HostConfiguration.defaultStateDirectory()))
        configuration.registryCacheDirectory = registryCacheDirectory()
        configuration.inputLimits.maximumComposers = maxComposers
        configuration.configFile = loadConfigFile()  // exits on a bad file
        configuration.packageLocations = noInstalled ? nil : PackageLocations.standard()
        isolationOptions.apply(to: &configuration)
        // Secrets (encrypted file store) and the HTTPS broker's transport (docs/security.md).
        if let directory = EncryptedSecretStore.defaultDirectory() {
            do {
                let backend = try EncryptedSecretStore.KeyBackend.fromEnvironment()
                configuration.secrets = EncryptedSecretStore(directory: directory, keyBackend: backend, logger: Logger(label: "context-host.secrets"))
            } catch {
                writeStandardError("context-host: \(error); providers' secrets are not injected.")
            }
        }
        do {
            configuration.fetcher = try AsyncHTTPTransport()
        } catch {
            writeStandardError("context-host: CONTEXT_HOST_EXTRA_CA_FILE cannot be read (\(error)); providers' fetches are refused.")
        }
        return configuration
    }

    /// Environment variable naming the registry cache folder (or `none`).
    static let registryCacheVariable = "CONTEXT_HOST_REGISTRY_CACHE"

    /// `--registry-cache`, else nothing with `--no-state`, else `$CONTEXT_HOST_REGISTRY_CACHE`,
    /// else the default folder; `none` turns the cache off.
    func registryCacheDirectory() -> String? {
        if let registryCache { return registryCache == "none" ? nil : registryCache }
        if noState { return nil }
        if let value = getenv(Self.registryCacheVariable).map({ String(cString: $0) }), !value.isEmpty {
            return value == "none" ? nil : value
        }
        return HostConfiguration.defaultRegistryCacheDirectory()
    }

    /// Sends logs to stderr at the chosen level.
    func bootstrapLogging() -> Logger {
        let level = Logger.Level(rawValue: logLevel) ?? .notice
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "context-host")
    }

    /// The folder of the running executable, so `.build/<config>/` libraries are found.
    static func executableDirectory() -> String? {
        RunningExecutable.directory
    }
}

/// Where provider libraries are found: `serve` and the commands that load providers as it does
/// (`conformance`), and what they pass on to a host they start.
struct LibraryPathOptions: ParsableArguments {
    @Option(name: .customLong("library-path"), help: ArgumentHelp(
        "A folder to search for provider libraries after each manifest's own folder (repeatable).", valueName: "dir"))
    var directories: [String] = []

    @Flag(name: .customLong("allow-outside-library-paths"), help: "Allow manifest 'library' paths that leave their folder ('..', symlinks out).")
    var allowOutside = false

    /// These options as arguments of a `serve` this command starts.
    var serveArguments: [String] {
        directories.flatMap { ["--library-path", $0] } + (allowOutside ? ["--allow-outside-library-paths"] : [])
    }
}

/// `--grant PERMISSION` (repeatable): what the commands that act as a chat app (`list`, `compose`,
/// `gallery`, `mcp`) grant the providers; a name that is no permission is refused.
struct GrantOptions: ParsableArguments {
    @Option(name: .customLong("grant"), help: ArgumentHelp(
        "A permission granted to the providers, as a chat app would (repeatable): \(ManifestPermission.known.map(\.rawValue).joined(separator: ", ")). Default: none; a provider that needs one it lacks is listed unavailable, with the reason.",
        valueName: "permission"))
    var permissions: [String] = []

    func validate() throws {
        let known = ManifestPermission.known.map(\.rawValue)
        for grant in permissions where !known.contains(grant) {
            throw ValidationError("--grant \(grant): not a permission; use one of \(known.joined(separator: ", ")).")
        }
    }
}

/// What `body` answers; when it throws, `label: error` on stderr and exit status 1.
func exitingOnError<T>(_ label: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        writeStandardError("\(label): \(error)")
        throw ExitCode(1)
    }
}

/// Writes a line to stderr (fd 2) without touching the C `stderr` global.
func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    if bytes.last != 0x0A { bytes.append(0x0A) }
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
