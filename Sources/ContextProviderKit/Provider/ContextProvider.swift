/// A context provider: a "mini program" that collects context items and describes how to show
/// and send them.
///
/// Implement the requirements you need; every method except `metadata` and `init(context:)` has a
/// default. Export the provider from its library with one line:
///
/// ```swift
/// @_cdecl("context_provider_entry_v1")
/// public func contextProviderEntry() -> UnsafeRawPointer {
///     ContextProviderExport.entry(for: NoteProvider.self)
/// }
/// ```
///
/// The SDK converts every request to these calls and every answer back to JSON: a provider never
/// touches JSON-RPC or pointers. Methods may run concurrently; keep the provider stateless or
/// protect its state. Throw `ProviderError` to choose the error code, or any error for `-32603`.
public protocol ContextProvider: Sendable {
    /// The provider's id, title, version and icon (`provider/info`).
    static var metadata: ProviderMetadata { get }

    /// Methods cheap enough to start on the host's calling thread instead of in a new task
    /// (`Task.immediate`): the work runs inline until its first suspension, which saves a thread
    /// hop (several microseconds) per request. Only list methods that do no blocking work and
    /// answer in microseconds, such as a preview computed from the item alone. With `.preview`
    /// listed, the SDK also answers `item/previewMany` (several chips in one call, used by
    /// `composer/list`). Default: none.
    static var immediateMethods: ProviderMethods { get }

    /// Sample collector input for the conformance runner (`conformance/samples`,
    /// docs/conformance.md), so it can walk real collection flows. Default: none (the runner
    /// derives values from the form, and the SDK answers `conformance/samples` with `-32601`).
    static var conformanceSamples: [CollectorSample] { get }

    /// Creates an instance for the host. Throw (ideally a `ProviderError` with a `hint`) when the
    /// settings are unusable; the host reports the message and hint to the operator.
    init(context: ProviderContext) throws

    /// Whether the provider works right now (`provider/availability`). Default: available.
    func availability() async throws -> Availability

    /// Makes an item without any UI (`provider/makeContext`). Default: `nil`.
    func makeContext() async throws -> ContextItem?

    /// The first step of the collector (`collect/start`). Default: throws "no collector".
    func startCollection(sessionId: String) async throws -> ContextForm

    /// The form of step `stepId`, used by the SDK to validate submitted values before `submit`.
    /// Return `nil` to skip generic validation. Default: the start form when its `stepId`
    /// matches, else `nil`.
    func form(forStep stepId: String, sessionId: String, values: FormValues) async throws -> ContextForm?

    /// Options for a choice field with a `search` source (`collect/query`). Default: none.
    func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]

    /// Handles a submitted step whose values passed generic validation (`collect/submit`): answer
    /// the item, the next step, or `.invalid` with per-field messages. Default: throws "no collector".
    func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome

    /// The user abandoned the collector (`collect/cancel`). Default: does nothing.
    func cancelCollection(sessionId: String) async throws

    /// The preview chip for an item (`item/preview`). Default: `immediatePreview(_:)`'s chip if
    /// it makes one, else the display name with the provider's icon.
    func preview(_ item: ContextItem) async throws -> ContextChip

    /// The preview chip, made synchronously on the host's calling thread, with no task at all: for
    /// chips computed from the item alone in microseconds (the Note chip), where starting a task
    /// was most of the SDK's share of a preview. The SDK asks it first for `item/preview` (the
    /// request is registered as any other: a duplicate id is refused, and a cancel that comes
    /// while it runs is answered instead of the chip) and, when `immediateMethods` contains
    /// `.preview`, for each item of `item/previewMany`; it calls `preview(_:)` only when this
    /// returns `nil` (then the default `preview(_:)` asks it once more). Like an immediate method,
    /// it must never read files, sleep or do heavy work. The return type must be the optional
    /// `ContextChip?`: a method returning `ContextChip` is a different one, which the SDK never
    /// calls. Default: `nil`.
    func immediatePreview(_ item: ContextItem) throws -> ContextChip?

    /// The detail document for an item (`item/detail`). Default: the display name.
    func detail(_ item: ContextItem) async throws -> ContextDetail

    /// A one-line description for summaries and accessibility (`item/describe`). Default: the
    /// display name.
    func describe(_ item: ContextItem) async throws -> String

    /// The item encoded for transport (`item/encode`). `representation` is the one the client
    /// asked for, or `nil` for the provider's default. Default: the content as JSON.
    func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem
}

extension ContextProvider {
    /// None: every method runs in a new task.
    public static var immediateMethods: ProviderMethods { [] }

    /// None: the conformance runner derives sample values from the form.
    public static var conformanceSamples: [CollectorSample] { [] }

    /// Available.
    public func availability() async throws -> Availability { .available }

    /// No programmatic item.
    public func makeContext() async throws -> ContextItem? { nil }

    /// Throws: this provider has no collector.
    public func startCollection(sessionId: String) async throws -> ContextForm {
        throw Self.noCollector
    }

    /// The start form when its step id matches.
    public func form(forStep stepId: String, sessionId: String, values: FormValues) async throws -> ContextForm? {
        let start = try await startCollection(sessionId: sessionId)
        return start.stepId == stepId ? start : nil
    }

    /// No options.
    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]
    { [] }

    /// Throws: this provider has no collector.
    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        throw Self.noCollector
    }

    /// Nothing to clean up.
    public func cancelCollection(sessionId: String) async throws {}

    /// `immediatePreview(_:)`'s chip, else the default chip.
    public func preview(_ item: ContextItem) async throws -> ContextChip {
        try immediatePreview(item) ?? .default(for: item, icon: Self.metadata.iconName)
    }

    /// None: `preview(_:)` makes every chip.
    public func immediatePreview(_ item: ContextItem) throws -> ContextChip? { nil }

    /// The default detail.
    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        .default(for: item)
    }

    /// The display name.
    public func describe(_ item: ContextItem) async throws -> String { item.displayName }

    /// The content as `application/json`; only the `json` representation.
    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        guard representation == nil || representation == "json" else {
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json"])
        }
        return .json(item.content)
    }

    static var noCollector: ProviderError {
        .notSupported("\(metadata.title) (\(metadata.id)) has no collector; it makes items programmatically")
    }
}

extension ProviderError {
    /// A `-32602` error for an `item/encode` representation the provider does not produce.
    public static func unknownRepresentation(_ representation: String, allowed: [String]) -> ProviderError {
        .invalidParams(
            "params.representation: unknown representation \"\(representation)\"; expected one of \(allowed.joined(separator: ", "))",
            data: ["allowed": .array(allowed.map(JSONValue.string))])
    }
}

/// A set of provider methods, for `ContextProvider.immediateMethods`.
public struct ProviderMethods: OptionSet, Sendable, Hashable {
    /// The bit mask.
    public let rawValue: Int

    /// Creates a set from a bit mask.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `provider/availability`.
    public static let availability = ProviderMethods(rawValue: 1 << 0)
    /// `collect/query`.
    public static let query = ProviderMethods(rawValue: 1 << 1)
    /// `item/preview`.
    public static let preview = ProviderMethods(rawValue: 1 << 2)
    /// `item/detail`.
    public static let detail = ProviderMethods(rawValue: 1 << 3)
    /// `item/describe`.
    public static let describe = ProviderMethods(rawValue: 1 << 4)
    /// `item/encode`.
    public static let encode = ProviderMethods(rawValue: 1 << 5)
    /// The four item views.
    public static let itemViews: ProviderMethods = [.preview, .detail, .describe, .encode]
}
