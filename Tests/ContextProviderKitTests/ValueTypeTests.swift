import Testing

@testable import ContextProviderKit

/// Every value type converts to JSON and back unchanged, and bad input names its path.
@Suite("Value types")
struct ValueTypeTests {
    /// Converts through `json`, through bytes, and back.
    private func roundTrip<T: JSONConvertible & Equatable>(_ value: T) throws {
        #expect(try T(json: value.json) == value)
        #expect(try T(json: JSONValue(parsing: value.json.jsonBytes)) == value)
    }

    private func decodeError<T: JSONConvertible>(_ type: T.Type, _ text: String, path: String = "") -> String? {
        do {
            _ = try T(json: JSONValue(parsing: text), path: path)
            return nil
        } catch let error as JSONDecodeError {
            return error.description
        } catch {
            return "parse error: \(error)"
        }
    }

    static let item = ContextItem(
        id: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", providerId: "com.example.note", type: "note",
        displayName: "Groceries", content: ["title": "Groceries", "body": "- milk\n- eggs", "wordCount": 3],
        createdAt: "2025-01-31T09:30:00Z")

    @Test func itemRoundTrips() throws {
        try roundTrip(Self.item)
        try roundTrip(ContextItem(providerId: "p", type: "t", displayName: "d"))
        #expect(Self.item.json.jsonString.hasPrefix(#"{"id":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","providerId":"#))
    }

    @Test func itemDecodeErrorsNamePaths() {
        #expect(
            decodeError(ContextItem.self, #"{"id":"x","providerId":"p","type":"t","displayName":5}"#, path: "params.item")
                == "params.item.displayName: expected a string, got number")
        #expect(
            decodeError(ContextItem.self, #"{"id":"x","type":"t","displayName":"d"}"#, path: "params.item")
                == "params.item.providerId: missing; expected a string")
        #expect(decodeError(ContextItem.self, "[]") == "value: expected an object, got array")
        #expect(
            decodeError(ContextItem.self, #"{"id":"","providerId":"p","type":"t","displayName":"d"}"#)
                == "id: expected a non-empty string")
    }

    @Test func newUUIDsAreVersion4() {
        let id = ItemIdentity.newUUID()
        let bytes = Array(id.utf8)
        #expect(bytes.count == 36)
        #expect(bytes[14] == UInt8(ascii: "4"))
        #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(bytes[19]))
        #expect(id != ItemIdentity.newUUID())
        #expect(DateSyntax.isDateTime(ItemIdentity.nowRFC3339()))
    }

    @Test func chipRoundTripsAndDefaults() throws {
        let chip = ContextChip(
            icon: "chart", title: "AAPL", subtitle: "+1.2%", tone: .good, thumbnail: "data:image/png;base64,AAAA",
            accessory: .sparkline([1, 2.5, 3]), accessibilityLabel: "Apple up", fallbackText: "AAPL +1.2%")
        try roundTrip(chip)
        let plain = ContextChip(icon: "note.text", title: "Hi", subtitle: "2 words")
        #expect(plain.accessibilityLabel == "Hi, 2 words")
        #expect(plain.fallbackText == "Hi — 2 words")
        try roundTrip(plain)
        #expect(plain.json["ctxui"] == 1)
        #expect(plain.json["tone"] == "neutral")
        let fallback = ContextChip.default(for: Self.item, icon: "note.text")
        #expect(fallback.title == "Groceries" && fallback.icon == "note.text" && fallback.fallbackText == "Groceries")
    }

    @Test func chipDecodeErrors() {
        #expect(
            decodeError(ContextChip.self, #"{"ctxui":1,"icon":"i","title":"t","tone":"red","fallbackText":"f"}"#)
                == #"tone: expected one of neutral, good, warning, attention, got "red""#)
        #expect(
            decodeError(ContextChip.self, #"{"ctxui":2,"icon":"i","title":"t","fallbackText":"f"}"#)
                == "ctxui: unsupported ctxui version 2; this SDK reads 1")
        #expect(
            decodeError(ContextChip.self, #"{"icon":"i","title":"t","fallbackText":"f","accessory":{"kind":"sparkline","values":[1,"x"]}}"#)
                == "accessory.values[1]: expected a number, got string")
    }

    static let detail = ContextDetail(
        title: "Report",
        blocks: [
            .text("# Hello", style: .markdown),
            .text("plain", fallback: "plain text"),
            .facts([Fact(label: "Words", value: "3"), Fact(label: "Status", value: "Late", tone: .attention)]),
            .chart(
                ChartBlock(
                    kind: .line, unit: "USD",
                    series: [ChartSeries(name: "Close", points: [ChartPoint(x: "2025-01-01", y: 1.5), ChartPoint(x: "2025-01-02", y: 2)])],
                    thresholds: [ChartThreshold(label: "Goal", value: 2, tone: .good)])),
            .chart(ChartBlock(kind: .sparkline, series: [ChartSeries(name: "s", points: [])])),
            .map(
                MapBlock(
                    center: Coordinate(latitude: 48.8566, longitude: 2.3522), zoom: 11,
                    markers: [MapMarker(latitude: 48.8566, longitude: 2.3522, title: "Paris")])),
            .list(["a", "b"], ordered: true),
            .image(ImageBlock(dataURI: "data:image/png;base64,AAAA", alt: "A dot")),
            .link(url: "https://example.com", title: "Example", fallback: "example.com"),
        ])

    @Test func detailRoundTrips() throws {
        try roundTrip(Self.detail)
        #expect(Self.detail.json["blocks"]?.arrayValue?.count == 9)
        if case .map(let map) = Self.detail.blocks[5] { #expect(map.link == "geo:48.8566,2.3522") }
        #expect(Self.detail.fallbackText.hasPrefix("Report\n\n# Hello\n\nplain text\n\nWords: 3\nStatus: Late"))
        try roundTrip(ContextDetail.default(for: Self.item))
    }

    @Test func detailDecodeErrors() {
        #expect(
            decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f","blocks":[{"type":"text","text":"x"},{"type":"facts","facts":[{"label":"a","value":1}]}]}"#)
                == "blocks[1].facts[0].value: expected a string, got number")
        #expect(
            decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f","blocks":[{"type":"video"}]}"#)
                == #"blocks[0].type: expected one of text, facts, chart, map, list, image, link, got "video""#)
        #expect(
            decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f","blocks":[{"type":"map","center":{"latitude":91,"longitude":0},"markers":[]}]}"#)
                == "blocks[0].center.latitude: expected a number from -90 to 90, got 91")
        #expect(
            decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f","blocks":[{"type":"text","text":"x","style":"loud"}]}"#)
                == #"blocks[0].style: expected one of body, markdown, heading, caption, monospace, got "loud""#)
        #expect(decodeError(ContextDetail.self, #"{"title":"t","fallbackText":"f"}"#) == "blocks: missing; expected an array")
    }

    static let form = ContextForm(
        stepId: "main", title: "Everything", submitLabel: "Go",
        fields: [
            .text(id: "title", label: "Title", required: true, minLength: 2, maxLength: 10, pattern: "[A-Z].*", placeholder: "T", help: "Start with a capital", defaultValue: "Hi"),
            .text(id: "body", label: "Body", multiline: true),
            .number(id: "qty", label: "Quantity", min: 1, max: 10, step: 0.5, unit: "kg", defaultValue: 2),
            .field(.date, id: "day", label: "Day"),
            .field(.datetime, id: "at", label: "At"),
            .choice(id: "color", label: "Color", options: [FormOption(value: "r", label: "Red"), FormOption(value: "g", label: "Green", detail: "#0f0")]),
            .choice(id: "city", label: "City", search: ChoiceSearch(minQueryLength: 2)),
            .toggle(id: "agree", label: "Agree", required: true, defaultValue: false),
            .field(.location, id: "place", label: "Place", defaultValue: ["latitude": 1, "longitude": 2]),
            FormField(id: "x", kind: .text, label: "X", fallback: "Type X"),
        ])

    @Test func formRoundTrips() throws {
        try roundTrip(Self.form)
        let json = Self.form.json
        #expect(json["ctxui"] == 1)
        #expect(json["fields"]?.arrayValue?[0]["required"] == true)
        #expect(json["fields"]?.arrayValue?[1]["required"] == nil)
        #expect(json["fields"]?.arrayValue?[0]["default"] == "Hi")
        #expect(Self.form.field("qty")?.unit == "kg")
        #expect(ContextForm(stepId: "s", title: "Note", fields: [.text(id: "a", label: "A", required: true)]).fallbackText == "Note: A (required)")
    }

    @Test func formDecodeErrors() {
        #expect(
            decodeError(ContextForm.self, #"{"stepId":"s","title":"t","fallbackText":"f","fields":[{"id":"a","kind":"slider","label":"A"}]}"#)
                == #"fields[0].kind: expected one of text, number, date, datetime, choice, toggle, location, got "slider""#)
        #expect(
            decodeError(ContextForm.self, #"{"stepId":"s","title":"t","fallbackText":"f","fields":[{"id":"a","kind":"text","label":"A","maxLength":1.5}]}"#)
                == "fields[0].maxLength: expected an integer, got 1.5")
        #expect(
            decodeError(ContextForm.self, #"{"stepId":"s","title":"t","fallbackText":"f","fields":[{"id":"a","kind":"text","label":"A","minLength":-1}]}"#)
                == "fields[0].minLength: expected a non-negative integer, got -1")
    }

    @Test func outcomesRoundTrip() throws {
        try roundTrip(SubmitOutcome.item(Self.item))
        try roundTrip(SubmitOutcome.step(Self.form))
        try roundTrip(SubmitOutcome.invalid(fieldErrors: ["b": "B is required.", "a": "A is required."], formError: "Fix the fields."))
        try roundTrip(SubmitOutcome.invalid(fieldErrors: [:]))
        #expect(
            SubmitOutcome.invalid(fieldErrors: ["b": "B.", "a": "A."]).json.jsonString
                == #"{"outcome":"invalid","fieldErrors":{"a":"A.","b":"B."}}"#)
        #expect(decodeError(SubmitOutcome.self, #"{"outcome":"maybe"}"#) == #"outcome: expected one of item, step, invalid, got "maybe""#)
    }

    @Test func encodedItemRoundTrips() throws {
        let encoded = EncodedItem.json(["a": 1], metadata: ["k": "v", "a": "b"])
        try roundTrip(encoded)
        #expect(encoded.json["data"] == .string(Base64.encode(Array(#"{"a":1}"#.utf8))))
        #expect(encoded.json["metadata"]?.objectValue?.keys == ["a", "k"])
        try roundTrip(EncodedItem.text("héllo"))
        try roundTrip(EncodedItem(representation: .binary, contentType: "application/octet-stream", data: [0, 255, 7]))
        #expect(
            decodeError(EncodedItem.self, #"{"representation":"json","contentType":"x","data":"%%%%"}"#)
                == "data: expected Base64 text")
    }

    @Test func base64() {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        let all = (0...255).map(UInt8.init)
        #expect(Base64.decode(Base64.encode(all)) == all)
        #expect(Base64.decode("Zm9") == nil)
        #expect(Base64.decode("Z===") == nil)
        #expect(Base64.decode("Zg==Zg==") == nil)
        #expect(Base64.decode("Zm!v") == nil)
        // Padding only at the end of the last quantum, and never a digit after it.
        for bad in ["Zg=a", "Z=g=", "=Zg=", "Zm9v=Zg=", "Zm9vZg=\u{0}", "Zm9v====", "Zm9vYmFy\u{FF}Zm9", "Zm8=Zm8="] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        // Every length around the 8-character blocks, and every byte value in every position.
        for count in 0..<70 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ count) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes, "\(count) bytes")
        }
    }

    @Test func availabilityMetadataAndContext() throws {
        try roundTrip(Availability.available)
        try roundTrip(Availability.unavailable("No data folder"))
        let metadata = ProviderMetadata(id: "a.b", title: "T", version: "1.0.0", iconName: "i")
        try roundTrip(metadata)
        #expect(metadata.json["ctxui"] == 1)

        let context = try ProviderContext(
            json: JSONValue(parsing: #"{"ctxpVersion":1,"providerId":"a.b","hostVersion":"0.1.0","locale":"fr-FR","settings":{"dir":"~/x","n":3,"flag":true,"list":["a","b"]},"grantedPermissions":["network"]}"#))
        #expect(context.providerId == "a.b" && context.locale == "fr-FR" && context.hostVersion == "0.1.0")
        #expect(context.settings.int("n") == 3 && context.settings.bool("flag") == true)
        #expect(context.settings.strings("list") == ["a", "b"])
        #expect(context.settings.string("n") == nil)
        #expect(context.settings.path("dir")?.hasSuffix("/x") == true)
        #expect(context.settings.path("dir")?.hasPrefix("~") == false)
        #expect(context.isGranted("network") && !context.isGranted("location"))
        #expect(try ProviderContext(json: context.json) == context)
        #expect(throws: JSONDecodeError(path: "init.ctxpVersion", message: "unsupported version 2; this SDK speaks 1")) {
            try ProviderContext(json: ["ctxpVersion": 2, "providerId": "x"])
        }
        let item = context.makeItem(type: "t", displayName: "d", content: nil)
        #expect(item.providerId == "a.b" && item.createdAt != nil)
    }

    @Test func providerErrorMapping() {
        #expect(ProviderError.from(ProviderError(code: 7, message: "m")).code == 7)
        #expect(ProviderError.from(CancellationError()).code == -32800)
        #expect(ProviderError.from(JSONDecodeError(path: "params.x", message: "expected a string, got number")).message == "params.x: expected a string, got number")
        struct Odd: Error {}
        #expect(ProviderError.from(Odd()).code == -32603)
        #expect(ProviderError("bad", hint: "fix").json == ["code": -32603, "message": "bad", "data": ["hint": "fix"]])
    }
}
