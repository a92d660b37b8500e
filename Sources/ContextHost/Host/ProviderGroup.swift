import ContextProviderKit
import Dispatch
import Synchronization

/// A provider registry and the client sessions it serves: the providers loaded once, their
/// workers and supervision, the manifest watcher, and `providers/changed` sent to every session.
///
/// A stdio host or a standalone `InProcessHost` has a group of its own. Sessions made from one
/// `HostCore` (each `serve --listen` connection, each `mcp --http` session, an app's windows) that
/// load providers the same way (`ProviderProfile`) share one, so a hundred connections cost one
/// set of manifests, workers and watchers rather than a hundred.
package final class ProviderGroup: Sendable {
    package let registry: ProviderRegistry
    private let state = Mutex(State())
    /// The manifest watcher, once `startWatchingManifests` ran.
    private let watcher = Mutex<ManifestWatcher?>(nil)

    private struct State {
        /// The client the providers were loaded for (the first member's; the others share its
        /// profile), nil before the first `join`.
        var client: ClientInfo?
        /// The sessions to notify, held weakly (a session owns its group, not the reverse).
        var members: [WeakHost] = []
    }

    private struct WeakHost {
        weak var host: Host?
    }

    package init(registry: ProviderRegistry) {
        self.registry = registry
    }

    /// Adds a session whose client initialized; the first one starts loading the providers for
    /// its client (`ProviderRegistry.startLoading`), later ones share what is loaded or loading.
    func join(_ host: Host, client: ClientInfo) {
        let first = state.withLock { state -> Bool in
            state.members.removeAll { $0.host == nil }
            state.members.append(WeakHost(host: host))
            guard state.client == nil else { return false }
            state.client = client
            return true
        }
        guard first else { return }
        // Each worker connection reports crashes and quarantine from the moment it is stored.
        registry.startLoading(client: client) { [weak self] entry in
            if let id = entry.id, let worker = entry.connection as? WorkerConnection { self?.attachSupervision(id: id, connection: worker) }
        }
    }

    /// Removes a session; returns how many remain.
    @discardableResult
    func leave(_ host: Host) -> Int {
        state.withLock { state in
            state.members.removeAll { $0.host == nil || $0.host === host }
            return state.members.count
        }
    }

    /// The sessions it serves.
    var members: [Host] {
        state.withLock { $0.members.compactMap(\.host) }
    }

    /// Ends the group's work: stops watching manifests, stops every worker process (not a crash,
    /// nothing restarts) and saves the metadata cache. Requests still waiting on a worker are
    /// abandoned. In-process providers stay mapped (a library is never unloaded).
    func close() {
        stopWatchingManifests()
        for entry in registry.entries() {
            (entry.connection as? WorkerConnection)?.terminate()
        }
        registry.metadata.saveIfPending()
    }

    /// Sends `providers/changed` to every session, each with its own list (locale, composers).
    package func notifyProvidersChanged(added: [String] = [], changed: [String] = [], removed: [String] = []) {
        for host in members { host.notifyProvidersChanged(added: added, changed: changed, removed: removed) }
    }

    // MARK: Supervision

    /// Subscribes to every worker connection's status changes. Idempotent; call after loading
    /// (each provider's load, a reload).
    package func attachSupervision() {
        for (id, connection) in registry.workerConnections() { attachSupervision(id: id, connection: connection) }
    }

    /// Subscribes to one worker connection's status changes (as each provider's load finishes).
    func attachSupervision(id: String, connection: WorkerConnection) {
        connection.setEventHandler { [weak self] event in self?.supervisionChanged(id: id, event) }
    }

    private func supervisionChanged(id: String, _ event: SupervisionEvent) {
        switch event {
        case .quarantined(let reason):
            registry.markQuarantined(id: id, reason: reason)
        case .recovered:
            registry.markRecovered(id: id)
        case .started:
            refreshMetadata(id: id)
            return
        }
        // The notification carries the whole list: while other providers still load at start-up,
        // it waits for them, so the client never sees a half-loaded list.
        registry.whenLoaded(nil) { [weak self] in self?.notifyProvidersChanged(changed: [id]) }
    }

    /// After a lazily started worker's first start in this run: asks its provider's availability
    /// check and `provider/info` (on a thread of its own), stores the answers in the metadata
    /// cache, and sends `providers/changed` when they differ from what the list said.
    private func refreshMetadata(id: String) {
        guard let check = registry.beginAvailabilityCheck(id: id) else { return }
        startThread(name: "metadata-refresh") { [weak self] in
            guard let self else { return }
            let unavailability: Unavailability?
            switch ProviderRegistry.availabilityAnswer(check.connection, manifest: check.manifest) {
            case .answered(let answer):
                unavailability = answer
            case .lost(let error):
                // Its worker went away meanwhile: nothing learned; the next start checks again.
                registry.logger.debug("Provider \(id): availability check lost (\(error.message)); checking at its next start.")
                registry.abandonAvailabilityCheck(id: id)
                return
            }
            let info = ProviderRegistry.providerInfo(check.connection, manifest: check.manifest)
            if let key = check.key {
                registry.metadata.store(id: id, key: key, metadata: CachedProviderMetadata(unavailability: unavailability, info: info))
            }
            if registry.finishAvailabilityCheck(id: id, unavailability: unavailability) {
                registry.whenLoaded(nil) { [weak self] in self?.notifyProvidersChanged(changed: [id]) }
            }
        }
    }

    // MARK: Manifest changes

    /// Starts watching the manifest folders (when the configuration's `watchManifests` is on);
    /// each change reloads the registry and notifies every session. Once per group; call after
    /// `join`.
    func startWatchingManifests() {
        let configuration = registry.configuration
        guard configuration.watchManifests, watcher.withLock({ $0 == nil }) else { return }
        var directories = configuration.manifestSearchPaths().map(\.path)
        if let locations = configuration.packageLocations {
            // Installs, upgrades and uninstalls rewrite the lock file there.
            _ = Directories.makePrivate(locations.configDirectory)
            directories.append(locations.configDirectory)
        }
        let watcher = ManifestWatcher(directories: directories, logger: registry.logger) { [weak self] in
            self?.reloadManifests()
        }
        let started = self.watcher.withLock { slot -> Bool in
            guard slot == nil else { return false }
            slot = watcher
            return true
        }
        if started { watcher.start() }
    }

    /// Stops the manifest watcher, if one runs.
    func stopWatchingManifests() {
        let watcher = watcher.withLock { slot -> ManifestWatcher? in
            defer { slot = nil }
            return slot
        }
        watcher?.stop()
    }

    /// Re-reads the manifests now and notifies every session of any change.
    @discardableResult
    package func reloadManifests() -> ProviderChanges {
        let changes = registry.reload(client: state.withLock { $0.client })
        attachSupervision()  // new worker connections report crashes and quarantine
        if !changes.isEmpty {
            notifyProvidersChanged(added: changes.added, changed: changes.changed, removed: changes.removed)
        }
        return changes
    }
}
