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

    /// Made on the host's thread, with no task (`preview(_:)` calls it too): a chip is made for
    /// every item of every `composer/list`.
    public func immediatePreview(_ item: ContextItem) throws -> ContextChip? {
        let note = try Note(item)
        let words = Self.wordsLabel(note.wordCount)
        let title = Self.chipTitle(note)
        return ContextChip(
            icon: Self.metadata.iconName, title: title, subtitle: words, tone: .neutral,
            thumbnail: NoteThumbnail.dataURI(title: title, body: note.body),
            accessibilityLabel: Self.joined("Note: ", title, ", ", words, ""), fallbackText: Self.joined("", title, " (", words, ")"))
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

    /// `prefix + first + infix + second + suffix`, made in one allocation: string interpolation
    /// appends piece by piece, which cost more than the rest of the chip's text.
    static func joined(_ prefix: StaticString, _ first: String, _ infix: StaticString, _ second: String, _ suffix: StaticString) -> String {
        var first = first, second = second
        return first.withUTF8 { a in
            second.withUTF8 { b in
                let capacity = prefix.utf8CodeUnitCount + a.count + infix.utf8CodeUnitCount + b.count + suffix.utf8CodeUnitCount
                return String(unsafeUninitializedCapacity: capacity) { buffer in
                    var count = 0
                    func append(_ piece: UnsafeBufferPointer<UInt8>) {
                        guard let start = piece.baseAddress, !piece.isEmpty else { return }
                        (buffer.baseAddress! + count).initialize(from: start, count: piece.count)
                        count += piece.count
                    }
                    append(UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                    append(a)
                    append(UnsafeBufferPointer(start: infix.utf8Start, count: infix.utf8CodeUnitCount))
                    append(b)
                    append(UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount))
                    return count
                }
            }
        }
    }

    /// The first non-empty line of the title, else of the body, shortened to 60 characters.
    static func chipTitle(_ note: Note) -> String {
        // The usual title: one short line, starting and ending with a visible ASCII character.
        var title = note.title
        let isUsual = title.withUTF8 { utf8 in
            guard let first = utf8.first, let last = utf8.last, utf8.count <= 60 else { return false }
            return (0x21...0x7E).contains(first) && first != UInt8(ascii: "#") && (0x21...0x7E).contains(last)
                && !utf8.contains(where: { $0 == 0x0A || $0 == 0x0D })
        }
        if isUsual { return title }
        let line = note.title.firstLine ?? note.body.firstLine ?? "Untitled note"
        guard line.count > 60 else { return line }
        return String(line.prefix(59)).trimmingWhitespace() + "…"
    }
}

/// The chip's thumbnail: a small page showing the note's title and its first words, the way a
/// notes app previews a note. An SVG image as a `data:` URI (drawn by clients in an image
/// element, where SVG cannot run scripts).
///
/// It runs for every chip (a `composer/list` of 100 notes makes 100), so it works on UTF-8 bytes
/// rather than `Character`s (grapheme breaking over a long body cost more than the rest of the
/// preview), reads only as much of the body as it shows, and writes into one fixed buffer whose
/// fixed parts are static strings: no allocation but the URI's, and no reference counting that
/// threads making chips side by side would contend on.
enum NoteThumbnail {
    /// How many characters fit on one line of the small type, and how many lines of the body fit
    /// on the page (48 × 60 points).
    static let lineLength = 13, bodyLines = 5

    static func dataURI(title: String, body: String) -> String {
        var title = title
        var body = body
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SVGWriter.capacity) { buffer in
            // The SVG after the header: the header's Base64 text is always the same.
            var svg = SVGWriter(buffer)
            title.withUTF8 { svg.appendEscaped(Clip(UnsafeRawBufferPointer($0))) }
            svg.append(closeLine)
            body.withUTF8 { appendLines(UnsafeRawBufferPointer($0), to: &svg) }
            svg.append(footer)
            let rest = svg.written
            let start = headerURI.utf8CodeUnitCount
            let count = start + Base64.encodedCount(rest.count)
            return String(unsafeUninitializedCapacity: count) { output in
                _ = UnsafeMutableBufferPointer(rebasing: output[..<start])
                    .initialize(from: UnsafeBufferPointer(start: headerURI.utf8Start, count: start))
                Base64.encode(rest, into: UnsafeMutableBufferPointer(rebasing: output[start..<count]))
                return count
            }
        }
    }

    /// The URI's start: `data:image/svg+xml;base64,` and the Base64 text of the SVG's fixed
    /// header, encoded once (it was most of each thumbnail's encoding). The header's 267 bytes are
    /// a multiple of 3, so the text of what follows it continues this one unchanged. The header,
    /// decoded (the recorded thumbnails in `NoteProviderTests` check every byte):
    ///
    ///     <svg xmlns="http://www.w3.org/2000/svg" width="48" height="60" viewBox="0 0 48 60"><rect x="0.5" y="0.5" width="47" height="59" rx="4" fill="#fffbe6" stroke="#d9c77a"/><text font-family="sans-serif" font-size="6" fill="#3a3a3a"><tspan x="4" y="10" font-weight="bold">
    static let headerURI: StaticString = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSI0OCIgaGVpZ2h0PSI2MCIgdmlld0JveD0iMCAwIDQ4IDYwIj48cmVjdCB4PSIwLjUiIHk9IjAuNSIgd2lkdGg9IjQ3IiBoZWlnaHQ9IjU5IiByeD0iNCIgZmlsbD0iI2ZmZmJlNiIgc3Ryb2tlPSIjZDljNzdhIi8+PHRleHQgZm9udC1mYW1pbHk9InNhbnMtc2VyaWYiIGZvbnQtc2l6ZT0iNiIgZmlsbD0iIzNhM2EzYSI+PHRzcGFuIHg9IjQiIHk9IjEwIiBmb250LXdlaWdodD0iYm9sZCI+"

    // The fixed parts.
    /// The start of the body's line `n` (`0..<bodyLines`), at `y = 19 + 8 n`.
    private static func lineOpener(_ n: Int) -> StaticString {
        switch n {
        case 0: ##"<tspan x="4" y="19">"##
        case 1: ##"<tspan x="4" y="27">"##
        case 2: ##"<tspan x="4" y="35">"##
        case 3: ##"<tspan x="4" y="43">"##
        default: ##"<tspan x="4" y="51">"##
        }
    }
    private static let closeLine: StaticString = "</tspan>"
    private static let footer: StaticString = "</text></svg>"
    private static let ellipsis: StaticString = "…"

    /// The body's first words, without Markdown markers (leading `#`, `>`, `-`; `*` and `` ` ``
    /// anywhere), filled into up to `bodyLines` lines of `lineLength` characters, each appended
    /// to `svg` as a `<tspan>`; the last line ends with "…" when words are left over.
    static func appendLines(_ body: UnsafeRawBufferPointer, to svg: inout SVGWriter) {
        // A line holds at most `lineLength` characters, and only the first `lineLength` of a word
        // are ever shown: 4 bytes a character at most (plus " …" after the last line).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * 64) { storage in
            var line = ByteRun(UnsafeMutableBufferPointer(rebasing: storage[0..<64]))
            var word = ByteRun(UnsafeMutableBufferPointer(rebasing: storage[64..<128]))
            var lineCount = 0
            var lineCharacters = 0
            func emit(_ text: Clip) {
                svg.append(lineOpener(lineCount))
                svg.appendEscaped(text)
                svg.append(closeLine)
                lineCount += 1
            }
            // (Through a plain pointer, with wrapping arithmetic: this loop runs for every byte
            // of the words shown, and checks of an optional base address and of overflow were
            // half its instructions.)
            guard let bytes = body.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            let end = body.count
            var index = 0
            while index < end {
                // One word: skip white space, then read up to the next.
                while index < end, isSpace(bytes[index]) { index &+= 1 }
                word.removeAll()
                var characters = 0
                while index < end {
                    let byte = bytes[index]
                    if isSpace(byte) { break }
                    index &+= 1
                    if byte == UInt8(ascii: "*") || byte == UInt8(ascii: "`") { continue }
                    if word.isEmpty, characters == 0,
                        byte == UInt8(ascii: "#") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "-")
                    {
                        continue
                    }
                    if byte & 0xC0 != 0x80 { characters &+= 1 }
                    // Bytes past the first `lineLength` characters are counted, not kept.
                    if characters <= lineLength { word.append(byte) }
                }
                if characters == 0 { continue }
                if !line.isEmpty, lineCharacters + 1 + characters <= lineLength {
                    line.append(0x20)
                    line.append(word)
                    lineCharacters += 1 + characters
                    continue
                }
                if !line.isEmpty {
                    if lineCount == bodyLines - 1 {  // the last line is full and words are left
                        line.append(0x20)
                        line.append(ellipsis)
                        emit(Clip(line.bytes))
                        return
                    }
                    emit(Clip(line.bytes, characters: lineCharacters))
                }
                line.removeAll()
                let clip = Clip(word.bytes, characters: characters)
                line.append(clip.kept)
                if clip.isCut { line.append(ellipsis) }
                lineCharacters = min(characters, lineLength)
            }
            if !line.isEmpty { emit(Clip(line.bytes, characters: lineCharacters)) }
        }
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Text shortened to at most `lineLength` characters (counted as Unicode scalars, i.e. UTF-8
    /// lead bytes: close enough for fitting text): when longer, its first `lineLength - 1`
    /// characters and then "…".
    struct Clip {
        /// The bytes kept.
        let kept: UnsafeRawBufferPointer
        /// Whether "…" follows them.
        let isCut: Bool

        init(_ bytes: UnsafeRawBufferPointer, characters: Int? = nil) {
            let count = characters ?? bytes.reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) }
            guard count > lineLength else {
                kept = bytes
                isCut = false
                return
            }
            var kept = 0
            var end = 0
            while end < bytes.count {
                if bytes[end] & 0xC0 != 0x80 {
                    if kept == lineLength - 1 { break }
                    kept += 1
                }
                end += 1
            }
            self.kept = UnsafeRawBufferPointer(rebasing: bytes[..<end])
            isCut = true
        }
    }

    /// A few bytes in a fixed buffer that is large enough by construction.
    struct ByteRun {
        private let storage: UnsafeMutableBufferPointer<UInt8>
        private(set) var count = 0

        init(_ storage: UnsafeMutableBufferPointer<UInt8>) { self.storage = storage }

        var isEmpty: Bool { count == 0 }
        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: storage[..<count])) }

        mutating func removeAll() { count = 0 }

        mutating func append(_ byte: UInt8) {
            storage[count] = byte
            count &+= 1
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let start = bytes.baseAddress, let target = storage.baseAddress else { return }
            (target + count).initialize(from: start.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            count &+= bytes.count
        }

        mutating func append(_ other: ByteRun) { append(other.bytes) }

        mutating func append(_ text: StaticString) {
            append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
    }

    /// The SVG text, written into a buffer of `capacity` bytes, which no thumbnail exceeds.
    struct SVGWriter {
        /// Room for the fixed parts (a few dozen bytes now that the header is not written here,
        /// `headerURI`) plus six lines of at most 56 bytes, each escaped to at most six bytes a byte
        /// (`&quot;`), with their tags.
        static let capacity = 512 + 6 * (56 * 6 + 32)

        private let buffer: UnsafeMutableBufferPointer<UInt8>
        private var count = 0

        init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

        var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count])) }

        mutating func append(_ text: StaticString) {
            let count = text.utf8CodeUnitCount
            UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[self.count..<self.count + count])
                .copyMemory(from: UnsafeRawBufferPointer(start: text.utf8Start, count: count))
            self.count += count
        }

        mutating func append(_ byte: UInt8) {
            buffer[count] = byte
            count += 1
        }

        /// Text as XML character data: markup characters escaped, control characters (not
        /// allowed in XML text) dropped.
        mutating func appendEscaped(_ clip: Clip) {
            // Most text has nothing to escape or drop: copied whole.
            if !clip.kept.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") }) {
                if let start = clip.kept.baseAddress, let target = buffer.baseAddress {
                    (target + count).initialize(from: start.assumingMemoryBound(to: UInt8.self), count: clip.kept.count)
                    count &+= clip.kept.count
                }
                if clip.isCut { append(NoteThumbnail.ellipsis) }
                return
            }
            for byte in clip.kept {
                switch byte {
                case UInt8(ascii: "&"): append("&amp;")
                case UInt8(ascii: "<"): append("&lt;")
                case UInt8(ascii: ">"): append("&gt;")
                case UInt8(ascii: "\""): append("&quot;")
                case 0..<0x20: continue
                default: append(byte)
                }
            }
            if clip.isCut { append(NoteThumbnail.ellipsis) }
        }
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
        // The form takes 200 and 20,000 characters; an item from elsewhere may be larger, up to
        // these sizes in bytes, so that every view of it stays within the host's caps (a
        // description holds the title, capped at 64 KiB; a detail holds the body twice, its text
        // and its fallback, capped at 4 MiB).
        guard title.utf8.count <= Note.maximumTitleBytes else {
            throw ProviderError.invalidParams("params.item.content.title: longer than \(Note.maximumTitleBytes) bytes (\(title.utf8.count))")
        }
        guard body.utf8.count <= Note.maximumBodyBytes else {
            throw ProviderError.invalidParams("params.item.content.body: longer than \(Note.maximumBodyBytes) bytes (\(body.utf8.count))")
        }
        wordCount = try reader.optionalInt("wordCount") ?? Note.countWords(body)
    }

    /// The largest title and body read from an item, in UTF-8 bytes.
    static let maximumTitleBytes = 16 << 10
    static let maximumBodyBytes = 1 << 20

    var json: JSONValue {
        ["title": .string(title), "body": .string(body), "wordCount": .number(Double(wordCount))]
    }

    var lineCount: Int {
        body.isEmpty ? 0 : body.split(separator: "\n", omittingEmptySubsequences: false).count
    }

    /// Words are runs of letters, digits, and joining punctuation (apostrophes, hyphens) separated
    /// by white space; Markdown markers on their own (`#`, `-`, `*`, `>`) do not count.
    static func countWords(_ text: String) -> Int {
        // On UTF-8 bytes and Unicode scalars, not Characters: grapheme breaking made a forged
        // megabyte body take longer than the preview's timeout. A word is a run without white
        // space holding a letter or a digit (a combining mark belongs to the run it follows).
        var text = text
        return text.withUTF8 { utf8 in
            var count = 0
            var counted = false
            var index = 0
            let end = utf8.count
            while index < end {
                let byte = utf8[index]
                let isSpace: Bool
                let isWordly: Bool
                if byte < 0x80 {
                    index &+= 1
                    isSpace = byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
                    isWordly = (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
                } else {
                    // A valid String's UTF-8: the lead byte gives the length.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                    var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
                    var next = index &+ 1
                    while next < min(end, index &+ length) {
                        value = value << 6 | UInt32(utf8[next] & 0x3F)
                        next &+= 1
                    }
                    index = next
                    let properties = Unicode.Scalar(value)?.properties
                    isSpace = properties?.isWhitespace ?? false
                    isWordly = properties.map { $0.isAlphabetic || $0.numericType != nil } ?? false
                }
                if isSpace {
                    counted = false
                } else if isWordly, !counted {
                    count &+= 1
                    counted = true
                }
            }
            return count
        }
    }
}

extension String {
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
