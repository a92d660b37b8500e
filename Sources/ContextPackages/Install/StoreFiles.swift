import ContextHost
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File operations on the store: unpacking read-only version folders and removing them.
package enum StoreFiles {
    /// Writes `entries` under `folder` (which must not exist): files 0444 (0555 executable),
    /// folders 0555 once filled, so an installed version is never changed in place by accident.
    static func unpack(_ entries: [ArchiveEntry], into folder: String) throws(PackageError) {
        func failure(_ path: String) -> PackageError {
            PackageError(
                .storeIO, "cannot write \(path): \(String(cString: strerror(errno)))",
                fix: "free disk space or fix the permissions of \(folder)'s parent, then install again")
        }
        guard mkdir(folder, 0o700) == 0 else { throw failure(folder) }
        var folders = [folder]
        for entry in entries {
            let parts = entry.path.split(separator: "/").map(String.init)
            var current = folder
            for part in parts.dropLast() {
                current += "/" + part
                if mkdir(current, 0o700) == 0 {
                    folders.append(current)
                } else if errno != EEXIST {
                    throw failure(current)
                }
            }
            let path = folder + "/" + entry.path
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw failure(path) }
            let written = entry.bytes.withUnsafeBytes { writeAll(fd, $0) }
            let mode: mode_t = entry.executable ? 0o555 : 0o444
            let finished = written && fchmod(fd, mode) == 0 && fsync(fd) == 0
            close(fd)
            guard finished else { throw failure(path) }
        }
        // Deepest first, so a parent is made read-only after its children are done.
        for path in folders.reversed() { chmod(path, 0o555) }
    }

    /// Removes `path` and everything under it, read-only folders included. Bounded depth; does
    /// not follow symbolic links. Returns false if something was left.
    @discardableResult
    package static func removeTree(_ path: String, depth: Int = 0) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard depth < 64 else { return false }
            chmod(path, 0o700)
            var ok = true
            for name in ManifestFileSystem.directoryEntries(path) ?? [] where name != "." && name != ".." {
                ok = removeTree(path + "/" + name, depth: depth + 1) && ok
            }
            return rmdir(path) == 0 && ok
        }
        return unlink(path) == 0
    }

    /// Renames `from` to `to` (same file system).
    static func move(_ from: String, to: String) throws(PackageError) {
        guard rename(from, to) == 0 else {
            throw PackageError(
                .storeIO, "cannot move \(from) to \(to): \(String(cString: strerror(errno)))",
                fix: "check the permissions of the store folder")
        }
    }

    /// The size in bytes of the regular files under `path` (bounded depth).
    static func size(_ path: String, depth: Int = 0) -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        if (info.st_mode & S_IFMT) == S_IFDIR, depth < 64 {
            return (ManifestFileSystem.directoryEntries(path) ?? []).filter { $0 != "." && $0 != ".." }
                .reduce(0) { $0 &+ size(path + "/" + $1, depth: depth + 1) }
        }
        return (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
    }
}
