import ContextProviderKit

/// The Note provider: a title and a Markdown body, typed by the user.
///
/// Items have type `note` and content `{"title","body","wordCount"}`.
public struct NoteProvider: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.note", title: "Note", version: "1.0.0", iconName: "note.text")

    /// Views are computed from the item alone in microseconds: run them inline.
    public static var immediateMethods: ProviderMethods { .itemViews }

    /// Collector input for `context-host conformance` (docs/conformance.md): two real notes and
    /// one the form must refuse (a blank title).
    public static var conformanceSamples: [CollectorSample] {
        [
            CollectorSample(name: "groceries", values: ["title": "Groceries", "body": "# Shopping\n\n- milk\n- eggs\n- bread"]),
            CollectorSample(name: "unicode", values: ["title": "Caf\u{E9} \u{2615}\u{FE0F}", "body": "R\u{E9}sum\u{E9}: **na\u{EF}ve** co\u{F6}peration \u{1F600}"]),
            CollectorSample(name: "missing title", values: ["body": "No title"], expectsItem: false),
        ]
    }

    /// The longest title accepted.
    static let maximumTitleLength = 200
    /// The longest body accepted.
    static let maximumBodyLength = 20_000

    let context: ProviderContext

    public init(context: ProviderContext) throws {
        self.context = context
    }

    // MARK: Collector

    static let form = ContextForm(
        stepId: "note", title: "New Note", submitLabel: "Attach",
        fields: [
            .text(id: "title", label: "Title", required: true, maxLength: maximumTitleLength, placeholder: "Title"),
            .text(
                id: "body", label: "Body", required: true, multiline: true, maxLength: maximumBodyLength,
                placeholder: "Write in Markdown…", help: "Markdown is supported."),
        ],
        fallbackText: "New note: enter a title (up to 200 characters) and a Markdown body (up to 20000 characters).")

    public func startCollection(sessionId: String) async throws -> ContextForm { Self.form }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        guard stepId == Self.form.stepId else {
            throw ProviderError.invalidParams("params.stepId: unknown step \"\(stepId)\"; expected note")
        }
        // The SDK has already checked presence and lengths against `form`.
        let note = Note(
            title: (values.string("title") ?? "").trimmingWhitespace(),
            body: values.string("body") ?? "")
        return .item(context.makeItem(type: "note", displayName: note.title, content: note.json))
    }

    // MARK: Views

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        let note = try Note(item)
        let words = Self.wordsLabel(note.wordCount)
        let title = Self.chipTitle(note)
        return ContextChip(
            icon: Self.metadata.iconName, title: title, subtitle: words, tone: .neutral,
            accessibilityLabel: "Note: \(title), \(words)", fallbackText: "\(title) (\(words))")
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let note = try Note(item)
        var facts = [
            Fact(label: "Words", value: String(note.wordCount)),
            Fact(label: "Characters", value: String(note.body.count)),
            Fact(label: "Lines", value: String(note.lineCount)),
        ]
        if let createdAt = item.createdAt { facts.append(Fact(label: "Created", value: createdAt)) }
        return ContextDetail(
            title: note.title.isEmpty ? item.displayName : note.title,
            blocks: [.text(note.body, style: .markdown), .facts(facts)],
            fallbackText: "\(note.title)\n\n\(note.body)")
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let note = try Note(item)
        return "Note \u{201C}\(note.title)\u{201D} (\(Self.wordsLabel(note.wordCount)))"
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let note = try Note(item)
        let metadata = ["title": note.title, "wordCount": String(note.wordCount)]
        switch representation ?? "json" {
        case "json":
            return .json(note.json, metadata: metadata)
        case "text":
            return .text("\(note.title)\n\n\(note.body)", metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text"])
        }
    }

    // MARK: Helpers

    static func wordsLabel(_ count: Int) -> String { count == 1 ? "1 word" : "\(count) words" }

    /// The first non-empty line of the title, else of the body, shortened to 60 characters.
    static func chipTitle(_ note: Note) -> String {
        let line = note.title.firstLine ?? note.body.firstLine ?? "Untitled note"
        guard line.count > 60 else { return line }
        return String(line.prefix(59)).trimmingWhitespace() + "…"
    }
}

/// A note's content.
struct Note: Sendable, Hashable {
    var title: String
    var body: String
    var wordCount: Int

    init(title: String, body: String) {
        self.title = title
        self.body = body
        self.wordCount = Note.countWords(body)
    }

    /// Reads an item's content; `wordCount` is recomputed when missing.
    init(_ item: ContextItem) throws {
        let reader = try JSONObjectReader(item.content, path: "params.item.content")
        title = try reader.string("title")
        body = try reader.string("body")
        wordCount = try reader.optionalInt("wordCount") ?? Note.countWords(body)
    }

    var json: JSONValue {
        ["title": .string(title), "body": .string(body), "wordCount": .number(Double(wordCount))]
    }

    var lineCount: Int {
        body.isEmpty ? 0 : body.split(separator: "\n", omittingEmptySubsequences: false).count
    }

    /// Words are runs of letters, digits, and joining punctuation (apostrophes, hyphens) separated
    /// by white space; Markdown markers on their own (`#`, `-`, `*`, `>`) do not count.
    static func countWords(_ text: String) -> Int {
        var count = 0
        for token in text.split(whereSeparator: \.isWhitespace)
        where token.contains(where: { $0.isLetter || $0.isNumber }) {
            count += 1
        }
        return count
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }

    /// The first line with any non-space content, trimmed and without leading Markdown heading
    /// markers.
    var firstLine: String? {
        for line in split(separator: "\n") {
            var trimmed = String(line).trimmingWhitespace()
            while trimmed.hasPrefix("#") { trimmed.removeFirst() }
            trimmed = trimmed.trimmingWhitespace()
            if !trimmed.isEmpty { return trimmed }
        }
        return nil
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: NoteProvider.self)
}
