// context-host-client.js: a small JSON-RPC client for `context-host serve --listen` (docs/web.md).
// One ES module, no dependencies: copy it into a web page, an Electron or Tauri renderer, or Node
// 22+ (which has a global WebSocket). Types: context-host-protocol.d.ts beside it, generated from
// docs/openrpc.json by scripts/gen-client-types.py (a checker that reads JSDoc, such as
// TypeScript's `checkJs`, types every call's parameters and result from it).
//
//   import { ContextHostClient } from "./context-host-client.js";
//   const host = await ContextHostClient.connect("ws://127.0.0.1:8765/rpc", { clientName: "my-app" });
//   const { providers } = await host.call("providers/list", {});
//   host.on("providers/changed", (params) => console.log(params.added));
//
// Every string the host relays comes from providers: treat it as untrusted (render it with
// textContent, never innerHTML; ctxui.js does).

/** @typedef {import("./context-host-protocol").Methods} Methods */
/** @typedef {import("./context-host-protocol").Notifications} Notifications */

/** The subprotocol the listener speaks. */
export const SUBPROTOCOL = "context-host.jsonrpc";

/** A JSON-RPC error answer (`code`, `message`, and the host's `data`, e.g. `fieldErrors`). */
export class ContextHostError extends Error {
  /**
   * @param {string} method
   * @param {{code: number, message: string, data?: unknown}} error
   */
  constructor(method, error) {
    super(`${method}: ${error.message} (${error.code})`);
    this.name = "ContextHostError";
    /** @type {number} */
    this.code = error.code;
    /** @type {unknown} */
    this.data = error.data;
    /** @type {string} */
    this.method = method;
  }
}

/**
 * @typedef {object} ConnectOptions
 * @property {string} [token] The listener's bearer token (sent as the `bearer.<token>`
 *   subprotocol, never in the URL). Needed on non-loopback listeners.
 * @property {string} [clientName] Sent in `initialize` (default "context-host-client.js").
 * @property {string} [locale] BCP 47 locale for titles and messages (default: navigator.language).
 * @property {number} [timeoutMs] How long connecting and each call may take (default 30000).
 * @property {typeof WebSocket} [WebSocketImpl] A WebSocket class (default: the global one).
 */

export class ContextHostClient {
  /**
   * Opens the WebSocket, sends `initialize` and `initialized`, and resolves once the host answered.
   * @param {string} url e.g. `ws://127.0.0.1:8765/rpc`; in a page served by the listener,
   *   `new URL("/rpc", location.href).href.replace(/^http/, "ws")`.
   * @param {ConnectOptions} [options]
   * @returns {Promise<ContextHostClient>}
   */
  static async connect(url, options = {}) {
    const Impl = options.WebSocketImpl ?? globalThis.WebSocket;
    const protocols = [SUBPROTOCOL];
    if (options.token) protocols.push("bearer." + options.token);
    const socket = new Impl(url, protocols);
    const client = new ContextHostClient(socket, options.timeoutMs ?? 30000);
    await client.#opened;
    client.initializeResult = await client.call("initialize", {
      clientInfo: { name: options.clientName ?? "context-host-client.js" },
      locale: options.locale ?? (globalThis.navigator?.language || "en-US"),
      protocolVersions: [2],
    });
    client.notify("initialized", {});
    return client;
  }

  /** @type {WebSocket} */ #socket;
  #nextId = 1;
  /** @type {Map<number, {method: string, resolve: (value: any) => void, reject: (error: Error) => void, timer: any}>} */
  #pending = new Map();
  /** @type {Map<string, Set<(params: any) => void>>} */
  #listeners = new Map();
  /** @type {Promise<void>} */ #opened;
  #timeoutMs;
  /**
   * Why the connection ended, once it has.
   * @type {string | null}
   */
  closedReason = null;
  /**
   * The host's `initialize` answer (protocol version, serverInfo, capabilities, limits).
   * @type {Methods["initialize"]["result"] | null}
   */
  initializeResult = null;

  /**
   * @param {WebSocket} socket
   * @param {number} timeoutMs
   */
  constructor(socket, timeoutMs) {
    this.#socket = socket;
    this.#timeoutMs = timeoutMs;
    this.#opened = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no connection to ${socket.url} within ${timeoutMs} ms`)), timeoutMs);
      socket.addEventListener("open", () => { clearTimeout(timer); resolve(); }, { once: true });
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        // Browsers do not say why a handshake failed (403: origin or host not allowed, 401: token).
        reject(new Error(`cannot connect to ${socket.url}: refused or unreachable (a listener that needs a token answers 401; another origin 403)`));
      }, { once: true });
    });
    socket.addEventListener("message", (event) => this.#receive(event.data));
    socket.addEventListener("close", (event) => {
      this.closedReason = `closed (${event.code}${event.reason ? ": " + event.reason : ""})`;
      for (const [, call] of this.#pending) {
        clearTimeout(call.timer);
        call.reject(new Error(`${call.method}: the connection ${this.closedReason}`));
      }
      this.#pending.clear();
      this.#emit("$/close", { code: event.code, reason: event.reason });
    });
  }

  /**
   * Sends a request and resolves with its result; rejects with a ContextHostError on an error
   * answer, or an Error on a timeout or a closed connection.
   * @template {keyof Methods} M
   * @param {M} method
   * @param {Methods[M]["params"]} params
   * @param {{timeoutMs?: number}} [options]
   * @returns {Promise<Methods[M]["result"]>}
   */
  call(method, params, options = {}) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.#socket.readyState !== 1) {
        reject(new Error(`${method}: the connection is ${this.closedReason ?? "not open"}`));
        return;
      }
      const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        this.notify("$/cancelRequest", { id });
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { method, resolve, reject, timer });
      this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  /**
   * Sends a notification (no answer).
   * @param {string} method
   * @param {object} params
   */
  notify(method, params) {
    if (this.#socket.readyState === 1) this.#socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /**
   * Calls `handler` for each notification `method` (`providers/changed`, `$/progress`,
   * `log/message`, or `$/close` when the connection ends); returns a function that unsubscribes.
   * @template {keyof Notifications | "$/close"} N
   * @param {N} method
   * @param {(params: N extends keyof Notifications ? Notifications[N] : {code: number, reason: string}) => void} handler
   * @returns {() => void}
   */
  on(method, handler) {
    let handlers = this.#listeners.get(method);
    if (!handlers) {
      handlers = new Set();
      this.#listeners.set(method, handlers);
    }
    handlers.add(handler);
    return () => this.#listeners.get(method)?.delete(handler);
  }

  /** Sends `shutdown` and `exit`, and resolves once the connection is closed (at most 5 s). */
  async close() {
    /** @type {Promise<void>} */
    const closed = new Promise((resolve) => {
      if (this.#socket.readyState === 3) resolve();
      const timer = setTimeout(resolve, 5000);
      this.#socket.addEventListener("close", () => { clearTimeout(timer); resolve(); }, { once: true });
    });
    try {
      await this.call("shutdown", {}, { timeoutMs: 5000 });
      this.notify("exit", {});
    } finally {
      this.#socket.close(1000);
    }
    await closed;
  }

  /** @param {unknown} data */
  #receive(data) {
    let message;
    try {
      message = JSON.parse(String(data));
    } catch {
      return;
    }
    if (message === null || typeof message !== "object") return;
    if (message.id !== undefined && message.method === undefined) {
      const call = this.#pending.get(message.id);
      if (!call) return;
      this.#pending.delete(message.id);
      clearTimeout(call.timer);
      if (message.error) call.reject(new ContextHostError(call.method, message.error));
      else call.resolve(message.result);
    } else if (typeof message.method === "string") {
      this.#emit(message.method, message.params ?? {});
    }
  }

  /**
   * @param {string} method
   * @param {any} params
   */
  #emit(method, params) {
    for (const handler of this.#listeners.get(method) ?? []) {
      try {
        handler(params);
      } catch (error) {
        console.error(error);
      }
    }
  }
}
