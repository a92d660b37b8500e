#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies one version of a file without reading it: size, modification and status-change
/// times (nanoseconds), inode and device. Like GStreamer's registry (size and mtime), plus the
/// ctime, which no one can set back, and the inode, which an editor's write-and-rename changes.
package struct FileStamp: Sendable, Hashable {
    package var size: Int64
    package var modifiedNanoseconds: Int64
    package var changedNanoseconds: Int64
    package var inode: UInt64
    package var device: UInt64
}

extension FileStamp {
    /// The stamp of the file at `path` (symlinks followed) and whether it is a regular file;
    /// nil if it cannot be stat'ed.
    static func of(_ path: String) -> (stamp: FileStamp, isRegularFile: Bool)? {
        of(path, relativeTo: AT_FDCWD)
    }

    /// The same for `path` relative to the open folder `directoryFD` (one short path lookup
    /// instead of a whole one, which matters for a thousand files).
    static func of(_ path: String, relativeTo directoryFD: Int32) -> (stamp: FileStamp, isRegularFile: Bool)? {
        var info = stat()
        guard fstatat(directoryFD, path, &info, 0) == 0 else { return nil }
        return (FileStamp(info), info.st_mode & S_IFMT == S_IFREG)
    }

    init(_ info: stat) {
        #if canImport(Darwin)
            let modified = info.st_mtimespec
            let changed = info.st_ctimespec
        #else
            let modified = info.st_mtim
            let changed = info.st_ctim
        #endif
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        changedNanoseconds = Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec)
        inode = UInt64(info.st_ino)
        device = UInt64(info.st_dev)
    }
}

/// The registry cache: every manifest file's stamp with its parsed, validated result (the
/// `Manifest`, or the rejection with its diagnostics), so the next start reads no YAML for the
/// files whose stamp did not change (see `ManifestCatalog.discover(_:cacheFile:)`).
///
/// It holds only what parsing the YAML produced. Library resolution and the `sha256` check of the
/// library's bytes happen at load time, as without a cache.
///
/// File layout (little-endian): the 8-byte magic `CTXHREGC`, a 4-byte format version, the 8-byte
/// payload length, the 8-byte checksum of the payload, then the payload: the string table, host
/// version, build stamp, the manifest folders, and the entries (`CacheEncoder`). A file that is truncated, corrupt, of another
/// format or host build, made for other folders, or not private to this user is ignored (and
/// rewritten), never trusted.
package struct ManifestCache: Sendable, Equatable {
    /// Bump when the encoding or anything parsing produces changes.
    package static let formatVersion: UInt32 = 5
    static let magic: [UInt8] = Array("CTXHREGC".utf8)
    static let headerSize = 8 + 4 + 8 + 8

    /// One manifest file's cached result.
    package struct Entry: Sendable, Equatable {
        /// The absolute path the file was found at.
        package var absolutePath: String
        /// The file as the user named it (diagnostics and `manifestPath` use it).
        package var file: String
        /// The absolute folder `library` resolves against.
        package var directory: String
        package var stamp: FileStamp
        package var result: Result<Manifest, ManifestRejection>
    }

    /// The manifest folders (absolute) this cache was made for, in order.
    package var folders: [String]
    /// By absolute path.
    package var entries: [String: Entry]

    package init(folders: [String], entries: [String: Entry] = [:]) {
        self.folders = folders
        self.entries = entries
    }

    /// Takes a file's entry out of the cache and returns its result if the file's stamp and naming
    /// are unchanged. The result is moved out, not copied: a copy would retain each of its
    /// manifest's strings and arrays again.
    mutating func takeResult(
        absolutePath: String, file: String, directory: String, stamp: FileStamp
    ) -> Result<Manifest, ManifestRejection>? {
        guard var entry = entries.removeValue(forKey: absolutePath), entry.stamp == stamp, entry.file == file,
            entry.directory == directory
        else { return nil }
        return entry.result.moveOut()
    }

    // MARK: File name

    /// `registry-<16 hex digits>.cache`: the hash of the absolute manifest folders, in order, so
    /// each set of folders has its own cache.
    package static func fileName(folders: [String]) -> String {
        var seed: UInt64 = 0xcbf2_9ce4_8422_2325
        for folder in folders {
            seed = Array(folder.utf8 + [0]).withUnsafeBytes { FNV1a.hash($0, seed: seed) }
        }
        let hex = String(seed, radix: 16)
        return "registry-" + String(repeating: "0", count: 16 - hex.count) + hex + ".cache"
    }

    /// What identifies this host build: its version and the stamp of the running executable, so
    /// a rebuilt host (whose validation may differ) never reuses an older host's results.
    package static let buildStamp: String = {
        var text = HostConfiguration.hostVersion
        #if os(Linux)
            if let (stamp, _) = FileStamp.of("/proc/self/exe") {
                text += " \(stamp.size) \(stamp.modifiedNanoseconds) \(stamp.inode)"
            }
        #endif
        return text
    }()

    // MARK: Encoding

    package func encoded() -> [UInt8] {
        var payload = CacheEncoder()
        payload.string(HostConfiguration.hostVersion)
        payload.string(Self.buildStamp)
        payload.strings(folders)
        payload.varint(UInt64(entries.count))
        for entry in entries.values.sorted(by: { $0.absolutePath < $1.absolutePath }) {
            payload.string(entry.absolutePath)
            payload.string(entry.file)
            payload.string(entry.directory)
            payload.int(entry.stamp.size)
            payload.int(entry.stamp.modifiedNanoseconds)
            payload.int(entry.stamp.changedNanoseconds)
            payload.varint(entry.stamp.inode)
            payload.varint(entry.stamp.device)
            switch entry.result {
            case .success(let manifest):
                payload.byte(1)
                payload.manifest(manifest)
            case .failure(let rejection):
                payload.byte(2)
                payload.rejection(rejection)
            }
        }
        var file = CacheEncoder()
        file.bytes = Self.magic
        for shift in stride(from: 0, to: 32, by: 8) { file.byte(UInt8(truncatingIfNeeded: Self.formatVersion >> UInt32(shift))) }
        let body = payload.tableAndBody
        file.fixed64(UInt64(body.count))
        file.fixed64(CacheChecksum.of(body))
        file.bytes.append(contentsOf: body)
        return file.bytes
    }

    /// Decodes a cache file made for `folders`; throws the reason it cannot be used.
    package static func decode(_ bytes: [UInt8], folders: [String]) throws(CacheFormatError) -> ManifestCache {
        try bytes.withUnsafeBytes { raw in Result { () throws(CacheFormatError) in try decode(raw, folders: folders) } }.get()
    }

    private static func decode(_ raw: UnsafeRawBufferPointer, folders: [String]) throws(CacheFormatError) -> ManifestCache {
        guard raw.count >= headerSize, raw.prefix(8).elementsEqual(magic) else {
            throw CacheFormatError(reason: "it is not a registry cache (no CTXHREGC header)")
        }
        let version = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        guard version == formatVersion else {
            throw CacheFormatError(reason: "it has format version \(version); this host writes version \(formatVersion)")
        }
        let length = raw.loadUnaligned(fromByteOffset: 12, as: UInt64.self).littleEndian
        let checksum = raw.loadUnaligned(fromByteOffset: 20, as: UInt64.self).littleEndian
        guard length == UInt64(raw.count - headerSize) else {
            throw CacheFormatError(reason: "it holds \(raw.count - headerSize) bytes of data where its header says \(length) (truncated)")
        }
        let payload = UnsafeRawBufferPointer(rebasing: raw[headerSize...])
        guard CacheChecksum.of(payload) == checksum else {
            throw CacheFormatError(reason: "its checksum does not match (corrupt)")
        }
        var decoder = try CacheDecoder(tableAndBody: payload)
        let hostVersion = try decoder.string()
        let build = try decoder.string()
        guard hostVersion == HostConfiguration.hostVersion, build == buildStamp else {
            throw CacheFormatError(reason: "it was written by another host build (\(build))")
        }
        let cachedFolders = try decoder.strings()
        guard cachedFolders == folders else {
            throw CacheFormatError(reason: "it was made for other manifest folders (\(cachedFolders.joined(separator: ", ")))")
        }
        var cache = ManifestCache(folders: folders)
        let count = try decoder.count()
        cache.entries.reserveCapacity(count)
        for _ in 0..<count {
            let absolutePath = try decoder.string()
            let file = try decoder.string()
            let directory = try decoder.string()
            let stamp = FileStamp(
                size: try decoder.int64(), modifiedNanoseconds: try decoder.int64(),
                changedNanoseconds: try decoder.int64(), inode: try decoder.varint(), device: try decoder.varint())
            let result: Result<Manifest, ManifestRejection>
            switch try decoder.byte() {
            case 1: result = .success(try decoder.manifest())
            case 2: result = .failure(try decoder.rejection())
            case let tag: throw CacheFormatError(reason: "unknown entry kind \(tag)")
            }
            cache.entries[absolutePath] = Entry(
                absolutePath: absolutePath, file: file, directory: directory, stamp: stamp, result: result)
        }
        guard decoder.isAtEnd else { throw CacheFormatError(reason: "it has bytes after its last entry") }
        return cache
    }

    // MARK: Disk

    /// Why a cache file was not used.
    package enum ReadOutcome: Sendable {
        case loaded(ManifestCache)
        /// No file yet: the first start with these folders, or the cache was deleted.
        case missing
        /// There is a file, but it cannot be used; the text says why.
        case unusable(String)
    }

    /// Reads the cache at `path` made for `folders`. The file must be a regular file owned by
    /// this user and not writable by others; anything else is `unusable`.
    package static func read(path: String, folders: [String]) -> ReadOutcome {
        readBytes(path: path).decoded(folders: folders)
    }

    /// A cache file at least this large (about 200 manifests) is decoded while the manifest
    /// folders are listed; a smaller one is decoded first, on the calling thread.
    package static let sideBySideDecodeMinimum = 64 * 1024

    /// A cache file's bytes, not yet decoded, or why there are none.
    enum FileRead {
        case bytes([UInt8])
        case missing
        case unusable(String)

        /// How many bytes were read (0 if none).
        var count: Int {
            if case .bytes(let bytes) = self { bytes.count } else { 0 }
        }

        /// The cache these bytes hold, if it was made for `folders` by this host build.
        func decoded(folders: [String]) -> ReadOutcome {
            switch self {
            case .bytes(let bytes):
                do {
                    return .loaded(try ManifestCache.decode(bytes, folders: folders))
                } catch {
                    return .unusable(error.reason)
                }
            case .missing: return .missing
            case .unusable(let reason): return .unusable(reason)
            }
        }
    }

    /// The bytes of the cache file at `path`, checked as `read(path:folders:)` says.
    static func readBytes(path: String) -> FileRead {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            return errno == ENOENT ? .missing : .unusable("it cannot be opened: \(ManifestFileSystem.errorText(errno))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return .unusable("it is not a regular file") }
        guard info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            return .unusable("it is not private to this user (owner \(info.st_uid), mode \(String(info.st_mode & 0o777, radix: 8)))")
        }
        do {
            return .bytes(try FileBytes.read(fd: fd, expectedSize: Int(info.st_size)))
        } catch {
            return .unusable("it cannot be read: \(error.reason)")
        }
    }

    /// Writes the cache atomically (a private temporary file renamed over `path`), creating its
    /// folder (mode 0700) if needed. No fsync: a torn file fails its checksum and is rebuilt.
    package func write(to path: String) throws(CacheFormatError) {
        let folder = ManifestFileSystem.directoryName(path)
        guard Directories.makePrivate(folder) else {
            throw CacheFormatError(reason: "cannot create the folder \(folder): \(ManifestFileSystem.errorText(errno))")
        }
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw CacheFormatError(reason: "cannot create \(temporary): \(ManifestFileSystem.errorText(errno))")
        }
        let bytes = encoded()
        var written = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                written += count
            }
        }
        close(fd)
        if failure == 0, rename(temporary, path) == 0 { return }
        let reason = ManifestFileSystem.errorText(failure != 0 ? failure : errno)
        unlink(temporary)
        throw CacheFormatError(reason: "cannot write \(path): \(reason)")
    }

}
