#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `mkdir -p`, shared by everything that writes files (drafts, the registry cache, the scaffold,
/// the gallery).
package enum Directories {
    /// Creates `path` and any missing parents with `mode` (parts that exist are left as they are).
    /// Returns nil on success, else the folder that could not be made and the `errno`.
    package static func make(_ path: String, mode: mode_t) -> (folder: String, errno: Int32)? {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0, errno != EEXIST { return (current, errno) }
        }
        return nil
    }

    /// Creates `path` and any missing parents, private to this user (0700); true if it exists
    /// afterwards.
    package static func makePrivate(_ path: String) -> Bool {
        make(path, mode: 0o700) == nil
    }
}
