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
    package func values(messageLimit: Int, itemLimit: Int) -> [String: Int] {
        [
            "maximumMessageBytes": messageLimit,
            "maximumDepth": JSONReader.maximumDepth,
            "maximumStringBytes": maximumStringBytes,
            "maximumElements": maximumElements,
            "maximumFormValues": maximumFormValues,
            "maximumItemBytes": itemLimit,
            "maximumComposers": maximumComposers,
            "maximumCollectionSessions": maximumCollectionSessions,
            "maximumComposerItems": Composer.maximumItemsCap,
        ]
    }

    /// Checks every string, array and object in a request's `params` (the JSON text at `range`),
    /// as `Envelope.scan` does for a message from the wire (`ParamsScan`): for params written by
    /// the host itself (`InProcessHost`'s typed requests). `params.item` is not entered: it is
    /// measured whole against `itemLimit`.
    ///
    /// Errors are `-32602` naming the field and the limit, e.g. `params.values.title: a string of
    /// 2097152 bytes exceeds the limit of 1048576 bytes (maximumStringBytes).`, with
    /// `data: {field, limit, length, limitName}`; malformed JSON is `-32700`.
    ///
    /// Returns where `params.item` and its `providerId` are, found on the way (the `items/*`
    /// methods route by them without reading the params again).
    @discardableResult
    package func checkParams(_ bytes: UnsafeRawBufferPointer, range: Range<Int>, itemLimit: Int) throws(RPCError) -> ItemLocation {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[..<range.upperBound])
        var reader = JSONReader(slice, position: range.lowerBound)
        reader.skipWhitespace()
        let scanned: (ItemLocation, RPCError?)
        do throws(JSONParseError) {
            scanned = try ParamsScan.scan(&reader, limits: ParamsLimits(input: self, itemBytes: itemLimit))
        } catch {
            throw RPCError(.parseError, "params: \(error)")
        }
        if let problem = scanned.1 { throw problem }
        return scanned.0
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
