import ContextProviderKit
import Logging
import Synchronization

/// What several client sessions in one process share: the providers — their manifests, loaded
/// libraries, worker processes, caches and manifest watcher — loaded once for every session that
/// loads them the same way.
///
/// Each session keeps its own client state: its lifecycle, composers and drafts (in memory only:
/// one state folder shared by sessions would hand each the others' drafts), collection sessions,
/// log level, pending requests and limits. The state folder still holds the caches. `serve --listen` makes one core for all its
/// WebSocket connections and `mcp --http` one for all its MCP sessions; an app with several chat
/// windows can do the same with `InProcessHost(core:)`:
///
/// ```swift
/// let core = try HostCore(configuration: configuration)
/// let first = InProcessHost(core: core)
/// let second = InProcessHost(core: core)  // same providers, same workers, its own composers
/// ```
///
/// Providers see a client's locale, granted permissions and UI capabilities when they open (and
/// the permissions decide each worker's sandbox), so sessions that differ in those get providers
/// of their own (`ProviderProfile`); the rest share. A group of providers is closed — its workers
/// stopped — when its last session closes.
public final class HostCore: Sendable {
    package let configuration: HostConfiguration
    package let logger: Logger
    /// The manifests as discovered, never loaded: what sessions see before `initialize`.
    package let catalog: ProviderGroup
    private let groups = Mutex<[ProviderProfile: ProviderGroup]>([:])

    /// Creates a core; manifests are discovered now, providers load when the first session of a
    /// profile initializes.
    ///
    /// - Throws: `HostConfigurationError` when a manifests folder the configuration names does not
    ///   exist or is not a folder (a host that would silently list no providers), or an isolation
    ///   setting is out of its range (`invalid-setting`).
    public init(configuration: HostConfiguration, logger: Logger = Logger(label: "context-host")) throws(HostConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        if let invalid = configuration.isolation.outOfRange() { throw invalid }
        let registry = ProviderRegistry(configuration: configuration, logger: logger)
        if let missing = registry.missingFolders.first {
            throw HostConfigurationError(code: missing.code.rawValue, message: missing.message, hint: missing.hint)
        }
        for problem in registry.catalogProblems { logger.warning("\(problem)") }
        self.catalog = ProviderGroup(registry: registry)
    }

    /// The core of sessions that trust their caller with the configuration (`serve --listen`,
    /// `mcp --http`): a missing manifests folder is logged, as `serve` does, not thrown.
    package init(uncheckedConfiguration configuration: HostConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let registry = ProviderRegistry(configuration: configuration, logger: logger)
        for problem in registry.catalogProblems { logger.warning("\(problem)") }
        self.catalog = ProviderGroup(registry: registry)
    }

    /// How many groups of providers are open (one per profile in use; for tests and diagnostics).
    package var groupCount: Int { groups.withLock { $0.count } }

    /// Adds `host`, whose client just initialized, to the group for its profile (made, with its
    /// own registry, when it is the first); returns the group.
    func join(_ host: Host, client: ClientInfo) -> ProviderGroup {
        let profile = ProviderProfile(client)
        // Joined under the lock, so the last session of a group cannot close it in between.
        return groups.withLock { groups in
            let group = groups[profile] ?? ProviderGroup(registry: ProviderRegistry(configuration: configuration, logger: logger))
            groups[profile] = group
            group.join(host, client: client)
            return group
        }
    }

    /// Removes `host` from `group`; the last session out closes the group (its workers stop).
    func leave(_ host: Host, group: ProviderGroup) {
        let profile = host.client.map(ProviderProfile.init)
        let emptied = groups.withLock { groups -> Bool in
            guard group.leave(host) == 0 else { return false }
            if let profile, groups[profile] === group { groups[profile] = nil }
            return true
        }
        if emptied { group.close() }
    }
}

/// What a provider sees of a client when it opens (`ProviderContext`): sessions with the same
/// profile can share provider instances.
package struct ProviderProfile: Hashable, Sendable {
    package var locale: String
    /// Sorted, without repeats: the order a client lists them in does not matter.
    package var grantedPermissions: [String]
    package var ui: UICapabilities

    package init(_ client: ClientInfo) {
        locale = client.locale
        grantedPermissions = Array(Set(client.grantedPermissions)).sorted()
        ui = client.ui
    }
}
