#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file so readers see the old bytes or the new ones, never a mix: a temporary file in
/// the same folder, written and `fsync`ed, then renamed over the target.
package enum AtomicFile {
    /// Writes `bytes` to `path` with `mode`; on failure the target is unchanged and the reason
    /// (`strerror`) is returned.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) -> String? {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        let written = bytes.withUnsafeBytes { writeAll(fd, $0) }
        let synced = written && fsync(fd) == 0
        let reason = synced ? nil : String(cString: strerror(errno))
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            let failure = reason ?? String(cString: strerror(errno))
            unlink(temporary)
            return failure
        }
        // The rename itself survives a crash once the folder is synced.
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let folderFD = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            fsync(folderFD)
            close(folderFD)
        }
        return nil
    }
}
