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
    /// Where a provider stands, with what it has at that stage: a rejected manifest has only its
    /// diagnostics; every other stage has its manifest; only a loaded or quarantined provider has
    /// a connection; a failed one has its load error.
    package enum State: Sendable {
        /// The manifest was rejected.
        case rejected(diagnostics: [ManifestDiagnostic])
        /// Manifest valid, library not loaded yet.
        case discovered(Manifest)
        /// Hidden by the host configuration (`enabled: false`); never loaded.
        case disabled(Manifest)
        /// The library could not be loaded or opened; `diagnostics` are positioned in the manifest
        /// or its settings when the failure is there.
        case failed(Manifest, LoadError, diagnostics: [ManifestDiagnostic])
        /// Loaded and opened.
        case loaded(Manifest, any ProviderConnection)
        /// Its worker crashed too often; see `unavailability` and `providers/retry`
        /// (ProviderRegistry+Supervision.swift). `before` is what `unavailability` was before the
        /// quarantine replaced it (restored on recovery).
        case quarantined(Manifest, any ProviderConnection, before: Unavailability?)
    }

    /// The state's name, as `providers/list` says it.
    package enum Status: String, Sendable {
        case discovered, loaded, rejected, failed, disabled, quarantined
    }

    package var manifestPath: String
    package var state: State {
        didSet { route = Route(state) }
    }
    /// What a request routed to this provider reads, copied out of `state` when it changes:
    /// reading `manifest` copies the whole manifest (every member retained and released), which
    /// was a tenth of an in-process `items/preview` when done per request.
    package private(set) var route: Route
    package var libraryPath: String?
    package var unavailability: Unavailability?
    /// How the provider actually runs, once loaded (host policy may differ from the manifest).
    package var effectiveIsolation: IsolationMode?
    /// Why it runs where it does when the manifest asked otherwise (an untrusted in-process provider).
    package var isolationNote: String?
    /// The host configuration's `priority` for this provider, if it sets one (see `effectivePriority`).
    package var priorityOverride: Int?

    /// How current `unavailability` is (workers start lazily, so it may come from the metadata
    /// cache or not be known yet).
    package var availabilityState: AvailabilityState = .current
    /// What the provider's metadata depends on (a lazily started worker's provider); the metadata
    /// cache stores what its worker says under it.
    package var metadataKey: ProviderMetadataKey?

    package init(manifestPath: String, state: State) {
        self.manifestPath = manifestPath
        self.state = state
        self.route = Route(state)
    }

    /// The members of a provider's state and manifest that routing a request needs.
    package struct Route: Sendable {
        /// The manifest's id (nil when the manifest was rejected).
        package let id: String?
        package let status: Status
        /// The connection of a loaded provider (not of a quarantined one).
        package let connection: (any ProviderConnection)?
        /// The manifest's timeouts in milliseconds, converted here rather than per request.
        package let timeouts: CallTimeouts
        package let maximumAttachmentCount: Int
        package let collection: CollectionMode

        init(_ state: State) {
            var connection: (any ProviderConnection)?
            if case .loaded(_, let live) = state { connection = live }
            self.connection = connection
            switch state {
            case .rejected: status = .rejected
            case .discovered: status = .discovered
            case .disabled: status = .disabled
            case .failed: status = .failed
            case .loaded: status = .loaded
            case .quarantined: status = .quarantined
            }
            switch state {
            case .rejected:
                id = nil
                timeouts = CallTimeouts(Timeouts())
                maximumAttachmentCount = 1
                collection = .form
            case .discovered(let manifest), .disabled(let manifest), .failed(let manifest, _, _), .loaded(let manifest, _),
                .quarantined(let manifest, _, _):
                id = manifest.id
                timeouts = CallTimeouts(manifest.timeouts)
                maximumAttachmentCount = manifest.maximumAttachmentCount
                collection = manifest.collection
            }
        }
    }

    /// The manifest, unless it was rejected.
    package var manifest: Manifest? {
        switch state {
        case .rejected: nil
        case .discovered(let manifest), .disabled(let manifest), .failed(let manifest, _, _), .loaded(let manifest, _),
            .quarantined(let manifest, _, _):
            manifest
        }
    }

    /// The live connection of a loaded or quarantined provider.
    package var connection: (any ProviderConnection)? {
        switch state {
        case .loaded(_, let connection), .quarantined(_, let connection, _): connection
        case .rejected, .discovered, .disabled, .failed: nil
        }
    }

    /// Why its library failed to load.
    package var loadError: LoadError? {
        if case .failed(_, let error, _) = state { return error }
        return nil
    }

    /// Positioned problems with its manifest (rejected) or its load (failed).
    package var diagnostics: [ManifestDiagnostic] {
        switch state {
        case .rejected(let diagnostics), .failed(_, _, let diagnostics): diagnostics
        case .discovered, .disabled, .loaded, .quarantined: []
        }
    }

    package var status: Status { route.status }

    package var id: String? { route.id }
    package var isAvailable: Bool { status == .loaded && unavailability == nil }
}

/// Where a provider's availability comes from (`availabilityState` in `providers/list`).
package enum AvailabilityState: Sendable, Equatable {
    /// Checked by the provider in this host run (or decided without it: platform, host version,
    /// permissions), or the provider runs in-process.
    case current
    /// What the provider said last time, from the metadata cache; its worker has not started in
    /// this run.
    case cached
    /// Never computed for this library and these settings: the provider is offered, and its
    /// first request starts its worker and checks.
    case unchecked
    /// Its worker started and the check is running; `previous` is what it was before.
    indirect case checking(previous: AvailabilityState)

    /// The name clients see.
    package var name: String {
        switch self {
        case .current: "current"
        case .cached: "cached"
        case .unchecked: "unchecked"
        case .checking: "checking"
        }
    }
}

/// Provider loads running in the background and the actions waiting for them.
struct LoadProgress {
    struct Waiter {
        /// The provider waited for; nil: every provider.
        let id: String?
        let action: @Sendable () -> Void
    }

    /// Manifest path → provider id of each load not finished yet.
    var pending: [String: String] = [:]
    var waiters: [Waiter] = []

    func isWaiting(for id: String?) -> Bool {
        guard let id else { return !pending.isEmpty }
        return pending.values.contains(id)
    }
}

/// A provider's call timeouts in whole milliseconds (each rounded up), as a call's deadline
/// takes them (`Host.timeout(for:in:)`): a request copies these out of `route` rather than
/// converting the manifest's `Duration`s each time.
package struct CallTimeouts: Sendable, Equatable {
    package var collect: Int
    package var preview: Int
    package var detail: Int
    package var encode: Int

    /// The timeouts of a manifest.
    package init(_ timeouts: Timeouts) {
        collect = Self.milliseconds(timeouts.collect)
        preview = Self.milliseconds(timeouts.preview)
        detail = Self.milliseconds(timeouts.detail)
        encode = Self.milliseconds(timeouts.encode)
    }

    /// `duration` in whole milliseconds, rounded up, taken as 0 … `Timeouts.maximum` (what a
    /// manifest may ask for; a cache file is read as hostile and could hold any value).
    package static func milliseconds(_ duration: Duration) -> Int {
        min(max(duration, .zero), Timeouts.maximum).milliseconds
    }

    /// Each timeout at most `cap` milliseconds (the host's `maximumCallTimeout`,
    /// `ProviderRegistry.maximumCallMilliseconds`).
    package func capped(at cap: Int) -> CallTimeouts {
        var capped = self
        capped.collect = min(collect, cap)
        capped.preview = min(preview, cap)
        capped.detail = min(detail, cap)
        capped.encode = min(encode, cap)
        return capped
    }
}

/// The set of providers: discovered from manifests, loaded, checked, and ordered.
package final class ProviderRegistry: Sendable {
    package let configuration: HostConfiguration
    let logger: Logger
    /// The entries; extensions (reload, supervision) change them by id or manifest path.
    let state: Mutex<[ProviderEntry]>
    /// Problems with the catalog itself (e.g. a manifest folder that does not exist).
    package let catalogProblems: [String]
    /// Manifests folders given explicitly that do not exist or are not folders.
    package let missingFolders: [ManifestDiagnostic]
    /// The loads `startLoading` started that have not finished, and who waits for them.
    let loads = Mutex(LoadProgress())
    /// How many loads have not finished (the lock-free check before `loads`).
    let pendingLoadCount = Atomic<Int>(0)
    /// What started workers' providers last said (issue 28): availability without a worker.
    package let metadata: ProviderMetadataCache
    /// Bounds how many of this registry's workers start at once.
    package let workerStarts: WorkerStartLimiter
    /// The host's call runtime, which its in-process providers answer through.
    package let calls: CallRuntime
    /// The configuration's `maximumCallTimeout` in milliseconds (`CallTimeouts.milliseconds`):
    /// the cap on every call's timeout, converted once here rather than per request.
    package let maximumCallMilliseconds: Int

    /// Discovers manifests; nothing is loaded until `startLoading(client:)` (or `load(client:)`).
    ///
    /// - Parameter calls: the host's call runtime; default: a private one with the configuration's
    ///   message limit.
    package init(configuration: HostConfiguration, logger: Logger, calls: CallRuntime? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.calls = calls ?? CallRuntime(maximumReplyBytes: configuration.maximumMessageBytes)
        self.maximumCallMilliseconds = CallTimeouts.milliseconds(configuration.isolation.maximumCallTimeout)
        let catalog = Self.discoverCatalog(configuration, logger: logger)
        var entries: [ProviderEntry] = []
        for entry in catalog.entries {
            switch entry {
            case .accepted(let manifest):
                entries.append(ProviderEntry(manifestPath: manifest.manifestPath, state: .discovered(manifest)))
            case .rejected(let rejection):
                entries.append(ProviderEntry(manifestPath: rejection.path, state: .rejected(diagnostics: rejection.diagnostics)))
            }
        }
        for index in entries.indices { entries[index].applyHostConfiguration(configuration.providerOverrides) }
        self.catalogProblems = catalog.diagnostics.map(\.description) + Self.configurationWarnings(configuration, catalog)
        self.missingFolders = catalog.diagnostics.filter { $0.code == .directoryNotFound }
        self.state = Mutex(entries)
        self.metadata = ProviderMetadataCache(path: configuration.metadataCacheFile(), logger: logger)
        if configuration.isolation.lazyWorkers, entries.contains(where: { $0.status == .discovered }) { metadata.prefetch() }
        self.workerStarts = WorkerStartLimiter(limit: configuration.isolation.maximumConcurrentStarts)
    }

    /// The manifests of the configured folders (through the registry cache when it is on) and the
    /// installed providers.
    static func discoverCatalog(_ configuration: HostConfiguration, logger: Logger) -> ManifestCatalog {
        let catalog = discoverManifestFolders(configuration, logger: logger)
        guard let locations = configuration.packageLocations else { return catalog }
        return InstalledProviders.merge(
            catalog, installed: InstalledProviders.discover(locations, cacheDirectory: configuration.registryCacheDirectory))
    }

    /// The manifests of the `--manifests` folders, through the registry cache when it is on.
    static func discoverManifestFolders(_ configuration: HostConfiguration, logger: Logger) -> ManifestCatalog {
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
        withEntry(id: id) { $0.pointee }
    }

    /// Runs `body` with the entry for a provider id, inside the registry's lock and without
    /// copying the entry; nil when there is no such entry. (Entries are found by their manifest's
    /// id, so the entry `body` gets always has a manifest.) A copy retains every string and array
    /// of the entry and its manifest, and `items/preview` looks one up per request: `body` reads
    /// through the pointer (`pointee`) and takes out only what it needs. It must be short, must
    /// not keep the pointer and must not call the registry.
    package func withEntry<Result: Sendable, Failure: Error>(
        id: String, _ body: (UnsafePointer<ProviderEntry>) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        // Lengths first: an id read from a request is not known to be ASCII, so `==` on it goes
        // through Unicode normalization; ids are lowercase ASCII (`ManifestParser.isValidID`), and
        // only the one of the same length is compared.
        let length = id.utf8.count
        return try state.withLock { entries throws(Failure) -> Result? in
            // (Through a pointer: the array's subscript, its `firstIndex`, and a buffer's subscript
            // each copy an entry to lend it; a pointer's `pointee` lends in place.)
            try entries.withUnsafeBufferPointer { buffer throws(Failure) -> Result? in
                guard let base = buffer.baseAddress else { return nil }
                for index in 0..<buffer.count {
                    let entry = base + index
                    if entry.pointee.route.id?.utf8.count == length, entry.pointee.route.id == id {
                        return try body(entry)
                    }
                }
                return nil
            }
        }
    }

    /// Loads and opens every discovered provider and checks its availability for this client;
    /// returns when all are loaded (`startLoading` and `waitForLoads`).
    package func load(client: ClientInfo) {
        startLoading(client: client)
        waitForLoads()
    }

    /// Starts loading, opening and checking every discovered provider for this client in the
    /// background and returns at once; the entries stay `discovered` until their load finishes.
    /// Call once (at `initialize`).
    ///
    /// Providers load side by side (up to `maximumParallelLoads` at once). A process-isolated
    /// provider's load starts no worker (unless `IsolationConfiguration.lazyWorkers` is off): it
    /// resolves the library, prepares the connection and takes its availability from the metadata
    /// cache (`availabilityState`); the worker starts on the first request. In-process providers
    /// and eager workers open here and run their availability check, so loading costs about the
    /// slowest provider rather than the sum of all. Whatever needs a provider's loaded
    /// state waits for it (`isLoading`, `whenLoaded`, `waitForLoad`); a load that hangs is bounded
    /// by the worker start timeout and the availability check's timeout.
    ///
    /// - Parameter loaded: called after each provider's entry is stored, before anyone waiting for
    ///   it is told (the host subscribes to its worker's supervision there).
    package func startLoading(client: ClientInfo, loaded: @escaping @Sendable (ProviderEntry) -> Void = { _ in }) {
        let work: [(entry: ProviderEntry, manifest: Manifest)] = state.withLock { entries in
            entries.compactMap { entry in
                guard case .discovered(let manifest) = entry.state else { return nil }
                return (entry, manifest)
            }
        }
        guard !work.isEmpty else { return }
        pendingLoadCount.add(work.count, ordering: .releasing)
        loads.withLock { progress in
            for item in work { progress.pending[item.entry.manifestPath] = item.manifest.id }
        }
        let next = Atomic<Int>(0)
        for _ in 0..<min(work.count, Self.maximumParallelLoads) {
            startThread { [self] in
                while true {
                    let position = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard position < work.count else { break }
                    let item = work[position]
                    let result = load(item.entry, manifest: item.manifest, client: client)
                    // Replaced by manifest path: nothing else adds or removes entries while
                    // loads run (`reload` waits for them), but the file is the stable key.
                    state.withLock { entries in
                        if let index = entries.firstIndex(where: { $0.manifestPath == result.manifestPath }) {
                            entries[index] = result
                        }
                    }
                    loaded(result)
                    finishLoad(manifestPath: item.entry.manifestPath)
                }
            }
        }
    }

    // MARK: Waiting for loads

    /// Whether provider `id` (nil: any provider) is still loading. Cheap when nothing loads.
    package func isLoading(_ id: String? = nil) -> Bool {
        guard pendingLoadCount.load(ordering: .acquiring) > 0 else { return false }
        return loads.withLock { $0.isWaiting(for: id) }
    }

    /// Runs `action` once provider `id` (nil: every provider) has finished loading: at once, on
    /// this thread, if it is not loading; otherwise on the thread that finishes the load (keep
    /// `action` short, or hop to a queue). A load never starts again once finished.
    package func whenLoaded(_ id: String? = nil, _ action: @escaping @Sendable () -> Void) {
        let now = pendingLoadCount.load(ordering: .acquiring) == 0 || loads.withLock { progress in
            guard progress.isWaiting(for: id) else { return true }
            progress.waiters.append(LoadProgress.Waiter(id: id, action: action))
            return false
        }
        if now { action() }
    }

    /// Waits until provider `id` (nil: every provider) has finished loading.
    package func waitForLoad(of id: String? = nil) async {
        guard isLoading(id) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenLoaded(id) { continuation.resume() }
        }
    }

    /// Blocks the calling thread until every provider has finished loading (the `list` command,
    /// `reload`). Never call it on the RPC reader's thread.
    package func waitForLoads() {
        guard isLoading() else { return }
        let done = DispatchSemaphore(value: 0)
        whenLoaded(nil) { done.signal() }
        done.wait()
    }

    private func finishLoad(manifestPath: String) {
        let ready: [@Sendable () -> Void] = loads.withLock { progress in
            progress.pending[manifestPath] = nil
            var ready: [@Sendable () -> Void] = []
            var waiting: [LoadProgress.Waiter] = []
            for waiter in progress.waiters {
                if progress.isWaiting(for: waiter.id) { waiting.append(waiter) } else { ready.append(waiter.action) }
            }
            progress.waiters = waiting
            return ready
        }
        pendingLoadCount.subtract(1, ordering: .releasing)
        for action in ready { action() }
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
            entry.state = .failed(manifest, LoadError(code: error.code.rawValue, message: error.message, hint: error.hint), diagnostics: [error])
            entry.unavailability = .loadFailed(error.message)
            return entry
        }
        entry.libraryPath = path
        var initBytes: [UInt8] = []
        var diagnostics: [ManifestDiagnostic] = []
        do throws(LoadError) {
            let settings: JSONObject
            do {
                settings = try configuration.resolvedSettings(for: manifest)
            } catch {
                diagnostics = error.diagnostics
                let first = error.diagnostics.first
                throw LoadError(
                    code: first?.code.rawValue ?? "invalid-settings", message: first?.message ?? "\(error)",
                    hint: first?.hint ?? "Fix the provider's settings.")
            }
            // What the client renders goes in `ui`; absent means everything (docs/provider-abi.md).
            let context = ProviderContext(
                providerID: manifest.id, settings: settings, locale: client.locale, grantedPermissions: client.grantedPermissions, ui: client.ui)
            initBytes = context.initBytes
            let launched = try ProviderLauncher.open(
                manifest: manifest, libraryPath: path, context: context, configuration: configuration, logger: logger,
                lazyWorker: configuration.isolation.lazyWorkers, startLimiter: workerStarts, calls: calls)
            entry.state = .loaded(manifest, launched.connection)
            entry.effectiveIsolation = launched.isolation
            entry.isolationNote = launched.isolationNote
        } catch {
            if error.code == "sha256-mismatch", diagnostics.isEmpty {
                diagnostics = [manifest.diagnostic(.sha256Mismatch, at: "sha256", message: error.message, hint: error.hint)]
            }
            entry.state = .failed(manifest, error, diagnostics: diagnostics)
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
        // A worker that has not started: what the metadata cache says, if it still holds.
        if let worker = entry.connection as? WorkerConnection, worker.isLazy {
            let key = ProviderMetadataKey.current(libraryPath: path, initJSON: initBytes)
            entry.metadataKey = key
            if let key, let cached = metadata.lookup(id: manifest.id, key: key) {
                entry.unavailability = cached.unavailability
                entry.availabilityState = .cached
            } else {
                entry.availabilityState = .unchecked
            }
            return entry
        }
        // The provider's own check.
        if let connection = entry.connection {
            entry.unavailability = Self.runtimeCheck(connection, manifest: manifest)
        }
        return entry
    }

    /// Asks the provider whether it can work now (e.g. its data folder exists).
    static func runtimeCheck(_ connection: any ProviderConnection, manifest: Manifest) -> Unavailability? {
        switch availabilityAnswer(connection, manifest: manifest) {
        case .answered(let unavailability): unavailability
        case .lost(let error): .provider("\(manifest.title) failed its availability check: \(error.message)")
        }
    }

    /// What a provider's availability check came to.
    package enum AvailabilityAnswer: Sendable {
        /// The provider answered (or failed, or did not answer in time): nil means available.
        case answered(Unavailability?)
        /// The host lost the request (its worker crashed or was stopped meanwhile): says nothing
        /// about the provider's availability.
        case lost(RPCError)
    }

    /// Sends `provider/availability` and waits for the answer (at most the preview timeout).
    static func availabilityAnswer(_ connection: any ProviderConnection, manifest: Manifest) -> AvailabilityAnswer {
        let timeout = manifest.timeouts.preview.milliseconds
        return ProviderCall.waitForResponse(
            providerID: manifest.id, method: ProviderAvailabilityRequest.method, timeout: timeout, connection: connection
        ) { response -> AvailabilityAnswer in
            if let error = response.error, response.errorIsFromHost {
                switch error.code {
                case .providerTimedOut: return .answered(.provider("\(manifest.title) did not answer its availability check within \(timeout) ms."))
                case .providerBadReply: return .answered(.provider("\(manifest.title) failed its availability check: \(error.message)"))
                default: return .lost(error)
                }
            }
            if let error = response.error {
                return .answered(.provider("\(manifest.title) failed its availability check: \(error.message)"))
            }
            guard let bytes = response.resultBytes, let value = try? JSONReader.parse(bytes) else {
                return .answered(.provider("\(manifest.title) answered its availability check with something that is not JSON."))
            }
            return .answered(
                value["available"]?.boolValue == false ? .provider(value["reason"]?.stringValue ?? "\(manifest.title) says it is unavailable.") : nil)
        }
    }

    /// The provider's `provider/info` answer (an object), or nil; waits at most its preview timeout.
    static func providerInfo(_ connection: WorkerConnection, manifest: Manifest) -> JSONValue? {
        ProviderCall.waitForResponse(
            providerID: manifest.id, method: ProviderInfoRequest.method, timeout: manifest.timeouts.preview.milliseconds, connection: connection
        ) { response -> JSONValue? in
            guard response.error == nil, let bytes = response.resultBytes, let value = try? JSONReader.parse(bytes), case .object = value else {
                return nil
            }
            return value
        }
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
