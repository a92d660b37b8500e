/*
 * sandbox.h — the worker sandbox (docs/security.md, "Sandbox"): namespaces, no-new-privs,
 * capabilities, Landlock, seccomp (libseccomp) and resource limits, applied by
 * `context-host worker` before any provider code runs. Linux only; elsewhere every layer
 * reports itself missing.
 */
#ifndef CONTEXT_HOST_SANDBOX_H
#define CONTEXT_HOST_SANDBOX_H

#ifdef __cplusplus
extern "C" {
#endif

/** One layer of the sandbox and whether it is in force. */
typedef struct {
    /** Stable name, e.g. "landlock-filesystem". */
    char name[32];
    /** 1: enforced; 0: missing (see `reason`). */
    int enforced;
    /** Why it is missing, in words (empty when enforced). */
    char reason[240];
} ctxh_sandbox_layer;

/** The layers a sandbox reports (at most this many). */
#define CTXH_SANDBOX_MAX_LAYERS 16

typedef struct {
    int count;
    ctxh_sandbox_layer layers[CTXH_SANDBOX_MAX_LAYERS];
} ctxh_sandbox_report;

/** What the worker may do once confined. */
typedef struct {
    /** Read-only files or folders (library, runtime, system data, `path` settings). */
    const char *const *read_paths;
    int read_count;
    /** Read-write folders (the provider's data folder). */
    const char *const *write_paths;
    int write_count;
    /** The `network` permission: TCP and inet sockets allowed, no network namespace. */
    int allow_network;
    /** The `exec` permission: execve and new processes allowed. */
    int allow_exec;
    /** RLIMIT_AS in bytes (0: none). */
    unsigned long long address_space_limit;
    /** RLIMIT_NPROC: tasks (threads and processes) of the sandbox (0: none). Only set in a user namespace. */
    unsigned long long task_limit;
    /** RLIMIT_NOFILE (0: leave). */
    unsigned long long file_limit;
    /** RLIMIT_FSIZE in bytes (0: none). */
    unsigned long long file_size_limit;
    /** Comma-separated layer names to leave out (tests: CONTEXT_HOST_SANDBOX_DISABLE). */
    const char *disabled;
} ctxh_sandbox_policy;

/**
 * Puts the calling (single-threaded) process into new user, PID, mount (with its own /proc) and,
 * when `new_network` is set, network namespaces. The process forks twice: the caller stays
 * outside as a relay that exits as its grandchild does (same exit code or signal); a child is PID
 * 1 of the new PID namespace (when it dies, so does every process in the namespace); the
 * grandchild returns from this call and goes on as the worker. Each process asks for SIGKILL when
 * its parent dies. Returns, in the worker, a report of the namespace layers (appended to
 * `report`); on failure nothing forks and the layers are reported missing.
 */
void ctxh_sandbox_enter_namespaces(int new_network, const char *disabled, ctxh_sandbox_report *report);

/**
 * Applies resource limits, PR_SET_NO_NEW_PRIVS, drops every capability, then Landlock (best ABI)
 * and the seccomp filter, appending each layer's status to `report`. Irreversible.
 */
void ctxh_sandbox_apply(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report);

/**
 * Caps the tasks (threads and processes) this process and its descendants may have: a pids
 * cgroup when running as root (the kernel exempts uid 0 from RLIMIT_NPROC), else RLIMIT_NPROC.
 * Call before `ctxh_sandbox_enter_namespaces` (it needs the host's privileges).
 */
void ctxh_sandbox_limit_tasks(unsigned long long limit, const char *disabled, ctxh_sandbox_report *report);

/** Removes the pids cgroup `ctxh_sandbox_limit_tasks` made for worker `pid` (the host, after reaping it). */
void ctxh_sandbox_remove_cgroup(int pid);

/** Sets this process's dumpable flag (PR_SET_DUMPABLE). Returns 0, or -1 where unsupported. */
int ctxh_set_dumpable(int dumpable);

/** The Landlock ABI version the kernel offers (0: none). */
int ctxh_landlock_abi(void);

#ifdef __cplusplus
}
#endif

#endif
