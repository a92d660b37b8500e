#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `read(2)`, named apart from `FileIO.read`.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
    #else
        Darwin.read(fd, buffer, count)
    #endif
}

/// Plain POSIX file access for the bundled providers (no Foundation, to keep a library quick to
/// load): whole-file reads that refuse what is not a regular file and stop at a size limit, `stat`
/// and folder listings.
package enum FileIO {
    /// What `stat` says about a path.
    package struct Info: Hashable, Sendable {
        package var isDirectory: Bool
        package var size: Int
        package var modified: Int
        package var modifiedNanoseconds: Int
    }

    /// The file's type, size and modification time, or `nil` when it does not exist.
    package static func info(_ path: String) -> Info? {
        var buffer = stat()
        guard stat(path, &buffer) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = Int(buffer.st_mtimespec.tv_sec)
            let nanoseconds = Int(buffer.st_mtimespec.tv_nsec)
        #else
            let modified = Int(buffer.st_mtim.tv_sec)
            let nanoseconds = Int(buffer.st_mtim.tv_nsec)
        #endif
        return Info(
            isDirectory: (buffer.st_mode & S_IFMT) == S_IFDIR, size: Int(buffer.st_size), modified: modified,
            modifiedNanoseconds: nanoseconds)
    }

    /// Why a file was not read; `message` says it in words for a diagnostic.
    package enum ReadError: Error, Sendable, Equatable {
        /// No such file.
        case notFound
        /// `open` failed with this `errno`.
        case cannotOpen(Int32)
        /// `fstat` failed.
        case noStatus
        /// A folder, FIFO or device (a FIFO or a device would never end).
        case notRegular
        /// Larger than `limit`: `size` bytes by `fstat`, or at least that many read (it grew).
        case tooLarge(size: Int, limit: Int)
        /// `read` failed with this `errno`.
        case readFailed(Int32)

        /// E.g. `file not found`, `not a regular file`, `the file is too large (9 bytes; at most 8)`.
        package var message: String {
            switch self {
            case .notFound: "file not found"
            case .cannotOpen(let code): "cannot open (\(String(cString: strerror(code))))"
            case .noStatus: "cannot read its status"
            case .notRegular: "not a regular file"
            case .tooLarge(let size, let limit): "the file is too large (\(size) bytes; at most \(limit))"
            case .readFailed(let code): "read error (\(String(cString: strerror(code))))"
            }
        }
    }

    /// The whole file, or `nil` when it cannot be read, is not a regular file or is larger than
    /// `limit` bytes.
    package static func read(_ path: String, limit: Int) -> [UInt8]? {
        try? readChecked(path, limit: limit)
    }

    /// The whole regular file, which must not be larger than `limit` bytes; with `truncating`, a
    /// larger file is read only up to `limit` bytes instead.
    ///
    /// Opened non-blocking, so a path that names a FIFO fails (`notRegular`) instead of waiting
    /// forever for a writer; a file that grows while it is read is followed up to the limit.
    package static func readChecked(_ path: String, limit: Int, truncating: Bool = false) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOENT ? .notFound : .cannotOpen(code)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .noStatus }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notRegular }
        let size = max(Int(status.st_size), 0)
        let limit = max(limit, 0)
        guard size <= limit || truncating else { throw .tooLarge(size: size, limit: limit) }
        // Read up to one byte past the limit (to notice a file that grew past it), or up to the
        // limit itself when truncating.
        let ceiling = truncating || limit == .max ? limit : limit + 1
        // Straight into a buffer of the file's size plus one (not zero-filled first).
        var capacity = min(size < ceiling ? size + 1 : ceiling, ceiling)
        var result: [UInt8] = []
        while true {
            var outcome: (filled: Int, reachedEnd: Bool)?
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity - result.count) { buffer, initialized in
                outcome = fill(fd, buffer)
                initialized = outcome?.filled ?? 0
            }
            guard let outcome else { throw .readFailed(errno) }
            if result.isEmpty { result = chunk } else { result += chunk }
            if outcome.reachedEnd { return result }
            if result.count >= ceiling {
                if truncating { return result }
                throw .tooLarge(size: result.count, limit: limit)
            }
            // It grew (or reports no size, like a /proc file): follow it, up to the ceiling.
            capacity = capacity > ceiling / 2 ? ceiling : max(capacity * 2, 4096)
            capacity = min(capacity, ceiling)
        }
    }

    /// Reads from `fd` until `buffer` is full or the file ends; `nil` on a read error.
    private static func fill(_ fd: Int32, _ buffer: UnsafeMutableBufferPointer<UInt8>) -> (filled: Int, reachedEnd: Bool)? {
        guard let base = buffer.baseAddress else { return (0, false) }
        var filled = 0
        while filled < buffer.count {
            let count = systemRead(fd, base + filled, buffer.count - filled)
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return (filled, true) }
            filled += count
        }
        return (filled, false)
    }

    /// The names in a folder (without `.` and `..`), sorted; `nil` when it cannot be listed.
    package static func list(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The last path component.
    package static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// The length of a UTF-8 byte order mark at the start of `buffer` (3), else 0.
    package static func byteOrderMarkLength(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
        buffer.count >= 3 && buffer[0] == 0xEF && buffer[1] == 0xBB && buffer[2] == 0xBF ? 3 : 0
    }
}
