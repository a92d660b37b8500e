/* Copied from the team bench kit (shared/bench/rpcload.c) so benchmarks run from a clone of this repo alone. */
/*
 * rpcload -- load driver for JSON-RPC 2.0 servers speaking newline-delimited
 * JSON on stdin/stdout (the MCP stdio framing: one JSON object per line).
 *
 * Build:  gcc -O2 -Wall -Wextra -o rpcload rpcload.c -lm
 *
 * Usage:  rpcload [options] -- COMMAND [ARGS...]
 *
 *   -m MODE    latency | throughput | startup           (default latency)
 *   -t FILE    request template file: one JSON-RPC request per line, each with
 *              a top-level "id" (any value; it is replaced by a fresh integer).
 *              Several lines are cycled through in order.       (required)
 *   -p FILE    preamble file: lines sent once, in order, after spawning and
 *              before warmup. A line with a top-level "id" is a request: its
 *              id is rewritten and its response is awaited (an error or a
 *              missing "result" aborts the run). A line without "id" is a
 *              notification and is just sent.
 *   -n N       measured requests                     (default 10000)
 *   -w W       window = requests kept in flight (throughput; latency uses 1)
 *                                                    (default 64)
 *   -W N       warmup requests, same mode, not measured (default 0)
 *   -r R       startup mode: number of spawns        (default 20)
 *   -f FILE    startup mode: follow-up request (first line of FILE, which
 *              needs an "id"), sent as soon as the first response arrives;
 *              also reports spawn -> its response as ready_*_us (e.g. a
 *              server that answers `initialize` before it is fully loaded:
 *              the time until a request that needs everything loaded answers)
 *   -T SEC     abort if no byte arrives for SEC seconds while waiting (default 10)
 *   -g SEC     grace for the child to exit after its stdin is closed (default 5)
 *   -E FILE    redirect the child's stderr to FILE (default: inherited)
 *   -l LABEL   label printed in the summary line
 *   -L FILE    write every measured latency (ns, completion order) to FILE
 *   -u H:P     (addition for context-host) no child: connect to ws://H:P/rpc
 *              (H an IPv4 address) and send each request as one masked
 *              WebSocket text frame; each text frame received is one line.
 *              Not with -m startup. COMMAND is then not given.
 *
 * Modes
 *   latency     closed loop: one request in flight; N requests.
 *   throughput  pipelined: W requests in flight; N requests. rps is
 *               N / (last response - first measured send). Latency
 *               percentiles are also printed (they include queueing).
 *   startup     R times: spawn, immediately send the first request (first
 *               preamble request if -p, else first template line), time from
 *               just before spawn to the arrival of its response, close stdin,
 *               wait for exit. Prints median/min/max (and, with -f, the same
 *               for spawn -> the follow-up's response).
 *
 * Output: one summary line on stdout, key=value pairs, e.g.
 *   label=x mode=throughput n=200000 w=64 warmup=2000 elapsed_s=1.23 rps=162000
 *   mean_us=.. p50_us=.. p90_us=.. p99_us=.. max_us=.. errors=0 ... child=exit:0
 *   child_maxrss_kb=..
 * Diagnostics go to stderr. Exit status: 0 = no errors and child exited 0,
 * 1 = errors counted or child exited non-zero, 2 = run aborted (timeout,
 * child died early, bad usage).
 *
 * Response checking: every line from the child is fully validated as JSON
 * (RFC 8259 syntax; UTF-8 is not validated) and must be an object. A line
 * with a top-level "method" is a server notification/request (counted,
 * ignored). Otherwise its top-level "id" must be an integer naming a request
 * that is outstanding; the response is "ok" if it has a top-level "result"
 * and no "error". Everything else is counted as an error:
 *   bad_json    not a JSON object
 *   unknown_id  no/non-integer id, or an id not outstanding (duplicate/stray)
 *   rpc_error   has "error"
 *   no_result   neither "result" nor "error"
 *   lost        still outstanding when the run ended (timeout / child exit)
 * Responses may arrive in any order; they are matched by id.
 *
 * Timing: CLOCK_MONOTONIC. Send time is taken just before the write() that
 * carries the request; receive time just after the read() that completed its
 * line. I/O is poll() + non-blocking read/write on both pipes, the same for
 * every peer, so the driver's own cost is part of every figure (see the
 * "limit" peer for the floor).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------ util */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rpcload: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) die("out of memory (%zu bytes)", n);
    return q;
}

/* ------------------------------------------------- minimal JSON validator */

typedef struct {
    const char *p, *end;
    int depth;
    /* captures at the top-level object */
    int has_id, id_is_int, has_result, has_error, has_method;
    long long id;
    const char *id_start, *id_end; /* span of the top-level "id" value */
} jp_t;

#define JP_MAX_DEPTH 512

static inline void jws(jp_t *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int jstring(jp_t *j, const char **s, size_t *n) {
    if (j->p >= j->end || *j->p != '"') return -1;
    const char *st = ++j->p;
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            if (s) { *s = st; *n = (size_t)(j->p - st); }
            j->p++;
            return 0;
        }
        if (c < 0x20) return -1;
        if (c == '\\') {
            if (++j->p >= j->end) return -1;
            switch (*j->p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                j->p++;
                break;
            case 'u':
                j->p++;
                for (int k = 0; k < 4; k++, j->p++)
                    if (j->p >= j->end || !isxdigit((unsigned char)*j->p)) return -1;
                break;
            default:
                return -1;
            }
        } else {
            j->p++;
        }
    }
    return -1;
}

static int jdigits(jp_t *j) {
    const char *st = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    return j->p > st ? 0 : -1;
}

/* returns 0 if ok; *is_int set when the number has no fraction/exponent */
static int jnumber(jp_t *j, int *is_int) {
    *is_int = 1;
    if (j->p < j->end && *j->p == '-') j->p++;
    if (j->p >= j->end) return -1;
    if (*j->p == '0') j->p++;
    else if (jdigits(j)) return -1;
    if (j->p < j->end && *j->p == '.') { j->p++; *is_int = 0; if (jdigits(j)) return -1; }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++; *is_int = 0;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (jdigits(j)) return -1;
    }
    return 0;
}

static int jliteral(jp_t *j, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return -1;
    j->p += n;
    return 0;
}

static int jvalue(jp_t *j);

/* After a member or element: 1 after a ',' (another follows), 0 after `close` (the container
 * ends), -1 for anything else. */
static int jnext(jp_t *j, char close) {
    jws(j);
    if (j->p >= j->end) return -1;
    if (*j->p == ',') { j->p++; return 1; }
    if (*j->p == close) { j->p++; return 0; }
    return -1;
}

static int jobject(jp_t *j, int top) {
    j->p++; /* '{' */
    jws(j);
    if (j->p < j->end && *j->p == '}') { j->p++; return 0; }
    for (;;) {
        const char *k; size_t kn;
        jws(j);
        if (jstring(j, &k, &kn)) return -1;
        jws(j);
        if (j->p >= j->end || *j->p != ':') return -1;
        j->p++;
        jws(j);
        const char *vs = j->p;
        if (top && kn == 2 && memcmp(k, "id", 2) == 0) {
            int is_int = 0;
            j->has_id = 1;
            j->id_start = vs;
            if (j->p < j->end && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))) {
                if (jnumber(j, &is_int)) return -1;
                if (is_int && j->p - vs < 19) {
                    j->id_is_int = 1;
                    j->id = strtoll(vs, NULL, 10);
                }
            } else if (jvalue(j)) {
                return -1;
            }
            j->id_end = j->p;
        } else {
            if (jvalue(j)) return -1;
            if (top) {
                if (kn == 6 && memcmp(k, "result", 6) == 0) j->has_result = 1;
                else if (kn == 5 && memcmp(k, "error", 5) == 0) j->has_error = 1;
                else if (kn == 6 && memcmp(k, "method", 6) == 0) j->has_method = 1;
            }
        }
        int next = jnext(j, '}');
        if (next <= 0) return next;
    }
}

static int jarray(jp_t *j) {
    j->p++; /* '[' */
    jws(j);
    if (j->p < j->end && *j->p == ']') { j->p++; return 0; }
    for (;;) {
        if (jvalue(j)) return -1;
        int next = jnext(j, ']');
        if (next <= 0) return next;
    }
}

static int jvalue(jp_t *j) {
    jws(j);
    if (j->p >= j->end) return -1;
    int is_int, r;
    switch (*j->p) {
    case '{':
        if (++j->depth > JP_MAX_DEPTH) return -1;
        r = jobject(j, 0); j->depth--; return r;
    case '[':
        if (++j->depth > JP_MAX_DEPTH) return -1;
        r = jarray(j); j->depth--; return r;
    case '"': return jstring(j, NULL, NULL);
    case 't': return jliteral(j, "true");
    case 'f': return jliteral(j, "false");
    case 'n': return jliteral(j, "null");
    default: return jnumber(j, &is_int);
    }
}

/* Parse one line; 0 if it is exactly one JSON object (surrounding ws ok). */
static int jparse_object(jp_t *j, const char *s, size_t n) {
    memset(j, 0, sizeof *j);
    j->p = s; j->end = s + n;
    jws(j);
    if (j->p >= j->end || *j->p != '{') return -1;
    if (jobject(j, 1)) return -1;
    jws(j);
    return j->p == j->end ? 0 : -1;
}

/* ------------------------------------------------------------- templates */

typedef struct {
    char *pre; size_t pre_len; /* bytes before the id value */
    char *suf; size_t suf_len; /* bytes after the id value (no newline) */
    int has_id;                /* 0: notification, sent verbatim (pre only) */
} tmpl_t;

typedef struct { tmpl_t *v; size_t n; } tmpl_list_t;

static void load_templates(const char *path, tmpl_list_t *out, int require_id) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    char *line = NULL; size_t cap = 0; ssize_t len; int lineno = 0;
    out->v = NULL; out->n = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        size_t k = 0;
        while (k < (size_t)len && isspace((unsigned char)line[k])) k++;
        if (k == (size_t)len) continue; /* blank */
        jp_t j;
        if (jparse_object(&j, line, (size_t)len)) die("%s:%d: not a JSON object", path, lineno);
        if (!j.has_id && require_id) die("%s:%d: request template has no top-level \"id\"", path, lineno);
        tmpl_t t = {0};
        if (j.has_id) {
            t.has_id = 1;
            t.pre_len = (size_t)(j.id_start - line);
            t.suf_len = (size_t)(line + len - j.id_end);
            t.pre = xrealloc(NULL, t.pre_len);
            memcpy(t.pre, line, t.pre_len);
            t.suf = xrealloc(NULL, t.suf_len);
            memcpy(t.suf, j.id_end, t.suf_len);
        } else {
            t.pre_len = (size_t)len;
            t.pre = xrealloc(NULL, t.pre_len);
            memcpy(t.pre, line, t.pre_len);
        }
        out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n++] = t;
    }
    free(line);
    fclose(f);
}

/* ----------------------------------------------------------- child state */

static pid_t child_pid = -1;
static int wfd = -1, rfd = -1;
static const char *ws_addr = NULL;  /* -u: WebSocket mode */
static const char *errfile = NULL;
static char **child_argv;
static int timeout_s = 10, grace_s = 5;

static char *ibuf; static size_t icap, ilen;          /* input buffer */
static char *obuf; static size_t ocap, olen, ooff;    /* output buffer */

/* per-id state; ids are 1..max_id */
enum { ST_FREE = 0, ST_OUT = 1, ST_DONE = 2 };
static uint64_t *t_send;
static uint8_t *state;
static long long max_id;

static long outstanding;
static long long c_ok, c_bad_json, c_unknown_id, c_rpc_error, c_no_result, c_lost,
    c_notifs, c_server_req;
static int child_eof, timed_out, write_failed;

/* phase bookkeeping */
static long ph_done;
static uint64_t *ph_lat; static long ph_nlat;
static uint64_t ph_last_recv;

static void set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl: %s", strerror(errno));
}

static void ws_connect(void) {
    char host[64];
    const char *colon = strrchr(ws_addr, ':');
    if (!colon || (size_t)(colon - ws_addr) >= sizeof host) die("-u %s: expected IPV4:PORT", ws_addr);
    memcpy(host, ws_addr, (size_t)(colon - ws_addr));
    host[colon - ws_addr] = 0;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) die("-u %s: not an IPv4 address", ws_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) die("connect %s: %s", ws_addr, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char req[512];
    int len = snprintf(req, sizeof req,
                       "GET /rpc HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", ws_addr);
    if (write(fd, req, (size_t)len) != len) die("handshake write: %s", strerror(errno));
    char resp[2048]; size_t got = 0;
    while (got < sizeof resp - 1) {
        ssize_t r = read(fd, resp + got, 1); /* byte by byte: frames may follow the head */
        if (r <= 0) die("handshake: connection closed");
        got += (size_t)r;
        if (got >= 4 && !memcmp(resp + got - 4, "\r\n\r\n", 4)) break;
    }
    resp[got] = 0;
    if (strncmp(resp, "HTTP/1.1 101", 12)) die("handshake refused: %.80s", resp);
    wfd = rfd = fd;
    set_nonblock(fd);
    ilen = 0; olen = ooff = 0;
    child_eof = timed_out = write_failed = 0;
}

static void spawn_child(void) {
    if (ws_addr) { ws_connect(); return; }
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) die("pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (errfile) posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawnp(&child_pid, child_argv[0], &fa, NULL, child_argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) die("cannot spawn %s: %s", child_argv[0], strerror(rc));
    close(in[0]);
    close(out[1]);
    wfd = in[1];
    rfd = out[0];
    set_nonblock(wfd);
    set_nonblock(rfd);
    ilen = 0; olen = ooff = 0;
    child_eof = timed_out = write_failed = 0;
}

static void obuf_reserve(size_t extra) {
    if (ooff > 0 && ooff == olen) olen = ooff = 0;
    if (olen + extra > ocap) {
        if (ooff > 0) { memmove(obuf, obuf + ooff, olen - ooff); olen -= ooff; ooff = 0; }
        if (olen + extra > ocap) { ocap = (olen + extra) * 2; obuf = xrealloc(obuf, ocap); }
    }
}

static void append_request(const tmpl_t *t, long long id) {
    char num[24];
    int nl = t->has_id ? snprintf(num, sizeof num, "%lld", id) : 0;
    obuf_reserve(t->pre_len + (size_t)nl + t->suf_len + 15);
    if (ws_addr) {
        /* one masked text frame; the mask key 0 leaves the payload as it is (RFC 6455 5.3) */
        size_t plen = t->pre_len + (t->has_id ? (size_t)nl + t->suf_len : 0);
        obuf[olen++] = (char)0x81;
        if (plen < 126) {
            obuf[olen++] = (char)(0x80 | plen);
        } else if (plen < 65536) {
            obuf[olen++] = (char)(0x80 | 126);
            obuf[olen++] = (char)(plen >> 8); obuf[olen++] = (char)plen;
        } else {
            obuf[olen++] = (char)(0x80 | 127);
            for (int i = 7; i >= 0; i--) obuf[olen++] = (char)(plen >> (8 * i));
        }
        memset(obuf + olen, 0, 4); olen += 4;
    }
    memcpy(obuf + olen, t->pre, t->pre_len); olen += t->pre_len;
    if (t->has_id) {
        memcpy(obuf + olen, num, (size_t)nl); olen += (size_t)nl;
        memcpy(obuf + olen, t->suf, t->suf_len); olen += t->suf_len;
    }
    if (!ws_addr) obuf[olen++] = '\n';
}

/* WebSocket mode: hands each complete text frame in ibuf to on_line; keeps a partial one */
static void on_line(const char *s, size_t n, uint64_t t);
static void ws_frames(uint64_t t) {
    size_t start = 0;
    for (;;) {
        const unsigned char *b = (const unsigned char *)ibuf + start;
        size_t avail = ilen - start;
        if (avail < 2) break;
        size_t hl = 2; uint64_t plen = b[1] & 0x7f;
        if (b[1] & 0x80) die("WebSocket: the server sent a masked frame");
        if (plen == 126) { if (avail < 4) break; plen = ((uint64_t)b[2] << 8) | b[3]; hl = 4; }
        else if (plen == 127) { if (avail < 10) break; plen = 0; for (int i = 0; i < 8; i++) plen = (plen << 8) | b[2 + i]; hl = 10; }
        if (plen > (1u << 30)) die("WebSocket: frame of %llu bytes", (unsigned long long)plen);
        if (avail < hl + plen) {
            if (hl + plen > icap) { icap = (size_t)(hl + plen) * 2; ibuf = xrealloc(ibuf, icap); }
            break;
        }
        int opcode = b[0] & 0x0f;
        if (opcode == 0x1) on_line((const char *)b + hl, (size_t)plen, t);
        else if (opcode == 0x8) child_eof = 1;
        else if (opcode == 0x9 && plen <= 125) {
            /* answer a ping with a pong carrying the same data */
            obuf_reserve((size_t)plen + 6);
            obuf[olen++] = (char)0x8a; obuf[olen++] = (char)(0x80 | plen);
            memset(obuf + olen, 0, 4); olen += 4;
            memcpy(obuf + olen, b + hl, (size_t)plen); olen += (size_t)plen;
        } else if (opcode != 0xa) die("WebSocket: unexpected opcode %d (fragments are not read)", opcode);
        start += hl + (size_t)plen;
    }
    if (start > 0) { memmove(ibuf, ibuf + start, ilen - start); ilen -= start; }
}

/* write as much pending output as the pipe takes; -1 if the child is gone */
static int flush_some(void) {
    while (olen > ooff) {
        ssize_t w = write(wfd, obuf + ooff, olen - ooff);
        if (w > 0) { ooff += (size_t)w; continue; }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        write_failed = 1;
        return -1;
    }
    olen = ooff = 0;
    return 0;
}

static void on_line(const char *s, size_t n, uint64_t t) {
    if (n && s[n - 1] == '\r') n--;
    if (n == 0) return;
    jp_t j;
    if (jparse_object(&j, s, n)) {
        c_bad_json++;
        if (c_bad_json <= 3)
            fprintf(stderr, "rpcload: bad JSON line from child: %.*s\n", (int)(n > 200 ? 200 : n), s);
        return;
    }
    if (j.has_method) { if (j.has_id) c_server_req++; else c_notifs++; return; }
    if (!j.has_id || !j.id_is_int || j.id < 1 || j.id > max_id || state[j.id - 1] != ST_OUT) {
        c_unknown_id++;
        if (c_unknown_id <= 3)
            fprintf(stderr, "rpcload: response with unknown id: %.*s\n", (int)(n > 200 ? 200 : n), s);
        return;
    }
    state[j.id - 1] = ST_DONE;
    outstanding--;
    ph_done++;
    ph_last_recv = t;
    if (ph_lat) ph_lat[ph_nlat++] = t - t_send[j.id - 1];
    if (j.has_error) {
        c_rpc_error++;
        if (c_rpc_error <= 3)
            fprintf(stderr, "rpcload: error response: %.*s\n", (int)(n > 300 ? 300 : n), s);
    } else if (!j.has_result) {
        c_no_result++;
    } else {
        c_ok++;
    }
}

/* read what is available; returns 1 if bytes were read, 0 if none, -1 on EOF */
static int read_some(void) {
    int got = 0;
    for (;;) {
        if (icap - ilen < 65536) { icap = icap ? icap * 2 : 1 << 20; ibuf = xrealloc(ibuf, icap); }
        size_t room = icap - ilen;
        ssize_t r = read(rfd, ibuf + ilen, room);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return got;
        if (r <= 0) { child_eof = 1; return -1; }
        got = 1;
        uint64_t t = now_ns();
        if (ws_addr) {
            ilen += (size_t)r;
            ws_frames(t);
            if (child_eof) return -1;
            if ((size_t)r < room) return got;
            continue;
        }
        /* a partial line, if any, starts at ibuf[0]; search only the new bytes */
        size_t scan = ilen, start = 0;
        ilen += (size_t)r;
        char *nl;
        while ((nl = memchr(ibuf + scan, '\n', ilen - scan)) != NULL) {
            on_line(ibuf + start, (size_t)(nl - (ibuf + start)), t);
            start = scan = (size_t)(nl - ibuf) + 1;
        }
        if (start > 0) { memmove(ibuf, ibuf + start, ilen - start); ilen -= start; }
        if ((size_t)r < room) return got; /* short read: the pipe was drained */
    }
}

/*
 * Run one phase: send `count` requests with ids first_id.., cycling the
 * templates, keeping at most `window` outstanding. lat (may be NULL)
 * receives one latency per matched response. Returns 0 when all responses
 * arrived; -1 if aborted (timeout, child EOF, write failure).
 */
static int run_phase(const tmpl_list_t *tl, size_t *tcur, long long first_id, long count,
                     int window, uint64_t *lat, uint64_t *t_first_send) {
    long next = 0;
    ph_done = 0; ph_lat = lat; ph_nlat = 0;
    outstanding = 0;
    int first = 1;
    while (ph_done < count) {
        if (outstanding < window && next < count) {
            uint64_t t = now_ns();
            while (outstanding < window && next < count) {
                long long id = first_id + next;
                append_request(&tl->v[*tcur], id);
                *tcur = (*tcur + 1) % tl->n;
                t_send[id - 1] = t;
                state[id - 1] = ST_OUT;
                outstanding++;
                next++;
            }
            if (first) { if (t_first_send) *t_first_send = t; first = 0; }
            if (flush_some() < 0) return -1;
        }
        struct pollfd pf[2] = {{rfd, POLLIN, 0}, {wfd, (short)(olen > ooff ? POLLOUT : 0), 0}};
        int pr = poll(pf, olen > ooff ? 2 : 1, timeout_s * 1000);
        if (pr < 0) { if (errno == EINTR) continue; die("poll: %s", strerror(errno)); }
        if (pr == 0) { timed_out = 1; return -1; }
        if (pf[0].revents) { if (read_some() < 0) return -1; }
        if (olen > ooff && pf[1].revents) { if (flush_some() < 0) return -1; }
    }
    return 0;
}

/* send a notification line verbatim and make sure it is written */
static int send_verbatim(const tmpl_t *t) {
    append_request(t, 0);
    while (olen > ooff) {
        if (flush_some() < 0) return -1;
        if (olen > ooff) {
            struct pollfd pf[2] = {{wfd, POLLOUT, 0}, {rfd, POLLIN, 0}};
            int pr = poll(pf, 2, timeout_s * 1000);
            if (pr == 0) { timed_out = 1; return -1; }
            if (pr > 0 && pf[1].revents && read_some() < 0) return -1;
        }
    }
    return 0;
}

typedef struct { int status; int killed; int reaped; struct rusage ru; } child_end_t;

/* close stdin, drain stdout, wait up to grace_s for exit, else TERM/KILL */
static child_end_t finish_child(void) {
    child_end_t ce = {0};
    if (ws_addr) {
        /* a close frame (code 1000), then the connection */
        static const char close_frame[] = {(char)0x88, (char)0x82, 0, 0, 0, 0, 0x03, (char)0xe8};
        if (write(wfd, close_frame, sizeof close_frame) < 0) { /* the server is gone */ }
        close(wfd);
        wfd = rfd = -1;
        ce.reaped = 1;
        return ce;
    }
    if (wfd >= 0) { close(wfd); wfd = -1; }
    uint64_t deadline = now_ns() + (uint64_t)grace_s * 1000000000ull;
    while (!child_eof && now_ns() < deadline) {
        struct pollfd pf = {rfd, POLLIN, 0};
        int left_ms = (int)((deadline - now_ns()) / 1000000) + 1;
        int pr = poll(&pf, 1, left_ms);
        if (pr > 0) read_some();
        else if (pr == 0) break;
    }
    for (;;) {
        pid_t r = wait4(child_pid, &ce.status, WNOHANG, &ce.ru);
        if (r == child_pid) { ce.reaped = 1; break; }
        if (now_ns() >= deadline) {
            if (!ce.killed) {
                fprintf(stderr, "rpcload: child did not exit within %ds of stdin EOF; SIGTERM\n", grace_s);
                kill(child_pid, SIGTERM);
                ce.killed = 1;
                deadline = now_ns() + 1000000000ull;
            } else {
                kill(child_pid, SIGKILL);
                wait4(child_pid, &ce.status, 0, &ce.ru);
                ce.reaped = 1;
                break;
            }
        }
        usleep(1000);
    }
    if (rfd >= 0) { close(rfd); rfd = -1; }
    child_pid = -1;
    return ce;
}

static void child_desc(const child_end_t *ce, char *buf, size_t n) {
    if (WIFEXITED(ce->status)) snprintf(buf, n, "exit:%d%s", WEXITSTATUS(ce->status), ce->killed ? "(after-term)" : "");
    else if (WIFSIGNALED(ce->status)) snprintf(buf, n, "signal:%d%s", WTERMSIG(ce->status), ce->killed ? "(killed-by-rpcload)" : "");
    else snprintf(buf, n, "unknown");
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array, in microseconds */
static double pct_us(const uint64_t *v, long n, double p) {
    if (n <= 0) return 0;
    long k = (long)ceil(p / 100.0 * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return (double)v[k - 1] / 1000.0;
}

static void alloc_ids(long long n) {
    max_id = n;
    t_send = xrealloc(t_send, (size_t)n * sizeof *t_send);
    state = xrealloc(state, (size_t)n);
    memset(state, 0, (size_t)n);
}

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

static void usage(void) {
    fprintf(stderr,
            "usage: rpcload [-m latency|throughput|startup] -t TEMPLATE [-p PREAMBLE] [-n N] [-w W]\n"
            "               [-W WARMUP] [-r RUNS] [-T TIMEOUT_S] [-g GRACE_S] [-E CHILD_STDERR]\n"
            "               [-l LABEL] [-L LATENCY_FILE] [-f FOLLOW_UP] -- COMMAND [ARGS...]\n"
            "       rpcload [-m latency|throughput] ... -u IPV4:PORT   (WebSocket at ws://IPV4:PORT/rpc)\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *mode = "latency", *tfile = NULL, *pfile = NULL, *label = "-", *latfile = NULL, *ffile = NULL;
    long n = 10000, warmup = 0, runs = 20;
    int window = 64;
    int c;
    while ((c = getopt(argc, argv, "+m:t:p:n:w:W:r:T:g:E:l:L:f:u:h")) != -1) {
        switch (c) {
        case 'm': mode = optarg; break;
        case 't': tfile = optarg; break;
        case 'p': pfile = optarg; break;
        case 'n': n = atol(optarg); break;
        case 'w': window = atoi(optarg); break;
        case 'W': warmup = atol(optarg); break;
        case 'r': runs = atol(optarg); break;
        case 'T': timeout_s = atoi(optarg); break;
        case 'g': grace_s = atoi(optarg); break;
        case 'E': errfile = optarg; break;
        case 'l': label = optarg; break;
        case 'L': latfile = optarg; break;
        case 'f': ffile = optarg; break;
        case 'u': ws_addr = optarg; break;
        default: usage();
        }
    }
    if ((optind >= argc && !ws_addr) || !tfile || n < 1 || window < 1 || warmup < 0 || runs < 1) usage();
    child_argv = argv + optind;
    int m_lat = !strcmp(mode, "latency"), m_thr = !strcmp(mode, "throughput"), m_start = !strcmp(mode, "startup");
    if (!m_lat && !m_thr && !m_start) usage();
    if (m_start && ws_addr) usage();
    if (m_lat) window = 1;
    signal(SIGPIPE, SIG_IGN);

    tmpl_list_t tl, pl = {0};
    load_templates(tfile, &tl, 1);
    if (tl.n == 0) die("%s: no request lines", tfile);
    if (pfile) load_templates(pfile, &pl, 0);
    long npre = 0;
    for (size_t i = 0; i < pl.n; i++) npre += pl.v[i].has_id;

    char cdesc[64];

    if (m_start) {
        /* first request = first id-bearing preamble line, else first template */
        const tmpl_t *first = &tl.v[0];
        for (size_t i = 0; i < pl.n; i++) if (pl.v[i].has_id) { first = &pl.v[i]; break; }
        tmpl_list_t one = {(tmpl_t *)first, 1};
        tmpl_list_t follow = {0};
        if (ffile) {
            load_templates(ffile, &follow, 1);
            if (follow.n == 0) die("%s: no request lines", ffile);
            follow.n = 1;
        }
        uint64_t *st = xrealloc(NULL, (size_t)runs * sizeof *st);
        uint64_t *ready = xrealloc(NULL, (size_t)runs * sizeof *ready);
        long bad_exit = 0, fails = 0; long maxrss = 0;
        for (long r = 0; r < runs; r++) {
            alloc_ids(ffile ? 2 : 1);
            uint64_t t0 = now_ns();
            spawn_child();
            size_t tc = 0;
            uint64_t dummy;
            int rc = run_phase(&one, &tc, 1, 1, 1, NULL, &dummy);
            st[r] = ph_last_recv - t0;
            ready[r] = st[r];
            if (ffile && !rc) {
                tc = 0;
                rc = run_phase(&follow, &tc, 2, 1, 1, NULL, &dummy);
                ready[r] = ph_last_recv - t0;
            }
            if (rc) { fails++; c_lost += outstanding; }
            child_end_t ce = finish_child();
            if (!(WIFEXITED(ce.status) && WEXITSTATUS(ce.status) == 0)) { bad_exit++; child_desc(&ce, cdesc, sizeof cdesc); }
            if (ce.ru.ru_maxrss > maxrss) maxrss = ce.ru.ru_maxrss;
        }
        qsort(st, (size_t)runs, sizeof *st, cmp_u64);
        qsort(ready, (size_t)runs, sizeof *ready, cmp_u64);
        long long errors = c_bad_json + c_unknown_id + c_rpc_error + c_no_result + c_lost;
        char readybuf[200] = "";
        if (ffile)
            snprintf(readybuf, sizeof readybuf, " ready=%s ready_p50_us=%.1f ready_min_us=%.1f ready_max_us=%.1f",
                     base(ffile), pct_us(ready, runs, 50), ready[0] / 1000.0, ready[runs - 1] / 1000.0);
        printf("label=%s mode=startup runs=%ld first=%s p50_us=%.1f min_us=%.1f max_us=%.1f%s "
               "errors=%lld failed_runs=%ld bad_exits=%ld%s%s child_maxrss_kb=%ld\n",
               label, runs, npre ? base(pfile) : base(tfile), pct_us(st, runs, 50), st[0] / 1000.0,
               st[runs - 1] / 1000.0, readybuf, errors, fails, bad_exit, bad_exit ? " last_bad=" : "",
               bad_exit ? cdesc : "", maxrss);
        return (errors || fails || bad_exit) ? 1 : 0;
    }

    alloc_ids(npre + warmup + n);
    spawn_child();
    long long next_id = 1;
    int aborted = 0;
    const char *abort_why = "";

    /* preamble: sequential; requests awaited */
    for (size_t i = 0; i < pl.n && !aborted; i++) {
        if (!pl.v[i].has_id) {
            if (send_verbatim(&pl.v[i])) { aborted = 1; abort_why = "preamble-send"; }
            continue;
        }
        tmpl_list_t one = {&pl.v[i], 1};
        size_t tc = 0;
        long long before_bad = c_rpc_error + c_no_result;
        if (run_phase(&one, &tc, next_id, 1, 1, NULL, NULL)) { aborted = 1; abort_why = "preamble-no-response"; }
        else if (c_rpc_error + c_no_result > before_bad) { aborted = 1; abort_why = "preamble-error-response"; }
        next_id++;
    }

    size_t tcur = 0;
    uint64_t t0 = 0;
    if (!aborted && warmup > 0) {
        if (run_phase(&tl, &tcur, next_id, warmup, window, NULL, &t0)) { aborted = 1; abort_why = "warmup"; }
        next_id += warmup;
    }
    uint64_t *lat = xrealloc(NULL, (size_t)n * sizeof *lat);
    long nlat = 0;
    uint64_t t_end = 0;
    if (!aborted) {
        tcur = 0;
        if (run_phase(&tl, &tcur, next_id, n, window, lat, &t0)) { aborted = 1; abort_why = "measure"; }
        nlat = ph_nlat;
        t_end = ph_last_recv;
    }
    if (aborted) {
        c_lost += outstanding;
        fprintf(stderr, "rpcload: aborted during %s (%s)\n", abort_why,
                timed_out ? "timeout: no data from child" : child_eof ? "child closed stdout" :
                write_failed ? "write to child failed" : "error response");
    }
    child_end_t ce = finish_child();
    child_desc(&ce, cdesc, sizeof cdesc);
    struct rusage me;
    getrusage(RUSAGE_SELF, &me);
    double self_cpu = tv_s(me.ru_utime) + tv_s(me.ru_stime);

    if (latfile) {
        FILE *lf = fopen(latfile, "w");
        if (!lf) die("cannot write %s: %s", latfile, strerror(errno));
        for (long i = 0; i < nlat; i++) fprintf(lf, "%" PRIu64 "\n", lat[i]);
        fclose(lf);
    }
    qsort(lat, (size_t)nlat, sizeof *lat, cmp_u64);
    double sum = 0;
    for (long i = 0; i < nlat; i++) sum += (double)lat[i];
    double elapsed = t_end > t0 ? (double)(t_end - t0) / 1e9 : 0;
    long long errors = c_bad_json + c_unknown_id + c_rpc_error + c_no_result + c_lost;
    printf("label=%s mode=%s tmpl=%s n=%ld w=%d warmup=%ld done=%ld elapsed_s=%.3f rps=%.0f "
           "mean_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f "
           "errors=%lld ok=%lld bad_json=%lld unknown_id=%lld rpc_error=%lld no_result=%lld lost=%lld "
           "notifs=%lld server_req=%lld aborted=%s child=%s child_maxrss_kb=%ld "
           "child_cpu_s=%.3f driver_cpu_s=%.3f\n",
           label, mode, base(tfile), n, window, warmup, nlat, elapsed,
           elapsed > 0 ? (double)nlat / elapsed : 0, nlat ? sum / nlat / 1000.0 : 0,
           pct_us(lat, nlat, 50), pct_us(lat, nlat, 90), pct_us(lat, nlat, 99),
           nlat ? lat[nlat - 1] / 1000.0 : 0, errors, c_ok, c_bad_json, c_unknown_id, c_rpc_error,
           c_no_result, c_lost, c_notifs, c_server_req, aborted ? abort_why : "no", cdesc,
           ce.ru.ru_maxrss, tv_s(ce.ru.ru_utime) + tv_s(ce.ru.ru_stime), self_cpu);
    fflush(stdout);
    if (aborted) return 2;
    if (errors || !(WIFEXITED(ce.status) && WEXITSTATUS(ce.status) == 0)) return 1;
    return 0;
}
