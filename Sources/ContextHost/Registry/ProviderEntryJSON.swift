import ContextProtocol
import ContextProviderKit

/// How a provider is described to clients (`providers/list`) and in `context-host list --json`.
package enum ProviderEntryJSON {
    /// - Parameter configuration: for origins taken from settings and whether secrets are set.
    package static func json(for entry: ProviderEntry, locale: String?, configuration: HostConfiguration? = nil) -> JSONValue {
        description(for: entry, locale: locale, configuration: configuration).json
    }

    /// The entry as `providers/list` describes it.
    package static func description(for entry: ProviderEntry, locale: String?, configuration: HostConfiguration? = nil) -> ProviderDescription {
        var description = ProviderDescription(status: entry.status.rawValue, available: entry.isAvailable, manifestPath: entry.manifestPath)
        if let manifest = entry.manifest {
            description.id = manifest.id
            description.title = manifest.title.resolve(locale: locale)
            description.summary = manifest.summary?.resolve(locale: locale)
            description.iconName = manifest.iconName
            description.version = manifest.version.description
            description.priority = entry.effectivePriority
            if entry.priorityOverride != nil { description.manifestPriority = manifest.priority }
            description.maximumAttachmentCount = manifest.maximumAttachmentCount
            description.usesContainerPanel = manifest.usesContainerPanel
            description.collection = manifest.collection.rawValue
            description.isolation = manifest.isolation.rawValue
            description.effectiveIsolation = entry.effectiveIsolation?.rawValue
            if let worker = entry.connection as? WorkerConnection {
                // Supervision (docs/security.md): where the worker is, restarts and the last crash.
                description.worker = worker.workerState.rawValue
                description.workerPid = worker.workerPID.map(Int.init)
                description.restarts = worker.restarts
                description.crashes = worker.recentCrashes
                description.lastCrash = worker.lastCrash
                // What the worker's sandbox enforces, layer by layer (docs/security.md, "Sandbox"),
                // once a worker has started in this run.
                if let report = worker.sandboxReport {
                    description.sandbox = report.json.objectValue
                } else if !worker.isSandboxed {
                    description.sandbox = SandboxReport(policy: "off", missing: [.init(layer: "sandbox", reason: "the host runs with --sandbox off")]).json.objectValue
                }
            } else if entry.effectiveIsolation == .inProcess {
                description.sandbox = SandboxReport(policy: "none", missing: [.init(
                    layer: "worker", reason: "runs inside the host process (trusted or --isolation in-process): no confinement")]).json.objectValue
            }
            description.isolationNote = entry.isolationNote
            description.permissions = manifest.availability.permissions.map(\.rawValue)
            egress(manifest, configuration: configuration, into: &description)
        }
        if entry.status == .loaded || entry.status == .quarantined {
            description.availabilityState = entry.availabilityState.name
        }
        description.unavailableReason = entry.unavailability.map { ProviderProblem(code: $0.code, message: $0.message) }
        description.error = entry.loadError.map { ProviderLoadError(code: $0.code, message: $0.message, hint: $0.hint) }
        if !entry.diagnostics.isEmpty {
            description.diagnostics = entry.diagnostics.map { diagnostic in
                [
                    "file": .string(diagnostic.file), "line": .number(Double(diagnostic.line)),
                    "column": .number(Double(diagnostic.column)), "field": .string(diagnostic.fieldPath),
                    "code": .string(diagnostic.code.rawValue), "message": .string(diagnostic.message),
                    "hint": .string(diagnostic.hint),
                ]
            }
        }
        description.libraryPath = entry.libraryPath
        return description
    }

    /// `origins`, `secrets` (set or not, never a value) and `networkAccess`.
    static func egress(_ manifest: Manifest, configuration: HostConfiguration?, into description: inout ProviderDescription) {
        let raw = manifest.availability.permissions.contains(.network)
        let origins = manifest.network?.origins ?? []
        description.networkAccess = raw ? "raw" : origins.isEmpty ? "none" : "brokered"
        if !origins.isEmpty {
            let settings = configuration.flatMap { try? $0.resolvedSettings(for: manifest) } ?? (try? manifest.resolvedSettings()) ?? JSONObject()
            description.origins = origins.map { rule in
                var entry: JSONObject = ["privateAddresses": .bool(rule.privateAddresses)]
                switch rule.source {
                case .fixed(let origin): entry["origin"] = .string(origin)
                case .setting(let name):
                    entry["setting"] = .string(name)
                    if let text = settings[name]?.stringValue, let url = try? HTTPSURL(parsing: text) { entry["origin"] = .string(url.origin) }
                }
                return entry
            }
        }
        let secretNames = manifest.settings.filter { $0.type == .secret }.map(\.name)
        if !secretNames.isEmpty {
            var secrets = JSONObject()
            for name in secretNames { secrets[name] = .bool(configuration?.secrets?.isSet(provider: manifest.id, name: name) ?? false) }
            description.secrets = secrets
        }
    }
}
