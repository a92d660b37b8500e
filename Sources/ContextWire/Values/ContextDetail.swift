/// The full-screen detail document for an item (ctxui 1).
///
/// Wire form: `{"ctxui":1,"title","fallbackText","blocks":[Block]}`.
public struct ContextDetail: JSONConvertible, Hashable {
    /// The document title.
    public var title: String
    /// Plain text for clients that render no blocks.
    public var fallbackText: String
    /// The content, top to bottom.
    public var blocks: [DetailBlock]

    /// Creates a detail document. `fallbackText` defaults to the title followed by each block's
    /// plain-text form.
    public init(title: String, blocks: [DetailBlock], fallbackText: String? = nil) {
        self.title = title
        self.blocks = blocks
        self.fallbackText = fallbackText ?? ([title] + blocks.map(\.plainText)).joined(separator: "\n\n")
    }

    /// The detail a provider shows when it defines none: the title and the display name.
    public static func `default`(for item: ContextItem) -> ContextDetail {
        ContextDetail(title: item.displayName, blocks: [.text(item.displayName)], fallbackText: item.displayName)
    }

    /// Converts the wire form.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        try reader.checkCtxuiVersion()
        title = try reader.string("title")
        fallbackText = try reader.string("fallbackText")
        blocks = try reader.decodeArray("blocks")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["ctxui"] = .number(Double(ctxuiVersion))
        object["title"] = .string(title)
        object["fallbackText"] = .string(fallbackText)
        object["blocks"] = .array(blocks.map(\.json))
        return .object(object)
    }
}

/// One block of a detail document. Every block may carry a plain-text `fallback`.
public enum DetailBlock: JSONConvertible, Hashable {
    /// A paragraph of text.
    case text(TextBlock)
    /// Label/value pairs.
    case facts(FactsBlock)
    /// A time-series chart.
    case chart(ChartBlock)
    /// A map with markers.
    case map(MapBlock)
    /// A bulleted or numbered list.
    case list(ListBlock)
    /// An inline image.
    case image(ImageBlock)
    /// A link.
    case link(LinkBlock)

    /// The block type names of ctxui 1.
    public static let typeNames = ["text", "facts", "chart", "map", "list", "image", "link"]

    /// A text block.
    public static func text(_ text: String, style: TextStyle? = nil, fallback: String? = nil) -> DetailBlock {
        .text(TextBlock(text: text, style: style, fallback: fallback))
    }

    /// A facts block.
    public static func facts(_ facts: [Fact], fallback: String? = nil) -> DetailBlock {
        .facts(FactsBlock(facts: facts, fallback: fallback))
    }

    /// A list block.
    public static func list(_ items: [String], ordered: Bool? = nil, fallback: String? = nil) -> DetailBlock {
        .list(ListBlock(items: items, ordered: ordered, fallback: fallback))
    }

    /// A link block.
    public static func link(url: String, title: String, fallback: String? = nil) -> DetailBlock {
        .link(LinkBlock(url: url, title: title, fallback: fallback))
    }

    /// The block's `fallback`, or a plain-text rendering of it.
    public var plainText: String {
        switch self {
        case .text(let block): block.fallback ?? block.text
        case .facts(let block): block.fallback ?? block.facts.map { "\($0.label): \($0.value)" }.joined(separator: "\n")
        case .chart(let block):
            block.fallback
                ?? block.series.map { series in
                    let last = series.points.last.map { " (latest \($0.x): \(formatNumber($0.y))\(block.unit.map { " \($0)" } ?? ""))" } ?? ""
                    return "\(series.name)\(last)"
                }.joined(separator: "\n")
        case .map(let block): block.fallback ?? block.link
        case .list(let block):
            block.fallback
                ?? block.items.enumerated().map { (block.ordered == true ? "\($0.offset + 1). " : "- ") + $0.element }
                .joined(separator: "\n")
        case .image(let block): block.fallback ?? "[Image: \(block.alt)]"
        case .link(let block): block.fallback ?? "\(block.title): \(block.url)"
        }
    }

    /// Converts the wire form; `type` selects the case.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        let type = try reader.string("type")
        switch type {
        case "text": self = .text(try TextBlock(reader))
        case "facts": self = .facts(try FactsBlock(reader))
        case "chart": self = .chart(try ChartBlock(reader))
        case "map": self = .map(try MapBlock(reader))
        case "list": self = .list(try ListBlock(reader))
        case "image": self = .image(try ImageBlock(reader))
        case "link": self = .link(try LinkBlock(reader))
        default:
            throw JSONDecodeError(
                path: reader.path("type"),
                message: "expected one of \(Self.typeNames.joined(separator: ", ")), got \"\(type)\"")
        }
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        switch self {
        case .text(let block):
            object["type"] = "text"
            object["text"] = .string(block.text)
            object.set("style", block.style?.rawValue)
            object.set("fallback", block.fallback)
        case .facts(let block):
            object["type"] = "facts"
            object["facts"] = .array(block.facts.map(\.json))
            object.set("fallback", block.fallback)
        case .chart(let block):
            object["type"] = "chart"
            object["kind"] = .string(block.kind.rawValue)
            object.set("unit", block.unit)
            object["series"] = .array(block.series.map(\.json))
            if !block.thresholds.isEmpty { object["thresholds"] = .array(block.thresholds.map(\.json)) }
            object.set("fallback", block.fallback)
        case .map(let block):
            object["type"] = "map"
            object["center"] = block.center.json
            object.set("zoom", block.zoom)
            object["markers"] = .array(block.markers.map(\.json))
            object["link"] = .string(block.link)
            object.set("fallback", block.fallback)
        case .list(let block):
            object["type"] = "list"
            object["items"] = .array(block.items.map(JSONValue.string))
            object.set("ordered", block.ordered)
            object.set("fallback", block.fallback)
        case .image(let block):
            object["type"] = "image"
            object["dataURI"] = .string(block.dataURI)
            object["alt"] = .string(block.alt)
            object.set("fallback", block.fallback)
        case .link(let block):
            object["type"] = "link"
            object["url"] = .string(block.url)
            object["title"] = .string(block.title)
            object.set("fallback", block.fallback)
        }
        return .object(object)
    }
}

/// How a text block is styled.
public enum TextStyle: String, Sendable, Hashable, CaseIterable {
    /// Ordinary paragraph text (the default).
    case body
    /// CommonMark Markdown, rendered by the client.
    case markdown
    /// A section heading.
    case heading
    /// Small secondary text.
    case caption
    /// Fixed-width text.
    case monospace
}

/// `{"type":"text","text","style"?}`.
public struct TextBlock: Sendable, Hashable {
    /// The text.
    public var text: String
    /// How to style it; `nil` means body.
    public var style: TextStyle?
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a text block.
    public init(text: String, style: TextStyle? = nil, fallback: String? = nil) {
        self.text = text
        self.style = style
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        text = try reader.string("text")
        style = try reader.optionalEnum("style")
        fallback = try reader.optionalString("fallback")
    }
}

/// One label/value pair.
public struct Fact: JSONConvertible, Hashable {
    /// The label, e.g. `Words`.
    public var label: String
    /// The value, already formatted, e.g. `1,204`.
    public var value: String
    /// An optional tone for the value.
    public var tone: Tone?

    /// Creates a fact.
    public init(label: String, value: String, tone: Tone? = nil) {
        self.label = label
        self.value = value
        self.tone = tone
    }

    /// Converts `{"label","value","tone"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        label = try reader.string("label")
        value = try reader.string("value")
        tone = try reader.optionalEnum("tone")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["label"] = .string(label)
        object["value"] = .string(value)
        object.set("tone", tone?.rawValue)
        return .object(object)
    }
}

/// `{"type":"facts","facts":[Fact]}`.
public struct FactsBlock: Sendable, Hashable {
    /// The facts, in order.
    public var facts: [Fact]
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a facts block.
    public init(facts: [Fact], fallback: String? = nil) {
        self.facts = facts
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        facts = try reader.decodeArray("facts")
        fallback = try reader.optionalString("fallback")
    }
}

/// The kind of chart.
public enum ChartKind: String, Sendable, Hashable, CaseIterable {
    /// A line chart.
    case line
    /// A bar chart.
    case bar
    /// A small line chart without axes.
    case sparkline
}

/// One point of a series: `x` is a label or timestamp, `y` the value.
public struct ChartPoint: JSONConvertible, Hashable {
    /// The x value (a date, timestamp or category).
    public var x: String
    /// The y value.
    public var y: Double

    /// Creates a point.
    public init(x: String, y: Double) {
        self.x = x
        self.y = y
    }

    /// Converts `{"x":String,"y":Number}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        x = try reader.string("x")
        y = try reader.double("y")
    }

    /// The wire form.
    public var json: JSONValue { ["x": .string(x), "y": .number(y)] }
}

/// A named series of points.
public struct ChartSeries: JSONConvertible, Hashable {
    /// The series name, e.g. `Close`.
    public var name: String
    /// The points, in x order.
    public var points: [ChartPoint]

    /// Creates a series.
    public init(name: String, points: [ChartPoint]) {
        self.name = name
        self.points = points
    }

    /// Converts `{"name","points":[Point]}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        name = try reader.string("name")
        points = try reader.decodeArray("points")
    }

    /// The wire form.
    public var json: JSONValue { ["name": .string(name), "points": .array(points.map(\.json))] }
}

/// A horizontal reference line on a chart, e.g. a goal.
public struct ChartThreshold: JSONConvertible, Hashable {
    /// The label, e.g. `Goal`.
    public var label: String
    /// The y value.
    public var value: Double
    /// An optional tone.
    public var tone: Tone?

    /// Creates a threshold.
    public init(label: String, value: Double, tone: Tone? = nil) {
        self.label = label
        self.value = value
        self.tone = tone
    }

    /// Converts `{"label","value","tone"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        label = try reader.string("label")
        value = try reader.double("value")
        tone = try reader.optionalEnum("tone")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["label"] = .string(label)
        object["value"] = .number(value)
        object.set("tone", tone?.rawValue)
        return .object(object)
    }
}

/// `{"type":"chart","kind","unit"?,"series","thresholds"?}`.
public struct ChartBlock: Sendable, Hashable {
    /// The kind of chart.
    public var kind: ChartKind
    /// The unit of y values, e.g. `USD` or `bpm`.
    public var unit: String?
    /// One or more series.
    public var series: [ChartSeries]
    /// Reference lines (omitted from the wire form when empty).
    public var thresholds: [ChartThreshold]
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a chart block.
    public init(
        kind: ChartKind, unit: String? = nil, series: [ChartSeries], thresholds: [ChartThreshold] = [],
        fallback: String? = nil
    ) {
        self.kind = kind
        self.unit = unit
        self.series = series
        self.thresholds = thresholds
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        kind = try reader.enum("kind")
        unit = try reader.optionalString("unit")
        series = try reader.decodeArray("series")
        thresholds = try reader.optionalDecodeArray("thresholds") ?? []
        fallback = try reader.optionalString("fallback")
    }
}

/// A latitude/longitude pair in degrees (WGS 84).
public struct Coordinate: JSONConvertible, Hashable {
    /// Degrees north, -90…90.
    public var latitude: Double
    /// Degrees east, -180…180.
    public var longitude: Double

    /// Creates a coordinate.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Converts `{"latitude","longitude"}`, checking the ranges.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        latitude = try reader.double("latitude")
        longitude = try reader.double("longitude")
        guard (-90...90).contains(latitude) else {
            throw JSONDecodeError(path: reader.path("latitude"), message: "expected a number from -90 to 90, got \(formatNumber(latitude))")
        }
        guard (-180...180).contains(longitude) else {
            throw JSONDecodeError(path: reader.path("longitude"), message: "expected a number from -180 to 180, got \(formatNumber(longitude))")
        }
    }

    /// The wire form.
    public var json: JSONValue { ["latitude": .number(latitude), "longitude": .number(longitude)] }

    /// A `geo:` URI (RFC 5870) for this point.
    public var geoURI: String { "geo:\(formatNumber(latitude)),\(formatNumber(longitude))" }
}

/// A pin on a map.
public struct MapMarker: JSONConvertible, Hashable {
    /// Degrees north.
    public var latitude: Double
    /// Degrees east.
    public var longitude: Double
    /// An optional label.
    public var title: String?

    /// Creates a marker.
    public init(latitude: Double, longitude: Double, title: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.title = title
    }

    /// Converts `{"latitude","longitude","title"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        latitude = try reader.double("latitude")
        longitude = try reader.double("longitude")
        title = try reader.optionalString("title")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["latitude"] = .number(latitude)
        object["longitude"] = .number(longitude)
        object.set("title", title)
        return .object(object)
    }
}

/// `{"type":"map","center","zoom"?,"markers","link"}`.
public struct MapBlock: Sendable, Hashable {
    /// The map center.
    public var center: Coordinate
    /// A zoom level (0 = world, about 20 = building).
    public var zoom: Double?
    /// Pins.
    public var markers: [MapMarker]
    /// A `geo:` URI that plain clients can open.
    public var link: String
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a map block; `link` defaults to the center's `geo:` URI.
    public init(
        center: Coordinate, zoom: Double? = nil, markers: [MapMarker] = [], link: String? = nil,
        fallback: String? = nil
    ) {
        self.center = center
        self.zoom = zoom
        self.markers = markers
        self.link = link ?? center.geoURI
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        center = try reader.decode("center")
        zoom = try reader.optionalDouble("zoom")
        markers = try reader.optionalDecodeArray("markers") ?? []
        link = try reader.optionalString("link") ?? center.geoURI
        fallback = try reader.optionalString("fallback")
    }
}

/// `{"type":"list","items":[String],"ordered"?}`.
public struct ListBlock: Sendable, Hashable {
    /// The entries.
    public var items: [String]
    /// Whether the list is numbered.
    public var ordered: Bool?
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a list block.
    public init(items: [String], ordered: Bool? = nil, fallback: String? = nil) {
        self.items = items
        self.ordered = ordered
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        items = try reader.strings("items")
        ordered = try reader.optionalBool("ordered")
        fallback = try reader.optionalString("fallback")
    }
}

/// `{"type":"image","dataURI","alt"}`.
public struct ImageBlock: Sendable, Hashable {
    /// The image as a `data:` URI.
    public var dataURI: String
    /// A text description of the image.
    public var alt: String
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates an image block.
    public init(dataURI: String, alt: String, fallback: String? = nil) {
        self.dataURI = dataURI
        self.alt = alt
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        dataURI = try reader.string("dataURI")
        alt = try reader.string("alt")
        fallback = try reader.optionalString("fallback")
    }
}

/// `{"type":"link","url","title"}`.
public struct LinkBlock: Sendable, Hashable {
    /// The target URL.
    public var url: String
    /// The link text.
    public var title: String
    /// Plain-text stand-in.
    public var fallback: String?

    /// Creates a link block.
    public init(url: String, title: String, fallback: String? = nil) {
        self.url = url
        self.title = title
        self.fallback = fallback
    }

    package init(_ reader: JSONObjectReader) throws(JSONDecodeError) {
        url = try reader.string("url")
        title = try reader.string("title")
        fallback = try reader.optionalString("fallback")
    }
}

/// Formats a number the way JSON prints it: integers without a fraction.
package func formatNumber(_ value: Double) -> String {
    if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
}
