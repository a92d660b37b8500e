import ContextProviderKit
import ContextProtocol
import Testing

/// `ContextDetail.adapted(to:)`, `ContextChip.adapted(to:)` and the version 2 wire types.
@Suite("UI capabilities and protocol version 2 values")
struct UICapabilitiesTests {
    static let chart = DetailBlock.chart(ChartBlock(
        kind: .line, unit: "bpm",
        series: [ChartSeries(name: "Heart rate", points: [ChartPoint(x: "2024-01-01", y: 60), ChartPoint(x: "2024-01-02", y: 62.5)])]))
    static let map = DetailBlock.map(MapBlock(
        center: Coordinate(latitude: 52.52, longitude: 13.405), markers: [MapMarker(latitude: 52.52, longitude: 13.405, title: "Berlin")],
        link: "geo:52.52,13.405"))
    static let detail = ContextDetail(
        title: "All", blocks: [.text("Intro"), chart, map, .list(["a", "b"]), .facts([Fact(label: "A", value: "1")]),
            .image(ImageBlock(dataURI: "data:image/png;base64,AA==", alt: "A dot")), .link(url: "https://example.com", title: "Site")])

    @Test("everything: the detail is unchanged")
    func everything() {
        #expect(Self.detail.adapted(to: .everything) == Self.detail)
        #expect(Self.detail.adapted(to: UICapabilities(blocks: Set(DetailBlock.typeNames))) == Self.detail)
    }

    @Test("text and facts: chart → facts, map → text, others → text; fallbackText kept")
    func textAndFacts() {
        let adapted = Self.detail.adapted(to: UICapabilities(blocks: ["text", "facts"]))
        #expect(adapted.blocks.map(\.typeName) == ["text", "facts", "text", "text", "facts", "text", "text"])
        guard case .facts(let facts) = adapted.blocks[1] else { Issue.record("chart not replaced by facts"); return }
        #expect(facts.facts == [Fact(label: "Heart rate", value: "62.5 bpm (2024-01-02)")])
        #expect(adapted.blocks[5].plainText == "[Image: A dot]")
        #expect(adapted.fallbackText == Self.detail.fallbackText)
        #expect(adapted.title == "All")
    }

    @Test("text and link: map → geo: link and text; chart → text")
    func textAndLink() {
        let adapted = Self.detail.adapted(to: UICapabilities(blocks: ["link"]))
        #expect(adapted.blocks.map(\.typeName) == ["text", "text", "link", "text", "text", "text", "text", "link"])
        guard case .link(let link) = adapted.blocks[2] else { Issue.record("map not replaced by a link"); return }
        #expect(link.url == "geo:52.52,13.405")
        #expect(link.title == "Berlin")
    }

    @Test("text only, even when the client lists no kind at all")
    func textOnly() {
        let adapted = Self.detail.adapted(to: UICapabilities(blocks: []))
        #expect(adapted.blocks.allSatisfy { $0.typeName == "text" })
        #expect(adapted.blocks.count == Self.detail.blocks.count)
    }

    @Test("a chip accessory the client does not render is dropped")
    func chipAccessory() {
        let chip = ContextChip(icon: "heart", title: "60 bpm", accessory: .sparkline([1, 2, 3]))
        #expect(chip.adapted(to: .everything) == chip)
        #expect(chip.adapted(to: UICapabilities(chipAccessories: ["sparkline"])) == chip)
        #expect(chip.adapted(to: UICapabilities(chipAccessories: [])).accessory == nil)
        #expect(chip.adapted(to: UICapabilities(blocks: ["text"])).accessory != nil)
    }

    @Test("UICapabilities wire form; absent members mean everything")
    func wireForm() throws {
        let ui = try UICapabilities(json: ["blocks": ["text", "facts"]])
        #expect(ui.blocks == ["text", "facts"] && ui.chipAccessories == nil)
        #expect(ui.json == ["blocks": ["facts", "text"]])
        #expect(try UICapabilities(json: [:]).isEverything)
        #expect(throws: JSONDecodeError.self) { try UICapabilities(json: ["blocks": "text"]) }
        let context = try ProviderContext(json: ["providerId": "x", "ui": ["chipAccessories": []]])
        #expect(context.ui.chipAccessories == [])
        #expect(try ProviderContext(json: context.json) == context)
    }

    @Test("version negotiation picks the highest common version")
    func negotiation() {
        #expect(ProtocolVersion.negotiate([1, 2]) == 2)
        #expect(ProtocolVersion.negotiate([2]) == 2)
        #expect(ProtocolVersion.negotiate([1]) == 1)
        #expect(ProtocolVersion.negotiate([3, 7]) == nil)
        #expect(ProtocolVersion.current == ProtocolVersion.supported.max())
    }

    @Test("provider progress must be finite, non-negative and within its total")
    func providerProgressValidation() throws {
        #expect(try ProviderProgressNotification(json: ["done": 5, "total": 10]).done == 5)
        for bad: JSONValue in [["done": -1], ["done": 11, "total": 10], ["done": "x"], ["total": 3], ["done": 1, "total": -1]] {
            #expect(throws: JSONDecodeError.self) { try ProviderProgressNotification(json: bad) }
        }
        #expect(throws: JSONDecodeError.self) { try ProviderLogNotification(json: ["level": "off", "message": "x"]) }
        #expect(try SetLogLevelRequest(json: ["level": "info"]).level == .info)
    }
}
