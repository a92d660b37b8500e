import ContextProviderKit
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The open composers, kept in memory and saved to a state folder after every change, so a
/// host killed at any moment restarts with every attached item.
///
/// Each composer is one file, `composers/<id>.json`, replaced atomically: written to a temporary
/// file, flushed with `fsync`, renamed over the old one, and the folder flushed. A crash during a
/// write leaves the previous version intact; the leftover temporary file is removed on start.
package final class ComposerStore: Sendable {
    private let composers = Mutex(OrderedComposers())
    /// `<state>/composers`, or nil to keep drafts in memory only.
    private let directory: String?
    private let logger: Logger

    /// Opens the store and restores the drafts saved in `stateDirectory`.
    package init(stateDirectory: String?, logger: Logger) {
        self.logger = logger
        guard let stateDirectory else {
            directory = nil
            return
        }
        let directory = stateDirectory + "/composers"
        self.directory = directory
        if !Directories.makePrivate(directory) {
            logger.error("Cannot create the state folder '\(directory)': \(String(cString: strerror(errno))). Drafts will not survive a restart.")
        }
        let restored = OrderedComposers(restore(from: directory).values)
        composers.withLock { $0 = restored }
    }

    // MARK: Reading

    package func get(_ id: String) throws(RPCError) -> Composer {
        guard let composer = composers.withLock({ $0[id] }) else { throw Self.notFound(id) }
        return composer
    }

    /// How many composers are open.
    package var count: Int { composers.withLock { $0.count } }

    /// Every composer, oldest first (kept in that order: `composer/list` without an id lists a
    /// thousand of them, often). The array shares its storage with the store's until either
    /// changes: a change made while a listing still holds it copies the array once.
    package func all() -> [Composer] {
        composers.withLock { $0.ordered }
    }

    // MARK: Changing

    /// Opens a new, empty composer.
    package func open(maximumItems: Int, byteBudget: Int, now: Double) throws(RPCError) -> Composer {
        let composer = Composer(id: Identifier.uuid(), maximumItems: maximumItems, byteBudget: byteBudget, createdAt: now)
        try composers.withLock { table throws(RPCError) in
            try save(composer)
            table.insert(composer)
        }
        return composer
    }

    /// Attaches an item after checking every limit again, under the same lock as the change.
    package func attach(_ item: AttachedItem, to composerID: String, providerLimit: Int) throws(RPCError) -> Composer {
        try composers.withLock { table throws(RPCError) in
            guard var composer = table[composerID] else { throw Self.notFound(composerID) }
            try ComposerPolicy.checkCanAttach(
                to: composer, providerID: item.providerID, providerLimit: providerLimit, encodedBytes: item.encodedBytes)
            composer.items.append(item)
            try save(composer)
            table[composerID] = composer
            return composer
        }
    }

    /// Removes one item; returns it.
    package func remove(itemID: String, from composerID: String) throws(RPCError) -> AttachedItem {
        try composers.withLock { table throws(RPCError) in
            guard var composer = table[composerID] else { throw Self.notFound(composerID) }
            guard let index = composer.items.firstIndex(where: { $0.hasID(itemID) }) else {
                throw RPCError(
                    .itemNotFound, "Composer '\(composerID)' has no item '\(itemID)'.",
                    data: ["composerId": .string(composerID), "itemId": .string(itemID)])
            }
            let removed = composer.items.remove(at: index)
            try save(composer)
            table[composerID] = composer
            return removed
        }
    }

    /// Removes the items that were sent (by id), keeping any attached meanwhile.
    package func removeSent(_ itemIDs: Set<String>, from composerID: String) throws(RPCError) {
        try composers.withLock { table throws(RPCError) in
            guard var composer = table[composerID] else { throw Self.notFound(composerID) }
            composer.items.removeAll { itemIDs.contains($0.id) }
            try save(composer)
            table[composerID] = composer
        }
    }

    /// Closes a composer and deletes its draft.
    package func close(_ composerID: String) throws(RPCError) -> Composer {
        try composers.withLock { table throws(RPCError) in
            guard let composer = table[composerID] else { throw Self.notFound(composerID) }
            if let directory {
                let path = "\(directory)/\(composerID).json"
                if unlink(path) != 0, errno != ENOENT {
                    throw RPCError(.stateWriteFailed, "Cannot delete the draft '\(path)': \(String(cString: strerror(errno))).")
                }
                Self.syncDirectory(directory)
            }
            table.remove(composerID)
            return composer
        }
    }

    static func notFound(_ id: String) -> RPCError {
        RPCError(
            .composerNotFound, "No composer has id '\(id)'; open one with composer/open, or call composer/list to see the open ones.",
            data: ["composerId": .string(id)])
    }

    // MARK: Disk

    /// Writes one composer atomically. Throws (and changes nothing) if the disk refuses.
    private func save(_ composer: Composer) throws(RPCError) {
        guard let directory else { return }
        let path = "\(directory)/\(composer.id).json"
        let temporary = "\(path).tmp-\(getpid())"
        let bytes = composer.draftBytes
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw writeFailure(path, "cannot create \(temporary)") }
        var ok = bytes.withUnsafeBytes { writeAll(fd, $0) }
        ok = ok && fsync(fd) == 0
        Glibc.close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let error = writeFailure(path, "cannot write it")
            unlink(temporary)
            throw error
        }
        Self.syncDirectory(directory)
    }

    private func writeFailure(_ path: String, _ what: String) -> RPCError {
        let reason = String(cString: strerror(errno))
        logger.error("Saving draft \(path) failed: \(what): \(reason)")
        return RPCError(
            .stateWriteFailed, "The draft could not be saved (\(what): \(reason)), so nothing was changed. Free disk space or fix the permissions of '\(path)', then try again.",
            data: ["path": .string(path), "reason": .string(reason)])
    }

    private static func syncDirectory(_ directory: String) {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            Glibc.close(fd)
        }
    }


    /// Loads every saved draft; removes leftovers of interrupted writes; sets aside unreadable files.
    private func restore(from directory: String) -> [String: Composer] {
        guard let dir = opendir(directory) else { return [:] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            names.append(name)
        }
        var restored: [String: Composer] = [:]
        for name in names.sorted() {
            let path = "\(directory)/\(name)"
            if name.contains(".json.tmp-") {
                unlink(path)  // an interrupted write; the previous version is still in place
                continue
            }
            guard name.hasSuffix(".json") else { continue }
            guard let bytes = try? FileBytes.read(path), let value = try? JSONValue(parsing: bytes),
                let composer = Composer(json: value), "\(composer.id).json" == name
            else {
                let aside = path + ".corrupt"
                rename(path, aside)
                logger.error("Draft '\(path)' is unreadable; moved it to '\(aside)' and went on.")
                continue
            }
            restored[composer.id] = composer
        }
        if !restored.isEmpty {
            logger.notice("Restored \(restored.count) draft(s) with \(restored.values.reduce(0) { $0 + $1.items.count }) item(s) from \(directory).")
        }
        return restored
    }
}

/// The open composers by id, and in the order `composer/list` lists them: oldest first (creation
/// time, then id), kept so rather than sorted for each listing.
struct OrderedComposers {
    /// Oldest first.
    private(set) var ordered: [Composer] = []
    /// Each composer's index in `ordered`.
    private var positions: [String: Int] = [:]

    init() {}

    /// These composers, in order.
    init(_ composers: some Sequence<Composer>) {
        ordered = composers.sorted(by: Self.precedes)
        for (index, composer) in ordered.enumerated() { positions[composer.id] = index }
        precondition(positions.count == ordered.count, "composers with the same id")
    }

    var count: Int { ordered.count }

    /// The composer with this id.
    subscript(id: String) -> Composer? {
        get { positions[id].map { ordered[$0] } }
        set {
            guard let newValue else {
                remove(id)
                return
            }
            precondition(newValue.id == id, "a composer is stored under its own id")
            if let position = positions[id], ordered[position].createdAt == newValue.createdAt {
                ordered[position] = newValue
            } else {
                insert(newValue)  // (a new one, or one whose place in the order changed)
            }
        }
    }

    /// Adds a composer (replacing one with the same id) in its place in the order. A new one is
    /// usually the newest: then it is appended.
    mutating func insert(_ composer: Composer) {
        remove(composer.id)
        let position: Int
        if let last = ordered.last, Self.precedes(composer, last) {
            var low = 0, high = ordered.count
            while low < high {
                let middle = (low + high) / 2
                if Self.precedes(ordered[middle], composer) { low = middle + 1 } else { high = middle }
            }
            position = low
        } else {
            position = ordered.count
        }
        ordered.insert(composer, at: position)
        for index in position..<ordered.count { positions[ordered[index].id] = index }
    }

    /// Removes the composer with this id, if there is one.
    @discardableResult
    mutating func remove(_ id: String) -> Composer? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        let removed = ordered.remove(at: position)
        for index in position..<ordered.count { positions[ordered[index].id] = index }
        return removed
    }

    /// The listing order: creation time, then id (equal times).
    private static func precedes(_ a: Composer, _ b: Composer) -> Bool {
        if a.createdAt != b.createdAt { return a.createdAt < b.createdAt }
        return a.id < b.id
    }
}

/// The attachment rules, in one place.
package enum ComposerPolicy {
    /// Throws the documented error if one more item of `providerID` (of `encodedBytes` bytes; 0
    /// when not known yet) would break a limit.
    package static func checkCanAttach(
        to composer: Composer, providerID: String, providerLimit: Int, encodedBytes: Int
    ) throws(RPCError) {
        let current = composer.count(of: providerID)
        if current >= providerLimit {
            throw RPCError(
                .attachmentLimitReached,
                "This composer already has \(current) item(s) from '\(providerID)', its maximum; remove one to attach another.",
                data: [
                    "kind": "provider", "composerId": .string(composer.id), "providerId": .string(providerID),
                    "limit": .number(Double(providerLimit)), "current": .number(Double(current)),
                ])
        }
        if composer.items.count >= composer.maximumItems {
            throw RPCError(
                .attachmentLimitReached,
                "This composer already has \(composer.items.count) item(s), its maximum; remove one to attach another.",
                data: [
                    "kind": "composer", "composerId": .string(composer.id), "providerId": .string(providerID),
                    "limit": .number(Double(composer.maximumItems)), "current": .number(Double(composer.items.count)),
                ])
        }
        let used = composer.bytesUsed
        if used + encodedBytes > composer.byteBudget || (encodedBytes == 0 && used >= composer.byteBudget) {
            throw RPCError(
                .byteBudgetExceeded,
                "The item's \(encodedBytes) encoded bytes do not fit: \(used) of the composer's \(composer.byteBudget)-byte budget are used.",
                data: [
                    "composerId": .string(composer.id), "providerId": .string(providerID),
                    "limit": .number(Double(composer.byteBudget)), "current": .number(Double(used)),
                    "itemBytes": .number(Double(encodedBytes)),
                ])
        }
    }
}
