import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a provider's result must be, per provider method (docs/security.md §6).
///
/// The host checks every result against the ctxui v1 schema (`docs/ctxui.schema.json`) before it
/// reaches the client: the SDK's path-aware decoders (`ContextChip(json:path:)` …) do the shape
/// checks, and `OutputValidation` adds the schema rules the SDK leaves to the client (`data:` and
/// `geo:` URIs, map ranges) and a size cap per kind.
package enum ProviderOutput: Sendable, Equatable {
    /// `item/preview`: a chip.
    case chip
    /// `item/detail`: a detail document.
    case detail
    /// `collect/start`: the first form step.
    case form
    /// `collect/submit`: `{outcome: item | step | invalid, …}`.
    case submitOutcome
    /// `provider/makeContext`: `{item: Item | null}`.
    case madeItem
    /// `item/encode`: an encoded item with valid Base64 `data`.
    case encodedItem
    /// `item/describe`: `{text: String}`.
    case description
    /// `collect/query`: `{options: [Option]}`.
    case options

    /// The name used in error messages ("an invalid chip").
    package var noun: String {
        switch self {
        case .chip: "chip"
        case .detail: "detail"
        case .form: "form"
        case .submitOutcome: "submit outcome"
        case .madeItem: "item"
        case .encodedItem: "encoded item"
        case .description: "description"
        case .options: "option list"
        }
    }

    /// The root of field paths in error messages: `chip.tone`, `detail.blocks[2].type`,
    /// `result.item.providerId`.
    package var root: String {
        switch self {
        case .chip: "chip"
        case .detail: "detail"
        case .form: "form"
        case .encodedItem: "encoding"
        case .submitOutcome, .madeItem, .description, .options: "result"
        }
    }

    /// The kind a provider method's result must have; nil for methods whose result the host does
    /// not pass on (`collect/cancel`) or checks itself (`provider/availability`).
    package static func expected(for providerMethod: String) -> ProviderOutput? {
        switch providerMethod {
        case ItemPreviewRequest.method: .chip
        case ItemDetailRequest.method: .detail
        case ItemDescribeRequest.method: .description
        case ItemEncodeRequest.method: .encodedItem
        case ProviderCollectStartRequest.method: .form
        case ProviderCollectSubmitRequest.method: .submitOutcome
        case ProviderCollectQueryRequest.method: .options
        case ProviderMakeContextRequest.method: .madeItem
        default: nil
        }
    }
}

/// Size caps on provider results, per kind (bytes of the result's JSON text).
public struct OutputLimits: Sendable, Equatable {
    /// A chip (`item/preview`). Default 64 KiB: a chip is a few short strings and a small thumbnail.
    public var chipBytes = 64 << 10
    /// A detail document (`item/detail`). Default 4 MiB (charts and inline images).
    public var detailBytes = 4 << 20
    /// A form step (`collect/start`, a `step` outcome). Default 1 MiB.
    public var formBytes = 1 << 20
    /// A submit outcome or a made item (`collect/submit`, `provider/makeContext`). Default 4 MiB.
    public var itemBytes = 4 << 20
    /// A description (`item/describe`). Default 64 KiB.
    public var descriptionBytes = 64 << 10
    /// Options answered by `collect/query`. Default 1 MiB.
    public var optionsBytes = 1 << 20
    /// An encoded item (`item/encode`): nil means the host's message limit (`maximumMessageBytes`).
    public var encodedBytes: Int?

    public init() {}

    /// The cap for one kind.
    package func limit(for kind: ProviderOutput, messageLimit: Int) -> Int {
        switch kind {
        case .chip: chipBytes
        case .detail: detailBytes
        case .form: formBytes
        case .submitOutcome, .madeItem: itemBytes
        case .description: descriptionBytes
        case .options: optionsBytes
        case .encodedItem: encodedBytes ?? messageLimit
        }
    }
}

/// Checks provider results. Every failure is a `-32014` error naming the provider, the method and
/// the field: `Provider 'ID' sent an invalid chip for item/preview: chip.tone: expected one of
/// neutral, good, warning, attention, got "blue"` with `data: {providerId, method, field}`.
package enum OutputValidation {
    /// Checks the raw result bytes of `method` (size, then JSON, then shape). Returns the decoded
    /// value for callers that need it.
    @discardableResult
    package static func check(
        _ bytes: UnsafeRawBufferPointer, as kind: ProviderOutput, providerID: String, method: String,
        limits: OutputLimits, messageLimit: Int
    ) throws(RPCError) -> JSONValue {
        let limit = limits.limit(for: kind, messageLimit: messageLimit)
        if bytes.count > limit {
            throw RPCError(
                .providerBadReply,
                "Provider '\(providerID)' sent a \(kind.noun) of \(bytes.count) bytes for \(method); the limit is \(limit) bytes.",
                data: [
                    "providerId": .string(providerID), "method": .string(method), "field": .string(kind.root),
                    "limit": .number(Double(limit)), "length": .number(Double(bytes.count)),
                ])
        }
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw RPCError(
                .providerBadReply, "Provider '\(providerID)' sent an invalid \(kind.noun) for \(method): \(kind.root): not valid JSON: \(error)",
                data: ["providerId": .string(providerID), "method": .string(method), "field": .string(kind.root)])
        }
        try check(value, as: kind, providerID: providerID, method: method)
        return value
    }

    /// Checks raw result bytes without returning them decoded (the pass-through path). Chips, the
    /// hot path, are first tried by a scan that allocates nothing (`ChipScan`); only a chip it
    /// cannot vouch for is decoded, which also finds the exact field for the error.
    package static func validate(
        _ bytes: UnsafeRawBufferPointer, as kind: ProviderOutput, providerID: String, method: String,
        limits: OutputLimits, messageLimit: Int
    ) throws(RPCError) {
        if kind == .chip, bytes.count <= limits.chipBytes, ChipScan.isValid(bytes) { return }
        try check(bytes, as: kind, providerID: providerID, method: method, limits: limits, messageLimit: messageLimit)
    }

    /// A chip read from `bytes` when it is certainly valid: within the size limit, read by
    /// `ContextChip(text:)` (which declines anything unusual) and passing the checks `validate`
    /// makes on the decoded chip. Nil: decide the usual way, which names the fault.
    package static func typedChip(_ bytes: UnsafeRawBufferPointer, limits: OutputLimits) -> ContextChip? {
        guard bytes.count <= limits.chipBytes, let chip = ContextChip(text: bytes), (try? checkChip(chip, root: "result")) != nil else {
            return nil
        }
        return chip
    }

    /// Checks a decoded result of `method` (no size cap: use the byte form where the bytes exist).
    package static func check(_ value: JSONValue, as kind: ProviderOutput, providerID: String, method: String) throws(RPCError) {
        do {
            try validate(value, as: kind)
        } catch {
            throw RPCError(
                .providerBadReply, "Provider '\(providerID)' sent an invalid \(kind.noun) for \(method): \(error)",
                data: ["providerId": .string(providerID), "method": .string(method), "field": .string(error.path)])
        }
    }

    /// Checks the size of an already decoded result (host-internal calls that decoded first).
    package static func checkSize(
        _ count: Int, as kind: ProviderOutput, providerID: String, method: String, limits: OutputLimits, messageLimit: Int
    ) throws(RPCError) {
        let limit = limits.limit(for: kind, messageLimit: messageLimit)
        guard count > limit else { return }
        throw RPCError(
            .providerBadReply,
            "Provider '\(providerID)' sent a \(kind.noun) of \(count) bytes for \(method); the limit is \(limit) bytes.",
            data: [
                "providerId": .string(providerID), "method": .string(method), "field": .string(kind.root),
                "limit": .number(Double(limit)), "length": .number(Double(count)),
            ])
    }

    /// The shape checks, with the offending path in the error.
    package static func validate(_ value: JSONValue, as kind: ProviderOutput) throws(JSONDecodeError) {
        let root = kind.root
        switch kind {
        case .chip:
            try checkChip(try ContextChip(json: value, path: root), root: root)
        case .detail:
            let detail = try ContextDetail(json: value, path: root)
            try checkBlocks(detail.blocks, root: root)
        case .form:
            try checkForm(try ContextForm(json: value, path: root), root: root)
        case .submitOutcome:
            switch try SubmitOutcome(json: value, path: root) {
            case .item(let item): try checkItem(item, at: root + ".item", raw: value["item"])
            case .step(let form): try checkForm(form, root: root + ".form")
            case .invalid: break
            }
        case .madeItem:
            let reader = try JSONObjectReader(value, path: root)
            guard let raw = reader.value("item") else { return }
            try checkItem(try ContextItem(json: raw, path: reader.path("item")), at: reader.path("item"), raw: raw)
        case .encodedItem:
            _ = try EncodedItem(json: value, path: root)
        case .description:
            _ = try JSONObjectReader(value, path: root).string("text")
        case .options:
            _ = try JSONObjectReader(value, path: root).decodeArray("options", of: FormOption.self)
        }
    }

    /// What a decoded chip's type does not say: a `data:` thumbnail, a drawable sparkline.
    private static func checkChip(_ chip: ContextChip, root: String) throws(JSONDecodeError) {
        if let thumbnail = chip.thumbnail { try dataURI(thumbnail, at: root + ".thumbnail") }
        if case .sparkline(let values)? = chip.accessory, values.count > maximumSeriesPoints {
            throw JSONDecodeError(path: root + ".accessory.values", message: "more than \(maximumSeriesPoints) values")
        }
    }

    /// Points in one chart series or sparkline; more is not something a client can draw.
    static let maximumSeriesPoints = 100_000

    private static func checkItem(_ item: ContextItem, at path: String, raw: JSONValue?) throws(JSONDecodeError) {
        // The schema requires `content` (it may be null, but must be present).
        if case .object(let object)? = raw, object["content"] == nil {
            throw JSONDecodeError.missing(at: path + ".content", expected: "a value (the item's content)")
        }
        _ = item
    }

    private static func checkForm(_ form: ContextForm, root: String) throws(JSONDecodeError) {
        var seen = Set<String>()
        for (index, field) in form.fields.enumerated() {
            let path = JSONDecodeError.join(root + ".fields", index: index)
            guard seen.insert(field.id).inserted else {
                throw JSONDecodeError(path: path + ".id", message: "duplicate field id \"\(field.id)\"")
            }
            if let search = field.search, search.minQueryLength < 0 {
                throw JSONDecodeError(path: path + ".search.minQueryLength", message: "expected a non-negative integer, got \(search.minQueryLength)")
            }
        }
    }

    private static func checkBlocks(_ blocks: [DetailBlock], root: String) throws(JSONDecodeError) {
        for (index, block) in blocks.enumerated() {
            let path = JSONDecodeError.join(root + ".blocks", index: index)
            switch block {
            case .image(let image):
                try dataURI(image.dataURI, at: path + ".dataURI")
            case .map(let map):
                guard map.link.hasPrefix("geo:") else {
                    throw JSONDecodeError(path: path + ".link", message: "expected a geo: URI, got \"\(map.link.prefix(40))\"")
                }
                if let zoom = map.zoom, !(zoom >= 0) {
                    throw JSONDecodeError(path: path + ".zoom", message: "expected a number of at least 0, got \(zoom)")
                }
                for (markerIndex, marker) in map.markers.enumerated() {
                    let markerPath = JSONDecodeError.join(path + ".markers", index: markerIndex)
                    guard (-90...90).contains(marker.latitude) else {
                        throw JSONDecodeError(path: markerPath + ".latitude", message: "expected a number from -90 to 90, got \(marker.latitude)")
                    }
                    guard (-180...180).contains(marker.longitude) else {
                        throw JSONDecodeError(path: markerPath + ".longitude", message: "expected a number from -180 to 180, got \(marker.longitude)")
                    }
                }
            case .chart(let chart):
                for (seriesIndex, series) in chart.series.enumerated() where series.points.count > maximumSeriesPoints {
                    throw JSONDecodeError(
                        path: JSONDecodeError.join(path + ".series", index: seriesIndex) + ".points",
                        message: "more than \(maximumSeriesPoints) points")
                }
            case .text, .facts, .list, .link:
                break
            }
        }
    }

    /// Checks that `text` is a `data:` URI; the path is only written for the error (a chip's
    /// thumbnail is checked on every preview).
    private static func dataURI(_ text: String, at path: @autoclosure () -> String) throws(JSONDecodeError) {
        var text = text
        // The bytes compared in place: `hasPrefix` goes through the generic `starts(with:)`.
        let isData = text.withUTF8 { bytes in
            bytes.count >= 5 && bytes[0] == UInt8(ascii: "d") && bytes[1] == UInt8(ascii: "a") && bytes[2] == UInt8(ascii: "t")
                && bytes[3] == UInt8(ascii: "a") && bytes[4] == UInt8(ascii: ":")
        }
        guard isData else {
            throw JSONDecodeError(path: path(), message: "expected a data: URI, got \"\(text.prefix(40))\"")
        }
    }
}

/// A fast, allocation-free acceptance test for chips: true only when the bytes are one JSON object
/// whose members are certainly valid (`icon`, `title`, `fallbackText` present as strings; optional
/// string members strings; `tone` one of the four; `ctxui` exactly `1`; no `accessory`, `thumbnail`
/// other than a plain `data:` string). Anything else — including every invalid chip — returns
/// false and goes through the full decoder, which decides and names the field.
package enum ChipScan {
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var reader = JSONReader(bytes)
        // A chip is the result of a response, one level inside it: nesting is limited as when
        // the whole response is parsed.
        guard (try? reader.enter()) != nil else { return false }
        reader.skipWhitespace()
        guard scanObject(&reader) else { return false }
        reader.skipWhitespace()
        return reader.position == bytes.count
    }

    /// The same test for the value at the reader's position, inside a larger message (an
    /// `item/previewMany` result): true, with the reader after the chip's closing brace, when it
    /// is certainly a valid chip; false, with the reader where it was, otherwise.
    package static func scanObject(_ reader: inout JSONReader) -> Bool {
        let start = reader
        if check(&reader) { return true }
        reader = start
        return false
    }

    private static func check(_ reader: inout JSONReader) -> Bool {
        let bytes = reader.bytes
        let checksSurrogates = reader.checksSurrogates
        reader.checksSurrogates = true  // refuse what the decoder refuses (a lone \uD800)
        defer { reader.checksSurrogates = checksSurrogates }
        do {
            guard reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: "{") else { return false }
            // The chip is a level of nesting, as when the whole message is parsed.
            try reader.enter()
            defer { reader.leave() }
            reader.position += 1
            var required = 0  // bits: icon 1, title 2, fallbackText 4
            reader.skipWhitespace()
            if reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: "}") { return false }
            while true {
                reader.skipWhitespace()
                guard reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: "\"") else { return false }
                let keyStart = reader.position + 1
                try reader.skipString()
                let key = UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(reader.position - 1)])
                reader.skipWhitespace()
                guard reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: ":") else { return false }
                reader.position += 1
                reader.skipWhitespace()
                guard reader.position < bytes.count else { return false }
                let valueStart = reader.position
                let isString = bytes[valueStart] == UInt8(ascii: "\"")
                try reader.skipValue()
                let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<reader.position])
                switch key.count {
                case 4 where equals(key, "icon"):
                    guard isString else { return false }
                    required |= 1
                case 5 where equals(key, "title"):
                    guard isString else { return false }
                    required |= 2
                case 12 where equals(key, "fallbackText"):
                    guard isString else { return false }
                    required |= 4
                case 8 where equals(key, "subtitle"), 18 where equals(key, "accessibilityLabel"), 8 where equals(key, "fallback"):
                    guard isString else { return false }
                case 4 where equals(key, "tone"):
                    guard equals(value, "\"neutral\"") || equals(value, "\"good\"") || equals(value, "\"warning\"")
                        || equals(value, "\"attention\"")
                    else { return false }
                case 5 where equals(key, "ctxui"):
                    guard equals(value, "1") else { return false }
                case 9 where equals(key, "thumbnail"):
                    guard value.count >= 7, equals(UnsafeRawBufferPointer(rebasing: value[0..<6]), "\"data:") else { return false }
                case 9 where equals(key, "accessory"):
                    return false
                default:
                    // Unknown members are allowed, but a key with escapes could spell a known one.
                    if key.contains(UInt8(ascii: "\\")) { return false }
                }
                reader.skipWhitespace()
                guard reader.position < bytes.count else { return false }
                if bytes[reader.position] == UInt8(ascii: ",") {
                    reader.position += 1
                    continue
                }
                guard bytes[reader.position] == UInt8(ascii: "}") else { return false }
                reader.position += 1
                break
            }
            return required == 7
        } catch {
            return false
        }
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0
    }
}
