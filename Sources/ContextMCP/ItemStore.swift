import ContextHost
import ContextProtocol
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A collected item as an MCP resource: what `resources/list` and `resources/read` serve without
/// calling the provider again (the provider may be gone by then).
struct StoredItem: Sendable, Equatable {
    var uri: String
    var item: ContextItem
    /// `items/describe`: the text a model reads.
    var description: String
    /// The chip's thumbnail (a `data:` URI), the resource's icon.
    var thumbnail: String?
    /// Each encoding the provider gave (`items/encode` json, text, binary).
    var encodings: [EncodedItem]

    var json: JSONValue {
        var object: JSONObject = [
            "version": 1, "uri": .string(uri), "item": item.json, "description": .string(description),
            "encodings": .array(encodings.map(\.json)),
        ]
        object.setIfPresent("thumbnail", thumbnail.map(JSONValue.string))
        return .object(object)
    }

    init(uri: String, item: ContextItem, description: String, thumbnail: String?, encodings: [EncodedItem]) {
        self.uri = uri
        self.item = item
        self.description = description
        self.thumbnail = thumbnail
        self.encodings = encodings
    }

    init?(json: JSONValue) {
        guard json["version"]?.intValue == 1, let uri = json["uri"]?.stringValue, let itemJSON = json["item"],
            let item = try? ContextItem(json: itemJSON), let description = json["description"]?.stringValue,
            let encodings = json["encodings"]?.arrayValue
        else { return nil }
        self.uri = uri
        self.item = item
        self.description = description
        self.thumbnail = json["thumbnail"]?.stringValue
        self.encodings = encodings.compactMap { try? EncodedItem(json: $0) }
    }

    /// `contexthost://items/<provider>/<item>`, each id percent-encoded.
    static func uri(providerID: String, itemID: String) -> String {
        "contexthost://items/\(percentEncoded(providerID))/\(percentEncoded(itemID))"
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The collected items, kept in the state folder (one JSON file each, named by the SHA-256 of its
/// URI) so they survive a restart; in memory only without a state folder. At most
/// `maximumItems` are kept: the oldest go first.
final class ItemStore: Sendable {
    static let maximumItems = 10_000
    /// Largest item file read back (a bigger one is skipped with a warning).
    static let maximumFileBytes = 64 << 20

    private let directory: String?
    private let logger: Logger
    private struct State {
        var items: [String: StoredItem] = [:]
        /// URIs, oldest first.
        var order: [String] = []
    }
    private let state = Mutex(State())

    /// Opens the store in `directory` (created private if missing), reading the items there.
    init(directory: String?, logger: Logger) {
        self.logger = logger
        guard let directory, Directories.makePrivate(directory) else {
            if let directory { logger.warning("MCP items: cannot create \(directory) (\(String(cString: strerror(errno)))); items are kept in memory only.") }
            self.directory = nil
            return
        }
        self.directory = directory
        var loaded: [(StoredItem, Int)] = []
        if let folder = opendir(directory) {
            defer { closedir(folder) }
            while let entry = readdir(folder) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard name.hasSuffix(".json"), name.count == 69 else { continue }
                let path = directory + "/" + name
                var info = stat()
                guard stat(path, &info) == 0, info.st_size <= Self.maximumFileBytes else {
                    logger.warning("MCP items: skipping \(path) (unreadable or larger than \(Self.maximumFileBytes) bytes).")
                    continue
                }
                guard let bytes = try? FileBytes.read(path), let json = try? JSONReader.parse(bytes), let stored = StoredItem(json: json),
                    Self.fileName(for: stored.uri) == name
                else {
                    logger.warning("MCP items: skipping \(path): not a stored item; delete it if it is not needed.")
                    continue
                }
                loaded.append((stored, Int(info.st_mtim.tv_sec)))
            }
        }
        loaded.sort { $0.1 < $1.1 }
        state.withLock { state in
            for (stored, _) in loaded.suffix(Self.maximumItems) {
                state.items[stored.uri] = stored
                state.order.append(stored.uri)
            }
        }
    }

    static func fileName(for uri: String) -> String { SHA256.hex(of: uri) + ".json" }

    /// Every item, oldest first.
    func all() -> [StoredItem] {
        state.withLock { state in state.order.compactMap { state.items[$0] } }
    }

    func item(uri: String) -> StoredItem? {
        state.withLock { $0.items[uri] }
    }

    /// Keeps `stored` (replacing an item with its URI). The file is written to a temporary name
    /// and renamed, so a crash leaves the old file or the new one.
    func save(_ stored: StoredItem) {
        let evicted: [String] = state.withLock { state in
            if state.items.updateValue(stored, forKey: stored.uri) != nil {
                state.order.removeAll { $0 == stored.uri }
            }
            state.order.append(stored.uri)
            guard state.order.count > Self.maximumItems else { return [] }
            let old = Array(state.order.prefix(state.order.count - Self.maximumItems))
            state.order.removeFirst(old.count)
            for uri in old { state.items[uri] = nil }
            return old
        }
        guard let directory else { return }
        for uri in evicted { unlink(directory + "/" + Self.fileName(for: uri)) }
        let path = directory + "/" + Self.fileName(for: stored.uri)
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let bytes = stored.json.jsonBytes
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return failed(path) }
        let written = bytes.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        guard written, rename(temporary, path) == 0 else {
            unlink(temporary)
            return failed(path)
        }
    }

    private func failed(_ path: String) {
        logger.warning("MCP items: cannot write \(path) (\(String(cString: strerror(errno)))); the item is kept in memory only.")
    }
}
