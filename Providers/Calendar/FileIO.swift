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

/// Plain POSIX file access (no Foundation, to keep the library quick to load).
enum FileIO {
    /// What `stat` says about a path.
    struct Info: Hashable, Sendable {
        var isDirectory: Bool
        var size: Int
        var modified: Int
        var modifiedNanoseconds: Int
    }

    /// The file's type, size and modification time, or `nil` when it does not exist.
    static func info(_ path: String) -> Info? {
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

    /// Why a file was not read.
    enum ReadError: Error {
        case unreadable
        case notRegular
        case tooLarge(Int)
    }

    /// The most bytes one calendar file may have (a year of a busy shared calendar is a few MB).
    static let maximumFileBytes = 64 << 20

    /// The whole file, or `nil` when it cannot be read, is not a regular file (a FIFO or a device
    /// would never end) or is larger than `limit`.
    static func read(_ path: String, limit: Int = maximumFileBytes) -> [UInt8]? {
        try? readChecked(path, limit: limit)
    }

    /// The whole file, or why not.
    static func readChecked(_ path: String, limit: Int = maximumFileBytes) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unreadable }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notRegular }
        guard Int(status.st_size) <= limit else { throw .tooLarge(Int(status.st_size)) }
        // Read straight into a buffer of the file's size (not zero-filled first), then follow any
        // growth.
        var capacity = max(Int(status.st_size), 0) + 1
        var result: [UInt8] = []
        while true {
            var outcome: (filled: Int, reachedEnd: Bool)?
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity - result.count) { buffer, initialized in
                outcome = fill(fd, buffer)
                initialized = outcome?.filled ?? 0
            }
            guard let outcome else { throw .unreadable }
            if result.isEmpty { result = chunk } else { result += chunk }
            if outcome.reachedEnd { return result }
            // The file grew while it was read: follow it, up to the limit.
            guard result.count <= limit else { throw .tooLarge(result.count) }
            capacity = min(capacity * 2, limit + 1)
        }
    }

    /// Reads from `fd` until `buffer` is full or the file ends; `nil` on a read error.
    private static func fill(_ fd: Int32, _ buffer: UnsafeMutableBufferPointer<UInt8>) -> (filled: Int, reachedEnd: Bool)? {
        var filled = 0
        while filled < buffer.count {
            let count = systemRead(fd, buffer.baseAddress! + filled, buffer.count - filled)
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
    static func list(_ path: String) -> [String]? {
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
    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
