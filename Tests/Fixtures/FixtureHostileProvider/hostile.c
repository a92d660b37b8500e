// A hostile C provider for the sandbox tests (issue 25): each `item/preview` whose item content is
// `{"escape": "<name>", ...}` tries one escape and answers a chip whose `subtitle` says what
// happened: "refused: <what>: <ERRNO> (<text>)" when the attempt failed (the errno's name, e.g.
// `EACCES`, so a test can assert which layer refused it), "ESCAPED: <what>" when it worked.
// Anything else answers normally (the provider's legitimate calls). Every escape really works
// without the sandbox (`--sandbox off`): SandboxTests runs each one there too, as the control.
//
// Parameters in the content: `pid` (a target process as the test sees it: a victim the test
// started, not the host, whose protocol a successful control run would corrupt), `path` (a file
// or folder to read or write, a variable name, an abstract socket name), `port` (a TCP port on
// 127.0.0.1), `count` (how many files to open).
//
//   read-file       open `path` for reading and read a byte (/etc/shadow, another provider's
//                   folder, $HOME, the state folder, other manifests)
//   write-file      create `path` and write to it (outside its folder: must be refused)
//   write-own       create a file in its data folder (`dataDirectory`): must work
//   tcp-connect     connect to 127.0.0.1:`port`
//   netlink         open an AF_NETLINK socket
//   abstract-unix   connect to the abstract UNIX socket named `path` (no leading NUL)
//   fork-exec       fork, and execve /bin/sh in the child
//   leave-child     fork a child that sleeps for an hour, and leave it
//   proc-environ / proc-cmdline   open /proc/`pid`/environ, cmdline and read from it
//   proc-mem        open /proc/`pid`/mem for reading (the kernel's ptrace check is at open)
//   ptrace          PTRACE_ATTACH to `pid`
//   forge-response  open /proc/`pid`/fd/0…63 for writing and write a forged JSON-RPC response
//   signal-host     kill(`pid`, SIGCONT)
//   getenv          the value of the environment variable `path`
//   environ-names   the names of every environment variable, comma-separated (always "ok: …")
//   open-files      open /dev/null `count` times (RLIMIT_NOFILE)
//   file-size       write one byte at offset 2 GiB of a file in its data folder (RLIMIT_FSIZE;
//                   SIGXFSZ is ignored so the write fails with EFBIG instead of killing it)
//   mmap-shared     map 4 GiB MAP_SHARED and touch its first and last pages
//   threads         start 200 threads
//   processes       fork 200 processes
//   unshare         unshare(CLONE_NEWUSER)
//   busy-after      answer, then spin a core forever in a background thread
//   host-burst      send `count` (1 to 64) `host/fetch` requests of the URL `path` through the
//                   reply callback at once, one after the other on a thread of its own (`call`
//                   returns at once), then wait (at most 20 s) for every answer; the subtitle is
//                   "answered A/N; inside-reply R; codes C1,C2,…; first error: CODE MESSAGE",
//                   each Ci the status (200) or the error code of request i, R how many answers
//                   came from inside the provider's own reply callback (the ABI forbids it: an
//                   in-process provider may hold a lock there; docs/provider-abi.md)
//   fd3-burst       host-burst, but each request framed (`WorkerFrame`: length, the preview's tag,
//                   the message) and written to fd 3, the worker's host-request pipe, by the
//                   provider itself (the control of the fd3-* attempts below: the channel works)
//   fd3-junk / fd3-short-length / fd3-huge-length / fd3-response / fd3-notification
//                   write to fd 3: 48 bytes of text; a frame whose length (4) is shorter than its
//                   tag; a header announcing 4 GiB - 16; a well-formed frame (the preview's tag)
//                   holding a response to the preview; one holding a `$/log` notification.
//                   Then answer nothing (the host must kill the worker), or, when the write
//                   failed, "refused: write(3): ERRNO (text)"
#define _GNU_SOURCE
#include <context_provider.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char data_directory[1024];
} instance_t;

#include "../shared/fixture_json_scan.h"

static void answer_chip(ctxp_reply_fn reply, void *context, long long id, const char *title, const char *subtitle) {
    char buffer[2048];
    char clean[1024];
    size_t n = 0;
    for (const char *p = subtitle; *p && n + 1 < sizeof clean; p++) clean[n++] = (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? '\'' : *p;
    clean[n] = 0;
    int length = snprintf(buffer, sizeof buffer,
                          "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"ctxui\":1,\"icon\":\"ant\",\"title\":\"%s\",\"subtitle\":\"%s\",\"tone\":\"neutral\",\"fallbackText\":\"%s\"}}",
                          id, title, clean, title);
    reply(context, (const uint8_t *)buffer, (size_t)length);
}

static void refused(char *out, size_t size, const char *what) {
    const char *name = strerrorname_np(errno);
    snprintf(out, size, "refused: %s: %s (%s)", what, name ? name : "E?", strerror(errno));
}

/* Connects a new stream socket of `family` to `address`; 1 on success, else 0 with `out` saying
   which call was refused and why. */
static int connect_to(int family, const struct sockaddr *address, socklen_t length, char *out, size_t size) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        refused(out, size, family == AF_INET ? "socket(AF_INET)" : "socket(AF_UNIX)");
        return 0;
    }
    if (connect(fd, address, length) != 0) {
        int error = errno;
        close(fd);
        errno = error;
        refused(out, size, "connect");
        return 0;
    }
    close(fd);
    return 1;
}

static volatile int stop_threads = 0;
static void *idle_thread(void *argument) {
    (void)argument;
    while (!stop_threads) usleep(10000);
    return NULL;
}

static void *spin_thread(void *argument) {
    (void)argument;
    volatile unsigned long long counter = 0;
    for (;;) counter++;
    return NULL;
}

/* host-burst: the requests sent and their answers (one burst at a time per process). */
#define BURST_MAXIMUM 64
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long long first_id;
    int count;
    int answered;
    int inside_reply;
    long long codes[BURST_MAXIMUM];
    int have[BURST_MAXIMUM];
    char first_error[300];
} burst = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
static long long burst_next_id = 1000;
/* Set while this thread is inside a reply callback it called. */
static __thread int in_reply_callback = 0;

/* The host's answer to a host request (a message with `id` and `result` or `error`, passed to
   `call` without a reply callback). */
static void host_answer(const char *bytes, size_t length) {
    long long id = integer_value(bytes, length, "id", -1);
    int is_error = find_value(bytes, length, "error") != NULL;
    long long code = is_error ? integer_value(bytes, length, "code", 0) : integer_value(bytes, length, "status", 0);
    pthread_mutex_lock(&burst.lock);
    long long index = id - burst.first_id;
    if (index >= 0 && index < burst.count && !burst.have[index]) {
        burst.have[index] = 1;
        burst.codes[index] = code;
        burst.answered++;
        if (in_reply_callback) burst.inside_reply++;
        if (is_error && !burst.first_error[0]) {
            char message[256] = "";
            string_value(bytes, length, "message", message, sizeof message);
            snprintf(burst.first_error, sizeof burst.first_error, "%lld %s", code, message);
        }
        pthread_cond_broadcast(&burst.changed);
    }
    pthread_mutex_unlock(&burst.lock);
}

typedef struct {
    char url[512];
    long long count;
    long long id;
    ctxp_reply_fn reply;
    void *reply_context;
    int via_fd3;
} burst_job_t;

/* Writes one worker frame (4-byte little-endian length of tag + payload, 8-byte little-endian tag,
   payload) to fd 3; 0 on success, else -1 with errno set. */
static int write_fd3_frame(long long tag, const char *payload, size_t length) {
    unsigned char header[12];
    unsigned long long total = (unsigned long long)length + 8;
    for (int i = 0; i < 4; i++) header[i] = (unsigned char)(total >> (8 * i));
    for (int i = 0; i < 8; i++) header[4 + i] = (unsigned char)((unsigned long long)tag >> (8 * i));
    unsigned char frame[4096];
    if (length > sizeof frame - sizeof header) {
        errno = EMSGSIZE;
        return -1;
    }
    memcpy(frame, header, sizeof header);
    memcpy(frame + sizeof header, payload, length);
    return write(3, frame, sizeof header + length) == (ssize_t)(sizeof header + length) ? 0 : -1;
}

/* Sends the burst and answers the preview, on a thread of its own (`call` returns at once, so a
   worker's reader goes on passing the host's answers to `call`). */
static void *host_burst_thread(void *argument) {
    burst_job_t *job = argument;
    char out[900];
    size_t size = sizeof out;
    pthread_mutex_lock(&burst.lock);
    burst.first_id = burst_next_id;
    burst_next_id += BURST_MAXIMUM;
    burst.count = (int)job->count;
    burst.answered = 0;
    burst.inside_reply = 0;
    burst.first_error[0] = 0;
    memset(burst.have, 0, sizeof burst.have);
    long long first_id = burst.first_id;
    pthread_mutex_unlock(&burst.lock);
    /* All sent before any is waited for: a provider that starts many fetches at once. */
    for (long long i = 0; i < job->count; i++) {
        char message[700];
        int n = snprintf(message, sizeof message, "{\"jsonrpc\":\"2.0\",\"method\":\"host/fetch\",\"id\":%lld,\"params\":{\"url\":\"%s\"}}", first_id + i, job->url);
        if (job->via_fd3) {
            if (write_fd3_frame((long long)(intptr_t)job->reply_context, message, (size_t)n) != 0) {
                pthread_mutex_lock(&burst.lock);
                if (!burst.first_error[0]) snprintf(burst.first_error, sizeof burst.first_error, "write(3): %s", strerror(errno));
                pthread_mutex_unlock(&burst.lock);
            }
            continue;
        }
        in_reply_callback = 1;
        job->reply(job->reply_context, (const uint8_t *)message, (size_t)n);
        in_reply_callback = 0;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&burst.lock);
    while (burst.answered < burst.count) {
        if (pthread_cond_timedwait(&burst.changed, &burst.lock, &deadline) != 0) break;
    }
    size_t n = (size_t)snprintf(out, size, "answered %d/%d; inside-reply %d; codes ", burst.answered, burst.count, burst.inside_reply);
    for (int i = 0; i < burst.count && n + 24 < size; i++) {
        n += (size_t)snprintf(out + n, size - n, "%s%lld", i ? "," : "", burst.have[i] ? burst.codes[i] : 0LL);
    }
    if (n < size) snprintf(out + n, size - n, "; first error: %s", burst.first_error[0] ? burst.first_error : "none");
    pthread_mutex_unlock(&burst.lock);
    answer_chip(job->reply, job->reply_context, job->id, job->via_fd3 ? "fd3-burst" : "host-burst", out);
    free(job);
    return NULL;
}

static void host_burst(const char *bytes, size_t length, long long id, ctxp_reply_fn reply, void *reply_context, int via_fd3) {
    burst_job_t *job = calloc(1, sizeof *job);
    job->via_fd3 = via_fd3;
    string_value(bytes, length, "path", job->url, sizeof job->url);
    job->count = integer_value(bytes, length, "count", 0);
    job->id = id;
    job->reply = reply;
    job->reply_context = reply_context;
    if (job->count < 1 || job->count > BURST_MAXIMUM) {
        answer_chip(reply, reply_context, id, "host-burst", "count must be 1 to 64");
        free(job);
        return;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, host_burst_thread, job);
    pthread_detach(thread);
}

static void try_escape(const instance_t *instance, const char *escape, const char *bytes, size_t length, char *out, size_t size) {
    char path[1024] = "";
    string_value(bytes, length, "path", path, sizeof path);
    long long host_pid = integer_value(bytes, length, "pid", -1);
    long long count = integer_value(bytes, length, "count", 0);
    long long port = integer_value(bytes, length, "port", 0);
    char proc_path[128];

    if (strcmp(escape, "read-file") == 0) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return refused(out, size, "open");
        char byte;
        ssize_t got = read(fd, &byte, 1);
        int error = errno;
        close(fd);
        if (got < 0) {
            errno = error;
            return refused(out, size, "read");
        }
        snprintf(out, size, "ESCAPED: read %zd byte(s) of %s", got, path);
    } else if (strcmp(escape, "write-file") == 0 || strcmp(escape, "write-own") == 0) {
        char target[1200];
        if (strcmp(escape, "write-own") == 0) snprintf(target, sizeof target, "%s/own-file.txt", instance->data_directory);
        else snprintf(target, sizeof target, "%s", path);
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) return refused(out, size, "open for writing");
        ssize_t wrote = write(fd, "hostile\n", 8);
        close(fd);
        if (wrote != 8) return refused(out, size, "write");
        snprintf(out, size, "%s: wrote %s", strcmp(escape, "write-own") == 0 ? "ok" : "ESCAPED", target);
    } else if (strcmp(escape, "tcp-connect") == 0) {
        struct sockaddr_in address;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons((unsigned short)port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (!connect_to(AF_INET, (struct sockaddr *)&address, sizeof address, out, size)) return;
        snprintf(out, size, "ESCAPED: connected to 127.0.0.1:%lld", port);
    } else if (strcmp(escape, "netlink") == 0) {
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0) return refused(out, size, "socket(AF_NETLINK)");
        close(fd);
        snprintf(out, size, "ESCAPED: opened a netlink socket");
    } else if (strcmp(escape, "abstract-unix") == 0) {
        struct sockaddr_un address;
        memset(&address, 0, sizeof address);
        address.sun_family = AF_UNIX;
        size_t name_length = strlen(path);
        if (name_length + 1 > sizeof address.sun_path) name_length = sizeof address.sun_path - 1;
        memcpy(address.sun_path + 1, path, name_length);
        socklen_t address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + name_length);
        if (!connect_to(AF_UNIX, (struct sockaddr *)&address, address_length, out, size)) return;
        snprintf(out, size, "ESCAPED: connected to @%s", path);
    } else if (strcmp(escape, "getenv") == 0) {
        const char *value = getenv(path);
        if (!value) {
            snprintf(out, size, "refused: getenv: %s is not set", path);
            return;
        }
        snprintf(out, size, "ESCAPED: %s=%s", path, value);
    } else if (strcmp(escape, "environ-names") == 0) {
        extern char **environ;
        size_t n = (size_t)snprintf(out, size, "ok: ");
        for (char **entry = environ; entry && *entry && n + 2 < size; entry++) {
            const char *equals = strchr(*entry, '=');
            size_t name_length = equals ? (size_t)(equals - *entry) : strlen(*entry);
            if (n + name_length + 2 >= size) break;
            if (entry != environ) out[n++] = ',';
            memcpy(out + n, *entry, name_length);
            n += name_length;
            out[n] = 0;
        }
    } else if (strcmp(escape, "open-files") == 0) {
        int *fds = calloc((size_t)(count > 0 ? count : 1), sizeof(int));
        int opened = 0, error = 0;
        for (long long i = 0; i < count; i++) {
            int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                error = errno;
                break;
            }
            fds[opened++] = fd;
        }
        for (int i = 0; i < opened; i++) close(fds[i]);
        free(fds);
        if (opened < count) {
            errno = error;
            char what[64];
            snprintf(what, sizeof what, "open #%d", opened + 1);
            return refused(out, size, what);
        }
        snprintf(out, size, "ESCAPED: opened %lld files", count);
    } else if (strcmp(escape, "file-size") == 0) {
        char target[1200];
        snprintf(target, sizeof target, "%s/huge-file", instance->data_directory);
        signal(SIGXFSZ, SIG_IGN);
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) return refused(out, size, "open for writing");
        ssize_t wrote = pwrite(fd, "x", 1, (off_t)2 << 30);
        int error = errno;
        close(fd);
        unlink(target);
        if (wrote != 1) {
            errno = error;
            return refused(out, size, "pwrite at 2 GiB");
        }
        snprintf(out, size, "ESCAPED: wrote at offset 2 GiB of %s", target);
    } else if (strcmp(escape, "fork-exec") == 0) {
        pid_t child = fork();
        if (child < 0) return refused(out, size, "fork");
        if (child == 0) {
            char *const argv[] = {"sh", "-c", "exit 42", NULL};
            execve("/bin/sh", argv, NULL);
            _exit(errno == EPERM || errno == EACCES ? 99 : 98);
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 42) snprintf(out, size, "ESCAPED: ran /bin/sh");
        else snprintf(out, size, "ESCAPED: forked, but execve failed (status %d)", status);
    } else if (strcmp(escape, "leave-child") == 0) {
        pid_t child = fork();
        if (child < 0) return refused(out, size, "fork");
        if (child == 0) {
            sleep(3600);
            _exit(0);
        }
        snprintf(out, size, "ESCAPED: left child %d", (int)child);
    } else if (strncmp(escape, "proc-", 5) == 0) {
        snprintf(proc_path, sizeof proc_path, "/proc/%lld/%s", host_pid, escape + 5);
        int fd = open(proc_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return refused(out, size, proc_path);
        if (strcmp(escape, "proc-mem") == 0) {
            /* Opening mem is the kernel's ptrace-attach check; reading needs a mapped address. */
            close(fd);
            snprintf(out, size, "ESCAPED: opened %s", proc_path);
            return;
        }
        char buffer[64];
        ssize_t got = read(fd, buffer, sizeof buffer);
        int error = errno;
        close(fd);
        if (got <= 0) {
            errno = got < 0 ? error : EIO;
            return refused(out, size, "read");
        }
        snprintf(out, size, "ESCAPED: read %zd bytes of %s", got, proc_path);
    } else if (strcmp(escape, "ptrace") == 0) {
        if (ptrace(PTRACE_ATTACH, (pid_t)host_pid, NULL, NULL) != 0) return refused(out, size, "ptrace");
        waitpid((pid_t)host_pid, NULL, __WALL); /* stopped: it may be detached now */
        ptrace(PTRACE_DETACH, (pid_t)host_pid, NULL, NULL);
        snprintf(out, size, "ESCAPED: attached to %lld", host_pid);
    } else if (strcmp(escape, "forge-response") == 0) {
        static const char forged[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"FORGED-BY-PROVIDER\"}\n";
        int first_error = 0;
        for (int n = 0; n < 64; n++) {
            snprintf(proc_path, sizeof proc_path, "/proc/%lld/fd/%d", host_pid, n);
            int fd = open(proc_path, O_WRONLY | O_CLOEXEC);
            if (fd < 0) {
                if (!first_error) first_error = errno;
                continue;
            }
            ssize_t wrote = write(fd, forged, sizeof forged - 1);
            close(fd);
            if (wrote > 0) {
                snprintf(out, size, "ESCAPED: wrote a forged response to %s", proc_path);
                return;
            }
        }
        errno = first_error;
        return refused(out, size, "open /proc/<host>/fd/*");
    } else if (strcmp(escape, "signal-host") == 0) {
        if (kill((pid_t)host_pid, SIGCONT) != 0) return refused(out, size, "kill");
        snprintf(out, size, "ESCAPED: signalled %lld", host_pid);
    } else if (strcmp(escape, "mmap-shared") == 0) {
        size_t bytes_4g = (size_t)4 << 30;
        char *map = mmap(NULL, bytes_4g, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED) return refused(out, size, "mmap 4 GiB MAP_SHARED");
        map[0] = 1;
        map[bytes_4g - 1] = 1;
        munmap(map, bytes_4g);
        snprintf(out, size, "ESCAPED: mapped 4 GiB shared");
    } else if (strcmp(escape, "threads") == 0) {
        pthread_t threads[200];
        int started = 0, error = 0;
        stop_threads = 0;
        for (int i = 0; i < 200; i++) {
            int status = pthread_create(&threads[i], NULL, idle_thread, NULL);
            if (status != 0) {
                error = status;
                break;
            }
            started++;
        }
        stop_threads = 1;
        for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
        if (started < 200) {
            errno = error;
            char what[64];
            snprintf(what, sizeof what, "thread %d of 200", started + 1);
            return refused(out, size, what);
        }
        snprintf(out, size, "ESCAPED: started 200 threads");
    } else if (strcmp(escape, "processes") == 0) {
        int started = 0;
        pid_t children[200];
        for (int i = 0; i < 200; i++) {
            pid_t child = fork();
            if (child < 0) break;
            if (child == 0) {
                usleep(200000);
                _exit(0);
            }
            children[started++] = child;
        }
        int error = errno;
        for (int i = 0; i < started; i++) waitpid(children[i], NULL, 0);
        if (started == 0) {
            errno = error;
            return refused(out, size, "fork");
        }
        snprintf(out, size, "ESCAPED: started %d processes", started);
    } else if (strcmp(escape, "unshare") == 0) {
        if (unshare(CLONE_NEWUSER) != 0) return refused(out, size, "unshare(CLONE_NEWUSER)");
        snprintf(out, size, "ESCAPED: made a new user namespace");
    } else if (strcmp(escape, "busy-after") == 0) {
        snprintf(out, size, "answered; now spinning a core");
    } else {
        snprintf(out, size, "unknown escape '%s'", escape);
    }
}

static int32_t hostile_open(const uint8_t *init_json, size_t init_length, void **out_instance, ctxp_reply_fn on_error, void *error_context) {
    (void)on_error;
    (void)error_context;
    instance_t *instance = calloc(1, sizeof(instance_t));
    string_value((const char *)init_json, init_length, "dataDirectory", instance->data_directory, sizeof instance->data_directory);
    *out_instance = instance;
    return CTXP_OK;
}

static void hostile_call(void *opaque, const uint8_t *message, size_t length, ctxp_reply_fn reply, void *reply_context) {
    const instance_t *instance = opaque;
    const char *bytes = (const char *)message;
    if (!reply) {
        /* The host's answer to a host request, or a notification. */
        if (find_value(bytes, length, "method") == NULL && find_value(bytes, length, "id") != NULL) host_answer(bytes, length);
        return;
    }
    long long id = integer_value(bytes, length, "id", -1);
    char method[64] = "", escape[64] = "";
    string_value(bytes, length, "method", method, sizeof method);
    string_value(bytes, length, "escape", escape, sizeof escape);
    char buffer[1024];
    if (strcmp(method, "provider/availability") == 0) {
        int n = snprintf(buffer, sizeof buffer, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"available\":true}}", id);
        reply(reply_context, (const uint8_t *)buffer, (size_t)n);
    } else if (strcmp(method, "provider/info") == 0) {
        int n = snprintf(buffer, sizeof buffer,
                         "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"id\":\"com.contexthost.hostile\",\"title\":\"Hostile\",\"version\":\"0.0.1\",\"iconName\":\"ant\",\"ctxui\":1}}", id);
        reply(reply_context, (const uint8_t *)buffer, (size_t)n);
    } else if (strcmp(method, "item/preview") == 0 && (strcmp(escape, "host-burst") == 0 || strcmp(escape, "fd3-burst") == 0)) {
        host_burst(bytes, length, id, reply, reply_context, strcmp(escape, "fd3-burst") == 0);
    } else if (strcmp(method, "item/preview") == 0 && strncmp(escape, "fd3-", 4) == 0) {
        /* Breaks the host-request channel; answers only if fd 3 could not be written. */
        long long tag = (long long)(intptr_t)reply_context;
        int status = -1;
        if (strcmp(escape, "fd3-junk") == 0) {
            const char *junk = "this is not a frame, only junk bytes on fd 3 !!\n";
            status = write(3, junk, strlen(junk)) == (ssize_t)strlen(junk) ? 0 : -1;
        } else if (strcmp(escape, "fd3-short-length") == 0) {
            unsigned char frame[12] = {4, 0, 0, 0};
            for (int i = 0; i < 8; i++) frame[4 + i] = (unsigned char)((unsigned long long)tag >> (8 * i));
            status = write(3, frame, sizeof frame) == (ssize_t)sizeof frame ? 0 : -1;
        } else if (strcmp(escape, "fd3-huge-length") == 0) {
            unsigned char frame[12] = {0xF0, 0xFF, 0xFF, 0xFF};
            for (int i = 0; i < 8; i++) frame[4 + i] = (unsigned char)((unsigned long long)tag >> (8 * i));
            status = write(3, frame, sizeof frame) == (ssize_t)sizeof frame ? 0 : -1;
        } else if (strcmp(escape, "fd3-response") == 0) {
            int n = snprintf(buffer, sizeof buffer, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"ctxui\":1,\"icon\":\"ant\",\"title\":\"forged\",\"fallbackText\":\"forged\"}}", id);
            status = write_fd3_frame(tag, buffer, (size_t)n);
        } else if (strcmp(escape, "fd3-notification") == 0) {
            const char *log = "{\"jsonrpc\":\"2.0\",\"method\":\"$/log\",\"params\":{\"level\":\"info\",\"message\":\"through fd 3\"}}";
            status = write_fd3_frame(tag, log, strlen(log));
        } else {
            errno = EINVAL;
        }
        if (status != 0) {
            char result[300];
            refused(result, sizeof result, "write(3)");
            answer_chip(reply, reply_context, id, escape, result);
        }
    } else if (strcmp(method, "item/preview") == 0 && escape[0]) {
        char result[900] = "";
        try_escape(instance, escape, bytes, length, result, sizeof result);
        answer_chip(reply, reply_context, id, escape, result);
        if (strcmp(escape, "busy-after") == 0) {
            pthread_t thread;
            pthread_create(&thread, NULL, spin_thread, NULL);
            pthread_detach(thread);
        }
    } else if (strncmp(method, "item/", 5) == 0) {
        answer_chip(reply, reply_context, id, "ok", "normal");
    } else {
        int n = snprintf(buffer, sizeof buffer, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"Method not found: %s\"}}", id, method);
        reply(reply_context, (const uint8_t *)buffer, (size_t)n);
    }
}

static void hostile_close(void *instance) { free(instance); }

static const ctxp_provider_v1 table = {
    CTXP_ABI_VERSION, sizeof(ctxp_provider_v1), hostile_open, hostile_call, hostile_close,
};

const ctxp_provider_v1 *context_provider_entry_v1(void) { return &table; }
