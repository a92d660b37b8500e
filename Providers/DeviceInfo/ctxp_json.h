/*
 * ctxp_json.h — a small JSON reader and writer for C context providers.
 *
 * Just enough for the provider side of the ABI (context_provider.h): parse one request or item
 * into a tree, look members up, and build answers with correct string escaping and Base64; with
 * context_provider.h included first, also send results and errors and make item ids.
 * Everything is static, so this header can be copied into any provider without linking anything.
 */
#ifndef CTXP_JSON_H
#define CTXP_JSON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { CJ_NULL, CJ_BOOL, CJ_NUMBER, CJ_STRING, CJ_ARRAY, CJ_OBJECT } cj_type;

/** A parsed JSON value. Arrays and objects keep their children in a linked list. */
typedef struct cj_value {
    cj_type type;
    int boolean;
    double number;
    int is_integer;        /* the number was written without fraction or exponent */
    char *string;          /* NUL-terminated UTF-8 (may contain NUL bytes: see length) */
    size_t length;         /* string length in bytes */
    char *key;             /* member name when this value sits in an object */
    struct cj_value *child, *next;
} cj_value;

typedef struct { const uint8_t *p, *end; int depth; } cj_parser;

static void cj_free(cj_value *v) {
    while (v) {
        cj_value *next = v->next;
        cj_free(v->child);
        free(v->string);
        free(v->key);
        free(v);
        v = next;
    }
}

static void cj_skip_space(cj_parser *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int cj_hex4(cj_parser *s, unsigned *out) {
    if (s->end - s->p < 4) return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = s->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return 0;
    }
    s->p += 4;
    *out = v;
    return 1;
}

/* Parses a string after its opening quote; returns a malloc'd buffer. */
static char *cj_parse_string(cj_parser *s, size_t *out_length) {
    size_t cap = 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (s->p >= s->end) goto fail;
        uint8_t c = *s->p++;
        if (c == '"') break;
        if (c < 0x20) goto fail;
        uint8_t tmp[4];
        size_t n = 1;
        tmp[0] = c;
        if (c == '\\') {
            if (s->p >= s->end) goto fail;
            uint8_t e = *s->p++;
            switch (e) {
            case '"': tmp[0] = '"'; break;
            case '\\': tmp[0] = '\\'; break;
            case '/': tmp[0] = '/'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u': {
                unsigned cp;
                if (!cj_hex4(s, &cp)) goto fail;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned low;
                    if (s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u') {
                        s->p += 2;
                        if (!cj_hex4(s, &low) || low < 0xDC00 || low > 0xDFFF) goto fail;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else {
                        cp = 0xFFFD; /* lone surrogate */
                    }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    cp = 0xFFFD;
                }
                if (cp < 0x80) { tmp[0] = (uint8_t)cp; n = 1; }
                else if (cp < 0x800) { tmp[0] = 0xC0 | (cp >> 6); tmp[1] = 0x80 | (cp & 0x3F); n = 2; }
                else if (cp < 0x10000) { tmp[0] = 0xE0 | (cp >> 12); tmp[1] = 0x80 | ((cp >> 6) & 0x3F); tmp[2] = 0x80 | (cp & 0x3F); n = 3; }
                else { tmp[0] = 0xF0 | (cp >> 18); tmp[1] = 0x80 | ((cp >> 12) & 0x3F); tmp[2] = 0x80 | ((cp >> 6) & 0x3F); tmp[3] = 0x80 | (cp & 0x3F); n = 4; }
                break;
            }
            default: goto fail;
            }
        }
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap) cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown) goto fail;
            buf = grown;
        }
        memcpy(buf + len, tmp, n);
        len += n;
    }
    buf[len] = 0;
    *out_length = len;
    return buf;
fail:
    free(buf);
    return NULL;
}

static cj_value *cj_parse_value(cj_parser *s);

static cj_value *cj_new(cj_type type) {
    cj_value *v = calloc(1, sizeof *v);
    if (v) v->type = type;
    return v;
}

static int cj_literal(cj_parser *s, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return 0;
    s->p += n;
    return 1;
}

static cj_value *cj_parse_value(cj_parser *s) {
    cj_skip_space(s);
    if (s->p >= s->end) return NULL;
    uint8_t c = *s->p;
    if (c == '{' || c == '[') {
        if (++s->depth > 128) return NULL;
        int object = c == '{';
        s->p++;
        cj_value *v = cj_new(object ? CJ_OBJECT : CJ_ARRAY), *last = NULL;
        if (!v) return NULL;
        cj_skip_space(s);
        if (s->p < s->end && *s->p == (object ? '}' : ']')) { s->p++; s->depth--; return v; }
        for (;;) {
            char *key = NULL;
            if (object) {
                size_t klen;
                cj_skip_space(s);
                if (s->p >= s->end || *s->p != '"') goto fail;
                s->p++;
                key = cj_parse_string(s, &klen);
                if (!key) goto fail;
                cj_skip_space(s);
                if (s->p >= s->end || *s->p != ':') { free(key); goto fail; }
                s->p++;
            }
            cj_value *item = cj_parse_value(s);
            if (!item) { free(key); goto fail; }
            item->key = key;
            if (last) last->next = item; else v->child = item;
            last = item;
            cj_skip_space(s);
            if (s->p >= s->end) goto fail;
            if (*s->p == ',') { s->p++; continue; }
            if (*s->p == (object ? '}' : ']')) { s->p++; break; }
            goto fail;
        }
        s->depth--;
        return v;
    fail:
        cj_free(v);
        return NULL;
    }
    if (c == '"') {
        s->p++;
        cj_value *v = cj_new(CJ_STRING);
        if (!v) return NULL;
        v->string = cj_parse_string(s, &v->length);
        if (!v->string) { free(v); return NULL; }
        return v;
    }
    if (cj_literal(s, "true")) { cj_value *v = cj_new(CJ_BOOL); if (v) v->boolean = 1; return v; }
    if (cj_literal(s, "false")) return cj_new(CJ_BOOL);
    if (cj_literal(s, "null")) return cj_new(CJ_NULL);
    /* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const uint8_t *start = s->p;
    int integer = 1;
    if (s->p < s->end && *s->p == '-') s->p++;
    if (s->p >= s->end) return NULL;
    if (*s->p == '0') s->p++;
    else if (*s->p >= '1' && *s->p <= '9') { while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++; }
    else return NULL;
    if (s->p < s->end && *s->p == '.') {
        integer = 0;
        s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9') return NULL;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        integer = 0;
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
        if (s->p >= s->end || *s->p < '0' || *s->p > '9') return NULL;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;
    }
    char text[64];
    size_t n = (size_t)(s->p - start);
    if (n >= sizeof text) n = sizeof text - 1; /* precision beyond this is irrelevant here */
    memcpy(text, start, n);
    text[n] = 0;
    cj_value *v = cj_new(CJ_NUMBER);
    if (!v) return NULL;
    v->number = strtod(text, NULL);
    v->is_integer = integer;
    return v;
}

/** Parses `length` bytes of JSON (not NUL-terminated). Returns NULL on any syntax error. */
static cj_value *cj_parse(const uint8_t *bytes, size_t length) {
    cj_parser s = { bytes, bytes + length, 0 };
    cj_value *v = cj_parse_value(&s);
    if (!v) return NULL;
    cj_skip_space(&s);
    if (s.p != s.end) { cj_free(v); return NULL; }
    return v;
}

/** The member `key` of an object, or NULL. */
static const cj_value *cj_get(const cj_value *object, const char *key) {
    if (!object || object->type != CJ_OBJECT) return NULL;
    const cj_value *found = NULL;
    for (const cj_value *m = object->child; m; m = m->next)
        if (strcmp(m->key, key) == 0) found = m; /* the last duplicate wins, as in most parsers */
    return found;
}

/** A string member, or NULL when missing or not a string. */
static const char *cj_get_string(const cj_value *object, const char *key) {
    const cj_value *v = cj_get(object, key);
    return v && v->type == CJ_STRING ? v->string : NULL;
}

static const char *cj_type_name(const cj_value *v) {
    if (!v) return "nothing";
    switch (v->type) {
    case CJ_NULL: return "null";
    case CJ_BOOL: return "a Boolean";
    case CJ_NUMBER: return "a number";
    case CJ_STRING: return "a string";
    case CJ_ARRAY: return "an array";
    default: return "an object";
    }
}

/* ---- Writing ---------------------------------------------------------------------------- */

/** A growable byte buffer. `failed` is set when memory runs out; the text is then unusable. */
typedef struct { char *data; size_t length, capacity; int failed; } cj_buffer;

/**
 * The integer `id` member of the top-level object in `bytes`, found by a shallow scan that needs
 * no parse (for messages the parser refused: nested deeper than it goes, say), so the error still
 * answers that request instead of `"id":null`, which the host must refuse. Returns 1 and sets
 * `*out` when found.
 */
static int cj_recover_id(const uint8_t *bytes, size_t length, long long *out) {
    int depth = 0, in_string = 0, escaped = 0;
    size_t key_start = 0, key_end = 0; /* the last string closed at depth 1 */
    for (size_t i = 0; i < length; i++) {
        uint8_t c = bytes[i];
        if (in_string) {
            if (escaped) escaped = 0;
            else if (c == '\\') escaped = 1;
            else if (c == '"') {
                in_string = 0;
                if (depth == 1) key_end = i;
            }
            continue;
        }
        if (c == '"') {
            in_string = 1;
            if (depth == 1) key_start = i + 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ':' && depth == 1 && key_end == key_start + 2 && memcmp(bytes + key_start, "id", 2) == 0) {
            size_t j = i + 1;
            while (j < length && (bytes[j] == ' ' || bytes[j] == '\t' || bytes[j] == '\n' || bytes[j] == '\r')) j++;
            int negative = j < length && bytes[j] == '-';
            if (negative) j++;
            long long value = 0;
            size_t digits = 0;
            while (j < length && bytes[j] >= '0' && bytes[j] <= '9' && digits < 16) value = value * 10 + (bytes[j++] - '0'), digits++;
            if (digits == 0 || (j < length && (bytes[j] == '.' || bytes[j] == 'e' || bytes[j] == 'E' || (bytes[j] >= '0' && bytes[j] <= '9')))) return 0;
            *out = negative ? -value : value;
            return 1;
        }
        if (depth < 0) return 0;
    }
    return 0;
}

static void cj_append(cj_buffer *b, const char *bytes, size_t n) {
    if (b->failed) return;
    if (b->length + n + 1 > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 256;
        while (b->length + n + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) { b->failed = 1; return; }
        b->data = grown;
        b->capacity = cap;
    }
    memcpy(b->data + b->length, bytes, n);
    b->length += n;
    b->data[b->length] = 0;
}

static void cj_appends(cj_buffer *b, const char *text) { cj_append(b, text, strlen(text)); }

static void cj_appendf(cj_buffer *b, const char *format, ...) {
    char small[256];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(small, sizeof small, format, args);
    va_end(args);
    if (n < 0) { b->failed = 1; return; }
    if ((size_t)n < sizeof small) { cj_append(b, small, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    if (!big) { b->failed = 1; return; }
    va_start(args, format);
    vsnprintf(big, (size_t)n + 1, format, args);
    va_end(args);
    cj_append(b, big, (size_t)n);
    free(big);
}

/**
 * Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped;
 * invalid UTF-8 is replaced by U+FFFD so the output is always valid JSON.
 */
static void cj_append_string_n(cj_buffer *b, const char *text, size_t n) {
    const uint8_t *p = (const uint8_t *)text, *end = p + n;
    cj_append(b, "\"", 1);
    while (p < end) {
        uint8_t c = *p;
        if (c == '"') { cj_append(b, "\\\"", 2); p++; }
        else if (c == '\\') { cj_append(b, "\\\\", 2); p++; }
        else if (c == '\n') { cj_append(b, "\\n", 2); p++; }
        else if (c == '\r') { cj_append(b, "\\r", 2); p++; }
        else if (c == '\t') { cj_append(b, "\\t", 2); p++; }
        else if (c < 0x20 || c == 0x7F) { cj_appendf(b, "\\u%04x", c); p++; }
        else if (c < 0x80) { cj_append(b, (const char *)p, 1); p++; }
        else {
            /* Validate one UTF-8 sequence. */
            size_t len = (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
            int ok = len > 0 && (size_t)(end - p) >= len;
            for (size_t i = 1; ok && i < len; i++) ok = (p[i] & 0xC0) == 0x80;
            if (ok && len == 3) ok = !(c == 0xE0 && p[1] < 0xA0) && !(c == 0xED && p[1] > 0x9F);
            if (ok && len == 4) ok = !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] > 0x8F);
            if (ok) { cj_append(b, (const char *)p, len); p += len; }
            else { cj_append(b, "\xEF\xBF\xBD", 3); p++; }
        }
    }
    cj_append(b, "\"", 1);
}

static void cj_append_string(cj_buffer *b, const char *text) { cj_append_string_n(b, text, strlen(text)); }

/** Appends `n` bytes as standard Base64 (with padding). */
static void cj_append_base64(cj_buffer *b, const uint8_t *bytes, size_t n) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t chunk = (uint32_t)bytes[i] << 16;
        if (i + 1 < n) chunk |= (uint32_t)bytes[i + 1] << 8;
        if (i + 2 < n) chunk |= bytes[i + 2];
        char out[4] = {
            alphabet[(chunk >> 18) & 63], alphabet[(chunk >> 12) & 63],
            i + 1 < n ? alphabet[(chunk >> 6) & 63] : '=', i + 2 < n ? alphabet[chunk & 63] : '=',
        };
        cj_append(b, out, 4);
    }
}


/* ---- Answers and item ids (when context_provider.h is included first) ------------------------ */
#ifdef CTXP_ABI_VERSION
#include <time.h>
#include <unistd.h>

/** Answers `{"jsonrpc":"2.0","id":ID,"result":RESULT}`, or an out-of-memory error when either
 *  buffer failed. */
static inline void ctxp_send_result(ctxp_reply_fn reply, void *context, long long id, cj_buffer *result) {
    cj_buffer out = {0};
    cj_appendf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":", id);
    cj_append(&out, result->data ? result->data : "null", result->data ? result->length : 4);
    cj_appends(&out, "}");
    if (out.failed || result->failed) {
        free(out.data);
        out = (cj_buffer){0};
        cj_appendf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32603,\"message\":\"out of memory\"}}", id);
    }
    reply(context, (const uint8_t *)out.data, out.length);
    free(out.data);
}

/** Answers an error; `has_id == 0` answers with `"id":null` (unparseable requests). */
static inline void ctxp_send_error(ctxp_reply_fn reply, void *context, int has_id, long long id, int code, const char *message) {
    cj_buffer out = {0};
    if (has_id) cj_appendf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%lld,", id);
    else cj_appends(&out, "{\"jsonrpc\":\"2.0\",\"id\":null,");
    cj_appendf(&out, "\"error\":{\"code\":%d,\"message\":", code);
    cj_append_string(&out, message);
    cj_appends(&out, "}}");
    if (!out.failed) reply(context, (const uint8_t *)out.data, out.length);
    free(out.data);
}

/** Answers -32601 `Method not found: METHOD` (the name cut at 200 bytes). */
static inline void ctxp_send_method_not_found(ctxp_reply_fn reply, void *context, long long id, const char *method) {
    cj_buffer text = {0};
    cj_appends(&text, "Method not found: ");
    cj_append(&text, method, strnlen(method, 200));
    ctxp_send_error(reply, context, 1, id, -32601, text.data ? text.data : "Method not found");
    free(text.data);
}

/** Writes a random RFC 4122 version 4 UUID (36 characters + NUL), for a new item's id. */
static inline void ctxp_make_uuid(char out[37]) {
    uint8_t b[16];
    if (getentropy(b, sizeof b) != 0) {
        /* Extremely unlikely; fall back to time and address bits, still unique enough per process. */
        uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)out ^ ((uint64_t)clock() << 32);
        for (int i = 0; i < 16; i++) { seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; b[i] = (uint8_t)(seed >> 56); }
    }
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}
#endif /* CTXP_ABI_VERSION */

#endif /* CTXP_JSON_H */
