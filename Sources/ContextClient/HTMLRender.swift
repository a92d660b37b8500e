import ContextProviderKit
import ContextWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ctxui v1 values (chips, details, forms, encodings) as static HTML fragments: the reference
/// renderer for browsers, used by `context-host gallery`.
///
/// Every string a provider sends is untrusted: it is escaped wherever it lands (text, attribute
/// values, SVG). The fragments need no script and load nothing: charts and maps are inline SVG,
/// images are shown only from Base64 `data:image/png|jpeg|gif|webp|svg+xml` URIs (in `<img>`,
/// where nothing can run, not even an SVG's script), links only for `http`, `https`, `mailto` and `geo` URLs. Unknown node types show their
/// `fallback` text, as every ctxui client must.
package enum HTMLRender {
    // MARK: Escaping and URLs

    /// `text` safe inside HTML text and in double- or single-quoted attribute values.
    package static func escape(_ text: String) -> String { TextEscaping.escape(text, htmlEscapes) }

    private static let htmlEscapes: [Unicode.Scalar: String] = [
        "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;", "\u{0}": "\u{FFFD}",
    ]

    /// Whether a URL may be a link target: `http:`, `https:`, `mailto:` or `geo:` (case-insensitive),
    /// with no control characters or white space that browsers strip.
    package static func isSafeLink(_ url: String) -> Bool {
        guard !url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else { return false }
        let lowered = url.lowercased()
        return ["http://", "https://", "mailto:", "geo:"].contains { lowered.hasPrefix($0) }
    }

    /// Whether a `data:` URI may be shown as an image: `png`, `jpeg`, `gif`, `webp` or `svg+xml`
    /// in Base64, with nothing but Base64 characters after the comma. It is only ever used as an
    /// `<img>` source, where browsers run no script and load nothing, SVG included (an SVG as a
    /// document or inline markup could; these never are).
    package static func isSafeImage(_ uri: String) -> Bool {
        let lowered = uri.lowercased()
        let prefixes = ["png", "jpeg", "jpg", "gif", "webp", "svg+xml"].map { "data:image/\($0);base64," }
        guard let prefix = prefixes.first(where: { lowered.hasPrefix($0) }) else { return false }
        let payload = uri.utf8.dropFirst(prefix.utf8.count)
        return !payload.isEmpty && payload.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2B || byte == 0x2F || byte == 0x3D
        }
    }

    /// A number for SVG coordinates: at most two decimals, no exponent.
    static func svgNumber(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int64(rounded)) }
        return String(rounded)
    }

    /// The CSS class of a ctxui tone.
    static func toneClass(_ tone: String?) -> String {
        switch tone {
        case "good", "warning", "attention": "tone-" + tone!
        default: "tone-neutral"
        }
    }

    /// The stroke colour of a tone in SVG.
    static func toneColour(_ tone: String?) -> String {
        switch tone {
        case "good": "#1a7f37"
        case "warning": "#9a6700"
        case "attention": "#cf222e"
        default: "#57606a"
        }
    }

    /// Series colours for charts, in order.
    static let palette = ["#0969da", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#57606a"]

    // MARK: JSON

    /// Pretty-printed JSON, escaped, in a `<pre>`.
    package static func json(_ value: JSONValue) -> String {
        "<pre class=\"json\">" + escape(CtxuiRender.prettyJSON(value)) + "</pre>"
    }

    // MARK: Chips

    /// A chip as a pill: an icon glyph, an optional thumbnail, title, subtitle and sparkline,
    /// coloured by its tone. A chip without a title shows its `fallbackText`.
    package static func chip(_ chip: JSONValue) -> String {
        let label = chip["accessibilityLabel"]?.stringValue ?? chip["title"]?.stringValue ?? chip["fallbackText"]?.stringValue ?? "item"
        guard let title = chip["title"]?.stringValue else {
            let fallback = chip["fallbackText"]?.stringValue ?? chip["fallback"]?.stringValue ?? "(item)"
            return "<span class=\"chip tone-neutral\" role=\"group\" aria-label=\"\(escape(label))\">\(escape(fallback))</span>"
        }
        var html = "<span class=\"chip \(toneClass(chip["tone"]?.stringValue))\" role=\"group\" aria-label=\"\(escape(label))\""
        if let fallback = chip["fallbackText"]?.stringValue { html += " title=\"\(escape(fallback))\"" }
        html += ">"
        html += icon(chip["icon"]?.stringValue)
        if let thumbnail = chip["thumbnail"]?.stringValue {
            if isSafeImage(thumbnail) {
                html += "<img class=\"thumb\" src=\"\(escape(thumbnail))\" alt=\"\">"
            } else {
                html += "<span class=\"thumb refused\" title=\"thumbnail not shown: only Base64 data:image/png, jpeg, gif, webp or svg+xml URIs are\">▨</span>"
            }
        }
        html += "<span class=\"chip-title\">\(escape(title))</span>"
        if let subtitle = chip["subtitle"]?.stringValue, !subtitle.isEmpty {
            html += "<span class=\"chip-subtitle\">\(escape(subtitle))</span>"
        }
        if let accessory = chip["accessory"] {
            if accessory["kind"]?.stringValue == "sparkline", let values = accessory["values"]?.arrayValue?.compactMap(\.numberValue), !values.isEmpty {
                html += sparkline(values, width: 56, height: 16)
            } else if let fallback = accessory["fallback"]?.stringValue {
                html += "<span class=\"chip-subtitle\">\(escape(fallback))</span>"
            }
        }
        return html + "</span>"
    }

    /// An icon name (SF Symbols naming) as a small inline SVG glyph of its family (note, place,
    /// calendar, chart, health, device, other), with the name as its tooltip: no icon font needed.
    package static func icon(_ name: String?) -> String {
        let shape: String
        let key = name ?? ""
        func has(_ words: String...) -> Bool { words.contains { key.contains($0) } }
        if has("note", "text", "doc", "pencil") {
            shape = "<rect x=\"3\" y=\"2\" width=\"10\" height=\"12\" rx=\"1.5\"/><path d=\"M5.5 5.5h5M5.5 8h5M5.5 10.5h3\"/>"
        } else if has("location", "map", "pin", "globe") {
            shape = "<path d=\"M8 14.5s-4.5-4.6-4.5-8a4.5 4.5 0 0 1 9 0c0 3.4-4.5 8-4.5 8z\"/><circle cx=\"8\" cy=\"6.5\" r=\"1.6\"/>"
        } else if has("calendar", "clock") {
            shape = "<rect x=\"2.5\" y=\"3.5\" width=\"11\" height=\"10\" rx=\"1.5\"/><path d=\"M2.5 6.5h11M5.5 2v3M10.5 2v3\"/>"
        } else if has("chart", "dollar", "graph", "stock") {
            shape = "<path d=\"M2 13.5h12M3 11l3.5-4 3 2.5L14 4\"/>"
        } else if has("heart", "waveform", "figure", "bed", "flame", "lungs") {
            shape = "<path d=\"M8 13.5S2.5 10 2.5 6.2A2.7 2.7 0 0 1 8 4.8a2.7 2.7 0 0 1 5.5 1.4C13.5 10 8 13.5 8 13.5z\"/>"
        } else if has("cpu", "desktop", "laptop", "info", "gear") {
            shape = "<rect x=\"3.5\" y=\"3.5\" width=\"9\" height=\"9\" rx=\"1\"/><rect x=\"6\" y=\"6\" width=\"4\" height=\"4\"/><path d=\"M6 1.5v2M10 1.5v2M6 12.5v2M10 12.5v2M1.5 6h2M1.5 10h2M12.5 6h2M12.5 10h2\"/>"
        } else {
            shape = "<circle cx=\"8\" cy=\"8\" r=\"5\"/>"
        }
        return "<span class=\"icon\" title=\"\(escape(name ?? "no icon"))\"><svg width=\"14\" height=\"14\" viewBox=\"0 0 16 16\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.4\" stroke-linecap=\"round\" stroke-linejoin=\"round\" aria-hidden=\"true\">\(shape)</svg></span>"
    }

    /// Values as a small inline SVG polyline (oldest first).
    package static func sparkline(_ values: [Double], width: Double, height: Double) -> String {
        let points = polylinePoints(values, width: width, height: height, inset: 1.5)
        return "<svg class=\"sparkline\" width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\" viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" role=\"img\" aria-label=\"trend of \(values.count) values\">"
            + "<polyline fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"\(points)\"/></svg>"
    }

    static func polylinePoints(_ values: [Double], width: Double, height: Double, inset: Double) -> String {
        let low = values.min() ?? 0, high = values.max() ?? 0
        let span = high - low
        return values.enumerated().map { index, value in
            let x = values.count == 1 ? width / 2 : inset + Double(index) / Double(values.count - 1) * (width - 2 * inset)
            let y = span == 0 ? height / 2 : inset + (1 - (value - low) / span) * (height - 2 * inset)
            return svgNumber(x) + "," + svgNumber(y)
        }.joined(separator: " ")
    }

    // MARK: Details

    /// A detail document: its title and every block. A detail without blocks shows its `fallbackText`.
    package static func detail(_ detail: JSONValue) -> String {
        var html = "<article class=\"detail\"><h4 class=\"detail-title\">\(escape(detail["title"]?.stringValue ?? "Detail"))</h4>"
        if let blocks = detail["blocks"]?.arrayValue, !blocks.isEmpty {
            for block in blocks { html += self.block(block) }
        } else if let fallback = detail["fallbackText"]?.stringValue ?? detail["fallback"]?.stringValue {
            html += paragraphs(fallback)
        }
        return html + "</article>"
    }

    /// One detail block; an unknown type shows its `fallback`.
    package static func block(_ block: JSONValue) -> String {
        let type = block["type"]?.stringValue ?? ""
        let fallback = block["fallback"]?.stringValue
        let body: String
        switch type {
        case "text":
            let text = block["text"]?.stringValue ?? fallback ?? ""
            switch block["style"]?.stringValue {
            case "markdown": body = markdown(text)
            case "heading": body = "<h5>\(escape(text))</h5>"
            case "caption": body = "<p class=\"caption\">\(lines(text))</p>"
            case "monospace": body = "<pre class=\"mono\">\(escape(text))</pre>"
            default: body = paragraphs(text)
            }
        case "facts":
            body = facts(block["facts"]?.arrayValue ?? [])
        case "chart":
            body = chart(block)
        case "map":
            body = map(block)
        case "list":
            let tag = block["ordered"]?.boolValue == true ? "ol" : "ul"
            let items = (block["items"]?.arrayValue ?? []).map { "<li>\(escape($0.stringValue ?? $0.jsonString))</li>" }
            body = "<\(tag)>" + items.joined() + "</\(tag)>"
        case "image":
            let alt = block["alt"]?.stringValue ?? fallback ?? "image"
            let uri = block["dataURI"]?.stringValue ?? ""
            if isSafeImage(uri) {
                body = "<figure><img src=\"\(escape(uri))\" alt=\"\(escape(alt))\"><figcaption>\(escape(alt))</figcaption></figure>"
            } else {
                body = "<p class=\"refused\">▨ \(escape(alt)) <span class=\"muted\">(image not shown: only Base64 data:image/png, jpeg, gif, webp or svg+xml URIs are)</span></p>"
            }
        case "link":
            let title = block["title"]?.stringValue ?? fallback ?? "link"
            body = "<p>" + link(block["url"]?.stringValue ?? "", title: title) + "</p>"
        default:
            if let fallback {
                body = "<p class=\"fallback\" title=\"a '\(escape(type))' block this client does not know; its fallback text\">\(lines(fallback))</p>"
            } else {
                body = "<p class=\"fallback muted\">(a '\(escape(type))' block this client cannot show, without fallback text)</p>"
            }
        }
        let known = ["text", "facts", "chart", "map", "list", "image", "link"].contains(type)
        return "<div class=\"block block-\(known ? type : "unknown")\">" + body + "</div>"
    }

    /// A link when the scheme is safe; otherwise the title and the URL as text.
    package static func link(_ url: String, title: String) -> String {
        guard isSafeLink(url) else {
            return "\(escape(title)) <span class=\"muted\">(\(escape(url)); not a link: only http, https, mailto and geo URLs are)</span>"
        }
        return "<a href=\"\(escape(url))\" rel=\"noopener noreferrer\">\(escape(title))</a> <span class=\"muted url\">\(escape(url))</span>"
    }

    /// Text with line breaks kept, blank lines separating paragraphs.
    static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n\n", omittingEmptySubsequences: true).map { "<p>\(lines(String($0)))</p>" }.joined()
    }

    /// Escaped text with `<br>` for line breaks.
    static func lines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: "<br>")
    }

    static func facts(_ facts: [JSONValue]) -> String {
        "<dl class=\"facts\">" + facts.map { fact in
            "<div><dt>\(escape(fact["label"]?.stringValue ?? ""))</dt><dd class=\"\(toneClass(fact["tone"]?.stringValue))\">\(escape(fact["value"]?.stringValue ?? ""))</dd></div>"
        }.joined() + "</dl>"
    }

    // MARK: Markdown

    /// Minimal CommonMark: ATX headings, paragraphs, `-`/`*`/`+` and `1.` lists, fenced code,
    /// block quotes, and inline `**bold**`, `*italic*`/`_italic_`, `` `code` ``. Everything is escaped;
    /// links and raw HTML are shown as text.
    package static func markdown(_ text: String) -> String {
        var html = "<div class=\"markdown\">"
        var paragraph: [String] = []
        var list: (tag: String, items: [String])?
        var code: [String]?
        func flushParagraph() {
            if !paragraph.isEmpty { html += "<p>" + paragraph.map(inline).joined(separator: "<br>") + "</p>" }
            paragraph = []
        }
        func flushList() {
            if let current = list { html += "<\(current.tag)>" + current.items.map { "<li>\(inline($0))</li>" }.joined() + "</\(current.tag)>" }
            list = nil
        }
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine.last == "\r" ? rawLine.dropLast() : rawLine)
            let trimmed = line.trimmingWhitespace()
            if var lines = code {
                if trimmed.hasPrefix("```") {
                    html += "<pre class=\"mono\">" + escape(lines.joined(separator: "\n")) + "</pre>"
                    code = nil
                } else {
                    lines.append(line)
                    code = lines
                }
                continue
            }
            if trimmed.hasPrefix("```") {
                flushParagraph(); flushList()
                code = []
                continue
            }
            if trimmed.isEmpty {
                flushParagraph(); flushList()
                continue
            }
            let hashes = trimmed.prefix { $0 == "#" }.count
            if (1...6).contains(hashes), trimmed.dropFirst(hashes).first == " " {
                flushParagraph(); flushList()
                let level = min(hashes + 3, 6)
                html += "<h\(level)>" + inline(String(trimmed.dropFirst(hashes + 1))) + "</h\(level)>"
                continue
            }
            if let item = listItem(trimmed) {
                flushParagraph()
                if list?.tag != item.tag { flushList(); list = (item.tag, []) }
                list?.items.append(item.text)
                continue
            }
            if trimmed.hasPrefix(">") {
                flushParagraph(); flushList()
                html += "<blockquote>" + inline(String(trimmed.dropFirst()).trimmingWhitespace()) + "</blockquote>"
                continue
            }
            if list != nil, line.hasPrefix("  ") {  // continuation of a list item
                list!.items[list!.items.count - 1] += " " + trimmed
                continue
            }
            flushList()
            paragraph.append(trimmed)
        }
        if let lines = code { html += "<pre class=\"mono\">" + escape(lines.joined(separator: "\n")) + "</pre>" }
        flushParagraph(); flushList()
        return html + "</div>"
    }

    /// `- text`, `* text`, `+ text` → ul; `12. text` / `12) text` → ol.
    static func listItem(_ line: String) -> (tag: String, text: String)? {
        if let first = line.first, "-*+".contains(first), line.dropFirst().first == " " {
            return ("ul", String(line.dropFirst(2)))
        }
        let digits = line.prefix { $0.isASCII && $0.isNumber }
        if !digits.isEmpty, digits.count <= 9 {
            let rest = line.dropFirst(digits.count)
            if let marker = rest.first, marker == "." || marker == ")", rest.dropFirst().first == " " {
                return ("ol", String(rest.dropFirst(2)))
            }
        }
        return nil
    }

    /// Inline Markdown: code spans first (their content is literal), then emphasis.
    static func inline(_ text: String) -> String {
        var html = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "`") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "`") else { break }
            html += emphasis(String(rest[..<open]))
            html += "<code>" + escape(String(rest[afterOpen..<close])) + "</code>"
            rest = rest[rest.index(after: close)...]
        }
        return html + emphasis(String(rest))
    }

    /// `**strong**`, then `*em*` / `_em_` inside each part; unmatched markers stay as text.
    static func emphasis(_ text: String) -> String {
        wrapPairs(text, marker: "**", tag: "strong") { part in
            wrapPairs(part, marker: "*", tag: "em") { inner in
                wrapPairs(inner, marker: "_", tag: "em", wordBoundary: true) { escape($0) }
            }
        }
    }

    /// Splits `text` on `marker`; odd parts (between a pair) are wrapped in `tag`. A last unpaired
    /// marker is kept as text. With `wordBoundary`, a marker inside a word (`snake_case`) is text.
    static func wrapPairs(_ text: String, marker: String, tag: String, wordBoundary: Bool = false, _ render: (String) -> String) -> String {
        var parts: [String] = []
        var current = ""
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(marker) {
                let before = index > text.startIndex ? text[text.index(before: index)] : " "
                let afterIndex = text.index(index, offsetBy: marker.count)
                let after = afterIndex < text.endIndex ? text[afterIndex] : " "
                let inWord = before.isLetter || before.isNumber
                let beforeWord = after.isLetter || after.isNumber
                if !wordBoundary || !(inWord && beforeWord) {
                    parts.append(current)
                    current = ""
                    index = afterIndex
                    continue
                }
            }
            current.append(text[index])
            index = text.index(after: index)
        }
        parts.append(current)
        let paired = (parts.count - 1) / 2 * 2  // markers with a partner; a last odd one is text
        var html = ""
        for (position, part) in parts.enumerated() {
            if position == 0 {
                html += render(part)
            } else if position <= paired {
                html += position % 2 == 1 ? "<\(tag)>" + render(part) + "</\(tag)>" : render(part)
            } else {
                html += escape(marker) + render(part)
            }
        }
        return html
    }

    // MARK: Charts

    /// A chart block as inline SVG: line (one polyline per series with point markers), bar
    /// (grouped bars) or sparkline; y axis with min, middle and max labels in the unit, x labels
    /// (first, middle, last), dashed threshold lines with their labels, and a legend.
    package static func chart(_ block: JSONValue) -> String {
        let kind = block["kind"]?.stringValue ?? "line"
        let unit = block["unit"]?.stringValue
        let (series, thresholds) = chartData(block)
        let allValues = series.flatMap { $0.points.map(\.y) }
        guard !allValues.isEmpty else {
            return "<p class=\"muted\">(a chart with no data)</p>"
        }
        let description = series.map { entry in
            "\(entry.name): \(entry.points.count) points, \(entry.points.first!.x) to \(entry.points.last!.x)"
        }.joined(separator: "; ")
        if kind == "sparkline" {
            let values = series.first(where: { !$0.points.isEmpty })?.points.map(\.y) ?? []
            return "<div class=\"chart\">" + sparkline(values, width: 160, height: 32) + "</div>"
        }
        let width = 520.0, height = 220.0
        let left = 58.0, right = 12.0, top = 24.0, bottom = 34.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var low = (allValues + thresholds.map(\.value)).min()!
        var high = (allValues + thresholds.map(\.value)).max()!
        if kind == "bar" { low = min(low, 0); high = max(high, 0) }
        if low == high { low -= 1; high += 1 } else {
            let pad = (high - low) * 0.06
            if kind != "bar" || low < 0 { low -= pad }
            high += pad
        }
        func y(_ value: Double) -> Double { top + (1 - (value - low) / (high - low)) * plotHeight }
        // X categories: the union of x labels in order of first appearance.
        var xs: [String] = []
        var seen: Set<String> = []
        for entry in series { for point in entry.points where seen.insert(point.x).inserted { xs.append(point.x) } }
        let xIndex = Dictionary(xs.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let slot = plotWidth / Double(max(xs.count, 1))
        func x(_ label: String) -> Double {
            let index = Double(xIndex[label] ?? 0)
            if kind == "bar" { return left + slot * (index + 0.5) }
            return xs.count == 1 ? left + plotWidth / 2 : left + index / Double(xs.count - 1) * plotWidth
        }
        let unitSuffix = unit.map { " " + $0 } ?? ""
        var svg = "<svg class=\"chart-svg\" width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\" viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" role=\"img\" aria-label=\"\(escape(kind + " chart" + (unit.map { " in " + $0 } ?? "") + ": " + description))\">"
        // Axes and y labels.
        svg += "<line class=\"axis\" x1=\"\(svgNumber(left))\" y1=\"\(svgNumber(top))\" x2=\"\(svgNumber(left))\" y2=\"\(svgNumber(top + plotHeight))\"/>"
        svg += "<line class=\"axis\" x1=\"\(svgNumber(left))\" y1=\"\(svgNumber(top + plotHeight))\" x2=\"\(svgNumber(left + plotWidth))\" y2=\"\(svgNumber(top + plotHeight))\"/>"
        for value in [low, (low + high) / 2, high] {
            svg += "<line class=\"grid\" x1=\"\(svgNumber(left))\" y1=\"\(svgNumber(y(value)))\" x2=\"\(svgNumber(left + plotWidth))\" y2=\"\(svgNumber(y(value)))\"/>"
            svg += "<text class=\"tick\" x=\"\(svgNumber(left - 4))\" y=\"\(svgNumber(y(value) + 4))\" text-anchor=\"end\">\(escape(shortNumber(value)))</text>"
        }
        if let unit {
            svg += "<text class=\"tick unit\" x=\"4\" y=\"12\">\(escape(unit))</text>"
        }
        // X labels: first, middle and last.
        let labelIndices = Array(Set([0, xs.count / 2, xs.count - 1])).sorted().filter { $0 >= 0 && $0 < xs.count }
        for index in labelIndices {
            let anchor = xs.count == 1 ? "middle" : index == 0 ? "start" : index == xs.count - 1 ? "end" : "middle"
            svg += "<text class=\"tick\" x=\"\(svgNumber(x(xs[index])))\" y=\"\(svgNumber(height - bottom + 16))\" text-anchor=\"\(anchor)\">\(escape(CtxuiRender.truncate(xs[index], width: 24)))</text>"
        }
        // Data.
        svg += chartMarks(kind: kind, series: series, slot: slot, unitSuffix: unitSuffix, x: x, y: y)
        // Thresholds (goals, limits).
        for threshold in thresholds {
            let colour = toneColour(threshold.tone)
            svg += "<line class=\"threshold\" x1=\"\(svgNumber(left))\" y1=\"\(svgNumber(y(threshold.value)))\" x2=\"\(svgNumber(left + plotWidth))\" y2=\"\(svgNumber(y(threshold.value)))\" stroke=\"\(colour)\"/>"
            svg += "<text class=\"tick threshold-label\" x=\"\(svgNumber(left + plotWidth - 2))\" y=\"\(svgNumber(y(threshold.value) - 4))\" text-anchor=\"end\" fill=\"\(colour)\">\(escape(threshold.label + " " + CtxuiRender.formatNumber(threshold.value) + unitSuffix))</text>"
        }
        svg += "</svg>"
        return "<div class=\"chart\">" + svg + chartLegend(series) + "</div>"
    }

    /// A chart's series (points with a finite `y`) and thresholds (with a finite value).
    private static func chartData(
        _ block: JSONValue
    ) -> (series: [ChartSeriesData], thresholds: [(label: String, value: Double, tone: String?)]) {
        let series: [ChartSeriesData] = (block["series"]?.arrayValue ?? []).map { entry in
            let points = (entry["points"]?.arrayValue ?? []).compactMap { point -> (x: String, y: Double)? in
                guard let y = point["y"]?.numberValue, y.isFinite else { return nil }
                return (point["x"]?.stringValue ?? "", y)
            }
            return (entry["name"]?.stringValue ?? "", points)
        }
        let thresholds: [(label: String, value: Double, tone: String?)] = (block["thresholds"]?.arrayValue ?? []).compactMap { threshold in
            guard let value = threshold["value"]?.numberValue, value.isFinite else { return nil }
            return (threshold["label"]?.stringValue ?? "", value, threshold["tone"]?.stringValue)
        }
        return (series, thresholds)
    }

    /// The bars or the lines (with point markers up to 60 points) of each series.
    private static func chartMarks(
        kind: String, series: [ChartSeriesData], slot: Double, unitSuffix: String, x: (String) -> Double, y: (Double) -> Double
    ) -> String {
        var svg = ""
        if kind == "bar" {
            let barWidth = max(slot * 0.8 / Double(max(series.count, 1)), 1)
            for (seriesIndex, entry) in series.enumerated() {
                let colour = palette[seriesIndex % palette.count]
                for point in entry.points {
                    let barX = x(point.x) - slot * 0.4 + Double(seriesIndex) * barWidth
                    let top = min(y(point.y), y(0)), bottom = max(y(point.y), y(0))
                    svg += "<rect x=\"\(svgNumber(barX))\" y=\"\(svgNumber(top))\" width=\"\(svgNumber(barWidth))\" height=\"\(svgNumber(max(bottom - top, 0.5)))\" fill=\"\(colour)\"><title>\(escape(point.x + ": " + CtxuiRender.formatNumber(point.y) + unitSuffix))</title></rect>"
                }
            }
        } else {
            for (seriesIndex, entry) in series.enumerated() {
                let colour = palette[seriesIndex % palette.count]
                let points = entry.points.map { svgNumber(x($0.x)) + "," + svgNumber(y($0.y)) }.joined(separator: " ")
                svg += "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"\(points)\"/>"
                if entry.points.count <= 60 {
                    for point in entry.points {
                        svg += "<circle cx=\"\(svgNumber(x(point.x)))\" cy=\"\(svgNumber(y(point.y)))\" r=\"2.5\" fill=\"\(colour)\"><title>\(escape(point.x + ": " + CtxuiRender.formatNumber(point.y) + unitSuffix))</title></circle>"
                    }
                }
            }
        }
        return svg
    }

    /// The legend, when there is more than one series or a named one.
    private static func chartLegend(_ series: [ChartSeriesData]) -> String {
        guard series.count > 1 || series.contains(where: { !$0.name.isEmpty }) else { return "" }
        return "<ul class=\"legend\">" + series.enumerated().map { index, entry in
            "<li><span class=\"swatch\" style=\"background:\(palette[index % palette.count])\"></span>\(escape(entry.name))</li>"
        }.joined() + "</ul>"
    }

    /// One series of a chart: its name and points.
    typealias ChartSeriesData = (name: String, points: [(x: String, y: Double)])

    /// 1234567 → `1.23M`, 0.000123 → `0.00012`: short labels for axes.
    static func shortNumber(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000_000 { return CtxuiRender.formatNumber((value / 10_000).rounded() / 100) + "M" }
        if magnitude >= 10_000 { return CtxuiRender.formatNumber((value / 10).rounded() / 100) + "k" }
        if magnitude >= 100 { return CtxuiRender.formatNumber(value.rounded()) }
        if magnitude >= 1 { return CtxuiRender.formatNumber((value * 100).rounded() / 100) }
        return CtxuiRender.formatNumber((value * 100_000).rounded() / 100_000)
    }

    // MARK: Maps

    /// A map block as an SVG coordinate grid: a latitude/longitude graticule around the centre
    /// (its extent from `zoom`, widened to show every marker), a pin per marker (the centre when
    /// there are none), the coordinates, and the `geo:` link.
    package static func map(_ block: JSONValue) -> String {
        guard let centerLatitude = block["center"]?["latitude"]?.numberValue, let centerLongitude = block["center"]?["longitude"]?.numberValue else {
            return "<p class=\"fallback\">\(lines(block["fallback"]?.stringValue ?? "(a map without a centre)"))</p>"
        }
        var markers: [(latitude: Double, longitude: Double, title: String?)] = (block["markers"]?.arrayValue ?? []).compactMap { marker in
            guard let latitude = marker["latitude"]?.numberValue, let longitude = marker["longitude"]?.numberValue else { return nil }
            return (latitude, longitude, marker["title"]?.stringValue)
        }
        if markers.isEmpty { markers = [(centerLatitude, centerLongitude, nil)] }
        let width = 360.0, height = 240.0
        // Longitude span: 360° / 2^zoom (zoom 0 = the world), widened to fit every marker.
        let zoom = max(block["zoom"]?.numberValue ?? 10, 0)
        let cosine = max(cos(centerLatitude * .pi / 180), 0.05)
        var longitudeSpan = min(360 / pow(2, zoom) * 1.5, 360)
        for marker in markers {
            longitudeSpan = max(longitudeSpan, abs(marker.longitude - centerLongitude) * 2.4, abs(marker.latitude - centerLatitude) * 2.4 / cosine * width / height)
        }
        longitudeSpan = min(max(longitudeSpan, 0.002), 360)
        let latitudeSpan = min(longitudeSpan * cosine * height / width, 180)
        let west = centerLongitude - longitudeSpan / 2, north = centerLatitude + latitudeSpan / 2
        func px(_ longitude: Double) -> Double { (longitude - west) / longitudeSpan * width }
        func py(_ latitude: Double) -> Double { (north - latitude) / latitudeSpan * height }
        let coordinatesText = CtxuiRender.coordinates(centerLatitude, centerLongitude)
        var svg = "<svg class=\"map-svg\" width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\" viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" role=\"img\" aria-label=\"\(escape("map centred on " + coordinatesText + " with \(markers.count) marker(s)"))\">"
        svg += "<rect class=\"map-bg\" x=\"0\" y=\"0\" width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\"/>"
        // Graticule at a 1, 2 or 5 × 10^k step giving about four lines each way.
        let step = niceStep(longitudeSpan / 4)
        var longitude = (west / step).rounded(.up) * step
        while longitude <= west + longitudeSpan {
            let x = px(longitude)
            svg += "<line class=\"graticule\" x1=\"\(svgNumber(x))\" y1=\"0\" x2=\"\(svgNumber(x))\" y2=\"\(svgNumber(height))\"/>"
            svg += "<text class=\"tick\" x=\"\(svgNumber(x + 2))\" y=\"\(svgNumber(height - 4))\">\(escape(degrees(longitude, positive: "E", negative: "W")))</text>"
            longitude += step
        }
        let south = north - latitudeSpan
        var latitude = (south / step).rounded(.up) * step
        while latitude <= north {
            let y = py(latitude)
            svg += "<line class=\"graticule\" x1=\"0\" y1=\"\(svgNumber(y))\" x2=\"\(svgNumber(width))\" y2=\"\(svgNumber(y))\"/>"
            svg += "<text class=\"tick\" x=\"2\" y=\"\(svgNumber(y - 2))\">\(escape(degrees(latitude, positive: "N", negative: "S")))</text>"
            latitude += step
        }
        for marker in markers {
            let x = px(marker.longitude), y = py(marker.latitude)
            let label = (marker.title.map { $0 + " " } ?? "") + CtxuiRender.coordinates(marker.latitude, marker.longitude)
            svg += "<g class=\"marker\"><title>\(escape(label))</title>"
            svg += "<path d=\"M\(svgNumber(x)),\(svgNumber(y)) l-7,-14 a8,8 0 1,1 14,0 z\" fill=\"#cf222e\" stroke=\"#fff\" stroke-width=\"1.5\"/>"
            svg += "<circle cx=\"\(svgNumber(x))\" cy=\"\(svgNumber(y - 18))\" r=\"3\" fill=\"#fff\"/>"
            if let title = marker.title {
                svg += "<text class=\"marker-label\" x=\"\(svgNumber(x + 10))\" y=\"\(svgNumber(y - 16))\">\(escape(CtxuiRender.truncate(title, width: 32)))</text>"
            }
            svg += "</g>"
        }
        svg += "</svg>"
        var caption = "<p class=\"map-caption\">⌖ " + escape(coordinatesText)
        if let zoom = block["zoom"]?.numberValue { caption += " <span class=\"muted\">(zoom \(escape(CtxuiRender.formatNumber(zoom))))</span>" }
        if let geo = block["link"]?.stringValue { caption += " · " + link(geo, title: "open in a maps app") }
        return "<div class=\"map\">" + svg + caption + "</p></div>"
    }

    /// 1, 2 or 5 × 10^k, the smallest at least `rough`.
    static func niceStep(_ rough: Double) -> Double {
        guard rough > 0, rough.isFinite else { return 1 }
        let power = pow(10, (log10(rough)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * power >= rough { return factor * power }
        return 10 * power
    }

    /// `48.5° N`, with as many decimals as the grid step needs.
    static func degrees(_ value: Double, positive: String, negative: String) -> String {
        let rounded = (abs(value) * 10_000).rounded() / 10_000
        return CtxuiRender.formatNumber(rounded) + "° " + (value < 0 ? negative : positive)
    }

    // MARK: Forms

    /// A form step as a disabled HTML form: every field with its label (`*` when required),
    /// help, the value shown, and the field's error; a form-level error on top. Unknown field
    /// kinds show their `fallback`.
    /// `values` are what was submitted; with `showDefaults` (no submission yet) fields without a
    /// value show their `default`.
    package static func form(_ form: JSONValue, values: JSONObject = [:], fieldErrors: [String: String] = [:], formError: String? = nil, showDefaults: Bool = true) -> String {
        var html = "<form class=\"ctx-form\" action=\"#\" aria-label=\"\(escape(form["title"]?.stringValue ?? "form"))\"><fieldset disabled>"
        html += "<legend>\(escape(form["title"]?.stringValue ?? "Form"))</legend>"
        if let formError { html += "<p class=\"form-error\" role=\"alert\">✗ \(escape(formError))</p>" }
        guard let fields = form["fields"]?.arrayValue else {
            html += paragraphs(form["fallbackText"]?.stringValue ?? "(a form without fields)")
            return html + "</fieldset></form>"
        }
        for field in fields {
            let id = field["id"]?.stringValue ?? ""
            html += self.field(field, value: values[id] ?? (showDefaults ? field["default"] : nil), error: fieldErrors[id])
        }
        // Errors for fields the form does not have (a provider bug worth seeing).
        let known = Set(fields.compactMap { $0["id"]?.stringValue })
        for (id, message) in fieldErrors.sorted(by: { $0.key < $1.key }) where !known.contains(id) {
            html += "<p class=\"field-error\" role=\"alert\">✗ \(escape(id)): \(escape(message))</p>"
        }
        html += "<button type=\"button\">\(escape(form["submitLabel"]?.stringValue ?? "Submit"))</button>"
        if let fallback = form["fallbackText"]?.stringValue {
            html += "<p class=\"caption\" title=\"the form's fallbackText\">\(lines(fallback))</p>"
        }
        return html + "</fieldset></form>"
    }

    /// One field showing `value` (nil: empty).
    static func field(_ field: JSONValue, value: JSONValue?, error: String?) -> String {
        let id = field["id"]?.stringValue ?? ""
        let kind = field["kind"]?.stringValue ?? ""
        let label = field["label"]?.stringValue ?? id
        let required = field["required"]?.boolValue == true
        let shown = value
        var attributes = ""
        if let placeholder = field["placeholder"]?.stringValue { attributes += " placeholder=\"\(escape(placeholder))\"" }
        if required { attributes += " required" }
        if error != nil { attributes += " aria-invalid=\"true\"" }
        var control: String
        switch kind {
        case "text":
            if let maxLength = field["maxLength"]?.intValue { attributes += " maxlength=\"\(maxLength)\"" }
            let text = shown.map { $0.stringValue ?? $0.jsonString } ?? ""
            if field["multiline"]?.boolValue == true {
                control = "<textarea rows=\"3\"\(attributes)>\(escape(text))</textarea>"
            } else {
                control = "<input type=\"text\" value=\"\(escape(text))\"\(attributes)>"
            }
        case "number":
            for name in ["min", "max", "step"] {
                if let number = field[name]?.numberValue { attributes += " \(name)=\"\(escape(CtxuiRender.formatNumber(number)))\"" }
            }
            if let number = shown?.numberValue {
                control = "<input type=\"number\" value=\"\(escape(CtxuiRender.formatNumber(number)))\"\(attributes)>"
            } else {
                control = "<input type=\"text\" value=\"\(escape(shown.map { $0.stringValue ?? $0.jsonString } ?? ""))\"\(attributes)>"
            }
            if let unit = field["unit"]?.stringValue { control += "<span class=\"unit\">\(escape(unit))</span>" }
        case "date":
            let text = shown?.stringValue ?? ""
            control = "<input type=\"\(isDate(text) || text.isEmpty ? "date" : "text")\" value=\"\(escape(text))\"\(attributes)>"
        case "datetime":
            let text = shown?.stringValue ?? ""
            if let local = dateTimeLocal(text) {
                control = "<input type=\"datetime-local\" value=\"\(escape(local))\"\(attributes)>"
                if local != text { control += "<span class=\"unit\">\(escape(text))</span>" }
            } else {
                control = "<input type=\"\(text.isEmpty ? "datetime-local" : "text")\" value=\"\(escape(text))\"\(attributes)>"
            }
        case "choice":
            control = choiceControl(field, selected: shown?.stringValue, attributes: attributes)
        case "toggle":
            control = "<input type=\"checkbox\"\(shown?.boolValue == true ? " checked" : "")\(error != nil ? " aria-invalid=\"true\"" : "")>"
        case "location":
            let latitude = shown?["latitude"]?.numberValue, longitude = shown?["longitude"]?.numberValue
            control = "<span class=\"location\"><input type=\"number\" aria-label=\"latitude\" placeholder=\"latitude\" value=\"\(latitude.map(CtxuiRender.formatNumber) ?? "")\">"
                + "<input type=\"number\" aria-label=\"longitude\" placeholder=\"longitude\" value=\"\(longitude.map(CtxuiRender.formatNumber) ?? "")\"></span>"
            if let latitude, let longitude, abs(latitude) <= 90, abs(longitude) <= 180 {
                control += "<span class=\"unit\">\(escape(CtxuiRender.coordinates(latitude, longitude)))</span>"
            }
        default:
            control = "<span class=\"fallback\" title=\"a '\(escape(kind))' field this client does not know; its fallback text\">\(escape(field["fallback"]?.stringValue ?? "(a '\(kind)' field this client cannot show)"))</span>"
        }
        var html = "<div class=\"field field-\(escape(kind))\(error != nil ? " has-error" : "")\"><label><span class=\"field-label\">\(escape(label))\(required ? "<abbr title=\"required\">*</abbr>" : "")</span>\(control)</label>"
        if let help = field["help"]?.stringValue { html += "<p class=\"help\">\(escape(help))</p>" }
        if let error { html += "<p class=\"field-error\" role=\"alert\">✗ \(escape(error))</p>" }
        return html + "</div>"
    }

    /// A choice field's control: a `select` of its options (with the value shown even when it is
    /// not one of them), or a search box for a field with a search source.
    private static func choiceControl(_ field: JSONValue, selected: String?, attributes: String) -> String {
        let options = field["options"]?.arrayValue ?? []
        var control: String
        if !options.isEmpty {
            control = "<select\(attributes)>"
            if selected == nil || !options.contains(where: { $0["value"]?.stringValue == selected }) {
                control += "<option value=\"\" selected>\(escape(selected.map { "“\($0)” (not an option)" } ?? "—"))</option>"
            }
            for option in options {
                let optionValue = option["value"]?.stringValue ?? ""
                var text = option["label"]?.stringValue ?? optionValue
                if let detail = option["detail"]?.stringValue { text += " — " + detail }
                control += "<option value=\"\(escape(optionValue))\"\(optionValue == selected ? " selected" : "")>\(escape(text))</option>"
            }
            control += "</select>"
        } else {
            control = "<input type=\"search\" value=\"\(escape(selected ?? ""))\"\(attributes)>"
        }
        if let search = field["search"] {
            let minimum = search["minQueryLength"]?.intValue ?? 0
            control += "<span class=\"unit\">search (collect/query\(minimum > 0 ? ", at least \(minimum) characters" : ""))</span>"
        }
        return control
    }

    /// `YYYY-MM-DD`.
    static func isDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == 0x2D, bytes[7] == 0x2D else { return false }
        return bytes.enumerated().allSatisfy { index, byte in index == 4 || index == 7 || (byte >= 0x30 && byte <= 0x39) }
    }

    /// An RFC 3339 date-time as an `<input type=datetime-local>` value (`YYYY-MM-DDTHH:MM[:SS]`,
    /// the offset dropped: shown next to the field), or nil.
    static func dateTimeLocal(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 16, isDate(String(decoding: bytes[0..<10], as: UTF8.self)),
              bytes[10] == 0x54 || bytes[10] == 0x74 || bytes[10] == 0x20, bytes[13] == 0x3A else { return nil }
        let digits: (Int) -> Bool = { bytes[$0] >= 0x30 && bytes[$0] <= 0x39 }
        guard digits(11), digits(12), digits(14), digits(15) else { return nil }
        var end = 16
        if bytes.count >= 19, bytes[16] == 0x3A, digits(17), digits(18) { end = 19 }
        return String(decoding: bytes[0..<10], as: UTF8.self) + "T" + String(decoding: bytes[11..<end], as: UTF8.self)
    }

    // MARK: Encodings

    /// An encoded item: representation, content type, metadata, and the data decoded when it is
    /// text (JSON pretty-printed), else its size.
    package static func encoding(_ encoded: JSONValue) -> String {
        let representation = encoded["representation"]?.stringValue ?? "?"
        let contentType = encoded["contentType"]?.stringValue ?? "?"
        var html = "<div class=\"encoding\"><p><span class=\"badge\">\(escape(representation))</span> <code>\(escape(contentType))</code>"
        let data = encoded["data"]?.stringValue.flatMap(Base64.decode)
        if let data { html += " <span class=\"muted\">\(data.count) bytes</span>" }
        html += "</p>"
        if let metadata = encoded["metadata"]?.objectValue, !metadata.isEmpty {
            html += facts(metadata.map { ["label": .string($0.key), "value": .string($0.value.stringValue ?? $0.value.jsonString)] })
        }
        if let data {
            if representation != "binary", let text = String(validating: data, as: UTF8.self) {
                let shown = (try? JSONValue(parsing: data)).map { CtxuiRender.prettyJSON($0) } ?? text
                html += "<pre class=\"mono decoded\">\(escape(String(shown.prefix(4000))))\(shown.count > 4000 ? "\n…" : "")</pre>"
            } else {
                html += "<p class=\"muted\">(binary data)</p>"
            }
        }
        return html + "</div>"
    }
}
