/* The egress sweep (attempt.c, sweep.c and the files they call): its attempts, and the
 * ways its sockets are made, connected and sent on (every entry, every call). Included
 * by probe.h, where it stands in its place. */
#ifndef PROBE_SWEEP_H
#define PROBE_SWEEP_H

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
    char id[48], dsts[320]; /* where, then each way named after it */
    int family, type, talk, group, raw, fd, state, step, err, src_port;
    int how, proto, bind_port, held; /* held: an inherited descriptor, already open */
    int port_try; /* a relay asked again for the canary at another port (proxy_port) */
    int login, login_used; /* a relay's login (relaytalk.c: 1 + its index), and sent */
    int socks4; /* X_SOCKS asked by SOCKS4 instead: its SOCKS5 greeting got no SOCKS5 answer */
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
void unix_seen(const char *path, int abstract, char kind); /* hostunix.c: a socket the sweep found */
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
int relay_first_step(const struct att *a); /* where a relay asked again starts (SOCKS4's) */
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
/* sports.c: bind(2), refused as a filter refuses, by the i386 entry, then the ring
 * (IORING_OP_BIND); 0 with the way named after the attempt's destination. */
int bind_other(struct att *a, const Addr *me);
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
/* unixholder.c: a unix socket of this network namespace (by file or abstract name) and
 * the process that holds it, for unix-host's datagram sockets */
int unix_bound_here(const char *name, dev_t dev, ino_t ino, unsigned long *sock);
unsigned long unix_proc_inode(const char *name);
long unix_holder(unsigned long sock);
void att_frame_msg(struct att *a); /* frames.c: X_FRAME's datagram, IPv4 or IPv6 */
void unix_report(const char *id, double t0);
void relay_report(double t0); /* proxies.c: the tcp-proxy and udp-relay lines */
void sweep_tcp_proxy(void);
int link_local6(const char *host); /* proxies.c: an IPv6 link-local address (no link: no place) */
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
/* The other IP protocols' lines (UDP-Lite, raw IP 253: sweep_protocols): no line of the
 * i386 entry or the ring aims at them, so their own socket is made by those entries
 * where socket(2) refused it every way (socket_entries). */
#define OTHER_PROTOCOL(a) ((a)->proto == IPPROTO_UDPLITE || ((a)->type == SOCK_RAW && (a)->proto == 253))
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
#endif
