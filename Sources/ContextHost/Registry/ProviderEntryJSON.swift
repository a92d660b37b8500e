import ContextProviderKit

/// How a provider is described to clients (`providers/list`) and in `context-host list --json`.
package enum ProviderEntryJSON {
    /// - Parameter configuration: for origins taken from settings and whether secrets are set.
    package static func json(for entry: ProviderEntry, locale: String?, configuration: HostConfiguration? = nil) -> JSONValue {
        var object = JSONObject()
        if let manifest = entry.manifest {
            object["id"] = .string(manifest.id)
            object["title"] = .string(manifest.title.resolve(locale: locale))
            if let summary = manifest.summary { object["description"] = .string(summary.resolve(locale: locale)) }
            object["iconName"] = .string(manifest.iconName)
            object["version"] = .string(manifest.version.description)
            object["priority"] = .number(Double(entry.effectivePriority))
            if entry.priorityOverride != nil { object["manifestPriority"] = .number(Double(manifest.priority)) }
            object["maximumAttachmentCount"] = .number(Double(manifest.maximumAttachmentCount))
            object["usesContainerPanel"] = .bool(manifest.usesContainerPanel)
            object["collection"] = .string(manifest.collection.rawValue)
            object["isolation"] = .string(manifest.isolation.rawValue)
            if let effective = entry.effectiveIsolation { object["effectiveIsolation"] = .string(effective.rawValue) }
            if let worker = entry.connection as? WorkerConnection {
                // Supervision (docs/security.md): where the worker is, restarts and the last crash.
                object["worker"] = .string(worker.workerState.rawValue)
                if let pid = worker.workerPID { object["workerPid"] = .number(Double(pid)) }
                object["restarts"] = .number(Double(worker.restarts))
                object["crashes"] = .number(Double(worker.recentCrashes))
                if let crash = worker.lastCrash { object["lastCrash"] = .string(crash) }
                // What the worker's sandbox enforces, layer by layer (docs/security.md, "Sandbox"),
                // once a worker has started in this run.
                if let report = worker.sandboxReport {
                    object["sandbox"] = report.json
                } else if !worker.isSandboxed {
                    object["sandbox"] = SandboxReport(policy: "off", missing: [.init(layer: "sandbox", reason: "the host runs with --sandbox off")]).json
                }
            } else if entry.effectiveIsolation == .inProcess {
                object["sandbox"] = SandboxReport(policy: "none", missing: [.init(
                    layer: "worker", reason: "runs inside the host process (trusted or --isolation in-process): no confinement")]).json
            }
            if let note = entry.isolationNote { object["isolationNote"] = .string(note) }
            object["permissions"] = .array(manifest.availability.permissions.map { .string($0.rawValue) })
            egress(manifest, configuration: configuration, into: &object)
        }
        object["status"] = .string(entry.status.rawValue)
        object["available"] = .bool(entry.isAvailable)
        if entry.status == .loaded || entry.status == .quarantined {
            object["availabilityState"] = .string(entry.availabilityState.name)
        }
        if let reason = entry.unavailability { object["unavailableReason"] = reason.json }
        if let error = entry.loadError {
            object["error"] = ["code": .string(error.code), "message": .string(error.message), "hint": .string(error.hint)]
        }
        if !entry.diagnostics.isEmpty {
            object["diagnostics"] = .array(entry.diagnostics.map { diagnostic in
                [
                    "file": .string(diagnostic.file), "line": .number(Double(diagnostic.line)),
                    "column": .number(Double(diagnostic.column)), "field": .string(diagnostic.fieldPath),
                    "code": .string(diagnostic.code.rawValue), "message": .string(diagnostic.message),
                    "hint": .string(diagnostic.hint),
                ]
            })
        }
        object["manifestPath"] = .string(entry.manifestPath)
        if let path = entry.libraryPath { object["libraryPath"] = .string(path) }
        return .object(object)
    }

    /// `origins`, `secrets` (set or not, never a value) and `networkAccess`.
    static func egress(_ manifest: Manifest, configuration: HostConfiguration?, into object: inout JSONObject) {
        let raw = manifest.availability.permissions.contains(.network)
        let origins = manifest.network?.origins ?? []
        object["networkAccess"] = .string(raw ? "raw" : origins.isEmpty ? "none" : "brokered")
        if !origins.isEmpty {
            let settings = configuration.flatMap { try? $0.resolvedSettings(for: manifest) } ?? (try? manifest.resolvedSettings()) ?? JSONObject()
            object["origins"] = .array(origins.map { rule in
                var entry: JSONObject = ["privateAddresses": .bool(rule.privateAddresses)]
                switch rule.source {
                case .fixed(let origin): entry["origin"] = .string(origin)
                case .setting(let name):
                    entry["setting"] = .string(name)
                    if let text = settings[name]?.stringValue, let url = try? HTTPSURL(parsing: text) { entry["origin"] = .string(url.origin) }
                }
                return .object(entry)
            })
        }
        let secretNames = manifest.settings.filter { $0.type == .secret }.map(\.name)
        if !secretNames.isEmpty {
            var secrets = JSONObject()
            for name in secretNames { secrets[name] = .bool(configuration?.secrets?.isSet(provider: manifest.id, name: name) ?? false) }
            object["secrets"] = .object(secrets)
        }
    }
}
