/// One conformance check: a stable id (never renamed; CI baselines refer to it), what it covers
/// and where it is documented (`docs/conformance.md`, one section per id).
public struct ConformanceCheck: Sendable, Hashable, Identifiable {
    /// The stable id, e.g. `chip.schema`.
    public let id: String
    /// A one-line summary for reports.
    public let summary: String

    init(_ id: String, _ summary: String) {
        self.id = id
        self.summary = summary
    }

    /// Every check, in the order the runner runs and reports them.
    public static let all: [ConformanceCheck] = [
        ConformanceCheck("manifest.schema", "The manifest parses and passes every manifest rule."),
        ConformanceCheck("abi.load", "The library is found, passes its sha256 pin, loads and exports context_provider_entry_v1."),
        ConformanceCheck("abi.version", "The function table has ABI version 1, a large enough struct_size and no NULL functions."),
        ConformanceCheck("provider.open", "open succeeds with the manifest's default settings."),
        ConformanceCheck("metadata.matches-manifest", "provider/info answers the manifest's id and version (and, ideally, title and icon)."),
        ConformanceCheck("availability.answers", "provider/availability answers {available, reason?} in time; an unavailable provider is a warning."),
        ConformanceCheck("collect.form-valid", "collect/start and every later step answer valid ctxui forms whose defaults pass their own rules."),
        ConformanceCheck("collect.query", "Choice fields with a search source answer collect/query with valid options."),
        ConformanceCheck("collect.sample-flow", "Declared (or derived) sample input walks the collector to an item."),
        ConformanceCheck("collect.rejects-invalid", "Invalid values are answered 'invalid' with an error on the offending field."),
        ConformanceCheck("collect.cancel", "collect/cancel answers for an open session."),
        ConformanceCheck("collect.make-context", "provider/makeContext answers {item: Item | null} (programmatic collection)."),
        ConformanceCheck("item.provider-id", "Every item carries the manifest id, a UUID id, a type, a display name and content."),
        ConformanceCheck("chip.schema", "item/preview answers a valid ctxui chip for every item."),
        ConformanceCheck("detail.schema", "item/detail answers a valid ctxui detail for every item."),
        ConformanceCheck("describe.text", "item/describe answers a non-empty text for every item."),
        ConformanceCheck("encode.declared-representation", "item/encode answers the representation asked for, with data that matches it."),
        ConformanceCheck("encode.deterministic", "Encoding the same item twice gives the same bytes."),
        ConformanceCheck("item.survives-restart", "A fresh instance (worker mode: a new worker process) serves items made by the old one."),
        ConformanceCheck("timing.preview", "p95 of item/preview is within the budget (half the manifest's preview timeout)."),
        ConformanceCheck("timing.detail", "p95 of item/detail is within the budget (half the manifest's detail timeout)."),
        ConformanceCheck("timing.encode", "p95 of item/encode is within the budget (half the manifest's encode timeout)."),
        ConformanceCheck("concurrency.parallel-calls", "Parallel previews and encodes of different items each get their own, correct answer."),
        ConformanceCheck("robustness.garbage-input", "Malformed params and item content are answered with errors, never a crash or a hang."),
        ConformanceCheck("robustness.stdout-clean", "The provider writes nothing to stdout (the host's protocol channel)."),
        ConformanceCheck("limits.respects-maximum", "Results stay within the host's size limits, also for input at the form's maximums."),
    ]

    /// The ids of `all`.
    public static let ids: [String] = all.map(\.id)

    /// The check with this id.
    public static func named(_ id: String) -> ConformanceCheck? { all.first { $0.id == id } }
}
