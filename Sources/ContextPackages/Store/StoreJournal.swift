import ContextHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One commit of the lock file and the trusted keys (docs/packages.md §4), so a command that dies
/// between writing the two leaves no half-changed store.
///
/// Under the store lock, `prepare` then `finish`:
/// 1. writes each new file in full as `NAME.pending` beside it (fsync'd);
/// 2. writes the journal `.store-journal` naming them (atomically: this is the commit point);
/// 3. renames each `NAME.pending` over `NAME`, the lock file first (a running host reads only it,
///    and a keys file that lags trusts less, never more);
/// 4. removes the journal.
///
/// `recover`, which every command that takes the store lock runs first, finishes step 3 when a
/// journal is there (roll forward: every pending file it names is complete), or else removes
/// `.pending` files (roll back: the commit point was never reached).
package enum StoreJournal {
    static let journalName = ".store-journal"
    static let pendingSuffix = ".pending"
    static let header = "context-host store commit 1"
    /// The only files a journal may name.
    static let names = [PackageLocations.lockFileName, PackageLocations.trustedKeysFileName]

    /// Steps 1 and 2 for `files` (names from `names`, in that order): after it returns, the
    /// change is committed (`finish` or a later `recover` puts it in place); if it throws,
    /// nothing changed. Returns the names to `finish`.
    static func prepare(_ files: [(name: String, bytes: [UInt8])], in folder: String) throws(PackageError) -> [String] {
        guard !files.isEmpty else { return [] }
        for file in files {
            if let reason = AtomicFile.write(file.bytes, to: folder + "/" + file.name + pendingSuffix, mode: 0o600) {
                for written in files { unlink(folder + "/" + written.name + pendingSuffix) }
                throw PackageError(
                    .storeIO, "cannot write \(folder)/\(file.name): \(reason); nothing was changed",
                    fix: "free disk space or fix the folder's permissions, then run the command again")
            }
        }
        crashPoint("before-journal")
        let journal = ([header] + files.map { $0.name }).joined(separator: "\n") + "\n"
        if let reason = AtomicFile.write(Array(journal.utf8), to: folder + "/" + journalName, mode: 0o600) {
            for written in files { unlink(folder + "/" + written.name + pendingSuffix) }
            throw PackageError(
                .storeIO, "cannot write \(folder)/\(journalName): \(reason); nothing was changed",
                fix: "free disk space or fix the folder's permissions, then run the command again")
        }
        return files.map { $0.name }
    }

    /// Completes a commit whose journal is in `folder`, or discards pending files no journal
    /// names. Call under the store lock. Returns the files it completed (empty when there was no
    /// journal).
    @discardableResult
    package static func recover(in folder: String) throws(PackageError) -> [String] {
        let path = folder + "/" + journalName
        switch ManifestFileSystem.kind(of: path) {
        case .missing:
            for name in names { unlink(folder + "/" + name + pendingSuffix) }
            return []
        default:
            let bytes: [UInt8]
            do { bytes = try FileBytes.read(path) } catch {
                throw damaged(path, error.reason)
            }
            guard bytes.count <= 4096 else { throw damaged(path, "it is \(bytes.count) bytes") }
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            guard lines.first == header, lines.count >= 2, lines.dropFirst().allSatisfy({ names.contains($0) }) else {
                throw damaged(path, "it is not a context-host store journal")
            }
            try finish(Array(lines.dropFirst()), in: folder)
            return Array(lines.dropFirst())
        }
    }

    /// Steps 3 and 4: renames each pending file that is still there, then removes the journal.
    static func finish(_ files: [String], in folder: String) throws(PackageError) {
        guard !files.isEmpty else { return }
        for (position, name) in files.enumerated() {
            if position > 0 { crashPoint("between-renames") }
            let pending = folder + "/" + name + pendingSuffix
            guard ManifestFileSystem.kind(of: pending) != .missing else { continue }
            guard rename(pending, folder + "/" + name) == 0 else {
                throw PackageError(
                    .storeIO, "cannot rename \(pending) into place: \(String(cString: strerror(errno))); the next command completes the change",
                    fix: "fix the permissions of \(folder), then run any install, upgrade or keys command")
            }
        }
        syncFolder(folder)
        unlink(folder + "/" + journalName)
        syncFolder(folder)
    }

    private static func damaged(_ path: String, _ reason: String) -> PackageError {
        PackageError(
            .storeIO, "cannot read the store journal \(path): \(reason)",
            fix: "an interrupted command left it; check the lock file and trusted-keys.json beside it, then remove it")
    }

    private static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// Test builds only: `CONTEXT_HOST_TEST_CRASH_AT=<point>` ends the process there at once, as a
    /// crash or a power cut would (no cleanup, no unwinding).
    private static func crashPoint(_ point: String) {
        #if DEBUG
        if let value = getenv("CONTEXT_HOST_TEST_CRASH_AT"), String(cString: value) == point { _exit(86) }
        #endif
    }
}
