import ContextHost
import ContextProtocol

/// A provider's detail document as MCP content: Markdown text (facts as a table, lists, links,
/// `geo:` links for maps, a one-line summary of each chart) plus each image as image content.
enum DetailMarkdown {
    /// The Markdown, and the images (base64 data and MIME type) in the order they appear.
    static func render(_ detail: ContextDetail) -> (markdown: String, images: [(data: String, mimeType: String, alt: String)]) {
        var parts: [String] = ["# " + escapeLine(detail.title)]
        var images: [(String, String, String)] = []
        for block in detail.blocks {
            switch block {
            case .text(let text):
                switch text.style {
                case .heading?: parts.append("## " + escapeLine(text.text))
                case .markdown?: parts.append(text.text)
                case .monospace?: parts.append("```\n" + text.text.replacingAll("```", with: "` ` `") + "\n```")
                case .caption?: parts.append("_" + escapeLine(text.text) + "_")
                case .body?, nil: parts.append(escape(text.text))
                }
            case .facts(let facts):
                guard !facts.facts.isEmpty else { continue }
                var table = ["| | |", "|---|---|"]
                for fact in facts.facts { table.append("| \(cell(fact.label)) | \(cell(fact.value)) |") }
                parts.append(table.joined(separator: "\n"))
            case .list(let list):
                parts.append(list.items.enumerated().map { index, item in
                    (list.ordered == true ? "\(index + 1). " : "- ") + escapeLine(item)
                }.joined(separator: "\n"))
            case .link(let link):
                parts.append("[\(escapeLine(link.title))](\(link.url.replacingAll(")", with: "%29").replacingAll(" ", with: "%20")))")
            case .map(let map):
                let title = map.markers.first?.title ?? map.fallback ?? "Map"
                parts.append("[\(escapeLine(title))](\(map.center.geoURI))" + (map.link.isEmpty ? "" : " ([map](\(map.link)))"))
            case .chart(let chart):
                parts.append(chartSummary(chart))
            case .image(let image):
                if let (mimeType, data) = dataURI(image.dataURI) {
                    images.append((data, mimeType, image.alt))
                    parts.append("_Image: \(escapeLine(image.alt))_")
                } else {
                    parts.append("_Image: \(escapeLine(image.alt))_")
                }
            }
        }
        return (parts.joined(separator: "\n\n"), images)
    }

    /// One line per chart: its kind, series, their ranges and last values.
    static func chartSummary(_ chart: ChartBlock) -> String {
        let unit = chart.unit.map { " \($0)" } ?? ""
        let series = chart.series.map { series -> String in
            let values = series.points.map(\.y).filter(\.isFinite)
            guard let first = series.points.first, let last = series.points.last, let low = values.min(), let high = values.max() else {
                return "\(series.name): no points"
            }
            return "\(series.name): \(series.points.count) points from \(first.x) to \(last.x), "
                + "\(FormMapping.format(low))–\(FormMapping.format(high))\(unit), last \(FormMapping.format(last.y))\(unit)"
        }
        let kind = chart.kind.rawValue.prefix(1).uppercased() + chart.kind.rawValue.dropFirst()
        let summary = series.isEmpty ? (chart.fallback ?? "empty") : series.joined(separator: "; ")
        return "_\(kind) chart_ — \(summary)"
    }

    /// `data:<type>;base64,<data>` split into the type and the base64 text.
    static func dataURI(_ uri: String) -> (String, String)? {
        guard uri.hasPrefix("data:"), let comma = uri.firstIndex(of: ",") else { return nil }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
        guard header.hasSuffix(";base64") else { return nil }
        let type = String(header.dropLast(7))
        return (type.isEmpty ? "application/octet-stream" : type, String(uri[uri.index(after: comma)...]))
    }

    private static func cell(_ text: String) -> String {
        escapeLine(text).replacingAll("|", with: "\\|")
    }

    /// Plain text made safe as Markdown: the characters that would start markup are escaped.
    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\`*_[]<>#|".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    private static func escapeLine(_ text: String) -> String {
        escape(text).replacingAll("\n", with: " ").replacingAll("\r", with: " ")
    }
}
