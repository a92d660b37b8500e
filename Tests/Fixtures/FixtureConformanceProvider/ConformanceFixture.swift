#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit
import Synchronization

/// A well-behaved provider with one switchable defect, for the conformance runner's tests
/// (Tests/ContextConformanceTests; manifests in Tests/Fixtures/manifests-conformance/).
///
/// The setting `defect` picks what goes wrong; each defect must be caught by exactly the check
/// named next to it (docs/conformance.md):
///
/// | defect | check |
/// |---|---|
/// | (none) | passes everything |
/// | `open-fails` | provider.open |
/// | `unavailable-no-reason` | availability.answers |
/// | `invalid-form` (duplicate field ids) | collect.form-valid |
/// | `query-fails` | collect.query |
/// | `rejects-samples` | collect.sample-flow |
/// | `accepts-invalid` (no validation) | collect.rejects-invalid |
/// | `cancel-fails` | collect.cancel |
/// | `make-context-fails` | collect.make-context |
/// | `foreign-item` (items name another provider) | item.provider-id |
/// | `bad-chip` (thumbnail is not a data: URI) | chip.schema |
/// | `bad-detail` (map link is not a geo: URI) | detail.schema |
/// | `empty-describe` | describe.text |
/// | `wrong-representation` (answers json when asked for text) | encode.declared-representation |
/// | `nondeterministic-encode` (a counter in the metadata) | encode.deterministic |
/// | `stateful-items` (content is a key into instance memory) | item.survives-restart |
/// | `slow-preview`, `slow-detail`, `slow-encode` (sleep 600 ms for the item "Hello") | timing.preview, timing.detail, timing.encode |
/// | `shared-state` (a preview reads a shared variable another call overwrote) | concurrency.parallel-calls |
/// | `hang-on-garbage` (never answers malformed content) | robustness.garbage-input |
/// | `crash-on-garbage` (fatalError on malformed content; worker mode only) | robustness.garbage-input |
/// | `stdout` (prints in preview) | robustness.stdout-clean |
/// | `oversized-at-maximum` (the chip repeats the whole text) | limits.respects-maximum |
///
/// Items have type `sample` and content `{"text": String}`.
public struct ConformanceFixture: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.conformance-fixture", title: "Conformance Fixture", version: "1.0.0", iconName: "checkmark.seal")

    public static var conformanceSamples: [CollectorSample] {
        [
            CollectorSample(name: "hello", values: ["text": "Hello", "count": 2]),
            CollectorSample(name: "unicode", values: ["text": "Gr\u{FC}\u{DF}e \u{1F44B}"]),
        ]
    }

    let context: ProviderContext
    let defect: String
    /// Per-instance memory for `stateful-items`, and the shared slot for `shared-state`.
    let state = FixtureState()

    public init(context: ProviderContext) throws {
        defect = context.settings.string("defect") ?? ""
        if defect == "open-fails" {
            throw ProviderError("the fixture was told to fail (defect: open-fails)", hint: "Remove the defect setting.")
        }
        self.context = context
    }

    public func availability() async throws -> Availability {
        defect == "unavailable-no-reason" ? Availability(available: false) : .available
    }

    public func makeContext() async throws -> ContextItem? {
        if defect == "make-context-fails" { throw ProviderError(code: -32603, message: "makeContext failed on purpose") }
        return try item(text: "Made programmatically")
    }

    // MARK: Collector

    var form: ContextForm {
        let limit = defect == "oversized-at-maximum" ? 100_000 : 200
        var fields: [FormField] = [
            .text(id: "text", label: "Text", required: true, maxLength: limit),
            .number(id: "count", label: "Count", min: 1, max: 10, step: 1),
            .choice(id: "colour", label: "Colour", options: [FormOption(value: "red", label: "Red"), FormOption(value: "blue", label: "Blue")]),
        ]
        var search = FormField.choice(id: "city", label: "City", options: [])
        search.options = nil
        search.search = ChoiceSearch(minQueryLength: 0)
        fields.append(search)
        if defect == "invalid-form" { fields.append(.text(id: "text", label: "Text again")) }
        return ContextForm(stepId: "sample", title: "Sample", submitLabel: "Attach", fields: fields)
    }

    public func startCollection(sessionId: String) async throws -> ContextForm { form }

    public func form(forStep stepId: String, sessionId: String, values: FormValues) async throws -> ContextForm? {
        defect == "accepts-invalid" ? nil : form
    }

    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues) async throws -> [FormOption] {
        if defect == "query-fails" { throw ProviderError(code: -32603, message: "query failed on purpose") }
        return ["Lisbon", "Oslo", "Quito"].filter { query.isEmpty || $0.lowercased().contains(query.lowercased()) }
            .map { FormOption(value: $0.lowercased(), label: $0) }
    }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        if defect == "rejects-samples" { return .invalid(fieldErrors: [:], formError: "Nothing is ever good enough.") }
        let text = values.string("text") ?? (values.object["text"].map { $0.jsonString } ?? "")
        return .item(try item(text: text))
    }

    public func cancelCollection(sessionId: String) async throws {
        if defect == "cancel-fails" { throw ProviderError(code: -32603, message: "cancel failed on purpose") }
    }

    func item(text: String) throws -> ContextItem {
        var content: JSONValue = ["text": .string(text)]
        if defect == "stateful-items" {
            let key = "k\(state.counter.wrappingAdd(1, ordering: .relaxed).oldValue)"
            state.memory.withLock { $0[key] = text }
            content = ["key": .string(key)]
        }
        var item = context.makeItem(type: "sample", displayName: String(text.prefix(40)), content: content)
        if defect == "foreign-item" { item.providerId = "com.example.someone-else" }
        return item
    }

    // MARK: Views

    /// The item's text; malformed content throws -32602 (or hangs/crashes, for those defects).
    func text(_ item: ContextItem) async throws -> String {
        if defect == "stateful-items", let key = item.content["key"]?.stringValue {
            guard let text = state.memory.withLock({ $0[key] }) else {
                throw ProviderError(code: -32603, message: "unknown item key \(key)")
            }
            return text
        }
        guard let text = item.content["text"]?.stringValue else {
            if defect == "hang-on-garbage" {
                while true { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
            }
            if defect == "crash-on-garbage" { fatalError("malformed content (defect: crash-on-garbage)") }
            throw ProviderError.invalidParams("params.item.content.text: expected a string")
        }
        return text
    }

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        var text = try await self.text(item)
        if defect == "slow-preview", text == "Hello" { try await Task.sleep(nanoseconds: 600_000_000) }
        if defect == "stdout" {
            print("conformance fixture: previewing \(item.id)")
            fflush(nil)
        }
        if defect == "shared-state" {
            state.slot.withLock { $0 = text }
            try await Task.sleep(nanoseconds: 2_000_000)
            text = state.slot.withLock { $0 }
        }
        let title = defect == "oversized-at-maximum" ? text : String(text.prefix(60))
        var chip = ContextChip(icon: Self.metadata.iconName, title: title, subtitle: "\(text.count) characters")
        if defect == "bad-chip" { chip.thumbnail = "https://example.com/thumbnail.png" }
        return chip
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let text = try await self.text(item)
        if defect == "slow-detail", text == "Hello" { try await Task.sleep(nanoseconds: 600_000_000) }
        var blocks: [DetailBlock] = [.text(text)]
        if defect == "bad-detail" {
            blocks.append(.map(MapBlock(center: Coordinate(latitude: 38.72, longitude: -9.14), link: "https://maps.example.com/?q=38.72,-9.14")))
        }
        return ContextDetail(title: item.displayName, blocks: blocks)
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let text = try await self.text(item)
        return defect == "empty-describe" ? "" : "Sample: \(text)"
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let text = try await self.text(item)
        if defect == "slow-encode", text == "Hello" { try await Task.sleep(nanoseconds: 600_000_000) }
        var metadata = ["length": String(text.count)]
        if defect == "nondeterministic-encode" { metadata["sequence"] = String(state.counter.wrappingAdd(1, ordering: .relaxed).oldValue) }
        switch representation ?? "json" {
        case "json":
            return .json(["text": .string(text)], metadata: metadata)
        case "text":
            if defect == "wrong-representation" { return .json(["text": .string(text)], metadata: metadata) }
            return .text(text, metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text"])
        }
    }
}

/// Mutable state behind the defects that need it.
final class FixtureState: Sendable {
    let memory = Mutex<[String: String]>([:])
    let slot = Mutex<String>("")
    let counter = Atomic<Int>(0)
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: ConformanceFixture.self)
}
