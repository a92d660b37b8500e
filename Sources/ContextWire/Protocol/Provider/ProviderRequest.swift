#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One request as the SDK receives it: the envelope read member by member, and `params` kept as a
/// byte range into the message, decoded only by what the method needs.
///
/// Here rather than in the SDK so that the reader's closure-taking primitives (`readMembers`,
/// `readElements`) are specialized with it: across modules they are called through closures,
/// which cost ~5% of an `item/preview` (callgrind).
///
/// The whole message is checked to be valid JSON, but no tree is built for the envelope, and the
/// item of an item method is decoded straight into a `ContextItem` (only its `content` becomes a
/// `JSONValue`): while the message is read, when `method` came before `params` (as hosts write
/// it), else from the params' bytes afterwards.
package struct ProviderRequest {
    /// The members of the envelope; a repeated member keeps its last value, as in `JSONObject`.
    package var jsonrpc: JSONValue?
    package var id: JSONValue?
    package var method: JSONValue?
    package var params: RequestParams
    /// `params.items` of an `item/previewMany` read while the message was (when `method` came
    /// before `params` and `items` is an array): each item decoded, or why it could not be; nil
    /// otherwise (then `ProviderInstance.items` reads them from the params' bytes).
    package var previewItems: PreviewItems?

    /// Whether `name` is a method whose params are `{item}` (plus members the SDK ignores for
    /// them). A `switch`, not a `Set`: comparing a short string costs a fraction of hashing it.
    package static func isItemMethod(_ name: String) -> Bool {
        switch name {
        case ItemPreviewRequest.method, ItemDetailRequest.method, ItemDescribeRequest.method: true
        default: false
        }
    }

    /// What is wrong with a message before its members can be read.
    package enum Failure: Error {
        /// Not JSON; `id` is the request's id when it was read before the fault (hosts write it
        /// first), so the error can answer that request rather than none.
        case parse(JSONParseError, id: JSONValue?)
        /// JSON, but not an object; the type name of what it is.
        case notAnObject(String)
    }

    /// Reads `message`, which must be one JSON object.
    ///
    /// With `eachPreviewItem`, the items of an `item/previewMany` are handed to it one by one as
    /// they are read, and not kept (`previewItems` then has only their `count`): the caller makes
    /// each chip while the item is fresh, and its strings are freed before the next is read.
    /// What it was given is this request's items only if `streamedPreviewItems` is true.
    package init(
        scanning message: UnsafeRawBufferPointer,
        eachPreviewItem: ((Result<ContextItem, JSONDecodeError>) -> Void)? = nil
    ) throws(Failure) {
        var reader = JSONReader(message)
        // Accept exactly what `JSONReader.parse` accepts, skipped parts included.
        reader.checksSurrogates = true
        reader.skipWhitespace()
        guard !reader.atEnd, reader.current == UInt8(ascii: "{") else {
            // Not an object: say what it is (or why it is not JSON).
            let value: JSONValue
            do { value = try JSONReader.parse(message) } catch { throw .parse(error, id: nil) }
            throw .notAnObject(value.typeName)
        }
        var jsonrpc: JSONValue?, id: JSONValue?, method: JSONValue?, params: Range<Int>?
        var item: ContextItem?
        var previewItems: PreviewItems?
        var itemArrays = 0
        do throws(JSONParseError) {
            try reader.readMembers { key, reader throws(JSONParseError) in
                switch key {
                case "jsonrpc": jsonrpc = try reader.readValue()
                case "id": id = try reader.readValue()
                case "method": method = try reader.readValue()
                case "params":
                    let start = reader.position
                    item = nil
                    previewItems = nil
                    if case .string(let name)? = method, Self.isItemMethod(name) {
                        item = try RequestParams.readItem(&reader)
                    } else if case .string(ItemPreviewManyRequest.method)? = method {
                        previewItems = try RequestParams.readPreviewItems(&reader, arrays: &itemArrays, each: eachPreviewItem)
                    } else {
                        try reader.skipValue()
                    }
                    params = start..<reader.position
                default: try reader.skipValue()
                }
            }
            reader.skipWhitespace()
            guard reader.atEnd else { throw reader.error("Unexpected data after the JSON value") }
        } catch {
            // Only an id that is itself valid and complete: a number or a string.
            switch id {
            case .number?, .string?: throw .parse(error, id: id)
            default: throw .parse(error, id: nil)
            }
        }
        self.jsonrpc = jsonrpc
        self.id = id
        self.method = method
        // An item read for another method (a later `method` member replaced the first) is not used.
        if case .string(let name)? = method, !Self.isItemMethod(name) { item = nil }
        if method != .string(ItemPreviewManyRequest.method) { previewItems = nil }
        self.params = RequestParams(message: message, range: params, item: item)
        self.previewItems = previewItems
        // (A repeated `params` or `items` keeps the last, and what came before it was handed out too.)
        self.streamedPreviewItems = eachPreviewItem != nil && previewItems != nil && itemArrays == 1
    }

    /// Whether `eachPreviewItem` was given exactly the items of `previewItems`: false when there
    /// was none, or when the message repeats `params` or `items`.
    package var streamedPreviewItems = false

    /// The id of an `item/previewMany` request that starts exactly as hosts write one,
    /// `{"jsonrpc":"2.0","id":ID,"method":"item/previewMany","params":`, else nil. Nothing after
    /// that is read: such a request is read (and checked) in its task, not by `call`.
    package static func previewManyID(_ message: UnsafeRawBufferPointer) -> Int? {
        let prefix: StaticString = #"{"jsonrpc":"2.0","id":"#
        let suffix: StaticString = #","method":"item/previewMany","params":"#
        guard message.count > prefix.utf8CodeUnitCount + suffix.utf8CodeUnitCount + 1,
            memcmp(message.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        else { return nil }
        var index = prefix.utf8CodeUnitCount
        var id = 0
        // A plain integer of at most 15 digits, no leading zero (as `JSONValue.intValue` reads it).
        guard (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(message[index]) else { return nil }
        while index < message.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(message[index]) {
            guard index - prefix.utf8CodeUnitCount < 15 else { return nil }
            id = id * 10 + Int(message[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard message.count - index > suffix.utf8CodeUnitCount,
            memcmp(message.baseAddress! + index, suffix.utf8Start, suffix.utf8CodeUnitCount) == 0
        else { return nil }
        return id
    }
}

/// The items of an `item/previewMany`, decoded one by one (a bad item costs only its own chip),
/// and how many there were (past `maximumPreviewBatch` they are only counted).
package struct PreviewItems {
    package var items: [Result<ContextItem, JSONDecodeError>] = []
    package var count = 0

    /// The most items one `item/previewMany` may carry (docs/provider-abi.md).
    package static var maximumPreviewBatch: Int { 256 }
}

/// A request's `params`, undecoded: valid JSON (the whole message was checked), decoded on demand.
/// Valid only while the message is (during `receive`).
package struct RequestParams {
    package let message: UnsafeRawBufferPointer
    /// Where `params` is in the message; nil when the request has none.
    package let range: Range<Int>?
    /// `params.item`, when it was decoded while the message was read.
    package var item: ContextItem?

    package init(message: UnsafeRawBufferPointer, range: Range<Int>?, item: ContextItem? = nil) {
        self.message = message
        self.range = range
        self.item = item
    }

    /// The params as a value; absent params are an empty object.
    package func value() throws(JSONDecodeError) -> JSONValue {
        guard let range else { return .object(JSONObject()) }
        do {
            return try JSONReader.parse(UnsafeRawBufferPointer(rebasing: message[range]))
        } catch {
            // Unreachable: the range was checked when the message was scanned.
            throw JSONDecodeError(path: "params", message: "not valid JSON: \(error)")
        }
    }

    /// `params.item`, moved out when it was decoded with the message (a request uses it once). The
    /// direct decoding (`readItem`) takes only plain valid items; anything unusual (a missing or
    /// mistyped member, params or item not objects) is decoded again the general way, which finds
    /// the exact error: both ways accept and refuse the same requests.
    package mutating func takeItem() throws(JSONDecodeError) -> ContextItem {
        var taken: ContextItem?
        swap(&taken, &item)
        if let taken { return taken }
        return try decodeItemAgain()
    }

    /// `params.item` decoded from the params' bytes.
    private func decodeItemAgain() throws(JSONDecodeError) -> ContextItem {
        if let range {
            var reader = JSONReader(UnsafeRawBufferPointer(rebasing: message[range]))
            if let item = try? Self.readItem(&reader) { return item }
        }
        return try JSONObjectReader(value(), path: "params").decode("item", as: ContextItem.self)
    }

    /// Reads the params value at the reader's position (checking it is valid JSON) and decodes its
    /// `item` member if params and item are plain valid ones; nil otherwise. A repeated `item`
    /// keeps the last one, as in a `JSONObject`.
    package static func readItem(_ reader: inout JSONReader) throws(JSONParseError) -> ContextItem? {
        guard !reader.atEnd, reader.current == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var item: ContextItem?
        var found = false
        try reader.readMembers { key, reader throws(JSONParseError) in
            if key == "item" {
                found = true
                item = try readItemObject(&reader)
            } else {
                try reader.skipValue()
            }
        }
        return found ? item : nil
    }

    /// Reads the params value at the reader's position (checking it is valid JSON) and decodes
    /// the elements of its `items` member, if params is an object and `items` an array; nil
    /// otherwise. A repeated `items` keeps the last one, as in a `JSONObject`.
    ///
    /// With `each`, the items (up to `maximumPreviewBatch`) go to it instead of into `items`.
    /// `arrays` counts the `items` arrays read.
    package static func readPreviewItems(
        _ reader: inout JSONReader, arrays: inout Int, each: ((Result<ContextItem, JSONDecodeError>) -> Void)? = nil
    ) throws(JSONParseError) -> PreviewItems? {
        guard !reader.atEnd, reader.current == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var items: PreviewItems?
        let bytes = reader.bytes
        try reader.readMembers { key, reader throws(JSONParseError) in
            guard key == "items" else { return try reader.skipValue() }
            guard !reader.atEnd, reader.current == UInt8(ascii: "[") else {
                items = nil
                return try reader.skipValue()
            }
            arrays += 1
            var read = PreviewItems()
            try reader.readElements { reader throws(JSONParseError) in
                read.count += 1
                guard read.count <= PreviewItems.maximumPreviewBatch else { return try reader.skipValue() }
                let start = reader.position
                let item: Result<ContextItem, JSONDecodeError>
                if let plain = try readItemObject(&reader) {
                    item = .success(plain)
                } else {
                    let value = try JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[start..<reader.position]))
                    let path = "params.items[\(read.count - 1)]"
                    item = Result { () throws(JSONDecodeError) in try ContextItem(json: value, path: path) }
                }
                // (Only the first array is handed out: with a second one the message is read again
                // the ordinary way, and its items need not be previewed twice.)
                if let each, arrays == 1 { each(item) } else { read.items.append(item) }
            }
            items = read
        }
        return items
    }

    /// Reads one value; a plain valid item object becomes the item, anything else nil.
    package static func readItemObject(_ reader: inout JSONReader) throws(JSONParseError) -> ContextItem? {
        guard !reader.atEnd, reader.current == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var id: String?, providerId: String?, type: String?, displayName: String?, createdAt: String?
        var content: JSONValue = .null
        // A member of the wrong type is left to the general decoder to name.
        var unusual = false
        try reader.readMembers { key, reader throws(JSONParseError) in
            switch key {
            case "id": id = try reader.readIfString()
            case "providerId": providerId = try reader.readIfString()
            case "type": type = try reader.readIfString()
            case "displayName": displayName = try reader.readIfString()
            case "content": content = try reader.readValue()
            case "createdAt":
                if !reader.atEnd, reader.current == UInt8(ascii: "n") {
                    _ = try reader.readValue()
                    createdAt = nil
                } else {
                    createdAt = try reader.readIfString()
                    if createdAt == nil { unusual = true }
                }
            default: try reader.skipValue()
            }
        }
        guard !unusual, let id, !id.isEmpty, let providerId, let type, let displayName else { return nil }
        return ContextItem(id: id, providerId: providerId, type: type, displayName: displayName, content: content, createdAt: createdAt)
    }
}

extension JSONObjectReader {
    /// Reads a request's params, which must be an object (absent params are an empty one).
    package init(_ params: RequestParams, path: String) throws(JSONDecodeError) {
        try self.init(params.value(), path: path)
    }
}

extension JSONReader {
    /// Reads a string, or skips a value of another type and returns nil.
    package mutating func readIfString() throws(JSONParseError) -> String? {
        guard !atEnd, current == UInt8(ascii: "\"") else {
            try skipValue()
            return nil
        }
        return try readString()
    }
}
