import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Note chip's thumbnail: a small SVG page with the title and the first words.
@Suite("Note provider: chip thumbnail")
struct NoteProviderTests {
    /// The SVG inside a chip's `data:image/svg+xml;base64,` thumbnail.
    private func thumbnailSVG(_ chip: JSONValue) throws -> String {
        let uri = try #require(chip["thumbnail"]?.stringValue)
        let prefix = "data:image/svg+xml;base64,"
        #expect(uri.hasPrefix(prefix))
        let bytes = try #require(Base64.decode(String(uri.dropFirst(prefix.count))))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text of each `<tspan>`, in order.
    private func lines(_ svg: String) -> [String] {
        svg.components(separatedBy: "<tspan").dropFirst().map { part in
            let afterTag = part.split(separator: ">", maxSplits: 1).last.map(String.init) ?? ""
            return afterTag.components(separatedBy: "</tspan>").first ?? ""
        }
    }

    private func chip(title: String, body: String) async throws -> JSONValue {
        let note = try ProviderHarness(product: "NoteProvider", providerID: "com.contexthost.note")
        let result = try await note.collect(steps: [["title": .string(title), "body": .string(body)]])
        return try await note.call("item/preview", ["item": result["item"] ?? .null])
    }

    @Test("title in bold, then the body's words without Markdown markers, wrapped into lines of 13")
    func wrapsWords() async throws {
        let chip = try await chip(title: "Groceries", body: "# Shopping\n\n- **milk**\n- eggs and `bread`\n> also coffee")
        let svg = try thumbnailSVG(chip)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</text></svg>"))
        #expect(lines(svg) == ["Groceries", "Shopping milk", "eggs and", "bread also", "coffee"])
        #expect(chip["title"] == "Groceries")
        #expect(chip["fallbackText"] == "Groceries (7 words)")
    }

    @Test("the chip's fallback text and accessibility label: title and word count, non-ASCII text, a title cut short")
    func chipTexts() async throws {
        let groceries = try await chip(title: "Groceries", body: "# Shopping\n\n- milk and eggs")
        #expect(groceries["fallbackText"] == "Groceries (4 words)")
        #expect(groceries["accessibilityLabel"] == "Note: Groceries, 4 words")
        let cafe = try await chip(title: "Caf\u{E9} \u{2615}\u{FE0F}", body: "R\u{E9}sum\u{E9}")
        #expect(cafe["fallbackText"] == "Caf\u{E9} \u{2615}\u{FE0F} (1 word)")
        #expect(cafe["accessibilityLabel"] == "Note: Caf\u{E9} \u{2615}\u{FE0F}, 1 word")
        // Over 60 characters: 59 and an ellipsis (three bytes of UTF-8), in the title and both texts.
        let long = try await chip(title: String(repeating: "\u{E9}t\u{E9} ", count: 20), body: "x")
        let cut = String(String(repeating: "\u{E9}t\u{E9} ", count: 20).prefix(59)).trimmingCharacters(in: .whitespaces) + "\u{2026}"
        #expect(long["title"]?.stringValue == cut)
        #expect(long["fallbackText"]?.stringValue == cut + " (1 word)")
        #expect(long["accessibilityLabel"]?.stringValue == "Note: " + cut + ", 1 word")
    }

    @Test("a long body fills five lines and ends with an ellipsis; a long word is cut")
    func truncates() async throws {
        let body = "Supercalifragilisticexpialidocious " + String(repeating: "word ", count: 200)
        let chip = try await chip(title: "A very long title that does not fit", body: body)
        let text = lines(try thumbnailSVG(chip))
        #expect(text.count == 6)
        #expect(text[0] == "A very long …")
        #expect(text[1] == "Supercalifra…")
        #expect(text[2] == "word word")
        #expect(text[5] == "word word …")
    }

    /// Tests/Fixtures/note/thumbnails.json: 54 notes (Markdown markers, words of exactly 12, 13
    /// and 14 characters, multi-byte and emoji text, escapes, blank bodies, long titles, random
    /// mixes) and the SVG drawn for each by the first, plain implementation, which the current
    /// one (fixed buffers, no allocation) must draw byte for byte.
    @Test("thumbnails of 54 varied notes are byte for byte the recorded ones")
    func recordedThumbnails() async throws {
        struct Case: Decodable { let title: String, body: String, svg: String }
        let path = BuildProducts.packageRoot + "/Tests/Fixtures/note/thumbnails.json"
        let cases = try JSONDecoder().decode([Case].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(cases.count == 54)
        let note = try ProviderHarness(product: "NoteProvider", providerID: "com.contexthost.note")
        for (index, recorded) in cases.enumerated() {
            let item: JSONValue = [
                "id": .string("00000000-0000-4000-8000-\(String(100_000_000_000 + index).suffix(12))"),
                "providerId": "com.contexthost.note", "type": "note", "displayName": "x",
                "content": ["title": .string(recorded.title), "body": .string(recorded.body)],
            ]
            let chip = try await note.call("item/preview", ["item": item])
            #expect(try thumbnailSVG(chip) == recorded.svg, "note \(index): \(recorded.title.debugDescription)")
        }
    }

    @Test("markup in the note is escaped; control characters are dropped (the SVG stays well-formed)")
    func escapes() async throws {
        let chip = try await chip(title: "<b>&\"x\"", body: "a<script>\u{1}b & c")
        let svg = try thumbnailSVG(chip)
        #expect(!svg.contains("<b>"))
        #expect(!svg.contains("<script>"))
        #expect(lines(svg) == ["&lt;b&gt;&amp;&quot;x&quot;", "a&lt;script&gt;b &amp;", "c"])
    }
}

/// `item/previewMany`, which `composer/list` uses: the SDK answers it for every Swift provider.
@Suite("SDK: item/previewMany (Note, Fixture)")
struct NotePreviewManyTests {
    @Test("one chip per item, in order, each the same as item/preview's; a bad item gets its own error")
    func matchesPreview() async throws {
        let note = try ProviderHarness(product: "NoteProvider", providerID: "com.contexthost.note")
        var items: [JSONValue] = []
        for (title, body) in [("Groceries", "milk, eggs"), ("Plan", "# Q4\n- ship"), ("Short", "ok")] {
            items.append(try #require(try await note.collect(steps: [["title": .string(title), "body": .string(body)]])["item"]))
        }
        var batch = items
        batch.insert(["id": "x", "providerId": "com.contexthost.note"], at: 1)  // no type, displayName, content
        let answer = try await note.call("item/previewMany", ["items": .array(batch)])
        let previews = try #require(answer["previews"]?.arrayValue)
        #expect(previews.count == 4)
        var expected: [JSONValue] = []
        for item in items { expected.append(["chip": try await note.call("item/preview", ["item": item])]) }
        #expect([previews[0], previews[2], previews[3]] == expected)
        #expect(previews[1]["error"]?["code"] == -32602)
        #expect(previews[1]["error"]?["message"]?.stringValue?.hasPrefix("params.items[1].") == true)
    }

    @Test("a provider whose previews are not declared immediate answers -32601 (the host previews each item)")
    func notImmediate() async throws {
        let fixture = try ProviderHarness(product: "FixtureProviders", providerID: "com.contexthost.fixture")
        let item: JSONValue = [
            "id": "00000000-0000-4000-8000-000000000001", "providerId": "com.contexthost.fixture", "type": "fixture",
            "displayName": "item", "content": [:],
        ]
        let error = await #expect(throws: ProviderHarness.CallError.self) {
            try await fixture.call("item/previewMany", ["items": [item, item]])
        }
        #expect(error?.code == -32601)
        #expect(try await fixture.call("item/preview", ["item": item])["title"] == "item")
    }

    @Test("params that are not a list of at most 256 items answer -32602 naming the member")
    func badParams() async throws {
        let note = try ProviderHarness(product: "NoteProvider", providerID: "com.contexthost.note")
        for (params, member) in [
            (JSONValue.object([:]), "params.items"), (["items": 42], "params.items"),
            (["items": .array(Array(repeating: .null, count: 257))], "params.items"),
        ] {
            let error = await #expect(throws: ProviderHarness.CallError.self) { try await note.call("item/previewMany", params) }
            #expect(error?.code == -32602)
            #expect(error?.message.hasPrefix(member) == true)
        }
        let empty = try await note.call("item/previewMany", ["items": []])
        #expect(empty == ["previews": []])
    }
}
