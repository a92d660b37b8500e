#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <stdint.h>
#endif

static void report_layer(ctxh_sandbox_report *report, const char *name, int enforced, const char *reason) {
    if (!report || report->count >= CTXH_SANDBOX_MAX_LAYERS) return;
    ctxh_sandbox_layer *layer = &report->layers[report->count++];
    snprintf(layer->name, sizeof layer->name, "%s", name);
    layer->enforced = enforced;
    snprintf(layer->reason, sizeof layer->reason, "%s", enforced ? "" : (reason ? reason : "unavailable"));
}

/* Whether `name` is in the comma-separated `disabled` list. */
static int is_disabled(const char *disabled, const char *name) {
    if (!disabled || !*disabled) return 0;
    size_t length = strlen(name);
    const char *p = disabled;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && strncmp(p, name, n) == 0) return 1;
        if (n == 3 && strncmp(p, "all", 3) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static const char *disabled_reason = "turned off by CONTEXT_HOST_SANDBOX_DISABLE (tests only)";

int ctxh_set_dumpable(int dumpable) {
#ifdef __linux__
    return prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0) == 0 ? 0 : -1;
#else
    (void)dumpable;
    return -1;
#endif
}

#ifdef __linux__

/* ---- Landlock (plain system calls; constants up to ABI 7, so older headers do not matter) ---- */

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int ctxh_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t landlock_fs_mask(int abi) {
    uint64_t mask = (1ULL << 13) - 1; /* ABI 1: EXECUTE … MAKE_SYM */
    if (abi >= 2) mask |= LL_FS_REFER;
    if (abi >= 3) mask |= LL_FS_TRUNCATE;
    if (abi >= 5) mask |= LL_FS_IOCTL_DEV;
    return mask;
}

/* Adds a rule for `path`; a path that does not exist is skipped. Returns 0, or an errno. */
static int landlock_allow(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : errno;
    struct stat info;
    if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) {
        access &= (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
    }
    struct ll_path_beneath_attr rule = {.allowed_access = access & handled, .parent_fd = fd};
    long status = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    int error = status < 0 ? errno : 0;
    close(fd);
    return error;
}

static void apply_landlock(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report) {
    int want_fs = !is_disabled(policy->disabled, "landlock-filesystem");
    int want_net = !policy->allow_network && !is_disabled(policy->disabled, "landlock-network");
    int want_scope = !is_disabled(policy->disabled, "landlock-scope");
    int abi = ctxh_landlock_abi();
    char reason[200];
    if (abi < 1) {
        snprintf(reason, sizeof reason, "the kernel offers no Landlock (Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK and 'landlock' in lsm=)");
        report_layer(report, "landlock-filesystem", 0, want_fs ? reason : disabled_reason);
        if (!policy->allow_network) report_layer(report, "landlock-network", 0, want_net ? reason : disabled_reason);
        report_layer(report, "landlock-scope", 0, want_scope ? reason : disabled_reason);
        return;
    }
    struct ll_ruleset_attr attr;
    memset(&attr, 0, sizeof attr);
    uint64_t fs = landlock_fs_mask(abi);
    if (want_fs) attr.handled_access_fs = fs;
    if (want_net && abi >= 4) attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    if (want_scope && abi >= 6) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
    if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped) {
        report_layer(report, "landlock-filesystem", 0, disabled_reason);
        if (!policy->allow_network) report_layer(report, "landlock-network", 0, abi >= 4 ? disabled_reason : "needs Landlock ABI 4 (Linux 6.7)");
        report_layer(report, "landlock-scope", 0, abi >= 6 ? disabled_reason : "needs Landlock ABI 6 (Linux 6.12)");
        return;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) {
        snprintf(reason, sizeof reason, "landlock_create_ruleset failed: %s", strerror(errno));
        report_layer(report, "landlock-filesystem", 0, reason);
        if (!policy->allow_network) report_layer(report, "landlock-network", 0, reason);
        report_layer(report, "landlock-scope", 0, reason);
        return;
    }
    int failed = 0;
    if (want_fs) {
        uint64_t read = LL_FS_READ_FILE | LL_FS_READ_DIR | (policy->allow_exec ? LL_FS_EXECUTE : 0);
        for (int i = 0; i < policy->read_count && !failed; i++) {
            int error = landlock_allow(ruleset, policy->read_paths[i], read, fs);
            if (error) {
                snprintf(reason, sizeof reason, "cannot add a rule for %s: %s", policy->read_paths[i], strerror(error));
                failed = 1;
            }
        }
        for (int i = 0; i < policy->write_count && !failed; i++) {
            int error = landlock_allow(ruleset, policy->write_paths[i], fs, fs);
            if (error) {
                snprintf(reason, sizeof reason, "cannot add a rule for %s: %s", policy->write_paths[i], strerror(error));
                failed = 1;
            }
        }
    }
    if (!failed && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(reason, sizeof reason, "landlock_restrict_self failed: %s", strerror(errno));
        failed = 1;
    }
    close(ruleset);
    char abi_reason[120];
    report_layer(report, "landlock-filesystem", want_fs && !failed, failed ? reason : disabled_reason);
    if (!policy->allow_network) {
        snprintf(abi_reason, sizeof abi_reason, "needs Landlock ABI 4 (Linux 6.7); this kernel offers ABI %d", abi);
        report_layer(report, "landlock-network", want_net && abi >= 4 && !failed,
                     failed ? reason : !want_net ? disabled_reason : abi_reason);
    }
    snprintf(abi_reason, sizeof abi_reason, "needs Landlock ABI 6 (Linux 6.12); this kernel offers ABI %d", abi);
    report_layer(report, "landlock-scope", want_scope && abi >= 6 && !failed,
                 failed ? reason : !want_scope ? disabled_reason : abi_reason);
}

/* ---- seccomp (libseccomp) ---- */

static int deny_named(scmp_filter_ctx context, const char *name, int error) {
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR) return 0; /* not on this architecture */
    return seccomp_rule_add(context, SCMP_ACT_ERRNO(error), number, 0);
}

static void apply_seccomp(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report) {
    if (is_disabled(policy->disabled, "seccomp")) {
        report_layer(report, "seccomp", 0, disabled_reason);
        return;
    }
    char reason[200];
    scmp_filter_ctx context = seccomp_init(SCMP_ACT_ALLOW);
    if (!context) {
        report_layer(report, "seccomp", 0, "seccomp_init failed (libseccomp)");
        return;
    }
    static const char *const always[] = {
        "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
        "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
        "fsmount", "fspick", "mount_setattr", "unshare", "setns",
        "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load",
        "userfaultfd", "personality", "init_module", "finit_module", "delete_module", "reboot", "swapon",
        "swapoff", "acct", "iopl", "ioperm", "open_by_handle_at", "name_to_handle_at", "quotactl",
        "quotactl_fd", "syslog", "lookup_dcookie", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "vhangup", "uselib",
    };
    int status = 0;
    for (size_t i = 0; i < sizeof always / sizeof always[0] && status == 0; i++) status = deny_named(context, always[i], EPERM);
    if (status == 0 && !policy->allow_network) {
        static const int families[] = {AF_INET, AF_INET6, AF_NETLINK, AF_PACKET};
        for (size_t i = 0; i < sizeof families / sizeof families[0] && status == 0; i++) {
            status = seccomp_rule_add(context, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]));
        }
    } else if (status == 0) {
        status = seccomp_rule_add(context, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_PACKET));
    }
    if (status == 0 && !policy->allow_exec) {
        status = deny_named(context, "execve", EPERM);
        if (status == 0) status = deny_named(context, "execveat", EPERM);
        if (status == 0) status = deny_named(context, "fork", EPERM);
        if (status == 0) status = deny_named(context, "vfork", EPERM);
        /* clone3 passes its flags in memory, which seccomp cannot read: answer ENOSYS so the C
           library falls back to clone, whose flags (a register) are checked: threads only. */
        if (status == 0) status = deny_named(context, "clone3", ENOSYS);
        if (status == 0) {
            status = seccomp_rule_add(context, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                      SCMP_A0(SCMP_CMP_MASKED_EQ, (scmp_datum_t)CLONE_THREAD, 0));
        }
    }
    if (status == 0) status = seccomp_load(context);
    if (status != 0) snprintf(reason, sizeof reason, "building or loading the filter failed: %s", strerror(-status));
    seccomp_release(context);
    report_layer(report, "seccomp", status == 0, reason);
}

/* ---- capabilities ---- */

static void drop_capabilities(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report) {
    if (is_disabled(policy->disabled, "capabilities")) {
        report_layer(report, "capabilities", 0, disabled_reason);
        return;
    }
    int bounding_failed = 0;
    for (int cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break; /* past the last capability */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) bounding_failed = 1;
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    /* SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP(_LOCKED) | SECBIT_KEEP_CAPS_LOCKED |
       SECBIT_NO_CAP_AMBIENT_RAISE(_LOCKED): uid 0 gains nothing on exec (best effort). */
    prctl(PR_SET_SECUREBITS, 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80, 0, 0, 0);
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    int set = (int)syscall(SYS_capset, &header, data);
    memset(data, 0xff, sizeof data);
    int got = (int)syscall(SYS_capget, &header, data);
    int empty = got == 0 && data[0].effective == 0 && data[0].permitted == 0 && data[0].inheritable == 0 &&
                data[1].effective == 0 && data[1].permitted == 0 && data[1].inheritable == 0;
    char reason[200];
    snprintf(reason, sizeof reason, "capset failed (%s) or capabilities remain", set == 0 ? "ok" : strerror(errno));
    if (empty && bounding_failed && geteuid() == 0) {
        report_layer(report, "capabilities", 0, "running as root and the bounding set could not be cleared (no CAP_SETPCAP)");
        return;
    }
    report_layer(report, "capabilities", empty, reason);
}

static int set_limit(int resource, unsigned long long value) {
    struct rlimit limit = {(rlim_t)value, (rlim_t)value};
    struct rlimit current;
    if (getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY && current.rlim_max < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max = current.rlim_max;
    }
    return setrlimit(resource, &limit);
}

void ctxh_sandbox_apply(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report) {
    /* Resource limits: address space (counts shared mappings, unlike RLIMIT_DATA), tasks,
       descriptors, file size, no core files. */
    if (is_disabled(policy->disabled, "resource-limits")) {
        report_layer(report, "resource-limits", 0, disabled_reason);
    } else {
        int failed = 0;
        if (policy->address_space_limit) failed |= set_limit(RLIMIT_AS, policy->address_space_limit) != 0;
        if (policy->file_limit) failed |= set_limit(RLIMIT_NOFILE, policy->file_limit) != 0;
        if (policy->file_size_limit) failed |= set_limit(RLIMIT_FSIZE, policy->file_size_limit) != 0;
        failed |= set_limit(RLIMIT_CORE, 0) != 0;
        if (policy->task_limit) failed |= set_limit(RLIMIT_NPROC, policy->task_limit) != 0;
        report_layer(report, "resource-limits", !failed, "setrlimit failed");
    }
    /* Writes to files are not needed past this point: a provider's files are its own business. */
    signal(SIGXFSZ, SIG_DFL);
    if (is_disabled(policy->disabled, "no-new-privs")) {
        report_layer(report, "no-new-privs", 0, disabled_reason);
    } else {
        int ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
        report_layer(report, "no-new-privs", ok, "prctl(PR_SET_NO_NEW_PRIVS) failed");
    }
    drop_capabilities(policy, report);
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
        /* Landlock and seccomp need no-new-privs once capabilities are gone. */
        report_layer(report, "landlock-filesystem", 0, "needs no-new-privs");
        if (!policy->allow_network) report_layer(report, "landlock-network", 0, "needs no-new-privs");
        report_layer(report, "landlock-scope", 0, "needs no-new-privs");
        report_layer(report, "seccomp", 0, "needs no-new-privs");
        return;
    }
    apply_landlock(policy, report);
    apply_seccomp(policy, report);
}

/* ---- namespaces ---- */

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t length = (ssize_t)strlen(text);
    ssize_t written = write(fd, text, (size_t)length);
    close(fd);
    return written == length ? 0 : -1;
}

/* Exits the way `status` (a wait status) says: the same exit code, or the same signal. */
static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int signal_number = WTERMSIG(status);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(signal_number, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, signal_number);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(signal_number);
        _exit(128 + signal_number);
    }
    _exit(1);
}

static void close_descriptors_except(int keep) {
    for (int fd = 0; fd < 1024; fd++) {
        if (fd != keep) close(fd);
    }
}

/* The pids cgroup this worker made (empty if none), and its parent's cgroup.procs: the relay
   moves itself back there and removes the folder when the worker is gone. */
static char made_cgroup[256];
static char parent_cgroup_procs[256];

/* Creates (or joins) a pids cgroup for this process so the task cap holds also for root, which
   the kernel exempts from RLIMIT_NPROC. Returns 0 on success. */
static int join_pids_cgroup(unsigned long long limit, char *reason, size_t reason_size) {
    const char *roots[] = {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"};
    for (size_t i = 0; i < 2; i++) {
        char probe[256];
        snprintf(probe, sizeof probe, "%s/%s", roots[i], i == 0 ? "pids.max" : "cgroup.controllers");
        if (i == 0 && access(roots[i], W_OK) != 0) continue;
        if (i == 1) {
            FILE *file = fopen(probe, "r");
            if (!file) continue;
            char line[512] = "";
            if (!fgets(line, sizeof line, file)) line[0] = 0;
            fclose(file);
            if (!strstr(line, "pids")) continue;
        }
        char folder[256];
        snprintf(folder, sizeof folder, "%s/context-host", roots[i]);
        mkdir(folder, 0755);
        if (i == 1) write_file("/sys/fs/cgroup/context-host/cgroup.subtree_control", "+pids");
        snprintf(folder, sizeof folder, "%s/context-host/worker-%d", roots[i], (int)getpid());
        if (mkdir(folder, 0755) != 0 && errno != EEXIST) {
            snprintf(reason, reason_size, "cannot create the cgroup %s: %s", folder, strerror(errno));
            return -1;
        }
        char path[320], value[32];
        snprintf(path, sizeof path, "%s/pids.max", folder);
        snprintf(value, sizeof value, "%llu", limit);
        if (write_file(path, value) != 0) {
            snprintf(reason, reason_size, "cannot write %s: %s", path, strerror(errno));
            rmdir(folder);
            return -1;
        }
        snprintf(path, sizeof path, "%s/cgroup.procs", folder);
        if (write_file(path, "0") != 0) {
            snprintf(reason, reason_size, "cannot join the cgroup %s: %s", folder, strerror(errno));
            rmdir(folder);
            return -1;
        }
        snprintf(made_cgroup, sizeof made_cgroup, "%s", folder);
        snprintf(parent_cgroup_procs, sizeof parent_cgroup_procs, "%s/context-host/cgroup.procs", roots[i]);
        return 0;
    }
    snprintf(reason, reason_size, "no writable pids cgroup controller (/sys/fs/cgroup/pids or cgroup v2 with pids), and RLIMIT_NPROC does not bind uid 0");
    return -1;
}

void ctxh_sandbox_limit_tasks(unsigned long long limit, const char *disabled, ctxh_sandbox_report *report) {
    if (is_disabled(disabled, "task-limit")) {
        report_layer(report, "task-limit", 0, disabled_reason);
        return;
    }
    char reason[200] = "";
    if (geteuid() == 0) {
        report_layer(report, "task-limit", join_pids_cgroup(limit, reason, sizeof reason) == 0, reason);
        return;
    }
    int ok = set_limit(RLIMIT_NPROC, limit) == 0;
    report_layer(report, "task-limit", ok, "setrlimit(RLIMIT_NPROC) failed");
}

void ctxh_sandbox_remove_cgroup(int pid) {
    char folder[256];
    snprintf(folder, sizeof folder, "/sys/fs/cgroup/pids/context-host/worker-%d", pid);
    rmdir(folder);
    snprintf(folder, sizeof folder, "/sys/fs/cgroup/context-host/worker-%d", pid);
    rmdir(folder);
}

void ctxh_sandbox_enter_namespaces(int new_network, const char *disabled, ctxh_sandbox_report *report) {
    char reason[200];
    int want = !is_disabled(disabled, "namespaces");
    if (!want) {
        report_layer(report, "pid-namespace", 0, disabled_reason);
        report_layer(report, "mount-namespace", 0, disabled_reason);
        if (new_network) report_layer(report, "network-namespace", 0, disabled_reason);
        return;
    }
    int flags = CLONE_NEWPID | CLONE_NEWNS | (new_network ? CLONE_NEWNET : 0);
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int user_namespace = 1;
    if (unshare(CLONE_NEWUSER | flags) != 0) {
        int first = errno;
        /* root may lack user namespaces (sysctl) but still create the others itself */
        if (uid != 0 || unshare(flags) != 0) {
            snprintf(reason, sizeof reason, "unshare failed: %s (unprivileged user namespaces are off? sysctl user.max_user_namespaces / kernel.unprivileged_userns_clone)", strerror(first));
            report_layer(report, "pid-namespace", 0, reason);
            report_layer(report, "mount-namespace", 0, reason);
            if (new_network) report_layer(report, "network-namespace", 0, reason);
            return;
        }
        user_namespace = 0;
    }
    if (user_namespace) {
        char map[64];
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        write_file("/proc/self/gid_map", map);
    }
    int status_pipe[2], alive_pipe[2];
    if (pipe2(status_pipe, O_CLOEXEC) != 0 || pipe2(alive_pipe, O_CLOEXEC) != 0) {
        _exit(70);
    }
    pid_t init = fork();
    if (init < 0) {
        /* The PID namespace's first process could not start: the worker cannot fork in it. */
        _exit(71);
    }
    if (init > 0) {
        /* The relay: the host's child. Exits as the worker does. */
        close(status_pipe[1]);
        close(alive_pipe[0]);
        int keep = status_pipe[0];
        for (int fd = 0; fd < 1024; fd++) {
            if (fd != keep && fd != alive_pipe[1]) close(fd);
        }
        int worker_status = 0;
        ssize_t got;
        do {
            got = read(keep, &worker_status, sizeof worker_status);
        } while (got < 0 && errno == EINTR);
        int init_status = 0;
        while (waitpid(init, &init_status, 0) < 0 && errno == EINTR) {}
        if (made_cgroup[0] && write_file(parent_cgroup_procs, "0") == 0) rmdir(made_cgroup);
        exit_like(got == (ssize_t)sizeof worker_status ? worker_status : init_status);
    }
    /* PID 1 of the new namespace. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    close(status_pipe[0]);
    close(alive_pipe[1]);
    struct pollfd parent = {alive_pipe[0], POLLIN, 0};
    if (poll(&parent, 1, 0) > 0) _exit(0); /* the relay is already gone */
    int proc_mounted = 0;
    char mount_reason[200] = "";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(mount_reason, sizeof mount_reason, "making / private failed: %s", strerror(errno));
    } else if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
        snprintf(mount_reason, sizeof mount_reason, "mounting a new /proc failed: %s (the worker then sees the system's /proc, other processes of this user included)", strerror(errno));
    } else {
        proc_mounted = 1;
    }
    (void)user_namespace;
    pid_t worker = fork();
    if (worker < 0) _exit(72);
    if (worker > 0) {
        close_descriptors_except(status_pipe[1]);
        for (;;) {
            int status = 0;
            pid_t ended = waitpid(-1, &status, 0);
            if (ended < 0 && errno == EINTR) continue;
            if (ended == worker) {
                ssize_t ignored = write(status_pipe[1], &status, sizeof status);
                (void)ignored;
                _exit(0); /* every other process of the namespace dies with this one */
            }
            if (ended < 0) _exit(0);
        }
    }
    /* The worker: PID 2. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    close(status_pipe[1]);
    close(alive_pipe[0]);
    report_layer(report, "pid-namespace", 1, NULL);
    report_layer(report, "mount-namespace", proc_mounted, mount_reason);
    if (new_network) report_layer(report, "network-namespace", 1, NULL);
}

#else /* not Linux */

int ctxh_landlock_abi(void) { return 0; }

void ctxh_sandbox_limit_tasks(unsigned long long limit, const char *disabled, ctxh_sandbox_report *report) {
    (void)limit;
    (void)disabled;
    report_layer(report, "task-limit", 0, "not enforced on this platform (Linux only)");
}

void ctxh_sandbox_remove_cgroup(int pid) { (void)pid; }

void ctxh_sandbox_enter_namespaces(int new_network, const char *disabled, ctxh_sandbox_report *report) {
    (void)disabled;
    report_layer(report, "pid-namespace", 0, "Linux only");
    report_layer(report, "mount-namespace", 0, "Linux only");
    if (new_network) report_layer(report, "network-namespace", 0, "Linux only");
}

void ctxh_sandbox_apply(const ctxh_sandbox_policy *policy, ctxh_sandbox_report *report) {
    static const char *const names[] = {"resource-limits", "no-new-privs", "capabilities", "landlock-filesystem", "landlock-scope", "seccomp"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) report_layer(report, names[i], 0, "not enforced on this platform (Linux only)");
    if (!policy->allow_network) report_layer(report, "landlock-network", 0, "not enforced on this platform (Linux only)");
}

#endif
