import ContextProviderKit
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

/// An item's chip in a `composer/list` answer: its checked JSON text (a slice of the provider's
/// answer), or the reason it has none.
package typealias ChipOutcome = Result<ArraySlice<UInt8>, RPCError>

/// The chips of one `composer/list`: every item's checked chip, or the reason it has none.
///
/// Items of one provider go to it together, in `item/previewMany` calls of up to `batchSize`
/// items, so a listing of 100 notes costs one provider call instead of 100 (the per-call cost —
/// the message, the SDK's request handling, the reply check — was most of a listing's time;
/// Benchmarks/results/composer.md). A provider that does not answer `item/previewMany` as
/// docs/provider-abi.md says (a C provider that predates it answers `-32601`) gets one
/// `item/preview` per item, from then on; nothing is lost either way. Every call is sent at once,
/// each a `ProviderCall` timed with the provider's preview timeout.
final class ChipListing: Sendable {
    /// The most items in one `item/previewMany` call (the SDK takes up to 256).
    static let batchSize = 128

    private let items: [AttachedItem]
    private let results: PreviewBatch
    private let limits: OutputLimits
    private let messageLimit: Int
    private let logger: Logger
    /// Where the calls' notifications and host requests (`host/fetch`) go: the host, for its client.
    private let client: any RequestEventsClient
    private let forwardsLogs: Bool

    private init(
        items: [AttachedItem], limits: OutputLimits, messageLimit: Int, logger: Logger, client: any RequestEventsClient,
        forwardsLogs: Bool
    ) {
        self.items = items
        self.results = PreviewBatch(count: items.count)
        self.limits = limits
        self.messageLimit = messageLimit
        self.logger = logger
        self.client = client
        self.forwardsLogs = forwardsLogs
    }

    /// Calls `completion` with the outcome for each of `items`, in order: on the thread that
    /// brings in the last chip (or this one, if every outcome is known at once).
    static func chips(
        for items: [AttachedItem], host: Host, completion: @escaping @Sendable ([ChipOutcome]) -> Void
    ) {
        chips(
            for: items, limits: host.configuration.outputLimits, messageLimit: host.configuration.maximumMessageBytes,
            logger: host.logger, client: host, forwardsLogs: host.speaksVersion2.load(ordering: .acquiring),
            provider: { providerID throws(RPCError) in try host.provider(providerID, for: .item) }, completion: completion)
    }

    /// The outcome for each of `items`, in order, from the providers `provider` finds.
    static func chips(
        for items: [AttachedItem], limits: OutputLimits, messageLimit: Int, logger: Logger,
        provider: (String) throws(RPCError) -> Host.LiveProvider
    ) async -> [ChipOutcome] {
        await withCheckedContinuation { continuation in
            chips(
                for: items, limits: limits, messageLimit: messageLimit, logger: logger, client: NoHostRequestsClient.shared,
                forwardsLogs: false, provider: provider, completion: { continuation.resume(returning: $0) })
        }
    }

    /// `chips`, answered through `completion`; the calls' notifications and host requests go to
    /// `client`.
    static func chips(
        for items: [AttachedItem], limits: OutputLimits, messageLimit: Int, logger: Logger, client: any RequestEventsClient,
        forwardsLogs: Bool, provider: (String) throws(RPCError) -> Host.LiveProvider,
        completion: @escaping @Sendable ([ChipOutcome]) -> Void
    ) {
        let listing = ChipListing(
            items: items, limits: limits, messageLimit: messageLimit, logger: logger, client: client, forwardsLogs: forwardsLogs)
        // The slots of each provider, in order of first appearance. A composer holds items of a
        // few providers, whose ids are shared strings: a short list compares faster than hashing.
        var groups: [(providerID: String, slots: [Int])] = []
        for slot in items.indices {
            let providerID = items[slot].providerID
            if let group = groups.firstIndex(where: { $0.providerID == providerID }) {
                groups[group].slots.append(slot)
            } else {
                groups.append((providerID, [slot]))
            }
        }
        for (providerID, slots) in groups {
            let live: Host.LiveProvider
            do {
                live = try provider(providerID)
            } catch {
                for slot in slots { listing.results.finish(slot, .failure(error)) }
                continue
            }
            if slots.count > 1, PreviewManySupport.mayUse(live.connection) {
                for range in calls(for: slots.count) { listing.previewMany(Array(slots[range]), live: live) }
            } else {
                listing.previewEach(slots, live: live)
            }
        }
        listing.results.whenComplete(completion)
    }

    /// How `count` items of one provider are split into `item/previewMany` calls: two per core
    /// when there are enough items to be worth it (no call under `minimumSplit` items but the
    /// last), never more than `batchSize` in one call. The SDK runs each call in a task of its own, so the calls are
    /// previewed side by side; two per core rather than one, so that a call whose thread starts
    /// late does not hold up the listing alone (measured: `composer/list` p99 of 100 notes 1.15–1.24
    /// → 0.83–1.02 ms, Benchmarks/results/composer.md).
    static func calls(for count: Int, cores: Int = ChipListing.cores) -> [Range<Int>] {
        let parts = 2 * max(cores, 1)
        let perCall = (count + parts - 1) / parts
        let size = min(batchSize, max(perCall, minimumSplit))
        return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }

    /// Items below which a call is not split further.
    static let minimumSplit = 16

    static let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    // MARK: Calls

    /// One `item/preview` per slot.
    private func previewEach(_ slots: [Int], live: Host.LiveProvider) {
        for slot in slots {
            let itemJSON = items[slot].itemJSON
            call(live, method: ItemPreviewRequest.method) { [self] response in
                results.finish(slot, Host.checkedChip(response, providerID: live.id, limits: limits, messageLimit: messageLimit))
            }.start(params: { params in
                params.append(contentsOf: #"{"item":"#.utf8)
                params.append(contentsOf: itemJSON)
                params.append(UInt8(ascii: "}"))
            })
        }
    }

    /// One `item/previewMany` for all of `slots`.
    private func previewMany(_ slots: [Int], live: Host.LiveProvider) {
        call(live, method: ItemPreviewManyRequest.method) { [self] response in
            if let error = response.error, response.errorIsFromHost, error.code == .providerTimedOut {
                // A provider that does not answer the method at all gets item/preview from now on
                // (recorded before the listing is answered, so the next one already knows).
                if PreviewManySupport.markUnsupported(live.connection) {
                    logger.info("Provider '\(live.id)' gets item/preview per item from now on: it did not answer item/previewMany in time.")
                }
                for slot in slots { results.finish(slot, .failure(error)) }
                return
            }
            receive(response, for: slots, live: live)
        }.start(params: { [items] params in
            // (16: the 12 bytes around the items and the message's closing brace, with room to spare.)
            params.reserveCapacity(params.count + 16 + slots.reduce(0) { $0 + items[$1].itemJSON.count + 1 })
            params.append(contentsOf: #"{"items":["#.utf8)
            for (position, slot) in slots.enumerated() {
                if position > 0 { params.append(UInt8(ascii: ",")) }
                params.append(contentsOf: items[slot].itemJSON)
            }
            params.append(contentsOf: "]}".utf8)
        })
    }

    /// A call to `live` timed with its preview timeout, whose response `read` takes as it came
    /// (`ProviderCall`: the deadline, telling a provider that ran out of time, notifications and
    /// host requests).
    private func call(
        _ live: Host.LiveProvider, method: String, read: @escaping @Sendable (ProviderResponse) -> Void
    ) -> ProviderCall {
        ProviderCall(
            providerID: live.id, method: method, timeout: Host.timeout(for: method, in: live.timeouts), connection: live.connection,
            client: client, forwardsLogs: forwardsLogs, response: read)
    }

    /// Sorts an `item/previewMany` answer into the slots' outcomes, or falls back to
    /// `item/preview` when the provider does not answer the method as documented.
    private func receive(_ response: ProviderResponse, for slots: [Int], live: Host.LiveProvider) {
        let providerID = live.id
        if let error = response.error {
            // Timed out, cancelled, crashed, unreadable: the same for every item.
            if response.errorIsFromHost || error.code == .requestCancelled {
                let error = Host.hostError(error, fromHost: response.errorIsFromHost, providerID: providerID, method: ItemPreviewRequest.method)
                for slot in slots { results.finish(slot, .failure(error)) }
                return
            }
            fallBack(slots, live: live, because: "it answered item/previewMany with error \(error.code.rawValue): \(error.message)")
            return
        }
        guard let bytes = response.resultBytes, let previews = PreviewManyReply.parse(bytes, count: slots.count) else {
            if response.resultIsUnread {
                // Read in full, as any response: an unreadable one is a bad reply, not a provider
                // that does not know the method.
                ReplyRouter.deliver(response.bytes, to: { [self] response in receive(response, for: slots, live: live) }, expectedID: response.requestID)
                return
            }
            fallBack(slots, live: live, because: "its item/previewMany result is not {\"previews\": [...]} with one entry per item")
            return
        }
        // One copy of the result, which every chip of this call is a slice of.
        let copy = Array(bytes)
        for (slot, preview) in zip(slots, previews) {
            switch preview {
            case .chip(let range, let scanned):
                let chip = UnsafeRawBufferPointer(rebasing: bytes[range])
                if scanned, chip.count <= limits.chipBytes, !Host.containsLineBreak(chip) {
                    results.finish(slot, .success(copy[range]))
                } else {
                    let response = ProviderResponse(bytes: bytes, result: range, error: nil)
                    results.finish(slot, Host.checkedChip(response, providerID: providerID, limits: limits, messageLimit: messageLimit))
                }
            case .error(let error):
                results.finish(slot, .failure(Host.hostError(error, fromHost: false, providerID: providerID, method: ItemPreviewRequest.method)))
            case .invalidError(let problem):
                results.finish(slot, .failure(RPCError(
                    .providerBadReply, "Provider '\(providerID)' sent an invalid error for an item in item/previewMany: \(problem).",
                    data: ["providerId": .string(providerID), "method": .string(ItemPreviewManyRequest.method)])))
            }
        }
    }

    private func fallBack(_ slots: [Int], live: Host.LiveProvider, because reason: String) {
        if PreviewManySupport.markUnsupported(live.connection) {
            logger.info("Provider '\(live.id)' gets item/preview per item from now on: \(reason).")
        }
        // Not on the thread that delivered the answer: a worker's reader must not wait on its writes.
        DispatchQueue.global().async { [self] in
            let waiting = slots.filter { !results.isFinished($0) }
            if !waiting.isEmpty { previewEach(waiting, live: live) }
        }
    }
}

/// Which provider connections answer `item/previewMany`. Assumed until one answers it with an
/// error or a malformed result; remembered per connection (a reloaded provider is asked again).
enum PreviewManySupport {
    private struct Entry {
        weak var connection: AnyObject?
    }

    private static let unsupported = Mutex<[ObjectIdentifier: Entry]>([:])

    static func mayUse(_ connection: any ProviderConnection) -> Bool {
        unsupported.withLock { table in table[ObjectIdentifier(connection)]?.connection !== connection }
    }

    /// Records that `connection` does not answer `item/previewMany`; true the first time.
    static func markUnsupported(_ connection: any ProviderConnection) -> Bool {
        unsupported.withLock { table in
            if table[ObjectIdentifier(connection)]?.connection === connection { return false }
            table = table.filter { $0.value.connection != nil }
            table[ObjectIdentifier(connection)] = Entry(connection: connection)
            return true
        }
    }
}

/// The `result` of `item/previewMany`: `{"previews": [{"chip": {…}} | {"error": {…}}, …]}`.
enum PreviewManyReply {
    enum Preview {
        /// The byte range of the chip in the result; `scanned` when `ChipScan` already found it
        /// certainly valid (else it is checked in full like an `item/preview` result).
        case chip(Range<Int>, scanned: Bool)
        /// The provider's error for this item.
        case error(RPCError)
        /// An `error` entry that is not `{"code": integer, "message": string}`: what is wrong.
        case invalidError(String)
    }

    /// The previews, or nil when `bytes` does not have that shape or holds other than `count`.
    /// Chips are only located here; the caller checks each like an `item/preview` result.
    static func parse(_ bytes: UnsafeRawBufferPointer, count: Int) -> [Preview]? {
        var reader = JSONReader(bytes)
        var previews: [Preview]?
        do {
            // The result is one level inside the response: count it, so nesting is limited as
            // when the whole response is parsed.
            try reader.enter()
            reader.skipWhitespace()
            try reader.readMembers { key, reader throws(JSONParseError) in
                guard key == "previews" else { return try reader.skipValue() }
                previews = try readPreviews(&reader)
            }
            reader.skipWhitespace()
            guard reader.position == bytes.count else { return nil }
        } catch {
            return nil
        }
        guard let previews, previews.count == count else { return nil }
        return previews
    }

    private static func readPreviews(_ reader: inout JSONReader) throws(JSONParseError) -> [Preview]? {
        var previews: [Preview] = []
        var wellFormed = true
        try reader.readElements { reader throws(JSONParseError) in
            var chip: Range<Int>?
            var chipScanned = false
            var error: Preview?
            var members = 0
            try reader.readMembers { key, reader throws(JSONParseError) in
                members += 1
                switch key {
                case "chip":
                    let start = reader.position
                    let scanned = ChipScan.scanObject(&reader)
                    if !scanned { try reader.skipValue() }
                    chip = start..<reader.position
                    chipScanned = scanned
                case "error":
                    let value = try reader.readValue()
                    if let code = value["code"]?.intValue, let message = value["message"]?.stringValue {
                        error = .error(RPCError(ErrorCode(rawValue: code), message, data: value["data"]))
                    } else {
                        error = .invalidError("expected {\"code\": integer, \"message\": string}, got \(value.jsonString.prefix(200))")
                    }
                default:
                    try reader.skipValue()
                }
            }
            switch (chip, error) {
            case (let chip?, nil) where members == 1: previews.append(.chip(chip, scanned: chipScanned))
            case (nil, let error?) where members == 1: previews.append(error)
            default: wellFormed = false
            }
        }
        return wellFormed ? previews : nil
    }
}
