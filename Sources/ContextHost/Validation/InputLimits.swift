import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Limits on what a client may send and keep open (docs/security.md §6). The message size cap is
/// `HostConfiguration.maximumMessageBytes` and the nesting depth `JSONReader.maximumDepth` (256).
public struct InputLimits: Sendable, Equatable {
    /// Longest string (or object key) anywhere in `params`, in bytes of JSON text. Default 1 MiB.
    /// Items (`params.item`) are measured whole instead, against `OutputLimits.itemBytes`.
    public var maximumStringBytes = 1 << 20
    /// Most elements of one array, or members of one object, anywhere in `params`. Default 10,000.
    public var maximumElements = 10_000
    /// Most values in one `collect/submit` or `collect/query` (`params.values`). Default 1,000.
    public var maximumFormValues = 1_000
    /// Most composers open at once (drafts restored at start included). Default 64.
    public var maximumComposers = 64
    /// Most collection sessions open at once. Default 64.
    public var maximumCollectionSessions = 64

    public init() {}

    /// The limits as reported in `initialize` → `capabilities.limits`.
    package func json(messageLimit: Int, itemLimit: Int) -> JSONValue {
        [
            "maximumMessageBytes": .number(Double(messageLimit)),
            "maximumDepth": .number(Double(JSONReader.maximumDepth)),
            "maximumStringBytes": .number(Double(maximumStringBytes)),
            "maximumElements": .number(Double(maximumElements)),
            "maximumFormValues": .number(Double(maximumFormValues)),
            "maximumItemBytes": .number(Double(itemLimit)),
            "maximumComposers": .number(Double(maximumComposers)),
            "maximumCollectionSessions": .number(Double(maximumCollectionSessions)),
            "maximumComposerItems": .number(Double(Composer.maximumItemsCap)),
        ]
    }

    /// Checks every string, array and object in a request's `params` (valid JSON, already
    /// scanned by `Envelope.scan`, so its depth is within limits). `params.item` is not entered:
    /// it is measured whole against `itemLimit`.
    ///
    /// Errors are `-32602` naming the field and the limit, e.g. `params.values.title: a string of
    /// 2097152 bytes exceeds the limit of 1048576 bytes (maximumStringBytes).`, with
    /// `data: {field, limit, length, limitName}`.
    ///
    /// Returns where `params.item` and its `providerId` are, found on the way (the `items/*`
    /// methods route by them without reading the params again).
    ///
    /// - Parameter known: where `Envelope.scan` found the item (`Envelope.itemLocation`); found
    ///   here the same way when not given. That item is stepped over rather than read again.
    @discardableResult
    package func checkParams(
        _ bytes: UnsafeRawBufferPointer, range: Range<Int>, itemLimit: Int, known: ItemLocation? = nil
    ) throws(RPCError) -> ItemLocation {
        var walker = ParamsWalker(bytes: bytes, limits: self, itemLimit: itemLimit, position: range.lowerBound)
        do {
            if let known {
                walker.item = known
            } else {
                var reader = JSONReader(bytes, position: range.lowerBound)
                reader.skipWhitespace()
                walker.item = try Envelope.skipParams(&reader)
            }
            try walker.walk(top: true)
            return walker.item
        } catch let error as RPCError {
            throw error
        } catch {
            // Unreachable for scanned messages; refuse rather than guess.
            throw RPCError(.parseError, "params: \(error)")
        }
    }

    /// The error for one exceeded limit: `"<field>: <what> exceeds the limit of <limit><unit> (<name>)."`.
    static func exceeded(_ field: String, _ what: String, length: Int, limit: Int, unit: String = "", name: String) -> RPCError {
        RPCError(
            .invalidParams, "\(field): \(what) exceeds the limit of \(limit)\(unit) (\(name)).",
            data: [
                "field": .string(field), "limit": .number(Double(limit)), "length": .number(Double(length)),
                "limitName": .string(name),
            ])
    }

    /// Checks the number of form values in `params.values`.
    package func checkFormValues(_ values: JSONObject) throws(RPCError) {
        guard values.count > maximumFormValues else { return }
        throw Self.exceeded(
            "params.values", "a form with \(values.count) values", length: values.count, limit: maximumFormValues, name: "maximumFormValues")
    }

    /// The error when too many things of one kind are open.
    static func tooManyOpen(_ what: String, current: Int, limit: Int, name: String, fix: String) -> RPCError {
        RPCError(
            .limitExceeded, "There are already \(current) open \(what), the host's limit (\(name) = \(limit)); \(fix)",
            data: ["limit": .number(Double(limit)), "current": .number(Double(current)), "limitName": .string(name)])
    }

    package func checkCanOpenComposer(current: Int) throws(RPCError) {
        guard current >= maximumComposers else { return }
        throw Self.tooManyOpen(
            "composers", current: current, limit: maximumComposers, name: "maximumComposers",
            fix: "send or close one (composer/close) first.")
    }

    package func checkCanOpenSession(current: Int) throws(RPCError) {
        guard current >= maximumCollectionSessions else { return }
        throw Self.tooManyOpen(
            "collection sessions", current: current, limit: maximumCollectionSessions, name: "maximumCollectionSessions",
            fix: "finish or cancel one (collect/cancel) first.")
    }
}

/// Where a request's `params.item` and `params.progressToken` are, as byte ranges into the
/// message: found while the params are checked, so the `items/*` path reads neither twice.
package struct ItemLocation: Sendable, Equatable {
    /// Whether the params were scanned (`Envelope.skipParams`): only then does a nil range mean
    /// the member is absent.
    package var scanned = false
    /// The value of the last `item` member of params (a repeated key keeps its last value).
    package var item: Range<Int>?
    /// The value of the last `providerId` member of that item, when the item is an object (the
    /// provider decodes the item the same way: a repeated key keeps its last value).
    package var providerID: Range<Int>?
    /// The value of the last top-level `progressToken` member of params.
    package var progressToken: Range<Int>?
}

/// Walks raw params once, checking string lengths and element counts; builds a field path only
/// when it reports a problem.
private struct ParamsWalker {
    let bytes: UnsafeRawBufferPointer
    let limits: InputLimits
    let itemLimit: Int
    var position: Int
    var trail: [Component] = []
    /// Where `params.item` (the last one) and its `providerId` are, found by `Envelope.skipParams`.
    var item = ItemLocation()

    enum Component {
        case key(Range<Int>)
        case index(Int)
    }

    init(bytes: UnsafeRawBufferPointer, limits: InputLimits, itemLimit: Int, position: Int) {
        self.bytes = bytes
        self.limits = limits
        self.itemLimit = itemLimit
        self.position = position
    }

    func path(_ extra: Component? = nil) -> String {
        var text = "params"
        for component in trail + (extra.map { [$0] } ?? []) {
            switch component {
            case .key(let range):
                var reader = JSONReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
                let key = (try? reader.readString()) ?? "?"
                text += "." + (key.count > 64 ? String(key.prefix(64)) + "…" : key)
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// Skips a string token and returns its length in bytes of JSON text (without the quotes).
    mutating func string() throws -> Int {
        var reader = JSONReader(bytes, position: position)
        try reader.skipString()
        defer { position = reader.position }
        return reader.position - position - 2
    }

    mutating func skipValue() throws {
        var reader = JSONReader(bytes, position: position)
        try reader.skipValue()
        position = reader.position
    }

    /// Skips the value of a top-level `item` member: the item is measured whole, not walked for
    /// limits. The last one, located already (`item`), is stepped over; an earlier repeated one
    /// is skipped.
    mutating func skipItem() throws {
        if let located = item.item, located.lowerBound == position {
            position = located.upperBound
            return
        }
        try skipValue()
    }

    mutating func walk(top: Bool = false) throws {
        skipWhitespace()
        guard position < bytes.count else { return }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            try walkObject(top: top)
        case UInt8(ascii: "["):
            try walkArray()
        case UInt8(ascii: "\""):
            let length = try string()
            if length > limits.maximumStringBytes {
                throw InputLimits.exceeded(
                    path(), "a string of \(length) bytes", length: length, limit: limits.maximumStringBytes,
                    unit: " bytes", name: "maximumStringBytes")
            }
        default:
            try skipValue()
        }
    }

    /// Moves to the next element of the object or array being walked, past white space and
    /// commas; false, past `close`, when the container ends (or at the end of the input).
    private mutating func atNextElement(closing close: UInt8) -> Bool {
        while true {
            skipWhitespace()
            guard position < bytes.count else { return false }
            if bytes[position] == close {
                position += 1
                return false
            }
            guard bytes[position] == UInt8(ascii: ",") else { return true }
            position += 1
        }
    }

    /// An object's members (at its `{`); at the top, `item` is measured whole against the item limit.
    private mutating func walkObject(top: Bool) throws {
        position += 1
        var count = 0
        while atNextElement(closing: UInt8(ascii: "}")) {
            let keyStart = position
            let keyLength = try string()
            let key = Component.key(keyStart..<position)
            count += 1
            if count > limits.maximumElements {
                throw InputLimits.exceeded(
                    path(), "an object with more than \(limits.maximumElements) members", length: count, limit: limits.maximumElements,
                    name: "maximumElements")
            }
            if keyLength > limits.maximumStringBytes {
                throw InputLimits.exceeded(
                    path(), "a member name of \(keyLength) bytes", length: keyLength, limit: limits.maximumStringBytes,
                    unit: " bytes", name: "maximumStringBytes")
            }
            skipWhitespace()
            position += 1  // ':'
            skipWhitespace()
            if top, RawObject.isKey(UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(keyStart + keyLength + 2)]), "item") {
                let start = position
                try skipItem()
                let length = position - start
                if length > itemLimit {
                    throw InputLimits.exceeded(
                        "params.item", "an item of \(length) bytes", length: length, limit: itemLimit, unit: " bytes",
                        name: "maximumItemBytes")
                }
                continue
            }
            trail.append(key)
            try walk()
            trail.removeLast()
        }
    }

    /// An array's elements (at its `[`).
    private mutating func walkArray() throws {
        position += 1
        var index = 0
        while atNextElement(closing: UInt8(ascii: "]")) {
            if index >= limits.maximumElements {
                throw InputLimits.exceeded(
                    path(), "an array with more than \(limits.maximumElements) elements", length: index + 1,
                    limit: limits.maximumElements,
                    name: "maximumElements")
            }
            trail.append(.index(index))
            try walk()
            trail.removeLast()
            index += 1
        }
    }
}
