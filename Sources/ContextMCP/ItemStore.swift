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

/// The collected items, kept in the state folder so they survive a restart: one append-only
/// file, `items.jsonl`, a line per item saved (the last line of a URI wins), rewritten without
/// the dropped lines once it holds twice as many lines as items. Appending costs a `write`; a file
/// per item cost a create and a rename each, 3× the bridge's whole `tools/call` on ext4.
///
/// A torn or damaged line (a crash in the middle of a write, an edit) is skipped when the file is
/// read, and said once in the log. In memory only without a state folder. At most `maximumItems`
/// are kept: the oldest go first.
package final class ItemStore: Sendable {
    static let maximumItems = 10_000
    /// Largest file read back; a larger one is set aside (renamed `.too-large`), not read.
    static let maximumFileBytes = 1 << 30
    static let fileName = "items.jsonl"

    private let path: String?
    private let logger: Logger
    private struct State {
        var items: [String: StoredItem] = [:]
        /// URIs, oldest first.
        var order: [String] = []
        /// The open file (appending), or -1.
        var fd: Int32 = -1
        /// Lines in the file.
        var lines = 0
    }
    private let state = Mutex(State())

    /// Opens the store in `directory` (created private if missing), reading the items there.
    package init(directory: String?, logger: Logger) {
        self.logger = logger
        guard let directory else {
            path = nil
            return
        }
        guard Directories.makePrivate(directory) else {
            logger.warning("MCP items: cannot create \(directory) (\(String(cString: strerror(errno)))); items are kept in memory only.")
            path = nil
            return
        }
        let path = directory + "/" + Self.fileName
        self.path = path
        var info = stat()
        var lines = 0
        var loaded: [String: StoredItem] = [:]
        var order: [String] = []
        if stat(path, &info) == 0 {
            if info.st_size > Self.maximumFileBytes {
                rename(path, path + ".too-large")
                logger.warning("MCP items: \(path) is larger than \(Self.maximumFileBytes) bytes; set aside as \(path).too-large, starting empty.")
            } else if let bytes = try? FileBytes.read(path) {
                var skipped = 0
                for line in bytes.split(separator: UInt8(ascii: "\n")) {
                    lines += 1
                    guard let json = try? JSONReader.parse(Array(line)), let stored = StoredItem(json: json) else {
                        skipped += 1
                        continue
                    }
                    if loaded.updateValue(stored, forKey: stored.uri) != nil { order.removeAll { $0 == stored.uri } }
                    order.append(stored.uri)
                }
                if skipped > 0 { logger.warning("MCP items: skipped \(skipped) damaged line(s) of \(path).") }
            }
        }
        let kept = order.suffix(Self.maximumItems)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { logger.warning("MCP items: cannot open \(path) (\(String(cString: strerror(errno)))); new items are kept in memory only.") }
        state.withLock { state in
            for uri in kept { state.items[uri] = loaded[uri] }
            state.order = Array(kept)
            state.fd = fd
            state.lines = lines
        }
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { close(state.fd) }
        }
    }

    /// Every item, oldest first.
    func all() -> [StoredItem] {
        state.withLock { state in state.order.compactMap { state.items[$0] } }
    }

    func item(uri: String) -> StoredItem? {
        state.withLock { $0.items[uri] }
    }

    /// Keeps `stored` (replacing an item with its URI): one line appended to the file.
    func save(_ stored: StoredItem) {
        var line = stored.json.jsonBytes
        line.append(UInt8(ascii: "\n"))
        state.withLock { state in
            if state.items.updateValue(stored, forKey: stored.uri) != nil {
                state.order.removeAll { $0 == stored.uri }
            }
            state.order.append(stored.uri)
            if state.order.count > Self.maximumItems {
                let old = state.order.prefix(state.order.count - Self.maximumItems)
                for uri in old { state.items[uri] = nil }
                state.order.removeFirst(old.count)
            }
            guard let path, state.fd >= 0 else { return }
            if !line.withUnsafeBytes({ writeAll(state.fd, $0) }) {
                logger.warning("MCP items: cannot write \(path) (\(String(cString: strerror(errno)))); the item is kept in memory only.")
                return
            }
            state.lines += 1
            if state.lines > 2 * max(state.order.count, 1000) { compact(&state, path: path) }
        }
    }

    /// Rewrites the file with the kept items only (a temporary file renamed over it).
    private func compact(_ state: inout State, path: String) {
        var bytes: [UInt8] = []
        for uri in state.order {
            guard let stored = state.items[uri] else { continue }
            bytes.append(contentsOf: stored.json.jsonBytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        if let failure = AtomicFile.write(bytes, to: path) {
            logger.warning("MCP items: cannot rewrite \(path) (\(failure)); it keeps growing until it can.")
            return
        }
        close(state.fd)
        state.fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        state.lines = state.order.count
    }
}
