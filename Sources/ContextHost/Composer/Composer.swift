import ContextProviderKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One draft message: the items attached to it and its limits (docs/protocol.md, "Composers").
///
/// Items are plain JSON owned by the host, so providers stay stateless and a restarted provider
/// serves old items. Each item keeps the encoding made when it was attached: that measures it
/// against the byte budget, and lets a draft be sent even when its provider is gone.
package struct Composer: Sendable, Equatable {
    package static let defaultMaximumItems = 10
    package static let defaultByteBudget = 4 << 20
    package static let maximumItemsCap = 100
    package static let byteBudgetCap = 64 << 20

    package var id: String
    /// At most this many items (like ChatKit's `contextPickerMaxItems`).
    package var maximumItems: Int
    /// At most this many bytes of encoded content across all items.
    package var byteBudget: Int
    package var items: [AttachedItem] {
        didSet { bytesUsed = Self.bytesUsed(by: items) }
    }
    /// Encoded bytes used by the attached items (kept with them: summaries are listed often).
    package private(set) var bytesUsed: Int
    /// Seconds since 1970 when it was opened.
    package var createdAt: Double

    package init(id: String, maximumItems: Int, byteBudget: Int, items: [AttachedItem] = [], createdAt: Double) {
        self.id = id
        self.maximumItems = maximumItems
        self.byteBudget = byteBudget
        self.items = items
        self.bytesUsed = Self.bytesUsed(by: items)
        self.createdAt = createdAt
    }

    private static func bytesUsed(by items: [AttachedItem]) -> Int { items.reduce(0) { $0 + $1.encodedBytes } }

    /// Appends the summary (`composerId`, `maximumItems`, `byteBudget`, `bytesUsed`,
    /// `itemCount`) as JSON text: `composer/list` without an id writes a thousand of them.
    package func appendSummary(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"composerId":"#.utf8)
        appendIDAndLimits(to: &output)
        output.append(contentsOf: #","bytesUsed":"#.utf8)
        JSONWriter.appendInteger(Int64(bytesUsed), to: &output)
        output.append(contentsOf: #","itemCount":"#.utf8)
        JSONWriter.appendInteger(Int64(items.count), to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// The id as a JSON string, then `,"maximumItems":N,"byteBudget":N`: what the summary and
    /// the draft file both write after their first key.
    private func appendIDAndLimits(to output: inout [UInt8]) {
        JSONWriter.appendString(id, to: &output)
        output.append(contentsOf: #","maximumItems":"#.utf8)
        JSONWriter.appendInteger(Int64(maximumItems), to: &output)
        output.append(contentsOf: #","byteBudget":"#.utf8)
        JSONWriter.appendInteger(Int64(byteBudget), to: &output)
    }

    /// How many items of one provider are attached.
    package func count(of providerID: String) -> Int {
        items.reduce(0) { $0 + ($1.providerID == providerID ? 1 : 0) }
    }
}

/// An item in a composer, with the encoding made when it was attached.
///
/// A composer may hold many items for a long time (1,000 composers × 100 items fit in ≤ 200 MB,
/// Benchmarks/results/composer.md), so each is kept as compact bytes in one buffer rather than as
/// trees of `JSONValue`: the item's JSON text, the encoding's JSON text around its `data` member,
/// the encoded bytes themselves (Base64-decoded, a quarter smaller), and the id and display name.
/// Provider ids and types are shared strings. The trees are rebuilt only when asked for (`item`,
/// `encoding`).
package struct AttachedItem: Sendable, Equatable {
    /// `item JSON | encoding JSON before data | encoding JSON after data | [data] | id | displayName`.
    /// The encoded data is often the item's content as JSON (a note's is): then it is not stored
    /// twice, and `dataStart..<dataEnd` points into the item's JSON.
    private let storage: [UInt8]
    private let itemEnd: Int32
    private let prefixEnd: Int32
    private let suffixEnd: Int32
    private let dataStart: Int32
    private let dataEnd: Int32
    private let idStart: Int32
    private let idEnd: Int32
    /// Whether `data` holds the Base64 text as the provider sent it (it was not canonical Base64),
    /// rather than the decoded bytes.
    private let dataIsText: Bool
    /// Whether the encoding has a `data` string at all.
    private let hasData: Bool
    /// The item's `providerId`.
    package let providerID: String
    /// The item's `type`.
    package let type: String
    /// Size of the encoded content (the decoded `data`).
    package let encodedBytes: Int

    /// An item as the provider made it (`id`, `providerId`, `type`, `displayName`, `content`…) and
    /// the provider's `item/encode` result for it.
    package init(item: JSONObject, encoding: JSONObject) {
        var bytes: [UInt8] = []
        JSONWriter.append(.object(item), to: &bytes)
        let itemEnd = bytes.count
        // The encoding, split around the value of `data`.
        let text = encoding["data"]?.stringValue
        var decoded: [UInt8]?
        if let text, let bytes = Base64.decode(text), Base64.encode(bytes) == text { decoded = bytes }
        var prefixEnd = 0
        bytes.append(UInt8(ascii: "{"))
        for (index, (key, value)) in encoding.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if key == "data", text != nil {
                prefixEnd = bytes.count
            } else {
                JSONWriter.append(value, to: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
        if text == nil {  // no data member: everything is the prefix, and the suffix is empty
            prefixEnd = bytes.count
        }
        let suffixEnd = bytes.count
        let dataIsText = decoded == nil && text != nil
        var dataRange = bytes.count..<bytes.count
        if let decoded, let inItem = Self.range(of: decoded, in: bytes, before: itemEnd) {
            dataRange = inItem
        } else {
            if let decoded { bytes.append(contentsOf: decoded) } else if let text { bytes.append(contentsOf: text.utf8) }
            dataRange = dataRange.lowerBound..<bytes.count
        }
        let idStart = bytes.count
        bytes.append(contentsOf: (item["id"]?.stringValue ?? "").utf8)
        let idEnd = bytes.count
        bytes.append(contentsOf: (item["displayName"]?.stringValue ?? "").utf8)
        // An exact-size copy: the buffer grew by doubling, and a composer keeps it for long.
        self.storage = bytes.withUnsafeBufferPointer { Array($0) }
        self.itemEnd = Int32(itemEnd)
        self.prefixEnd = Int32(prefixEnd)
        self.suffixEnd = Int32(suffixEnd)
        self.dataStart = Int32(dataRange.lowerBound)
        self.dataEnd = Int32(dataRange.upperBound)
        self.idStart = Int32(idStart)
        self.idEnd = Int32(idEnd)
        self.dataIsText = dataIsText
        self.hasData = text != nil
        self.providerID = Self.shared(item["providerId"]?.stringValue ?? "")
        self.type = Self.shared(item["type"]?.stringValue ?? "")
        if let decoded {
            encodedBytes = decoded.count
        } else if let text {  // as before: the size the Base64 text stands for
            let padding = text.hasSuffix("==") ? 2 : (text.hasSuffix("=") ? 1 : 0)
            encodedBytes = max(0, text.utf8.count / 4 * 3 - padding)
        } else {
            encodedBytes = 0
        }
    }

    package var id: String { String(decoding: storage[Int(idStart)..<Int(idEnd)], as: UTF8.self) }
    package var displayName: String { String(decoding: storage[Int(idEnd)...], as: UTF8.self) }

    /// Whether the item's id is `id`, without making a String.
    package func hasID(_ id: String) -> Bool {
        storage[Int(idStart)..<Int(idEnd)].elementsEqual(id.utf8)
    }

    /// The item's JSON text.
    package var itemJSON: ArraySlice<UInt8> { storage[..<Int(itemEnd)] }

    /// Appends the encoding's JSON text (with `data` as Base64 again).
    package func appendEncodingJSON(to output: inout [UInt8]) {
        output.append(contentsOf: storage[Int(itemEnd)..<Int(prefixEnd)])
        guard hasData else { return }
        let data = storage[Int(dataStart)..<Int(dataEnd)]
        if dataIsText {
            JSONWriter.appendString(String(decoding: data, as: UTF8.self), to: &output)
        } else {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: Base64.encode(data).utf8)
            output.append(UInt8(ascii: "\""))
        }
        output.append(contentsOf: storage[Int(prefixEnd)..<Int(suffixEnd)])
    }

    /// The item, decoded.
    package var item: JSONObject {
        (try? itemJSON.withUnsafeBytes { try JSONReader.parse($0) })?.objectValue ?? JSONObject()
    }

    /// The provider's `item/encode` result at attach time, decoded.
    package var encoding: JSONObject {
        var bytes: [UInt8] = []
        appendEncodingJSON(to: &bytes)
        return (try? bytes.withUnsafeBytes { try JSONReader.parse($0) })?.objectValue ?? JSONObject()
    }

    /// Where `needle` occurs in `bytes[..<end]`, if it does (and is not empty).
    private static func range(of needle: [UInt8], in bytes: [UInt8], before end: Int) -> Range<Int>? {
        guard !needle.isEmpty, needle.count <= end else { return nil }
        let offset: Int? = bytes.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { pattern in
                let first = pattern[0]
                var position = 0
                while position + pattern.count <= end {
                    if haystack[position] == first,
                        memcmp(haystack.baseAddress! + position, pattern.baseAddress!, pattern.count) == 0
                    {
                        return position
                    }
                    position += 1
                }
                return nil
            }
        }
        return offset.map { $0..<($0 + needle.count) }
    }

    /// Provider ids and types repeat across items: keep one copy of each.
    private static let sharedStrings = Mutex<Set<String>>([])

    private static func shared(_ text: String) -> String {
        sharedStrings.withLock { strings in
            if let existing = strings.firstIndex(of: text) { return strings[existing] }
            strings.insert(text)
            return text
        }
    }
}

// MARK: JSON (drafts on disk)

extension Composer {
    /// The draft file: `{"draftVersion":1,"id","maximumItems","byteBudget","createdAt","items":[{"item","encoding"}…]}`,
    /// written from the items' stored JSON text.
    package var draftBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256 + items.reduce(0) { $0 + $1.itemJSON.count + $1.encodedBytes * 4 / 3 + 256 })
        output.append(contentsOf: #"{"draftVersion":1,"id":"#.utf8)
        appendIDAndLimits(to: &output)
        output.append(contentsOf: #","createdAt":"#.utf8)
        JSONWriter.appendNumber(createdAt, to: &output)
        Self.appendItems(items, to: &output) { _, item, output in
            output.append(contentsOf: #","encoding":"#.utf8)
            item.appendEncodingJSON(to: &output)
            output.append(UInt8(ascii: "}"))
        }
        return output
    }

    /// `,"items":[…]}` to end an object: for each item `{"item":` and its stored JSON, then what
    /// `rest` appends for it (its other members and the closing brace). The draft file and the
    /// listing both write their items so.
    package static func appendItems(
        _ items: [AttachedItem], to output: inout [UInt8], rest: (_ index: Int, AttachedItem, inout [UInt8]) -> Void
    ) {
        output.append(contentsOf: #","items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"item":"#.utf8)
            output.append(contentsOf: item.itemJSON)
            rest(index, item, &output)
        }
        output.append(contentsOf: "]}".utf8)
    }

    /// Reads a saved draft; nil if it is not one this host wrote.
    package init?(json: JSONValue) {
        guard json["draftVersion"]?.intValue == 1, let id = json["id"]?.stringValue,
            let maximumItems = json["maximumItems"]?.intValue, let byteBudget = json["byteBudget"]?.intValue,
            let items = json["items"]?.arrayValue
        else { return nil }
        var attached: [AttachedItem] = []
        for entry in items {
            guard let item = entry["item"]?.objectValue, let encoding = entry["encoding"]?.objectValue else { return nil }
            attached.append(AttachedItem(item: item, encoding: encoding))
        }
        self.init(
            id: id, maximumItems: maximumItems, byteBudget: byteBudget, items: attached,
            createdAt: json["createdAt"]?.numberValue ?? 0)
    }
}
