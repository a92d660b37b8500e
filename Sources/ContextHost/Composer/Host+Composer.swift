import ContextProtocol
import ContextProviderKit
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Host {
    /// Encodes a freshly made item with its provider and attaches it to a composer, checking every
    /// limit again (another collection may have finished meanwhile). The draft is saved before
    /// this returns, so an item the client hears about is never lost.
    package func attach(_ item: JSONValue, from provider: LiveProvider, to composerID: String) async throws(RPCError) -> Composer {
        guard case .object(let object) = item else {
            throw RPCError(.providerBadReply, "Provider '\(provider.id)' produced an item that is not an object.")
        }
        let encoded = try await request(provider, method: ItemEncodeRequest.method, params: ["item": item])
        guard case .object(let encoding) = encoded, encoding["data"]?.stringValue != nil else {
            throw RPCError(
                .providerBadReply, "Provider '\(provider.id)' answered item/encode without base64 'data'.",
                data: ["providerId": .string(provider.id), "method": .string(ItemEncodeRequest.method)])
        }
        do {
            return try composers.attach(
                AttachedItem(item: object, encoding: encoding), to: composerID,
                providerLimit: provider.maximumAttachmentCount)
        } catch {
            // Give the item back so the client can keep what the user entered.
            var data = error.data?.objectValue ?? JSONObject()
            data["item"] = item
            throw RPCError(error.code, error.message, data: .object(data))
        }
    }

    /// Checks, before a collection starts, that an item of `providerID` could still be attached.
    package func checkCanStartCollection(providerID: String, composerID: String) throws(RPCError) {
        let composer = try composers.get(composerID)
        let limit = registry.withEntry(id: providerID) { $0.pointee.route.maximumAttachmentCount } ?? 1
        try ComposerPolicy.checkCanAttach(to: composer, providerID: providerID, providerLimit: limit, encodedBytes: 0)
    }

    /// A composer's summary (no items).
    package func summary(of composer: Composer) -> ComposerSummary {
        ComposerSummary(
            composerId: composer.id, maximumItems: composer.maximumItems, byteBudget: composer.byteBudget,
            bytesUsed: composer.bytesUsed, itemCount: composer.items.count)
    }

    /// `composer/list` without an id: every open composer's summary, oldest first, as JSON text
    /// appended to `output`.
    package func appendListing(of composers: [Composer], to output: inout [UInt8]) {
        output.append(contentsOf: #"{"composers":["#.utf8)
        for (index, composer) in composers.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            composer.appendSummary(to: &output)
        }
        output.append(contentsOf: "]}".utf8)
    }

    /// About how many bytes `appendListing(of:to:)` writes for `count` composers.
    package static func listingCapacity(composers count: Int) -> Int { 16 + count * 128 }

    /// `composer/list {composerId}`: the summary and each item with its chip, as JSON text, that
    /// `answer` gets to write (with about how many bytes it takes), on the thread that brings in
    /// the last chip (no task to wake on the way). An item whose provider is gone or failing keeps
    /// its place and gets the default text chip, with the reason.
    ///
    /// The chips come from `ChipListing` (`item/previewMany` calls per provider), and the items'
    /// stored JSON and the providers' checked chips are copied into the answer as they are, so
    /// listing costs little beyond the providers' own work (Benchmarks/results/composer.md).
    package func list(
        _ composer: Composer, answer: @escaping @Sendable (_ capacity: Int, _ write: (inout [UInt8]) -> Void) -> Void
    ) {
        ChipListing.chips(for: composer.items, host: self) { [self] chips in
            let capacity = 512 + composer.items.reduce(0) { $0 + $1.itemJSON.count + 1536 }
            answer(capacity) { output in appendListing(of: composer, chips: chips, to: &output) }
        }
    }

    /// The listing `list` answers with, appended to `output`.
    package func appendListing(of composer: Composer, chips: [ChipOutcome], to output: inout [UInt8]) {
        let items = composer.items
        composer.appendSummary(to: &output)
        output.removeLast()  // the summary's closing brace
        Composer.appendItems(items, to: &output) { slot, attached, output in
            output.append(contentsOf: #","encodedBytes":"#.utf8)
            JSONWriter.appendInteger(Int64(attached.encodedBytes), to: &output)
            switch chips[slot] {
            case .success(let chip):
                output.append(contentsOf: #","chip":"#.utf8)
                output.append(contentsOf: chip)
                output.append(contentsOf: #","providerAvailable":true}"#.utf8)
            case .failure(let error):
                output.append(contentsOf: #","chip":"#.utf8)
                JSONWriter.append(defaultChip(for: attached), to: &output)
                output.append(contentsOf: #","providerAvailable":false,"providerProblem":"#.utf8)
                JSONWriter.append(["code": .number(Double(error.code.rawValue)), "message": .string(error.message)], to: &output)
                output.append(UInt8(ascii: "}"))
            }
        }
    }

    /// A provider's `item/preview` answer, checked like `forward` checks it, as JSON text to copy
    /// into an answer (re-printed only if it holds raw line breaks, which would break NDJSON).
    static func checkedChip(
        _ response: ProviderResponse, providerID: String, limits: OutputLimits, messageLimit: Int
    ) -> ChipOutcome {
        if let error = response.error {
            return .failure(hostError(error, fromHost: response.errorIsFromHost, providerID: providerID, method: ItemPreviewRequest.method))
        }
        guard let bytes = response.resultBytes else {
            return .failure(RPCError(
                .providerBadReply, "Provider '\(providerID)' answered item/preview without a result.",
                data: ["providerId": .string(providerID), "method": .string(ItemPreviewRequest.method)]))
        }
        do throws(RPCError) {
            try OutputValidation.validate(
                bytes, as: .chip, providerID: providerID, method: ItemPreviewRequest.method, limits: limits, messageLimit: messageLimit)
        } catch {
            return .failure(error)
        }
        if containsLineBreak(bytes), let value = try? JSONReader.parse(bytes) {
            return .success(value.jsonBytes[...])
        }
        return .success(Array(bytes)[...])
    }

    /// The chip a client shows when the provider cannot make one (docs/protocol.md §6, default chips).
    func defaultChip(for attached: AttachedItem) -> JSONValue {
        let icon = registry.withEntry(id: attached.providerID) { $0.pointee.manifest?.iconName ?? "doc" } ?? "doc"
        return [
            "ctxui": 1, "icon": .string(icon), "title": .string(attached.displayName), "tone": "neutral",
            "accessibilityLabel": .string(attached.displayName), "fallbackText": .string(attached.displayName),
        ]
    }

    /// Builds the message envelope a backend receives for a composer, with ChatKit's field names,
    /// then removes the sent items. Each item is encoded again by its provider; if the provider
    /// is gone or fails, the encoding made at attach time is used, so a draft can always be sent.
    package func send(composerID: String, text: String) async throws(RPCError) -> JSONValue {
        let composer = try composers.get(composerID)
        var contextItems: [JSONValue] = []
        var descriptions: [String] = []
        for attached in composer.items {
            var encoding = attached.encoding
            var description = attached.displayName
            if let provider = try? provider(attached.providerID, for: .item) {
                let item = JSONValue.object(attached.item)
                if let fresh = try? await request(provider, method: ItemEncodeRequest.method, params: ["item": item]),
                    case .object(let object) = fresh, object["data"]?.stringValue != nil
                {
                    encoding = object
                }
                if let described = try? await request(provider, method: ItemDescribeRequest.method, params: ["item": item]),
                    let text = described["text"]?.stringValue
                {
                    description = text
                }
            }
            var metadata: JSONObject = [
                "provider": .string(attached.providerID),
                "type": .string(attached.type),
                "encoding": encoding["representation"] ?? "json",
                "contentType": encoding["contentType"] ?? "application/octet-stream",
                "localizedDescription": .string(description),
                "itemId": .string(attached.id),
            ]
            if case .object(let extra) = encoding["metadata"] ?? .null {
                for (key, value) in extra where metadata[key] == nil { metadata[key] = value }
            }
            contextItems.append([
                "contextType": .string(attached.type),
                "displayName": .string(attached.displayName),
                "encodedContent": encoding["data"] ?? "",
                "metadata": .object(metadata),
            ])
            descriptions.append(description)
        }
        var summary = text
        if !descriptions.isEmpty {
            if !summary.isEmpty { summary += "\n\n" }
            summary += "Attached context:\n" + descriptions.map { "- " + $0 }.joined(separator: "\n")
        }
        let envelope: JSONValue = [
            "composerId": .string(composer.id),
            "message": ["text": .string(text), "contextItems": .array(contextItems), "summary": .string(summary)],
        ]
        // Clear only once the envelope exists; items attached meanwhile stay.
        try composers.removeSent(Set(composer.items.map(\.id)), from: composer.id)
        return envelope
    }

    /// Seconds since 1970.
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// The chips of one `composer/list`, filled in by provider completions (any thread) and timers.
final class PreviewBatch: Sendable {
    private struct State {
        var results: [ChipOutcome?]
        var remaining: Int
        var whenComplete: (@Sendable ([ChipOutcome]) -> Void)?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
    }

    /// Records the outcome of `slot`; only the first one counts.
    func finish(_ slot: Int, _ result: ChipOutcome) {
        let complete = state.withLock { state -> (@Sendable ([ChipOutcome]) -> Void, [ChipOutcome])? in
            guard state.results[slot] == nil else { return nil }
            state.results[slot] = result
            state.remaining -= 1
            guard state.remaining == 0, let whenComplete = state.whenComplete else { return nil }
            state.whenComplete = nil
            return (whenComplete, state.results.map { $0! })
        }
        if let (whenComplete, results) = complete { whenComplete(results) }
    }

    func isFinished(_ slot: Int) -> Bool { state.withLock { $0.results[slot] != nil } }

    /// Calls `body` with every outcome once all are in: at once if they are, else on the thread
    /// that records the last one (no task to wake: the answer goes out from there).
    func whenComplete(_ body: @escaping @Sendable ([ChipOutcome]) -> Void) {
        let ready = state.withLock { state -> [ChipOutcome]? in
            if state.remaining == 0 { return state.results.map { $0! } }
            state.whenComplete = body
            return nil
        }
        if let ready { body(ready) }
    }
}
