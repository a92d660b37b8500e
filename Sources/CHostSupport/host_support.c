#define _GNU_SOURCE
#include "host_support.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

static int ctxh_spawn_moved(const char *path, char *const argv[], char *const envp[], const int sources[4], pid_t *out_pid);

int ctxh_spawn(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, pid_t *out_pid) {
    return ctxh_spawn_with_fd3(path, argv, envp, stdin_fd, stdout_fd, stderr_fd, -1, out_pid);
}

int ctxh_spawn_with_fd3(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, int fd3, pid_t *out_pid) {
    /* Every source descriptor numbered 0 to 3 is first copied above 3 (close-on-exec, closed
       again below), so that no dup2 onto 0-3 overwrites a source not yet copied, and no source is
       already its target: dup2(3, 3) would leave FD_CLOEXEC set (before glibc 2.29 posix_spawn's
       adddup2 did so too), and the child would lose its fd 3 at exec. A parent that closed its
       standard descriptors (an embedder) gets pipe ends numbered 0 to 3. */
    int sources[4] = {stdin_fd, stdout_fd, stderr_fd, fd3};
    int moved[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        if (sources[i] >= 0 && sources[i] <= 3) {
            moved[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 4);
            if (moved[i] < 0) {
                int error = errno;
                for (int j = 0; j < i; j++) if (moved[j] >= 0) close(moved[j]);
                return error;
            }
            sources[i] = moved[i];
        }
    }
    int status = ctxh_spawn_moved(path, argv, envp, sources, out_pid);
    for (int i = 0; i < 4; i++) if (moved[i] >= 0) close(moved[i]);
    return status;
}

static int ctxh_spawn_moved(const char *path, char *const argv[], char *const envp[], const int sources[4], pid_t *out_pid) {
    int stdin_fd = sources[0], stdout_fd = sources[1], stderr_fd = sources[2], fd3 = sources[3];
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    status = posix_spawnattr_init(&attributes);
    if (status != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return status;
    }
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    if (fd3 >= 0) posix_spawn_file_actions_adddup2(&actions, fd3, 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&actions, fd3 >= 0 ? 4 : 3);
#endif
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    extern char **environ;
    status = posix_spawn(out_pid, path, &actions, &attributes, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return status;
}

int ctxh_set_parent_death_signal(int signal) {
#ifdef __linux__
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0);
#else
    (void)signal;
    return -1;
#endif
}

int ctxh_limit_data(unsigned long long bytes) {
    struct rlimit limit;
    limit.rlim_cur = (rlim_t)bytes;
    limit.rlim_max = (rlim_t)bytes;
    return setrlimit(RLIMIT_DATA, &limit);
}

const char *ctxh_signal_name(int signal) {
    switch (signal) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

int ctxh_child_exited(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    for (;;) {
        int status = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (status < 0 && errno == EINTR) continue;
        if (status < 0) return -1;
        return info.si_pid == pid ? 1 : 0;
    }
}

int ctxh_pipe_cloexec(int fds[2]) {
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int ctxh_memfd_create(const char *name) {
#if defined(__linux__) && defined(MFD_ALLOW_SEALING)
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
#else
    (void)name;
    errno = ENOSYS;
    return -1;
#endif
}

int ctxh_seal_readonly(int fd) {
#if defined(__linux__) && defined(F_ADD_SEALS)
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int ctxh_open_no_symlinks(const char *path) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return (int)fd;
#endif
    return open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

int ctxh_name_this_thread(const char *name) {
#if defined(__linux__)
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    return prctl(PR_SET_NAME, truncated, 0, 0, 0) == 0 ? 0 : -1;
#elif defined(__APPLE__)
    return pthread_setname_np(name) == 0 ? 0 : -1;
#else
    (void)name;
    return -1;
#endif
}
