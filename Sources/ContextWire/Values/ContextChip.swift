/// A small decoration drawn inside a chip.
public enum ChipAccessory: JSONConvertible, Hashable {
    /// A tiny line chart of these values, oldest first.
    case sparkline([Double])

    /// Converts the wire form `{"kind":"sparkline","values":[Number]}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        let kind = try reader.string("kind")
        switch kind {
        case "sparkline":
            self = .sparkline(
                try reader.array("values") { (value, valuePath) throws(JSONDecodeError) in
                    guard case .number(let number) = value else {
                        throw .typeMismatch(at: valuePath, expected: "a number", got: value)
                    }
                    return number
                })
        default:
            throw JSONDecodeError(path: reader.path("kind"), message: "expected one of sparkline, got \"\(kind)\"")
        }
    }

    /// The wire form.
    public var json: JSONValue {
        switch self {
        case .sparkline(let values):
            ["kind": "sparkline", "values": .array(values.map(JSONValue.number))]
        }
    }
}

/// The preview chip shown in the composer for an item (ctxui 1).
///
/// Wire form: `{"ctxui":1,"icon","title","subtitle"?,"tone","thumbnail"?,"accessory"?,
/// "accessibilityLabel","fallbackText"}`.
public struct ContextChip: JSONConvertible, Hashable {
    /// A symbol name, e.g. `note.text` (SF Symbols naming; clients map it).
    public var icon: String
    /// The main line.
    public var title: String
    /// A second, smaller line.
    public var subtitle: String?
    /// The visual tone.
    public var tone: Tone
    /// A small image as a `data:` URI.
    public var thumbnail: String?
    /// A decoration such as a sparkline.
    public var accessory: ChipAccessory?
    /// What a screen reader says.
    public var accessibilityLabel: String
    /// Plain text for clients that draw no chips.
    public var fallbackText: String

    /// Creates a chip. `accessibilityLabel` and `fallbackText` default to the title and subtitle
    /// joined with ", " / " — ".
    public init(
        icon: String, title: String, subtitle: String? = nil, tone: Tone = .neutral, thumbnail: String? = nil,
        accessory: ChipAccessory? = nil, accessibilityLabel: String? = nil, fallbackText: String? = nil
    ) {
        self.icon = icon
        self.title = title
        self.subtitle = subtitle
        self.tone = tone
        self.thumbnail = thumbnail
        self.accessory = accessory
        self.accessibilityLabel = accessibilityLabel ?? (subtitle.map { "\(title), \($0)" } ?? title)
        self.fallbackText = fallbackText ?? (subtitle.map { "\(title) — \($0)" } ?? title)
    }

    /// The chip a host shows when a provider gives none: the item's display name.
    public static func `default`(for item: ContextItem, icon: String) -> ContextChip {
        ContextChip(icon: icon, title: item.displayName)
    }

    /// Converts the wire form.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        try reader.checkCtxuiVersion()
        icon = try reader.string("icon")
        title = try reader.string("title")
        subtitle = try reader.optionalString("subtitle")
        tone = try reader.optionalEnum("tone", Tone.self) ?? .neutral
        thumbnail = try reader.optionalString("thumbnail")
        accessory = try reader.optionalDecode("accessory")
        accessibilityLabel = try reader.optionalString("accessibilityLabel") ?? title
        fallbackText = try reader.string("fallbackText")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["ctxui"] = .number(Double(ctxuiVersion))
        object["icon"] = .string(icon)
        object["title"] = .string(title)
        object.set("subtitle", subtitle)
        object["tone"] = .string(tone.rawValue)
        object.set("thumbnail", thumbnail)
        object.set("accessory", accessory)
        object["accessibilityLabel"] = .string(accessibilityLabel)
        object["fallbackText"] = .string(fallbackText)
        return .object(object)
    }
}
