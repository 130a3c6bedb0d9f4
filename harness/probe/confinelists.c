/* `probe confine`'s lists of calls a mutant's options name: `--deny CALL` (a call
 * refused outright, on top of the reference's filter: a hand-written deny-list's
 * entries, the mutant's missing one) and `--i386-open FAMILY` (the calls of one family
 * let through the i386 entry alone: the mutant of one row's one way). Kept apart from
 * confine.c, which builds the filter from them. */

#include "probe.h"
#include "confinelists.h"

#if defined(__x86_64__)
/* The same families' calls through the i386 entry, as the probe makes them (i386.c):
 * a mutant's `--i386-open FAMILY` lets exactly these through (and getpid, by which the
 * probe finds the entry), every other call of that entry refused. */
static const struct { const char *family; long nr[6]; } i386_calls[] = {
    { "chmod", { I386_NR_chmod, I386_NR_fchmodat, -1, -1 } },
    { "chown", { I386_NR_chown32, I386_NR_lchown32, I386_NR_fchownat, -1 } },
    { "utime", { I386_NR_utime, I386_NR_utimes, I386_NR_utimensat, -1 } },
    { "xattr", { I386_NR_setxattr, I386_NR_lsetxattr, I386_NR_removexattr, I386_NR_lremovexattr } },
    { "chattr", { I386_NR_ioctl, -1, -1, -1 } }, /* every ioctl of that entry: the mutant's mistake */
    { "clone3", { I386_NR_clone3, -1, -1, -1 } }, /* x86_64's refused (ENOSYS), i386's not */
    /* one call (or two) a family's i386 list written from older tables leaves out */
    { "fchmodat2", { I386_NR_fchmodat2, -1, -1, -1 } },
    { "chown16", { I386_NR_chown, I386_NR_lchown, -1, -1 } },
    { "fchown16", { I386_NR_fchown, -1, -1, -1 } }, /* the descriptor's, 16-bit ids */
    { "utime64", { I386_NR_utimensat_time64, I386_NR_futimesat, -1, -1 } },
    { "xattrat", { I386_NR_removexattrat, -1, -1, -1 } },
    { "setxattrat", { I386_NR_setxattrat, -1, -1, -1 } },
    { "bpf", { I386_NR_bpf, -1, -1, -1 } }, /* a pinned map got by BPF_OBJ_GET */
    /* a file cut by path there, where `--deny truncate` refuses x86_64's */
    { "truncate", { I386_NR_truncate, I386_NR_truncate64, -1, -1 } },
    { "file_setattr", { I386_NR_file_setattr, -1, -1, -1 } },
    /* a family's descriptor calls there, its path calls refused (as `--fd-open`) */
    { "fchmod", { I386_NR_fchmod, -1, -1, -1 } },
    { "fchown", { I386_NR_fchown32, -1, -1, -1 } },
    { "fxattr", { I386_NR_fsetxattr, I386_NR_fremovexattr, -1, -1 } },
    /* io_uring's calls there (the same numbers as x86_64's, another entry) */
    { "io_uring", { I386_NR_io_uring_setup, I386_NR_io_uring_enter, I386_NR_io_uring_register, -1 } },
    /* every call that signals a process by its number (a deny-list of x86_64's), and
     * ptrace's: process_vm_readv and _writev, ptrace */
    { "signal",
      { I386_NR_kill, I386_NR_tkill, I386_NR_tgkill, I386_NR_rt_sigqueueinfo, I386_NR_rt_tgsigqueueinfo, -1 } },
    { "ptrace", { I386_NR_ptrace, I386_NR_process_vm_readv, I386_NR_process_vm_writev, -1 } },
    /* another process's scheduling (a deny-list of x86_64's setpriority and the rest) */
    { "sched",
      { I386_NR_setpriority, I386_NR_sched_setscheduler, I386_NR_sched_setattr, I386_NR_sched_setaffinity,
        I386_NR_ioprio_set, -1 } },
    /* another process's limits (a deny-list of x86_64's prlimit64), and a descriptor's
     * owner (of x86_64's fcntl and its F_SETOWN): every fcntl command of that entry */
    { "prlimit", { I386_NR_prlimit64, -1, -1, -1 } },
    { "setown", { I386_NR_fcntl, I386_NR_fcntl64, -1, -1 } },
    /* a name removed there, where `--deny unlink` and the rest refuse x86_64's: a file,
     * or a folder (unlinkat's AT_REMOVEDIR), as Landlock's REMOVE_FILE and REMOVE_DIR */
    { "unlink", { I386_NR_unlink, I386_NR_unlinkat, -1, -1 } },
    { "rmdir", { I386_NR_rmdir, I386_NR_unlinkat, -1, -1 } },
    /* a folder, a symlink, a named pipe or a socket file made by path there, where
     * `--deny` refuses x86_64's calls in place of a MAKE_* right left unhandled */
    { "mkdir", { I386_NR_mkdir, I386_NR_mkdirat, -1, -1 } },
    { "symlink", { I386_NR_symlink, I386_NR_symlinkat, -1, -1 } },
    { "mknod", { I386_NR_mknod, I386_NR_mknodat, -1, -1 } },
    { "bind", { I386_NR_bind, -1, -1, -1 } }, /* a socket of a pair named there */
    /* a file run, a folder listed there, where `--deny` refuses x86_64's execve and
     * execveat, getdents and getdents64 in place of EXECUTE or READ_DIR left unhandled */
    { "exec", { I386_NR_execve, I386_NR_execveat, -1, -1 } },
    { "getdents", { I386_NR_getdents, I386_NR_getdents64, -1, -1 } },
    { "execveat", { I386_NR_execveat, -1, -1, -1 } }, /* the newer call an i386 list leaves */
    { "getdents32", { I386_NR_getdents, -1, -1, -1 } }, /* the older one, a 32-bit layout */
    /* a regular file made there, where `--deny open-creat` and the rest refuse x86_64's */
    { "open", { I386_NR_open, I386_NR_openat, I386_NR_creat, I386_NR_openat2, -1, -1 } },
};
#endif

const long *confine_i386_family(const char *i386_open)
{
#if defined(__x86_64__)
    for (size_t j = 0; j < sizeof i386_calls / sizeof i386_calls[0]; j++)
        if (!strcmp(i386_calls[j].family, i386_open))
            return i386_calls[j].nr;
    fatal(2, "confine: --i386-open: unknown family %s (chmod, chown, utime, xattr, chattr, clone3,"
             " fchmodat2, chown16, fchown16, utime64, xattrat, setxattrat, file_setattr, fchmod,"
             " fchown, fxattr, io_uring, bpf, truncate, signal, ptrace, sched, prlimit, setown,"
             " unlink, rmdir, mkdir, symlink, mknod, bind, exec, getdents, execveat, getdents32,"
             " open)",
          i386_open);
#else
    fatal(2, "confine: --i386-open: no i386 entry on this architecture (%s)", i386_open);
#endif
}

/* The calls a mutant's `--deny CALL` refuses outright (EPERM), on top of the rest: a
 * hand-written deny-list of an operator's, which may leave one way out (the
 * signalling calls less pidfd_send_signal, the memory calls less /proc/<pid>/mem). */
static const struct { const char *name; long nr; } deny_names[] = {
    { "kill", SYS_kill },
    { "tkill", SYS_tkill },
    { "tgkill", SYS_tgkill },
    { "rt_sigqueueinfo", SYS_rt_sigqueueinfo },
    { "rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo },
    { "pidfd_send_signal", 424 },
    { "ptrace", SYS_ptrace },
    { "process_vm_readv", SYS_process_vm_readv },
    { "process_vm_writev", SYS_process_vm_writev },
    { "pidfd_getfd", 438 },
    { "prlimit64", SYS_prlimit64 }, /* another process's limits: RLIMIT_CPU kills it */
    /* another process's scheduling, by the same uid alone (nice 19, one CPU, idle I/O) */
    { "setpriority", SYS_setpriority },
    { "sched_setscheduler", SYS_sched_setscheduler },
    { "sched_setparam", SYS_sched_setparam },
    { "sched_setattr", SYS_sched_setattr },
    { "sched_setaffinity", SYS_sched_setaffinity },
    { "ioprio_set", SYS_ioprio_set },
    /* a descriptor's owner, who gets its SIGIO (any signal, by F_SETSIG): fcntl's
     * F_SETOWN and F_SETOWN_EX, ioctl's FIOSETOWN and SIOCSPGRP (by their argument) */
    { "setown", DENY_SETOWN },
    /* a file cut by path or descriptor: what Landlock's TRUNCATE right (ABI 3, 6.2)
     * governs, refused by a filter where the kernel's Landlock is older */
    { "truncate", SYS_truncate },
    { "ftruncate", SYS_ftruncate },
    /* a name removed: what Landlock's REMOVE_FILE and REMOVE_DIR govern, refused by a
     * filter where a launcher leaves them unhandled */
    { "unlink", SYS_unlink },
    { "unlinkat", SYS_unlinkat },
    { "rmdir", SYS_rmdir },
    /* a folder, a symlink, a named pipe or a socket file made: what Landlock's MAKE_DIR,
     * MAKE_SYM, MAKE_FIFO and MAKE_SOCK govern, refused by a filter where one is left
     * unhandled (bind: a unix socket's name made; the filter refuses socket(AF_UNIX)) */
    { "mkdir", SYS_mkdir },
    { "mkdirat", SYS_mkdirat },
    { "symlink", SYS_symlink },
    { "symlinkat", SYS_symlinkat },
    { "mknod", SYS_mknod },
    { "mknodat", SYS_mknodat },
    { "bind", SYS_bind },
    /* a file run, a folder listed: EXECUTE's and READ_DIR's, where one is left unhandled
     * (execve: the launcher's own exec let through, by its name's address) */
    { "execve", SYS_execve },
    { "execveat", SYS_execveat },
    { "getdents", SYS_getdents },
    { "getdents64", SYS_getdents64 },
    /* a regular file made, what MAKE_REG governs: open and openat by their flags (O_CREAT
     * or O_TMPFILE's bit, as libseccomp's SCMP_CMP_MASKED_EQ writes it), creat, and
     * openat2 whole (its flags lie in memory no filter reads) */
    { "open-creat", DENY_OPEN_CREAT },
    { "creat", SYS_creat },
    { "openat2", 437 },
};

long confine_deny_nr(const char *name)
{
    for (size_t i = 0; i < sizeof deny_names / sizeof deny_names[0]; i++)
        if (!strcmp(deny_names[i].name, name))
            return deny_names[i].nr;
    fatal(2, "confine: --deny: unknown call %s (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,"
             " pidfd_send_signal, ptrace, process_vm_readv, process_vm_writev, pidfd_getfd, prlimit64,"
             " setpriority, sched_setscheduler, sched_setparam, sched_setattr, sched_setaffinity,"
             " ioprio_set, setown, truncate, ftruncate, unlink, unlinkat, rmdir, mkdir, mkdirat, symlink,"
             " symlinkat, mknod, mknodat, bind, execve, execveat, getdents, getdents64, open-creat,"
             " creat, openat2)", name);
}
