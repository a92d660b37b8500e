import ContextHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Installs, upgrades, rolls back and removes providers in the store, and keeps the lock file
/// (docs/packages.md §3–§4). The lock is the only record of what is active: a version folder
/// is unpacked and probed first, and becomes active only when the new lock is renamed into place.
package struct PackageStore: Sendable {
    package var locations: PackageLocations

    package init(locations: PackageLocations) {
        self.locations = locations
    }

    /// What `stage` is asked to do.
    package enum Operation: Sendable, Equatable {
        /// A provider that is not installed (`force`: reinstall or replace an installed one).
        case install(force: Bool)
        /// A newer version of an installed provider.
        case upgrade(allowDowngrade: Bool)
    }

    /// A version unpacked and waiting to be activated by `commit` (or removed by `abandon`).
    package struct Staged: Sendable {
        package var bundle: VerifiedBundle
        /// The version folder.
        package var folder: String
        /// Whether `stage` made the folder (false: an identical copy was already there).
        package var createdFolder: Bool
        /// The lock entry `commit` writes.
        package var entry: LockFile.Entry
        /// The version this replaces, if any.
        package var replacing: LockFile.Installed?
        /// Where another copy of the same version was set aside (restored by `abandon`).
        package var setAside: String?
    }

    /// Checks the bundle against what is installed, then unpacks it into its version folder.
    /// - Parameter acceptNewKey: allow a signer other than the installed version's.
    package func stage(_ bundle: VerifiedBundle, operation: Operation, acceptNewKey: Bool) throws(PackageError) -> Staged {
        let lock = try LockFile.load(file: locations.lockFile)
        let id = bundle.index.id
        let version = bundle.index.version
        let existing = lock.entry(id: id)
        var previous: LockFile.Installed?
        switch operation {
        case .install(let force):
            if let existing, !force {
                throw PackageError(
                    .alreadyInstalled, "\(id) is already installed (version \(existing.current.version))",
                    fix: existing.current.version == version
                        ? "nothing to do; to reinstall the same version, add --force"
                        : "use `context-host upgrade \(bundle.file)`")
            }
            previous = existing.flatMap { $0.current.version == version ? $0.previous : $0.current }
        case .upgrade(let allowDowngrade):
            guard let existing else {
                throw PackageError(
                    .notInstalled, "\(id) is not installed, so there is nothing to upgrade",
                    fix: "use `context-host install \(bundle.file)`")
            }
            if let old = Version(existing.current.version), let new = Version(version), new <= old, !allowDowngrade {
                throw PackageError(
                    .notNewer, "\(id) \(version) is not newer than the installed \(existing.current.version)",
                    fix: new == old ? "nothing to do (use `install --force` to reinstall it)" : "to go back on purpose, add --allow-downgrade (or use `context-host rollback \(id)`)")
            }
            previous = existing.current
        }
        if let existing, existing.current.signer != bundle.signer?.keyIDString, !acceptNewKey {
            let old = existing.current.signer.map { "key \($0)" } ?? "no key (unsigned)"
            let new = bundle.signer.map { "key \($0.keyIDString)" } ?? "no key (unsigned)"
            throw PackageError(
                .keyChanged,
                "\(id) \(existing.current.version) was signed by \(old), but \(version) is signed by \(new)",
                fix: "make sure the author really changed keys (ask them, through a channel you trust), then run again with --accept-new-key")
        }

        let folder = locations.versionDirectory(id: id, version: version)
        let providerFolder = locations.providerDirectory(id: id)
        guard Directories.make(providerFolder, mode: 0o755) == nil else {
            throw PackageError(
                .storeIO, "cannot create the store folder \(providerFolder): \(String(cString: strerror(errno)))",
                fix: "check that \(locations.storeDirectory) is writable by you")
        }
        var createdFolder = true
        var setAside: String?
        if ManifestFileSystem.kind(of: folder) != .missing {
            let present = (try? FileBytes.read(folder + "/" + BundleIndex.fileName)).map { SHA256.hex(of: $0) }
            if present == bundle.indexSHA256 {
                createdFolder = false
            } else {
                // Another build of the same version (or a damaged copy): set aside for `gc`, or
                // put back by `abandon` if this one fails its probe.
                let aside = providerFolder + "/.replaced-\(version)-\(UInt32.random(in: 0...UInt32.max))"
                try StoreFiles.move(folder, to: aside)
                setAside = aside
            }
        }
        if createdFolder {
            let staging = providerFolder + "/.staging-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            do {
                try StoreFiles.unpack(
                    bundle.entries, into: staging)
                try StoreFiles.move(staging, to: folder)
            } catch {
                StoreFiles.removeTree(staging)
                if let setAside { try? StoreFiles.move(setAside, to: folder) }
                throw error
            }
        }
        return Staged(
            bundle: bundle, folder: folder, createdFolder: createdFolder,
            entry: LockFile.Entry(id: id, current: bundle.lockRecord, previous: previous), replacing: existing?.current,
            setAside: setAside)
    }

    /// Makes the staged version the active one: writes the lock (and the trusted keys, if the
    /// install accepted a new key).
    package func commit(_ staged: Staged) throws(PackageError) {
        var lock = try LockFile.load(file: locations.lockFile)
        lock.set(staged.entry)
        if let keys = staged.bundle.trustedKeysToSave {
            try keys.save(file: locations.trustedKeysFile)
        }
        try lock.save(file: locations.lockFile)
    }

    /// Undoes `stage` after a failed check: removes the folder it made and puts back the copy of
    /// the same version it set aside, so a failed reinstall leaves the installed version as it was.
    package func abandon(_ staged: Staged) {
        guard staged.createdFolder else { return }
        StoreFiles.removeTree(staged.folder)
        if let aside = staged.setAside { try? StoreFiles.move(aside, to: staged.folder) }
    }

    /// Makes the previous version active again (and the current one the previous).
    package func rollback(id: String) throws(PackageError) -> LockFile.Entry {
        var lock = try LockFile.load(file: locations.lockFile)
        guard let entry = lock.entry(id: id) else {
            throw PackageError(.notInstalled, "\(id) is not installed", fix: "`context-host list --installed` shows what is")
        }
        guard let previous = entry.previous else {
            throw PackageError(
                .noPreviousVersion, "\(id) has no previous version to roll back to (only \(entry.current.version) was ever active)",
                fix: "install an older bundle with `context-host upgrade --allow-downgrade FILE`")
        }
        let folder = locations.versionDirectory(id: id, version: previous.version)
        guard ManifestFileSystem.kind(of: folder) == .directory else {
            throw PackageError(
                .storeIO, "the files of \(id) \(previous.version) are gone from \(folder)",
                fix: "install that version's bundle again with `context-host upgrade --allow-downgrade FILE`")
        }
        let rolledBack = LockFile.Entry(id: id, current: previous, previous: entry.current)
        lock.set(rolledBack)
        try lock.save(file: locations.lockFile)
        return rolledBack
    }

    /// Removes `id` from the lock (its files stay until `collectGarbage`).
    package func uninstall(id: String) throws(PackageError) -> LockFile.Entry {
        var lock = try LockFile.load(file: locations.lockFile)
        guard let entry = lock.entry(id: id) else {
            throw PackageError(.notInstalled, "\(id) is not installed", fix: "`context-host list --installed` shows what is")
        }
        lock.remove(id: id)
        try lock.save(file: locations.lockFile)
        return entry
    }

    /// Removes every folder of the store the lock does not name (current and previous versions
    /// stay), and leftovers of interrupted installs. Returns what was removed and its size.
    package func collectGarbage() throws(PackageError) -> (removed: [String], bytes: Int) {
        let lock = try LockFile.load(file: locations.lockFile)
        var removed: [String] = []
        var bytes = 0
        for id in ManifestFileSystem.directoryEntries(locations.storeDirectory) ?? [] {
            let providerFolder = locations.providerDirectory(id: id)
            let entry = lock.entry(id: id)
            let keep = Set([entry?.current.version, entry?.previous?.version].compactMap { $0 })
            for name in ManifestFileSystem.directoryEntries(providerFolder) ?? [] where !keep.contains(name) {
                let path = providerFolder + "/" + name
                let size = StoreFiles.size(path)
                if StoreFiles.removeTree(path) {
                    removed.append(path)
                    bytes &+= size
                }
            }
            if entry == nil, rmdir(providerFolder) == 0 { removed.append(providerFolder) }
        }
        return (removed, bytes)
    }

    /// Holds an exclusive lock on the configuration folder while `body` runs, so two installs
    /// never interleave their lock-file updates.
    package func exclusively<T>(_ body: () throws(PackageError) -> T) throws(PackageError) -> T {
        guard Directories.makePrivate(locations.configDirectory) else {
            throw PackageError(
                .storeIO, "cannot create the configuration folder \(locations.configDirectory)",
                fix: "check that its parent exists and is writable by you")
        }
        let path = locations.configDirectory + "/.providers.lock.lk"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw PackageError(.storeIO, "cannot open \(path): \(String(cString: strerror(errno)))", fix: "check the folder's permissions")
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            throw PackageError(
                .storeIO, "another context-host install, upgrade or uninstall is running",
                fix: "wait for it to finish, then run the command again")
        }
        return try body()
    }
}
