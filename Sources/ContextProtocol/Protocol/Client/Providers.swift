/// `providers/list`: every provider the host knows, in the order a client should offer them.
/// With `composerId`, each entry also says whether it can still be attached there.
public struct ProvidersListRequest: RequestType, WireObject, Hashable {
    public typealias Response = ProvidersListResult
    public static let method = "providers/list"
    public static let summary = "Every provider the host knows, in the order a client should offer them, with availability."
    public static var errors: [ErrorCode] { [.composerNotFound] }

    /// Also answer `canAttach`/`attachBlocked` for this composer.
    public var composerId: String?

    /// Creates the params.
    public init(composerId: String? = nil) { self.composerId = composerId }

    public static let wireFields = WireFields<Self>(Self(), params: true, [
        .string("composerId", \.composerId, "Also say whether each provider can still be attached to this composer."),
    ])
}

/// `providers/list`'s answer.
public struct ProvidersListResult: WireValue, WireObject, Hashable {
    /// The providers, in order.
    public var providers: [ProviderDescription]

    /// Creates a result.
    public init(providers: [ProviderDescription]) { self.providers = providers }

    public static let wireFields = WireFields<Self>(Self(providers: []), [
        .values("providers", \.providers, schema: Schema.array(Schema.shared(ProviderDescription.self))),
    ])
}

/// One `providers/list` entry. Which members are present depends on the provider's status
/// (docs/protocol.md, `providers/list`), so every member is optional; members this library does
/// not know are kept in `extra`.
public struct ProviderDescription: SharedWireValue, WireObject, Hashable {
    public static let schemaName = "ProviderDescription"

    /// Reverse-DNS id (accepted manifests).
    public var id: String?
    /// Localized title.
    public var title: String?
    /// What the provider gives, localized (the manifest's `description`), when it has one.
    public var summary: String?
    /// Symbol name.
    public var iconName: String?
    /// Provider version.
    public var version: String?
    /// Effective priority, higher first.
    public var priority: Int?
    /// The manifest's own priority, when the host configuration overrides it.
    public var manifestPriority: Int?
    /// Per-message limit for this provider's items.
    public var maximumAttachmentCount: Int?
    /// Show the collector in a container panel.
    public var usesContainerPanel: Bool?
    /// `form`, `programmatic` or `both`.
    public var collection: String?
    /// `in-process` or `process`, as in the manifest.
    public var isolation: String?
    /// How it actually runs.
    public var effectiveIsolation: String?
    /// Why it runs elsewhere than its manifest asks.
    public var isolationNote: String?
    /// What confines it: `{policy, enforced, missing}`.
    public var sandbox: JSONObject?
    /// Where its worker is: `stopped`, `starting`, `running`, `stopping`, `restarting`, `quarantined`.
    public var worker: String?
    /// The pid of its worker, while one runs.
    public var workerPid: Int?
    /// Worker restarts after crashes.
    public var restarts: Int?
    /// Crashes within the crash window.
    public var crashes: Int?
    /// The last crash, e.g. `SIGSEGV in item/preview`.
    public var lastCrash: String?
    /// `current`, `cached`, `unchecked` or `checking`.
    public var availabilityState: String?
    /// Permissions it needs.
    public var permissions: [String]?
    /// The origins it may fetch from through the host (the manifest's `network.origins`):
    /// `{origin?, setting?, privateAddresses}`; `origin` is absent for a setting with no value.
    public var origins: [JSONObject]?
    /// Its secret settings and whether each is set (`{name: true}`); never a value.
    public var secrets: JSONObject?
    /// `raw` (the `network` permission: sockets to anywhere, the broader grant), `brokered`
    /// (only the declared origins, through the host) or `none`.
    public var networkAccess: String?
    /// `loaded`, `discovered`, `failed`, `rejected`, `disabled` or `quarantined`.
    public var status: String?
    /// Whether a client should offer it for new items.
    public var available: Bool?
    /// Why it is unavailable.
    public var unavailableReason: ProviderProblem?
    /// Why its library failed to load: `{code, message, hint}`.
    public var error: ProviderLoadError?
    /// Positioned manifest errors.
    public var diagnostics: [JSONObject]?
    /// The manifest file.
    public var manifestPath: String?
    /// The library file loaded.
    public var libraryPath: String?
    /// With `composerId`: whether an item of it can still be attached.
    public var canAttach: Bool?
    /// With `composerId`, when `canAttach` is false: `{code, message, …data}`.
    public var attachBlocked: JSONObject?
    /// Members this library does not know, kept as sent.
    public var extra: JSONObject

    /// An entry with the members given.
    public init(id: String? = nil, title: String? = nil, status: String? = nil, available: Bool? = nil, manifestPath: String? = nil, extra: JSONObject = JSONObject()) {
        self.id = id
        self.title = title
        self.status = status
        self.available = available
        self.manifestPath = manifestPath
        self.extra = extra
    }

    public static let wireFields = WireFields<Self>(Self(), extra: \.extra, required: ["status", "available", "manifestPath"], members)

    private static let members: [WireField<ProviderDescription>] = [
        .string("id", \.id, "Reverse-DNS provider id (accepted manifests)."),
        .string("title", \.title, "Localized for the client's locale."),
        .string("description", \.summary, "What the provider gives (the manifest's description), localized; absent when the manifest has none."),
        .string("iconName", \.iconName),
        .string("version", \.version),
        .int("priority", \.priority, "The effective priority, higher first."),
        .int("manifestPriority", \.manifestPriority, "The manifest's own priority, when the host configuration sets one."),
        .int("maximumAttachmentCount", \.maximumAttachmentCount),
        .bool("usesContainerPanel", \.usesContainerPanel),
        .string("collection", \.collection, schema: Schema.oneOf(["form", "programmatic", "both"])),
        .string("isolation", \.isolation, schema: Schema.oneOf(["in-process", "process"])),
        .string("effectiveIsolation", \.effectiveIsolation, schema: Schema.oneOf(["in-process", "process"])),
        .string("isolationNote", \.isolationNote),
        .object("sandbox", \.sandbox, schema: Schema.object([
            "policy": Schema.string(), "enforced": Schema.array(Schema.string()),
            "missing": Schema.array(Schema.object(["layer": Schema.string(), "reason": Schema.string()])),
        ])),
        .string("worker", \.worker, schema: Schema.oneOf(["stopped", "starting", "running", "stopping", "restarting", "quarantined"])),
        .int("workerPid", \.workerPid),
        .int("restarts", \.restarts),
        .int("crashes", \.crashes),
        .string("lastCrash", \.lastCrash),
        .string("availabilityState", \.availabilityState, schema: Schema.oneOf(["current", "cached", "unchecked", "checking"])),
        .strings("permissions", \.permissions),
        .objects("origins", \.origins, schema: Schema.array(Schema.object([
            "origin": Schema.string("https://host[:port]; absent when taken from a setting that has no value."),
            "setting": Schema.string("The setting the origin is taken from."),
            "privateAddresses": Schema.boolean("Whether loopback and private addresses are allowed for it."),
        ]), "Origins it may fetch from through the host (manifest network.origins).")),
        .object("secrets", \.secrets, schema: Schema.anyObject("Its secret settings: name → whether it is set. Never a value.")),
        .string("networkAccess", \.networkAccess, schema: Schema.oneOf(["raw", "brokered", "none"])),
        .string("status", \.status, schema: Schema.oneOf(["loaded", "discovered", "failed", "rejected", "disabled", "quarantined"])),
        .bool("available", \.available, "Offer only available providers for new items."),
        .value("unavailableReason", \.unavailableReason),
        .value("error", \.error),
        .objects("diagnostics", \.diagnostics, schema: Schema.array(Schema.object([
            "file": Schema.string(), "line": Schema.integer(), "column": Schema.integer(), "field": Schema.string(),
            "code": Schema.string(), "message": Schema.string(), "hint": Schema.string(),
        ]))),
        .string("manifestPath", \.manifestPath),
        .string("libraryPath", \.libraryPath),
        .bool("canAttach", \.canAttach, "With composerId: whether an item of it can still be attached."),
        .object("attachBlocked", \.attachBlocked, schema: Schema.anyObject("With composerId, when canAttach is false: {code, message, …data}.")),
    ]
}

/// Why a provider or an item's provider cannot be used: `{code, message}`.
public struct ProviderProblem: WireValue, WireObject, Hashable {
    /// e.g. `platform`, `permission`, `provider`, `quarantined`.
    public var code: String
    /// In words a user can act on.
    public var message: String

    /// Creates a problem.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public static let wireFields = WireFields<Self>(Self(code: "", message: ""), [.string("code", \.code), .string("message", \.message)])
}

/// Why a provider's library could not be loaded: `{code, message, hint}`.
public struct ProviderLoadError: WireValue, WireObject, Hashable {
    /// e.g. `library-not-found`, `abi-version-mismatch`, `worker-start-timeout`.
    public var code: String
    /// What happened.
    public var message: String
    /// What to do about it.
    public var hint: String?

    /// Creates a load error.
    public init(code: String, message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    public static let wireFields = WireFields<Self>(Self(code: "", message: ""), [
        .string("code", \.code), .string("message", \.message), .string("hint", \.hint),
    ])
}

/// `providers/retry`: ends a provider's quarantine and starts a new worker.
public struct ProvidersRetryRequest: RequestType, WireObject, Hashable {
    public typealias Response = ProvidersRetryResult
    public static let method = "providers/retry"
    public static let summary = "Ends a provider's quarantine: forgets its crash history and starts a new worker."
    public static var errors: [ErrorCode] { [.providerNotFound, .providerLoadFailed, .invalidParams, .requestCancelled] }

    /// The provider.
    public var providerId: String
    /// Receives `$/progress` for this request.
    public var progressToken: ProgressToken?

    /// Creates the params.
    public init(providerId: String, progressToken: ProgressToken? = nil) {
        self.providerId = providerId
        self.progressToken = progressToken
    }

    public static let wireFields = WireFields<Self>(Self(providerId: ""), [.string("providerId", \.providerId), .value("progressToken", \.progressToken)])
}

/// `providers/retry`'s answer: the provider's entry as in `providers/list`.
public struct ProvidersRetryResult: WireValue, WireObject, Hashable {
    /// The provider's entry.
    public var provider: ProviderDescription

    /// Creates a result.
    public init(provider: ProviderDescription) { self.provider = provider }

    public static let wireFields = WireFields<Self>(Self(provider: ProviderDescription()), [
        .value("provider", \.provider, schema: Schema.shared(ProviderDescription.self)),
    ])
}

/// `providers/changed` (host → client): the provider list changed while serving.
public struct ProvidersChangedNotification: NotificationType, WireObject, Hashable {
    public static let method = "providers/changed"
    public static let summary = "The provider list changed: a manifest changed, a provider was quarantined or retried, or a worker's availability check answered."

    /// Providers that are new (ids; a rejected manifest by its path).
    public var added: [String]
    /// Providers whose entry was replaced.
    public var changed: [String]
    /// Providers that are gone.
    public var removed: [String]
    /// The whole new list, as `providers/list` answers it.
    public var providers: [ProviderDescription]

    /// Creates the params.
    public init(added: [String] = [], changed: [String] = [], removed: [String] = [], providers: [ProviderDescription]) {
        self.added = added
        self.changed = changed
        self.removed = removed
        self.providers = providers
    }

    public static let wireFields = WireFields<Self>(Self(providers: []), required: ["added", "changed", "removed", "providers"], [
        .strings("added", \.added, "Providers that are new (a rejected manifest is named by its path).", whenAbsent: []),
        .strings("changed", \.changed, "Providers whose entry was replaced.", whenAbsent: []),
        .strings("removed", \.removed, "Providers that are gone.", whenAbsent: []),
        .values("providers", \.providers, schema: Schema.array(Schema.shared(ProviderDescription.self), "The whole new list, as providers/list answers it."), whenAbsent: []),
    ])
}
