/* The i386 entry (int $0x80) and the ways through it, shared by the files that try
 * an operation there where x86_64's call is refused: included by probe.h after the
 * types it uses (Addr). */

#ifndef PROBE_WAYS386_H
#define PROBE_WAYS386_H

/* One call through another ABI's entry: its number there and up to six arguments,
 * each a value, or (with `len`) bytes copied below 4 GiB, where a 32-bit entry can
 * address them. */
struct compat_arg { long v; const void *p; size_t len; };
#define CV(x) { .v = (long)(x) }          /* a value */
#define CP(ptr, n) { .p = (ptr), .len = (n) } /* n bytes at ptr, copied low */
struct compat_call { const char *name; long nr; struct compat_arg a[6]; };
void compat_tried(const struct compat_call *calls, int n); /* i386.c */
/* The same, a call answering errno `done_as` counted as done: an errno that proves the
 * change allowed (ENODATA: an absent extended attribute's replace, refused only once
 * setting one is allowed). */
void compat_tried_as(const struct compat_call *calls, int n, int done_as);
/* i386.c: a call through the entry (-errno on failure), and is the entry here. */
long int80(long nr, const long v[6]);
int i386_here(void);
/* creds.c: call nr through the entry in a child (a filter may kill it; what it wins
 * stays the child's), its pointer arguments already below 4 GiB; then `gained(arg)` in
 * the child says whether it won something: 1 gained, 0 not (a SIGSYS kill is a
 * refusal), -1 where the child died without an answer. x86_64 only. */
int i386_gains(long nr, const long v[6], int (*gained)(void *), void *arg);
/* procways.c: ptrace, process_vm_readv and _writev, pidfd_getfd, and (`signals`: where
 * the check stands in the host's PID namespace) signal 0 by each call that signals by number and
 * prlimit64's RLIMIT_CPU read and written back, on each of `pids` through the i386
 * entry: 0 if one was allowed, named in `how`; -1 if none (or no such entry). */
int i386_reach(const int *pids, int k, int signals, char *how, size_t n);
/* procways.c: a descriptor's owner set to each of harness's witnesses (a host process of
 * uid 65534, or the workload's own, that blocks SIGIO and SIGURG) by each way (each
 * refused as a filter refuses, again through the i386 entry), and I/O made: 0 if the
 * signal is pending there, the way named in `how`; -1 if not (or no witness). */
int sigio_reach(char *how, size_t n);
/* procways.c: harness's witness, its pending signals in *pnd: its pid, or 0 if none. */
int witness_pid(unsigned long long *pnd);
/* procways.c: harness's witness of the workload's own host uid (*uid), where that is not
 * 65534 (envelope.sh starts one of the policy's run_as_user, and of each uid the
 * sandbox's processes run as): its pid, or 0 if none. */
int own_witness(unsigned *uid, unsigned long long *pnd);
/* procways.c: harness's witnesses in view (65534's, then the workload's own uid's), at
 * most 2: pids in w[], uids in uid[], pending sets in pnd[]; how many. */
int witnesses(int *w, unsigned *uid, unsigned long long *pnd);
/* procsched.c: each witness's nice, scheduling policy, CPU mask, I/O priority and
 * oom_score_adj, each changed by one step, read back and restored, by x86_64's calls,
 * then the i386 entry's: 0 if one was changed, the way named in `how`; -1 if none. */
int sched_reach(char *how, size_t n);
/* rootways.c: root.c's attempts through the i386 entry, where x86_64's are refused: a
 * kernel operation by the name root.c gives it (1 allowed, *via naming the entry's other
 * call that was, where not the same call; 0 refused; -1 no such way), a file handle
 * made and opened below mount point mp, a node made (0, or -1 with errno). */
int kernel_i386(const char *name, const char **via);
int handle_i386(const char *mp);
int mknod_i386(const char *path, unsigned mode, unsigned dev);
/* rootways.c: the root folder of the ext2/3/4 filesystem mounted at mp, by a handle made
 * up for its inode 2 and opened through the i386 entry (routes.c): a descriptor, or -1. */
int handle_root_i386(const char *mp);
/* i386.c: io_uring_setup (`params` copied below 4 GiB and back) and io_uring_enter
 * through the i386 entry, where it answers both (asked once, in a child): the fd and
 * the count, or -1 with errno (ENOSYS where there is no such entry). */
int i386_ring_setup(unsigned entries, void *params, size_t len);
long i386_ring_enter(int fd, unsigned n, unsigned wait, unsigned flags);
/* i386net.c: the sweep's exchange through the i386 entry alone, a `type` socket to
 * dst (`fastopen`: TCP made by Fast Open's first send); ENOSYS where none. */
int i386_exchange(const Addr *dst, int type, int fastopen, const char *msg, char *reply, size_t cap,
                  int *src_port, const char **step);
/* i386net.c: a socket made through the i386 entry alone, by socket's own number, then by
 * socketcall (-1 with errno; ENOSYS where there is no such entry); *step the way. */
int i386_socket(int family, int type, int proto, const char **step);
/* i386net.c: connect(2) on any socket through the i386 entry alone (its own number, then
 * socketcall); *step the way. */
int i386_connect(int fd, const struct sockaddr *sa, socklen_t len, const char **step);
int i386_bind(int fd, const struct sockaddr *sa, socklen_t len, const char **step); /* the same, bind(2) */
/* i386net.c: the bytes on a connected socket (a held one) through the i386 entry alone,
 * by each of its calls that sends them in turn, each in a child: n, or -1 with errno
 * (ENOSYS where there is no such entry); *step the way. */
ssize_t i386_send(int fd, const void *p, size_t n, const char **step);
/* i386net.c: a datagram with its destination (`to`, `tolen` bytes) through the i386
 * entry alone: sendto, sendmsg, then sendmmsg, each by its own number, then socketcall,
 * each in a child (a held unconnected socket's); without `to`, as i386_send. */
ssize_t i386_send_to(int fd, const void *p, size_t n, const struct sockaddr *to, socklen_t tolen,
                     const char **step);

/* ipc386.c: ipc.c's attempts through the i386 entry, where x86_64's calls were refused
 * as a filter refuses: the line to the System V queue under `key`, into its segment
 * (`fill` claims and fills a slot of it: 0, or -1 where every slot is taken: -EBUSY),
 * to the POSIX queue `name` (on `fd` where one is already open, else by mq_open). Its
 * own calls, then the ipc multiplexer (mq_timedsend_time64 after mq_timedsend), each in
 * a child: 0 if one did it, else the last way's -errno (-EAGAIN or -ETIMEDOUT: full);
 * *way names it. IPC386_NONE where there is no such entry: nothing tried. */
#define IPC386_NONE 1L
long ipc386_msg(key_t key, const char *text, const char **way);
long ipc386_shm(key_t key, int (*fill)(void *seg), const char **way);
long ipc386_mq(const char *name, int fd, const char *text, const char **way);

/* i386.c (exec.c's last ways): run `path` through the entry's execve, or (by_handle)
 * execveat on an O_PATH handle with AT_EMPTY_PATH, its name, argv and envp copied below
 * 4 GiB as 32-bit pointers, as a 32-bit program passes them. Nothing else is asked of
 * the caller: a 64-bit program may make the call, and the kernel loads the file by its
 * own ELF header (the probe's static copy as ELF64). Returns only on failure, errno set
 * (ENOSYS where there is no such entry). */
void exec_i386(const char *path, char *const argv[], char *const envp[], int by_handle);
/* i386.c: the next entries of the folder open at fd through the entry's getdents64
 * (`wide`; the layout of x86_64's) or getdents (the 32-bit layout: 32-bit inode and
 * offset, the name at byte 10), at most cap (<= 32768) bytes into buf, in a child: the
 * count, 0 at the end, or -1 with errno (EPERM where a filter killed it, ENOSYS where
 * there is no such entry). The folder's position moves, as by x86_64's call. */
long i386_getdents(int fd, int wide, void *buf, size_t cap);

#endif
