import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The top level of one JSON-RPC message, scanned without decoding `params`, `result` or `error`.
///
/// Values are byte ranges into the message, so a handler decodes only what it needs and the host
/// can pass `params` or a provider's `result` through untouched.
package struct Envelope: Sendable {
    package var isObject = false
    package var jsonrpc: String?
    /// Raw bytes of the `id` value, if present and valid (a string, a number or null).
    package var id: Range<Int>?
    /// The `id` member is present but is not a string, number or null.
    package var idIsInvalid = false
    package var method: String?
    /// Where `method` is in `MethodRegistry.all`, when it was written plainly (no escapes), so the
    /// server finds its handler without hashing the name.
    package var methodIndex: Int?
    /// The `method` member is present but is not a string.
    package var methodIsInvalid = false
    package var params: Range<Int>?
    /// Where `params.item` and its `providerId` are, noted while `params` was scanned (the last
    /// `params`, when repeated), so the `items/*` methods need not read the params again.
    package var itemLocation = ItemLocation()
    /// The first input limit the (last) `params` broke, when scanned with limits: answered after
    /// the envelope's own faults, in the order `RPCServer.receive` checks them.
    package var paramsProblem: RPCError?
    package var result: Range<Int>?
    package var error: Range<Int>?

    /// Scans a message. On malformed JSON it returns what it read before the fault plus the error,
    /// so a reply can still carry the id when it came first.
    ///
    /// With `limits` (a client's request), `params` is checked against them in the same pass
    /// (`ParamsScan`): the text is read once, and a broken limit is noted in `paramsProblem`
    /// rather than thrown, so the rest of the message is still scanned for its faults and its id.
    package static func scan(_ bytes: UnsafeRawBufferPointer, limits: ParamsLimits? = nil) -> (Envelope, JSONParseError?) {
        var envelope = Envelope()
        var reader = JSONReader(bytes)
        do throws(JSONParseError) {
            reader.skipWhitespace()
            guard reader.position < bytes.count else {
                throw JSONParseError(offset: 0, reason: "Empty message")
            }
            guard bytes[reader.position] == UInt8(ascii: "{") else {
                try reader.skipValue()
                reader.skipWhitespace()
                if reader.position != bytes.count {
                    throw JSONParseError(offset: reader.position, reason: "Unexpected data after the JSON value")
                }
                return (envelope, nil)
            }
            envelope.isObject = true
            // Keys are matched as bytes, and `jsonrpc` and a known `method` are taken without
            // decoding a string: on a `ping` the envelope was 40% of the host's work, most of it
            // making a `String` of every key and value (callgrind).
            try reader.readMembers { key, reader throws(JSONParseError) in
                let start = reader.position
                let first = start < bytes.count ? bytes[start] : 0
                switch key {
                case "jsonrpc" where first == UInt8(ascii: "\""):
                    envelope.jsonrpc = try Self.readVersion(&reader)
                case "method" where first == UInt8(ascii: "\""):
                    (envelope.method, envelope.methodIndex) = try Self.readMethod(&reader)
                case "params":
                    if let limits {
                        (envelope.itemLocation, envelope.paramsProblem) = try ParamsScan.scan(&reader, limits: limits)
                    } else {
                        envelope.itemLocation = try Self.skipParams(&reader)
                    }
                    envelope.params = start..<reader.position
                default:
                    try reader.skipValue()
                    let range = start..<reader.position
                    switch key {
                    case "jsonrpc": envelope.jsonrpc = ""
                    case "method":
                        envelope.methodIsInvalid = true
                        envelope.methodIndex = nil
                    case "id":
                        if first == UInt8(ascii: "\"") || first == UInt8(ascii: "-")
                            || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) || first == UInt8(ascii: "n")
                        {
                            envelope.id = range
                        } else {
                            envelope.idIsInvalid = true
                        }
                    case "result": envelope.result = range
                    case "error": envelope.error = range
                    default: break
                    }
                }
            }
            reader.skipWhitespace()
            if reader.position != bytes.count {
                throw JSONParseError(offset: reader.position, reason: "Unexpected data after the JSON value")
            }
            return (envelope, nil)
        } catch {
            return (envelope, error)
        }
    }
}

extension Envelope {
    /// The `jsonrpc` string at the reader: `"2.0"` written plainly is taken as it is, anything
    /// else read as a string.
    static func readVersion(_ reader: inout JSONReader) throws(JSONParseError) -> String {
        let bytes = reader.bytes
        let start = reader.position
        if start + 5 <= bytes.count, bytes[start + 1] == UInt8(ascii: "2"), bytes[start + 2] == UInt8(ascii: "."),
            bytes[start + 3] == UInt8(ascii: "0"), bytes[start + 4] == UInt8(ascii: "\"")
        {
            reader.position = start + 5
            return "2.0"
        }
        return try reader.readString()
    }

    /// The `method` string at the reader: one of the host's methods, written plainly, is taken
    /// from `MethodRegistry` (no string made) with its index there; anything else is read as a
    /// string.
    static func readMethod(_ reader: inout JSONReader) throws(JSONParseError) -> (String, Int?) {
        let bytes = reader.bytes
        let known = KnownMethods.shared
        let start = reader.position + 1
        var end = start
        // Method names are short and plain ASCII: look for the closing quote, giving up at
        // anything else (an escape, a control byte, non-ASCII text), which `readString` reads.
        while end < bytes.count, end - start <= known.longest {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return (try reader.readString(), nil) }
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\""),
            let index = known.index(of: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        {
            reader.position = end + 1
            return (known.names[index], index)
        }
        return (try reader.readString(), nil)
    }

    /// Skips a `params` value exactly as `skipValue` does, noting where its top-level `item`
    /// member, that item's top-level `providerId` and the top-level `progressToken` are (the last
    /// of each: decoding keeps the last of a repeated key).
    static func skipParams(_ reader: inout JSONReader) throws(JSONParseError) -> ItemLocation {
        var location = ItemLocation(scanned: true)
        try skipObject(&reader) { key, reader throws(JSONParseError) in
            guard RawObject.isKey(key, "item") else {
                let start = reader.position
                try reader.skipValue()
                if RawObject.isKey(key, "progressToken") { location.progressToken = start..<reader.position }
                return
            }
            let start = reader.position
            location.providerID = try skipItem(&reader)
            location.item = start..<reader.position
        }
        return location
    }

    /// Skips an item (the value of `params.item`) as `skipValue` does; where its top-level
    /// `providerId` is (the last one), when it is an object that has one.
    static func skipItem(_ reader: inout JSONReader) throws(JSONParseError) -> Range<Int>? {
        var providerID: Range<Int>?
        try skipObject(&reader) { key, reader throws(JSONParseError) in
            let valueStart = reader.position
            try reader.skipValue()
            if RawObject.isKey(key, "providerId") { providerID = valueStart..<reader.position }
        }
        return providerID
    }

    /// Skips the value at the reader's position as `skipValue` does (accepting and refusing the
    /// same text, at the same depth); when it is an object, `member` gets each key's token (quotes
    /// and escapes as written) with the reader at the value, which it must skip.
    fileprivate static func skipObject(
        _ reader: inout JSONReader, _ member: (UnsafeRawBufferPointer, inout JSONReader) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        guard let first = reader.peek, first == UInt8(ascii: "{") else { return try reader.skipValue() }
        try reader.enter()
        defer { reader.leave() }
        reader.position += 1
        reader.skipWhitespace()
        if reader.peek == UInt8(ascii: "}") {
            reader.position += 1
            return
        }
        while true {
            reader.skipWhitespace()
            guard reader.peek == UInt8(ascii: "\"") else { throw reader.unexpected("a string key") }
            let keyStart = reader.position
            try reader.skipString()
            let key = UnsafeRawBufferPointer(rebasing: reader.bytes[keyStart..<reader.position])
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"), "':'")
            reader.skipWhitespace()
            try member(key, &reader)
            reader.skipWhitespace()
            guard let next = reader.peek else { throw reader.unexpected("',' or '}'") }
            if next == UInt8(ascii: ",") {
                reader.position += 1
                continue
            }
            if next == UInt8(ascii: "}") {
                reader.position += 1
                return
            }
            throw reader.unexpected("',' or '}'")
        }
    }
}

/// The limits a request's `params` are held to (`serve`'s input limits and the item size limit).
package struct ParamsLimits: Sendable {
    package var input: InputLimits
    /// The most bytes of JSON text `params.item` may have.
    package var itemBytes: Int

    package init(input: InputLimits, itemBytes: Int) {
        self.input = input
        self.itemBytes = itemBytes
    }
}

/// The one pass over a request's `params`: it accepts and refuses the same text as
/// `JSONReader.skipValue` (at the same depth, with the same parse errors), checks every string,
/// member name, object and array against the input limits (`params.item` is measured whole, not
/// entered), and notes where `item`, its `providerId` and `progressToken` are, as
/// `Envelope.skipParams` does. A field path for an error is made only when a limit is broken.
struct ParamsScan {
    let limits: InputLimits
    let itemLimit: Int
    /// The members and elements entered, kept only on the second run that words a limit's error.
    private var trail: [Component]?
    private var location = ItemLocation(scanned: true)
    /// The limit broken; the walk unwinds from it with `stop`.
    private var problem: RPCError?

    private enum Component {
        case key(Range<Int>)
        case index(Int)
    }

    /// Thrown to unwind when a limit is broken (`problem` says which); never seen outside.
    private static let stop = JSONParseError(offset: -1, reason: "input limit")

    private init(_ limits: ParamsLimits, keepingTrail: Bool) {
        self.limits = limits.input
        self.itemLimit = limits.itemBytes
        self.trail = keepingTrail ? [] : nil
    }

    /// Scans the value at the reader (the params), leaving the reader after it. Throws what
    /// `skipValue` would throw for the same text; a broken limit is returned instead, after the
    /// value has been read to its end.
    static func scan(_ reader: inout JSONReader, limits: ParamsLimits) throws(JSONParseError) -> (ItemLocation, RPCError?) {
        let start = reader
        var scan = ParamsScan(limits, keepingTrail: false)
        do {
            try scan.value(&reader, top: true)
            return (scan.location, nil)
        } catch {
            // The params are read again from the start: for a broken limit, to find the rest of
            // the value's faults (which come first) and then the limit's field path; for a
            // parse error, to throw exactly what `skipValue` throws.
            reader = start
            let location = try Envelope.skipParams(&reader)
            guard scan.problem != nil else { return (location, RPCError(.parseError, "params: \(error)")) }
            var worded = ParamsScan(limits, keepingTrail: true)
            var again = start
            _ = try? worded.value(&again, top: true)
            return (location, worded.problem ?? scan.problem)
        }
    }

    private mutating func fail(_ error: RPCError) -> JSONParseError {
        problem = error
        return Self.stop
    }

    private func path(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = "params"
        for component in trail ?? [] {
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

    private mutating func value(_ reader: inout JSONReader, top: Bool) throws(JSONParseError) {
        switch reader.peek {
        case UInt8(ascii: "{"):
            try object(&reader, top: top)
        case UInt8(ascii: "["):
            try array(&reader)
        case UInt8(ascii: "\""):
            let start = reader.position
            try reader.skipString()
            let length = reader.position - start - 2
            if length > limits.maximumStringBytes {
                throw fail(InputLimits.exceeded(
                    path(reader.bytes), "a string of \(length) bytes", length: length, limit: limits.maximumStringBytes,
                    unit: " bytes", name: "maximumStringBytes"))
            }
        default:
            try reader.skipValue()
        }
    }

    /// Enters the container at the reader (one level deeper, past its opening byte and white
    /// space); false, past `closing`, when it is empty. The caller leaves the level.
    private static func enter(_ reader: inout JSONReader, closing: UInt8) throws(JSONParseError) -> Bool {
        try reader.enter()
        reader.position += 1
        reader.skipWhitespace()
        guard reader.peek == closing else { return true }
        reader.position += 1
        return false
    }

    /// After an element and white space: past a `,` (true) or past `closing` (false).
    private static func continues(_ reader: inout JSONReader, closing: UInt8) throws(JSONParseError) -> Bool {
        reader.skipWhitespace()
        switch reader.peek {
        case UInt8(ascii: ","):
            reader.position += 1
            return true
        case closing:
            reader.position += 1
            return false
        default:
            throw reader.unexpected(closing == UInt8(ascii: "}") ? "',' or '}'" : "',' or ']'")
        }
    }

    /// An object's members (at its `{`); at the top, `item` is measured whole against the item
    /// limit and located with its `providerId`, and `progressToken` is located.
    private mutating func object(_ reader: inout JSONReader, top: Bool) throws(JSONParseError) {
        let hasMembers = try Self.enter(&reader, closing: UInt8(ascii: "}"))
        defer { reader.leave() }
        guard hasMembers else { return }
        var count = 0
        repeat {
            reader.skipWhitespace()
            guard reader.peek == UInt8(ascii: "\"") else { throw reader.unexpected("a string key") }
            let keyStart = reader.position
            try reader.skipString()
            let key = keyStart..<reader.position
            count += 1
            if count > limits.maximumElements {
                throw fail(InputLimits.exceeded(
                    path(reader.bytes), "an object with more than \(limits.maximumElements) members", length: count,
                    limit: limits.maximumElements, name: "maximumElements"))
            }
            if key.count - 2 > limits.maximumStringBytes {
                throw fail(InputLimits.exceeded(
                    path(reader.bytes), "a member name of \(key.count - 2) bytes", length: key.count - 2,
                    limit: limits.maximumStringBytes, unit: " bytes", name: "maximumStringBytes"))
            }
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"), "':'")
            reader.skipWhitespace()
            let token = UnsafeRawBufferPointer(rebasing: reader.bytes[key])
            let start = reader.position
            if top, RawObject.isKey(token, "item") {
                location.providerID = try Envelope.skipItem(&reader)
                location.item = start..<reader.position
                if reader.position - start > itemLimit {
                    throw fail(InputLimits.exceeded(
                        "params.item", "an item of \(reader.position - start) bytes", length: reader.position - start,
                        limit: itemLimit, unit: " bytes", name: "maximumItemBytes"))
                }
            } else {
                trail?.append(.key(key))
                try value(&reader, top: false)
                trail?.removeLast()
                if top, RawObject.isKey(token, "progressToken") { location.progressToken = start..<reader.position }
            }
        } while try Self.continues(&reader, closing: UInt8(ascii: "}"))
    }

    /// An array's elements (at its `[`).
    private mutating func array(_ reader: inout JSONReader) throws(JSONParseError) {
        let hasElements = try Self.enter(&reader, closing: UInt8(ascii: "]"))
        defer { reader.leave() }
        guard hasElements else { return }
        var index = 0
        repeat {
            reader.skipWhitespace()
            if index >= limits.maximumElements {
                throw fail(InputLimits.exceeded(
                    path(reader.bytes), "an array with more than \(limits.maximumElements) elements", length: index + 1,
                    limit: limits.maximumElements, name: "maximumElements"))
            }
            trail?.append(.index(index))
            try value(&reader, top: false)
            trail?.removeLast()
            index += 1
        } while try Self.continues(&reader, closing: UInt8(ascii: "]"))
    }
}

/// Reads members of a raw JSON object without decoding the values.
package enum RawObject {
    /// Whether the JSON string token `token` (quotes included) spells `name` (an ASCII name),
    /// escapes decoded.
    package static func isKey(_ token: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        if token.count == count + 2 {
            return memcmp(token.baseAddress! + 1, name.utf8Start, count) == 0
        }
        guard token.count > count + 2, token.contains(UInt8(ascii: "\\")) else { return false }
        var reader = JSONReader(token)
        guard let decoded = try? reader.readString() else { return false }
        return decoded.utf8.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: count))
    }

    /// Calls `visit` with each key and the byte range of its value. Throws on malformed JSON or a
    /// non-object.
    package static func members(
        _ bytes: UnsafeRawBufferPointer, in range: Range<Int>, _ visit: (String, Range<Int>) -> Void
    ) throws(JSONParseError) {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        var reader = JSONReader(slice)
        reader.skipWhitespace()
        guard reader.position < slice.count, slice[reader.position] == UInt8(ascii: "{") else {
            throw JSONParseError(offset: range.lowerBound, reason: "Expected an object")
        }
        reader.position += 1
        reader.skipWhitespace()
        if reader.position < slice.count, slice[reader.position] == UInt8(ascii: "}") { return }
        while true {
            reader.skipWhitespace()
            guard reader.position < slice.count, slice[reader.position] == UInt8(ascii: "\"") else {
                throw reader.unexpected("a string key")
            }
            let key = try reader.readString()
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"), "':'")
            reader.skipWhitespace()
            let start = reader.position
            try reader.skipValue()
            visit(key, (range.lowerBound + start)..<(range.lowerBound + reader.position))
            reader.skipWhitespace()
            guard reader.position < slice.count else { throw reader.unexpected("',' or '}'") }
            if slice[reader.position] == UInt8(ascii: ",") {
                reader.position += 1
                continue
            }
            if slice[reader.position] == UInt8(ascii: "}") { return }
            throw reader.unexpected("',' or '}'")
        }
    }

    /// The byte range of member `key` (of its last occurrence: a repeated key keeps its last
    /// value, as when the object is decoded), or nil.
    package static func member(
        _ key: String, of bytes: UnsafeRawBufferPointer, in range: Range<Int>
    ) throws(JSONParseError) -> Range<Int>? {
        var found: Range<Int>?
        try members(bytes, in: range) { name, value in
            if name == key { found = value }
        }
        return found
    }

    /// Decodes the string at `range`, or nil if it is not a string.
    package static func string(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>) -> String? {
        guard !range.isEmpty, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        var reader = JSONReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
        return try? reader.readString()
    }
}

/// The host's method names (`MethodRegistry`), found by their bytes: each name has a key made of
/// its length and three of its bytes, compared first (one integer each), and one table of all the
/// names' bytes, compared only where a key matches; nothing is retained and no string is made.
private final class KnownMethods: Sendable {
    static let shared = KnownMethods(MethodRegistry.all.map { $0.method })

    let names: [String]
    /// Every name's UTF-8, one after another, and where each is in it.
    private let bytes: [UInt8]
    private let starts: [Int]
    private let keys: [UInt64]
    let longest: Int

    init(_ names: [String]) {
        self.names = names
        var bytes: [UInt8] = []
        var starts: [Int] = []
        var keys: [UInt64] = []
        for name in names {
            starts.append(bytes.count)
            let utf8 = Array(name.utf8)
            bytes.append(contentsOf: utf8)
            keys.append(utf8.withUnsafeBytes { Self.key($0) })
        }
        self.bytes = bytes
        self.starts = starts
        self.keys = keys
        self.longest = names.map(\.utf8.count).max() ?? 0
    }

    /// Length, first, middle and last byte.
    private static func key(_ name: UnsafeRawBufferPointer) -> UInt64 {
        guard !name.isEmpty else { return 0 }
        return UInt64(name.count) | UInt64(name[0]) << 16 | UInt64(name[name.count / 2]) << 24 | UInt64(name[name.count - 1]) << 32
    }

    /// The index in `names` of the name that is exactly `name`, if any.
    func index(of name: UnsafeRawBufferPointer) -> Int? {
        let key = Self.key(name)
        return keys.withUnsafeBufferPointer { keys in
            bytes.withUnsafeBytes { table in
                for index in keys.indices where keys[index] == key {
                    if name.isEmpty || memcmp(table.baseAddress! + starts[index], name.baseAddress!, name.count) == 0 { return index }
                }
                return nil
            }
        }
    }
}
