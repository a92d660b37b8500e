import ContextClient
import ContextProviderKit
import Testing

/// The ctxui HTML renderer and the gallery page: pure functions, no host, no browser.
@Suite("ctxui HTML renderer")
struct HTMLRenderTests {
    static let script = "<script>alert(\"x\")</script>"
    static let escapedScript = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"

    /// Every `<` in `html` opens one of the tags the renderer writes itself.
    static func onlyKnownTags(_ html: String) -> [String] {
        let allowed: Set<String> = [
            "span", "img", "svg", "polyline", "article", "h4", "h5", "h6", "p", "br", "pre", "div", "dl", "dt", "dd", "ul", "ol", "li",
            "figure", "figcaption", "a", "strong", "em", "code", "blockquote", "line", "text", "rect", "circle", "title", "g", "path",
            "form", "fieldset", "legend", "label", "abbr", "input", "textarea", "select", "option", "button", "b",
        ]
        var unknown: [String] = []
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            let name = rest[rest.index(after: open)...].drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }
            if !allowed.contains(name.lowercased()) { unknown.append(String(name)) }
            rest = rest[rest.index(after: open)...]
        }
        return unknown
    }

    @Test("provider strings are shown as text everywhere: chip, detail blocks, markdown, form")
    func escapesEverything() {
        let hostile = Self.script + " \" onmouseover=\"alert(1)\" ' &amp;"
        let chip: JSONValue = ["ctxui": 1, "icon": .string(hostile), "title": .string(hostile), "subtitle": .string(hostile),
                               "tone": "good", "accessibilityLabel": .string(hostile), "fallbackText": .string(hostile)]
        let detail: JSONValue = ["ctxui": 1, "title": .string(hostile), "fallbackText": "x", "blocks": [
            ["type": "text", "text": .string(hostile)],
            ["type": "text", "text": .string("**\(hostile)** `\(hostile)` *\(hostile)*"), "style": "markdown"],
            ["type": "text", "text": .string(hostile), "style": "monospace"],
            ["type": "facts", "facts": [["label": .string(hostile), "value": .string(hostile)]]],
            ["type": "list", "items": [.string(hostile)]],
            ["type": "chart", "kind": "line", "unit": .string(hostile), "series": [["name": .string(hostile), "points": [["x": .string(hostile), "y": 1], ["x": "b", "y": 2]]]],
             "thresholds": [["label": .string(hostile), "value": 1.5]]],
            ["type": "map", "center": ["latitude": 1, "longitude": 2], "markers": [["latitude": 1, "longitude": 2, "title": .string(hostile)]], "link": "geo:1,2"],
            ["type": "image", "dataURI": "data:image/png;base64,iVBORw0KGgo=", "alt": .string(hostile)],
            ["type": "link", "url": "https://example.com/?a=1&b=2", "title": .string(hostile)],
            ["type": .string(hostile), "fallback": .string(hostile)],
        ]]
        let form: JSONValue = ["ctxui": 1, "stepId": "s", "title": .string(hostile), "submitLabel": .string(hostile), "fallbackText": .string(hostile), "fields": [
            ["id": "t", "kind": "text", "label": .string(hostile), "placeholder": .string(hostile), "help": .string(hostile)],
            ["id": "c", "kind": "choice", "label": "C", "options": [["value": .string(hostile), "label": .string(hostile), "detail": .string(hostile)]]],
            ["id": "u", "kind": .string(hostile), "label": "U", "fallback": .string(hostile)],
        ]]
        let html = HTMLRender.chip(chip) + HTMLRender.detail(detail)
            + HTMLRender.form(form, values: ["t": .string(hostile)], fieldErrors: ["t": hostile, "zz": hostile], formError: hostile)
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("onmouseover=\"alert"))
        #expect(html.contains(Self.escapedScript))
        #expect(html.contains("&amp;amp;"))
        #expect(Self.onlyKnownTags(html).isEmpty, "unexpected tags: \(Self.onlyKnownTags(html))")
        #expect(HTMLRender.escape(Self.script + "'&") == Self.escapedScript + "&#39;&amp;")
    }

    @Test("links: only http, https, mailto and geo become links; images: only raster data: URIs in Base64")
    func urls() {
        #expect(HTMLRender.link("https://example.com/a?b=1&c=2", title: "Ex").contains("<a href=\"https://example.com/a?b=1&amp;c=2\""))
        #expect(HTMLRender.link("geo:48.8,2.3", title: "Map").contains("<a href=\"geo:48.8,2.3\""))
        #expect(HTMLRender.link("mailto:a@example.com", title: "Mail").contains("<a href="))
        for bad in ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<b>x</b>",
                    "vbscript:x", "file:///etc/passwd", "//evil.example.com/x", "https://ok.example.com/\nx"] {
            let html = HTMLRender.link(bad, title: "T")
            #expect(!html.contains("<a "), "\(bad) became a link")
            #expect(html.contains("not a link"))
        }
        #expect(HTMLRender.isSafeImage("data:image/png;base64,iVBORw0KGgo="))
        #expect(HTMLRender.isSafeImage("data:image/webp;base64,UklGRg=="))
        #expect(HTMLRender.isSafeImage("data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="))  // only ever an <img> source
        #expect(!HTMLRender.isSafeImage("data:image/svg+xml,<svg onload=alert(1)>"))  // not Base64
        #expect(!HTMLRender.isSafeImage("data:image/png;base64,AAAA\" onerror=\"alert(1)"))
        #expect(!HTMLRender.isSafeImage("https://example.com/x.png"))
        #expect(!HTMLRender.isSafeImage("data:text/html;base64,PGI+"))
        let refused = HTMLRender.block(["type": "image", "dataURI": "data:image/bmp;base64,Qk0=", "alt": "logo"])
        #expect(!refused.contains("<img"))
        #expect(refused.contains("logo"))
        let shown = HTMLRender.block(["type": "image", "dataURI": "data:image/png;base64,iVBORw0KGgo=", "alt": "dot"])
        #expect(shown.contains("<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"dot\">"))
        let thumb = HTMLRender.chip(["icon": "x", "title": "T", "fallbackText": "T", "thumbnail": "data:image/svg+xml,<svg onload=alert(1)>"])
        #expect(!thumb.contains("<img"))
        #expect(!thumb.contains("<svg onload"))
    }

    @Test("a chip: tone class, icon glyph with its name, subtitle, sparkline polyline; no title shows fallbackText")
    func chip() throws {
        let html = HTMLRender.chip(["ctxui": 1, "icon": "heart.fill", "title": "12,908 steps", "subtitle": "goal 10,000", "tone": "good",
                                    "accessory": ["kind": "sparkline", "values": [1, 3, 2]],
                                    "accessibilityLabel": "Steps: 12,908", "fallbackText": "Steps 12,908"])
        #expect(html.contains("class=\"chip tone-good\""))
        #expect(html.contains("aria-label=\"Steps: 12,908\""))
        #expect(html.contains("title=\"heart.fill\""))
        #expect(html.contains("<span class=\"chip-title\">12,908 steps</span>"))
        #expect(html.contains("<span class=\"chip-subtitle\">goal 10,000</span>"))
        let points = try #require(html.firstMatch(of: /points="([^"]*)"/)?.1)
        #expect(points.split(separator: " ").count == 3)
        #expect(points == "1.5,14.5 28,1.5 54.5,8")  // oldest first, highest value at the top
        #expect(HTMLRender.chip(["fallbackText": "Only text"]).contains(">Only text</span>"))
    }

    @Test("a line chart is an SVG polyline per series with axes, unit and dashed threshold lines")
    func lineChart() throws {
        let html = HTMLRender.chart(["type": "chart", "kind": "line", "unit": "USD", "series": [
            ["name": "Close", "points": [["x": "2024-01-01", "y": 10], ["x": "2024-01-02", "y": 20], ["x": "2024-01-03", "y": 15]]],
            ["name": "Open", "points": [["x": "2024-01-01", "y": 11], ["x": "2024-01-02", "y": 19], ["x": "2024-01-03", "y": 14]]],
        ], "thresholds": [["label": "Goal", "value": 18, "tone": "good"]]])
        #expect(html.contains("<svg class=\"chart-svg\""))
        #expect(html.ranges(of: "<polyline").count == 2)
        #expect(html.ranges(of: "<circle").count == 6)
        #expect(html.contains("<line class=\"threshold\""))
        #expect(html.contains(">Goal 18 USD</text>"))
        #expect(html.contains(">USD</text>"))
        #expect(html.contains(">2024-01-01</text>") && html.contains(">2024-01-03</text>"))
        #expect(html.contains("<title>2024-01-02: 20 USD</title>"))
        #expect(html.contains("Close") && html.contains("class=\"legend\""))
        // The highest point is above (smaller y than) the lowest.
        let first = try #require(html.firstMatch(of: #/<polyline fill="none" stroke="[^"]*" stroke-width="2" stroke-linejoin="round" points="([^"]*)"/#)?.1)
        let ys = first.split(separator: " ").compactMap { Double($0.split(separator: ",")[1]) }
        #expect(ys.count == 3 && ys[1] < ys[2] && ys[2] < ys[0])
    }

    @Test("a bar chart draws one rect per point from zero; a sparkline chart is a small polyline; no data says so")
    func barChart() {
        let bars = HTMLRender.chart(["type": "chart", "kind": "bar", "series": [["name": "Steps", "points": [["x": "Mon", "y": 5], ["x": "Tue", "y": -2], ["x": "Wed", "y": 8]]]]])
        #expect(bars.ranges(of: "<rect ").count == 3)
        #expect(bars.contains("<title>Tue: -2</title>"))
        let spark = HTMLRender.chart(["type": "chart", "kind": "sparkline", "series": [["name": "", "points": [["x": "a", "y": 1], ["x": "b", "y": 2]]]]])
        #expect(spark.contains("class=\"sparkline\""))
        #expect(!spark.contains("chart-svg"))
        #expect(HTMLRender.chart(["type": "chart", "kind": "line", "series": []]).contains("no data"))
    }

    @Test("a map is an SVG graticule with a pin at the marker, the coordinates and the geo: link")
    func map() throws {
        let html = HTMLRender.map(["type": "map", "center": ["latitude": 48.8584, "longitude": 2.2945], "zoom": 12,
                                   "markers": [["latitude": 48.8584, "longitude": 2.2945, "title": "Eiffel Tower"]], "link": "geo:48.8584,2.2945"])
        #expect(html.contains("<svg class=\"map-svg\""))
        #expect(html.contains("class=\"graticule\""))
        #expect(html.ranges(of: "class=\"graticule\"").count >= 4)
        #expect(html.contains("<a href=\"geo:48.8584,2.2945\""))
        #expect(html.contains("48.85840° N, 2.29450° E"))
        #expect(html.contains(">Eiffel Tower</text>"))
        // The marker sits at the centre of the 360×240 grid.
        let pin = try #require(html.firstMatch(of: #/<path d="M([0-9.]+),([0-9.]+) /#))
        #expect(Double(pin.1) == 180 && Double(pin.2) == 120)
        // A marker away from the centre widens the grid so it stays inside.
        let wide = HTMLRender.map(["type": "map", "center": ["latitude": 0, "longitude": 0], "zoom": 15,
                                   "markers": [["latitude": 0, "longitude": 10]], "link": "geo:0,0"])
        let far = try #require(wide.firstMatch(of: #/<path d="M([0-9.]+),([0-9.]+) /#))
        let x = try #require(Double(far.1))
        #expect(x > 180 && x < 360)
        // Without markers the centre gets the pin; without a centre the fallback shows.
        #expect(HTMLRender.map(["type": "map", "center": ["latitude": 10, "longitude": 20], "link": "geo:10,20"]).contains("<path d=\"M180,120 "))
        #expect(HTMLRender.map(["type": "map", "link": "geo:1,2", "fallback": "Somewhere"]).contains("Somewhere"))
    }

    @Test("unknown block types and field kinds show their fallback")
    func fallbacks() {
        let block = HTMLRender.block(["type": "hologram", "fallback": "A 3-D view of the item"])
        #expect(block.contains("A 3-D view of the item"))
        #expect(block.contains("block-unknown"))
        #expect(HTMLRender.block(["type": "hologram"]).contains("cannot show"))
        let form = HTMLRender.form(["ctxui": 1, "stepId": "s", "title": "F", "fallbackText": "F", "fields": [
            ["id": "x", "kind": "colour", "label": "Colour", "fallback": "Type a colour name"],
        ]])
        #expect(form.contains("Type a colour name"))
        let detail = HTMLRender.detail(["ctxui": 1, "title": "T", "fallbackText": "Only the fallback text", "blocks": []])
        #expect(detail.contains("Only the fallback text"))
        #expect(HTMLRender.form(["ctxui": 1, "stepId": "s", "title": "F", "fallbackText": "No fields here"]).contains("No fields here"))
    }

    @Test("markdown: headings, paragraphs, lists, code, emphasis; markers inside words stay text")
    func markdown() {
        let html = HTMLRender.markdown("# Title\n\nMilk, eggs and **bread**.\nAlso *coffee* and `a<b`.\n\n- one\n- two\n\n1. first\n2. second\n\n```\nlet x = \"<y>\"\n```\nsnake_case_name and 2 * 3")
        #expect(html.contains("<h4>Title</h4>"))
        #expect(html.contains("<p>Milk, eggs and <strong>bread</strong>.<br>Also <em>coffee</em> and <code>a&lt;b</code>.</p>"))
        #expect(html.contains("<ul><li>one</li><li>two</li></ul>"))
        #expect(html.contains("<ol><li>first</li><li>second</li></ol>"))
        #expect(html.contains("<pre class=\"mono\">let x = &quot;&lt;y&gt;&quot;</pre>"))
        #expect(html.contains("snake_case_name and 2 * 3"))
        #expect(HTMLRender.markdown("an ** unpaired").contains("an ** unpaired"))
    }

    @Test("a form: every kind as a disabled control with its value, required mark, help and error")
    func form() {
        let form: JSONValue = ["ctxui": 1, "stepId": "s", "title": "Everything", "submitLabel": "Attach", "fallbackText": "All kinds", "fields": [
            ["id": "title", "kind": "text", "label": "Title", "required": true, "maxLength": 20, "help": "Short"],
            ["id": "body", "kind": "text", "label": "Body", "multiline": true],
            ["id": "n", "kind": "number", "label": "Count", "min": 1, "max": 9, "unit": "kg"],
            ["id": "d", "kind": "date", "label": "Day"],
            ["id": "t", "kind": "datetime", "label": "When"],
            ["id": "c", "kind": "choice", "label": "Pick", "options": [["value": "a", "label": "A"], ["value": "b", "label": "B"]]],
            ["id": "s", "kind": "choice", "label": "Find", "search": ["minQueryLength": 2]],
            ["id": "on", "kind": "toggle", "label": "On", "default": true],
            ["id": "where", "kind": "location", "label": "Where"],
        ]]
        let html = HTMLRender.form(form, values: [
            "title": "", "body": "x\ny", "n": 12, "d": "2026-01-15", "t": "2026-01-15T10:30:00+02:00", "c": "b", "s": "zurich",
            "where": ["latitude": 47.37, "longitude": 8.54],
        ], fieldErrors: ["title": "Title is required.", "n": "Count must be at most 9."], showDefaults: false)
        #expect(html.contains("<fieldset disabled>"))
        #expect(html.contains("<legend>Everything</legend>"))
        #expect(html.contains("<abbr title=\"required\">*</abbr>"))
        #expect(html.contains("<p class=\"field-error\" role=\"alert\">✗ Title is required.</p>"))
        #expect(html.contains("<p class=\"field-error\" role=\"alert\">✗ Count must be at most 9.</p>"))
        #expect(html.contains("<textarea rows=\"3\">x\ny</textarea>"))
        #expect(html.contains("<input type=\"number\" value=\"12\" min=\"1\" max=\"9\" aria-invalid=\"true\">") || html.contains("type=\"number\" value=\"12\""))
        #expect(html.contains("<span class=\"unit\">kg</span>"))
        #expect(html.contains("<input type=\"date\" value=\"2026-01-15\">"))
        #expect(html.contains("<input type=\"datetime-local\" value=\"2026-01-15T10:30:00\">"))
        #expect(html.contains("<option value=\"b\" selected>B</option>"))
        #expect(html.contains("<input type=\"search\" value=\"zurich\">"))
        #expect(html.contains("at least 2 characters"))
        #expect(!html.contains("checked"))  // a submission without the toggle: unchecked, not the default
        #expect(html.contains("47.37000° N, 8.54000° E"))
        #expect(html.contains("<button type=\"button\">Attach</button>"))
        // Before any submission, defaults show.
        #expect(HTMLRender.form(form).contains("<input type=\"checkbox\" checked>"))
        // A value that is not of the field's type is shown as text, not dropped.
        #expect(HTMLRender.form(form, values: ["n": "lots", "d": "15/01/2026"]).contains("value=\"lots\""))
        #expect(HTMLRender.form(form, values: ["d": "15/01/2026"]).contains("<input type=\"text\" value=\"15/01/2026\">"))
    }

    @Test("an encoding shows representation, content type, metadata and the decoded JSON")
    func encoding() {
        let html = HTMLRender.encoding(["representation": "json", "contentType": "application/json",
                                        "data": .string(Base64.encode(Array(#"{"title":"<b>"}"#.utf8))), "metadata": ["title": "<b>"]])
        #expect(html.contains("<span class=\"badge\">json</span>"))
        #expect(html.contains("<code>application/json</code>"))
        #expect(html.contains("15 bytes"))
        #expect(html.contains("&quot;title&quot;: &quot;&lt;b&gt;&quot;"))
        #expect(!html.contains("<b>"))
    }
}

@Suite("gallery page")
struct GalleryPageTests {
    static func data() -> GalleryData {
        var note = GalleryProvider(entry: ["id": "com.example.note", "title": "Note <script>", "iconName": "note.text", "status": "loaded",
                                           "available": true, "collection": "form", "priority": 50])
        note.steps = [GalleryStep(form: ["ctxui": 1, "stepId": "note", "title": "New Note", "fallbackText": "x",
                                         "fields": [["id": "title", "kind": "text", "label": "Title", "required": true]]],
                                  invalidValues: [:], invalidWhat: "required field 'title' left out",
                                  fieldErrors: ["title": "Title is required."], acceptedValues: ["title": "Groceries"])]
        note.item = ["id": "1", "providerId": "com.example.note", "type": "note", "displayName": "Groceries", "content": [:]]
        note.chip = ["ctxui": 1, "icon": "note.text", "title": "Groceries", "fallbackText": "Groceries"]
        note.detail = ["ctxui": 1, "title": "Groceries", "fallbackText": "Groceries", "blocks": [["type": "text", "text": "Milk"]]]
        note.description = "Note “Groceries”"
        note.encoding = ["representation": "text", "contentType": "text/plain", "data": "TWlsaw=="]
        let locked = GalleryProvider(entry: ["id": "com.example.locked", "title": "Locked", "status": "loaded", "available": false,
                                             "unavailableReason": ["code": "permission", "message": "Locked needs permission network, which the client did not grant."]])
        var failing = GalleryProvider(entry: ["id": "com.example.failing", "title": "Failing", "status": "loaded", "available": true, "collection": "programmatic"])
        failing.problems = ["collect/make failed: disk on fire (-32013)"]
        let rejected = GalleryProvider(entry: ["status": "rejected", "available": false, "manifestPath": "/m/broken.yaml",
                                               "diagnostics": [["file": "/m/broken.yaml", "line": 3, "column": 1, "message": "did not find expected ','", "hint": "fix the YAML"]]])
        return GalleryData(serverInfo: ["name": "context-host", "version": "0.1.0"], providers: [note, locked, failing, rejected], generatedAt: "2026-11-21T22:00:00Z")
    }

    @Test("one section per provider with id provider-<id>, a table of contents, reasons and problems; nothing external")
    func page() {
        let html = GalleryPage.render(Self.data())
        for id in ["provider-com.example.note", "provider-com.example.locked", "provider-com.example.failing", "provider-manifest-4"] {
            #expect(html.contains("<section class=\"provider\" id=\"\(id)\">"), "no section \(id)")
            #expect(html.contains("<a href=\"#\(id)\">"), "no contents entry for \(id)")
        }
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\""))
        #expect(html.contains("Note &lt;script&gt;"))
        #expect(!html.lowercased().contains("<script"))
        #expect(html.contains("Locked needs permission network, which the client did not grant. (permission)"))
        #expect(html.contains("collect/make failed: disk on fire (-32013)"))
        #expect(html.contains("/m/broken.yaml:3:1: did not find expected &#39;,&#39; (fix: fix the YAML)"))
        #expect(html.contains("✗ Title is required."))
        #expect(html.contains("Shown after submitting an invalid value (required field &#39;title&#39; left out)"))
        #expect(html.contains("<span class=\"chip-title\">Groceries</span>"))
        #expect(html.contains("class=\"raw\""))  // raw JSON beside each view
        // Nothing is loaded from anywhere: no external URL in src/href/url(), no @import.
        #expect(html.firstMatch(of: /(src|href)="(https?:|\/\/)/) == nil)
        #expect(!html.contains("url(") && !html.contains("@import"))
    }

    @Test("gallery.json keeps the raw data of every provider")
    func json() {
        let json = Self.data().json
        #expect(json["format"] == 1)
        let providers = json["providers"]?.arrayValue ?? []
        #expect(providers.count == 4)
        #expect(providers.first?["steps"]?.arrayValue?.first?["invalidAttempt"]?["fieldErrors"] == ["title": "Title is required."])
        #expect(providers.first?["chip"]?["title"] == "Groceries")
        #expect(providers[2]["problems"] == ["collect/make failed: disk on fire (-32013)"])
    }
}
