// ctxui.js: ctxui v1 views (chips, details, forms, encodings) as DOM nodes, for pages that show
// what context-host providers send. The browser counterpart of the gallery's renderer
// (Sources/ContextClient/HTMLRender.swift): the same rules and the same CSS classes, so the
// gallery's stylesheet (served as /ctxui.css by `serve --listen`) styles both.
//
// Every string comes from a provider and is untrusted: it only ever becomes text
// (createTextNode/textContent) or an attribute value the code chooses; no innerHTML. Images are
// shown only from Base64 data:image/png|jpeg|gif|webp|svg+xml URIs as <img> sources (where even
// SVG runs no script), links only for http, https, mailto and geo URLs. Unknown node types show
// their fallback text, as every ctxui client must.

const SVG = "http://www.w3.org/2000/svg";

/**
 * An element: `h("p", {class: "x"}, "text", child)`. Attribute values and text are set as data.
 * @param {string} tag
 * @param {Record<string, string | number | boolean | undefined | null>} [attributes]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  return fill(element, attributes, children);
}

/**
 * An SVG element, like `h`.
 * @param {string} tag
 * @param {Record<string, string | number | undefined | null>} [attributes]
 * @param {...(Node | string | null | undefined)} children
 * @returns {SVGElement}
 */
export function s(tag, attributes = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attributes, children);
}

function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (/^on/i.test(name) || name === "style") throw new Error(`ctxui.js sets no ${name} attribute`);
    element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return element;
}

const str = (value) => (typeof value === "string" ? value : undefined);
const num = (value) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
const arr = (value) => (Array.isArray(value) ? value : []);

/** Whether a URL may be a link: http, https, mailto or geo, without control characters or spaces. */
export function isSafeLink(url) {
  if (typeof url !== "string" || /[\u0000-\u0020\u007f]/.test(url)) return false;
  return /^(https?:\/\/|mailto:|geo:)/i.test(url);
}

/** Whether a data: URI may be shown as an image (Base64 png, jpeg, gif, webp or svg+xml). */
export function isSafeImage(uri) {
  return typeof uri === "string" && /^data:image\/(png|jpeg|jpg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=]+$/i.test(uri);
}

/** A number as the gallery shows it (no exponent, up to 6 decimals). */
export function formatNumber(value) {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  return String(Math.round(value * 1e6) / 1e6);
}

function toneClass(tone) {
  return ["good", "warning", "attention"].includes(tone) ? "tone-" + tone : "tone-neutral";
}

function toneColour(tone) {
  return { good: "#1a7f37", warning: "#9a6700", attention: "#cf222e" }[tone] ?? "#57606a";
}

const PALETTE = ["#0969da", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#57606a"];

/** Pretty-printed JSON in a <pre class="json">. */
export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2) ?? "undefined");
}

// MARK: Icons

const ICONS = [
  [["note", "text", "doc", "pencil"], [["rect", { x: 3, y: 2, width: 10, height: 12, rx: 1.5 }], ["path", { d: "M5.5 5.5h5M5.5 8h5M5.5 10.5h3" }]]],
  [["location", "map", "pin", "globe"], [["path", { d: "M8 14.5s-4.5-4.6-4.5-8a4.5 4.5 0 0 1 9 0c0 3.4-4.5 8-4.5 8z" }], ["circle", { cx: 8, cy: 6.5, r: 1.6 }]]],
  [["calendar", "clock"], [["rect", { x: 2.5, y: 3.5, width: 11, height: 10, rx: 1.5 }], ["path", { d: "M2.5 6.5h11M5.5 2v3M10.5 2v3" }]]],
  [["chart", "dollar", "graph", "stock"], [["path", { d: "M2 13.5h12M3 11l3.5-4 3 2.5L14 4" }]]],
  [["heart", "waveform", "figure", "bed", "flame", "lungs"], [["path", { d: "M8 13.5S2.5 10 2.5 6.2A2.7 2.7 0 0 1 8 4.8a2.7 2.7 0 0 1 5.5 1.4C13.5 10 8 13.5 8 13.5z" }]]],
  [["cpu", "desktop", "laptop", "info", "gear"], [["rect", { x: 3.5, y: 3.5, width: 9, height: 9, rx: 1 }], ["rect", { x: 6, y: 6, width: 4, height: 4 }]]],
];

/** An icon name (SF Symbols naming) as a small SVG glyph of its family, the name as tooltip. */
export function icon(name) {
  const key = str(name) ?? "";
  const family = ICONS.find(([words]) => words.some((word) => key.includes(word)));
  const shapes = family ? family[1] : [["circle", { cx: 8, cy: 8, r: 5 }]];
  const svg = s("svg", {
    width: 14, height: 14, viewBox: "0 0 16 16", fill: "none", stroke: "currentColor", "stroke-width": 1.4,
    "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true",
  }, ...shapes.map(([tag, attributes]) => s(tag, attributes)));
  return h("span", { class: "icon", title: key || "no icon" }, svg);
}

// MARK: Chips

/** Values as a small SVG polyline (oldest first). */
export function sparkline(values, width, height) {
  const finite = values.filter((v) => Number.isFinite(v));
  const low = Math.min(...finite), high = Math.max(...finite), span = high - low, inset = 1.5;
  const points = finite.map((value, index) => {
    const x = finite.length === 1 ? width / 2 : inset + (index / (finite.length - 1)) * (width - 2 * inset);
    const y = span === 0 ? height / 2 : inset + (1 - (value - low) / span) * (height - 2 * inset);
    return `${x.toFixed(2)},${y.toFixed(2)}`;
  }).join(" ");
  return s("svg", { class: "sparkline", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `trend of ${finite.length} values` },
    s("polyline", { fill: "none", stroke: "currentColor", "stroke-width": 1.5, "stroke-linejoin": "round", points }));
}

/** A chip as a pill: icon, thumbnail, title, subtitle, sparkline, coloured by tone. */
export function chip(value) {
  const label = str(value?.accessibilityLabel) ?? str(value?.title) ?? str(value?.fallbackText) ?? "item";
  const title = str(value?.title);
  if (title === undefined) {
    return h("span", { class: "chip tone-neutral", role: "group", "aria-label": label }, str(value?.fallbackText) ?? str(value?.fallback) ?? "(item)");
  }
  const element = h("span", { class: "chip " + toneClass(value.tone), role: "group", "aria-label": label, title: str(value.fallbackText) }, icon(value.icon));
  if (value.thumbnail !== undefined) {
    element.append(isSafeImage(value.thumbnail)
      ? h("img", { class: "thumb", src: value.thumbnail, alt: "" })
      : h("span", { class: "thumb refused", title: "thumbnail not shown: only Base64 data:image/png, jpeg, gif, webp or svg+xml URIs are" }, "▨"));
  }
  element.append(h("span", { class: "chip-title" }, title));
  if (str(value.subtitle)) element.append(h("span", { class: "chip-subtitle" }, value.subtitle));
  const accessory = value.accessory;
  if (accessory?.kind === "sparkline" && arr(accessory.values).some((v) => num(v) !== undefined)) {
    element.append(sparkline(arr(accessory.values).filter((v) => num(v) !== undefined), 56, 16));
  } else if (str(accessory?.fallback)) {
    element.append(h("span", { class: "chip-subtitle" }, accessory.fallback));
  }
  return element;
}

// MARK: Details

/** Text with line breaks kept. */
function lines(text) {
  const parts = [];
  String(text).split("\n").forEach((line, index) => {
    if (index > 0) parts.push(h("br"));
    parts.push(line);
  });
  return parts;
}

function paragraphs(text) {
  return String(text).split("\n\n").filter((p) => p.length > 0).map((p) => h("p", {}, ...lines(p)));
}

/** Inline Markdown: `code`, **strong**, *em* / _em_; everything else is text. */
function inline(text) {
  const nodes = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|(?<![A-Za-z0-9])_([^_]+)_(?![A-Za-z0-9])/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    if (match[1] !== undefined) nodes.push(h("code", {}, match[1]));
    else if (match[2] !== undefined) nodes.push(h("strong", {}, match[2]));
    else nodes.push(h("em", {}, match[3] ?? match[4]));
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

/** Minimal CommonMark (headings, paragraphs, lists, fenced code, quotes, inline emphasis). */
export function markdown(text) {
  const root = h("div", { class: "markdown" });
  let paragraph = [], list = null, code = null;
  const flushParagraph = () => {
    if (paragraph.length) {
      const p = h("p");
      paragraph.forEach((line, index) => { if (index) p.append(h("br")); p.append(...inline(line)); });
      root.append(p);
    }
    paragraph = [];
  };
  const flushList = () => {
    if (list) root.append(h(list.tag, {}, ...list.items.map((item) => h("li", {}, ...inline(item)))));
    list = null;
  };
  for (const raw of String(text).split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (code) {
      if (trimmed.startsWith("```")) { root.append(h("pre", { class: "mono" }, code.join("\n"))); code = null; } else code.push(line);
      continue;
    }
    if (trimmed.startsWith("```")) { flushParagraph(); flushList(); code = []; continue; }
    if (!trimmed) { flushParagraph(); flushList(); continue; }
    const heading = /^(#{1,6}) (.*)$/.exec(trimmed);
    if (heading) { flushParagraph(); flushList(); root.append(h("h" + Math.min(heading[1].length + 3, 6), {}, ...inline(heading[2]))); continue; }
    const item = /^[-*+] (.*)$/.exec(trimmed) ?? /^\d{1,9}[.)] (.*)$/.exec(trimmed);
    if (item) {
      flushParagraph();
      const tag = /^\d/.test(trimmed) ? "ol" : "ul";
      if (list?.tag !== tag) { flushList(); list = { tag, items: [] }; }
      list.items.push(item[1]);
      continue;
    }
    if (trimmed.startsWith(">")) { flushParagraph(); flushList(); root.append(h("blockquote", {}, ...inline(trimmed.slice(1).trim()))); continue; }
    flushList();
    paragraph.push(trimmed);
  }
  if (code) root.append(h("pre", { class: "mono" }, code.join("\n")));
  flushParagraph();
  flushList();
  return root;
}

/** A link when the scheme is safe; otherwise the title and the URL as text. */
export function link(url, title) {
  if (!isSafeLink(url)) {
    return h("span", {}, String(title) + " ", h("span", { class: "muted" }, `(${url}; not a link: only http, https, mailto and geo URLs are)`));
  }
  return h("span", {}, h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, String(title)), " ", h("span", { class: "muted url" }, url));
}

function facts(list) {
  return h("dl", { class: "facts" }, ...arr(list).map((fact) =>
    h("div", {}, h("dt", {}, str(fact?.label) ?? ""), h("dd", { class: toneClass(fact?.tone) }, str(fact?.value) ?? ""))));
}

function shortNumber(value) {
  const magnitude = Math.abs(value);
  if (magnitude >= 1e6) return formatNumber(Math.round(value / 1e4) / 100) + "M";
  if (magnitude >= 1e4) return formatNumber(Math.round(value / 10) / 100) + "k";
  if (magnitude >= 100) return formatNumber(Math.round(value));
  if (magnitude >= 1) return formatNumber(Math.round(value * 100) / 100);
  return formatNumber(Math.round(value * 1e5) / 1e5);
}

/** A chart block as SVG: line, bar or sparkline, y labels, first/middle/last x labels, thresholds, legend. */
export function chart(block) {
  const kind = str(block.kind) ?? "line";
  const unit = str(block.unit);
  const series = arr(block.series).map((entry) => ({
    name: str(entry?.name) ?? "",
    points: arr(entry?.points).filter((p) => num(p?.y) !== undefined).map((p) => ({ x: str(p.x) ?? "", y: p.y })),
  }));
  const thresholds = arr(block.thresholds).filter((t) => num(t?.value) !== undefined);
  const values = series.flatMap((entry) => entry.points.map((p) => p.y));
  if (!values.length) return h("p", { class: "muted" }, "(a chart with no data)");
  if (kind === "sparkline") return h("div", { class: "chart" }, sparkline(series.find((e) => e.points.length).points.map((p) => p.y), 160, 32));
  const width = 520, height = 220, left = 58, right = 12, top = 24, bottom = 34;
  const plotWidth = width - left - right, plotHeight = height - top - bottom;
  let low = Math.min(...values, ...thresholds.map((t) => t.value)), high = Math.max(...values, ...thresholds.map((t) => t.value));
  if (kind === "bar") { low = Math.min(low, 0); high = Math.max(high, 0); }
  if (low === high) { low -= 1; high += 1; } else { const pad = (high - low) * 0.06; if (kind !== "bar" || low < 0) low -= pad; high += pad; }
  const y = (value) => top + (1 - (value - low) / (high - low)) * plotHeight;
  const xs = [...new Set(series.flatMap((entry) => entry.points.map((p) => p.x)))];
  const slot = plotWidth / Math.max(xs.length, 1);
  const x = (label) => {
    const index = xs.indexOf(label);
    if (kind === "bar") return left + slot * (index + 0.5);
    return xs.length === 1 ? left + plotWidth / 2 : left + (index / (xs.length - 1)) * plotWidth;
  };
  const suffix = unit ? " " + unit : "";
  const svg = s("svg", { class: "chart-svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${kind} chart${unit ? " in " + unit : ""}` },
    s("line", { class: "axis", x1: left, y1: top, x2: left, y2: top + plotHeight }),
    s("line", { class: "axis", x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight }));
  for (const value of [low, (low + high) / 2, high]) {
    svg.append(s("line", { class: "grid", x1: left, y1: y(value), x2: left + plotWidth, y2: y(value) }),
      s("text", { class: "tick", x: left - 4, y: y(value) + 4, "text-anchor": "end" }, shortNumber(value)));
  }
  if (unit) svg.append(s("text", { class: "tick unit", x: 4, y: 12 }, unit));
  for (const index of [...new Set([0, Math.floor(xs.length / 2), xs.length - 1])].sort((a, b) => a - b)) {
    const anchor = xs.length === 1 ? "middle" : index === 0 ? "start" : index === xs.length - 1 ? "end" : "middle";
    svg.append(s("text", { class: "tick", x: x(xs[index]), y: height - bottom + 16, "text-anchor": anchor }, xs[index].slice(0, 24)));
  }
  series.forEach((entry, seriesIndex) => {
    const colour = PALETTE[seriesIndex % PALETTE.length];
    if (kind === "bar") {
      const barWidth = Math.max((slot * 0.8) / Math.max(series.length, 1), 1);
      for (const point of entry.points) {
        const barTop = Math.min(y(point.y), y(0)), barBottom = Math.max(y(point.y), y(0));
        svg.append(s("rect", { x: x(point.x) - slot * 0.4 + seriesIndex * barWidth, y: barTop, width: barWidth, height: Math.max(barBottom - barTop, 0.5), fill: colour },
          s("title", {}, `${point.x}: ${formatNumber(point.y)}${suffix}`)));
      }
    } else {
      svg.append(s("polyline", { fill: "none", stroke: colour, "stroke-width": 2, "stroke-linejoin": "round", points: entry.points.map((p) => `${x(p.x)},${y(p.y)}`).join(" ") }));
      if (entry.points.length <= 60) {
        for (const point of entry.points) {
          svg.append(s("circle", { cx: x(point.x), cy: y(point.y), r: 2.5, fill: colour }, s("title", {}, `${point.x}: ${formatNumber(point.y)}${suffix}`)));
        }
      }
    }
  });
  for (const threshold of thresholds) {
    const colour = toneColour(threshold.tone);
    svg.append(s("line", { class: "threshold", x1: left, y1: y(threshold.value), x2: left + plotWidth, y2: y(threshold.value), stroke: colour }),
      s("text", { class: "tick threshold-label", x: left + plotWidth - 2, y: y(threshold.value) - 4, "text-anchor": "end", fill: colour },
        `${str(threshold.label) ?? ""} ${formatNumber(threshold.value)}${suffix}`));
  }
  const element = h("div", { class: "chart" }, svg);
  if (series.length > 1 || series.some((entry) => entry.name)) {
    element.append(h("ul", { class: "legend" }, ...series.map((entry, index) => {
      const swatch = h("span", { class: "swatch" });
      swatch.style.background = PALETTE[index % PALETTE.length]; // CSSOM: allowed by the page's CSP, unlike a style attribute
      return h("li", {}, swatch, entry.name);
    })));
  }
  return element;
}

/** `48.85660° N, 2.35220° E`. */
export function coordinates(latitude, longitude) {
  const part = (value, positive, negative) => `${Math.abs(value).toFixed(5)}° ${value < 0 ? negative : positive}`;
  return `${part(latitude, "N", "S")}, ${part(longitude, "E", "W")}`;
}

/** A map block as an SVG latitude/longitude grid with a pin per marker, the coordinates and the geo: link. */
export function map(block) {
  const lat = num(block.center?.latitude), lon = num(block.center?.longitude);
  if (lat === undefined || lon === undefined) return h("p", { class: "fallback" }, ...lines(str(block.fallback) ?? "(a map without a centre)"));
  let markers = arr(block.markers).filter((m) => num(m?.latitude) !== undefined && num(m?.longitude) !== undefined);
  if (!markers.length) markers = [{ latitude: lat, longitude: lon }];
  const width = 360, height = 240;
  const zoom = Math.max(num(block.zoom) ?? 10, 0);
  const cosine = Math.max(Math.cos((lat * Math.PI) / 180), 0.05);
  let lonSpan = Math.min((360 / 2 ** zoom) * 1.5, 360);
  for (const m of markers) lonSpan = Math.max(lonSpan, Math.abs(m.longitude - lon) * 2.4, ((Math.abs(m.latitude - lat) * 2.4) / cosine) * (width / height));
  lonSpan = Math.min(Math.max(lonSpan, 0.002), 360);
  const latSpan = Math.min((lonSpan * cosine * height) / width, 180);
  const west = lon - lonSpan / 2, north = lat + latSpan / 2;
  const px = (value) => ((value - west) / lonSpan) * width, py = (value) => ((north - value) / latSpan) * height;
  const svg = s("svg", { class: "map-svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `map centred on ${coordinates(lat, lon)} with ${markers.length} marker(s)` },
    s("rect", { class: "map-bg", x: 0, y: 0, width, height }));
  const rough = lonSpan / 4, power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((f) => f * power).find((v) => v >= rough) ?? 10 * power;
  const degrees = (value, positive, negative) => `${formatNumber(Math.round(Math.abs(value) * 1e4) / 1e4)}° ${value < 0 ? negative : positive}`;
  for (let value = Math.ceil(west / step) * step, n = 0; value <= west + lonSpan && n < 50; value += step, n++) {
    svg.append(s("line", { class: "graticule", x1: px(value), y1: 0, x2: px(value), y2: height }),
      s("text", { class: "tick", x: px(value) + 2, y: height - 4 }, degrees(value, "E", "W")));
  }
  for (let value = Math.ceil((north - latSpan) / step) * step, n = 0; value <= north && n < 50; value += step, n++) {
    svg.append(s("line", { class: "graticule", x1: 0, y1: py(value), x2: width, y2: py(value) }),
      s("text", { class: "tick", x: 2, y: py(value) - 2 }, degrees(value, "N", "S")));
  }
  for (const m of markers) {
    const x = px(m.longitude), y = py(m.latitude);
    const group = s("g", { class: "marker" }, s("title", {}, (str(m.title) ? m.title + " " : "") + coordinates(m.latitude, m.longitude)),
      s("path", { d: `M${x},${y} l-7,-14 a8,8 0 1,1 14,0 z`, fill: "#cf222e", stroke: "#fff", "stroke-width": 1.5 }),
      s("circle", { cx: x, cy: y - 18, r: 3, fill: "#fff" }));
    if (str(m.title)) group.append(s("text", { class: "marker-label", x: x + 10, y: y - 16 }, m.title.slice(0, 32)));
    svg.append(group);
  }
  const caption = h("p", { class: "map-caption" }, "⌖ " + coordinates(lat, lon));
  if (num(block.zoom) !== undefined) caption.append(" ", h("span", { class: "muted" }, `(zoom ${formatNumber(block.zoom)})`));
  if (str(block.link)) caption.append(" · ", link(block.link, "open in a maps app"));
  return h("div", { class: "map" }, svg, caption);
}

/** One detail block; an unknown type shows its fallback. */
export function block(value) {
  const type = str(value?.type) ?? "";
  const fallback = str(value?.fallback);
  let body;
  switch (type) {
    case "text": {
      const text = str(value.text) ?? fallback ?? "";
      const style = value.style;
      body = style === "markdown" ? markdown(text)
        : style === "heading" ? h("h5", {}, text)
        : style === "caption" ? h("p", { class: "caption" }, ...lines(text))
        : style === "monospace" ? h("pre", { class: "mono" }, text)
        : h("div", {}, ...paragraphs(text));
      break;
    }
    case "facts": body = facts(value.facts); break;
    case "chart": body = chart(value); break;
    case "map": body = map(value); break;
    case "list":
      body = h(value.ordered === true ? "ol" : "ul", {}, ...arr(value.items).map((item) => h("li", {}, typeof item === "string" ? item : JSON.stringify(item))));
      break;
    case "image": {
      const alt = str(value.alt) ?? fallback ?? "image";
      body = isSafeImage(value.dataURI)
        ? h("figure", {}, h("img", { src: value.dataURI, alt }), h("figcaption", {}, alt))
        : h("p", { class: "refused" }, "▨ " + alt + " ", h("span", { class: "muted" }, "(image not shown: only Base64 data:image/png, jpeg, gif, webp or svg+xml URIs are)"));
      break;
    }
    case "link": body = h("p", {}, link(str(value.url) ?? "", str(value.title) ?? fallback ?? "link")); break;
    default:
      body = fallback !== undefined
        ? h("p", { class: "fallback", title: `a '${type}' block this client does not know; its fallback text` }, ...lines(fallback))
        : h("p", { class: "fallback muted" }, `(a '${type}' block this client cannot show, without fallback text)`);
  }
  const known = ["text", "facts", "chart", "map", "list", "image", "link"].includes(type);
  return h("div", { class: "block block-" + (known ? type : "unknown") }, body);
}

/** A detail document: its title and every block (or its fallbackText). */
export function detail(value) {
  const article = h("article", { class: "detail" }, h("h4", { class: "detail-title" }, str(value?.title) ?? "Detail"));
  const blocks = arr(value?.blocks);
  if (blocks.length) article.append(...blocks.map(block));
  else if (str(value?.fallbackText) ?? str(value?.fallback)) article.append(...paragraphs(value.fallbackText ?? value.fallback));
  return article;
}

/** An encoded item: representation, content type, metadata, and the data decoded when it is text. */
export function encoding(value) {
  const element = h("div", { class: "encoding" });
  const head = h("p", {}, h("span", { class: "badge" }, str(value?.representation) ?? "?"), " ", h("code", {}, str(value?.contentType) ?? "?"));
  element.append(head);
  let bytes = null;
  try { bytes = Uint8Array.from(atob(str(value?.data) ?? str(value?.encodedContent) ?? ""), (c) => c.charCodeAt(0)); } catch { bytes = null; }
  if (bytes) head.append(" ", h("span", { class: "muted" }, `${bytes.length} bytes`));
  const metadata = value?.metadata && typeof value.metadata === "object" ? value.metadata : {};
  if (Object.keys(metadata).length) element.append(facts(Object.entries(metadata).map(([label, v]) => ({ label, value: typeof v === "string" ? v : JSON.stringify(v) }))));
  if (bytes) {
    let text = null;
    try { text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch { text = null; }
    if (text !== null && value?.representation !== "binary") {
      try { text = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON: shown as is */ }
      element.append(h("pre", { class: "mono decoded" }, text.length > 4000 ? text.slice(0, 4000) + "\n…" : text));
    } else {
      element.append(h("p", { class: "muted" }, "(binary data)"));
    }
  }
  return element;
}

// MARK: Forms

/**
 * A live form for one ctxui form step: every field with its label (`*` when required), help and
 * error, and the submit button. `onSearch(fieldId, query)` answers options for a choice field
 * with a search source (collect/query); `onSubmit(values)` is called with {fieldId: value}.
 * Returns the form, with `showErrors(fieldErrors, formError)` and `values()`.
 * @param {any} form
 * @param {{onSubmit: (values: Record<string, unknown>) => void, onSearch?: (fieldId: string, query: string, values: Record<string, unknown>) => Promise<any[]>}} handlers
 */
export function liveForm(form, handlers) {
  const element = h("form", { class: "ctx-form", "aria-label": str(form?.title) ?? "form", novalidate: true });
  const fieldset = h("fieldset", {}, h("legend", {}, str(form?.title) ?? "Form"));
  element.append(fieldset);
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  fieldset.append(formError);
  /** @type {Map<string, {wrapper: HTMLElement, error: HTMLElement, get: () => unknown}>} */
  const controls = new Map();
  const fields = arr(form?.fields);
  if (!fields.length) fieldset.append(...paragraphs(str(form?.fallbackText) ?? "(a form without fields)"));
  for (const field of fields) {
    const id = str(field?.id) ?? "";
    const control = fieldControl(field, () => values(), handlers.onSearch);
    const required = field.required === true;
    const error = h("p", { class: "field-error", role: "alert", hidden: true });
    const wrapper = h("div", { class: `field field-${str(field.kind) ?? "unknown"}`, "data-field": id },
      h("label", {}, h("span", { class: "field-label" }, str(field.label) ?? id, required ? h("abbr", { title: "required" }, "*") : null), control.element));
    if (str(field.help)) wrapper.append(h("p", { class: "help" }, field.help));
    if (control.after) wrapper.append(control.after);
    wrapper.append(error);
    fieldset.append(wrapper);
    controls.set(id, { wrapper, error, get: control.get });
  }
  const extraErrors = h("div", { class: "extra-errors" });
  fieldset.append(extraErrors);
  fieldset.append(h("button", { type: "submit", class: "primary" }, str(form?.submitLabel) ?? "Submit"));
  const values = () => {
    const result = {};
    for (const [id, control] of controls) {
      const value = control.get();
      if (value !== undefined) result[id] = value;
    }
    return result;
  };
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    handlers.onSubmit(values());
  });
  element.values = values;
  /** Shows a collect/submit "invalid" outcome (or clears it with {}). */
  element.showErrors = (fieldErrors = {}, message = undefined) => {
    formError.hidden = !message;
    formError.textContent = message ? "✗ " + message : "";
    extraErrors.replaceChildren();
    for (const [id, control] of controls) {
      const text = fieldErrors[id];
      control.wrapper.classList.toggle("has-error", typeof text === "string");
      control.error.hidden = typeof text !== "string";
      control.error.textContent = typeof text === "string" ? "✗ " + text : "";
    }
    for (const [id, text] of Object.entries(fieldErrors)) {
      if (!controls.has(id)) extraErrors.append(h("p", { class: "field-error", role: "alert" }, `✗ ${id}: ${text}`));
    }
  };
  return element;
}

/** One field's input, its value getter, and what follows it (search results). */
function fieldControl(field, currentValues, onSearch) {
  const kind = str(field.kind) ?? "";
  const id = str(field.id) ?? "";
  const common = { name: id, placeholder: str(field.placeholder), required: field.required === true, "aria-label": str(field.label) ?? id };
  const initial = field.default;
  switch (kind) {
    case "text": {
      const attributes = { ...common, maxlength: num(field.maxLength) };
      const input = field.multiline === true ? h("textarea", { ...attributes, rows: 4 }) : h("input", { ...attributes, type: "text" });
      if (typeof initial === "string") input.value = initial;
      return { element: input, get: () => (input.value === "" ? undefined : input.value) };
    }
    case "number": {
      const input = h("input", { ...common, type: "number", min: num(field.min), max: num(field.max), step: num(field.step) ?? "any" });
      if (typeof initial === "number") input.value = String(initial);
      const after = str(field.unit) ? h("span", { class: "unit" }, field.unit) : null;
      return { element: input, after, get: () => (input.value === "" ? undefined : Number(input.value)) };
    }
    case "date":
    case "datetime": {
      const input = h("input", { ...common, type: kind === "date" ? "date" : "datetime-local" });
      if (typeof initial === "string") input.value = kind === "date" ? initial : initial.slice(0, 16);
      return {
        element: input,
        get: () => {
          if (input.value === "") return undefined;
          if (kind === "date") return input.value;
          const local = new Date(input.value);
          return Number.isNaN(local.getTime()) ? input.value : local.toISOString().replace(/\.\d{3}Z$/, "Z");
        },
      };
    }
    case "toggle": {
      const input = h("input", { type: "checkbox", name: id, "aria-label": str(field.label) ?? id });
      input.checked = initial === true;
      return { element: input, get: () => input.checked };
    }
    case "location": {
      const latitude = h("input", { type: "number", step: "any", "aria-label": "latitude", placeholder: "latitude" });
      const longitude = h("input", { type: "number", step: "any", "aria-label": "longitude", placeholder: "longitude" });
      if (num(initial?.latitude) !== undefined) latitude.value = String(initial.latitude);
      if (num(initial?.longitude) !== undefined) longitude.value = String(initial.longitude);
      return {
        element: h("span", { class: "location" }, latitude, longitude),
        get: () => (latitude.value === "" && longitude.value === "" ? undefined : { latitude: Number(latitude.value), longitude: Number(longitude.value) }),
      };
    }
    case "choice":
      return choiceControl(field, common, currentValues, onSearch);
    default:
      return {
        element: h("span", { class: "fallback", title: `a '${kind}' field this client does not know; its fallback text` }, str(field.fallback) ?? `(a '${kind}' field this client cannot show)`),
        get: () => undefined,
      };
  }
}

/** A choice field: a select of its options, or a search box with live results (collect/query). */
function choiceControl(field, common, currentValues, onSearch) {
  const options = arr(field.options);
  if (!field.search || !onSearch) {
    const select = h("select", common, h("option", { value: "" }, "—"),
      ...options.map((option) => h("option", { value: str(option?.value) ?? "" }, (str(option?.label) ?? str(option?.value) ?? "") + (str(option?.detail) ? " — " + option.detail : ""))));
    if (typeof field.default === "string") select.value = field.default;
    return { element: select, get: () => (select.value === "" ? undefined : select.value) };
  }
  const minimum = num(field.search?.minQueryLength) ?? 0;
  const input = h("input", { ...common, type: "search", autocomplete: "off", role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false" });
  const results = h("ul", { class: "search-results", role: "listbox", "data-results-for": common.name });
  const chosen = h("p", { class: "chosen muted", hidden: true });
  let selected = typeof field.default === "string" ? field.default : undefined;
  let generation = 0;
  let timer = null;
  const choose = (option) => {
    selected = str(option?.value);
    input.value = str(option?.label) ?? selected ?? "";
    chosen.hidden = false;
    chosen.textContent = `Chosen: ${str(option?.label) ?? selected}${str(option?.detail) ? " — " + option.detail : ""}`;
    results.replaceChildren();
    input.setAttribute("aria-expanded", "false");
  };
  const search = async () => {
    const query = input.value;
    const mine = ++generation;
    if (query.length < minimum) {
      results.replaceChildren(h("li", { class: "muted" }, `type at least ${minimum} characters`));
      return;
    }
    results.setAttribute("aria-busy", "true");
    let found;
    try {
      found = await onSearch(common.name, query, currentValues());
    } catch (error) {
      if (mine === generation) results.replaceChildren(h("li", { class: "field-error" }, "✗ " + (error?.message ?? String(error))));
      return;
    } finally {
      if (mine === generation) results.removeAttribute("aria-busy");
    }
    if (mine !== generation) return; // an older answer arriving after a newer query
    results.replaceChildren(...arr(found).slice(0, 20).map((option) => {
      const button = h("button", { type: "button", class: "option", role: "option", "data-value": str(option?.value) ?? "" },
        h("span", { class: "option-label" }, str(option?.label) ?? str(option?.value) ?? ""),
        str(option?.detail) ? h("span", { class: "option-detail muted" }, option.detail) : null);
      button.addEventListener("click", () => choose(option));
      return h("li", {}, button);
    }));
    if (!arr(found).length) results.append(h("li", { class: "muted" }, "no matches"));
    input.setAttribute("aria-expanded", "true");
  };
  input.addEventListener("input", () => {
    selected = undefined;
    chosen.hidden = true;
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  return { element: input, after: h("div", { class: "search" }, results, chosen), get: () => selected };
}

// MARK: Providers

/**
 * The picker line of a providers/list entry: its label, whether it can be chosen, and a note
 * (why not, or "attaches at once" for programmatic providers). Same rules as the terminal
 * composer and the gallery (CtxuiRender.providerLine).
 */
export function providerLine(provider) {
  const label = str(provider?.title) ?? str(provider?.id) ?? str(provider?.manifestPath) ?? "?";
  if (provider?.available !== true) {
    const reason = str(provider?.unavailableReason?.message) ?? str(provider?.error?.message)
      ?? str(arr(provider?.diagnostics)[0]?.message) ?? str(provider?.status) ?? "unavailable";
    return { label, enabled: false, note: "unavailable: " + reason };
  }
  if (provider.canAttach === false) return { label, enabled: false, note: str(provider.attachBlocked?.message) ?? "cannot attach more" };
  if (provider.collection === "programmatic") return { label, enabled: true, note: "attaches at once" };
  return { label, enabled: true, note: null };
}
