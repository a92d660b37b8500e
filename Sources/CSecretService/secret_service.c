/*
 * secret_service.c — see include/secret_service.h. libsecret-1 (and the GLib it brings) is
 * loaded on first use with dlopen; its "simple password" calls are variadic, which is why this
 * is C and not Swift.
 */
#include "secret_service.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The layouts of libsecret's SecretSchema and GLib's GError (stable ABI of libsecret-1.so.0). */
typedef struct {
    const char *name;
    int type; /* SECRET_SCHEMA_ATTRIBUTE_STRING = 0 */
} ctxss_attribute;

typedef struct {
    const char *name;
    int flags; /* SECRET_SCHEMA_NONE = 0: items also carry xdg:schema = name */
    ctxss_attribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} ctxss_schema;

typedef struct {
    unsigned int domain;
    int code;
    char *message;
} ctxss_gerror;

static const ctxss_schema schema = {
    "org.contexthost.SecretStoreKey", 0, {{"store", 0}, {NULL, 0}}, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

static struct {
    char *(*lookup)(const ctxss_schema *, void *cancellable, ctxss_gerror **, ...);
    int (*store)(const ctxss_schema *, const char *collection, const char *label, const char *password, void *cancellable, ctxss_gerror **, ...);
    void (*password_free)(char *);
    void (*error_free)(ctxss_gerror *);
    void *(*cancellable_new)(void);
    void (*cancellable_cancel)(void *);
    void (*object_unref)(void *);
    char failure[256];
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *handle = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(lib.failure, sizeof lib.failure, "libsecret-1.so.0 is not installed (Debian: apt-get install libsecret-1-0): %s", dlerror());
        return;
    }
    /* dlsym on the handle also searches its dependencies (GLib, GIO, GObject). */
    *(void **)&lib.lookup = dlsym(handle, "secret_password_lookup_sync");
    *(void **)&lib.store = dlsym(handle, "secret_password_store_sync");
    *(void **)&lib.password_free = dlsym(handle, "secret_password_free");
    *(void **)&lib.error_free = dlsym(handle, "g_error_free");
    *(void **)&lib.cancellable_new = dlsym(handle, "g_cancellable_new");
    *(void **)&lib.cancellable_cancel = dlsym(handle, "g_cancellable_cancel");
    *(void **)&lib.object_unref = dlsym(handle, "g_object_unref");
    if (!lib.lookup || !lib.store || !lib.password_free || !lib.error_free || !lib.cancellable_new || !lib.cancellable_cancel || !lib.object_unref) {
        snprintf(lib.failure, sizeof lib.failure, "libsecret-1.so.0 lacks the functions this host calls (too old?)");
        lib.lookup = NULL;
    }
}

static void say(char *message, size_t size, const char *format, ...) {
    if (!message || size == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, size, format, arguments);
    va_end(arguments);
}

/* A session bus to talk to: without one GLib would try to autolaunch a bus (dbus-launch, X11). */
static int session_bus(char *message, size_t size) {
    const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
    if (address && *address) return 1;
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime && *runtime == '/') {
        char path[4096];
        struct stat info;
        if (snprintf(path, sizeof path, "%s/bus", runtime) < (int)sizeof path && stat(path, &info) == 0 && S_ISSOCK(info.st_mode)) return 1;
    }
    say(message, size, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus)");
    return 0;
}

static int ready(char *message, size_t size) {
    if (!session_bus(message, size)) return 0;
    pthread_once(&load_once, load);
    if (!lib.lookup) {
        say(message, size, "%s", lib.failure);
        return 0;
    }
    return 1;
}

/* Cancels `cancellable` when `seconds` pass before `done` is set. */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t condition;
    int done;
    int fired;
    int seconds;
    void *cancellable;
} watchdog;

static void *watch(void *argument) {
    watchdog *dog = argument;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += dog->seconds;
    pthread_mutex_lock(&dog->mutex);
    while (!dog->done) {
        if (pthread_cond_timedwait(&dog->condition, &dog->mutex, &deadline) == ETIMEDOUT && !dog->done) {
            dog->fired = 1;
            lib.cancellable_cancel(dog->cancellable);
            break;
        }
    }
    pthread_mutex_unlock(&dog->mutex);
    return NULL;
}

static int start(watchdog *dog, pthread_t *thread, int seconds) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&dog->condition, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&dog->mutex, NULL);
    dog->done = 0;
    dog->fired = 0;
    dog->seconds = seconds > 0 ? seconds : 1;
    dog->cancellable = lib.cancellable_new();
    if (!dog->cancellable || pthread_create(thread, NULL, watch, dog) != 0) {
        if (dog->cancellable) lib.object_unref(dog->cancellable);
        pthread_cond_destroy(&dog->condition);
        pthread_mutex_destroy(&dog->mutex);
        return 0;
    }
    return 1;
}

/* Stops the watchdog; returns whether it fired. */
static int stop(watchdog *dog, pthread_t thread) {
    pthread_mutex_lock(&dog->mutex);
    dog->done = 1;
    pthread_cond_signal(&dog->condition);
    pthread_mutex_unlock(&dog->mutex);
    pthread_join(thread, NULL);
    lib.object_unref(dog->cancellable);
    pthread_cond_destroy(&dog->condition);
    pthread_mutex_destroy(&dog->mutex);
    return dog->fired;
}

static int failed(ctxss_gerror *error, int fired, int seconds, const char *what, char *message, size_t size) {
    if (fired) {
        say(message, size, "the Secret Service did not answer the %s within %d s", what, seconds);
    } else {
        say(message, size, "the Secret Service refused the %s: %s", what, error && error->message ? error->message : "no reason given");
    }
    if (error) lib.error_free(error);
    return CTXSS_ERROR;
}

/* Checks for a bus and libsecret, then starts the call's timer; 0 (with `message`) when it cannot. */
static int begin(watchdog *dog, pthread_t *thread, int seconds, char *message, size_t size) {
    if (!ready(message, size)) return 0;
    if (!start(dog, thread, seconds)) {
        say(message, size, "cannot start the keyring call's timer");
        return 0;
    }
    return 1;
}

int ctxss_lookup(const char *store, char *out, size_t out_size, int timeout_seconds, char *message, size_t message_size) {
    watchdog dog;
    pthread_t thread;
    if (!begin(&dog, &thread, timeout_seconds, message, message_size)) return CTXSS_ERROR;
    ctxss_gerror *error = NULL;
    char *value = lib.lookup(&schema, dog.cancellable, &error, "store", store, NULL);
    int fired = stop(&dog, thread);
    if (error || fired) {
        if (value) lib.password_free(value);
        return failed(error, fired, timeout_seconds, "lookup", message, message_size);
    }
    if (!value) return CTXSS_NOT_FOUND;
    size_t length = strlen(value);
    int result = CTXSS_OK;
    if (length + 1 > out_size) {
        say(message, message_size, "the keyring item of this store is %zu bytes, not a key", length);
        result = CTXSS_ERROR;
    } else {
        memcpy(out, value, length + 1);
    }
    lib.password_free(value); /* wipes it */
    return result;
}

int ctxss_store(const char *store, const char *label, const char *value, int timeout_seconds, char *message, size_t message_size) {
    watchdog dog;
    pthread_t thread;
    if (!begin(&dog, &thread, timeout_seconds, message, message_size)) return CTXSS_ERROR;
    ctxss_gerror *error = NULL;
    int stored = lib.store(&schema, NULL, label, value, dog.cancellable, &error, "store", store, NULL);
    int fired = stop(&dog, thread);
    if (!stored || error || fired) return failed(error, fired, timeout_seconds, "store", message, message_size);
    return CTXSS_OK;
}
