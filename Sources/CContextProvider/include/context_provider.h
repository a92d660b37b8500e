/*
 * context_provider.h — the binary interface between ContextHost and a context provider.
 *
 * This header is the only contract between the host and a provider library. A provider is a
 * shared library (.so on Linux, .dylib on macOS) that exports one symbol:
 *
 *     const ctxp_provider_v1 *context_provider_entry_v1(void);
 *
 * It returns a pointer to a function table that stays valid for the life of the process.
 * Everything else crosses the boundary as JSON-RPC 2.0 messages encoded as UTF-8 bytes: the host
 * sends requests and notifications through `call`, the provider answers each request through the
 * reply callback. No language-specific object ever crosses, so a provider can be written in C,
 * Swift, Rust or Zig, and two providers that each embed their own copy of an SDK load side by side.
 *
 * Versioning
 *   - `abi_version` is CTXP_ABI_VERSION (1) for this header. The host refuses a table whose
 *     version it does not know, with a message naming both versions.
 *   - `struct_size` is sizeof(ctxp_provider_v1) as the provider was compiled. Fields are only ever
 *     appended; the host reads a field only if `struct_size` covers it. A change that cannot be
 *     made by appending gets a new entry symbol (`context_provider_entry_v2`).
 *
 * Lifecycle
 *   1. The host dlopen()s the library (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) and never unloads it.
 *   2. It calls the entry symbol once and checks the table.
 *   3. It calls `open` once per instance with the init JSON (see below). A library may be opened
 *      more than once in a process; instances must not share mutable state unsafely.
 *   4. It calls `call` any number of times, from any thread, concurrently.
 *   5. It calls `close` once, after every request sent to that instance has been answered or
 *      abandoned. After `close` returns, the provider must not call any reply callback for it.
 *      `close` is never called from inside `call` or a reply callback. A process that exits
 *      (the host, or a worker process) ends without calling `close`.
 *
 * Init JSON (the bytes passed to `open`) is a UTF-8 JSON object:
 *     {"ctxpVersion":1,"providerId":"com.example.note","hostVersion":"0.1.0",
 *      "locale":"en-US","settings":{...},"grantedPermissions":["network"]}
 *
 * Messages
 *   - A request is a JSON-RPC 2.0 request object with an integer `id`; the provider answers it
 *     exactly once with a response object carrying the same `id` and either `result` or `error`.
 *   - A notification has no `id` and gets no answer. The host sends `$/cancelRequest` with
 *     `{"id": N}` to cancel request N; the provider should stop work and may answer N with error
 *     -32800 (RequestCancelled) or not at all; the host no longer waits for it.
 *   - Methods (`provider/info`, `provider/availability`, `provider/makeContext`,
 *     `collect/start`, `collect/query`, `collect/submit`, `collect/cancel`, `item/preview`,
 *     `item/detail`, `item/describe`, `item/encode`, and the optional `item/previewMany`) are
 *     described in docs/provider-abi.md. Answer any method you do not know with -32601.
 *   - Notifications for a request (optional, same ABI 1): before its response, a provider may
 *     pass notification messages through that request's reply callback, with that request's
 *     `reply_context`:
 *       {"jsonrpc":"2.0","method":"$/progress","params":{"done":N,"total":M?,"message":S?}}
 *       {"jsonrpc":"2.0","method":"$/log","params":{"level":"error|warning|info|debug","message":S}}
 *     `done` and `total` are finite and >= 0, `done` <= `total`, `done` never decreasing; keep
 *     them to a few per second and each message under 8 KiB. The response stays the last call
 *     for the request and comes exactly once; anything after it is dropped. Hosts drop invalid
 *     notifications and ignore unknown ones; hosts older than this never see any, since
 *     providers that do not send them are unchanged.
 *
 * Threading
 *   - `call` may be invoked from several host threads at once; it must return promptly and must
 *     never block on I/O or on the answer. Do slow work elsewhere and answer later.
 *   - The reply callback may be invoked from any thread, including synchronously from inside
 *     `call`, and concurrently for different requests.
 *
 * Memory ownership
 *   - The bytes passed to `open`, `call` and the reply callback are owned by the caller and are
 *     valid only for the duration of that function call. Copy what you keep. Bytes are not
 *     NUL-terminated; always use the length.
 *   - `reply_context` is opaque to the provider: pass it back unchanged, with exactly one
 *     response (and any notifications for the request before it).
 *   - The instance pointer is owned by the provider, from `open` until `close`.
 */
#ifndef CONTEXT_PROVIDER_H
#define CONTEXT_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version described by this header. */
#define CTXP_ABI_VERSION 1u

/** The name of the entry symbol for ABI version 1. */
#define CTXP_ENTRY_SYMBOL_V1 "context_provider_entry_v1"

/** Result codes of `open`. */
#define CTXP_OK 0
#define CTXP_ERROR 1

/**
 * Delivers bytes from the provider to the host: an answer to a request (from `call`), or an error
 * description (from `open`).
 *
 * @param reply_context the opaque pointer the host passed alongside this callback.
 * @param bytes         UTF-8 JSON, valid only during this call.
 * @param length        number of bytes.
 */
typedef void (*ctxp_reply_fn)(void *reply_context, const uint8_t *bytes, size_t length);

/** The function table a provider exports (ABI version 1). */
typedef struct ctxp_provider_v1 {
    /** Must be CTXP_ABI_VERSION. */
    uint32_t abi_version;
    /** sizeof(ctxp_provider_v1) as compiled by the provider. */
    uint32_t struct_size;

    /**
     * Creates an instance from the init JSON.
     *
     * On success returns CTXP_OK and stores the instance in `*out_instance`. On failure returns
     * CTXP_ERROR and, before returning, calls `on_error` once with a UTF-8 JSON object
     * `{"message": "...", "hint": "..."}` that tells the operator what to fix.
     */
    int32_t (*open)(const uint8_t *init_json, size_t init_length, void **out_instance,
                    ctxp_reply_fn on_error, void *error_context);

    /**
     * Sends one JSON-RPC message (request or notification) to an instance.
     *
     * For a request, the provider calls `reply(reply_context, response, length)` exactly once,
     * now or later, from any thread. For a notification, `reply` is never called (the host may
     * pass NULL).
     */
    void (*call)(void *instance, const uint8_t *message, size_t length, ctxp_reply_fn reply,
                 void *reply_context);

    /** Destroys an instance. No reply callback for it may run after this returns. */
    void (*close)(void *instance);
} ctxp_provider_v1;

/** The type of the entry symbol. */
typedef const ctxp_provider_v1 *(*ctxp_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CONTEXT_PROVIDER_H */
