/// What a client renders: `initialize` → `capabilities.ui` (docs/protocol.md). The host passes it
/// to providers in the init JSON (`"ui"`), and the SDK adapts details and chips to it
/// (`ContextDetail.adapted(to:)`, `ContextChip.adapted(to:)`).
///
/// `nil` members mean "everything": a client that says nothing gets every kind.
public struct UICapabilities: WireValue, Hashable {
    /// Detail block kinds the client renders (`text`, `facts`, `chart`, `map`, `list`, `image`,
    /// `link`); nil: all of them. Unknown names are kept but mean nothing.
    public var blocks: Set<String>?
    /// Chip accessory kinds the client renders (`sparkline`); nil: all of them.
    public var chipAccessories: Set<String>?

    /// At most this many names are read per list (a longer list is cut, not refused).
    public static let maximumNames = 64

    /// Capabilities; nil members mean "everything".
    public init(blocks: Set<String>? = nil, chipAccessories: Set<String>? = nil) {
        self.blocks = blocks
        self.chipAccessories = chipAccessories
    }

    /// A client that renders everything.
    public static let everything = UICapabilities()

    /// Whether detail blocks of kind `type` are rendered. `text` always is: it is every
    /// adaptation's last resort.
    public func rendersBlock(_ type: String) -> Bool {
        type == "text" || blocks?.contains(type) ?? true
    }

    /// Whether chip accessories of kind `kind` are rendered.
    public func rendersAccessory(_ kind: String) -> Bool {
        chipAccessories?.contains(kind) ?? true
    }

    /// Whether this limits anything at all.
    public var isEverything: Bool { blocks == nil && chipAccessories == nil }

    /// Converts `{"blocks"?: [String], "chipAccessories"?: [String]}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        blocks = try reader.optionalStrings("blocks").map { Set($0.prefix(Self.maximumNames)) }
        chipAccessories = try reader.optionalStrings("chipAccessories").map { Set($0.prefix(Self.maximumNames)) }
    }

    /// The wire form (sorted names; absent members for "everything").
    public var json: JSONValue {
        var object = JSONObject()
        if let blocks { object["blocks"] = .array(blocks.sorted().map(JSONValue.string)) }
        if let chipAccessories { object["chipAccessories"] = .array(chipAccessories.sorted().map(JSONValue.string)) }
        return .object(object)
    }

    public static var schema: JSONValue {
        Schema.object(
            [
                "blocks": Schema.array(Schema.string(), "Detail block kinds the client renders: text, facts, chart, map, list, image, link. Absent: all."),
                "chipAccessories": Schema.array(Schema.string(), "Chip accessory kinds the client renders: sparkline. Absent: all."),
            ], description: "What the client renders; providers replace what it does not.")
    }
}

extension ContextDetail {
    /// This detail with every block the client does not render replaced by the closest one it
    /// does: chart → facts (one per series, its latest value) or text; map → a `geo:` link and
    /// text (or text alone); image → text (its alt); list, facts, link → text. `text` is always rendered.
    /// `fallbackText` is kept as it was. A pure function: the SDK calls it on every detail.
    public func adapted(to ui: UICapabilities) -> ContextDetail {
        guard ui.blocks != nil, !blocks.allSatisfy({ ui.rendersBlock($0.typeName) }) else { return self }
        var copy = self
        copy.blocks = blocks.flatMap { $0.adapted(to: ui) }
        return copy
    }
}

extension DetailBlock {
    /// The block's `type` on the wire.
    public var typeName: String {
        switch self {
        case .text: "text"
        case .facts: "facts"
        case .chart: "chart"
        case .map: "map"
        case .list: "list"
        case .image: "image"
        case .link: "link"
        }
    }

    /// This block, or what stands in for it when the client does not render its kind (none or
    /// more blocks; see `ContextDetail.adapted(to:)`).
    public func adapted(to ui: UICapabilities) -> [DetailBlock] {
        if ui.rendersBlock(typeName) { return [self] }
        let text = DetailBlock.text(plainText)
        switch self {
        case .chart(let chart) where ui.rendersBlock("facts"):
            let facts = chart.series.compactMap { series -> Fact? in
                guard let last = series.points.last else { return nil }
                return Fact(label: series.name, value: "\(formatNumber(last.y))\(chart.unit.map { " \($0)" } ?? "") (\(last.x))")
            }
            return facts.isEmpty ? [text] : [.facts(facts, fallback: chart.fallback)]
        case .map(let map) where ui.rendersBlock("link"):
            let title = map.markers.first?.title ?? map.fallback ?? "Location"
            return [.link(url: map.center.geoURI, title: title, fallback: map.fallback), text]
        default:
            return [text]
        }
    }
}

extension ContextChip {
    /// This chip without an accessory the client does not render.
    public func adapted(to ui: UICapabilities) -> ContextChip {
        guard let accessory, !ui.rendersAccessory(accessory.kind) else { return self }
        var copy = self
        copy.accessory = nil
        return copy
    }
}

extension ChipAccessory {
    /// The accessory's `kind` on the wire.
    public var kind: String {
        switch self {
        case .sparkline: "sparkline"
        }
    }
}
