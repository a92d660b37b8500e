/*
 * device_info.c — the Device Information provider, written in plain C against context_provider.h.
 *
 * It proves the ABI needs nothing but the header: no SDK, no Swift runtime. The provider makes
 * items programmatically (`provider/makeContext`): the host name, operating system, kernel,
 * architecture, CPU count, uptime and memory of the machine the host runs on. Views are computed
 * from the item alone, so every request is answered synchronously from inside `call`, which
 * makes cancellation trivial (`$/cancelRequest` always arrives after the answer) and needs no
 * threads or locks: the instance is immutable after `open`.
 *
 * Build: by the package (`swift build`, target DeviceInfoProvider), or standalone with the
 * Makefile next to this file.
 */
#define _GNU_SOURCE
#include "context_provider.h"
#include "ctxp_json.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#if defined(__linux__)
#include <sys/sysinfo.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#include <mach/mach.h>
#endif

#define PROVIDER_TITLE "Device Information"
#define PROVIDER_VERSION "1.0.0"
#define PROVIDER_ICON "desktopcomputer"
#define ITEM_TYPE "device"

/** One opened instance: only the provider id from the init JSON, never mutated after `open`. */
typedef struct {
    char *provider_id;
} device_instance;

/** What an item's content holds. Strings point into a parsed tree or a snapshot buffer. */
typedef struct {
    const char *hostname, *os, *kernel, *architecture, *collected_at;
    double cpu_count, uptime_seconds, memory_total, memory_available;
} device_info;

/* ---- Collecting device information ----------------------------------------------------- */

/** PRETTY_NAME from /etc/os-release (unquoted), else "<sysname> <release>". */
static void read_os_name(char *out, size_t size, const struct utsname *u) {
    snprintf(out, size, "%s %s", u->sysname, u->release);
#if defined(__linux__)
    FILE *file = fopen("/etc/os-release", "r");
    if (!file) file = fopen("/usr/lib/os-release", "r");
    if (!file) return;
    char line[512];
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, "PRETTY_NAME=", 12) != 0) continue;
        char *value = line + 12;
        value[strcspn(value, "\r\n")] = 0;
        size_t n = strlen(value);
        if (n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n - 1] == value[0]) {
            value[n - 1] = 0;
            value++;
        }
        if (*value) snprintf(out, size, "%s", value);
        break;
    }
    fclose(file);
#elif defined(__APPLE__)
    char version[64];
    size_t length = sizeof version;
    if (sysctlbyname("kern.osproductversion", version, &length, NULL, 0) == 0) snprintf(out, size, "macOS %s", version);
#endif
}

/** MemTotal and MemAvailable in bytes (Linux: /proc/meminfo; macOS: sysctl and VM statistics). */
static void read_memory(double *total, double *available) {
    *total = 0;
    *available = 0;
#if defined(__linux__)
    FILE *file = fopen("/proc/meminfo", "r");
    if (file) {
        char line[256];
        unsigned long long kib;
        while (fgets(line, sizeof line, file)) {
            if (sscanf(line, "MemTotal: %llu kB", &kib) == 1) *total = (double)kib * 1024.0;
            else if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) *available = (double)kib * 1024.0;
        }
        fclose(file);
    }
    if (*total == 0) {
        struct sysinfo info;
        if (sysinfo(&info) == 0) {
            *total = (double)info.totalram * info.mem_unit;
            *available = (double)info.freeram * info.mem_unit;
        }
    }
#elif defined(__APPLE__)
    uint64_t bytes = 0;
    size_t length = sizeof bytes;
    if (sysctlbyname("hw.memsize", &bytes, &length, NULL, 0) == 0) *total = (double)bytes;
    vm_statistics64_data_t stats;
    mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
    if (host_statistics64(mach_host_self(), HOST_VM_INFO64, (host_info64_t)&stats, &count) == KERN_SUCCESS)
        *available = (double)(stats.free_count + stats.inactive_count) * (double)vm_page_size;
#endif
}

static double read_uptime(void) {
#if defined(__linux__)
    struct sysinfo info;
    if (sysinfo(&info) == 0) return (double)info.uptime;
#elif defined(__APPLE__)
    struct timeval boot;
    size_t length = sizeof boot;
    if (sysctlbyname("kern.boottime", &boot, &length, NULL, 0) == 0) return difftime(time(NULL), boot.tv_sec);
#endif
    return 0;
}

/** The item content, written in a fixed member order so encodings are deterministic. */
static void append_content(cj_buffer *b, const device_info *d) {
    cj_appends(b, "{\"hostname\":");
    cj_append_string(b, d->hostname);
    cj_appends(b, ",\"os\":");
    cj_append_string(b, d->os);
    cj_appends(b, ",\"kernel\":");
    cj_append_string(b, d->kernel);
    cj_appends(b, ",\"architecture\":");
    cj_append_string(b, d->architecture);
    cj_appendf(b, ",\"cpuCount\":%.0f,\"uptimeSeconds\":%.0f,\"memoryTotalBytes\":%.0f,\"memoryAvailableBytes\":%.0f",
               d->cpu_count, d->uptime_seconds, d->memory_total, d->memory_available);
    if (d->collected_at) {
        cj_appends(b, ",\"collectedAt\":");
        cj_append_string(b, d->collected_at);
    }
    cj_appends(b, "}");
}

/** `provider/makeContext`: a snapshot of this machine as an item. */
static void make_context(const device_instance *instance, cj_buffer *result) {
    struct utsname u;
    if (uname(&u) != 0) memset(&u, 0, sizeof u);
    char hostname[256] = "";
    if (gethostname(hostname, sizeof hostname - 1) != 0 || !hostname[0]) snprintf(hostname, sizeof hostname, "%s", u.nodename[0] ? u.nodename : "localhost");
    char os[512], kernel[256 + 65], now[32], uuid[37];
    read_os_name(os, sizeof os, &u);
    snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    device_info d = { hostname, os, kernel, u.machine[0] ? u.machine : "unknown", now, cpus > 0 ? (double)cpus : 1, read_uptime(), 0, 0 };
    read_memory(&d.memory_total, &d.memory_available);
    ctxp_make_uuid(uuid);

    cj_appends(result, "{\"item\":{\"id\":");
    cj_append_string(result, uuid);
    cj_appends(result, ",\"providerId\":");
    cj_append_string(result, instance->provider_id);
    cj_appends(result, ",\"type\":\"" ITEM_TYPE "\",\"displayName\":");
    cj_append_string(result, hostname);
    cj_appends(result, ",\"content\":");
    append_content(result, &d);
    cj_appends(result, ",\"createdAt\":");
    cj_append_string(result, now);
    cj_appends(result, "}}");
}

/* ---- Reading items ------------------------------------------------------------------------ */

/**
 * Reads `params.item` into `d`. On failure writes a message naming the member path and the
 * expected type into `error` and returns 0 (the caller answers -32602).
 */
static int read_item(const cj_value *params, device_info *d, char *error, size_t size) {
    const cj_value *item = cj_get(params, "item");
    if (!item || item->type != CJ_OBJECT) {
        snprintf(error, size, "params.item: expected an object, got %s", cj_type_name(item));
        return 0;
    }
    const cj_value *content = cj_get(item, "content");
    if (!content || content->type != CJ_OBJECT) {
        snprintf(error, size, "params.item.content: expected an object, got %s", cj_type_name(content));
        return 0;
    }
    static const char *const string_keys[] = { "hostname", "os", "kernel", "architecture" };
    const char **string_slots[] = { &d->hostname, &d->os, &d->kernel, &d->architecture };
    for (int i = 0; i < 4; i++) {
        const cj_value *v = cj_get(content, string_keys[i]);
        if (!v || v->type != CJ_STRING) {
            snprintf(error, size, "params.item.content.%s: expected a string, got %s", string_keys[i], cj_type_name(v));
            return 0;
        }
        *string_slots[i] = v->string;
    }
    static const char *const number_keys[] = { "cpuCount", "uptimeSeconds", "memoryTotalBytes", "memoryAvailableBytes" };
    double *number_slots[] = { &d->cpu_count, &d->uptime_seconds, &d->memory_total, &d->memory_available };
    for (int i = 0; i < 4; i++) {
        const cj_value *v = cj_get(content, number_keys[i]);
        if (!v || v->type != CJ_NUMBER) {
            snprintf(error, size, "params.item.content.%s: expected a number, got %s", number_keys[i], cj_type_name(v));
            return 0;
        }
        if (v->number < 0 || v->number > 1e18) {
            snprintf(error, size, "params.item.content.%s: expected a number from 0 to 1e18, got %g", number_keys[i], v->number);
            return 0;
        }
        *number_slots[i] = v->number;
    }
    const cj_value *collected = cj_get(content, "collectedAt");
    if (collected && collected->type != CJ_STRING && collected->type != CJ_NULL) {
        snprintf(error, size, "params.item.content.collectedAt: expected a string, got %s", cj_type_name(collected));
        return 0;
    }
    d->collected_at = collected && collected->type == CJ_STRING ? collected->string : NULL;
    return 1;
}

/* ---- Formatting ---------------------------------------------------------------------------- */

static void format_uptime(double seconds, char *out, size_t size) {
    unsigned long long s = (unsigned long long)seconds;
    unsigned long long days = s / 86400, hours = s % 86400 / 3600, minutes = s % 3600 / 60;
    if (days > 0) snprintf(out, size, "%llud %lluh", days, hours);
    else if (hours > 0) snprintf(out, size, "%lluh %llum", hours, minutes);
    else snprintf(out, size, "%llum", minutes);
}

static void format_bytes(double bytes, char *out, size_t size) {
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
    if (bytes >= gib) snprintf(out, size, "%.1f GiB", bytes / gib);
    else snprintf(out, size, "%.0f MiB", bytes / mib);
}

/** "12.3 of 15.6 GiB used (79 %)" */
static void format_memory(const device_info *d, char *out, size_t size) {
    char used[32], total[32];
    double used_bytes = d->memory_total > d->memory_available ? d->memory_total - d->memory_available : 0;
    format_bytes(used_bytes, used, sizeof used);
    format_bytes(d->memory_total, total, sizeof total);
    if (d->memory_total > 0) snprintf(out, size, "%s of %s used (%.0f%%)", used, total, used_bytes * 100.0 / d->memory_total);
    else snprintf(out, size, "unknown");
}

static void item_preview(const device_info *d, cj_buffer *r) {
    char uptime[64], memory[96];
    format_uptime(d->uptime_seconds, uptime, sizeof uptime);
    format_memory(d, memory, sizeof memory);
    cj_buffer subtitle = {0}, text = {0};
    cj_appendf(&subtitle, "%s \xC2\xB7 up %s", d->os, uptime);
    cj_appendf(&text, "%s (%s, up %s)", d->hostname, d->os, uptime);
    cj_appends(r, "{\"ctxui\":1,\"icon\":\"" PROVIDER_ICON "\",\"title\":");
    cj_append_string(r, d->hostname);
    cj_appends(r, ",\"subtitle\":");
    cj_append_string(r, subtitle.data ? subtitle.data : "");
    cj_appends(r, ",\"tone\":\"neutral\",\"accessibilityLabel\":");
    cj_buffer label = {0};
    cj_appendf(&label, "Device %s: %s, up %s, memory %s", d->hostname, d->os, uptime, memory);
    cj_append_string(r, label.data ? label.data : "");
    cj_appends(r, ",\"fallbackText\":");
    cj_append_string(r, text.data ? text.data : "");
    cj_appends(r, "}");
    free(subtitle.data);
    free(text.data);
    free(label.data);
}

static void item_detail(const device_info *d, cj_buffer *r) {
    char uptime[64], memory[96], total[32], available[32], cpus[32];
    format_uptime(d->uptime_seconds, uptime, sizeof uptime);
    format_memory(d, memory, sizeof memory);
    format_bytes(d->memory_total, total, sizeof total);
    format_bytes(d->memory_available, available, sizeof available);
    snprintf(cpus, sizeof cpus, "%.0f", d->cpu_count);
    const char *labels[] = { "Host name", "Operating system", "Kernel", "Architecture", "CPUs", "Uptime", "Memory", "Memory total", "Memory available", "Collected" };
    const char *values[] = { d->hostname, d->os, d->kernel, d->architecture, cpus, uptime, memory, total, available, d->collected_at };
    int count = d->collected_at ? 10 : 9;
    cj_appends(r, "{\"ctxui\":1,\"title\":");
    cj_append_string(r, d->hostname);
    cj_appends(r, ",\"blocks\":[{\"type\":\"facts\",\"facts\":[");
    cj_buffer fallback = {0};
    cj_appends(&fallback, d->hostname);
    for (int i = 0; i < count; i++) {
        cj_appends(r, i ? ",{\"label\":" : "{\"label\":");
        cj_append_string(r, labels[i]);
        cj_appends(r, ",\"value\":");
        cj_append_string(r, values[i]);
        cj_appends(r, "}");
        cj_appendf(&fallback, "\n%s: %s", labels[i], values[i]);
    }
    cj_appends(r, "]}],\"fallbackText\":");
    cj_append_string(r, fallback.data ? fallback.data : "");
    cj_appends(r, "}");
    free(fallback.data);
}

/** The plain-text form used by `item/describe` and the `text` encoding. */
static void describe_text(const device_info *d, cj_buffer *t) {
    char uptime[64], memory[96];
    format_uptime(d->uptime_seconds, uptime, sizeof uptime);
    format_memory(d, memory, sizeof memory);
    cj_appendf(t, "Device %s: %s, kernel %s (%s), %.0f CPU%s, memory %s, up %s",
               d->hostname, d->os, d->kernel, d->architecture, d->cpu_count, d->cpu_count == 1 ? "" : "s", memory, uptime);
    if (d->collected_at) cj_appendf(t, " (as of %s)", d->collected_at);
}

/** `item/encode`: 0 on success, else writes the -32602 message into `error`. */
static int item_encode(const device_info *d, const cj_value *params, cj_buffer *r, char *error, size_t size) {
    const cj_value *representation = cj_get(params, "representation");
    const char *name = "json";
    if (representation && representation->type == CJ_STRING) name = representation->string;
    else if (representation && representation->type != CJ_NULL) {
        snprintf(error, size, "params.representation: expected a string, got %s", cj_type_name(representation));
        return 0;
    }
    cj_buffer data = {0};
    const char *content_type;
    if (strcmp(name, "json") == 0) {
        append_content(&data, d);
        content_type = "application/json";
    } else if (strcmp(name, "text") == 0) {
        describe_text(d, &data);
        content_type = "text/plain; charset=utf-8";
    } else {
        snprintf(error, size, "params.representation: unknown representation \"%.64s\"; expected one of json, text", name);
        return 0;
    }
    cj_appends(r, "{\"representation\":");
    cj_append_string(r, name);
    cj_appends(r, ",\"contentType\":");
    cj_append_string(r, content_type);
    cj_appends(r, ",\"data\":\"");
    cj_append_base64(r, (const uint8_t *)(data.data ? data.data : ""), data.length);
    cj_appends(r, "\",\"metadata\":{\"hostname\":");
    cj_append_string(r, d->hostname);
    cj_appends(r, "}}");
    if (data.failed) r->failed = 1;
    free(data.data);
    return 1;
}

/* ---- The ABI ------------------------------------------------------------------------------ */

static int32_t device_open(const uint8_t *init_json, size_t init_length, void **out_instance,
                           ctxp_reply_fn on_error, void *error_context) {
    cj_value *init = cj_parse(init_json, init_length);
    const char *provider_id = cj_get_string(init, "providerId");
    if (!provider_id || !*provider_id) {
        static const char message[] =
            "{\"message\":\"Device Information: the init JSON has no providerId string\","
            "\"hint\":\"This is a host bug: open must receive the init JSON described in context_provider.h\"}";
        if (on_error) on_error(error_context, (const uint8_t *)message, sizeof message - 1);
        cj_free(init);
        return CTXP_ERROR;
    }
    device_instance *instance = calloc(1, sizeof *instance);
    char *copy = strdup(provider_id);
    cj_free(init);
    if (!instance || !copy) {
        free(instance);
        free(copy);
        static const char message[] = "{\"message\":\"Device Information: out of memory\",\"hint\":\"Free some memory and restart the host\"}";
        if (on_error) on_error(error_context, (const uint8_t *)message, sizeof message - 1);
        return CTXP_ERROR;
    }
    instance->provider_id = copy;
    *out_instance = instance;
    return CTXP_OK;
}

static void device_call(void *opaque, const uint8_t *message, size_t length, ctxp_reply_fn reply, void *reply_context) {
    const device_instance *instance = opaque;
    cj_value *request = cj_parse(message, length);
    if (!request) {
        /* Answer the request's own id when one can be read (a notification gets no answer). */
        long long id = 0;
        int has_id = cj_recover_id(message, length, &id);
        if (reply) ctxp_send_error(reply, reply_context, has_id, id, -32700, "Parse error: the message is not valid JSON, or nests deeper than 128 levels");
        return;
    }
    const cj_value *id_value = cj_get(request, "id");
    if (request->type != CJ_OBJECT || (id_value && id_value->type != CJ_NUMBER && id_value->type != CJ_NULL) ||
        (id_value && id_value->type == CJ_NUMBER && (!id_value->is_integer || id_value->number > 9e15 || id_value->number < -9e15))) {
        if (reply) ctxp_send_error(reply, reply_context, 0, 0, -32600, "Invalid request: expected an object with an integer id");
        cj_free(request);
        return;
    }
    if (!id_value || id_value->type == CJ_NULL) {
        /* A notification ($/cancelRequest and any other): every request is answered before
           `call` returns, so there is never anything left to cancel. */
        cj_free(request);
        return;
    }
    long long id = (long long)id_value->number;
    if (!reply) { cj_free(request); return; }
    const char *jsonrpc = cj_get_string(request, "jsonrpc");
    const char *method = cj_get_string(request, "method");
    if (!jsonrpc || strcmp(jsonrpc, "2.0") != 0 || !method) {
        ctxp_send_error(reply, reply_context, 1, id, -32600, "Invalid request: jsonrpc must be \"2.0\" and method a string");
        cj_free(request);
        return;
    }
    const cj_value *params = cj_get(request, "params");
    cj_buffer result = {0};
    char error[512];
    if (strcmp(method, "provider/info") == 0) {
        cj_appends(&result, "{\"id\":");
        cj_append_string(&result, instance->provider_id);
        cj_appends(&result, ",\"title\":\"" PROVIDER_TITLE "\",\"version\":\"" PROVIDER_VERSION "\",\"iconName\":\"" PROVIDER_ICON "\",\"ctxui\":1}");
        ctxp_send_result(reply, reply_context, id, &result);
    } else if (strcmp(method, "provider/availability") == 0) {
        cj_appends(&result, "{\"available\":true}");
        ctxp_send_result(reply, reply_context, id, &result);
    } else if (strcmp(method, "provider/makeContext") == 0) {
        make_context(instance, &result);
        ctxp_send_result(reply, reply_context, id, &result);
    } else if (strcmp(method, "item/preview") == 0 || strcmp(method, "item/detail") == 0 ||
               strcmp(method, "item/describe") == 0 || strcmp(method, "item/encode") == 0) {
        device_info d;
        if (!read_item(params, &d, error, sizeof error)) {
            ctxp_send_error(reply, reply_context, 1, id, -32602, error);
        } else if (strcmp(method, "item/preview") == 0) {
            item_preview(&d, &result);
            ctxp_send_result(reply, reply_context, id, &result);
        } else if (strcmp(method, "item/detail") == 0) {
            item_detail(&d, &result);
            ctxp_send_result(reply, reply_context, id, &result);
        } else if (strcmp(method, "item/describe") == 0) {
            cj_buffer text = {0};
            describe_text(&d, &text);
            cj_appends(&result, "{\"text\":");
            cj_append_string(&result, text.data ? text.data : "");
            cj_appends(&result, "}");
            if (text.failed) result.failed = 1;
            free(text.data);
            ctxp_send_result(reply, reply_context, id, &result);
        } else if (item_encode(&d, params, &result, error, sizeof error)) {
            ctxp_send_result(reply, reply_context, id, &result);
        } else {
            ctxp_send_error(reply, reply_context, 1, id, -32602, error);
        }
    } else if (strncmp(method, "collect/", 8) == 0) {
        ctxp_send_error(reply, reply_context, 1, id, -32601,
                   PROVIDER_TITLE " has no collector; it makes items programmatically (provider/makeContext)");
    } else {
        ctxp_send_method_not_found(reply, reply_context, id, method);
    }
    free(result.data);
    cj_free(request);
}

static void device_close(void *opaque) {
    device_instance *instance = opaque;
    if (!instance) return;
    free(instance->provider_id);
    free(instance);
}

static const ctxp_provider_v1 device_table = {
    CTXP_ABI_VERSION, sizeof(ctxp_provider_v1), device_open, device_call, device_close,
};

/** The library's entry point (context_provider.h). */
__attribute__((visibility("default"))) const ctxp_provider_v1 *context_provider_entry_v1(void) {
    return &device_table;
}
