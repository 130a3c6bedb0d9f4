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
 *   filesystem   filesystem.c (by path), writes.c (the catalogue's write kinds),
 *                i386.c (the same calls through the i386 entry),
 *                exec.c, grants.c (read-only grants), held.c (descriptors held at
 *                start), heldreaders.c (a held pipe's reader, the controlling
 *                terminal's session), fdkinds.c (what kind each is), stands.c (the working folder, a second chroot), mounts.c
 *                (the mount table), routes.c (every route to every sentinel),
 *                writereach.c (write reach; writereach.h), writelist.c (its pass over
 *                the host's list of every folder), procs.c (other processes)
 *   privilege    creds.c (credentials and raising them), kstate.c (host kernel
 *                state open for writing), root.c (what a root
 *                workload would try), procs.c, procways.c (other processes through
 *                the i386 entry), unpriv.c (the unprivileged uid)
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
 * failed, out holds {"exec_errno":N}. */
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
/* ---- attempt.c and sweep.c: the egress sweep's attempts --------------------
 * Every attempt of the sweep is one `struct att`, run concurrently by attempt.c;
 * sweep.c says what to try, sweep.def with which ids. */
/* X_FIRE: a datagram nothing answers (UDP-Lite, raw IP): only the canary's capture
 * proves it; X_URING: the exchange made by io_uring in a child (uring.c); X_I386:
 * the same through the i386 entry alone (i386net.c); X_FRAME: a UDP packet the probe
 * builds itself, sent on a held packet socket (link-level destination `ll`); X_HTTP,
 * X_SOCKS, X_GET: a relay asked by HTTP CONNECT, SOCKS5, an absolute-URI GET. */
enum { X_LINE, X_DNS, X_HTTP, X_SOCKS, X_ICMP, X_FIRE, X_URING, X_I386, X_FRAME, X_GET };
#define RELAY_WAYS 3 /* the ways each relay is asked: X_HTTP, X_SOCKS, X_GET */
enum { S_CONNECT, S_SEND, S_RECV, S_DONE, S_WAIT }; /* S_WAIT: until g_att[after - 1] is done */
enum { G_SELF, G_OWN_DNS, G_OWN_DNS_TCP, G_UNIX, G_HELD, G_PROXY, G_UDP_RELAY,
       G_PACKET, G_PACKET6, G_ELSE4_TCP, G_ELSE4_UDP, G_ELSE6_TCP, G_ELSE6_UDP,
       G_WEB4_TCP, G_WEB4_UDP, G_WEB6_TCP, G_WEB6_UDP, G_SPORT4, G_SPORT6 };
/* An attempt at the canary itself, or at one of its stand-ins elsewhere (one line for
 * each family and transport's stand-ins, reported after the rest): judged alike. */
#define AT_CANARY(a) ((a)->group == G_SELF || (a)->group >= G_ELSE4_TCP)
#define PROXY_GROUP(a) ((a)->group == G_UNIX || (a)->group == G_PROXY) /* a relay, asked to reach the canary */
/* How the bytes are sent: send(2) on a connected socket, or another call (writev,
 * pwritev2 at the current position, sendfile from a memfd, splice from a pipe). */
enum { H_SEND, H_SENDTO, H_SENDMSG, H_SENDMMSG, H_WRITE, H_WRITEV, H_PWRITEV2, H_SENDFILE, H_SPLICE };
/* TCP Fast Open: T_SEND makes the connection with the first send call (MSG_FASTOPEN,
 * no connect(2)); T_CONNECT sets TCP_FASTOPEN_CONNECT before connect(2). */
enum { T_NONE, T_SEND, T_CONNECT };
#define MAX_ATT 760 /* the sweep at its widest: about 620 attempts (with source ports, address queries and the host's UDP shippers), and 64 at the stand-ins (12 ranges, 8 of the host's own) */
#define CANARY_DGRAM_SUFFIX "-d" /* the canary's unix datagram socket: --canary-unix and this */
#define CANARY_SEQPACKET_SUFFIX "-q" /* its unix seqpacket listener */
#define UNIX_MAX 48

struct att {
    char id[48], dsts[224];
    int family, type, talk, group, raw, fd, state, step, err, src_port;
    int how, proto, bind_port, held; /* held: an inherited descriptor, already open */
    int port_try; /* a relay asked again for the canary at another port (proxy_port) */
    int login, login_used; /* a relay's login (relaytalk.c: 1 + its index), and sent */
    int listed; /* a listener of the sandbox's own namespace: own_dns_gate lets it be */
    int pi; /* X_FRAME on a held TUN device without IFF_NO_PI: its 4-byte packet header */
    char peer_out[200]; /* a held unix connection whose listener is outside: why (held_report) */
    int tfo, tfo_sent; /* T_*; the MSG_FASTOPEN call made */
    int unconn; /* connect_other: no connect, the address on each datagram (sendto, ...) */
    int by_write; /* send(2) refused: the call the bytes went by (1 write ... 10: att_way) */
    size_t after; /* S_WAIT: 1 + the index of the attempt this one follows */
    pid_t kid; /* X_URING's child */
    Addr dst;
    struct sockaddr_ll ll; /* X_FRAME: the held packet socket's link-level destination */
    Addr alt; /* where a held IPv6 socket connects if IPv6 has no route (v4-mapped) */
    int has_alt;
    struct sockaddr_un un;
    socklen_t unlen; /* an abstract name's exact length; 0: a path */
    double t0, end;
    unsigned char out[700], in[1500];
    size_t outn, outoff, inn;
    uint16_t qid;
    int qtype; /* X_DNS: the query's type (0: TXT, whose answer carries the nonce) */
    enum outcome oc;
    char detail[300], qname[300];
};
/* The sweep's named attempts (sweep.def): SW_NAME, whose id is sweep_id[SW_NAME]. */
enum sweep_name {
#define SWEEP_TCP_PORTS(...)
#define SWEEP_UDP_PORTS(...)
#define SWEEP(name, id) SW_##name,
#include "sweep.def"
#undef SWEEP
#undef SWEEP_UDP_PORTS
#undef SWEEP_TCP_PORTS
    SW_COUNT
};
extern const char *const sweep_id[SW_COUNT];
ssize_t att_send(struct att *a); /* sendways.c: the bytes, by the attempt's call */
const char *att_way(const struct att *a); /* sendways.c: its way into TCP, if not connect's */
extern struct att g_att[MAX_ATT];
void sweep_host_unix(double t0); /* hostunix.c: the unix-host line */
void unix_seen(const char *path, int abstract); /* hostunix.c: a socket the sweep found */
void unix_seen_cut(const char *why); /* hostunix.c: the walk left sockets unfound */
extern size_t g_natt, g_att_dropped;
struct att *att_new(const char *id, int group);
__attribute__((format(printf, 4, 5)))
void att_end(struct att *a, enum outcome oc, int e, const char *fmt, ...);
void att_line(const char *id, enum outcome oc, int e, const char *detail, double t0,
              const char *dst, int src_port, const char *qname);
struct att *sweep_add(const char *id, const char *ip, int port, int type, int talk);
/* relaytalk.c: a relay asked three ways (X_HTTP, X_SOCKS, X_GET), with a login where
 * the environment's proxy URL gives one. */
extern Addr g_relay_target; /* the canary's TCP address relays are asked for (--canary-tcp) */
int relay_login(const char *user, const char *pass, const char *var); /* 1 + its index; 0 none */
int proxy_port(int k, const Addr *target);
int relay_request(struct att *a, const Addr *target); /* 0: no relay's message at this step */
int relay_asked(const struct att *a); /* the HARNESS line sent through it */
int relay_judge(struct att *a, int eof); /* as att_judge, for the relay's own answers */
void relay_escaped(struct att *a);
void sweep_ports(int f, const char *ip, int high);
/* sweep.c: the ports the sweep tries by TCP (SOCK_STREAM) or UDP, 0 standing for high */
int sweep_port_list(int type, int high, int *ports, int max);
void sweep_own_dns(const char *denied);
enum { DNS_BOTH, DNS_UDP, DNS_TCP }; /* own_dns_add's transports */
void own_dns_add(const char *spec, const char *label, const char *denied, int only);
void sweep_udp_listeners(const char *denied); /* proxies.c: dns-own's other resolvers, udp-relay */
int host_udp_relays(void); /* hostudp.c: the host's UDP listeners, udp-relay; 1: more than tried */
void own_dns_gate(struct att *a);
void sweep_unix(void);
void sweep_protocols(int f, const char *ip, int high);
void sweep_calls(int f, const char *ip, int high);
void sweep_sports(int f, const char *ip, int high); /* sports.c */
void sport_report(double t0);
int bind_source(struct att *a);
void sweep_abstract(void);
void sweep_held(const char *ip4, const char *ip6, int high); /* heldsocks.c */
void held_report(double t0);                                /* heldsocks.c: held-fds's line */
int held_peer_outside(int fd, char *why, size_t cap);       /* hostunix.c */
/* nsenter.c: what make(arg) returns in a child that entered h's namespace by setns */
enum { NS_OUTSIDE, NS_REFUSED, NS_LOST }; /* why fd_in_ns gave none: setns, make, no answer */
int fd_in_ns(int h, int nstype, int (*make)(void *), void *arg, int *why);
/* nsenter.c: the same for the descriptors make(arg, fds, max) makes, at most 16 */
int fds_in_ns(int h, int nstype, int (*make)(void *, int *, int), void *arg, int *fds, int max,
              int *why);
void ns_way_note(const char *way); /* nsenter.c: a make's way, handed back with its fds */
const char *ns_way(void);           /* nsenter.c: the way fds_in_ns's last ones took, or "" */
const char *ns_handle(int fd, char *name, size_t n); /* "net", "mnt"..., "pidfd" or NULL */
int ns_root(void *unused); /* for fd_in_ns: "/" of the mount namespace entered */
/* sweep.c: aim at the canary's abstract name for a's socket type (stream, datagram, seqpacket) */
int at_canary_unix(struct att *a);
const char *canary_unix_suffix(int type);
void sweep_host(int f, const char *ip, int high);
void sweep_meta(int f, const char *ip, int high);
void sweep_elsewhere(int f, int high);
void elsewhere_report(double t0);
int elsewhere_has(const char *host);
int elsewhere_bind(struct att *a);
int unix_host_tries(const struct stat *st); /* hostunix.c */
void att_frame_msg(struct att *a); /* frames.c: X_FRAME's datagram, IPv4 or IPv6 */
void unix_report(const char *id, double t0);
void relay_report(double t0); /* proxies.c: the tcp-proxy and udp-relay lines */
void sweep_tcp_proxy(void);
void group_report(int group, const char *id, double t0, const char *none);

/* ipc.c: System V and POSIX IPC, the sweep's ipc-* attempts and the canary's side */
void sweep_ipc(void);
int ipc_canary_open(const char *sysv, const char *mqueue);
void ipc_canary_read(void);
void ipc_canary_remove(void);

/* uring.c: connect, send, recv by io_uring alone (the egress sweep's uring4-*) */
int uring_exchange(const Addr *dst, int type, int proto, const char *msg, char *reply, size_t cap,
                   int *src_port, const char **step);
/* frames.c: a packet socket made by every way (socket, IORING_OP_SOCKET, the i386
 * entry; *way the one), whether CAP_NET_RAW is held (no way answers without it), a
 * frame sent by every call that sends one (*by: the call, where not sendto), the same
 * for an attempt's frame (a->ll: its link), and an IPv6 neighbour solicitation. */
int packet_make(int type, int proto, const char **way);
int packet_spkt(int fd);
int long_addr_retry(int e); /* sendways.c */
int socket_wide(struct att *a, int type); /* sendways.c: socket(2) again, each argument widened */
int socket_plain(struct att *a, int type); /* sendways.c: the type without its flags */
int socket_entries(struct att *a, int type); /* sendways.c: by the i386 entry, then the ring */
/* The routes the sweep's own i386 and ring lines (aimed at the canary) do not take: a
 * relay or resolver in the sandbox's own namespace, a held socket of another's. */
#define RELAY_ROUTE(a)                                                                              \
    ((a)->group == G_PROXY || (a)->group == G_UDP_RELAY || (a)->group == G_OWN_DNS ||             \
     (a)->group == G_OWN_DNS_TCP || (a)->group == G_UNIX || (a)->group == G_HELD)
int connect_other(struct att *a, const struct sockaddr *sa, socklen_t sl); /* sendways.c */
/* sockways.c: a socket made every way a filter on socket(2)'s arguments may leave open
 * (each argument widened, the other sets of type flags, the protocol named where 0);
 * sock_way() the way the last one took, as words for a line ("" where as given). */
enum { SW_WIDE = 1, SW_FLAGS = 2, SW_PROTO = 4 };
int sock_make(int family, int type, int proto);
int sock_retry(int family, int type, int proto, int ways);
const char *sock_way(void);
/* sockways.c: the same socket by the other entries, once socket(2) refused it every way:
 * the i386 entry's socket or socketcall, io_uring's IORING_OP_SOCKET (its way in
 * sock_way()); and whether a ring answers here without a filter killing for it. */
int sock_entries(int family, int type, int proto);
int uring_alive(void);
/* sockways.c: connect(2), refused as a filter refuses, by the i386 entry, then the ring
 * (the way into `way`); -1 with errno EINPROGRESS where under way on a nonblocking socket. */
int connect_entries(int fd, const struct sockaddr *sa, socklen_t len, char *way, size_t cap);
/* Whether an attempt's destination text is `spec`'s, whatever way was named after it. */
static inline int dsts_is(const char *dsts, const char *spec)
{
    size_t n = strlen(spec);
    return !strncmp(dsts, spec, n) && (!dsts[n] || dsts[n] == ' ');
}
void att_exchange_start(struct att *a);
void long_addr_way(struct att *a, const char *what);
uint16_t ip_checksum(const unsigned char *p, size_t n, uint32_t sum); /* frames.c */
int xsk_is(int fd); /* xdp.c */
int xsk_make(int ifindex);
ssize_t xsk_send(int fd, const void *p, size_t n);
void xsk_learn(int fd, uint32_t hop, uint32_t self, const unsigned char own[6]);
int packet_listen(int fd, int proto);
int packet_on_link(int fd, const struct sockaddr_storage *from, int ifindex);
int net_raw_held(void);
ssize_t frame_out(int fd, int raw, const void *p, size_t n, const struct sockaddr_ll *ll, const char **by);
ssize_t att_frame_send(struct att *a, const void *p, size_t n);
int frame_att(struct att *a, int fd, int type, int proto, int ifindex, const unsigned char mac[6]);
size_t ns_frame(unsigned char *buf, int eth, const unsigned char own[6], const struct in6_addr *src,
                const struct in6_addr *target);
/* uring.c: a socket made by IORING_OP_SOCKET alone (-1 with errno, *step the call) */
int uring_socket(int family, int type, int proto, const char **step);
ssize_t uring_sendmsg(int fd, const struct msghdr *m, const char **step); /* IORING_OP_SENDMSG */
int uring_nop(const char **step); /* a NOP: 0 where io_uring answers */
int uring_connect(int fd, const struct sockaddr *sa, socklen_t len, const char **step); /* IORING_OP_CONNECT */
const char *uring_way(void); /* how rings are driven, where not by io_uring_enter: or "" */
const char *uring_i386_way(void); /* the last ring's, where set up through the i386 entry: or "" */
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
/* uringheld.c: IORING_OP_SETXATTR of `path` by each io_uring ring held at start, as the
 * workload itself (fs-io-uring, where no ring can be set up): returns only where none
 * set it (errno kept). */
void held_rings_setxattr(const char *path, const char *value);

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

/* writes.c: a path in the outside folder (exec.c's and uring.c's too), and the
 * calls a kind is made of, tried in turn (grants.c's too). */
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
const char *meta_unchanged(int fd);  /* a held file's metadata, each set to what it is */
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
