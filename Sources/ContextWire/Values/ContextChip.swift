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

    /// Reads a chip straight from its JSON text, without building the tree (an embedded host's
    /// typed `items/preview` answer), as `init(json:)` would read it. Nil for text it does not
    /// vouch for — a member of an unexpected type, a `ctxui` other than 1, anything after the
    /// object — and the caller decodes the tree, which also names what is wrong.
    package init?(text: UnsafeRawBufferPointer) {
        var reader = JSONReader(text)
        reader.checksSurrogates = true  // skipped members: refuse what parsing the tree refuses
        var icon: String?, title: String?, subtitle: String?, tone = Tone.neutral, thumbnail: String?
        var accessory: ChipAccessory?, accessibilityLabel: String?, fallbackText: String?
        var unusual = false
        /// An optional string member: `null` reads as absent.
        func optionalString(_ reader: inout JSONReader) throws(JSONParseError) -> String? {
            if !reader.atEnd, reader.current == UInt8(ascii: "n") {
                _ = try reader.readValue()
                return nil
            }
            let string = try reader.readIfString()
            if string == nil { unusual = true }
            return string
        }
        do throws(JSONParseError) {
            reader.skipWhitespace()
            try reader.readMembers { key, reader throws(JSONParseError) in
                switch key {
                case "ctxui":
                    if case .number(let version) = try reader.readValue(), version == Double(ctxuiVersion) { break }
                    unusual = true
                case "icon": icon = try reader.readIfString()
                case "title": title = try reader.readIfString()
                case "fallbackText": fallbackText = try reader.readIfString()
                case "subtitle": subtitle = try optionalString(&reader)
                case "thumbnail": thumbnail = try optionalString(&reader)
                case "accessibilityLabel": accessibilityLabel = try optionalString(&reader)
                case "tone":
                    if let name = try optionalString(&reader) {
                        if let known = Tone(rawValue: name) { tone = known } else { unusual = true }
                    } else {
                        tone = .neutral
                    }
                case "accessory":
                    let value = try reader.readValue()
                    if value.isNull {
                        accessory = nil
                    } else if let decoded = try? ChipAccessory(json: value, path: "accessory") {
                        accessory = decoded
                    } else {
                        unusual = true
                    }
                default: try reader.skipValue()
                }
            }
            reader.skipWhitespace()
        } catch {
            return nil
        }
        guard !unusual, reader.position == text.count, let icon, let title, let fallbackText else { return nil }
        // Both texts passed: the init writes its derived defaults (by interpolation) only for nil.
        self.init(
            icon: icon, title: title, subtitle: subtitle, tone: tone, thumbnail: thumbnail, accessory: accessory,
            accessibilityLabel: accessibilityLabel ?? title, fallbackText: fallbackText)
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
