/// The providers the lock file says are installed, as manifest catalog entries beside those of
/// the `--manifests` folders (docs/packages.md §5).
///
/// Each active version's `manifest.yaml` must hash to the lock's `manifestSHA256`, and its
/// library for this platform is pinned to the lock's hash, which the loader checks on the very
/// bytes it maps (in the host or in the worker). A tampered file is rejected, never loaded.
package enum InstalledProviders {
    /// The catalog entries of the lock's active versions, in lock order (by id). A lock that
    /// cannot be read is reported as a catalog diagnostic and installs nothing.
    ///
    /// With `cacheDirectory`, the manifests are parsed through a registry cache of their own
    /// (`installed-registry-….cache`), so hundreds of installed providers cost a `stat` and a
    /// small read each at start, not a YAML parse; an install or upgrade rebuilds it once.
    package static func discover(
        _ locations: PackageLocations, cacheDirectory: String? = nil
    ) -> (entries: [ManifestCatalog.Entry], diagnostics: [ManifestDiagnostic]) {
        let lock: LockFile
        do {
            lock = try LockFile.load(file: locations.lockFile)
        } catch {
            return ([], [
                ManifestDiagnostic(
                    file: locations.lockFile, line: 0, column: 0, fieldPath: "", code: ManifestErrorCode(rawValue: error.code.rawValue),
                    message: error.message, hint: error.fix)
            ])
        }
        guard !lock.providers.isEmpty else { return ([], []) }
        let searchPaths = lock.providers.map { installed in
            let folder = locations.versionDirectory(id: installed.id, version: installed.current.version)
            return ManifestSearchPath(path: folder, displayPath: folder, source: .installed)
        }
        let catalog: ManifestCatalog
        if let cacheDirectory, !cacheDirectory.isEmpty {
            let file = cacheDirectory + "/installed-" + ManifestCache.fileName(folders: [locations.storeDirectory])
            catalog = ManifestCatalog.discover(searchPaths, cacheFile: file, onlyFileNamed: BundleLayout.manifestFileName).catalog
        } else {
            catalog = ManifestCatalog.discover(searchPaths)
        }
        var byPath: [String: ManifestCatalog.Entry] = [:]
        for entry in catalog.entries { byPath[entry.path] = entry }
        return (lock.providers.map { entry(for: $0, locations: locations, parsed: byPath) }, [])
    }

    /// The catalog entry of one installed provider, from its parsed (or cached) manifest.
    static func entry(
        for installed: LockFile.Entry, locations: PackageLocations, parsed: [String: ManifestCatalog.Entry]
    ) -> ManifestCatalog.Entry {
        let folder = locations.versionDirectory(id: installed.id, version: installed.current.version)
        let path = folder + "/" + BundleLayout.manifestFileName
        func rejected(_ code: PackageErrorCode, _ message: String, _ fix: String) -> ManifestCatalog.Entry {
            .rejected(ManifestRejection(path: path, id: installed.id, diagnostics: [
                ManifestDiagnostic(
                    file: path, line: 0, column: 0, fieldPath: "", code: ManifestErrorCode(rawValue: code.rawValue),
                    message: message, hint: fix)
            ]))
        }
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(path)
        } catch {
            return rejected(
                .hashMismatch, "installed provider \(installed.id) \(installed.current.version): cannot read its manifest: \(error.reason)",
                "reinstall it: context-host install --force <bundle>, or roll back: context-host rollback \(installed.id)")
        }
        let actual = SHA256.hex(of: bytes)
        guard actual == installed.current.manifestSHA256 else {
            return rejected(
                .hashMismatch,
                "installed provider \(installed.id) \(installed.current.version): manifest.yaml has SHA-256 \(actual), but the lock file records \(installed.current.manifestSHA256); it was changed after install and is not loaded",
                "reinstall it from its bundle (context-host install --force <bundle>); do not edit installed files")
        }
        var manifest: Manifest
        switch parsed[path] {
        case .accepted(let found)?:
            manifest = found
        case .rejected(let rejection)?:
            return .rejected(rejection)
        case nil:
            // Not found by discovery (a race with gc): parse what was just read.
            do {
                manifest = try Manifest.parse(bytes: bytes, file: path, directory: folder)
            } catch {
                return .rejected(error)
            }
        }
        guard manifest.id == installed.id, manifest.version.description == installed.current.version else {
            return rejected(
                .lockInvalid,
                "the lock file says \(installed.id) \(installed.current.version), but its manifest says \(manifest.id) \(manifest.version)",
                "reinstall the provider (context-host install --force <bundle>)")
        }
        let platform = PlatformID.current?.rawValue ?? "unknown"
        guard let library = installed.current.libraries.first(where: { $0.platform == platform }) else {
            return rejected(
                .platformUnsupported,
                "installed provider \(installed.id) \(installed.current.version) has no library for this machine (\(platform))",
                "install a bundle built for \(platform), or uninstall it: context-host uninstall \(installed.id)")
        }
        manifest.sha256 = library.sha256
        return .accepted(manifest)
    }

    /// `catalog` followed by the installed entries. An installed provider whose id an accepted
    /// manifest of the `--manifests` folders already uses is rejected (`duplicate-id`): the
    /// development copy wins, so working on a provider never fights its installed version.
    package static func merge(
        _ catalog: ManifestCatalog, installed: (entries: [ManifestCatalog.Entry], diagnostics: [ManifestDiagnostic])
    ) -> ManifestCatalog {
        var result = catalog
        var ids = Set(catalog.manifests.map(\.id))
        for entry in installed.entries {
            if case .accepted(let manifest) = entry, !ids.insert(manifest.id).inserted {
                let other = catalog.manifest(id: manifest.id)?.manifestPath ?? "another manifest"
                result.entries.append(.rejected(ManifestRejection(path: manifest.manifestPath, id: manifest.id, diagnostics: [
                    manifest.diagnostic(
                        .duplicateId, at: "id",
                        message: "the installed provider \(manifest.id) \(manifest.version) is not used: \(other) has the same id and manifests folders come first",
                        hint: "remove that manifest from the --manifests folders to use the installed version, or uninstall it: context-host uninstall \(manifest.id)")
                ])))
                continue
            }
            result.entries.append(entry)
        }
        result.diagnostics += installed.diagnostics
        return result
    }
}
