/* Syscall numbers and kernel constants newer than some C library or UAPI headers
 * (musl's included), in one place: each file gets them through probe.h. The
 * numbers of the newer syscalls are the same on x86_64 and aarch64. */

#ifndef PROBE_COMPAT_H
#define PROBE_COMPAT_H

#include <stdint.h>
#include <sys/syscall.h>
#include <linux/ioctl.h>
#include <linux/seccomp.h>

/* ---- syscall numbers ---------------------------------------------------------- */

#ifndef SYS_execveat
#define SYS_execveat 322
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
/* pidfds (Linux 5.3 and 5.6) */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
#ifndef SYS_file_getattr
#define SYS_file_getattr 468
#endif
#ifndef SYS_file_setattr
#define SYS_file_setattr 469
#endif

/* ---- flags and constants --------------------------------------------------------- */

/* inode flags and generation, by chattr's, xfs_io's and ext4's ioctls (writes.c,
 * heldmeta.c) */
#define PROBE_FS_IOC_GETFLAGS _IOR('f', 1, long)
#define PROBE_FS_IOC_SETFLAGS _IOW('f', 2, long)
#define PROBE_FS_NODUMP_FL 0x00000040
#define PROBE_FS_XFLAG_NODUMP 0x00000080
struct probe_fsxattr { uint32_t xflags, extsize, nextents, projid, cowextsize; unsigned char pad[8]; };
#define PROBE_FS_IOC_FSGETXATTR _IOR('X', 31, struct probe_fsxattr)
#define PROBE_FS_IOC_FSSETXATTR _IOW('X', 32, struct probe_fsxattr)
#define PROBE_FS_IOC_GETVERSION _IOR('v', 1, long)
#define PROBE_FS_IOC_SETVERSION _IOW('v', 2, long)
#define PROBE_EXT4_IOC_SETVERSION _IOW('f', 4, long)
/* file_getattr and file_setattr's struct file_attr (6.17), its first version */
struct probe_file_attr { uint64_t xflags; uint32_t extsize, nextents, projid, cowextsize; };

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0 /* statfs f_type of a proc filesystem */
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* Capabilities: raw capget/capset, so no libcap and no linux/capability.h. */
#ifndef PR_CAPBSET_READ
#define PR_CAPBSET_READ 23
#endif
#ifndef PR_CAPBSET_DROP
#define PR_CAPBSET_DROP 24
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#endif
#ifndef PR_CAP_AMBIENT_IS_SET
#define PR_CAP_AMBIENT_IS_SET 1
#endif
#ifndef PR_CAP_AMBIENT_RAISE
#define PR_CAP_AMBIENT_RAISE 2
#endif

/* Seccomp user notification, newer than some UAPI headers. */
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd { uint64_t id; uint32_t flags, srcfd, newfd, newfd_flags; };
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ID_VALID
#define SECCOMP_IOCTL_NOTIF_ID_VALID _IOW('!', 2, uint64_t)
#endif

/* ---- the i386 entry of an x86_64 kernel (int $0x80) ------------------------------ */

/* Its syscall numbers, for the calls the probe makes through it (i386.c); the kernel's
 * asm/unistd_32.h cannot be included beside the native numbers, so they are spelt
 * here and tests/probe/test_compat.py holds them to that header. */
#define I386_NR_getpid 20
#define I386_NR_chmod 15
#define I386_NR_fchmodat 306
#define I386_NR_chown32 212
#define I386_NR_lchown32 198
#define I386_NR_fchownat 298
#define I386_NR_utime 30
#define I386_NR_utimes 271
#define I386_NR_utimensat 320
#define I386_NR_setxattr 226
#define I386_NR_lsetxattr 227
#define I386_NR_removexattr 235
#define I386_NR_lremovexattr 236
#define I386_NR_ioctl 54
/* the same families' other calls there: 16-bit owners, 32-bit times' successors, the
 * newer *at calls (numbers from 424 on are every architecture's alike) */
#define I386_NR_chown 182
#define I386_NR_lchown 16
#define I386_NR_futimesat 299
#define I386_NR_utimensat_time64 412
#define I386_NR_fchmodat2 452
/* a file cut by path there (writes.c's cut_file) */
#define I386_NR_truncate 92
#define I386_NR_truncate64 193
/* a name removed there (writes.c's remove_name): a file, a folder, by path or *at */
#define I386_NR_unlink 10
#define I386_NR_rmdir 40
#define I386_NR_unlinkat 301
/* a folder or a symlink made by path there (makeways.c; mknod's are below) */
#define I386_NR_mkdir 39
#define I386_NR_mkdirat 296
#define I386_NR_symlink 83
#define I386_NR_symlinkat 304
/* and a descriptor's calls there (a file of a read-only grant, opened for reading) */
#define I386_NR_fchmod 94
#define I386_NR_fchown32 207
#define I386_NR_fchown 95 /* its 16-bit ids' */
#define I386_NR_fsetxattr 228
#define I386_NR_fremovexattr 237
#define I386_NR_bpf 357 /* kstate.c: a pinned object got there */
#define I386_NR_io_uring_setup 425 /* uring.c: a ring set up and entered there */
#define I386_NR_io_uring_enter 426
#define I386_NR_io_uring_register 427
#define I386_NR_setxattrat 463
#define I386_NR_removexattrat 466
#define I386_NR_file_setattr 469
#define I386_NR_capset 185 /* creds.c: capset and prctl (ambient capabilities) */
#define I386_NR_prctl 172
/* the calls that set an id (creds.c): the 32-bit ids' and the old 16-bit ones */
#define I386_NR_setuid32 213
#define I386_NR_setgid32 214
#define I386_NR_setreuid32 203
#define I386_NR_setregid32 204
#define I386_NR_setresuid32 208
#define I386_NR_setresgid32 210
#define I386_NR_setfsuid32 215
#define I386_NR_setfsgid32 216
#define I386_NR_setgroups32 206
#define I386_NR_setuid 23
#define I386_NR_setgid 46
#define I386_NR_setreuid 70
#define I386_NR_setregid 71
#define I386_NR_setresuid 164
#define I386_NR_setresgid 170
#define I386_NR_setfsuid 138
#define I386_NR_setfsgid 139
#define I386_NR_setgroups 81
#define I386_NR_clone3 435 /* kstate.c: a child born into a cgroup */
/* procways.c: other processes' memory and signals (procs.c's calls) there */
#define I386_NR_ptrace 26
#define I386_NR_process_vm_readv 347
#define I386_NR_process_vm_writev 348
#define I386_NR_kill 37
#define I386_NR_tkill 238
#define I386_NR_tgkill 270
#define I386_NR_rt_sigqueueinfo 178
#define I386_NR_rt_tgsigqueueinfo 335
/* procnums.c: another process's descriptors by its number (alike on every ABI) */
#define I386_NR_pidfd_open 434
#define I386_NR_pidfd_getfd 438
/* procsched.c: another process's scheduling */
#define I386_NR_setpriority 97
#define I386_NR_sched_setscheduler 156
#define I386_NR_sched_setattr 351
#define I386_NR_sched_setaffinity 241
#define I386_NR_ioprio_set 289
/* procways.c: a host process's limits, and a descriptor's owner, there */
#define I386_NR_prlimit64 340
#define I386_NR_fcntl 55
#define I386_NR_fcntl64 221
#define I386_NR_read 3
#define I386_NR_write 4
#define I386_NR_socketcall 102
#define I386_NR_socket 359
#define I386_NR_bind 361 /* makeways.c: a unix socket's name made there */
#define I386_NR_connect 362
#define I386_NR_sendto 369
#define I386_NR_sendmsg 370
#define I386_SYS_SOCKET 1  /* socketcall's calls (linux/net.h) */
#define I386_SYS_CONNECT 3
#define I386_SYS_BIND 2
#define I386_SYS_SENDTO 11
#define I386_SYS_SENDMSG 16
#define I386_NR_sendmmsg 345 /* outside the socket calls' block (359-373) */
#define I386_SYS_SENDMMSG 20
#define I386_SYS_SEND 9 /* socketcall's alone: no number of its own */
#define I386_NR_writev 146 /* the other calls that put bytes on a connected socket */
#define I386_NR_pwritev2 379
#define I386_NR_sendfile 187
#define I386_NR_sendfile64 239
#define I386_NR_splice 313
/* root.c and mountways.c: mount(2), the calls around it and the privileged ones there */
#define I386_NR_mount 21
#define I386_NR_umount2 52
#define I386_NR_unshare 310
#define I386_NR_reboot 88
#define I386_NR_kexec_load 283
#define I386_NR_adjtimex 124
#define I386_NR_clock_adjtime 343 /* the clock's other setters there (rootways.c) */
#define I386_NR_clock_adjtime64 405
#define I386_NR_settimeofday 79
#define I386_NR_swapon 87
#define I386_NR_acct 51
#define I386_NR_syslog 103
#define I386_NR_sethostname 74
#define I386_NR_ioperm 101
#define I386_NR_perf_event_open 336
#define I386_NR_name_to_handle_at 341
#define I386_NR_open_by_handle_at 342
#define I386_NR_mknod 14
#define I386_NR_mknodat 297
#define I386_NR_chroot 61 /* stands.c: a second chroot there */
#define I386_NR_setns 346 /* nsenter.c: another namespace entered there */
/* ipc386.c: the IPC attempts there: System V's own calls (from 5.1), its older
 * multiplexer and its call numbers (linux/ipc.h), the POSIX queue's calls */
#define I386_NR_ipc 117
#define I386_NR_msgget 399
#define I386_NR_msgsnd 400
#define I386_NR_shmget 395
#define I386_NR_shmat 397
#define I386_NR_mq_open 277
#define I386_NR_mq_timedsend 279
#define I386_NR_mq_timedsend_time64 418
#define I386_IPC_MSGSND 11
#define I386_IPC_MSGGET 13
#define I386_IPC_SHMAT 21
#define I386_IPC_SHMGET 23
/* exec.c and writes.c: a file run there (EXECUTE) and a folder listed there (READ_DIR),
 * where a deny-list refuses x86_64's execve and execveat, getdents and getdents64 */
#define I386_NR_execve 11
#define I386_NR_execveat 358
#define I386_NR_getdents 141
#define I386_NR_getdents64 220
/* makeways.c: a regular file made there (open, openat, creat and openat2 with O_CREAT) */
#define I386_NR_open 5
#define I386_NR_creat 8
#define I386_NR_openat 295
#define I386_NR_openat2 437

/* Ways into a TCP connection (linux/socket.h, linux/tcp.h, linux/in.h) */
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef TCP_INFO
#define TCP_INFO 11 /* struct tcp_info: its first byte the socket's state */
#endif
#define PROBE_TCP_SYN_SENT 2 /* that state's value while a connection is under way */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14: the network namespace a socket belongs to */
#endif

/* The architecture a seccomp filter sees in seccomp_data.arch. */
#if defined(__x86_64__)
#define PROBE_AUDIT_ARCH 0xc000003eU /* AUDIT_ARCH_X86_64 */
#elif defined(__aarch64__)
#define PROBE_AUDIT_ARCH 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#else
#error "unsupported architecture (add its AUDIT_ARCH_* value)"
#endif

#endif
