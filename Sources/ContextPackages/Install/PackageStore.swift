import ContextHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Installs, upgrades, rolls back and removes providers in the store, and keeps the lock file
/// and the trusted keys (docs/packages.md §3–§4). The lock is the only record of what is active: a
/// version folder is unpacked and probed first, and becomes active only when the new lock is
/// renamed into place.
///
/// Every command that changes the store, the lock or the keys runs as one `transaction` under the
/// store lock: it reads the lock file and the keys after taking the lock, changes them in memory,
/// and writes them once at the end, or undoes what it unpacked. Two commands at once run one after
/// the other, so neither loses the other's change.
package struct PackageStore: Sendable {
    package var locations: PackageLocations

    package init(locations: PackageLocations) {
        self.locations = locations
    }

    /// What `Transaction.stage` is asked to do.
    package enum Operation: Sendable, Equatable {
        /// A provider that is not installed (`force`: reinstall or replace an installed one; an
        /// older version than the installed one only with `allowDowngrade`).
        case install(force: Bool, allowDowngrade: Bool)
        /// A newer version of an installed provider (any other only with `allowDowngrade`).
        case upgrade(allowDowngrade: Bool)
    }

    /// A version unpacked and waiting for its transaction to commit (or be abandoned).
    package struct Staged: Sendable {
        package var bundle: VerifiedBundle
        /// The version folder.
        package var folder: String
        /// The lock entry the transaction records.
        package var entry: LockFile.Entry
        /// The version this replaces, if any.
        package var replacing: LockFile.Installed?
        /// Where the copy that was in `folder` before was set aside (restored if the transaction
        /// fails; removed by `gc` otherwise).
        package var setAside: String?
    }

    /// One command's changes to the store, the lock file and the trusted keys, made while it holds
    /// the store lock. `lock` and `trustedKeys` are read after the lock was taken; `transaction`
    /// writes them when the body returns, or undoes every `unpack` when it throws.
    package struct Transaction {
        package let store: PackageStore
        /// The lock file, with this transaction's changes so far.
        package var lock: LockFile
        /// The trusted keys, with this transaction's changes so far.
        package var trustedKeys: TrustedKeys
        /// What the files said when the transaction began.
        let originalLock: LockFile
        let originalKeys: TrustedKeys
        /// Every version unpacked, in order (undone in reverse).
        package private(set) var staged: [Staged] = []

        var locations: PackageLocations { store.locations }

        /// Checks the bundle against what is installed, unpacks it into its version folder and
        /// records it in `lock` as the active version.
        /// - Parameter acceptNewKey: allow a signer other than the installed version's.
        package mutating func stage(_ bundle: VerifiedBundle, operation: Operation, acceptNewKey: Bool) throws(PackageError) -> Staged {
            let id = bundle.index.id
            let version = bundle.index.version
            let existing = lock.entry(id: id)
            var previous: LockFile.Installed?
            switch operation {
            case .install(let force, let allowDowngrade):
                if let existing, !force {
                    throw PackageError(
                        .alreadyInstalled, "\(id) is already installed (version \(existing.current.version))",
                        fix: existing.current.version == version
                            ? "nothing to do; to reinstall (and repair) the same version, add --force"
                            : "use `context-host upgrade \(bundle.file)`")
                }
                if let existing, let old = Version(existing.current.version), let new = Version(version), new < old, !allowDowngrade {
                    throw PackageError(
                        .notNewer, "\(id) \(version) is older than the installed \(existing.current.version); --force does not downgrade",
                        fix: "to go back on purpose, add --allow-downgrade (or use `context-host rollback \(id)`)")
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
            var staged = try unpack(bundle)
            staged.entry = LockFile.Entry(id: id, current: bundle.lockRecord, previous: previous)
            staged.replacing = existing?.current
            self.staged[self.staged.count - 1] = staged
            lock.set(staged.entry)
            return staged
        }

        /// Unpacks every file of the bundle into a new copy of its version folder and puts it in
        /// place of any copy there was (set aside, so a failed transaction puts it back). Never
        /// reuses files already in the store: a damaged copy is replaced, not trusted. Does not
        /// change `lock`.
        package mutating func unpack(_ bundle: VerifiedBundle) throws(PackageError) -> Staged {
            let id = bundle.index.id
            let version = bundle.index.version
            let folder = locations.versionDirectory(id: id, version: version)
            let providerFolder = locations.providerDirectory(id: id)
            guard Directories.make(providerFolder, mode: 0o755) == nil else {
                throw PackageError(
                    .storeIO, "cannot create the store folder \(providerFolder): \(String(cString: strerror(errno)))",
                    fix: "check that \(locations.storeDirectory) is writable by you")
            }
            let staging = providerFolder + "/.staging-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            do throws(PackageError) {
                try StoreFiles.unpack(bundle.entries, into: staging)
            } catch {
                StoreFiles.removeTree(staging)
                throw error
            }
            var setAside: String?
            if ManifestFileSystem.kind(of: folder) != .missing {
                let aside = providerFolder + "/.replaced-\(version)-\(UInt32.random(in: 0...UInt32.max))"
                do throws(PackageError) {
                    try StoreFiles.move(folder, to: aside)
                } catch {
                    StoreFiles.removeTree(staging)
                    throw error
                }
                setAside = aside
            }
            do throws(PackageError) {
                try StoreFiles.move(staging, to: folder)
            } catch {
                StoreFiles.removeTree(staging)
                if let setAside { try? StoreFiles.move(setAside, to: folder) }
                throw error
            }
            let staged = Staged(
                bundle: bundle, folder: folder, entry: LockFile.Entry(id: id, current: bundle.lockRecord), replacing: nil,
                setAside: setAside)
            self.staged.append(staged)
            return staged
        }

        /// Makes the previous version active again (and the current one the previous). Going back
        /// is what rollback is for, so it needs no --allow-downgrade.
        package mutating func rollback(id: String) throws(PackageError) -> LockFile.Entry {
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
            return rolledBack
        }

        /// Removes `id` from the lock (its files stay until `collectGarbage`).
        package mutating func uninstall(id: String) throws(PackageError) -> LockFile.Entry {
            guard let entry = lock.entry(id: id) else {
                throw PackageError(.notInstalled, "\(id) is not installed", fix: "`context-host list --installed` shows what is")
            }
            lock.remove(id: id)
            return entry
        }

        /// Prepares what changed, the lock and the keys, as one commit (`StoreJournal`): both are
        /// written in full beside their files first; the journal naming them is the commit point;
        /// then each is renamed into place. A crash before the journal leaves both files as they
        /// were; a crash after it is completed by the next command that takes the store lock. The
        /// lock is written also after a repair that left its text as it was, so a running host,
        /// which watches it, reloads.
        /// Returns the files to put in place (`StoreJournal.finish`); once it has returned, the
        /// change is committed even if this process dies.
        func prepareCommit() throws(PackageError) -> [String] {
            var files: [(name: String, bytes: [UInt8])] = []
            if lock != originalLock || !staged.isEmpty { files.append((PackageLocations.lockFileName, lock.encoded())) }
            if trustedKeys != originalKeys { files.append((PackageLocations.trustedKeysFileName, Array(trustedKeys.jsonText.utf8))) }
            return try StoreJournal.prepare(files, in: locations.configDirectory)
        }

        /// Undoes every `unpack`, newest first: removes the folder and puts back what was there.
        func abandon() {
            for staged in staged.reversed() {
                StoreFiles.removeTree(staged.folder)
                if let aside = staged.setAside { try? StoreFiles.move(aside, to: staged.folder) }
            }
        }
    }

    /// Runs `body` as one transaction under the store lock (waiting for another command that
    /// holds it; `waiting` is called once if so): the lock file and the keys are read after the
    /// lock is taken, and written once when `body` returns. If `body` throws, or writing fails,
    /// every version it unpacked is removed, what was there before is put back, and neither file
    /// changes.
    package func transaction<T>(
        waiting: () -> Void = {}, _ body: (inout Transaction) throws(PackageError) -> T
    ) throws(PackageError) -> T {
        try exclusively(waiting: waiting) { () throws(PackageError) -> T in
            try StoreJournal.recover(in: locations.configDirectory)
            let lock = try LockFile.load(file: locations.lockFile)
            let keys = try TrustedKeys.load(file: locations.trustedKeysFile)
            var transaction = Transaction(
                store: self, lock: lock, trustedKeys: keys, originalLock: lock, originalKeys: keys)
            let result: T
            let committed: [String]
            do throws(PackageError) {
                result = try body(&transaction)
                committed = try transaction.prepareCommit()
            } catch {
                transaction.abandon()
                throw error
            }
            // Past the commit point: the unpacked versions stay, whatever happens next.
            try StoreJournal.finish(committed, in: locations.configDirectory)
            return result
        }
    }

    /// Completes (or discards) a commit a crashed command left, under the store lock, so what is
    /// read next is one command's state or the one before it, never half of each.
    @discardableResult
    package func recover(waiting: () -> Void = {}) throws(PackageError) -> [String] {
        try exclusively(waiting: waiting) { () throws(PackageError) -> [String] in try StoreJournal.recover(in: locations.configDirectory) }
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

    /// Holds an exclusive lock on the configuration folder while `body` runs, so two commands
    /// that change the store, the lock file or the keys run one after the other. If another holds
    /// it, calls `waiting` once and waits for it.
    package func exclusively<T>(waiting: () -> Void = {}, _ body: () throws(PackageError) -> T) throws(PackageError) -> T {
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
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else {
                throw PackageError(.storeIO, "cannot lock \(path): \(String(cString: strerror(errno)))", fix: "check the folder's permissions")
            }
            waiting()
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    throw PackageError(.storeIO, "cannot lock \(path): \(String(cString: strerror(errno)))", fix: "check the folder's permissions")
                }
            }
        }
        return try body()
    }
}
