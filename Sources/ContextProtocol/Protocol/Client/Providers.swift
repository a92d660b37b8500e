/// `providers/list`: every provider the host knows, in the order a client should offer them.
/// With `composerId`, each entry also says whether it can still be attached there.
public struct ProvidersListRequest: RequestType, Hashable {
    public typealias Response = ProvidersListResult
    public static let method = "providers/list"
    public static let summary = "Every provider the host knows, in the order a client should offer them, with availability."
    public static var errors: [ErrorCode] { [.composerNotFound] }

    /// Also answer `canAttach`/`attachBlocked` for this composer.
    public var composerId: String?

    /// Creates the params.
    public init(composerId: String? = nil) { self.composerId = composerId }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader.params(json, path: path)
        composerId = try reader.optionalString("composerId")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("composerId", composerId)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["composerId": Schema.string("Also say whether each provider can still be attached to this composer.")])
    }
}

/// `providers/list`'s answer.
public struct ProvidersListResult: WireValue, Hashable {
    /// The providers, in order.
    public var providers: [ProviderDescription]

    /// Creates a result.
    public init(providers: [ProviderDescription]) { self.providers = providers }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        providers = try reader.decodeArray("providers")
    }

    public var json: JSONValue { ["providers": .array(providers.map(\.json))] }

    public static var schema: JSONValue {
        Schema.object(["providers": Schema.array(Schema.shared(ProviderDescription.self))], required: ["providers"])
    }
}

/// One `providers/list` entry. Which members are present depends on the provider's status
/// (docs/protocol.md, `providers/list`), so every member is optional; members this library does
/// not know are kept in `extra`.
public struct ProviderDescription: SharedWireValue, Hashable {
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

    static let knownMembers: Set<String> = [
        "id", "title", "description", "iconName", "version", "priority", "manifestPriority", "maximumAttachmentCount", "usesContainerPanel",
        "collection", "isolation", "effectiveIsolation", "isolationNote", "sandbox", "worker", "workerPid", "restarts", "crashes",
        "lastCrash", "availabilityState", "permissions", "origins", "secrets", "networkAccess", "status", "available", "unavailableReason", "error", "diagnostics",
        "manifestPath", "libraryPath", "canAttach", "attachBlocked",
    ]

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        id = try reader.optionalString("id")
        title = try reader.optionalString("title")
        summary = try reader.optionalString("description")
        iconName = try reader.optionalString("iconName")
        version = try reader.optionalString("version")
        priority = try reader.optionalInt("priority")
        manifestPriority = try reader.optionalInt("manifestPriority")
        maximumAttachmentCount = try reader.optionalInt("maximumAttachmentCount")
        usesContainerPanel = try reader.optionalBool("usesContainerPanel")
        collection = try reader.optionalString("collection")
        isolation = try reader.optionalString("isolation")
        effectiveIsolation = try reader.optionalString("effectiveIsolation")
        isolationNote = try reader.optionalString("isolationNote")
        sandbox = try reader.optionalRawObject("sandbox")
        worker = try reader.optionalString("worker")
        workerPid = try reader.optionalInt("workerPid")
        restarts = try reader.optionalInt("restarts")
        crashes = try reader.optionalInt("crashes")
        lastCrash = try reader.optionalString("lastCrash")
        availabilityState = try reader.optionalString("availabilityState")
        permissions = try reader.optionalStrings("permissions")
        origins = try reader.optionalRawObjects("origins")
        secrets = try reader.optionalRawObject("secrets")
        networkAccess = try reader.optionalString("networkAccess")
        status = try reader.optionalString("status")
        available = try reader.optionalBool("available")
        unavailableReason = try reader.optionalDecode("unavailableReason")
        error = try reader.optionalDecode("error")
        diagnostics = try reader.optionalRawObjects("diagnostics")
        manifestPath = try reader.optionalString("manifestPath")
        libraryPath = try reader.optionalString("libraryPath")
        canAttach = try reader.optionalBool("canAttach")
        attachBlocked = try reader.optionalRawObject("attachBlocked")
        extra = reader.object.removing(Self.knownMembers)
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.set("id", id)
        object.set("title", title)
        object.set("description", summary)
        object.set("iconName", iconName)
        object.set("version", version)
        object.set("priority", priority)
        object.set("manifestPriority", manifestPriority)
        object.set("maximumAttachmentCount", maximumAttachmentCount)
        object.set("usesContainerPanel", usesContainerPanel)
        object.set("collection", collection)
        object.set("isolation", isolation)
        object.set("effectiveIsolation", effectiveIsolation)
        object.set("isolationNote", isolationNote)
        object.setObject("sandbox", sandbox)
        object.set("worker", worker)
        object.set("workerPid", workerPid)
        object.set("restarts", restarts)
        object.set("crashes", crashes)
        object.set("lastCrash", lastCrash)
        object.set("availabilityState", availabilityState)
        object.setStrings("permissions", permissions)
        if let origins { object["origins"] = .array(origins.map(JSONValue.object)) }
        object.setObject("secrets", secrets)
        object.set("networkAccess", networkAccess)
        object.set("status", status)
        object.set("available", available)
        object.set("unavailableReason", unavailableReason)
        object.set("error", error)
        if let diagnostics { object["diagnostics"] = .array(diagnostics.map(JSONValue.object)) }
        object.set("manifestPath", manifestPath)
        object.set("libraryPath", libraryPath)
        object.set("canAttach", canAttach)
        object.setObject("attachBlocked", attachBlocked)
        object.append(extra)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object([
            "id": Schema.string("Reverse-DNS provider id (accepted manifests)."),
            "title": Schema.string("Localized for the client's locale."),
            "description": Schema.string("What the provider gives (the manifest's description), localized; absent when the manifest has none."),
            "iconName": Schema.string(),
            "version": Schema.string(),
            "priority": Schema.integer("The effective priority, higher first."),
            "manifestPriority": Schema.integer("The manifest's own priority, when the host configuration sets one."),
            "maximumAttachmentCount": Schema.integer(),
            "usesContainerPanel": Schema.boolean(),
            "collection": Schema.oneOf(["form", "programmatic", "both"]),
            "isolation": Schema.oneOf(["in-process", "process"]),
            "effectiveIsolation": Schema.oneOf(["in-process", "process"]),
            "isolationNote": Schema.string(),
            "sandbox": Schema.object([
                "policy": Schema.string(), "enforced": Schema.array(Schema.string()),
                "missing": Schema.array(Schema.object(["layer": Schema.string(), "reason": Schema.string()])),
            ]),
            "worker": Schema.oneOf(["stopped", "starting", "running", "stopping", "restarting", "quarantined"]),
            "workerPid": Schema.integer(),
            "restarts": Schema.integer(),
            "crashes": Schema.integer(),
            "lastCrash": Schema.string(),
            "availabilityState": Schema.oneOf(["current", "cached", "unchecked", "checking"]),
            "permissions": Schema.array(Schema.string()),
            "origins": Schema.array(Schema.object([
                "origin": Schema.string("https://host[:port]; absent when taken from a setting that has no value."),
                "setting": Schema.string("The setting the origin is taken from."),
                "privateAddresses": Schema.boolean("Whether loopback and private addresses are allowed for it."),
            ]), "Origins it may fetch from through the host (manifest network.origins)."),
            "secrets": Schema.anyObject("Its secret settings: name → whether it is set. Never a value."),
            "networkAccess": Schema.oneOf(["raw", "brokered", "none"]),
            "status": Schema.oneOf(["loaded", "discovered", "failed", "rejected", "disabled", "quarantined"]),
            "available": Schema.boolean("Offer only available providers for new items."),
            "unavailableReason": ProviderProblem.schema,
            "error": ProviderLoadError.schema,
            "diagnostics": Schema.array(Schema.object([
                "file": Schema.string(), "line": Schema.integer(), "column": Schema.integer(), "field": Schema.string(),
                "code": Schema.string(), "message": Schema.string(), "hint": Schema.string(),
            ])),
            "manifestPath": Schema.string(),
            "libraryPath": Schema.string(),
            "canAttach": Schema.boolean("With composerId: whether an item of it can still be attached."),
            "attachBlocked": Schema.anyObject("With composerId, when canAttach is false: {code, message, …data}."),
        ], required: ["status", "available", "manifestPath"])
    }
}

/// Why a provider or an item's provider cannot be used: `{code, message}`.
public struct ProviderProblem: WireValue, Hashable {
    /// e.g. `platform`, `permission`, `provider`, `quarantined`.
    public var code: String
    /// In words a user can act on.
    public var message: String

    /// Creates a problem.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        code = try reader.string("code")
        message = try reader.string("message")
    }

    public var json: JSONValue { ["code": .string(code), "message": .string(message)] }

    public static var schema: JSONValue {
        Schema.object(["code": Schema.string(), "message": Schema.string()], required: ["code", "message"])
    }
}

/// Why a provider's library could not be loaded: `{code, message, hint}`.
public struct ProviderLoadError: WireValue, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        code = try reader.string("code")
        message = try reader.string("message")
        hint = try reader.optionalString("hint")
    }

    public var json: JSONValue {
        var object: JSONObject = ["code": .string(code), "message": .string(message)]
        object.set("hint", hint)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["code": Schema.string(), "message": Schema.string(), "hint": Schema.string()], required: ["code", "message"])
    }
}

/// `providers/retry`: ends a provider's quarantine and starts a new worker.
public struct ProvidersRetryRequest: RequestType, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        providerId = try reader.string("providerId")
        progressToken = try reader.optionalDecode("progressToken")
    }

    public var json: JSONValue {
        var object: JSONObject = ["providerId": .string(providerId)]
        object.set("progressToken", progressToken)
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(["providerId": Schema.string(), "progressToken": ProgressToken.schema], required: ["providerId"])
    }
}

/// `providers/retry`'s answer: the provider's entry as in `providers/list`.
public struct ProvidersRetryResult: WireValue, Hashable {
    /// The provider's entry.
    public var provider: ProviderDescription

    /// Creates a result.
    public init(provider: ProviderDescription) { self.provider = provider }

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        provider = try reader.decode("provider")
    }

    public var json: JSONValue { ["provider": provider.json] }

    public static var schema: JSONValue { Schema.object(["provider": Schema.shared(ProviderDescription.self)], required: ["provider"]) }
}

/// `providers/changed` (host → client): the provider list changed while serving.
public struct ProvidersChangedNotification: NotificationType, Hashable {
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

    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        added = try reader.optionalStrings("added") ?? []
        changed = try reader.optionalStrings("changed") ?? []
        removed = try reader.optionalStrings("removed") ?? []
        providers = try reader.optionalDecodeArray("providers") ?? []
    }

    public var json: JSONValue {
        [
            "added": .array(added.map(JSONValue.string)), "changed": .array(changed.map(JSONValue.string)),
            "removed": .array(removed.map(JSONValue.string)), "providers": .array(providers.map(\.json)),
        ]
    }

    public static var schema: JSONValue {
        Schema.object([
            "added": Schema.array(Schema.string(), "Providers that are new (a rejected manifest is named by its path)."),
            "changed": Schema.array(Schema.string(), "Providers whose entry was replaced."),
            "removed": Schema.array(Schema.string(), "Providers that are gone."),
            "providers": Schema.array(Schema.shared(ProviderDescription.self), "The whole new list, as providers/list answers it."),
        ], required: ["added", "changed", "removed", "providers"])
    }
}
