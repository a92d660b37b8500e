// A C provider that misbehaves on request, for the isolation and supervision tests (issue 4).
//
// Open: the setting `mode: abort-on-open` aborts inside `open` (a provider that dies while loading).
//
// Calls: item content `{"misbehave": "<mode>"}` selects what `item/preview`, `item/detail`,
// `item/describe` and `item/encode` do; anything else answers normally.
//   segv      dereference NULL (SIGSEGV)
//   abort     abort() (SIGABRT), after a line on stderr
//   exit      exit(3) without answering
//   hang      block inside `call` forever (the reader thread of its process is stuck)
//   slow      answer after `slowMs` (default 3000) from another thread, ignoring cancellation
//   garbage   write garbage to fd 1 and answer with bytes that are not JSON
//   wrong-id  answer with a response whose id is not the request's
//   stdout    write a fake JSON-RPC response to fd 1, then answer normally
//   huge      answer a chip whose title is `hugeMB` (default 20) MiB long, or `hugeKB` KiB when given
//   leak      allocate and touch `leakMB` (default 64) MiB that are never freed, then answer;
//             abort with "out of memory" on stderr when allocation fails
//   flood     before answering, send `floodCount` (default 10000) `$/progress` notifications
//             (done 1…N of N) and as many `$/log` lines, with invalid ones among them (negative,
//             done > total, infinite, wrong types, unknown methods, a 100 KiB one); after the
//             answer, more progress (all must be dropped)
// Output validation (the host must refuse these with -32014 naming the field):
//   bad-chip-tone   item/preview: a chip whose tone is "blue"
//   big-chip        item/preview: a valid chip of about 100 KiB (over the host's 64 KiB chip cap)
//   bad-detail      item/detail: a block of type "video"
//   bad-encode      item/encode: `data` that is not Base64
//   bad-describe    item/describe: `text` is a number
//   bad-options     collect/query: an option without a label
//   bad-outcome     collect/submit: a `step` outcome whose form title is a number
//   bad-item        collect/submit: an `item` outcome whose displayName is a number
// Normal answers are valid ctxui for each method (chip, detail, encoded item, {text}, forms,
// outcomes, items). Collection (manifests with `collection: both`): settings `startForm: bad`
// makes collect/start answer a form with a field of kind "slider"; `makeItem: bad` makes
// provider/makeContext answer an item with an empty id.
// Close: with the setting `closeLog` (a file path), `close` appends the line "closed <closeTag>"
// (the setting `closeTag`, default empty) to that file, so tests can see the host close instances.
#include <context_provider.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char start_form[32];
    char make_item[32];
    char close_log[512];
    char close_tag[64];
} instance_t;

static size_t total_leaked_mb = 0;

#include "../shared/fixture_json_scan.h"

static void send_text(ctxp_reply_fn reply, void *context, const char *text) {
    reply(context, (const uint8_t *)text, strlen(text));
}

/* Writes the JSON-RPC answer to request `id` into `buffer`: `{"jsonrpc":"2.0","id":ID,"result":…}`,
 * the result formatted as by printf. */
#define RESULT(format, ...) \
    snprintf(buffer, sizeof buffer, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":" format "}", id, ##__VA_ARGS__)

static void answer_mode(ctxp_reply_fn reply, void *context, long long id, const char *method, const char *subtitle, const char *mode, const instance_t *instance) {
    char buffer[1024];
    const char *start_form = instance ? instance->start_form : "";
    const char *make_item = instance ? instance->make_item : "";
    if (strcmp(method, "provider/availability") == 0) {
        RESULT("{\"available\":true}");
    } else if (strcmp(method, "provider/info") == 0) {
        RESULT("{\"id\":\"com.contexthost.misbehaving\",\"title\":\"Misbehaving\",\"version\":\"0.0.1\",\"iconName\":\"ant\",\"ctxui\":1}");
    } else if (strcmp(method, "item/describe") == 0) {
        RESULT("{\"text\":%s}", strcmp(mode, "bad-describe") == 0 ? "42" : "\"ok\"");
    } else if (strcmp(method, "item/detail") == 0) {
        RESULT("{\"ctxui\":1,\"title\":\"ok\",\"subtitle\":\"%s\",\"fallbackText\":\"ok\",\"blocks\":[%s]}",
               subtitle, strcmp(mode, "bad-detail") == 0 ? "{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"video\",\"url\":\"x\"}" : "{\"type\":\"text\",\"text\":\"ok\"}");
    } else if (strcmp(method, "item/encode") == 0) {
        RESULT("{\"representation\":\"text\",\"contentType\":\"text/plain\",\"data\":\"%s\",\"metadata\":{\"subtitle\":\"%s\"}}",
               strcmp(mode, "bad-encode") == 0 ? "not base64!" : "b2s=", subtitle);
    } else if (strncmp(method, "item/", 5) == 0) {
        RESULT("{\"ctxui\":1,\"icon\":\"ant\",\"title\":\"ok\",\"subtitle\":\"%s\",\"tone\":\"%s\",\"fallbackText\":\"ok\"}",
               subtitle, strcmp(mode, "bad-chip-tone") == 0 ? "blue" : "neutral");
    } else if (strcmp(method, "collect/start") == 0) {
        RESULT("{\"ctxui\":1,\"stepId\":\"first\",\"title\":\"Misbehaving\",\"fallbackText\":\"Misbehaving: Text\",\"fields\":[{\"id\":\"text\",\"kind\":\"%s\",\"label\":\"Text\"}]}",
               strcmp(start_form, "bad") == 0 ? "slider" : "text");
    } else if (strcmp(method, "collect/submit") == 0) {
        if (strcmp(mode, "bad-outcome") == 0) {
            RESULT("{\"outcome\":\"step\",\"form\":{\"ctxui\":1,\"stepId\":\"second\",\"title\":5,\"fallbackText\":\"f\",\"fields\":[]}}");
        } else if (strcmp(mode, "bad-item") == 0) {
            RESULT("{\"outcome\":\"item\",\"item\":{\"id\":\"0b6b2c6e-0000-4000-8000-000000000001\",\"providerId\":\"com.contexthost.misbehaving\",\"type\":\"misbehaving\",\"displayName\":7,\"content\":{}}}");
        } else {
            RESULT("{\"outcome\":\"invalid\",\"fieldErrors\":{\"text\":\"Text is never right.\"}}");
        }
    } else if (strcmp(method, "collect/query") == 0) {
        RESULT("{\"options\":[%s]}", strcmp(mode, "bad-options") == 0 ? "{\"value\":\"v\"}" : "{\"value\":\"v\",\"label\":\"V\"}");
    } else if (strcmp(method, "collect/cancel") == 0) {
        RESULT("{}");
    } else if (strcmp(method, "provider/makeContext") == 0) {
        RESULT("{\"item\":{\"id\":\"%s\",\"providerId\":\"com.contexthost.misbehaving\",\"type\":\"misbehaving\",\"displayName\":\"Made\",\"content\":{}}}",
               strcmp(make_item, "bad") == 0 ? "" : "0b6b2c6e-0000-4000-8000-000000000002");
    } else {
        snprintf(buffer, sizeof buffer,
                 "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"Method not found: %s\"}}", id, method);
    }
    send_text(reply, context, buffer);
}

/* Answers a ctxui value whose title is `size` bytes of 'x': `{"ctxui":1,"icon":"ant",FIELDS"title":"xx…"}`
 * (FIELDS: members ending with a comma, a few dozen bytes at most). */
static void answer_long_title(ctxp_reply_fn reply, void *context, long long id, const char *fields, size_t size) {
    char *buffer = malloc(size + 256);
    if (!buffer) abort();
    int prefix = snprintf(buffer, 256, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"ctxui\":1,\"icon\":\"ant\",%s\"title\":\"", id, fields);
    memset(buffer + prefix, 'x', size);
    memcpy(buffer + prefix + size, "\"}}", 3);
    reply(context, (const uint8_t *)buffer, (size_t)prefix + size + 3);
    free(buffer);
}

static void answer(ctxp_reply_fn reply, void *context, long long id, const char *method, const char *subtitle) {
    answer_mode(reply, context, id, method, subtitle, "", NULL);
}

typedef struct {
    ctxp_reply_fn reply;
    void *context;
    long long id;
    char method[64];
    long long delay_ms;
} slow_job_t;

static void *slow_answer(void *argument) {
    slow_job_t *job = argument;
    usleep((useconds_t)(job->delay_ms * 1000));
    answer(job->reply, job->context, job->id, job->method, "slow");
    free(job);
    return NULL;
}

static int32_t fixture_open(const uint8_t *init_json, size_t init_length, void **out_instance, ctxp_reply_fn on_error, void *error_context) {
    char mode[64] = "";
    if (string_value((const char *)init_json, init_length, "mode", mode, sizeof mode) && strcmp(mode, "abort-on-open") == 0) {
        fprintf(stderr, "misbehaving: aborting during open on purpose\n");
        fflush(stderr);
        abort();
    }
    (void)on_error;
    (void)error_context;
    instance_t *instance = calloc(1, sizeof(instance_t));
    string_value((const char *)init_json, init_length, "startForm", instance->start_form, sizeof instance->start_form);
    string_value((const char *)init_json, init_length, "makeItem", instance->make_item, sizeof instance->make_item);
    string_value((const char *)init_json, init_length, "closeLog", instance->close_log, sizeof instance->close_log);
    string_value((const char *)init_json, init_length, "closeTag", instance->close_tag, sizeof instance->close_tag);
    *out_instance = instance;
    return CTXP_OK;
}

static void fixture_call(void *instance, const uint8_t *message, size_t length, ctxp_reply_fn reply, void *reply_context) {
    const char *bytes = (const char *)message;
    if (!reply) return;  // notifications, including $/cancelRequest: ignored
    long long id = integer_value(bytes, length, "id", -1);
    char method[64] = "";
    string_value(bytes, length, "method", method, sizeof method);
    char mode[64] = "";
    string_value(bytes, length, "misbehave", mode, sizeof mode);

    if (strcmp(mode, "segv") == 0) {
        fprintf(stderr, "misbehaving: about to dereference NULL\n");
        fflush(stderr);
        volatile int *null_pointer = NULL;
        *null_pointer = 1;
    } else if (strcmp(mode, "abort") == 0) {
        fprintf(stderr, "misbehaving: aborting on purpose\n");
        fflush(stderr);
        abort();
    } else if (strcmp(mode, "exit") == 0) {
        fprintf(stderr, "misbehaving: exiting with status 3\n");
        fflush(stderr);
        exit(3);
    } else if (strcmp(mode, "hang") == 0) {
        for (;;) sleep(1000);
    } else if (strcmp(mode, "slow") == 0) {
        slow_job_t *job = calloc(1, sizeof *job);
        job->reply = reply;
        job->context = reply_context;
        job->id = id;
        snprintf(job->method, sizeof job->method, "%s", method);
        job->delay_ms = integer_value(bytes, length, "slowMs", 3000);
        pthread_t thread;
        pthread_create(&thread, NULL, slow_answer, job);
        pthread_detach(thread);
        return;
    } else if (strcmp(mode, "garbage") == 0) {
        static const uint8_t garbage[] = {0x00, 0xff, 0xfe, '{', '{', 'n', 'o', 't', ' ', 'j', 's', 'o', 'n', '\n', 0x01};
        (void)!write(1, garbage, sizeof garbage);
        reply(reply_context, garbage, sizeof garbage);
        return;
    } else if (strcmp(mode, "flood") == 0) {
        long long count = integer_value(bytes, length, "floodCount", 10000);
        char line[256];
        static const char *invalid[] = {
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":-1,\"total\":10}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":50,\"total\":10}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":1e999}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":\"half\"}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":[1,2]}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/log\",\"params\":{\"level\":\"loud\",\"message\":\"x\"}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/unknown\",\"params\":{}}",
        };
        for (long long i = 1; i <= count; i++) {
            snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":%lld,\"total\":%lld,\"message\":\"step %lld\"}}", i, count, i);
            send_text(reply, reply_context, line);
            snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"method\":\"$/log\",\"params\":{\"level\":\"warning\",\"message\":\"flood line %lld\"}}", i);
            send_text(reply, reply_context, line);
            if (i % 100 == 0) send_text(reply, reply_context, invalid[(i / 100) % (sizeof invalid / sizeof invalid[0])]);
            if (i == count / 2) {
                size_t size = 100 << 10;
                char *big = malloc(size + 128);
                if (big) {
                    int n = snprintf(big, 128, "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":1,\"message\":\"");
                    memset(big + n, 'x', size);
                    memcpy(big + n + size, "\"}}", 3);
                    reply(reply_context, (const uint8_t *)big, n + size + 3);
                    free(big);
                }
            }
        }
        answer(reply, reply_context, id, method, "flooded");
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"done\":%lld,\"total\":%lld,\"message\":\"after\"}}", count, count);
        for (int i = 0; i < 100; i++) send_text(reply, reply_context, line);
        return;
    } else if (strcmp(mode, "wrong-id") == 0) {
        answer(reply, reply_context, id + 1000, method, "wrong id");
        return;
    } else if (strcmp(mode, "stdout") == 0) {
        static const char fake[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"INJECTED-BY-PROVIDER\"}\n";
        (void)!write(1, fake, sizeof fake - 1);
    } else if (strcmp(mode, "huge") == 0) {
        long long kilobytes = integer_value(bytes, length, "hugeKB", 0);
        size_t size = kilobytes > 0 && kilobytes < (1 << 20) ? (size_t)kilobytes << 10 : (size_t)integer_value(bytes, length, "hugeMB", 20) << 20;
        // Valid as a chip and as a detail (blocks), so only its size matters.
        answer_long_title(reply, reply_context, id, "\"fallbackText\":\"huge\",\"blocks\":[],", size);
        return;
    } else if (strcmp(mode, "leak") == 0) {
        size_t megabytes = (size_t)integer_value(bytes, length, "leakMB", 64);
        char *block = malloc(megabytes << 20);
        if (!block) {
            fprintf(stderr, "misbehaving: out of memory after leaking %zu MiB\n", total_leaked_mb);
            fflush(stderr);
            abort();
        }
        memset(block, 0xab, megabytes << 20);
        total_leaked_mb += megabytes;
        char subtitle[64];
        snprintf(subtitle, sizeof subtitle, "leaked %zu MiB", total_leaked_mb);
        answer(reply, reply_context, id, method, subtitle);
        return;
    } else if (strcmp(mode, "big-chip") == 0) {
        size_t size = 100 << 10;
        answer_long_title(reply, reply_context, id, "\"fallbackText\":\"big\",", size);
        return;
    }
    answer_mode(reply, reply_context, id, method, mode[0] ? mode : "normal", mode, instance);
}

static void fixture_close(void *opaque) {
    instance_t *instance = opaque;
    if (instance && instance->close_log[0]) {
        FILE *log = fopen(instance->close_log, "a");
        if (log) {
            fprintf(log, "closed %s\n", instance->close_tag);
            fclose(log);
        }
    }
    free(instance);
}

static const ctxp_provider_v1 table = {
    CTXP_ABI_VERSION, sizeof(ctxp_provider_v1), fixture_open, fixture_call, fixture_close,
};

const ctxp_provider_v1 *context_provider_entry_v1(void) { return &table; }
