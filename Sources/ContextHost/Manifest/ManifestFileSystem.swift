#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few POSIX file operations manifest discovery needs, without Foundation (start-up time).
package enum ManifestFileSystem {
    package enum Kind { case missing, file, directory, other }

    /// What `path` is, following symlinks.
    package static func kind(of path: String) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Whether `path` itself (not its target) is a symbolic link.
    package static func isSymlink(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFLNK
    }

    /// The canonical absolute path (symlinks resolved), or `nil`.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The whole file, or a message saying why it cannot be read.
    static func readFile(_ path: String) -> Result<[UInt8], ReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadError(message: errorText(errno))) }
        defer { close(fd) }
        var info = stat()
        var capacity = 4096
        if fstat(fd, &info) == 0, info.st_size > 0 { capacity = Int(info.st_size) + 1 }
        var bytes = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let n = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress! + count, buffer.count - count)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(ReadError(message: errorText(errno)))
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return .success(bytes)
    }

    struct ReadError: Error { var message: String }

    /// Names of the entries of a folder (no `.`/`..`), or `nil` if it cannot be opened.
    package static func directoryEntries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    static func homeDirectory() -> String? {
        if let home = environment("HOME"), !home.isEmpty { return home }
        #if canImport(Glibc) || canImport(Darwin)
            if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        #endif
        return nil
    }

    static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "/" }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    // MARK: Lexical path helpers

    /// `base/relative`, or `relative` if it is absolute; then lexically normalised.
    package static func join(_ base: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return normalize(relative) }
        return normalize(base + "/" + relative)
    }

    /// Removes `.` and empty segments and folds `..` lexically. Keeps a leading `/`.
    package static func normalize(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            if part == "..", absolute { continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// The folder part of a path (`.` if none).
    package static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `path` made absolute against `base` (and normalised).
    static func absolute(_ path: String, base: String) -> String {
        join(base, path)
    }
}
