/*
 * secret_service.h — the Secret Service keyring (org.freedesktop.secrets over D-Bus) through
 * libsecret-1, loaded with dlopen at run time: no link-time dependency, and a machine without
 * libsecret or without a session bus simply reports the keyring unavailable
 * (docs/security.md §13, "Where the key is").
 *
 * One item per secret store: schema "org.contexthost.SecretStoreKey", attribute "store" = the
 * store's folder, the secret a short text (the store's key in Base64). Every call is bounded by
 * `timeout_seconds` (cancelled, then reported as a failure), and never prompts for anything
 * beyond what the keyring daemon itself does.
 */
#ifndef CONTEXT_HOST_SECRET_SERVICE_H
#define CONTEXT_HOST_SECRET_SERVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /** Done (lookup: the value is in `out`). */
    CTXSS_OK = 0,
    /** Lookup only: the keyring answered, and holds no such item. */
    CTXSS_NOT_FOUND = 1,
    /** No session bus, no libsecret, the service did not answer, timed out or refused: `message` says which. */
    CTXSS_ERROR = 2,
};

/**
 * Looks up the item of `store`; on CTXSS_OK copies its text (NUL-terminated) into `out`
 * (`out_size` bytes; a longer value is an error). `message` receives the reason of an error.
 */
int ctxss_lookup(const char *store, char *out, size_t out_size, int timeout_seconds, char *message, size_t message_size);

/** Stores `value` as the item of `store` (replacing one with the same attribute), labelled `label`, in the default collection. */
int ctxss_store(const char *store, const char *label, const char *value, int timeout_seconds, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
