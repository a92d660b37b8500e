import ContextProviderKit
import ContextProtocol

/// The gallery as one static HTML page: a table of contents and a section per provider
/// (`id="provider-<id>"`) with its `providers/list` entry, each form step (with the error an
/// invalid value got), the chip, detail, description and encoding of the item it made, each
/// rendered by ``HTMLRender`` with its raw JSON beside it. Inline CSS only, no script, nothing
/// loaded from anywhere (a Content-Security-Policy says so to the browser as well).
package enum GalleryPage {
    /// The HTML element id of a provider's section.
    package static func sectionID(_ provider: GalleryProvider, index: Int) -> String {
        if let id = provider.entry["id"]?.stringValue { return "provider-" + sanitizeID(id) }
        return "provider-manifest-\(index + 1)"
    }

    /// An id with only letters, digits, `.`, `-` and `_` (others become `_`).
    static func sanitizeID(_ id: String) -> String {
        String(id.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") ? $0 : "_" })
    }

    /// The whole page.
    package static func render(_ data: GalleryData) -> String {
        let host = (data.serverInfo["name"]?.stringValue ?? "context-host") + " " + (data.serverInfo["version"]?.stringValue ?? "")
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
            <link rel="icon" href="data:,">
            <title>Provider gallery — \(HTMLRender.escape(host))</title>
            <style>\(css)</style>
            </head>
            <body>
            <header class="page"><h1>Provider gallery</h1>
            <p class="muted">Every provider of \(HTMLRender.escape(host)) walked through a sample flow over the public protocol \
            (providers/list, collect/*, items/*), rendered as a native client would, with the raw JSON beside each view. \
            Made \(HTMLRender.escape(data.generatedAt)) by <code>context-host gallery</code>.</p></header>

            """
        html += "<nav class=\"toc\"><h2>Providers (\(data.providers.count))</h2><ol>"
        for (index, provider) in data.providers.enumerated() {
            let status = provider.available ? (provider.problems.isEmpty ? "ok" : "with problems") : "unavailable"
            html += "<li><a href=\"#\(HTMLRender.escape(sectionID(provider, index: index)))\">\(HTMLRender.escape(provider.title))</a> "
                + "<span class=\"status status-\(status == "ok" ? "ok" : status == "unavailable" ? "off" : "warn")\">\(status)</span></li>"
        }
        html += "</ol></nav><main>"
        for (index, provider) in data.providers.enumerated() {
            html += section(provider, index: index)
        }
        if data.providers.isEmpty {
            html += "<p class=\"problem\">The host lists no providers: check --manifests.</p>"
        }
        return html + "</main></body></html>\n"
    }

    /// One provider's section.
    static func section(_ provider: GalleryProvider, index: Int) -> String {
        let entry = provider.entry
        var html = "<section class=\"provider\" id=\"\(HTMLRender.escape(sectionID(provider, index: index)))\">"
        html += "<header><h2>" + HTMLRender.icon(entry["iconName"]?.stringValue) + " " + HTMLRender.escape(provider.title) + "</h2><p class=\"meta\">"
        var meta: [String] = []
        if let id = entry["id"]?.stringValue { meta.append("<code>\(HTMLRender.escape(id))</code>") }
        if let version = entry["version"]?.stringValue { meta.append("version \(HTMLRender.escape(version))") }
        if let status = entry["status"]?.stringValue { meta.append("status <b>\(HTMLRender.escape(status))</b>") }
        if let collection = entry["collection"]?.stringValue { meta.append("collection \(HTMLRender.escape(collection))") }
        if let isolation = entry["effectiveIsolation"]?.stringValue ?? entry["isolation"]?.stringValue { meta.append(HTMLRender.escape(isolation)) }
        if let priority = entry["priority"]?.numberValue { meta.append("priority \(CtxuiRender.formatNumber(priority))") }
        if let permissions = entry["permissions"]?.arrayValue, !permissions.isEmpty {
            meta.append("needs " + HTMLRender.escape(permissions.compactMap(\.stringValue).joined(separator: ", ")))
        }
        if entry["networkAccess"]?.stringValue == "raw" { meta.append("<b>raw network access</b> (any host)") }
        if let origins = entry["origins"]?.arrayValue, !origins.isEmpty {
            let shown = origins.map { origin in
                (origin["origin"]?.stringValue ?? "setting \(origin["setting"]?.stringValue ?? "?") (unset)")
                    + (origin["privateAddresses"]?.boolValue == true ? " (private addresses)" : "")
            }
            meta.append("fetches from " + HTMLRender.escape(shown.joined(separator: ", ")))
        }
        if let secrets = entry["secrets"]?.objectValue, secrets.keys.count > 0 {
            meta.append("secrets " + HTMLRender.escape(secrets.keys.sorted().map { "\($0) \(secrets[$0]?.boolValue == true ? "set" : "not set")" }.joined(separator: ", ")))
        }
        html += meta.joined(separator: " · ") + "</p></header>"
        if let reason = provider.unavailableReason {
            html += "<p class=\"unavailable\"><b>Unavailable:</b> \(HTMLRender.lines(reason))</p>"
        }
        if !provider.problems.isEmpty {
            html += "<ul class=\"problems\">" + provider.problems.map { "<li>\(HTMLRender.lines($0))</li>" }.joined() + "</ul>"
        }
        html += pane("Listing", method: ProvidersListRequest.method, rendered: listing(entry), raw: entry)
        for (stepIndex, step) in provider.steps.enumerated() {
            var rendered = HTMLRender.form(step.form, values: step.invalidValues ?? step.acceptedValues ?? [:], fieldErrors: step.fieldErrors, formError: step.formError,
                                         showDefaults: step.invalidValues == nil && step.acceptedValues == nil)
            if let what = step.invalidWhat {
                rendered = "<p class=\"caption\">Shown after submitting an invalid value (\(HTMLRender.escape(what))):</p>" + rendered
            }
            for (fieldID, search) in step.searches.sorted(by: { $0.key < $1.key }) {
                let labels = search.options.prefix(5).map { $0["label"]?.stringValue ?? $0["value"]?.stringValue ?? "?" }
                rendered += "<p class=\"caption\">collect/query “\(HTMLRender.escape(search.query))” for <code>\(HTMLRender.escape(fieldID))</code>: "
                    + HTMLRender.escape(labels.joined(separator: ", ")) + (search.options.count > 5 ? ", …" : "") + "</p>"
            }
            if let accepted = step.acceptedValues {
                rendered += "<p class=\"caption\">Then submitted, and accepted:</p>" + HTMLRender.json(.object(accepted))
            }
            var raw: JSONObject = ["form": step.form]
            if let invalid = step.invalidValues {
                raw["invalidValues"] = .object(invalid)
                raw["fieldErrors"] = GalleryStep.json(step.fieldErrors)
            }
            let title = provider.steps.count > 1 ? "Form, step \(stepIndex + 1)" : "Form"
            html += pane(title, method: stepIndex == 0 ? CollectStartRequest.method : "collect/submit → step", rendered: rendered, raw: .object(raw))
        }
        if let item = provider.item {
            html += pane("Item", method: provider.steps.isEmpty ? CollectMakeRequest.method : "collect/submit → item",
                         rendered: "<p>\(HTMLRender.escape(item["displayName"]?.stringValue ?? "?")) <span class=\"muted\">type <code>\(HTMLRender.escape(item["type"]?.stringValue ?? "?"))</code></span></p>",
                         raw: item)
        }
        if let chip = provider.chip {
            var rendered = "<div class=\"composer\">" + HTMLRender.chip(chip) + "</div>"
            if let label = chip["accessibilityLabel"]?.stringValue { rendered += "<p class=\"caption\">Screen reader: “\(HTMLRender.escape(label))”</p>" }
            html += pane("Chip", method: ItemsPreviewRequest.method, rendered: rendered, raw: chip)
        }
        if let detail = provider.detail {
            html += pane("Detail", method: ItemsDetailRequest.method, rendered: HTMLRender.detail(detail), raw: detail)
        }
        if let description = provider.description {
            html += pane("Description", method: ItemsDescribeRequest.method, rendered: "<p>\(HTMLRender.escape(description))</p>", raw: ["text": .string(description)])
        }
        if let encoding = provider.encoding {
            html += pane("Encoding", method: ItemsEncodeRequest.method, rendered: HTMLRender.encoding(encoding), raw: encoding)
        }
        let failed = provider.exchanges.filter { $0.error != nil }
        if !failed.isEmpty {
            html += pane("Errors", method: "host answers", rendered: "<ul class=\"problems\">" + failed.map { exchange in
                "<li><code>\(HTMLRender.escape(exchange.method))</code>: \(HTMLRender.escape(exchange.error?.message ?? ""))</li>"
            }.joined() + "</ul>", raw: .array(failed.map(\.json)))
        }
        return html + "</section>"
    }

    /// The picker line a client shows for the provider.
    static func listing(_ entry: JSONValue) -> String {
        let line = CtxuiRender.providerLine(entry)
        return "<p class=\"picker\(line.enabled ? "" : " disabled")\">" + HTMLRender.icon(entry["iconName"]?.stringValue) + " "
            + HTMLRender.escape(line.label) + (line.note.map { " <span class=\"muted\">— \(HTMLRender.escape($0))</span>" } ?? "") + "</p>"
    }

    /// A view and its raw JSON side by side.
    static func pane(_ title: String, method: String, rendered: String, raw: JSONValue) -> String {
        "<div class=\"pane\"><h3>\(HTMLRender.escape(title)) <span class=\"method\">\(HTMLRender.escape(method))</span></h3>"
            + "<div class=\"pane-body\"><div class=\"rendered\">\(rendered)</div>"
            + "<div class=\"raw\"><div class=\"raw-label\">JSON</div>\(HTMLRender.json(raw))</div></div></div>"
    }

    package static let css = """
        :root{color-scheme:light;--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#f6f8fa;--accent:#0969da}
        *{box-sizing:border-box}
        body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
        header.page{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--bg)}
        h1{margin:0 0 4px;font-size:22px}
        nav.toc{padding:8px 24px;border-bottom:1px solid var(--line)}
        nav.toc h2{font-size:14px;margin:4px 0}
        nav.toc ol{margin:0;padding-left:20px;columns:2}
        main{padding:8px 24px 48px}
        section.provider{border:1px solid var(--line);border-radius:8px;margin:20px 0;padding:0 16px 12px}
        section.provider>header h2{margin:12px 0 2px;font-size:18px}
        .meta{margin:0 0 8px;color:var(--muted);font-size:12px}
        .pane{border-top:1px solid var(--line);padding-top:6px;margin-top:10px}
        .pane h3{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
        .method{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;text-transform:none;letter-spacing:0;background:var(--bg);border-radius:4px;padding:1px 5px;margin-left:6px}
        .pane-body{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px;align-items:start}
        .raw{min-width:0}
        .raw-label{font-size:11px;color:var(--muted)}
        pre{margin:0;white-space:pre-wrap;word-break:break-word}
        pre.json{font:11px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px;max-height:320px;overflow:auto}
        pre.decoded{max-height:320px;overflow:auto}
        pre.mono{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);padding:6px 8px;border-radius:6px}
        code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
        .muted{color:var(--muted)}
        .caption{color:var(--muted);font-size:12px;margin:4px 0}
        .unavailable{background:#fff8c5;border:1px solid #d4a72c66;border-radius:6px;padding:8px}
        ul.problems{background:#ffebe9;border:1px solid #ff818266;border-radius:6px;padding:8px 8px 8px 28px;margin:8px 0}
        .problem{color:#cf222e}
        .status{font-size:11px;border-radius:10px;padding:0 6px;border:1px solid var(--line)}
        .status-ok{color:#1a7f37}.status-warn{color:#9a6700}.status-off{color:var(--muted)}
        .composer{background:var(--bg);border:1px solid var(--line);border-radius:10px;padding:10px}
        .chip{display:inline-flex;align-items:center;gap:6px;border-radius:999px;padding:3px 10px 3px 6px;border:1px solid var(--line);background:#fff;max-width:100%}
        .icon{display:inline-flex;align-items:center;justify-content:center;width:20px;height:20px;border-radius:50%;background:var(--bg);vertical-align:middle}
        .icon svg{display:block}
        .chip-title{font-weight:600;white-space:nowrap;flex-shrink:0}
        .chip-subtitle{color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0}
        .chip .thumb{width:20px;height:20px;border-radius:4px;object-fit:cover}
        .tone-good{color:#1a7f37;border-color:#1a7f3766}.tone-warning{color:#9a6700;border-color:#9a670066}.tone-attention{color:#cf222e;border-color:#cf222e66}
        .chip.tone-neutral{color:var(--fg)}
        .chip .chip-title{color:inherit}
        .sparkline{vertical-align:middle}
        .detail-title{font-size:16px;margin:0 0 6px}
        .block{margin:8px 0}
        .block p{margin:4px 0}
        dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
        dl.facts>div{display:contents}
        dl.facts dt{color:var(--muted)}
        dl.facts dd{margin:0}
        dd.tone-neutral{color:var(--fg)}
        .chart-svg,.map-svg{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
        .chart-svg .axis{stroke:#8c959f;stroke-width:1}
        .chart-svg .grid{stroke:#eaeef2;stroke-width:1}
        .chart-svg .threshold{stroke-width:1.5;stroke-dasharray:5 4}
        svg .tick{font:10px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#57606a}
        svg .threshold-label{paint-order:stroke;stroke:#fff;stroke-width:3px}
        ul.legend{list-style:none;padding:0;margin:4px 0;display:flex;gap:12px;font-size:12px}
        .swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
        .map-bg{fill:#eaf3fb}
        .graticule{stroke:#9ec5e8;stroke-width:1}
        .marker-label{font:11px system-ui,sans-serif;fill:#1f2328;paint-order:stroke;stroke:#fff;stroke-width:3px}
        .map-caption{font-size:12px}
        .url{font-size:11px;word-break:break-all}
        figure{margin:0}figure img{max-width:100%;border-radius:6px}
        .fallback{font-style:italic}
        .refused{color:var(--muted)}
        .markdown h4,.markdown h5,.markdown h6{margin:8px 0 4px}
        blockquote{margin:4px 0;padding-left:10px;border-left:3px solid var(--line);color:var(--muted)}
        form.ctx-form fieldset{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:0}
        form.ctx-form legend{font-weight:600;padding:0 4px}
        .field{margin:8px 0}
        .field label{display:flex;flex-direction:column;gap:3px}
        .field-label{font-weight:600;font-size:13px}
        .field-label abbr{color:#cf222e;text-decoration:none;margin-left:2px}
        .field input[type=text],.field input[type=search],.field input[type=number],.field input[type=date],.field input[type=datetime-local],.field textarea,.field select{font:inherit;padding:4px 6px;border:1px solid var(--line);border-radius:6px;background:#fff;color:var(--fg);max-width:100%}
        .field textarea{width:100%}
        .field label>input[type=checkbox]{align-self:flex-start}
        .field.has-error input,.field.has-error textarea,.field.has-error select{border-color:#cf222e}
        .location{display:flex;gap:6px}
        .unit{font-size:12px;color:var(--muted)}
        .help{font-size:12px;color:var(--muted);margin:2px 0}
        .field-error,.form-error{color:#cf222e;font-size:12px;margin:2px 0}
        form.ctx-form button{margin-top:6px;font:inherit;padding:4px 12px;border-radius:6px;border:1px solid var(--line);background:var(--bg)}
        .picker{margin:0}.picker.disabled{color:var(--muted)}
        .badge{font-size:11px;border-radius:4px;padding:1px 6px;background:#ddf4ff;color:#0969da}
        @media (max-width:800px){.pane-body{grid-template-columns:1fr}nav.toc ol{columns:1}}
        """
}
