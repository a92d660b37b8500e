import ContextProviderKit

/// Pure text renderers for ctxui v1 values (chips, details, forms) and the other things a
/// terminal client shows. Every function returns lines no wider than `width` display columns
/// (best effort: each `Character` counts as one column) and uses ANSI colour only when `color`
/// is true, so `NO_COLOR` and pipes get plain text.
///
/// These are the reference renderer: every node type is drawn, unknown ones through their
/// `fallback` / `fallbackText`.
public enum CtxuiRender {
    // MARK: Styles

    /// ANSI styles used by the renderer.
    public enum Style: String, Sendable {
        case bold = "1", dim = "2", underline = "4", reverse = "7"
        case green = "32", yellow = "33", red = "31", cyan = "36", blue = "34"
    }

    /// `text` wrapped in `styles` when `color` is on.
    public static func styled(_ text: String, _ styles: [Style], color: Bool) -> String {
        guard color, !styles.isEmpty, !text.isEmpty else { return text }
        return "\u{1B}[" + styles.map(\.rawValue).joined(separator: ";") + "m" + text + "\u{1B}[0m"
    }

    /// The colour of a ctxui `tone` (`neutral` has none).
    public static func toneStyles(_ tone: String?) -> [Style] {
        switch tone {
        case "good": [.green]
        case "warning": [.yellow]
        case "attention": [.red, .bold]
        default: []
        }
    }

    /// A one-column glyph for a symbol name (SF Symbols naming), for terminals without icons.
    public static func glyph(forIcon icon: String?) -> String {
        guard let icon else { return "•" }
        let table: [(String, String)] = [
            ("note", "✎"), ("text", "✎"), ("doc", "✎"), ("location", "⌖"), ("map", "⌖"), ("mappin", "⌖"),
            ("calendar", "▦"), ("clock", "◷"), ("chart", "↗"), ("dollar", "$"), ("heart", "♥"),
            ("waveform", "♥"), ("figure", "♥"), ("bed", "☾"), ("flame", "♨"), ("cpu", "▣"), ("desktop", "▣"), ("info", "ⓘ"),
        ]
        for (key, glyph) in table where icon.contains(key) { return glyph }
        return "•"
    }

    // MARK: Text helpers

    /// Wraps `text` (which may contain newlines) at `width` columns, breaking at spaces when it can.
    public static func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
        let width = max(width - indent.count, 8)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                var word = String(word)
                while word.count > width {  // a word longer than the line: cut it
                    if !line.isEmpty { lines.append(line); line = "" }
                    lines.append(String(word.prefix(width)))
                    word = String(word.dropFirst(width))
                }
                if line.isEmpty {
                    line = word
                } else if line.count + 1 + word.count <= width {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = word
                }
            }
            lines.append(line)
        }
        return lines.map { indent + $0 }
    }

    /// `text` cut to `width` columns with an ellipsis.
    public static func truncate(_ text: String, width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.prefix(max(width, 0))) }
        return String(text.prefix(width - 1)) + "…"
    }

    /// Numbers as people write them: `6`, `2.5`, `-0.125`.
    public static func formatNumber(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(value)
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    // MARK: Chips

    /// A chip as one line: `[✎ Groceries · 6 words ▁▃▆]`, coloured by its tone. A chip that is
    /// not a valid ctxui chip (no title) shows its `fallbackText`.
    public static func render(chip: JSONValue, width: Int, color: Bool) -> String {
        guard let title = chip["title"]?.stringValue else {
            let fallback = chip["fallbackText"]?.stringValue ?? chip["fallback"]?.stringValue ?? "(item)"
            return truncate("[" + fallback + "]", width: width)
        }
        var text = glyph(forIcon: chip["icon"]?.stringValue) + " " + title
        if let subtitle = chip["subtitle"]?.stringValue, !subtitle.isEmpty { text += " · " + subtitle }
        if let accessory = chip["accessory"], accessory["kind"]?.stringValue == "sparkline",
           let values = accessory["values"]?.arrayValue?.compactMap(\.numberValue), !values.isEmpty {
            text += " " + sparkline(values, width: 12)
        } else if let accessory = chip["accessory"], accessory["kind"]?.stringValue != "sparkline",
                  let fallback = accessory["fallback"]?.stringValue {
            text += " " + fallback
        }
        if chip["thumbnail"]?.stringValue != nil { text += " ▨" }
        let body = truncate(text, width: max(width - 2, 3))
        return styled("[", [], color: color) + styled(body, toneStyles(chip["tone"]?.stringValue), color: color) + "]"
    }

    /// Chips in a row, wrapped onto more lines when they do not fit; numbered when `numbered`.
    public static func render(chips: [JSONValue], width: Int, color: Bool, numbered: Bool = false) -> [String] {
        guard !chips.isEmpty else { return ["(nothing attached)"] }
        var lines: [String] = []
        var line = ""
        var lineWidth = 0
        for (index, chip) in chips.enumerated() {
            let prefix = numbered ? "\(index + 1)" : ""
            let cell = prefix + render(chip: chip, width: width - prefix.count, color: color)
            let cellWidth = visibleWidth(cell)
            if lineWidth > 0 && lineWidth + 1 + cellWidth > width {
                lines.append(line)
                line = ""
                lineWidth = 0
            }
            line += (lineWidth > 0 ? " " : "") + cell
            lineWidth += (lineWidth > 0 ? 1 : 0) + cellWidth
        }
        lines.append(line)
        return lines
    }

    /// Display width of a line without its ANSI escapes.
    public static func visibleWidth(_ text: String) -> Int { stripANSI(text).count }

    // MARK: Charts

    private static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// Values as a one-line sparkline of block characters, resampled to at most `width` columns.
    public static func sparkline(_ values: [Double], width: Int) -> String {
        let values = resample(values, to: max(width, 1))
        guard let low = values.min(), let high = values.max() else { return "" }
        return String(values.map { value in
            high == low ? levels[3] : levels[min(7, Int(((value - low) / (high - low) * 7).rounded()))]
        })
    }

    /// At most `count` values: averages of equal runs when there are more.
    static func resample(_ values: [Double], to count: Int) -> [Double] {
        guard values.count > count, count > 0 else { return values }
        return (0..<count).map { index in
            let start = index * values.count / count
            let end = max(start + 1, (index + 1) * values.count / count)
            let run = values[start..<end]
            return run.reduce(0, +) / Double(run.count)
        }
    }

    /// A chart block: bars as horizontal block bars with their labels and values; lines and
    /// sparklines as a column chart `height` rows tall with the range and the first and last x.
    public static func render(chart block: JSONValue, width: Int, color: Bool) -> [String] {
        let kind = block["kind"]?.stringValue ?? "line"
        let unit = block["unit"]?.stringValue.map { " " + $0 } ?? ""
        var lines: [String] = []
        let series = block["series"]?.arrayValue ?? []
        for entry in series {
            let name = entry["name"]?.stringValue ?? ""
            let points = (entry["points"]?.arrayValue ?? []).compactMap { point -> (String, Double)? in
                guard let y = point["y"]?.numberValue else { return nil }
                return (point["x"]?.stringValue ?? "", y)
            }
            if !name.isEmpty || series.count > 1 { lines.append(styled(name + (unit.isEmpty ? "" : " (\(unit.dropFirst()))"), [.bold], color: color)) }
            guard !points.isEmpty else { lines.append("  (no data)"); continue }
            if kind == "bar" {
                lines += bars(points, unit: unit, width: width)
            } else {
                lines += columns(points.map(\.1), height: kind == "sparkline" ? 1 : 6, width: width - 2).map { "  " + $0 }
                let low = points.map(\.1).min() ?? 0, high = points.map(\.1).max() ?? 0
                let range = "  min \(formatNumber(low))\(unit) · max \(formatNumber(high))\(unit) · last \(formatNumber(points.last!.1))\(unit)"
                lines.append(truncate(range, width: width))
                lines.append(truncate("  \(points.first!.0) → \(points.last!.0) (\(points.count) points)", width: width))
            }
        }
        for threshold in block["thresholds"]?.arrayValue ?? [] {
            let label = threshold["label"]?.stringValue ?? "threshold"
            let value = threshold["value"]?.numberValue.map(formatNumber) ?? "?"
            lines.append(styled(truncate("  ┄ \(label): \(value)\(unit)", width: width), toneStyles(threshold["tone"]?.stringValue), color: color))
        }
        return lines
    }

    /// Horizontal bars: `label ████▌ 12.5 unit`.
    static func bars(_ points: [(String, Double)], unit: String, width: Int) -> [String] {
        let labelWidth = min(points.map(\.0.count).max() ?? 0, max(width / 3, 4))
        let valueTexts = points.map { formatNumber($0.1) + unit }
        let valueWidth = valueTexts.map(\.count).max() ?? 0
        let barWidth = max(width - labelWidth - valueWidth - 6, 4)
        let high = max(points.map { abs($0.1) }.max() ?? 1, .leastNonzeroMagnitude)
        let eighths: [String] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return points.enumerated().map { index, point in
            let cells = abs(point.1) / high * Double(barWidth)
            let whole = Int(cells)
            let part = Int((cells - Double(whole)) * 8)
            var bar = String(repeating: "█", count: whole) + eighths[min(part, 7)]
            if bar.isEmpty { bar = "▏" }
            let label = truncate(point.0, width: labelWidth)
            return "  " + label + String(repeating: " ", count: labelWidth - label.count) + " " + bar
                + String(repeating: " ", count: max(barWidth + 1 - bar.count, 1)) + valueTexts[index]
        }
    }

    /// A column chart of block characters, `height` rows, values resampled to `width` columns.
    static func columns(_ values: [Double], height: Int, width: Int) -> [String] {
        var values = resample(values, to: max(width, 1))
        // Few points: widen each to up to 4 columns, so a week is not 7 columns wide.
        let repeatCount = values.isEmpty ? 1 : max(1, min(4, width / values.count))
        values = values.flatMap { Array(repeating: $0, count: repeatCount) }
        guard let low = values.min(), let high = values.max() else { return [] }
        let span = high - low
        let heights = values.map { span == 0 ? Double(height * 8) / 2 : ($0 - low) / span * Double(height * 8 - 1) + 1 }
        return (0..<height).reversed().map { row in
            String(heights.map { level -> Character in
                let filled = level - Double(row * 8)
                if filled >= 8 { return "█" }
                if filled <= 0 { return " " }
                return levels[max(0, Int(filled.rounded(.up)) - 1)]
            })
        }
    }

    // MARK: Details

    /// A detail document: its title, then every block. Unknown block types show their
    /// `fallback`; a detail without blocks shows its `fallbackText`.
    public static func render(detail: JSONValue, width: Int, color: Bool) -> [String] {
        var lines: [String] = []
        let title = detail["title"]?.stringValue ?? "Detail"
        lines.append(styled(truncate(title, width: width), [.bold, .underline], color: color))
        guard let blocks = detail["blocks"]?.arrayValue, !blocks.isEmpty else {
            if let fallback = detail["fallbackText"]?.stringValue ?? detail["fallback"]?.stringValue {
                lines += wrap(fallback, width: width)
            }
            return lines
        }
        for block in blocks {
            lines.append("")
            lines += render(block: block, width: width, color: color)
        }
        return lines
    }

    /// One detail block.
    public static func render(block: JSONValue, width: Int, color: Bool) -> [String] {
        let fallback = block["fallback"]?.stringValue
        switch block["type"]?.stringValue {
        case "text":
            let text = block["text"]?.stringValue ?? fallback ?? ""
            switch block["style"]?.stringValue {
            case "heading": return wrap(text, width: width).map { styled($0, [.bold], color: color) }
            case "caption": return wrap(text, width: width).map { styled($0, [.dim], color: color) }
            case "monospace": return text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + truncate(String($0), width: width - 2) }
            default: return wrap(text, width: width)
            }
        case "facts":
            let facts = (block["facts"]?.arrayValue ?? []).map { fact in
                (fact["label"]?.stringValue ?? "", fact["value"]?.stringValue ?? "", fact["tone"]?.stringValue)
            }
            let labelWidth = min(facts.map(\.0.count).max() ?? 0, max(width / 2, 4))
            return facts.flatMap { label, value, tone -> [String] in
                let shown = truncate(label, width: labelWidth)
                let head = shown + String(repeating: " ", count: labelWidth - shown.count) + "  "
                let valueLines = wrap(value, width: width - head.count)
                return valueLines.enumerated().map { index, line in
                    (index == 0 ? styled(head, [.dim], color: color) : String(repeating: " ", count: head.count))
                        + styled(line, toneStyles(tone), color: color)
                }
            }
        case "chart":
            return render(chart: block, width: width, color: color)
        case "map":
            var lines: [String] = []
            if let center = block["center"], let latitude = center["latitude"]?.numberValue, let longitude = center["longitude"]?.numberValue {
                var text = "⌖ " + coordinates(latitude, longitude)
                if let zoom = block["zoom"]?.numberValue { text += " (zoom \(formatNumber(zoom)))" }
                lines.append(truncate(text, width: width))
            }
            for marker in block["markers"]?.arrayValue ?? [] {
                guard let latitude = marker["latitude"]?.numberValue, let longitude = marker["longitude"]?.numberValue else { continue }
                let title = marker["title"]?.stringValue.map { $0 + " " } ?? ""
                lines.append(truncate("  • " + title + coordinates(latitude, longitude), width: width))
            }
            if let link = block["link"]?.stringValue { lines.append(styled(truncate(link, width: width), [.underline, .blue], color: color)) }
            if lines.isEmpty, let fallback { return wrap(fallback, width: width) }
            return lines
        case "list":
            let ordered = block["ordered"]?.boolValue == true
            let items = (block["items"]?.arrayValue ?? []).map { $0.stringValue ?? $0.jsonString }
            return items.enumerated().flatMap { index, item -> [String] in
                let marker = ordered ? "\(index + 1). " : "• "
                let wrapped = wrap(item, width: width - marker.count)
                return wrapped.enumerated().map { line, text in (line == 0 ? marker : String(repeating: " ", count: marker.count)) + text }
            }
        case "image":
            let alt = block["alt"]?.stringValue ?? fallback ?? "image"
            let uri = block["dataURI"]?.stringValue ?? ""
            let type = uri.hasPrefix("data:") ? String(uri.dropFirst(5).prefix { $0 != ";" && $0 != "," }) : "image"
            return wrap("▨ [\(type)] \(alt)", width: width)
        case "link":
            let title = block["title"]?.stringValue ?? fallback ?? "link"
            let url = block["url"]?.stringValue ?? ""
            return wrap("↗ \(title)", width: width) + [styled(truncate("  " + url, width: width), [.underline, .blue], color: color)]
        default:
            if let fallback { return wrap(fallback, width: width) }
            return wrap("(a '\(block["type"]?.stringValue ?? "?")' block this client cannot show)", width: width).map { styled($0, [.dim], color: color) }
        }
    }

    /// `48.85840° N, 2.29450° E`.
    public static func coordinates(_ latitude: Double, _ longitude: Double) -> String {
        func degrees(_ value: Double) -> String {
            let scaled = (abs(value) * 100_000).rounded() / 100_000
            var text = String(scaled)
            if let dot = text.firstIndex(of: ".") {
                let decimals = text.distance(from: dot, to: text.endIndex) - 1
                if decimals < 5 { text += String(repeating: "0", count: 5 - decimals) }
            }
            return text + "°"
        }
        return degrees(latitude) + (latitude < 0 ? " S, " : " N, ") + degrees(longitude) + (longitude < 0 ? " W" : " E")
    }

    // MARK: Forms

    /// A form's header: its title and `fallbackText`, and a form-level error.
    public static func render(formHeader form: JSONValue, formError: String?, width: Int, color: Bool) -> [String] {
        var lines = [styled(truncate(form["title"]?.stringValue ?? "Form", width: width), [.bold, .underline], color: color)]
        if form["fields"]?.arrayValue == nil, let fallback = form["fallbackText"]?.stringValue {
            lines += wrap(fallback, width: width)
        }
        if let formError { lines += wrap("✗ " + formError, width: width).map { styled($0, [.red], color: color) } }
        return lines
    }

    /// How a field is described above its input: label (with `*` when required), kind hints,
    /// help, the current value and its error.
    public static func render(field: JSONValue, value: JSONValue?, error: String?, width: Int, color: Bool, valueLabel: String? = nil) -> [String] {
        let label = field["label"]?.stringValue ?? field["id"]?.stringValue ?? "?"
        let required = field["required"]?.boolValue == true
        var lines = [styled(truncate(label + (required ? " *" : ""), width: width), [.bold], color: color)
            + (hint(for: field).map { " " + styled("(\($0))", [.dim], color: color) } ?? "")]
        if let help = field["help"]?.stringValue { lines += wrap(help, width: width, indent: "  ").map { styled($0, [.dim], color: color) } }
        if let value, let shown = valueLabel ?? displayValue(value, field: field) {
            lines += wrap("current: " + (shown.isEmpty ? "(empty)" : shown), width: width, indent: "  ")
        }
        if let error { lines += wrap("✗ " + error, width: width, indent: "  ").map { styled($0, [.red], color: color) } }
        return lines
    }

    /// What to type for a field of this kind; unknown kinds show the field's `fallback`.
    public static func hint(for field: JSONValue) -> String? {
        var parts: [String] = []
        switch field["kind"]?.stringValue {
        case "text":
            if field["multiline"]?.boolValue == true { parts.append("several lines; end with a line '.'") }
            if let max = field["maxLength"]?.intValue { parts.append("up to \(max) characters") }
        case "number":
            var range = "a number"
            if let min = field["min"]?.numberValue { range += " ≥ \(formatNumber(min))" }
            if let max = field["max"]?.numberValue { range += " ≤ \(formatNumber(max))" }
            parts.append(range)
            if let unit = field["unit"]?.stringValue { parts.append(unit) }
        case "date": parts.append("YYYY-MM-DD")
        case "datetime": parts.append("YYYY-MM-DDTHH:MM:SS±HH:MM")
        case "choice": parts.append(field["search"] != nil ? "type to search" : "pick one")
        case "toggle": parts.append("y/n")
        case "location": parts.append("latitude, longitude")
        default: if let fallback = field["fallback"]?.stringValue { parts.append(fallback) }
        }
        if let placeholder = field["placeholder"]?.stringValue, field["kind"]?.stringValue != "text" || parts.isEmpty {
            parts.append("“" + placeholder + "”")
        }
        if let defaultValue = field["default"], let shown = displayValue(defaultValue, field: field) { parts.append("default: " + shown) }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// A field value as the user would type it.
    public static func displayValue(_ value: JSONValue, field: JSONValue) -> String? {
        switch value {
        case .null: return nil
        case .string(let text):
            if field["kind"]?.stringValue == "choice",
               let option = field["options"]?.arrayValue?.first(where: { $0["value"]?.stringValue == text }),
               let label = option["label"]?.stringValue {
                return label
            }
            return text.contains("\n") ? text.replacingNewlines() : text
        case .number(let number): return formatNumber(number)
        case .bool(let flag): return flag ? "yes" : "no"
        case .object:
            if let latitude = value["latitude"]?.numberValue, let longitude = value["longitude"]?.numberValue {
                return formatNumber(latitude) + ", " + formatNumber(longitude)
            }
            return value.jsonString
        case .array: return value.jsonString
        }
    }

    /// Parses what the user typed for a field into the value `collect/submit` takes. Text that
    /// does not parse is passed on as a string, so the provider's own validation answers it.
    /// Returns nil for an empty answer to a non-text field (the value is left out).
    public static func parseValue(_ input: String, field: JSONValue) -> JSONValue? {
        let trimmed = input.trimmingWhitespace()
        switch field["kind"]?.stringValue {
        case "text": return .string(input)
        case "number":
            if trimmed.isEmpty { return nil }
            if let number = Double(trimmed), number.isFinite { return .number(number) }
            return .string(input)
        case "toggle":
            switch trimmed.lowercased() {
            case "": return nil
            case "y", "yes", "true", "on", "1": return .bool(true)
            case "n", "no", "false", "off", "0": return .bool(false)
            default: return .string(input)
            }
        case "location":
            if trimmed.isEmpty { return nil }
            let parts = trimmed.split(whereSeparator: { $0 == "," || $0 == " " }).filter { !$0.isEmpty }
            if parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]) {
                return .object(["latitude": .number(latitude), "longitude": .number(longitude)])
            }
            return .string(input)
        default:
            return trimmed.isEmpty ? nil : .string(trimmed)
        }
    }

    // MARK: Providers

    /// A provider as a picker line: title, and for one that cannot be used now, why.
    public static func providerLine(_ provider: JSONValue) -> (label: String, enabled: Bool, note: String?) {
        let title = provider["title"]?.stringValue ?? provider["id"]?.stringValue ?? provider["manifestPath"]?.stringValue ?? "?"
        if provider["available"]?.boolValue != true {
            let reason = provider["unavailableReason"]?["message"]?.stringValue
                ?? provider["error"]?["message"]?.stringValue
                ?? provider["diagnostics"]?.arrayValue?.first?["message"]?.stringValue
                ?? provider["status"]?.stringValue ?? "unavailable"
            return (title, false, "unavailable: " + reason)
        }
        if provider["canAttach"]?.boolValue == false {
            return (title, false, provider["attachBlocked"]?["message"]?.stringValue ?? "cannot attach more")
        }
        if provider["collection"]?.stringValue == "programmatic" { return (title, true, "attaches at once") }
        return (title, true, nil)
    }

    // MARK: JSON

    /// JSON with two-space indentation and members in their order, for people to read.
    public static func prettyJSON(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            return "[\n" + elements.map { inner + prettyJSON($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let object) where !object.isEmpty:
            return "{\n" + object.map { inner + JSONValue.string($0.key).jsonString + ": " + prettyJSON($0.value, indent: inner) }
                .joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return value.jsonString
        }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }

    /// Line breaks shown as `⏎`, for one-line summaries.
    func replacingNewlines() -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ⏎ ")
    }
}
