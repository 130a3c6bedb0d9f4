/*
 * harness-probe: a small static binary that checks sandbox security properties
 * where it runs, by really exercising them. The protocol is specified in
 * docs/probe-protocol.md.
 *
 *   probe run [OPTIONS] SCENARIO...   checks; JSON lines on stdout
 *   probe canary [OPTIONS]            TCP and DNS canary that answers with the nonce
 *   probe whoami                      credentials (the setuid/fcap helper's job)
 *   probe version
 *   probe init                        PID 1 of a microVM guest: runs `probe run`, reboots
 *
 * Protocol 1: JSON lines on stdout, each line written with a single write(2).
 *   {"type":"start","probe":"harness-probe","protocol":1,"pid":N,"uid":N,"euid":N,"gid":N}
 *   {"type":"fact","scenario":S,"id":ID,"status":ST,...,"elapsed_ms":F}   scenario mechanisms
 *   {"type":"check","scenario":S,"id":ID,"kind":K,"outcome":O,...,"elapsed_ms":F,"evidence":{..}}
 *   {"type":"info","scenario":S,"id":ID,...}   not counted by "done"
 *   {"type":"done","count":N,"digest":HEX}   only once every check has finished
 * With --cell-nonce X, start and done also carry "cell_nonce":X, and the digest
 * is the sha256 of X, a newline, and every line printed between start and done
 * (each with its newline): output replayed from another cell does not match.
 *   {"type":"fatal","detail":D}   bad usage (exit 2) or overall deadline (exit 3)
 * status: "ok" (with "value"), "unavailable" (the kernel refused: "errno",
 * "errno_num", "detail"), "error" (the measurement itself failed: "detail",
 * maybe "errno"), "timeout" (the check overran and was SIGKILLed).
 * outcome (kind "attempt"): blocked, escaped, succeeded, error, timeout;
 * outcome (kind "control"): ok, failed, error, timeout.
 *
 * Every check runs in a forked child, in its own process group, and writes one
 * JSON fragment ("status":... or "outcome":...) into a pipe. A check may thus
 * restrict itself irreversibly (no_new_privs, Landlock, seccomp, dropping
 * privileges), crash or hang without affecting the parent or later checks: the
 * parent only waits with a timeout, kills the whole group and prints the line.
 * The parent never restricts itself. A light row (checks.def: plain syscalls that
 * leave nothing behind in the process) shares one child with the light rows next
 * to it, one after another, to spare a fork per check; each keeps its own line,
 * time and time limit, and one that crashes or hangs ends only itself.
 *
 * The sources, one concern each (named in each file's first line): this header
 * (what every file shares); compat.h (syscall numbers and kernel constants older
 * headers lack); checks.def (the check table, one CHECK() row per check, in output
 * order); sweep.def (the egress sweep's ids and port lists); fdkinds.def (every
 * kind of descriptor, read by fdkinds.c and the catalogue); main.c (arguments, the
 * table, the check loop); runner.c (a check in a forked child, with its time
 * limit); output.c (JSON lines, the outcome enum's words, a check child's results);
 * sha256.c; net.c and dns.c (helpers of the network checks and the canary).
 * The checks, one file per operation family:
 *   mechanisms   landlock.c, seccomp.c, kernel.c (its facts; ev_kernel)
 *   egress       egress.c (the named attempts); the sweep: attempt.c (its engine),
 *                sendways.c (each way its bytes go on a socket), sockways.c (each
 *                way a socket is asked for, for every egress check), sweep.c (what it
 *                tries), heldsocks.c (the sockets held at the start), hostunix.c
 *                (unix listeners outside), firewall.c (the sandbox's own nftables,
 *                opened), ipc.c (SysV and POSIX IPC), uring.c
 *                (io_uring: the one ring, the sweep's exchange, the file
 *                operations, a ring held), i386net.c (the exchange through the i386 entry)
 *   filesystem   filesystem.c (by path), writes.c (the catalogue's write kinds), i386.c (the
 *                same calls through the i386 entry), makeways.c (the make kinds' other
 *                ways: the i386 entry, io_uring), exec.c, grants.c (read-only grants),
 *                held.c (descriptors held at start), heldmeta.c (a held file's metadata, by
 *                each way), heldreaders.c (a held pipe's reader, the controlling terminal's
 *                session), fdkinds.c (what kind each is), stands.c (the working folder, a
 *                second chroot), mounts.c (the mount table), routes.c (every route to every
 *                sentinel), writereach.c (write reach; writereach.h), writelist.c (its pass
 *                over the host's list of every folder), procs.c (other processes)
 *   privilege    creds.c (credentials and raising them), securebits.c (those left
 *                unlocked, cleared), kstate.c (host kernel state open for writing),
 *                cgmove.c (a process born into a host cgroup, for kstate.c), root.c
 *                (what a root workload would try), procs.c, procways.c (other
 *                processes through the i386 entry), unpriv.c (the unprivileged uid)
 *   attribution.c, fence.c (controller-loss)
 * The other modes: canary.c with canary_net.c and capture.c (mode "canary");
 * init.c (mode "init"); confine.c (mode "confine", a Landlock launcher for the
 * co-located references); jail.c (mode "jail", a chroot jail for the chroot
 * reference and its mutants); landlock.h (its UAPI, shared).
 *
 * New checks: write a chk_* function in the file of its operation family and add
 * its row to checks.def, which also declares it.
 */

#ifndef PROBE_H
#define PROBE_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <net/route.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/ip_icmp.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/auxv.h>
#include <linux/filter.h>
#include <linux/ioctl.h>
#include <linux/seccomp.h>
#include "compat.h"

#define PROBE_NAME "harness-probe"
#define PROTOCOL 1

/* Capabilities: raw capget/capset, so no libcap and no linux/capability.h. */
#define PROBE_CAP_VERSION_3 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */
#define PROBE_CAP_NET_RAW 13
#define PROBE_CAP_SYS_ADMIN 21
struct cap_header { uint32_t version; int pid; };
struct cap_data { uint32_t effective, permitted, inheritable; };

/* A row of the check table; the kind decides the line type (fact, check, info).
 * light: ROW_LIGHT, the row may share its child with the light rows next to it;
 * ROW_CONCURRENT, its child runs at the same time as the concurrent rows next to
 * it (checks.def's _NET; at most MAX_CONCURRENT in a run). */
enum { K_FACT, K_ATTEMPT, K_CONTROL, K_INFO, K_SWEEP };
enum { ROW_LIGHT = 1, ROW_CONCURRENT = 2 };
#define MAX_CONCURRENT 16
struct check { const char *scenario, *id; void (*fn)(void); int kind, light; };
#define SLOW_ROW_FACTOR 8
int row_limit_ms(const struct check *c); /* runner.c */

/* Every check function, declared from the table. */
#define CHECK(scenario, id, fn, kind) void fn(void);
#include "checks.def"
#undef CHECK

/* ---- held.c: the descriptors held at start (main calls it first) ----------- */

void fds_at_start(void);
/* The descriptors held at start, at any number: how many (their numbers in *fds),
 * and in *more how many beyond those it keeps. */
int held_list(const int **fds, int *more);
/* The mount a held descriptor lies on: its index in g_mnt, -1 where the sandbox's own
 * table does not show it (read_mounts first). */
int held_mount(int fd);
/* A folder's or file's row of held_files (its label, then what it is and reaches), and
 * a folder's ancestors by ".." each a row (label/.., ...): fs-inherited-fds', and
 * stands.c's for the working folder and pid 1's root (their metadata untouched). */
void held_row(const char *label, int fd, const struct stat *st, const char *opened, int have_mounts);
void held_climb(const char *base, int n, const struct stat *st, int have_mounts);
/* heldreaders.c: the processes outside a held descriptor feeds (fs-inherited-fds) */
int held_pipe_outside(int fd);
void held_ctty(int (*mount)(int fd));

/* ---- main.c: options ------------------------------------------------------- */

extern int g_check_timeout_ms; /* --check-timeout-ms */
extern const char *g_argv0;     /* how the probe was started: its own file for a check */
void self_path(char *out, size_t cap); /* the probe's own executable */
extern unsigned g_unpriv_uid;   /* --unpriv-uid, parsed: whom the unprivileged attempts run as */

/* Options of `probe run`; a check that needs a missing one reports "error". */
struct run_options {
    const char *tag, *canary_tcp, *resolver, *alt_dns, *doh, *denied_name, *nonce,
        *allowed_dir, *sentinel, *token, *outside_dir, *overwrite, *rename, *planted_link,
        *setuid_helper, *fcap_helper, *unpriv_uid, *allowed_tcp, *canary4, *canary6, *high_port,
        *resolver_ranges, *more_sentinels, *cell_nonce, *reach_targets, *setgid_helper,
        *other_binary, *barrier, *canary_unix, *host4, *host6, *granted, *granted_token,
        *canary_sysv, *canary_mq, *write_targets, *write_skip, *write_named, *walk_folders, *write_dirs, *block_devs, *leased, *decoys, *inh_helper,
        *host_unix, *host_ns, *host_devs, *unix_granted, *link_grants, *meta4, *meta6, *elsewhere4, *elsewhere6, *own4, *own6, *linger, *host_tcp_skip, *host_tcp, *host_udp;
};
extern struct run_options o;
const char *need(const char **opt);

/* ---- runner.c: the check now running, and what its child shares ------------ */

extern const struct check *g_cur;        /* the check now running (parent and child) */
extern int g_resfd;                      /* in a check child: write end of the result pipe */
extern pid_t g_target;                   /* in a check child: a grandchild to kill on exit */
extern void (*g_cleanup)(void);          /* in a check child: run before the result is sent */
extern volatile sig_atomic_t g_child;    /* in the parent: the check child now running */
extern volatile sig_atomic_t g_kids[MAX_CONCURRENT]; /* in the parent: concurrent rows' children */

int run_rows(const struct check *cs, size_t n);
__attribute__((noreturn)) void row_done(void); /* a row's result is sent: the next row, or exit */
double check_end(void);
/* Run a program in a grandchild (g_target), its stdout into out (NUL-terminated):
 * `path` itself, or the file an O_PATH handle to it opens when by_handle; envp NULL
 * for this process's environment. Reads until the check's deadline, or a first line
 * when one_line; then kills and reaps it. Returns its wait status; when the exec
 * failed, out holds {"exec_errno":N}. by_handle | RUN_I386: the same calls made
 * through the i386 entry (exec_i386). */
#define RUN_I386 2
int run_program(const char *path, char *const argv[], char *const envp[], int by_handle,
                int one_line, char *out, size_t size);
int wait_io(int fd, short events, double end);
ssize_t read_file(const char *path, char *buf, size_t cap);
FILE *proc_net_fopen(const char *name);                   /* /proc/net/NAME, or /proc/self/net/NAME */
ssize_t proc_net_read(const char *name, char *buf, size_t cap);
int killed_on(void (*fn)(void *), void *arg); /* fn(arg) in a child: 1 if SIGSYS killed it */
int killed_on_call(long nr, long a, long b, long c); /* the same for syscall(nr, a, b, c) */
struct handle_open { int mfd; struct file_handle *fh; }; /* root.c: open_by_handle_at's, */
void handle_open_call(void *arg);                          /* for killed_on */
int handle_name_killed(void); /* root.c: a filter kills on name_to_handle_at */

/* ---- output.c: lines, and a check child's results --------------------------- */

/* Big enough for any line we build, the mount table included. A check child is
 * its result pipe's only writer and the parent reads to the newline, so a result
 * longer than PIPE_BUF still arrives whole. */
typedef struct { char s[16384]; size_t n; } Buf;

/* What a line's "status" (a fact) or "outcome" (a check) says; outcome_word() gives
 * the word printed. A fact: OK, UNAVAILABLE, ERROR, TIMEOUT. A check: BLOCKED,
 * ESCAPED, SUCCEEDED (an attempt), OK, FAILED (a control), ERROR, TIMEOUT. */
enum outcome { OC_OK, OC_UNAVAILABLE, OC_ERROR, OC_TIMEOUT, OC_BLOCKED, OC_ESCAPED, OC_SUCCEEDED, OC_FAILED };
const char *outcome_word(enum outcome oc);

__attribute__((format(printf, 2, 3)))
void bput(Buf *b, const char *fmt, ...);
void bstr(Buf *b, const char *str);
void bkv(Buf *b, const char *key, const char *val);
void write_all(int fd, const char *s, size_t n);
void emit(Buf *b);
__attribute__((format(printf, 2, 3), noreturn))
void fatal(int code, const char *fmt, ...);
double now_ms(void);
const char *errname(int e);
void frag_errno(Buf *b, int e);
int is_check_kind(int kind);
void frag_status(Buf *b, enum outcome status, int e, const char *detail);

extern const char *g_fatal_type; /* the canary says "event" */
extern Buf g_ev;                 /* the check's evidence: "key":value,... */
void ev_int(const char *key, long long v);
int route_dir(int dirfd, const char *whose); /* held.c: climb to every sentinel from a folder */
void cwd_at_start(void);                     /* stands.c */
void stand_rows(int fd, const char *label);  /* stands.c: a folder it stands in, as held_files rows */
void other_folder(const char *path);         /* stands.c: another process's folder, kept once */
int other_rows(void);                        /* stands.c: those folders as held_files rows */
/* procnums.c: whether this process stands in the host's PID namespace (told without
 * /proc), and every process there by number, its descriptors taken by pidfd_getfd (the
 * i386 entry's where x86_64's is refused): 0 if one gave the token, named in `how`; -2
 * where too many were refused to ask each there. */
int init_pid_ns_by_number(void);
int numbered_fds(char *how, size_t n, int *pids, int *e);
/* procnums.c: each process of the host's PID namespace by number but this check's own
 * (its session, its ancestors), asked by `touch` (procs.c's ways) and then the i386
 * entry's: 0 if one was reached, named in `how`; the processes asked in *seen. */
int numbered_reach(int (*touch)(int, char *, size_t), int *seen, int *e, char *how, size_t n);
int held_rows_cut(void);                     /* held.c: rows left out of held_files */
/* writes.c: every way to cut a file, and to change its mode, owner, times, extended
 * attributes, inode flags */
void cut_file(const char *path);
void meta_chmod(const char *path);
void meta_chown(const char *path);
void meta_utime(const char *path);
void meta_xattr(const char *path);
void meta_chattr(const char *path);
void ev_str(const char *key, const char *v);
__attribute__((noreturn)) void send_result(Buf *b);
__attribute__((noreturn)) void ok_int(long long v);
__attribute__((noreturn)) void ok_bool(int v, const char *detail);
__attribute__((format(printf, 1, 2), noreturn))
void ok_false(const char *fmt, ...);
__attribute__((noreturn)) void ok_str(const char *v);
__attribute__((noreturn)) void unavail(const char *call, int e);
__attribute__((format(printf, 2, 3), noreturn))
void fail(int e, const char *fmt, ...);
__attribute__((format(printf, 3, 4), noreturn))
void outcome(enum outcome oc, int e, const char *fmt, ...);

/* ---- sha256.c ---------------------------------------------------------------- */

typedef struct { uint32_t h[8]; uint64_t len; unsigned char blk[64]; size_t n; } Sha256;
void sha_init(Sha256 *c);
void sha_update(Sha256 *c, const void *data, size_t len);
void sha_hex(Sha256 *c, char *out);

/* While set (the parent of `probe run`, between its start and done lines), every
 * printed line goes into the digest that the done line carries. */
extern Sha256 g_digest;
extern int g_digesting;

/* ---- net.c ------------------------------------------------------------------ */

typedef struct sockaddr_storage Addr;
void need_addr(const char **opt, Addr *a); /* in main.c, beside need() */
socklen_t addr_len(const Addr *a);
unsigned addr_port(const Addr *a);
void addr_set_port(Addr *a, uint16_t port);
int allowed_port(void); /* net.c: --allowed-tcp's port, or 0 */
int parse_addr(const char *s, Addr *a);
void fmt_addr(const Addr *a, char *out, size_t cap);
double net_end(void);
int connect_to(const Addr *a, int type, double end);
int connect_fd(int fd, const Addr *a, double end); /* net.c: a socket it holds */
int send_all(int fd, const void *p, size_t n, double end);
size_t recv_until(int fd, void *buf, size_t want, int line, double end);
__attribute__((noreturn)) void tcp_check(const Addr *a);
int net_ifup(int sock, const char *ifname, const char *addr, int prefix);
int net_default_route(int sock, const char *gw);

/* ---- dns.c ------------------------------------------------------------------ */

enum { DNS_A = 1, DNS_TXT = 16, DNS_AAAA = 28 };
struct dns_ans { int rcode, ancount, has_a; struct in_addr a; char txt[256]; };
enum { DQ_ENCODE, DQ_CONNECT, DQ_SEND, DQ_RECV, DQ_PARSE };
extern const char *const dq_step[];
long dns_get_name(const unsigned char *m, size_t len, size_t off, char *out, size_t cap);
int dns_build(unsigned char *q, size_t cap, uint16_t id, const char *name, int qtype);
int dns_parse(const unsigned char *m, size_t len, uint16_t id, struct dns_ans *r);
int dns_query(const Addr *srv, int tcp, const char *name, int qtype, struct dns_ans *r, int *step);

/* ---- the scenarios' files: what another file uses --------------------------- */

void set_nnp(void); /* landlock.c: no_new_privs, or the fact unavailable (seccomp.c's too) */
__attribute__((noreturn)) void tcp_to(const char **opt); /* egress.c; attribution.c's too */
int canary_exchange(const Addr *canary, double end); /* egress.c: the nonce came back */
extern char g_cx_way[200]; /* egress.c: the way its last socket took (sock_way) */
int maybe_host_netns(void); /* egress.c: never change what may be the host's network */
int netns_stat(struct stat *st); /* net.c: this process's network namespace, /proc or not */
FILE *proc_net_diag(const char *name); /* net.c: a /proc/net table from sock_diag */
#include "sweep.h" /* the egress sweep's attempts and its sockets' ways */

/* uring.c: a ring the workload holds (`ring`): `path` opened as the credentials
 * registered under `personality` (a descriptor, or -errno); the personalities
 * registered on it (their count, at most `max`, found by a NOP as each of 1 to 65535);
 * how many files are registered on it (its fdinfo's UserFiles, -1 unknown), and one
 * of them installed as a descriptor of the holder's (IORING_OP_FIXED_FD_INSTALL).
 * -EBADE with *why where the ring cannot be driven (a layout it does not know, a poll
 * thread of another process): never a ring that reaches nothing; RING_REFUSED where
 * the kernel refuses the holder io_uring_enter on it (uring_held_refusal's errno). */
#define RING_REFUSED (-EKEYREJECTED)
int uring_held_refusal(void);
int uring_held_open(int ring, const char *path, unsigned personality, const char **why);
int uring_held_personalities(int ring, unsigned *ids, int max, const char **why);
int uring_held_files(int ring);
int uring_held_install(int ring, unsigned slot, const char **why);
struct io_uring_sqe;
/* uring.c: one request on a held ring, waited for: its result, -EBADE (*why) where it
 * cannot be driven, RING_REFUSED where io_uring_enter is refused. */
int uring_held_do(int ring, struct io_uring_sqe *req, const char **why);
/* uring.c: one request on a ring of its own, the ring closed after: its result, or -1
 * with errno and *step the call that failed (`name`: the request's). */
int uring_one(const struct io_uring_sqe *req, const char *name, const char **step);
/* uringheld.c: IORING_OP_SETXATTR of `path` by each io_uring ring held at start, as the
 * workload itself (fs-io-uring, where no ring can be set up): returns only where none
 * set it (errno kept). */
void held_rings_setxattr(const char *path, const char *value);
extern int g_ring_i386_may; /* uring.c: rings may be set up through the i386 entry */
/* makeways.c: a folder, a symlink, a named pipe or a socket file made by the ways
 * besides x86_64's calls (the i386 entry, io_uring), each reported to tried(): for a
 * make check whose native calls were all refused as a filter refuses. */
int refused_as_filter(void);
void mkdir_other_ways(const char *path);
void symlink_other_ways(const char *target, const char *path);
void mknod_other_ways(const char *path, unsigned mode);
void create_other_ways(const char *path); /* a regular file (fs-create-outside) */
void bind_other_ways(const struct sockaddr_un *a);

/* fdkinds.c: what a held descriptor is, one kind per row of fdkinds.def */
enum fd_kind {
#define FDKIND(ident, name, route) FK_##ident,
#include "fdkinds.def"
#undef FDKIND
    FK_UNKNOWN
};
enum fd_route { FR_TRIED, FR_OWN, FR_UNJUDGED };
enum fd_kind fd_kind(int fd, char *link, size_t n);
const char *fd_kind_name(enum fd_kind k);
enum fd_route fd_kind_route(enum fd_kind k);

/* writes.c: a path in the outside folder (exec.c's, uring.c's); the calls a kind is made of, tried in turn (grants.c's, heldmeta.c's). */
/* The filesystem targets, one per row of targets.def (T_chmod_me, ...): each name
 * is written there alone; a MADE target is the prefix of the name its check makes. */
enum target_kind { TK_FILE, TK_DIR, TK_COPY, TK_MADE };
enum target {
#define TARGET(ident, name, kind, where, check, fact) T_##ident,
#include "targets.def"
#undef TARGET
    T_COUNT
};
extern const char *const target_name[T_COUNT];
const char *outside(enum target t); /* <outside>/<name>, a MADE target's <name>-<tag> */
void tried(const char *call, long rc);
int tried_any(void); /* a change of the ones tried went through */
__attribute__((noreturn)) void verdict(const char *what, const char *path);
void writes_reset(void); /* before each row in a child: no state of the row before */
const char *tried_calls(void);       /* what went through since the reset, "" for none */
/* writes.c: a file (or with AT_REMOVEDIR, a folder) removed by each way there is: x86_64's
 * calls, then where refused as a filter refuses, the i386 entry's and io_uring's. */
void remove_name(const char *path, int flags);
long ioctl_tried(const char *name, int fd, unsigned long req, void *arg); /* widened where refused */
const char *meta_unchanged(int fd); /* heldmeta.c: a held file's metadata, each set to what it is */
#include "ways386.h" /* the i386 entry: calls through int $0x80, and the ways that use it */

/* filesystem.c: what a file check read, and whether it holds the token (routes.c's too). */
extern char g_file[65536];
int has_token(const char *buf, ssize_t n);

/* mounts.c: the mount table, also read by root.c's attempts. */
struct mnt { int id; unsigned maj, min; char *root, *mp, *type, *opts; }; /* opts: super options, escaped */
extern struct mnt g_mnt[];
extern int g_nmnt;
int read_mounts(void);
/* The host's listed targets below a mount (mounts.c); see each_target there. */
typedef int (*target_fn)(const char *path, const char *rest, const struct stat *st, void *ctx);
int each_target(const struct mnt *m, const char *list, target_fn try, void *ctx);
int on_mount(const char *path, const struct mnt *m);
int write_back(const char *p); /* root.c: a kernel value written back as read; 0, or the errno */
int agent_by_fsmount(const char *opts); /* mountways.c: a cgroup v1 release_agent by fsmount */
void ev_kernel(void);
void read_boot_id(char *id, size_t cap); /* kernel.c: "" when unreadable or untrusted */
int kernel_uname(struct utsname *u);     /* kernel.c: uname(2), a UNAME26 personality dropped */

void put_creds(Buf *b, int full); /* creds.c; also `probe whoami` */
int caps_get(struct cap_data d[2]); /* creds.c: this process's capability sets */
char *proc_stat_after_comm(int pid, char *buf, size_t n); /* procs.c: /proc/<pid>/stat past its comm */
int bpf_obj_get(const char *path, int *by_i386); /* bpfobj.c: 0 where it opens read-write */
/* cgmove.c: a process born into a host cgroup of the unified hierarchy by clone3, tried
 * in each folder kstate.c's walk of a cgroup2 mount passes (begin, try each, end). */
#define CGMOVE_MAX 32 /* moves tried, at most: more leave the check an error */
extern struct cgmoves { int moved, moves, over, refused; char where[4096]; } g_cgmoves;
void cgmove_begin(const struct mnt *m);
void cgmove_try(const char *dir);
void cgmove_end(void);
uint64_t cap64(uint32_t lo, uint32_t hi);
int initial_userns(void);      /* unpriv.c: /proc/self/ns/user is the kernel's first */
void drop_privs(void);          /* unpriv.c: as root, become --unpriv-uid for an attempt */
/* What `<file> whoami` reported when run (creds.c runs it in a grandchild). */
struct whoami { unsigned euid, egid; uint64_t cap_eff; };
void run_whoami(const char *path, struct whoami *w);
extern int g_own_userns;        /* unpriv.c: drop_privs went into a user namespace of its own */

/* ---- the other modes ---------------------------------------------------------- */

__attribute__((noreturn)) void canary_main(int argc, char **argv);
/* canary_net.c: the canary's namespace and its end of the link */
void canary_network(const char *netns, const char *iface, const char *cidr, const char *gw);
void canary_network6(const char *iface, const char *cidr, const char *gw);
/* capture.c: the canary's packet capture; g_ncap_to: the --capture-to addresses given */
extern size_t g_ncap_to;
void capture_to(const char *ip);
int capture_open(void);
int capture_open_to(void);
void capture_read(int fd);
__attribute__((noreturn)) void init_main(void);
__attribute__((noreturn)) void confine_main(int argc, char **argv);
__attribute__((noreturn)) void jail_main(int argc, char **argv);
__attribute__((noreturn)) void connect_main(int argc, char **argv); /* attribution.c */
__attribute__((noreturn)) void stage_main(int argc, char **argv);   /* stage.c */
#define ROUTE_HOPS 32 /* route-made's next hops tried, at most, per family */
/* egress.c: the next hops in view (gateways, neighbours, host routes, small subnets),
 * and the route the kernel takes to a destination now (host byte order). */
int route_hops(uint32_t hops[ROUTE_HOPS], char devs[ROUTE_HOPS][IFNAMSIZ], int *more);
int route_now(uint32_t dst, uint32_t *via, char dev_out[IFNAMSIZ]);
void sweep_packet(const char *canary4, int high); /* packet.c: the packet4 line's frames */
void sweep_packet6(const char *canary6, int high); /* packet6.c: the packet6 line's frames */
void packet6_report(double t0);
void packet_report(double t0);
struct nexthop6 { struct in6_addr a; char name[INET6_ADDRSTRLEN + IFNAMSIZ + 1]; };
int route6_hops(struct nexthop6 *out, int max); /* routes6.c: the IPv6 next hops in view */
int route6_made(const Addr *canary, int *tried, int *more, int *first, char *how, size_t n); /* routes6.c */
void rule_step_around(int family, const void *dst, const char *where, int *first); /* rules.c */
/* routeways.c: a host route made (SIOCADDRT) or taken back (SIOCDELRT) by the ioctl, its
 * request widened, or netlink, each where the one before was refused; *way says which. */
enum { ROUTE_IOCTL, ROUTE_WIDE, ROUTE_NETLINK, ROUTE_NETLINK_WAY };
int route_by(int sock, unsigned long op, void *req, int family, const void *dst, const void *gw,
             const char *dev, int *way);
const char *route_way_name(int way);
void rule_release(void);
int rule_held(void);

#endif
