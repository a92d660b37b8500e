/*
 * httpload -- load driver for MCP servers on the Streamable HTTP transport (Benchmarks/mcp-bench.sh
 * HTTP rows): the same measurement as rpcload's, over HTTP/1.1 keep-alive connections.
 *
 * Build:  gcc -O2 -Wall -Wextra -pthread -o httpload httpload.c -lm
 *
 * Usage:  httpload -a HOST:PORT -u PATH -t FILE [-n N] [-c C] [-W N] [-T SEC] [-v VERSION] [-l LABEL]
 *
 *   -a HOST:PORT  the server (HOST an IPv4 address)
 *   -u PATH       the MCP endpoint path (e.g. /mcp)
 *   -t FILE       the request: one JSON-RPC request on the first line, with "id":0 (each request
 *                 sent gets a fresh integer id there, as rpcload does)
 *   -n N          measured requests, over all connections         (default 10000)
 *   -c C          connections, each with one request in flight (C in flight in all; 1 = closed
 *                 loop latency)                                   (default 64)
 *   -W N          warmup requests, not measured                   (default 0)
 *   -T SEC        a request that takes longer than SEC fails the run (default 60)
 *   -v VERSION    the protocol version of initialize and MCP-Protocol-Version (default 2025-06-18)
 *   -l LABEL      label printed in the summary line
 *
 * First `initialize` (its Mcp-Session-Id kept) and `notifications/initialized`, then the request
 * on every connection until N are answered. An answer counts as an error unless it is HTTP 200
 * with a JSON-RPC "result" (the body as JSON, or the last `data:` of an SSE stream) and no
 * "isError":true. Prints one line: label= n= c= done= errors= elapsed_s= rps= p50_us= p99_us=.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char host[64] = "127.0.0.1";
static int port;
static const char *path = "/mcp";
static const char *version = "2025-06-18";
static const char *label = "";
static char *request_body;
/* The request around its id: prefix, then the id, then suffix. */
static char *request_prefix, *request_suffix;
static char session_id[256];
static long total = 10000, warmup;
static int connections = 64, timeout_s = 60;
static atomic_long issued, errors, done;
static long *latencies;
static atomic_long latency_count;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int connect_server(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {.tv_sec = timeout_s};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* A connection's read buffer. */
struct conn {
    int fd;
    char *buf;
    size_t len, cap;
};

static int fill(struct conn *c) {
    if (c->cap - c->len < 65536) {
        c->cap = c->cap * 2 + 65536;
        c->buf = realloc(c->buf, c->cap);
        if (!c->buf) return -1;
    }
    ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
    if (n <= 0) return -1;
    c->len += (size_t)n;
    c->buf[c->len] = 0;
    return 0;
}

static void consume(struct conn *c, size_t n) {
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
    c->buf[c->len] = 0;
}

static int send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends a POST of `body`; reads the answer: status, the body (de-chunked) into *out. */
static int post(struct conn *c, const char *body, int *status, char **out, size_t *out_len) {
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: application/json, text/event-stream\r\n"
                     "Content-Type: application/json\r\nMCP-Protocol-Version: %s\r\n%s%s%sContent-Length: %zu\r\n\r\n",
                     path, host, port, version, session_id[0] ? "Mcp-Session-Id: " : "", session_id, session_id[0] ? "\r\n" : "",
                     strlen(body));
    if (n <= 0 || (size_t)n >= sizeof head) return -1;
    if (send_all(c->fd, head, (size_t)n) || send_all(c->fd, body, strlen(body))) return -1;
    char *end;
    while (!(end = strstr(c->buf ? c->buf : "", "\r\n\r\n")))
        if (fill(c)) return -1;
    size_t head_len = (size_t)(end - c->buf) + 4;
    *status = atoi(c->buf + 9);
    long length = -1;
    int chunked = 0;
    for (char *line = strstr(c->buf, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
        if (!strncasecmp(line, "content-length:", 15)) length = atol(line + 15);
        if (!strncasecmp(line, "transfer-encoding:", 18) && strstr(line, "chunked") && strstr(line, "chunked") < strstr(line, "\r\n")) chunked = 1;
        if (!strncasecmp(line, "mcp-session-id:", 15) && !session_id[0]) {
            char *value = line + 15;
            while (*value == ' ') value++;
            size_t len = (size_t)(strstr(value, "\r\n") - value);
            if (len < sizeof session_id) memcpy(session_id, value, len), session_id[len] = 0;
        }
    }
    consume(c, head_len);
    *out_len = 0;
    *out = NULL;
    if (chunked) {
        size_t cap = 4096;
        *out = malloc(cap);
        for (;;) {
            char *crlf;
            while (!(crlf = strstr(c->buf, "\r\n")))
                if (fill(c)) return -1;
            long size = strtol(c->buf, NULL, 16);
            size_t need = (size_t)(crlf - c->buf) + 2 + (size_t)size + 2;
            while (c->len < need)
                if (fill(c)) return -1;
            if (size == 0) {
                consume(c, need);
                break;
            }
            if (*out_len + (size_t)size + 1 > cap) cap = (*out_len + (size_t)size + 1) * 2, *out = realloc(*out, cap);
            memcpy(*out + *out_len, crlf + 2, (size_t)size);
            *out_len += (size_t)size;
            consume(c, need);
        }
    } else if (length >= 0) {
        while (c->len < (size_t)length)
            if (fill(c)) return -1;
        *out = malloc((size_t)length + 1);
        memcpy(*out, c->buf, (size_t)length);
        *out_len = (size_t)length;
        consume(c, (size_t)length);
    } else if (*status != 202 && *status != 204) {
        return -1; /* (no framing: this driver needs keep-alive) */
    }
    if (*out) (*out)[*out_len] = 0;
    return 0;
}

static int good(int status, const char *body) {
    if (status != 200 || !body) return 0;
    const char *message = body, *data;
    while ((data = strstr(message, "data:"))) message = data + 5; /* SSE: the last event */
    return strstr(message, "\"result\"") && !strstr(message, "\"isError\":true");
}

static void *worker(void *arg) {
    (void)arg;
    struct conn c = {.fd = connect_server()};
    if (c.fd < 0) {
        fprintf(stderr, "httpload: cannot connect to %s:%d: %s\n", host, port, strerror(errno));
        exit(1);
    }
    for (;;) {
        long index = atomic_fetch_add(&issued, 1);
        if (index >= warmup + total) break;
        double start = now_ns();
        int status;
        char *body;
        size_t len;
        char request[8192];
        snprintf(request, sizeof request, "%s%ld%s", request_prefix, index + 1, request_suffix);
        if (post(&c, request, &status, &body, &len)) {
            fprintf(stderr, "httpload: connection failed (a request took over %d s, or the server closed it)\n", timeout_s);
            exit(1);
        }
        if (!good(status, body)) {
            if (atomic_fetch_add(&errors, 1) < 3) fprintf(stderr, "httpload: bad answer %d: %.300s\n", status, body ? body : "");
        }
        free(body);
        if (index >= warmup) {
            long slot = atomic_fetch_add(&latency_count, 1);
            latencies[slot] = (long)(now_ns() - start);
            atomic_fetch_add(&done, 1);
        }
    }
    close(c.fd);
    free(c.buf);
    return NULL;
}

static int compare(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *template = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "a:u:t:n:c:W:T:v:l:")) != -1) {
        switch (opt) {
        case 'a': {
            char *colon = strrchr(optarg, ':');
            if (!colon || (size_t)(colon - optarg) >= sizeof host) return fprintf(stderr, "httpload: -a HOST:PORT\n"), 2;
            memcpy(host, optarg, (size_t)(colon - optarg));
            host[colon - optarg] = 0;
            port = atoi(colon + 1);
            break;
        }
        case 'u': path = optarg; break;
        case 't': template = optarg; break;
        case 'n': total = atol(optarg); break;
        case 'c': connections = atoi(optarg); break;
        case 'W': warmup = atol(optarg); break;
        case 'T': timeout_s = atoi(optarg); break;
        case 'v': version = optarg; break;
        case 'l': label = optarg; break;
        default: return fprintf(stderr, "usage: httpload -a HOST:PORT -u PATH -t FILE [-n N] [-c C] [-W N] [-T SEC] [-v VERSION] [-l LABEL]\n"), 2;
        }
    }
    if (!template || port <= 0 || total <= 0 || connections <= 0) return fprintf(stderr, "httpload: -a, -t, -n and -c are needed\n"), 2;
    FILE *file = fopen(template, "r");
    size_t cap = 0;
    if (!file || getline(&request_body, &cap, file) <= 0) return fprintf(stderr, "httpload: cannot read %s\n", template), 2;
    fclose(file);
    request_body[strcspn(request_body, "\r\n")] = 0;
    char *id = strstr(request_body, "\"id\":0");
    if (!id || strlen(request_body) > 8000) return fprintf(stderr, "httpload: the request must have \"id\":0 (and be under 8000 bytes)\n"), 2;
    id[5] = 0;
    request_prefix = request_body;
    request_suffix = id + 6;

    struct conn c = {.fd = connect_server()};
    if (c.fd < 0) return fprintf(stderr, "httpload: cannot connect to %s:%d\n", host, port), 1;
    char init[512];
    snprintf(init, sizeof init,
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"httpload\",\"version\":\"1.0.0\"}}}",
             version);
    int status;
    char *body;
    size_t len;
    if (post(&c, init, &status, &body, &len) || !good(status, body))
        return fprintf(stderr, "httpload: initialize failed: %d %s\n", status, body ? body : ""), 1;
    free(body);
    if (post(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &status, &body, &len) || (status != 202 && status != 200))
        return fprintf(stderr, "httpload: notifications/initialized: %d\n", status), 1;
    free(body);
    close(c.fd);
    free(c.buf);

    latencies = calloc((size_t)total, sizeof *latencies);
    pthread_t *threads = calloc((size_t)connections, sizeof *threads);
    double started = 0;
    /* Warmup first (not timed), then the measured part. */
    if (warmup > 0) {
        long measured = total;
        total = 0;
        for (int i = 0; i < connections; i++) pthread_create(&threads[i], NULL, worker, NULL);
        for (int i = 0; i < connections; i++) pthread_join(threads[i], NULL);
        total = measured;
        atomic_store(&issued, warmup);
    }
    started = now_ns();
    for (int i = 0; i < connections; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < connections; i++) pthread_join(threads[i], NULL);
    double elapsed = (now_ns() - started) / 1e9;
    long count = atomic_load(&latency_count);
    qsort(latencies, (size_t)count, sizeof *latencies, compare);
    printf("label=%s n=%ld c=%d done=%ld errors=%ld elapsed_s=%.3f rps=%.0f p50_us=%.1f p99_us=%.1f\n", label, total, connections,
           atomic_load(&done), atomic_load(&errors), elapsed, count / elapsed, count ? latencies[count / 2] / 1e3 : 0,
           count ? latencies[(long)(count * 0.99)] / 1e3 : 0);
    return atomic_load(&errors) ? 1 : 0;
}
