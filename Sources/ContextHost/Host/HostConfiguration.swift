import ContextProviderKit

/// How a host is set up: where manifests and libraries are, and its limits.
public struct HostConfiguration: Sendable {
    /// This host's version, matched against manifests' `availability.host` ranges.
    public static let hostVersion = "0.1.0"
    /// The newest client protocol version this host speaks (`ProtocolVersion.current`; it also
    /// speaks the older ones in `ProtocolVersion.supported`).
    public static let protocolVersion = ProtocolVersion.current

    /// Folders searched for `*.yaml` manifests, in order. Empty means
    /// `$CONTEXT_HOST_MANIFESTS` (colon-separated), else `./manifests`.
    public var manifestDirectories: [String]
    /// Extra folders searched for provider libraries, after each manifest's own folder.
    public var libraryDirectories: [String]
    /// The folder of the running executable: the last place libraries are searched, so
    /// `.build/<config>/` works with no flags.
    public var executableDirectory: String?
    /// Allow `library` paths that leave their folder (`..`, symlinks out). Off by default.
    public var allowOutsideLibraryPaths: Bool
    /// Largest protocol message accepted, in bytes.
    public var maximumMessageBytes: Int
    /// Size caps on provider results, per kind (chip, detail, form…; docs/security.md §6).
    public var outputLimits = OutputLimits()
    /// Limits on what a client may send and hold open (docs/security.md §6).
    public var inputLimits = InputLimits()
    /// Where providers run (in-process or worker processes) and how workers are supervised.
    public var isolation = IsolationConfiguration()
    /// Where drafts (composers) are saved so they survive a crash; nil keeps them in memory only.
    public var stateDirectory: String?
    /// Folder of the registry cache (`registry-<hash of the manifest folders>.cache`), which lets a
    /// start skip parsing manifests that did not change (docs/configuration.md); nil disables it.
    /// `context-host` defaults to `defaultRegistryCacheDirectory()`; embedders opt in.
    public var registryCacheDirectory: String?
    /// Watch the manifest folders and apply changes while serving (`providers/changed`).
    /// Off by default for embedders; `context-host serve` turns it on unless `--no-watch`.
    public var watchManifests: Bool = false
    /// The parsed `--config FILE` (per-provider priority, enabled, settings), if any.
    package var configFile: HostConfigFile?
    /// Per-provider choices made in code (settings, priority, enabled), by provider id: what a
    /// `--config` file's `providers:` entries say, for an app that has its own settings UI.
    public var providerOptions: [String: ProviderOptions] = [:]
    /// Where installed providers are (the lock file and the store, docs/packages.md); nil, the
    /// default for embedders, loads none. `PackageLocations.standard()` loads what the user
    /// installed with `context-host install`, as `context-host` does unless `--no-installed`.
    /// Installed providers are checked as at install (hashes pinned by the lock file) and run in
    /// workers unless trusted (`isolation`).
    public var packageLocations: PackageLocations?
    /// Where providers' secret settings are kept (`type: secret`; docs/security.md, "Secrets"):
    /// the host reads one only to inject it into a brokered request, and shows clients only
    /// whether each is set. nil (the default): no secrets; fetches that need one fail with
    /// `secret-not-set`.
    public var secrets: (any SecretStore)?
    /// What performs providers' `host/fetch` requests after the host's checks (allow-lists,
    /// addresses, secrets, redirects). nil (the default): providers' fetches fail with
    /// `broker-unavailable`. `context-host` gives `ContextNetwork.AsyncHTTPTransport`.
    public var fetcher: (any HTTPTransport)?

    public init(
        manifestDirectories: [String] = [],
        libraryDirectories: [String] = [],
        executableDirectory: String? = nil,
        allowOutsideLibraryPaths: Bool = false,
        maximumMessageBytes: Int = 16 << 20,
        stateDirectory: String? = nil
    ) {
        self.manifestDirectories = manifestDirectories
        self.libraryDirectories = libraryDirectories
        self.executableDirectory = executableDirectory
        self.allowOutsideLibraryPaths = allowOutsideLibraryPaths
        self.maximumMessageBytes = maximumMessageBytes
        self.stateDirectory = stateDirectory
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HostConfiguration {
    /// Resolves manifests' `library` fields: each manifest's folder, then `--library-path`
    /// folders, then the executable's folder.
    package func libraryResolver() -> LibraryResolver {
        LibraryResolver(
            searchDirectories: libraryDirectories + [executableDirectory].compactMap { $0 },
            allowOutsidePaths: allowOutsideLibraryPaths)
    }

    /// The registry cache file for the current manifest folders, or nil when the cache is off.
    package func registryCacheFile() -> String? {
        registryCacheFile(for: manifestSearchPaths())
    }

    /// The registry cache file for these manifest folders, or nil when the cache is off.
    package func registryCacheFile(for searchPaths: [ManifestSearchPath]) -> String? {
        guard let directory = registryCacheDirectory, !directory.isEmpty else { return nil }
        return directory + "/" + ManifestCache.fileName(folders: searchPaths.map(\.path))
    }

    /// The metadata cache file (what started workers' providers last said, beside the registry
    /// cache), or nil when the cache folder is off (the metadata cache is then in memory only).
    package func metadataCacheFile() -> String? {
        guard let directory = registryCacheDirectory, !directory.isEmpty else { return nil }
        return directory + "/" + ProviderMetadataCache.fileName(folders: manifestSearchPaths().map(\.path))
    }

    /// The manifest folders to search, with where each came from.
    package func manifestSearchPaths() -> [ManifestSearchPath] {
        var environment: [String: String] = [:]
        if let value = getenv(ManifestSearchPaths.environmentVariable) {
            environment[ManifestSearchPaths.environmentVariable] = String(cString: value)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let cwd = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "."
        return ManifestSearchPaths.resolve(cliDirectories: manifestDirectories, environment: environment, currentDirectory: cwd)
    }
}

extension HostConfiguration {
    /// The default state folder: `$XDG_STATE_HOME/context-host`, else `~/.local/state/context-host`.
    public static func defaultStateDirectory() -> String? {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/context-host"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        return home + "/.local/state/context-host"
    }

    /// The default registry cache folder: `$XDG_CACHE_HOME/context-host`, else
    /// `~/.cache/context-host`.
    public static func defaultRegistryCacheDirectory() -> String? {
        if let cache = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), cache.hasPrefix("/") {
            return cache + "/context-host"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        return home + "/.cache/context-host"
    }
}

/// A host configuration that cannot work as given, found when the host is made: for example a
/// manifests folder that does not exist (the host would list no providers and say nothing).
public struct HostConfigurationError: Error, Sendable, CustomStringConvertible {
    /// A stable code, as in manifest diagnostics (`directory-not-found`).
    public var code: String
    /// What is wrong, naming the value.
    public var message: String
    /// How to fix it.
    public var hint: String

    public init(code: String, message: String, hint: String) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    public var description: String { "\(message) [\(code)]; \(hint)" }
}
