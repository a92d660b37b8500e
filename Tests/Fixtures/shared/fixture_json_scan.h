/* Minimal JSON scanning for the C fixture providers (hostile.c, misbehaving.c): they look up a
 * top-level key's string or integer without a JSON library. Not a parser: a key is found by its
 * quoted name anywhere in the bytes, which is all a fixture's own requests need. */
#ifndef FIXTURE_JSON_SCAN_H
#define FIXTURE_JSON_SCAN_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Finds `"key"` then `:` and returns a pointer just after the colon and spaces, or NULL. */
static const char *find_value(const char *bytes, size_t length, const char *key) {
    size_t key_length = strlen(key);
    for (size_t i = 0; i + key_length + 2 <= length; i++) {
        if (bytes[i] == '"' && memcmp(bytes + i + 1, key, key_length) == 0 && bytes[i + 1 + key_length] == '"') {
            size_t j = i + key_length + 2;
            while (j < length && (bytes[j] == ' ' || bytes[j] == ':')) j++;
            if (j < length) return bytes + j;
        }
    }
    return NULL;
}

/* Copies a string value (after find_value) into `out`. */
static int string_value(const char *bytes, size_t length, const char *key, char *out, size_t out_size) {
    const char *value = find_value(bytes, length, key);
    if (!value || *value != '"') return 0;
    value++;
    size_t n = 0;
    while (value < bytes + length && *value != '"' && n + 1 < out_size) out[n++] = *value++;
    out[n] = 0;
    return 1;
}

static long long integer_value(const char *bytes, size_t length, const char *key, long long fallback) {
    const char *value = find_value(bytes, length, key);
    if (!value) return fallback;
    char buffer[32];
    size_t n = 0;
    while (value < bytes + length && n + 1 < sizeof buffer && ((*value >= '0' && *value <= '9') || *value == '-')) buffer[n++] = *value++;
    buffer[n] = 0;
    return n ? atoll(buffer) : fallback;
}

#endif
