import ContextProviderKit
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a reload changed, as the `providers/changed` notification reports it. Providers are named
/// by id; a rejected manifest (whose id is not trusted) by its `manifestPath`.
package struct ProviderChanges: Sendable, Equatable {
    package var added: [String] = []
    package var changed: [String] = []
    package var removed: [String] = []

    package init(added: [String] = [], changed: [String] = [], removed: [String] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    package var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty }
}

extension ProviderEntry {
    /// How `providers/changed` names this entry: the id, or the manifest path of a rejected manifest.
    package var changeKey: String { manifest?.id ?? manifestPath }

    /// Whether a live instance of this provider runs inside the host process.
    var runsInProcess: Bool {
        guard let connection else { return false }
        return effectiveIsolation == .inProcess || connection is InProcessConnection
    }
}

extension ProviderRegistry {
    /// Re-discovers the manifests and applies the difference to the registry: a new valid manifest
    /// is loaded for `client` and added, a changed one replaces its entry, a deleted one is removed
    /// (requests for it then get `providerNotFound`). Manifests are matched by file.
    ///
    /// In-process libraries are never unloaded, so when a changed manifest of an in-process
    /// provider points at another library, pins another `sha256`, or its library file changed on
    /// disk, the new manifest is recorded but the old instance keeps serving existing items, and the
    /// provider is unavailable with reason `restart-required`.
    ///
    /// Without a client (before `initialize`), new entries stay `discovered`. Waits for the loads
    /// `startLoading` started first, so it compares loaded entries. Call from one thread at a time
    /// (the manifest watcher's), never the RPC reader's.
    package func reload(client: ClientInfo?) -> ProviderChanges {
        waitForLoads()
        let catalog = Self.discoverCatalog(configuration, logger: logger)
        let fresh = Self.entries(from: catalog, configFile: configuration.providerOverrides)
        let current = state.withLock { $0 }
        recordLibraryStamps(current)

        var oldByPath: [String: ProviderEntry] = [:]
        for entry in current where oldByPath[entry.manifestPath] == nil { oldByPath[entry.manifestPath] = entry }
        let freshPaths = Set(fresh.map(\.manifestPath))

        var replacements: [String: ProviderEntry] = [:]
        var additions: [ProviderEntry] = []
        var removals: Set<String> = []
        var added: [String] = []
        var changed: [String] = []
        var removed: [String] = []
        for entry in fresh {
            if let old = oldByPath[entry.manifestPath] {
                if Self.sameDeclaration(old, entry) { continue }
                let prepared = prepare(entry, replacing: old, client: client)
                replacements[entry.manifestPath] = prepared
                if old.changeKey == prepared.changeKey {
                    changed.append(prepared.changeKey)
                } else {
                    removed.append(old.changeKey)
                    added.append(prepared.changeKey)
                }
            } else {
                let prepared = prepare(entry, replacing: nil, client: client)
                additions.append(prepared)
                added.append(prepared.changeKey)
            }
        }
        for old in current where !freshPaths.contains(old.manifestPath) {
            removals.insert(old.manifestPath)
            removed.append(old.changeKey)
        }
        if replacements.isEmpty && additions.isEmpty && removals.isEmpty { return ProviderChanges() }

        state.withLock { entries in
            entries = entries.compactMap { entry in
                if removals.contains(entry.manifestPath) { return nil }
                return replacements[entry.manifestPath] ?? entry
            }
            entries.append(contentsOf: additions)
        }
        for entry in Array(replacements.values) + additions where entry.runsInProcess {
            if let path = entry.libraryPath { Self.recordStamp(of: path, force: false) }
        }

        // An id that left one file and arrived in another (a rename) is a change.
        let moved = Set(added).intersection(removed)
        var changes = ProviderChanges()
        changes.changed = Self.unique(changed + added.filter(moved.contains))
        changes.added = Self.unique(added.filter { !moved.contains($0) && !changes.changed.contains($0) })
        changes.removed = Self.unique(removed.filter { !moved.contains($0) && !changes.changed.contains($0) })
        if !changes.isEmpty {
            logger.notice(
                "Manifests changed: added \(changes.added), changed \(changes.changed), removed \(changes.removed).")
        }
        return changes
    }

    /// Registry entries for a catalog, with the host configuration file applied.
    static func entries(from catalog: ManifestCatalog, configFile: HostConfigFile?) -> [ProviderEntry] {
        catalog.entries.map { item in
            var entry: ProviderEntry
            switch item {
            case .accepted(let manifest):
                entry = ProviderEntry(manifestPath: manifest.manifestPath, state: .discovered(manifest))
            case .rejected(let rejection):
                entry = ProviderEntry(manifestPath: rejection.path, state: .rejected(diagnostics: rejection.diagnostics))
            }
            entry.applyHostConfiguration(configFile)
            return entry
        }
    }

    /// Whether a freshly discovered entry says the same as the registry's entry for that file.
    static func sameDeclaration(_ old: ProviderEntry, _ new: ProviderEntry) -> Bool {
        switch (old.manifest, new.manifest) {
        case (nil, nil):
            return old.diagnostics == new.diagnostics
        case (let left?, let right?):
            return left.sameDeclaration(as: right)
        default:
            return false
        }
    }

    /// Loads a new or changed entry, or keeps the old in-process instance when its library changed.
    private func prepare(_ entry: ProviderEntry, replacing old: ProviderEntry?, client: ClientInfo?) -> ProviderEntry {
        guard case .discovered(let manifest) = entry.state, let client else { return entry }
        if let old, let oldManifest = old.manifest, let connection = old.connection, old.runsInProcess,
            manifest.isolation == .inProcess,
            let reason = libraryChange(from: old, oldManifest: oldManifest, to: manifest)
        {
            var kept = entry
            if case .quarantined(_, _, let before) = old.state {
                kept.state = .quarantined(manifest, connection, before: before)
            } else {
                kept.state = .loaded(manifest, connection)
            }
            kept.libraryPath = old.libraryPath
            kept.effectiveIsolation = old.effectiveIsolation
            kept.isolationNote = old.isolationNote
            kept.unavailability = Unavailability(
                code: "restart-required",
                message: "\(manifest.title)'s \(reason); in-process libraries are never unloaded, so restart the host "
                    + "to load the new one. Items attached earlier still work with the old library.")
            logger.notice("Provider \(manifest.id): \(reason); restart the host to load it.")
            return kept
        }
        return load(entry, manifest: manifest, client: client)
    }

    /// Why an in-process provider cannot pick up the new manifest's library, or nil if it can.
    private func libraryChange(from old: ProviderEntry, oldManifest: Manifest, to manifest: Manifest) -> String? {
        let resolver = configuration.libraryResolver()
        guard let path = try? resolver.resolve(manifest) else { return nil }  // loading reports it
        if let oldPath = old.libraryPath, path != oldPath {
            return "library changed from \(oldPath) to \(path)"
        }
        if manifest.sha256?.lowercased() != oldManifest.sha256?.lowercased() {
            return "sha256 pin changed"
        }
        if let recorded = Self.libraryStamps.withLock({ $0[path] }), let now = Self.stamp(of: path), recorded != now {
            return "library file \(path) changed on disk"
        }
        return nil
    }

    private static func unique(_ values: [String]) -> [String] {
        var seen: Set<String> = []
        return values.filter { seen.insert($0).inserted }
    }

    // MARK: Library stamps

    /// The identity of each in-process library file when it was (first) seen loaded, to notice a
    /// rebuilt library behind an unchanged path.
    private static let libraryStamps = Mutex<[String: ManifestWatcher.Stamp]>([:])

    private func recordLibraryStamps(_ entries: [ProviderEntry]) {
        for entry in entries where entry.runsInProcess {
            if let path = entry.libraryPath { Self.recordStamp(of: path, force: false) }
        }
    }

    private static func recordStamp(of path: String, force: Bool) {
        guard let stamp = stamp(of: path) else { return }
        libraryStamps.withLock { stamps in
            if force || stamps[path] == nil { stamps[path] = stamp }
        }
    }

    private static func stamp(of path: String) -> ManifestWatcher.Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        return ManifestWatcher.Stamp(
            size: Int64(info.st_size), seconds: Int(modified.tv_sec), nanoseconds: Int(modified.tv_nsec),
            inode: UInt64(info.st_ino))
    }
}

extension Manifest {
    /// Whether two manifests declare the same provider (positions and comments aside).
    package func sameDeclaration(as other: Manifest) -> Bool {
        manifestVersion == other.manifestVersion && id == other.id && title == other.title && summary == other.summary
            && iconName == other.iconName && version == other.version && library == other.library
            && sha256 == other.sha256 && priority == other.priority
            && maximumAttachmentCount == other.maximumAttachmentCount
            && usesContainerPanel == other.usesContainerPanel && collection == other.collection
            && isolation == other.isolation && availability == other.availability && settings == other.settings
            && timeouts == other.timeouts && directory == other.directory && manifestPath == other.manifestPath
    }
}
