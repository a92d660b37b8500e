import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a provider's metadata depends on: its library (by content hash, checked cheaply through
/// the file's stamp) and everything in its init JSON (settings, granted permissions, locale, host
/// version). Two keys match only when all of it is the same.
package struct ProviderMetadataKey: Sendable, Equatable {
    /// The resolved library path.
    package var libraryPath: String
    /// The library file's stamp when it was hashed (size, times, inode, device).
    package var libraryStamp: FileStamp
    /// SHA-256 (hex) of the init JSON the provider is opened with.
    package var initHash: String

    /// The key for `libraryPath` as it is now on disk (one `stat`, no read), or nil if the library
    /// cannot be stat'ed.
    package static func current(libraryPath: String, initJSON: [UInt8]) -> ProviderMetadataKey? {
        guard let (stamp, isRegular) = FileStamp.of(libraryPath), isRegular else { return nil }
        return ProviderMetadataKey(libraryPath: libraryPath, libraryStamp: stamp, initHash: SHA256.hex(of: initJSON))
    }
}

/// What a started worker's provider last said about itself: its availability check and its
/// `provider/info`.
package struct CachedProviderMetadata: Sendable, Equatable {
    /// Why it said it is unavailable; nil: available.
    package var unavailability: Unavailability?
    /// Its `provider/info` answer, if it gave a valid one.
    package var info: JSONValue?
}

/// The metadata cache (issue 28): what each provider's `provider/info` and availability check
/// last said, so `providers/list` answers for providers whose worker has not started in this run.
///
/// Stored beside the registry cache as `metadata-<hash of the manifest folders>.cache` (JSON,
/// mode 0600, written atomically, at most `maximumFileBytes`), or in memory only when the cache
/// folder is off. An entry is used only when its key matches: the same library (its SHA-256,
/// trusted while the file's stamp is unchanged, so a lookup costs one `stat`) and the same init
/// JSON hash. The file is hostile input: a file that is too large, not private, not JSON, of
/// another format or version, or with any malformed entry is ignored as a whole (and rebuilt on
/// the next store).
package final class ProviderMetadataCache: Sendable {
    /// Bump when the format changes.
    package static let formatVersion = 1
    static let formatName = "context-host-provider-metadata"
    /// The largest file read.
    static let maximumFileBytes = 8 << 20
    /// The most entries kept (further ones are not stored).
    static let maximumEntries = 10_000
    /// The largest `provider/info` kept, and the longest reason message.
    static let maximumInfoBytes = 16 << 10
    static let maximumTextBytes = 4 << 10

    private struct Record: Sendable {
        var key: ProviderMetadataKey
        /// SHA-256 (hex) of the library's bytes when it was stored.
        var librarySHA256: String
        var metadata: CachedProviderMetadata
    }

    private enum Contents {
        /// Not read yet (read on the first lookup, off `initialize`).
        case unread
        case loaded([String: Record])
    }

    private struct State {
        var contents = Contents.unread
        /// A write is scheduled.
        var writeScheduled = false
    }

    /// The file; nil: in memory only.
    package let path: String?
    private let logger: Logger
    private let state = Mutex(State())
    private let writer = DispatchQueue(label: "context-host.metadata-cache")

    /// A cache stored at `path` (nil: in memory only). Nothing is read until the first lookup.
    package init(path: String?, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// The file name for a set of manifest folders (beside `registry-….cache`).
    package static func fileName(folders: [String]) -> String {
        "metadata-" + ManifestCache.fileName(folders: folders).dropFirst("registry-".count)
    }

    /// Reads the file now, on a thread of its own, so the first lookup (during the loads after
    /// `initialize`) does not wait for it; harmless if a lookup got there first.
    package func prefetch() {
        guard path != nil else { return }
        startThread(name: "metadata-cache") { [self] in
            state.withLock { state in _ = loadedRecords(&state) }
        }
    }

    /// What provider `id` said when its key was `key`, or nil (never asked, or something changed).
    package func lookup(id: String, key: ProviderMetadataKey) -> CachedProviderMetadata? {
        state.withLock { state -> CachedProviderMetadata? in
            let records = loadedRecords(&state)
            guard let record = records[id], record.key == key else { return nil }
            return record.metadata
        }
    }

    /// Records what provider `id` said with `key`; hashes the library (off the request path: the
    /// caller is a background thread) and schedules a write. A library that changed since `key`
    /// was taken is not stored.
    package func store(id: String, key: ProviderMetadataKey, metadata: CachedProviderMetadata) {
        guard let hash = SHA256.hex(ofFile: key.libraryPath), FileStamp.of(key.libraryPath)?.stamp == key.libraryStamp else { return }
        var metadata = metadata
        if let info = metadata.info, info.jsonBytes.count > Self.maximumInfoBytes { metadata.info = nil }
        let schedule = state.withLock { state -> Bool in
            var records = loadedRecords(&state)
            guard records[id] != nil || records.count < Self.maximumEntries else { return false }
            records[id] = Record(key: key, librarySHA256: hash, metadata: metadata)
            state.contents = .loaded(records)
            guard path != nil, !state.writeScheduled else { return false }
            state.writeScheduled = true
            return true
        }
        // Coalesced: many workers starting together write the file once.
        if schedule { writer.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in write() } }
    }

    private func loadedRecords(_ state: inout State) -> [String: Record] {
        if case .loaded(let records) = state.contents { return records }
        let records = read()
        state.contents = .loaded(records)
        return records
    }

    // MARK: File

    private func read() -> [String: Record] {
        guard let path else { return [:] }
        if let (stamp, _) = FileStamp.of(path), stamp.size > Int64(Self.maximumFileBytes) {
            logger.notice("Ignoring the metadata cache \(path): it is larger than \(Self.maximumFileBytes) bytes; rebuilding it.")
            return [:]
        }
        switch ManifestCache.readBytes(path: path) {
        case .missing:
            return [:]
        case .unusable(let reason):
            logger.notice("Ignoring the metadata cache \(path): \(reason); rebuilding it.")
            return [:]
        case .bytes(let bytes):
            guard bytes.count <= Self.maximumFileBytes, let records = Self.decode(bytes) else {
                logger.notice("Ignoring the metadata cache \(path): it is not a valid version \(Self.formatVersion) cache; rebuilding it.")
                return [:]
            }
            return records
        }
    }

    private func write() {
        guard let path else { return }
        let records = state.withLock { state -> [String: Record] in
            state.writeScheduled = false
            if case .loaded(let records) = state.contents { return records }
            return [:]
        }
        let folder = ManifestFileSystem.directoryName(path)
        guard Directories.makePrivate(folder) else {
            logger.warning("Could not save the metadata cache: cannot create \(folder).")
            return
        }
        if let reason = AtomicFile.write(Self.encode(records), to: path, mode: 0o600) {
            logger.warning("Could not save the metadata cache \(path): \(reason).")
        }
    }

    /// Writes the file now if a write is scheduled (the host is about to exit).
    package func saveIfPending() {
        guard state.withLock({ $0.writeScheduled }) else { return }
        writer.sync { write() }
    }

    // MARK: Format

    private static func encode(_ records: [String: Record]) -> [UInt8] {
        var entries: [JSONValue] = []
        for id in records.keys.sorted() {
            guard let record = records[id] else { continue }
            var entry: JSONObject = [
                "id": .string(id),
                "library": [
                    "path": .string(record.key.libraryPath), "sha256": .string(record.librarySHA256),
                    "size": .string(String(record.key.libraryStamp.size)),
                    "mtime": .string(String(record.key.libraryStamp.modifiedNanoseconds)),
                    "ctime": .string(String(record.key.libraryStamp.changedNanoseconds)),
                    "inode": .string(String(record.key.libraryStamp.inode)),
                    "device": .string(String(record.key.libraryStamp.device)),
                ],
                "init": .string(record.key.initHash),
                "available": .bool(record.metadata.unavailability == nil),
            ]
            if let reason = record.metadata.unavailability { entry["reason"] = reason.json }
            if let info = record.metadata.info { entry["info"] = info }
            entries.append(.object(entry))
        }
        let file: JSONValue = [
            "format": .string(formatName), "version": .number(Double(formatVersion)),
            "host": .string(HostConfiguration.hostVersion), "entries": .array(entries),
        ]
        return file.jsonBytes
    }

    /// The records in `bytes`, or nil if anything about them is not as `encode` writes them.
    private static func decode(_ bytes: [UInt8]) -> [String: Record]? {
        guard let file = try? JSONValue(parsing: bytes),
            file["format"]?.stringValue == formatName, file["version"]?.intValue == formatVersion,
            file["host"]?.stringValue == HostConfiguration.hostVersion,
            let entries = file["entries"]?.arrayValue, entries.count <= maximumEntries
        else { return nil }
        var records: [String: Record] = [:]
        for entry in entries {
            guard let id = text(entry["id"], limit: 256), ManifestValidator.isValidID(id), records[id] == nil,
                let library = entry["library"], let path = text(library["path"], limit: 4096), path.hasPrefix("/"),
                let hash = hex(library["sha256"]), let initHash = hex(entry["init"]),
                let size = text(library["size"], limit: 20).flatMap({ Int64($0) }),
                let mtime = text(library["mtime"], limit: 20).flatMap({ Int64($0) }),
                let ctime = text(library["ctime"], limit: 20).flatMap({ Int64($0) }),
                let inode = text(library["inode"], limit: 20).flatMap({ UInt64($0) }),
                let device = text(library["device"], limit: 20).flatMap({ UInt64($0) }),
                let available = entry["available"]?.boolValue
            else { return nil }
            var unavailability: Unavailability?
            if !available {
                guard let reason = entry["reason"], let code = text(reason["code"], limit: 64),
                    let message = text(reason["message"], limit: maximumTextBytes)
                else { return nil }
                unavailability = Unavailability(code: code, message: message)
            }
            var info: JSONValue?
            if let value = entry["info"] {
                guard case .object = value, value.jsonBytes.count <= maximumInfoBytes else { return nil }
                info = value
            }
            let stamp = FileStamp(size: size, modifiedNanoseconds: mtime, changedNanoseconds: ctime, inode: inode, device: device)
            records[id] = Record(
                key: ProviderMetadataKey(libraryPath: path, libraryStamp: stamp, initHash: initHash), librarySHA256: hash,
                metadata: CachedProviderMetadata(unavailability: unavailability, info: info))
        }
        return records
    }

    private static func text(_ value: JSONValue?, limit: Int) -> String? {
        guard let string = value?.stringValue, !string.isEmpty, string.utf8.count <= limit else { return nil }
        return string
    }

    /// 64 lowercase hex digits.
    private static func hex(_ value: JSONValue?) -> String? {
        guard let string = value?.stringValue, string.utf8.count == 64,
            string.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else { return nil }
        return string
    }
}
