import ContextProviderKit
import Dispatch
import Logging
import Synchronization

/// Why a provider cannot be offered right now: a stable code and a sentence for people.
package struct Unavailability: Sendable, Equatable {
    package var code: String
    package var message: String

    package static func platform(_ message: String) -> Self { Self(code: "platform", message: message) }
    package static func hostVersion(_ message: String) -> Self { Self(code: "host-version", message: message) }
    package static func permission(_ message: String) -> Self { Self(code: "permission", message: message) }
    package static func provider(_ message: String) -> Self { Self(code: "provider", message: message) }
    package static func loadFailed(_ message: String) -> Self { Self(code: "load-failed", message: message) }

    package var json: JSONValue { ["code": .string(code), "message": .string(message)] }
}

/// A provider the registry knows: its manifest, where it stands, and its live connection.
package struct ProviderEntry: Sendable {
    package enum Status: String, Sendable {
        /// Manifest valid, library not loaded yet.
        case discovered
        /// Loaded and opened.
        case loaded
        /// The manifest was rejected; see `diagnostics`.
        case rejected
        /// The library could not be loaded or opened; see `loadError`.
        case failed
        /// Hidden by the host configuration (`enabled: false`); never loaded.
        case disabled
        /// Its worker crashed too often; see `unavailability` and `providers/retry`
        /// (ProviderRegistry+Supervision.swift).
        case quarantined
    }

    package var manifestPath: String
    package var manifest: Manifest?
    package var status: Status
    package var diagnostics: [ManifestDiagnostic] = []
    package var loadError: LoadError?
    package var libraryPath: String?
    package var connection: (any ProviderConnection)?
    package var unavailability: Unavailability?
    /// How the provider actually runs, once loaded (host policy may differ from the manifest).
    package var effectiveIsolation: IsolationMode?
    /// What `unavailability` was before a quarantine replaced it (restored on recovery).
    package var unavailabilityBeforeQuarantine: Unavailability?
    /// The host configuration's `priority` for this provider, if it sets one (see `effectivePriority`).
    package var priorityOverride: Int?

    package var id: String? { manifest?.id }
    package var isAvailable: Bool { status == .loaded && unavailability == nil }
}

/// The set of providers: discovered from manifests, loaded, checked, and ordered.
package final class ProviderRegistry: Sendable {
    package let configuration: HostConfiguration
    let logger: Logger
    /// The entries; extensions (reload, supervision) change them by id or manifest path.
    let state: Mutex<[ProviderEntry]>
    /// Problems with the catalog itself (e.g. a manifest folder that does not exist).
    package let catalogProblems: [String]

    /// Discovers manifests; nothing is loaded until `load(client:)`.
    package init(configuration: HostConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let catalog = Self.discoverCatalog(configuration, logger: logger)
        var entries: [ProviderEntry] = []
        for entry in catalog.entries {
            switch entry {
            case .accepted(let manifest):
                entries.append(ProviderEntry(manifestPath: manifest.manifestPath, manifest: manifest, status: .discovered))
            case .rejected(let rejection):
                entries.append(ProviderEntry(manifestPath: rejection.path, manifest: nil, status: .rejected, diagnostics: rejection.diagnostics))
            }
        }
        for index in entries.indices { entries[index].applyHostConfiguration(configuration.configFile) }
        self.catalogProblems = catalog.diagnostics.map(\.description) + Self.configurationWarnings(configuration, catalog)
        self.state = Mutex(entries)
    }

    /// The manifests of the configured folders, through the registry cache when it is on.
    static func discoverCatalog(_ configuration: HostConfiguration, logger: Logger) -> ManifestCatalog {
        let searchPaths = configuration.manifestSearchPaths()
        guard let cacheFile = configuration.registryCacheFile(for: searchPaths) else {
            return ManifestCatalog.discover(searchPaths)
        }
        let (catalog, report) = ManifestCatalog.discover(searchPaths, cacheFile: cacheFile)
        if let reason = report.ignoredCache {
            logger.notice("Ignoring the registry cache \(cacheFile): \(reason); rebuilding it.")
        }
        if let reason = report.writeError {
            logger.warning("Could not save the registry cache: \(reason). Manifests will be parsed again on the next start.")
        }
        logger.debug(
            "Registry cache \(cacheFile): \(report.reused) manifest(s) reused, \(report.parsed) parsed\(report.written ? ", cache saved" : "").")
        return catalog
    }

    /// All entries: available and unavailable providers by priority (higher first, ties by title
    /// then id), then rejected manifests by path.
    package func entries(locale: String? = nil) -> [ProviderEntry] {
        let entries = state.withLock { $0 }
        return entries.sorted { lhs, rhs in
            switch (lhs.manifest, rhs.manifest) {
            case (let left?, let right?):
                if lhs.effectivePriority != rhs.effectivePriority { return lhs.effectivePriority > rhs.effectivePriority }
                let leftTitle = left.title.resolve(locale: locale)
                let rightTitle = right.title.resolve(locale: locale)
                if leftTitle != rightTitle { return leftTitle < rightTitle }
                return left.id < right.id
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return lhs.manifestPath < rhs.manifestPath
            }
        }
    }

    /// The entry for a provider id.
    package func entry(id: String) -> ProviderEntry? {
        state.withLock { entries in entries.first { $0.manifest?.id == id } }
    }

    /// Loads and opens every discovered provider and checks its availability for this client.
    ///
    /// Providers load side by side (up to `maximumParallelLoads` at once): most of a load is
    /// waiting — for a worker process to start, for an availability check — so start-up costs
    /// about the slowest provider rather than the sum of all.
    package func load(client: ClientInfo) {
        let work: [(index: Int, entry: ProviderEntry, manifest: Manifest)] = state.withLock { entries in
            entries.indices.compactMap { index in
                let entry = entries[index]
                guard entry.status == .discovered, let manifest = entry.manifest else { return nil }
                return (index, entry, manifest)
            }
        }
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<min(work.count, Self.maximumParallelLoads) {
            group.enter()
            startThread { [self] in
                while true {
                    let position = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard position < work.count else { break }
                    let item = work[position]
                    let loaded = load(item.entry, manifest: item.manifest, client: client)
                    state.withLock { $0[item.index] = loaded }
                }
                group.leave()
            }
        }
        group.wait()
    }

    /// How many providers load at the same time.
    static let maximumParallelLoads = 8

    func load(_ entry: ProviderEntry, manifest: Manifest, client: ClientInfo) -> ProviderEntry {
        var entry = entry
        // Conditions that need no library.
        let platform = ManifestPlatform.current
        if !manifest.availability.platforms.contains(platform) {
            entry.unavailability = .platform(
                "\(manifest.title) runs on \(manifest.availability.platforms.map(\.rawValue).joined(separator: ", ")), not \(platform.rawValue).")
            return entry
        }
        if let range = manifest.availability.host, let hostVersion = Version(HostConfiguration.hostVersion),
            !range.contains(hostVersion)
        {
            entry.unavailability = .hostVersion(
                "\(manifest.title) needs host \(range), but this host is \(HostConfiguration.hostVersion).")
            return entry
        }
        // Library.
        let resolver = configuration.libraryResolver()
        let path: String
        do {
            path = try resolver.resolve(manifest)
        } catch {
            entry.status = .failed
            entry.diagnostics = [error]
            entry.loadError = LoadError(code: error.code.rawValue, message: error.message, hint: error.hint)
            entry.unavailability = .loadFailed(error.message)
            return entry
        }
        entry.libraryPath = path
        do throws(LoadError) {
            let settings: JSONObject
            do {
                settings = try configuration.resolvedSettings(for: manifest)
            } catch {
                entry.diagnostics = error.diagnostics
                let first = error.diagnostics.first
                throw LoadError(
                    code: first?.code.rawValue ?? "invalid-settings", message: first?.message ?? "\(error)",
                    hint: first?.hint ?? "Fix the provider's settings.")
            }
            let initJSON: JSONValue = [
                "ctxpVersion": 1,
                "providerId": .string(manifest.id),
                "hostVersion": .string(HostConfiguration.hostVersion),
                "locale": .string(client.locale),
                "settings": .object(settings),
                "grantedPermissions": .array(client.grantedPermissions.map(JSONValue.string)),
            ]
            let launched = try ProviderLauncher.open(
                manifest: manifest, libraryPath: path, initJSON: initJSON.jsonBytes, configuration: configuration, logger: logger)
            entry.connection = launched.connection
            entry.effectiveIsolation = launched.isolation
            entry.status = .loaded
        } catch {
            if error.code == "sha256-mismatch", entry.diagnostics.isEmpty {
                entry.diagnostics = [manifest.diagnostic(.sha256Mismatch, at: "sha256", message: error.message, hint: error.hint)]
            }
            entry.status = .failed
            entry.loadError = error
            entry.unavailability = .loadFailed(error.message)
            logger.warning("Provider \(manifest.id) failed to load: \(error)")
            return entry
        }
        // Permissions the client did not grant.
        let missing = manifest.availability.permissions.map(\.rawValue).filter { !client.grantedPermissions.contains($0) }
        if !missing.isEmpty {
            entry.unavailability = .permission(
                "\(manifest.title) needs permission \(missing.joined(separator: ", ")), which the client did not grant.")
            return entry
        }
        // The provider's own check.
        if let connection = entry.connection {
            entry.unavailability = Self.runtimeCheck(connection, manifest: manifest)
        }
        return entry
    }

    /// Asks the provider whether it can work now (e.g. its data folder exists).
    private static func runtimeCheck(_ connection: any ProviderConnection, manifest: Manifest) -> Unavailability? {
        let answer = Mutex<Unavailability??>(nil)
        let done = DispatchSemaphore(value: 0)
        let id = connection.send(method: "provider/availability", params: { $0.append(contentsOf: "{}".utf8) }) { response in
            var result: Unavailability?
            if let error = response.error {
                result = .provider("\(manifest.title) failed its availability check: \(error.message)")
            } else if let bytes = response.resultBytes, let value = try? JSONReader.parse(bytes) {
                if value["available"]?.boolValue == false {
                    result = .provider(value["reason"]?.stringValue ?? "\(manifest.title) says it is unavailable.")
                }
            } else {
                result = .provider("\(manifest.title) answered its availability check with something that is not JSON.")
            }
            answer.withLock { $0 = .some(result) }
            done.signal()
        }
        let timeout = manifest.timeouts.preview.milliseconds
        if done.wait(timeout: .now() + .milliseconds(timeout)) == .timedOut {
            connection.cancel(id)
            return .provider("\(manifest.title) did not answer its availability check within \(timeout) ms.")
        }
        return answer.withLock { $0 } ?? nil
    }
}


extension ManifestPlatform {
    /// The platform this host runs on.
    package static var current: ManifestPlatform {
        #if os(macOS)
        .macos
        #else
        .linux
        #endif
    }
}
