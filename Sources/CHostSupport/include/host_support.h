/*
 * host_support.h — small POSIX helpers the host needs that Swift cannot call directly
 * (variadic prctl, GNU posix_spawn extensions, resource limits).
 */
#ifndef CONTEXT_HOST_SUPPORT_H
#define CONTEXT_HOST_SUPPORT_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Spawns `path` with `argv` and `envp` (NULL-terminated; NULL envp: this process's environment), with `stdin_fd`, `stdout_fd` and `stderr_fd` as its
 * fds 0, 1 and 2 and every other descriptor closed, default signal dispositions (SIGPIPE
 * included) and an empty signal mask. Returns 0 and stores the pid, or an errno value.
 */
int ctxh_spawn(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, pid_t *out_pid);

/**
 * `ctxh_spawn`, and `fd3` (when not negative) as the child's fd 3: a worker's host-request pipe
 * (docs/architecture.md, "Threads"). Any source numbered 0 to 3 in this process (a parent that
 * closed its standard descriptors) is first copied above 3, so the child gets each one on its
 * number whatever the numbers here, fd 3 without FD_CLOEXEC even when `fd3` is 3 already (where
 * dup2(3, 3) alone would keep the flag). Every descriptor above 3 is closed in the child.
 */
int ctxh_spawn_with_fd3(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, int fd3, pid_t *out_pid);

/** pipe2(fds, O_CLOEXEC): a pipe whose ends are not inherited by spawned processes. */
int ctxh_pipe_cloexec(int fds[2]);

/**
 * Asks the kernel to send `signal` to this process when its parent thread exits (Linux
 * PR_SET_PDEATHSIG). Returns 0, or -1 where unsupported.
 */
int ctxh_set_parent_death_signal(int signal);

/** Caps this process's data segment (RLIMIT_DATA: heap and private mappings). Returns 0 or -1. */
int ctxh_limit_data(unsigned long long bytes);

/**
 * Whether child `pid` has exited, without reaping it (waitid WNOWAIT), so it can still be
 * signalled safely. Returns 1 if it has exited, 0 if it is running, -1 on error.
 */
int ctxh_child_exited(pid_t pid);

/** The name of a signal, e.g. "SIGSEGV", or NULL if unknown. */
const char *ctxh_signal_name(int signal);

/**
 * An anonymous, sealable in-memory file (Linux memfd_create with MFD_CLOEXEC | MFD_ALLOW_SEALING),
 * for loading verified library bytes that no other process can reach. Returns the descriptor, or
 * -1 with errno set (ENOSYS where unsupported).
 */
int ctxh_memfd_create(const char *name);

/**
 * Seals a memfd so its contents can never change again (F_SEAL_SHRINK | F_SEAL_GROW |
 * F_SEAL_WRITE | F_SEAL_SEAL). Returns 0, or -1 with errno set.
 */
int ctxh_seal_readonly(int fd);

/**
 * Opens `path` read-only (O_CLOEXEC) refusing symbolic links in every component (Linux openat2
 * with RESOLVE_NO_SYMLINKS; elsewhere, or on kernels without openat2, O_NOFOLLOW on the last
 * component only). For canonical paths, so the file opened is the one that was checked.
 * Returns the descriptor, or -1 with errno set (ELOOP: a symbolic link was met).
 */
int ctxh_open_no_symlinks(const char *path);

/** Names the calling thread as tools show it (`top -H`, `perf`); at most 15 bytes are kept.
    Returns 0, or -1 where threads cannot be named. */
int ctxh_name_this_thread(const char *name);

#ifdef __cplusplus
}
#endif

#endif
