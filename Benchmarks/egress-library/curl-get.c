/*
 * curl-get: the libcurl side of the HTTP library comparison (docs/architecture.md, "HTTP
 * library"; Benchmarks/egress-library.sh builds and runs it). Not part of the package: built only
 * by that script (cc -O2 curl-get.c -lcurl; Debian libcurl4-openssl-dev), never by CI's tests,
 * and nothing links it.
 *
 *   curl-get URL CA_FILE COUNT [HOST:PORT:ADDRESS]
 *
 * COUNT GETs of URL in a row on one easy handle (one kept-alive connection, as AsyncHTTPClient's
 * pool does), TLS verified against CA_FILE, the name pinned to ADDRESS when given (as the broker
 * pins it), after 50 warm-up GETs. Prints one line:
 *   curl: N × GET B B: p50 X µs, p90 X µs, p99 X µs, R fetches/s (sequential); RSS start X KB, idle X KB, after X KB
 * where "start" is VmRSS on entry, "idle" after curl_global_init and one handle made (no request
 * yet), "after" once the GETs are done.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t bytes_received;

static size_t sink(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    bytes_received += size * count;
    return size * count;
}

static long rss_kb(void) {
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, status)) {
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    }
    fclose(status);
    return kb;
}

static double now_us(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec * 1e6 + (double)time.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int get(CURL *handle) {
    bytes_received = 0;
    CURLcode code = curl_easy_perform(handle);
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK || status != 200) {
        fprintf(stderr, "curl-get: %s (HTTP %ld)\n", curl_easy_strerror(code), status);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: curl-get URL CA_FILE COUNT [HOST:PORT:ADDRESS]\n");
        return 2;
    }
    long start_rss = rss_kb();
    long count = strtol(argv[3], NULL, 10);
    if (count < 10 || count > 1000000) count = 1000;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
    CURL *handle = curl_easy_init();
    if (!handle) return 1;
    curl_easy_setopt(handle, CURLOPT_URL, argv[1]);
    curl_easy_setopt(handle, CURLOPT_CAINFO, argv[2]);
    curl_easy_setopt(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    struct curl_slist *pinned = argc == 5 ? curl_slist_append(NULL, argv[4]) : NULL;
    if (pinned) curl_easy_setopt(handle, CURLOPT_RESOLVE, pinned);
    long idle = rss_kb();
    for (int i = 0; i < 50; i++)
        if (!get(handle)) return 1;
    double *times = calloc((size_t)count, sizeof *times);
    if (!times) return 1;
    double start = now_us();
    for (long i = 0; i < count; i++) {
        double begin = now_us();
        if (!get(handle)) return 1;
        times[i] = now_us() - begin;
    }
    double total = now_us() - start;
    size_t body = bytes_received;
    qsort(times, (size_t)count, sizeof *times, compare);
    printf("curl: %ld × GET %zu B: p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, %.0f fetches/s (sequential); RSS start %ld KB, idle %ld KB, after %ld KB\n",
        count, body, times[(count - 1) / 2], times[(long)((count - 1) * 0.9)], times[(long)((count - 1) * 0.99)], count / (total / 1e6), start_rss,
        idle, rss_kb());
    free(times);
    curl_easy_cleanup(handle);
    curl_slist_free_all(pinned);
    curl_global_cleanup();
    return 0;
}
