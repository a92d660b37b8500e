import ContextClient
import ContextProviderKit
import Testing

/// The ctxui text renderer: pure functions, no host.
@Suite("ctxui text renderer")
struct RenderTests {
    @Test("a chip shows glyph, title and subtitle; tone is colour only when colour is on")
    func chip() {
        let chip: JSONValue = ["ctxui": 1, "icon": "note.text", "title": "Groceries", "subtitle": "6 words", "tone": "attention",
                               "accessibilityLabel": "Note", "fallbackText": "Groceries (6 words)"]
        #expect(CtxuiRender.render(chip: chip, width: 80, color: false) == "[✎ Groceries · 6 words]")
        let coloured = CtxuiRender.render(chip: chip, width: 80, color: true)
        #expect(coloured.contains("\u{1B}[31;1m"))
        #expect(CtxuiRender.stripANSI(coloured) == "[✎ Groceries · 6 words]")
        #expect(CtxuiRender.render(chip: chip, width: 12, color: false).count <= 12)
    }
}

/// Renderer cases beyond the chip.
@Suite("ctxui text renderer: details, forms, providers")
struct RenderDetailTests {
    static let detail: JSONValue = [
        "ctxui": 1, "title": "Everything", "fallbackText": "Everything as text",
        "blocks": [
            ["type": "text", "text": "Heading", "style": "heading"],
            ["type": "text", "text": "Some **markdown** text", "style": "markdown"],
            ["type": "text", "text": "let x = 1", "style": "monospace"],
            ["type": "facts", "facts": [["label": "Words", "value": "6"], ["label": "Status", "value": "High", "tone": "attention"]]],
            ["type": "chart", "kind": "bar", "unit": "bpm", "series": [["name": "Rate", "points": [["x": "Mon", "y": 60], ["x": "Tue", "y": 120]]]],
             "thresholds": [["label": "Limit", "value": 100, "tone": "warning"]]],
            ["type": "chart", "kind": "line", "series": [["name": "Close", "points": [["x": "d1", "y": 1], ["x": "d2", "y": 3], ["x": "d3", "y": 2]]]]],
            ["type": "map", "center": ["latitude": 48.8584, "longitude": 2.2945], "zoom": 15,
             "markers": [["latitude": 48.8584, "longitude": 2.2945, "title": "Tower"]], "link": "geo:48.8584,2.2945"],
            ["type": "list", "items": ["one", "two"], "ordered": true],
            ["type": "image", "dataURI": "data:image/png;base64,AAAA", "alt": "A dot"],
            ["type": "link", "url": "https://example.com", "title": "Example"],
            ["type": "hologram", "fallback": "A hologram, as text"],
            ["type": "hologram2"],
        ],
    ]

    @Test("every block type is drawn; unknown blocks show their fallback")
    func allBlocks() {
        let text = CtxuiRender.render(detail: Self.detail, width: 60, color: false).joined(separator: "\n")
        for expected in ["Everything", "Heading", "Some **markdown** text", "  let x = 1", "Words   6", "Status  High",
                         "Mon █", "60 bpm", "120 bpm", "┄ Limit: 100 bpm", "min 1 · max 3 · last 2", "d1 → d3 (3 points)",
                         "⌖ 48.85840° N, 2.29450° E (zoom 15)", "• Tower 48.85840° N, 2.29450° E", "geo:48.8584,2.2945",
                         "1. one", "2. two", "▨ [image/png] A dot", "↗ Example", "https://example.com",
                         "A hologram, as text", "(a 'hologram2' block this client cannot show)"] {
            #expect(text.contains(expected), "missing \(expected) in\n\(text)")
        }
        #expect(text.contains("█"))  // the line chart's columns
    }

    @Test("lines fit narrow terminals")
    func narrow() {
        for width in [20, 32, 50] {
            for line in CtxuiRender.render(detail: Self.detail, width: width, color: false) {
                #expect(CtxuiRender.visibleWidth(line) <= width, "\(line) wider than \(width)")
            }
        }
    }

    @Test("colour codes appear only with color: true (NO_COLOR)")
    func noColor() {
        let plain = CtxuiRender.render(detail: Self.detail, width: 60, color: false)
        #expect(!plain.joined().contains("\u{1B}"))
        let coloured = CtxuiRender.render(detail: Self.detail, width: 60, color: true)
        #expect(coloured.joined().contains("\u{1B}[31;1mHigh"))
        #expect(coloured.map(CtxuiRender.stripANSI) == plain)
    }

    @Test("a detail without blocks shows its fallbackText")
    func fallbackText() {
        let lines = CtxuiRender.render(detail: ["ctxui": 1, "title": "T", "fallbackText": "Only text", "blocks": []], width: 40, color: false)
        #expect(lines == ["T", "Only text"])
    }

    @Test("sparklines and chip rows")
    func sparklinesAndRows() {
        #expect(CtxuiRender.sparkline([1, 2, 3, 4, 5, 6, 7, 8], width: 8) == "▁▂▃▄▅▆▇█")
        #expect(CtxuiRender.sparkline([1, 2, 3, 4, 5, 6, 7, 8], width: 4).count == 4)
        let chip: JSONValue = ["ctxui": 1, "icon": "chart.line", "title": "AAPL", "tone": "good", "accessibilityLabel": "a", "fallbackText": "f",
                               "accessory": ["kind": "sparkline", "values": [1, 2, 3]]]
        #expect(CtxuiRender.render(chip: chip, width: 40, color: false) == "[↗ AAPL ▁▅█]")
        let rows = CtxuiRender.render(chips: [chip, chip, chip], width: 30, color: false)
        #expect(rows.count == 2)
        #expect(CtxuiRender.render(chips: [], width: 30, color: false) == ["(nothing attached)"])
        #expect(CtxuiRender.render(chip: ["fallbackText": "plain"], width: 30, color: false) == "[plain]")
    }

    @Test("a field shows its label, hints, value and inline error")
    func field() {
        let field: JSONValue = ["id": "title", "kind": "text", "label": "Title", "required": true, "maxLength": 200]
        let lines = CtxuiRender.render(field: field, value: "", error: "Title is required.", width: 60, color: false)
        #expect(lines == ["Title * (up to 200 characters)", "  current: (empty)", "  ✗ Title is required."])
        let number: JSONValue = ["id": "n", "kind": "number", "label": "Shares", "min": 1, "max": 10, "unit": "shares"]
        #expect(CtxuiRender.hint(for: number) == "a number ≥ 1 ≤ 10; shares")
        #expect(CtxuiRender.hint(for: ["id": "x", "kind": "sketch", "label": "X", "fallback": "Describe it"]) == "Describe it")
    }

    @Test("typed answers become submit values; unparsable text goes to the provider as is")
    func parse() {
        #expect(CtxuiRender.parseValue("", field: ["kind": "text"]) == .string(""))
        #expect(CtxuiRender.parseValue("2.5", field: ["kind": "number"]) == .number(2.5))
        #expect(CtxuiRender.parseValue("abc", field: ["kind": "number"]) == .string("abc"))
        #expect(CtxuiRender.parseValue("", field: ["kind": "number"]) == nil)
        #expect(CtxuiRender.parseValue("yes", field: ["kind": "toggle"]) == .bool(true))
        #expect(CtxuiRender.parseValue("48.85, 2.29", field: ["kind": "location"]) == ["latitude": 48.85, "longitude": 2.29])
        #expect(CtxuiRender.parseValue(" 2026-01-02 ", field: ["kind": "date"]) == .string("2026-01-02"))
    }

    @Test("the picker greys unavailable and full providers with the reason")
    func providers() {
        let unavailable: JSONValue = ["id": "a", "title": "Health", "available": false, "status": "loaded",
                                      "unavailableReason": ["code": "permission", "message": "needs health"]]
        #expect(CtxuiRender.providerLine(unavailable) == ("Health", false, "unavailable: needs health"))
        let full: JSONValue = ["id": "b", "title": "Note", "available": true, "canAttach": false,
                               "attachBlocked": ["code": -32030, "message": "5 notes already"]]
        #expect(CtxuiRender.providerLine(full) == ("Note", false, "5 notes already"))
        #expect(CtxuiRender.providerLine(["id": "c", "title": "Quote", "available": true, "canAttach": true]) == ("Quote", true, nil))
    }

    @Test("pretty JSON keeps member order and parses back")
    func pretty() throws {
        let value: JSONValue = ["b": [1, "two"], "a": ["x": .null], "e": [], "s": "q\"uote\n"]
        let text = CtxuiRender.prettyJSON(value)
        #expect(text.hasPrefix("{\n  \"b\": [\n    1,\n    \"two\"\n  ],"))
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test("wrapping breaks at spaces and cuts long words")
    func wrapping() {
        #expect(CtxuiRender.wrap("one two three", width: 9) == ["one two", "three"])
        #expect(CtxuiRender.wrap("abcdefghijkl", width: 8) == ["abcdefgh", "ijkl"])
        #expect(CtxuiRender.wrap("a\n\nb", width: 10) == ["a", "", "b"])
    }
}
