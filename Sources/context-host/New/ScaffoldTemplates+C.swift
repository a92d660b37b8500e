extension ScaffoldTemplates {
    // MARK: C

    /// The C scaffold: a Makefile, one source file, the vendored headers, a manifest, a test script.
    static func cProject(_ p: ScaffoldParameters) -> [ScaffoldFile] {
        [
            ScaffoldFile(path: "Makefile", contents: fill(cMakefile, p)),
            ScaffoldFile(path: "\(p.names.snake).c", contents: fill(cSource, p)),
            ScaffoldFile(path: "include/context_provider.h", contents: contextProviderHeader),
            ScaffoldFile(path: "include/ctxp_json.h", contents: jsonHelperHeader),
            ScaffoldFile(path: "\(p.names.slug).yaml", contents: fill(manifest(library: "lib\(p.names.product).\(libraryExtension)", collection: "programmatic", swift: false), p)),
            ScaffoldFile(path: "test.sh", contents: fill(cTest, p), executable: true),
            ScaffoldFile(path: "README.md", contents: fill(cReadme, p)),
            ScaffoldFile(path: ".gitignore", contents: "*.so\n*.dylib\n*.o\n"),
        ]
    }

    /// The manifest, every field explained. Swift scaffolds collect with a form; C ones make
    /// items programmatically.
    static func manifest(library: String, collection: String, swift: Bool) -> String {
        let libraryComment = swift
            ? "# The shared library, relative to this file. `swift build` writes it here; for a release\n# build use .build/release/…, and when you ship the .so next to this file, just its name."
            : "# The shared library, relative to this file. `make` writes it next to this manifest."
        let collectionComment = swift
            ? "# form: the host draws the provider's declarative form (collect/start, collect/submit).\n# programmatic: the provider makes items itself (provider/makeContext). both: either."
            : "# programmatic: the provider makes items itself (provider/makeContext), no form.\n# form: the host draws the provider's declarative form (collect/*). both: either."
        return """
            {{schemaComment}}# The manifest of the {{Title}} provider: the host reads it, checks it and loads the library.
            # Field reference: docs/manifest.md. Check it with `context-host validate {{slug}}.yaml`.

            # The manifest format. Always 1 for this host.
            manifestVersion: 1
            # Reverse-DNS id: lowercase, unique, and never changed once published (clients store it).
            # It must equal the id in the provider's own metadata (conformance checks this).
            id: {{id}}
            # The name users see. May be a map of locale → string, e.g. { en: Notes, de: Notizen }.
            title: {{Title}}
            # A symbol name the client maps to an icon (SF Symbols naming).
            iconName: \(swift ? "text.bubble" : "sparkles")
            # The provider's semantic version (MAJOR.MINOR.PATCH); must match provider/info.
            version: 0.1.0
            \(libraryComment)
            library: \(library)
            # Optional pin on the library's bytes; the host refuses a library whose SHA-256 differs.
            # Add it when you ship a binary: sha256: <output of `sha256sum \(library.split(separator: "/").last ?? "")`>
            # Listing order among providers: higher comes first (0 by default).
            priority: 10
            # At most this many items of this provider in one message.
            maximumAttachmentCount: 3
            # true if the collector prefers a larger container panel over an inline popover.
            usesContainerPanel: false
            \(collectionComment)
            collection: \(collection)
            # process: the host runs the provider in a worker process, so a crash only kills the worker
            # (the default, and what hosts use for third-party providers). in-process: loaded into the
            # host itself, for trusted providers only. Host policy may override this.
            isolation: process
            # Where and when the provider can be used.
            availability:
              # Operating systems it runs on.
              platforms: [linux, macos]
              # Host versions it works with (all comparators must hold).
              host: ">=0.1.0 <1.0.0"
              # Permissions it needs, granted by the client: network, location, health, calendar, files, contacts.
              permissions: []
            # Typed settings passed to the provider's open (init JSON "settings"); operators override the
            # defaults in the host configuration. A relative `path` resolves against this folder. Example:
            #   greeting: { type: string, default: "Hello", description: "Text of new items" }
            settings: {}
            # Time limits per kind of call (number + ms, s or m; at most 5m). Conformance expects the
            # p95 of each view to stay within half of its limit.
            timeouts: { collect: 30s, preview: 500ms, detail: 2s, encode: 1s }

            """
    }

    static let cMakefile = #"""
# Builds lib{{Product}}.so (lib{{Product}}.dylib on macOS) from {{snake}}.c.
# Needs only a C compiler: the ABI is the header in include/.
CC ?= cc
CFLAGS ?= -O2 -Wall -Wextra
UNAME := $(shell uname)
ifeq ($(UNAME),Darwin)
LIB := lib{{Product}}.dylib
else
LIB := lib{{Product}}.so
endif

$(LIB): {{snake}}.c include/context_provider.h include/ctxp_json.h
	$(CC) $(CFLAGS) -shared -fPIC -Iinclude -o $@ {{snake}}.c

test: $(LIB)
	./test.sh

clean:
	rm -f $(LIB)

.PHONY: test clean

"""#

    static let cSource = #"""
/*
 * {{snake}}.c — the {{Title}} context provider, in plain C.
 *
 * The host loads lib{{Product}}.so, calls context_provider_entry_v1() and talks to the provider
 * with JSON-RPC 2.0 messages through the function table (include/context_provider.h). This
 * provider makes items programmatically (provider/makeContext): a greeting stamped with the time.
 * Every request is answered synchronously, inside `call`, so cancellation needs no work and the
 * provider needs no threads; instances never change after `open`, so concurrent calls are safe.
 *
 * Change make_item() and the views (preview, detail, describe, encode) to build your own.
 */
#include "context_provider.h"
#include "ctxp_json.h"

#include <time.h>
#include <unistd.h>

#define PROVIDER_TITLE "{{Title}}"
#define PROVIDER_VERSION "0.1.0" /* must match the manifest */
#define PROVIDER_ICON "sparkles"

typedef struct { char *provider_id; } instance_t;

/* ---- Items -------------------------------------------------------------------------------- */

/** provider/makeContext → {"item": Item}. The content is everything the views need. */
static void make_item(const instance_t *instance, cj_buffer *r) {
    char uuid[37], now[32];
    ctxp_make_uuid(uuid);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cj_appends(r, "{\"item\":{\"id\":");
    cj_append_string(r, uuid);
    cj_appends(r, ",\"providerId\":");
    cj_append_string(r, instance->provider_id);
    cj_appends(r, ",\"type\":\"{{snake}}\",\"displayName\":\"Hello from {{Title}}\",\"content\":{\"message\":\"Hello from {{Title}}\",\"madeAt\":");
    cj_append_string(r, now);
    cj_appends(r, "},\"createdAt\":");
    cj_append_string(r, now);
    cj_appends(r, "}}");
}

/** Reads params.item.content; on failure writes a -32602 message naming the member. */
static int read_item(const cj_value *params, const char **message, const char **made_at, char *error, size_t size) {
    const cj_value *item = cj_get(params, "item");
    if (!item || item->type != CJ_OBJECT) { snprintf(error, size, "params.item: expected an object, got %s", cj_type_name(item)); return 0; }
    const cj_value *content = cj_get(item, "content");
    if (!content || content->type != CJ_OBJECT) { snprintf(error, size, "params.item.content: expected an object, got %s", cj_type_name(content)); return 0; }
    const cj_value *m = cj_get(content, "message"), *at = cj_get(content, "madeAt");
    if (!m || m->type != CJ_STRING) { snprintf(error, size, "params.item.content.message: expected a string, got %s", cj_type_name(m)); return 0; }
    if (!at || at->type != CJ_STRING) { snprintf(error, size, "params.item.content.madeAt: expected a string, got %s", cj_type_name(at)); return 0; }
    *message = m->string;
    *made_at = at->string;
    return 1;
}

/* ---- The ABI ------------------------------------------------------------------------------ */

static int32_t provider_open(const uint8_t *init_json, size_t init_length, void **out_instance,
                             ctxp_reply_fn on_error, void *error_context) {
    cj_value *init = cj_parse(init_json, init_length);
    const char *provider_id = cj_get_string(init, "providerId");
    instance_t *instance = provider_id ? calloc(1, sizeof *instance) : NULL;
    if (instance) instance->provider_id = strdup(provider_id);
    cj_free(init);
    if (!instance || !instance->provider_id) {
        if (instance) free(instance);
        static const char message[] = "{\"message\":\"" PROVIDER_TITLE ": cannot open (no providerId in the init JSON, or out of memory)\",\"hint\":\"Run it in context-host\"}";
        if (on_error) on_error(error_context, (const uint8_t *)message, sizeof message - 1);
        return CTXP_ERROR;
    }
    *out_instance = instance;
    return CTXP_OK;
}

static void provider_call(void *opaque, const uint8_t *bytes, size_t length, ctxp_reply_fn reply, void *reply_context) {
    const instance_t *instance = opaque;
    cj_value *request = cj_parse(bytes, length);
    if (!request) {
        /* Answer the request's own id when one can be read, so its caller is not left waiting. */
        long long id = 0;
        int has_id = cj_recover_id(bytes, length, &id);
        if (reply) ctxp_send_error(reply, reply_context, has_id, id, -32700, "Parse error: the message is not valid JSON, or nests deeper than 128 levels");
        return;
    }
    const cj_value *id_value = cj_get(request, "id");
    if (!id_value || id_value->type == CJ_NULL || !reply) {
        /* A notification (e.g. $/cancelRequest): nothing to do, every request is already answered. */
        cj_free(request);
        return;
    }
    if (id_value->type != CJ_NUMBER || !id_value->is_integer || id_value->number > 9e15 || id_value->number < -9e15) {
        ctxp_send_error(reply, reply_context, 0, 0, -32600, "Invalid request: id must be an integer");
        cj_free(request);
        return;
    }
    long long id = (long long)id_value->number;
    const char *jsonrpc = cj_get_string(request, "jsonrpc"), *method = cj_get_string(request, "method");
    if (!jsonrpc || strcmp(jsonrpc, "2.0") != 0 || !method) {
        ctxp_send_error(reply, reply_context, 1, id, -32600, "Invalid request: jsonrpc must be \"2.0\" and method a string");
        cj_free(request);
        return;
    }
    const cj_value *params = cj_get(request, "params");
    cj_buffer r = {0};
    char error[512];
    const char *message, *made_at;
    int is_view = strncmp(method, "item/", 5) == 0;
    if (strcmp(method, "provider/info") == 0) {
        cj_appends(&r, "{\"id\":");
        cj_append_string(&r, instance->provider_id);
        cj_appends(&r, ",\"title\":\"" PROVIDER_TITLE "\",\"version\":\"" PROVIDER_VERSION "\",\"iconName\":\"" PROVIDER_ICON "\",\"ctxui\":1}");
        ctxp_send_result(reply, reply_context, id, &r);
    } else if (strcmp(method, "provider/availability") == 0) {
        cj_appends(&r, "{\"available\":true}");
        ctxp_send_result(reply, reply_context, id, &r);
    } else if (strcmp(method, "provider/makeContext") == 0) {
        make_item(instance, &r);
        ctxp_send_result(reply, reply_context, id, &r);
    } else if (is_view && (strcmp(method, "item/preview") == 0 || strcmp(method, "item/detail") == 0 ||
                           strcmp(method, "item/describe") == 0 || strcmp(method, "item/encode") == 0)) {
        if (!read_item(params, &message, &made_at, error, sizeof error)) {
            ctxp_send_error(reply, reply_context, 1, id, -32602, error);
        } else if (strcmp(method, "item/preview") == 0) {
            /* A chip (docs/ctxui.schema.json): icon, title, fallbackText at least. */
            cj_appends(&r, "{\"ctxui\":1,\"icon\":\"" PROVIDER_ICON "\",\"title\":");
            cj_append_string(&r, message);
            cj_appends(&r, ",\"subtitle\":");
            cj_append_string(&r, made_at);
            cj_appends(&r, ",\"fallbackText\":");
            cj_append_string(&r, message);
            cj_appends(&r, "}");
            ctxp_send_result(reply, reply_context, id, &r);
        } else if (strcmp(method, "item/detail") == 0) {
            /* A detail document: a title and blocks (text, facts, chart, map, list, image, link). */
            cj_appends(&r, "{\"ctxui\":1,\"title\":");
            cj_append_string(&r, message);
            cj_appends(&r, ",\"blocks\":[{\"type\":\"text\",\"text\":");
            cj_append_string(&r, message);
            cj_appends(&r, "},{\"type\":\"facts\",\"facts\":[{\"label\":\"Made at\",\"value\":");
            cj_append_string(&r, made_at);
            cj_appends(&r, "}]}],\"fallbackText\":");
            cj_append_string(&r, message);
            cj_appends(&r, "}");
            ctxp_send_result(reply, reply_context, id, &r);
        } else if (strcmp(method, "item/describe") == 0) {
            cj_appends(&r, "{\"text\":");
            cj_append_string(&r, message);
            cj_appends(&r, "}");
            ctxp_send_result(reply, reply_context, id, &r);
        } else {
            /* item/encode: json (the content) or text; data is Base64. */
            const cj_value *rep = cj_get(params, "representation");
            const char *name = rep && rep->type == CJ_STRING ? rep->string : "json";
            cj_buffer data = {0};
            if (rep && rep->type != CJ_STRING && rep->type != CJ_NULL) {
                ctxp_send_error(reply, reply_context, 1, id, -32602, "params.representation: expected a string");
            } else if (strcmp(name, "json") != 0 && strcmp(name, "text") != 0) {
                ctxp_send_error(reply, reply_context, 1, id, -32602, "params.representation: unknown representation; expected one of json, text");
            } else {
                int json = strcmp(name, "json") == 0;
                if (json) {
                    cj_appends(&data, "{\"message\":");
                    cj_append_string(&data, message);
                    cj_appends(&data, ",\"madeAt\":");
                    cj_append_string(&data, made_at);
                    cj_appends(&data, "}");
                } else {
                    cj_appends(&data, message);
                }
                cj_appendf(&r, "{\"representation\":\"%s\",\"contentType\":\"%s\",\"data\":\"", json ? "json" : "text",
                           json ? "application/json" : "text/plain; charset=utf-8");
                cj_append_base64(&r, (const uint8_t *)(data.data ? data.data : ""), data.length);
                cj_appends(&r, "\",\"metadata\":{}}");
                if (data.failed) r.failed = 1;
                ctxp_send_result(reply, reply_context, id, &r);
            }
            free(data.data);
        }
    } else {
        /* collect/start and the rest: this provider has no form (manifest: collection: programmatic). */
        ctxp_send_method_not_found(reply, reply_context, id, method);
    }
    free(r.data);
    cj_free(request);
}

static void provider_close(void *opaque) {
    instance_t *instance = opaque;
    if (!instance) return;
    free(instance->provider_id);
    free(instance);
}

static const ctxp_provider_v1 table = {
    CTXP_ABI_VERSION, sizeof(ctxp_provider_v1), provider_open, provider_call, provider_close,
};

/** The one symbol the host looks up. */
__attribute__((visibility("default"))) const ctxp_provider_v1 *context_provider_entry_v1(void) {
    return &table;
}

"""#

    static let cTest = #"""
#!/bin/sh
# The sample test: build, check the manifest, load the provider in a host, run conformance.
# Set CONTEXT_HOST to use another context-host (default: the one that generated this project).
set -eu
cd "$(dirname "$0")"
HOST="${CONTEXT_HOST:-{{host}}}"
make
"$HOST" validate {{slug}}.yaml
"$HOST" list --manifests . | grep -q "{{id}}.*loaded"
"$HOST" conformance {{slug}}.yaml
echo "{{Title}}: all good"

"""#

    static let cReadme = #"""
# {{Title}} provider

A context provider for ContextHost, written in plain
C against `include/context_provider.h` (the whole ABI; `include/ctxp_json.h` is a small JSON
reader/writer you may use or replace). It was generated by `context-host new provider --language c`.

## The three commands

```sh
make                                             # 1. build lib{{Product}}.so
{{host}} list --manifests .                      # 2. load it in a host (shows it 'loaded')
{{host}} conformance {{slug}}.yaml               # 3. run the conformance checks
```

(`{{host}}` is the `context-host` that generated this project; any `context-host` on your `PATH`
works the same.) `./test.sh` (or `make test`) runs all three and checks the manifest. To serve chat
clients with it, run `context-host serve --manifests .`.

## Files

| file | what |
|---|---|
| `{{snake}}.c` | the provider: `open`, `call` (one JSON-RPC message), `close`, the entry symbol |
| `include/context_provider.h` | the ABI, copied from ContextHost (do not edit) |
| `include/ctxp_json.h` | JSON parsing and escaping helpers (header-only) |
| `{{slug}}.yaml` | the manifest; every field is explained in it |
| `Makefile`, `test.sh` | build and the sample test |

## Rules that matter

- Answer every request exactly once (`reply(reply_context, bytes, length)`), now or later, from
  any thread. Notifications (no `id`, e.g. `$/cancelRequest`) get no answer.
- `call` must return promptly: do slow work on your own thread and answer from there.
- Bytes are not NUL-terminated and are only valid during the call; copy what you keep.
- Never write to stdout; log to stderr.

## Sharing

Make a signing key once (`{{host}} keygen --output mykey`; publish `mykey.pub`), then
`{{host}} package {{slug}}.yaml --sign mykey.key` writes one signed file, `NAME-VERSION.ctxp`, and its signature `NAME-VERSION.ctxp.minisig` (publish both)
(`runtime: native`), which users install with `context-host install FILE --trust-key <the RW…
line of mykey.pub>`. Hosts run third-party providers in a sandboxed worker process. See
`docs/packages.md`. Author guide and ABI reference: `docs/writing-a-provider.md`
and `docs/abi.md` in the ContextHost repository.

"""#
}
