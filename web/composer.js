// composer.js: the live composer page served by `context-host serve --listen` at `/`
// (docs/web.md, "The composer"). It speaks only the public protocol over /rpc, through
// context-host-client.js, and draws every ctxui view with ctxui.js.

import { ContextHostClient, ContextHostError } from "./context-host-client.js";
import * as ctxui from "./ctxui.js";

const { h } = ctxui;
const $ = (id) => document.getElementById(id);

/** @type {ContextHostClient | null} */
let host = null;
let composerId = null;
/** Attached items: {item, chip}, in order. */
let attached = [];
/** The open collection session: {sessionId, providerId, form element}. */
let session = null;

function setStatus(text, kind = "") {
  $("status").textContent = text;
  $("status").className = kind;
}

function message(error) {
  if (error instanceof ContextHostError) return `${error.message}`;
  return error?.message ?? String(error);
}

function logEvent(title, details) {
  const entry = h("li", { "data-event": title }, h("b", {}, title), " ", h("span", { class: "muted" }, new Date().toLocaleTimeString()));
  if (details) entry.append(h("div", {}, details));
  $("events").prepend(entry);
}

// MARK: Connecting

async function connect(token) {
  setStatus("Connecting…");
  const url = new URL("/rpc", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  try {
    host = await ContextHostClient.connect(url.href, { token: token || undefined, clientName: "context-host composer page" });
  } catch (error) {
    setStatus(`Cannot connect to ${url.href}: ${message(error)}. If this listener needs a token, enter it.`, "error");
    $("connect").hidden = false;
    document.body.dataset.state = "disconnected";
    return;
  }
  $("connect").hidden = true;
  const info = host.initializeResult?.serverInfo;
  setStatus(`Connected to ${info?.name ?? "context-host"} ${info?.version ?? ""} (protocol ${host.initializeResult?.protocolVersion}).`, "ok");
  host.on("providers/changed", (params) => {
    renderProviders(params.providers ?? []);
    const parts = [];
    for (const key of ["added", "changed", "removed"]) {
      if (Array.isArray(params[key]) && params[key].length) parts.push(`${key}: ${params[key].join(", ")}`);
    }
    logEvent("providers/changed", parts.join("; ") || "(no list change)");
  });
  host.on("log/message", (params) => logEvent("log/message", `${params.level ?? ""} ${params.message ?? ""}`));
  host.on("$/close", (params) => {
    setStatus(`Disconnected (${params.code}). Reload the page to connect again.`, "error");
    document.body.dataset.state = "disconnected";
  });
  try {
    const opened = await host.call("composer/open", {});
    composerId = opened.composerId;
    showBudget(opened);
    await refreshProviders();
    document.body.dataset.state = "ready";
  } catch (error) {
    setStatus(`The host refused to start the composer: ${message(error)}`, "error");
  }
}

async function refreshProviders() {
  const listed = await host.call("providers/list", { composerId });
  renderProviders(listed.providers);
}

// MARK: The picker

function renderProviders(providers) {
  const list = $("providers");
  list.replaceChildren(...providers.map((provider) => {
    const line = ctxui.providerLine(provider);
    const button = h("button", { type: "button", class: "provider", "data-provider-id": provider.id ?? "", disabled: !line.enabled },
      ctxui.icon(provider.iconName), h("span", {}, line.label, line.note ? h("span", { class: "note" }, line.note) : null));
    if (provider.description) button.title = provider.description;
    button.addEventListener("click", () => choose(provider));
    return h("li", {}, button);
  }));
}

// MARK: Collecting

async function choose(provider) {
  await cancelSession();
  const panel = $("panel");
  panel.replaceChildren(h("p", { class: "muted" }, `Starting ${provider.title ?? provider.id}…`));
  try {
    if (provider.collection === "programmatic") {
      const made = await host.call("collect/make", { providerId: provider.id, composerId });
      if (made.item) await attach(made.item, made.composer);
      else panel.replaceChildren(h("p", { class: "muted" }, `${provider.title} made no item.`));
      return;
    }
    const started = await host.call("collect/start", { providerId: provider.id, composerId });
    session = { sessionId: started.sessionId, providerId: provider.id };
    showForm(started.form);
  } catch (error) {
    panel.replaceChildren(h("p", { class: "problem-box", role: "alert" }, `✗ ${message(error)}`));
  }
}

function showForm(form) {
  const current = session;
  const element = ctxui.liveForm(form, {
    onSearch: async (fieldId, query, values) => {
      const answer = await host.call("collect/query", { sessionId: current.sessionId, fieldId, query, values });
      return answer.options;
    },
    onSubmit: (values) => submit(current, element, values),
  });
  const cancel = h("button", { type: "button", class: "secondary", "data-action": "cancel" }, "Cancel");
  cancel.addEventListener("click", async () => {
    await cancelSession();
    $("panel").replaceChildren(h("p", { class: "muted" }, "Cancelled."));
  });
  $("panel").replaceChildren(element, h("div", { class: "panel-actions" }, cancel));
  current.form = element;
  element.querySelector("input, textarea, select")?.focus();
}

async function submit(current, form, values) {
  if (session !== current) return;
  try {
    const outcome = await host.call("collect/submit", { sessionId: current.sessionId, values });
    if (outcome.outcome === "invalid") {
      form.showErrors(outcome.fieldErrors ?? {}, outcome.formError);
      form.querySelector(".has-error input, .has-error textarea, .has-error select")?.focus();
    } else if (outcome.outcome === "step") {
      showForm(outcome.form);
    } else if (outcome.outcome === "item") {
      session = null;
      await attach(outcome.item, outcome.composer);
    }
  } catch (error) {
    form.showErrors({}, message(error));
  }
}

async function cancelSession() {
  if (!session) return;
  const { sessionId } = session;
  session = null;
  try {
    await host.call("collect/cancel", { sessionId });
  } catch {
    // Already finished or gone: nothing to cancel.
  }
}

// MARK: The draft

async function attach(item, summary) {
  let chip;
  try {
    chip = await host.call("items/preview", { item });
  } catch (error) {
    chip = { title: item.displayName, icon: "", fallbackText: item.displayName, subtitle: `(no preview: ${message(error)})` };
  }
  attached.push({ item, chip });
  renderChips();
  if (summary) showBudget(summary);
  $("panel").replaceChildren(h("p", { class: "notice", role: "status" }, `Attached “${item.displayName}”.`));
  await refreshProviders();
}

function renderChips() {
  $("chips").replaceChildren(...attached.map(({ item, chip }) => {
    const open = h("button", { type: "button", class: "open", "data-action": "detail", title: "Show the detail" }, ctxui.chip(chip));
    open.addEventListener("click", () => showDetail(item));
    const remove = h("button", { type: "button", class: "remove", "data-action": "remove", "aria-label": `Remove ${item.displayName}` }, "×");
    remove.addEventListener("click", () => removeItem(item));
    return h("span", { class: "attached", "data-item-id": item.id, "data-item-type": item.type }, open, remove);
  }));
}

function showBudget(summary) {
  $("budget").textContent = `${summary.itemCount} of ${summary.maximumItems} items · ${summary.bytesUsed} of ${summary.byteBudget} bytes`;
}

async function showDetail(item) {
  const pane = $("detail");
  pane.replaceChildren(h("p", { class: "muted" }, "Loading the detail…"));
  try {
    const detail = await host.call("items/detail", { item });
    const close = h("button", { type: "button", class: "close", "data-action": "close-detail" }, "Close");
    close.addEventListener("click", () => pane.replaceChildren());
    pane.replaceChildren(h("div", { class: "pane", "data-detail-for": item.id }, ctxui.detail(detail), close));
  } catch (error) {
    pane.replaceChildren(h("p", { class: "problem-box", role: "alert" }, `✗ ${message(error)}`));
  }
}

async function removeItem(item) {
  try {
    const summary = await host.call("composer/remove", { composerId, itemId: item.id });
    attached = attached.filter((entry) => entry.item.id !== item.id);
    renderChips();
    showBudget(summary);
    if ($("detail").querySelector(`[data-detail-for="${CSS.escape(item.id)}"]`)) $("detail").replaceChildren();
    await refreshProviders();
  } catch (error) {
    $("panel").replaceChildren(h("p", { class: "problem-box", role: "alert" }, `✗ ${message(error)}`));
  }
}

async function send() {
  const pane = $("envelope");
  try {
    const sent = await host.call("composer/send", { composerId, text: $("message").value });
    const envelope = sent.message;
    pane.replaceChildren(h("div", { class: "pane", id: "sent" },
      h("h3", {}, "Sent ", h("span", { class: "method" }, "composer/send")),
      h("p", {}, h("b", {}, "Text: "), envelope.text),
      h("p", { class: "caption" }, envelope.summary),
      ...envelope.contextItems.map((entry) => h("div", { class: "envelope-item", "data-context-type": entry.contextType },
        h("p", {}, h("b", {}, entry.displayName), " ", h("code", {}, entry.contextType)),
        ctxui.encoding({ representation: entry.metadata?.representation ?? "text", contentType: entry.metadata?.contentType ?? entry.contextType, data: entry.encodedContent, metadata: entry.metadata }))),
      h("details", {}, h("summary", {}, "The envelope as JSON"), ctxui.json(envelope))));
    attached = [];
    renderChips();
    $("message").value = "";
    $("detail").replaceChildren();
    const listed = await host.call("composer/list", { composerId });
    showBudget(listed);
    await refreshProviders();
  } catch (error) {
    pane.replaceChildren(h("p", { class: "problem-box", role: "alert" }, `✗ ${message(error)}`));
  }
}

$("send").addEventListener("click", send);
$("connect").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  connect(token);
});
connect("");
