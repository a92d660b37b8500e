/*
 * treerun: runs a server and reports what its whole process tree used, for Benchmarks/compare.sh.
 *
 *   treerun -o FILE [-i MS] -- COMMAND [ARGS...]
 *
 * Why: `context-host --isolation process` runs each provider in a worker process. When the host
 * exits, its workers die by PR_SET_PDEATHSIG and are never reaped by the host, so their CPU time
 * is not in the host's rusage (what rpcload's wait4 and /usr/bin/time see), and peak RSS from
 * wait4 is the largest single process, not host + workers.
 *
 * What it does:
 * - becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so descendants that the server does not
 *   reap are reparented here and reaped here; their CPU time then reaches whoever waits for
 *   treerun (rpcload's child_cpu_s, /usr/bin/time);
 * - every MS milliseconds (default 100) reads VmHWM (peak RSS) of every descendant from /proc and
 *   keeps each process's maximum;
 * - stdin, stdout and stderr are inherited untouched (it never reads or writes them);
 * - SIGTERM / SIGINT are passed on to the server; once the server has exited, descendants still
 *   running after 2 s are killed (counted as orphans_killed).
 *
 * Writes one line to FILE:
 *   tree_peak_rss_kb=N     sum over the tree's processes of each one's peak RSS (sampled)
 *   tree_max_rss_kb=N      largest single process (getrusage RUSAGE_CHILDREN, exact)
 *   tree_processes=N       processes seen (the server included)
 *   tree_cpu_s=X           user+sys of every reaped descendant (exact)
 *   tree_orphans_killed=N
 *   tree_busiest_thread_cpu_s=X  user+sys of the busiest single thread of the tree (sampled with
 *                          the peaks: its last 100 ms may be missed)
 *   tree_busiest_thread=NAME     that thread's name (/proc/.../comm)
 * Exit status: the server's (128+signal if it was killed).
 * Build: gcc -O2 -Wall -Wextra -o treerun treerun.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 4096

static volatile sig_atomic_t server_pid;

static void forward(int sig) { if (server_pid > 0) kill(server_pid, sig); }
static void wake(int sig) { (void)sig; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct { pid_t pid; long peak_kb; } seen[MAX_PROCS];
static int nseen;

static void note_peak(pid_t pid, long kb) {
    for (int i = 0; i < nseen; i++)
        if (seen[i].pid == pid) { if (kb > seen[i].peak_kb) seen[i].peak_kb = kb; return; }
    if (nseen < MAX_PROCS) { seen[nseen].pid = pid; seen[nseen].peak_kb = kb; nseen++; }
}

/* The CPU ticks each thread of the tree was last seen to have used (threads keep their ticks
   until they end), to find the busiest one: a single thread at 100% of a core bounds a run. */
static struct { pid_t tid; long ticks; char name[32]; } threads[MAX_PROCS];
static int nthreads;

static void note_threads(pid_t pid) {
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char file[300], buf[512];
        snprintf(file, sizeof file, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
        FILE *f = fopen(file, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
        long utime, stime;
        /* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
        if (!open_paren || !close_paren
            || sscanf(close_paren + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2)
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        int k = 0;
        while (k < nthreads && threads[k].tid != tid) k++;
        if (k == nthreads) {
            if (nthreads == MAX_PROCS) continue;
            nthreads++;
            threads[k].tid = tid;
        }
        threads[k].ticks = utime + stime;
        size_t n = (size_t)(close_paren - open_paren - 1);
        if (n >= sizeof threads[k].name) n = sizeof threads[k].name - 1;
        memcpy(threads[k].name, open_paren + 1, n);
        threads[k].name[n] = 0;
    }
    closedir(d);
}

static long vmhwm_kb(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) { kb = strtol(line + 6, NULL, 10); break; }
    fclose(f);
    return kb;
}

/* Finds every descendant of this process; records peaks when `sample`, kills them when `sig`. */
static int scan(int sample, int sig) {
    static pid_t pids[MAX_PROCS], ppids[MAX_PROCS];
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_PROCS) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *close_paren = strrchr(buf, ')');
        int ppid;
        char state;
        if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
        pids[n] = (pid_t)atoi(e->d_name);
        ppids[n] = (pid_t)ppid;
        n++;
    }
    closedir(d);
    /* descendants: closure over ppid starting from ourselves */
    static pid_t tree[MAX_PROCS];
    int nt = 0, found = 0;
    tree[nt++] = getpid();
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < n; i++) {
            int parent_in = 0, self_in = 0;
            for (int j = 0; j < nt; j++) {
                if (tree[j] == ppids[i]) parent_in = 1;
                if (tree[j] == pids[i]) self_in = 1;
            }
            if (parent_in && !self_in && nt < MAX_PROCS) { tree[nt++] = pids[i]; grew = 1; }
        }
    }
    for (int j = 1; j < nt; j++) {
        found++;
        if (sample) {
            long kb = vmhwm_kb(tree[j]);
            if (kb >= 0) note_peak(tree[j], kb);
            note_threads(tree[j]);
        }
        if (sig) kill(tree[j], sig);
    }
    return found;
}

int main(int argc, char **argv) {
    const char *out = NULL;
    long interval_ms = 100;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) { i++; break; }
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) interval_ms = atol(argv[++i]);
        else { fprintf(stderr, "treerun: unknown argument %s\n", argv[i]); i = argc; break; }
    }
    if (!out || i >= argc || interval_ms <= 0) {
        fprintf(stderr, "usage: treerun -o FILE [-i MS] -- COMMAND [ARGS...]\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) perror("treerun: PR_SET_CHILD_SUBREAPER");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wake;           /* no SA_RESTART: SIGCHLD cuts the sleep short */
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_handler = forward;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    pid_t pid = fork();
    if (pid < 0) { perror("treerun: fork"); return 2; }
    if (pid == 0) {
        signal(SIGCHLD, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        execvp(argv[i], argv + i);
        fprintf(stderr, "treerun: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    server_pid = pid;

    int server_status = 0, server_done = 0, orphans_killed = 0;
    double server_exit_time = 0;
    for (;;) {
        scan(1, 0);                 /* sample before reaping: a reaped process has no /proc entry */
        int status;
        pid_t w;
        while ((w = waitpid(-1, &status, WNOHANG)) > 0)
            if (w == pid) { server_status = status; server_done = 1; server_exit_time = now_s(); }
        if (w < 0 && errno == ECHILD) break;
        if (server_done && now_s() - server_exit_time > 2.0) {
            orphans_killed += scan(0, SIGKILL);
            server_exit_time = now_s();     /* give the kills time before counting again */
        }
        struct timespec t = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
        nanosleep(&t, NULL);
    }

    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    long tree_kb = 0;
    for (int k = 0; k < nseen; k++) tree_kb += seen[k].peak_kb;
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    int busiest = -1;
    for (int k = 0; k < nthreads; k++)
        if (busiest < 0 || threads[k].ticks > threads[busiest].ticks) busiest = k;
    double busiest_s = busiest < 0 ? 0 : (double)threads[busiest].ticks / (double)sysconf(_SC_CLK_TCK);
    char busiest_name[32] = "-";
    if (busiest >= 0) {
        /* one word, for the key=value line */
        snprintf(busiest_name, sizeof busiest_name, "%s", threads[busiest].name);
        for (char *c = busiest_name; *c; c++) if (*c == ' ' || *c == '=') *c = '_';
    }
    FILE *f = fopen(out, "w");
    if (f) {
        fprintf(f, "tree_peak_rss_kb=%ld tree_max_rss_kb=%ld tree_processes=%d tree_cpu_s=%.3f tree_orphans_killed=%d "
                   "tree_busiest_thread_cpu_s=%.3f tree_busiest_thread=%s\n",
                tree_kb, ru.ru_maxrss, nseen, cpu, orphans_killed, busiest_s, busiest_name);
        fclose(f);
    } else {
        fprintf(stderr, "treerun: cannot write %s: %s\n", out, strerror(errno));
    }
    if (WIFSIGNALED(server_status)) return 128 + WTERMSIG(server_status);
    return WEXITSTATUS(server_status);
}
