import ContextProtocol
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The host's state behind the protocol: providers, collection sessions, and the client.
package final class Host: Sendable {
    package let configuration: HostConfiguration
    /// The core whose providers this session shares, or nil: its providers are its own.
    package let core: HostCore?
    /// Its own providers; for a session of a core, the core's catalog (discovered, never loaded)
    /// until `initialize` joins the group for its client (`joinedGroup`).
    private let ownGroup: ProviderGroup
    /// `ownGroup.registry`, read without going through the group: a host of its own reads it
    /// several times per request.
    private let ownRegistry: ProviderRegistry
    /// The core's group this session joined at `initialize`; set once.
    private let joinedGroup = AtomicLazyReference<ProviderGroup>()
    package let sessions = CollectionSessions()
    package let composers: ComposerStore
    package let logger: Logger
    private let clientInfo = Mutex<ClientInfo?>(nil)
    /// Whether the client negotiated protocol version 2 (`$/progress`, `log/message`): read on
    /// every provider call, so without the lock and the copy of `client`.
    let speaksVersion2 = Atomic<Bool>(false)
    /// The client's `log/message` level (`initialize` `logLevel`, then `log/setLevel`).
    package let logLevel = Mutex<LogLevel>(.off)
    /// Where host → client notifications go; `RPCServer` sets it. Use `notify(_:params:)`.
    package let notificationSink = Mutex<LockedFunction<@Sendable (String, JSONValue) -> Void>?>(nil)

    /// The providers this session uses, and the sessions it shares them with.
    /// (A host of its own never joins one: it skips the atomic, read several times per request.)
    package var group: ProviderGroup { core == nil ? ownGroup : joinedGroup.load() ?? ownGroup }

    /// The providers: this host's own, or its core group's once the client initialized.
    package var registry: ProviderRegistry { core == nil ? ownRegistry : group.registry }

    /// What this host's calls to in-process providers share (waiting requests, reply limit, relay,
    /// batching): its group's, so two hosts in one process that share no providers never see
    /// each other's.
    package var calls: CallRuntime { registry.calls }

    /// A host with providers of its own (the stdio server, a standalone `InProcessHost`).
    package init(configuration: HostConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.core = nil
        let registry = ProviderRegistry(
            configuration: configuration, logger: logger, calls: CallRuntime(maximumReplyBytes: configuration.maximumMessageBytes))
        self.ownGroup = ProviderGroup(registry: registry)
        self.ownRegistry = registry
        self.composers = ComposerStore(stateDirectory: configuration.stateDirectory, logger: logger)
        for problem in registry.catalogProblems { logger.warning("\(problem)") }
    }

    /// A session of `core`: its providers are the core's, shared with the core's other sessions
    /// of the same profile from `initialize` on; its client state is its own, and its drafts are
    /// kept in memory only.
    package init(core: HostCore) {
        self.configuration = core.configuration
        self.logger = core.logger
        self.core = core
        self.ownGroup = core.catalog
        self.ownRegistry = core.catalog.registry
        // Drafts in memory: with one state folder for every session, each would restore (and
        // then overwrite) the others' drafts.
        self.composers = ComposerStore(stateDirectory: nil, logger: logger)
    }

    package var client: ClientInfo? { clientInfo.withLock { $0 } }

    /// Records the client and starts loading the providers for it in the background
    /// (`ProviderRegistry.startLoading`); returns at once. Whatever needs a provider's loaded state
    /// waits for its load (`whenLoaded`); `registry.waitForLoads()` waits for all of them.
    package func initialize(client: ClientInfo) {
        clientInfo.withLock { $0 = client }
        logLevel.withLock { $0 = client.logLevel }
        speaksVersion2.store(client.protocolVersion >= 2, ordering: .releasing)
        if let core {
            _ = joinedGroup.storeIfNil(core.join(self, client: client))
        } else {
            ownGroup.join(self, client: client)
        }
    }

    /// Ends this host's work. With providers of its own: stops watching manifests, stops every
    /// worker process (not a crash, nothing restarts) and saves the metadata cache; requests
    /// still waiting on a worker are abandoned. A session of a core leaves its group, which does
    /// that when its last session leaves. In-process providers stay mapped (a library is never
    /// unloaded).
    package func close() {
        if let core {
            if let group = joinedGroup.load() { core.leave(self, group: group) }
        } else {
            ownGroup.leave(self)
            ownGroup.close()
        }
    }

    /// Starts watching the manifest folders (when `configuration.watchManifests`); each change
    /// reloads the registry and sends `providers/changed`. Call after `initialize`.
    package func startWatchingManifests() {
        group.startWatchingManifests()
    }

    /// Re-reads the manifests now and notifies the clients of any change.
    @discardableResult
    package func reloadManifests() -> ProviderChanges {
        group.reloadManifests()
    }

    /// Runs `body` on the after-load queue once provider `id` (nil: every provider) has finished
    /// loading, after every body queued before it (`RPCServer.whenLoaded`, for a request that
    /// must wait: `mustWait(for:)`).
    package func afterLoad(of id: String?, _ body: @escaping @Sendable () -> Void) {
        waitersQueued.add(1, ordering: .releasing)
        registry.whenLoaded(id) { [self] in
            afterLoad.async {
                defer { self.waitersQueued.subtract(1, ordering: .releasing) }
                body()
            }
        }
    }

    /// Whether a request for provider `id` (nil: every provider) must wait (`afterLoad(of:)`):
    /// while it loads, and while earlier requests that waited have not run yet (so this one does
    /// not overtake them). One atomic load once start-up is over.
    package func mustWait(for id: String?) -> Bool {
        if waitersQueued.load(ordering: .acquiring) > 0 { return true }
        return core == nil ? ownRegistry.isLoading(id) : registry.isLoading(id)
    }

    /// Where requests that waited for a provider's load run, in order (not on the loading thread).
    /// Per host: two hosts in one process must not order or delay each other's requests.
    private let afterLoad = DispatchQueue(label: "context-host.after-load")
    /// Bodies waiting for a load or queued on `afterLoad` and not finished.
    private let waitersQueued = Atomic<Int>(0)

    /// The `initialize` result.
    package func initializeResult(protocolVersion: Int) -> InitializeResult {
        var features = ["cancellation", "contentLengthFraming", "collect", "items", "composer", "providersChanged", "processIsolation"]
        if protocolVersion >= 2 { features += ["progress", "logMessages", "uiCapabilities"] }
        return InitializeResult(
            protocolVersion: protocolVersion, protocolVersions: ProtocolVersion.supported,
            serverInfo: ServerInfo(name: "context-host", version: HostConfiguration.hostVersion),
            capabilities: HostCapabilities(
                methods: MethodRegistry.methodNames, features: features, ctxui: 1,
                maximumMessageBytes: configuration.maximumMessageBytes,
                limits: configuration.inputLimits.values(messageLimit: configuration.maximumMessageBytes, itemLimit: configuration.outputLimits.itemBytes)))
    }

    // MARK: Providers

    /// What a caller needs from a provider.
    package enum Use {
        case item
        case form
        case programmatic
    }

    /// A provider that can take requests now: what a call needs, taken out of its registry entry.
    package struct LiveProvider: Sendable {
        /// The provider's id.
        package var id: String
        /// The manifest's timeouts in milliseconds; `provider(_:for:)` caps them by the host
        /// configuration's `maximumCallTimeout`.
        package var timeouts: CallTimeouts
        /// The manifest's limit on items of this provider in one composer.
        package var maximumAttachmentCount: Int
        /// Where its requests go.
        package var connection: any ProviderConnection

        /// A provider from its parts.
        package init(id: String, timeouts: CallTimeouts, maximumAttachmentCount: Int, connection: any ProviderConnection) {
            self.id = id
            self.timeouts = timeouts
            self.maximumAttachmentCount = maximumAttachmentCount
            self.connection = connection
        }

        /// A provider from its parts, with `timeouts` as they are (not capped).
        package init(id: String, timeouts: Timeouts, maximumAttachmentCount: Int, connection: any ProviderConnection) {
            self.init(id: id, timeouts: CallTimeouts(timeouts), maximumAttachmentCount: maximumAttachmentCount, connection: connection)
        }

        /// The provider of `manifest`, with the manifest's timeouts as they are (not capped).
        package init(manifest: Manifest, connection: any ProviderConnection) {
            self.init(
                id: manifest.id, timeouts: manifest.timeouts, maximumAttachmentCount: manifest.maximumAttachmentCount,
                connection: connection)
        }
    }

    /// The live provider with this id, or an error that says why it cannot be used.
    ///
    /// Reads the registry as it is: while start-up loading runs, call it only once the provider's
    /// load finished (`whenLoaded`, `registry.waitForLoad(of:)`); a provider found through a
    /// collection session or an attached item's request already waited.
    package func provider(_ id: String, for use: Use) throws(RPCError) -> LiveProvider {
        let registry = self.registry
        let cap = registry.maximumCallMilliseconds
        let live = try registry.withEntry(id: id) { (entry: UnsafePointer<ProviderEntry>) throws(RPCError) -> LiveProvider in
            // `route`, not `manifest`: this runs per request (see `ProviderEntry.route`).
            let route = entry.pointee.route
            if route.status == .quarantined {
                let reason = entry.pointee.unavailability ?? Unavailability(code: "quarantined", message: "It is quarantined; call providers/retry.")
                throw RPCError(
                    .providerUnavailable, "Provider '\(id)' is unavailable: \(reason.message)",
                    data: ["providerId": .string(id), "reason": reason.json])
            }
            if route.status == .failed, let error = entry.pointee.loadError {
                throw RPCError(
                    .providerLoadFailed, "Provider '\(id)' could not be loaded: \(error.message)",
                    data: ["providerId": .string(id), "code": .string(error.code), "hint": .string(error.hint)])
            }
            if use != .item, let reason = entry.pointee.unavailability {
                throw RPCError(
                    .providerUnavailable, "Provider '\(id)' is unavailable: \(reason.message)",
                    data: ["providerId": .string(id), "reason": reason.json])
            }
            guard let connection = route.connection else {
                let reason = entry.pointee.unavailability ?? .provider("It is not loaded.")
                throw RPCError(
                    .providerUnavailable, "Provider '\(id)' is unavailable: \(reason.message)",
                    data: ["providerId": .string(id), "reason": reason.json])
            }
            switch (use, route.collection) {
            case (.form, .programmatic):
                throw RPCError(.collectionNotSupported, "Provider '\(id)' has no collector form; use collect/make.", data: ["providerId": .string(id), "collection": "programmatic"])
            case (.programmatic, .form):
                throw RPCError(.collectionNotSupported, "Provider '\(id)' collects through a form; use collect/start.", data: ["providerId": .string(id), "collection": "form"])
            default:
                break
            }
            return LiveProvider(
                id: route.id ?? id, timeouts: route.timeouts.capped(at: cap),
                maximumAttachmentCount: route.maximumAttachmentCount, connection: connection)
        }
        guard let live else {
            throw RPCError(.providerNotFound, "No provider has id '\(id)'. Call providers/list to see the ids.", data: ["providerId": .string(id)])
        }
        return live
    }

    /// Checks that an item a provider produced can be routed back to it.
    package func checkItem(_ item: JSONValue, from providerID: String) throws(RPCError) {
        guard case .object(let object) = item else {
            throw RPCError(.providerBadReply, "Provider '\(providerID)' produced an item that is not an object.")
        }
        for key in ["id", "providerId", "type", "displayName"] where object[key]?.stringValue == nil {
            throw RPCError(.providerBadReply, "Provider '\(providerID)' produced an item without a string '\(key)'.")
        }
        guard object["providerId"]?.stringValue == providerID else {
            throw RPCError(
                .providerBadReply,
                "Provider '\(providerID)' produced an item whose providerId is '\(object["providerId"]?.stringValue ?? "")'; it must be its own id.")
        }
    }

    /// The `providers/list` result.
    package func providersList(composer: Composer? = nil) -> ProvidersListResult {
        let locale = client?.locale
        return ProvidersListResult(providers: registry.entries(locale: locale).map { entry in
            var description = ProviderEntryJSON.description(for: entry, locale: locale, configuration: configuration)
            if let composer {
                description.canAttach = false
                if !entry.isAvailable {
                    description.attachBlocked = [
                        "code": .number(Double(ErrorCode.providerUnavailable.rawValue)),
                        "message": .string(entry.unavailability?.message ?? "The provider is not loaded."),
                    ]
                } else if let manifest = entry.manifest {
                    do throws(RPCError) {
                        try ComposerPolicy.checkCanAttach(
                            to: composer, providerID: manifest.id, providerLimit: manifest.maximumAttachmentCount, encodedBytes: 0)
                        description.canAttach = true
                    } catch {
                        var blocked: JSONObject = ["code": .number(Double(error.code.rawValue)), "message": .string(error.message)]
                        for (key, value) in error.data?.objectValue ?? JSONObject() { blocked[key] = value }
                        description.attachBlocked = blocked
                    }
                }
            }
            return description
        })
    }

    // MARK: Forwarding

    /// A call to `provider` with its deadline (the manifest's timeout for `method`, capped), the
    /// host's output limits and the request's notification channel: `$/progress` goes to the
    /// client when it passed `progressToken` and speaks version 2, `$/log` to the host's log and,
    /// under version 2, to the client as `log/message` within its level. `start` sends it.
    func providerCall(_ provider: LiveProvider, method: String, progressToken: ProgressToken?, sink: ProviderCall.Sink) -> ProviderCall {
        let v2 = speaksVersion2.load(ordering: .acquiring)
        return ProviderCall(
            sink: sink, providerID: provider.id, method: method, timeout: Self.timeout(for: method, in: provider.timeouts),
            connection: provider.connection, limits: configuration.outputLimits, messageLimit: configuration.maximumMessageBytes,
            token: v2 ? progressToken : nil, forwardsLogs: v2, client: self)
    }

    /// Whether raw bytes contain `\n` or `\r` (which NDJSON framing cannot carry).
    static func containsLineBreak(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, 0x0A, bytes.count) != nil || memchr(base, 0x0D, bytes.count) != nil
    }

    /// The timeout of a call of `method`, in milliseconds.
    static func timeout(for method: String, in timeouts: CallTimeouts) -> Int {
        switch method {
        case ItemPreviewRequest.method, ItemPreviewManyRequest.method, ItemDescribeRequest.method, ProviderAvailabilityRequest.method,
            ProviderInfoRequest.method:
            timeouts.preview
        case ItemDetailRequest.method: timeouts.detail
        case ItemEncodeRequest.method: timeouts.encode
        default: timeouts.collect
        }
    }

    /// The error of a provider call whose deadline passed.
    static func timedOutError(providerID: String, method: String, timeout: Int) -> RPCError {
        RPCError(
            .providerTimedOut, "Provider '\(providerID)' did not answer \(method) within \(timeout) ms.",
            data: ["providerId": .string(providerID), "method": .string(method), "timeoutMs": .number(Double(timeout))])
    }

    /// Maps a provider's error to what the client sees: host-made errors keep their code, a
    /// provider's `-32602` keeps its code, and every other provider error becomes `-32013`; all
    /// name the provider in `data.providerId`.
    static func hostError(_ error: RPCError, fromHost: Bool, providerID: String, method: String) -> RPCError {
        if fromHost {
            switch error.code {
            case .providerBadReply:
                return RPCError(
                    .providerBadReply, "Provider '\(providerID)' sent a bad reply to \(method): \(error.message).",
                    data: ["providerId": .string(providerID), "method": .string(method)])
            default:
                return error
            }
        }
        var data: JSONObject = ["providerId": .string(providerID)]
        if error.code == .invalidParams {
            if let providerData = error.data { data["providerData"] = providerData }
            return RPCError(.invalidParams, error.message, data: .object(data))
        }
        data["providerCode"] = .number(Double(error.code.rawValue))
        if let providerData = error.data { data["providerData"] = providerData }
        return RPCError(.providerError, "Provider '\(providerID)' failed \(method): \(error.message)", data: .object(data))
    }
}
