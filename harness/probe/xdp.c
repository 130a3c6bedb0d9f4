/* AF_XDP: frames sent by an XDP socket's transmit ring in copy mode (XDP_COPY: no XDP
 * program, no driver support, no CAP_NET_ADMIN; CAP_NET_RAW alone), the way a filter
 * that refuses every packet socket and forgets this family leaves open. Its frames
 * pass under netfilter's IP hooks, as a packet socket's do. It receives nothing without
 * an XDP program, so a next hop's link address comes from the kernel's neighbour table
 * (xsk_learn). One socket per link, each with its own small UMEM. */

#include "probe.h"

#include <linux/if_xdp.h>
#include <sys/mman.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define XSK_SLOTS 8     /* frames in flight: a power of two, as every ring's size */
#define XSK_CHUNK 4096  /* a UMEM chunk: a power of two from 2048 to a page */
#define XSK_MAX 8       /* links: packet4's hops at most */

static struct xsk {
    ino_t ino;
    int ifindex, fd;
    unsigned char *umem, *tx, *cq;
    struct xdp_mmap_offsets off;
    unsigned slot;
} g_xsk[XSK_MAX];
static int g_nxsk;

/* Whether `fd` is an XDP socket. */
int xsk_is(int fd)
{
    int domain = 0;
    socklen_t len = sizeof domain;
    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_XDP;
}

/* An XDP socket bound to queue 0 of link `ifindex` in copy mode, with a UMEM, its fill
 * and completion rings (bind asks for both) and a transmit ring: its descriptor (one
 * per link, kept for the process's life: the caller duplicates it), or -1 with errno. */
int xsk_make(int ifindex)
{
    for (int i = 0; i < g_nxsk; i++)
        if (g_xsk[i].ifindex == ifindex)
            return g_xsk[i].fd;
    if (g_nxsk == XSK_MAX)
        return errno = ENOSPC, -1;
    struct xsk *x = &g_xsk[g_nxsk];
    int fd = sock_make(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), n = XSK_SLOTS, e;
    if (fd < 0)
        return -1;
    x->umem = mmap(NULL, XSK_SLOTS * XSK_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct xdp_umem_reg reg = { .addr = (uint64_t)(uintptr_t)x->umem, .len = XSK_SLOTS * XSK_CHUNK,
                                .chunk_size = XSK_CHUNK };
    socklen_t ol = sizeof x->off;
    if (x->umem == MAP_FAILED || setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg) != 0 ||
        setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof n) != 0 ||
        setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof n) != 0 ||
        setsockopt(fd, SOL_XDP, XDP_TX_RING, &n, sizeof n) != 0 ||
        getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &x->off, &ol) != 0)
        goto fail;
    x->tx = mmap(NULL, x->off.tx.desc + XSK_SLOTS * sizeof(struct xdp_desc), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_POPULATE, fd, XDP_PGOFF_TX_RING);
    x->cq = mmap(NULL, x->off.cr.desc + XSK_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_POPULATE, fd, XDP_UMEM_PGOFF_COMPLETION_RING);
    struct sockaddr_xdp at = { .sxdp_family = AF_XDP, .sxdp_flags = XDP_COPY,
                               .sxdp_ifindex = (unsigned)ifindex, .sxdp_queue_id = 0 };
    if (x->tx == MAP_FAILED || x->cq == MAP_FAILED || bind(fd, (struct sockaddr *)&at, sizeof at) != 0)
        goto fail;
    struct stat st;
    fstat(fd, &st);
    x->ino = st.st_ino;
    x->ifindex = ifindex;
    x->fd = fd;
    g_nxsk++;
    return fd;
fail:
    e = errno;
    close(fd);
    return errno = e, -1;
}

/* One frame on the transmit ring of XDP socket `fd` (or a duplicate of it), the kernel
 * told by an empty sendto: `n`, or -1 with errno. */
ssize_t xsk_send(int fd, const void *p, size_t n)
{
    struct stat st;
    struct xsk *x = NULL;
    if (fstat(fd, &st) != 0)
        return -1;
    for (int i = 0; i < g_nxsk && !x; i++)
        if (g_xsk[i].ino == st.st_ino)
            x = &g_xsk[i];
    if (!x || n > XSK_CHUNK)
        return errno = EINVAL, -1;
    unsigned *prod = (unsigned *)(void *)(x->tx + x->off.tx.producer), at = *prod;
    struct xdp_desc *ring = (struct xdp_desc *)(void *)(x->tx + x->off.tx.desc);
    uint64_t addr = (uint64_t)(x->slot++ % XSK_SLOTS) * XSK_CHUNK;
    memcpy(x->umem + addr, p, n);
    ring[at % XSK_SLOTS] = (struct xdp_desc){ .addr = addr, .len = (uint32_t)n };
    __atomic_store_n(prod, at + 1, __ATOMIC_RELEASE);
    if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN && errno != ENOBUFS)
        return -1;
    /* the completions taken back at once: a full completion ring stops transmission */
    unsigned *cprod = (unsigned *)(void *)(x->cq + x->off.cr.producer);
    unsigned *ccons = (unsigned *)(void *)(x->cq + x->off.cr.consumer);
    __atomic_store_n(ccons, __atomic_load_n(cprod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    return (ssize_t)n;
}

/* Teach this namespace's kernel the link address of `hop` (an address on the link of
 * XDP socket `fd`, which receives nothing): an echo request to it from `self` (this
 * namespace's address there; network order), in a frame to the link's broadcast
 * address, which the hop takes as its own; to answer, it asks by ARP for `self`, and
 * the kernel here, answering, learns the asker's link address (/proc/net/arp). */
void xsk_learn(int fd, uint32_t hop, uint32_t self, const unsigned char own[6])
{
    unsigned char f[14 + 20 + 16] = { 0 }, *ip = f + 14, *icmp = ip + 20;
    memset(f, 0xff, 6);
    memcpy(f + 6, own, 6);
    f[12] = 0x08; /* ETH_P_IP */
    ip[0] = 0x45, ip[3] = 36, ip[8] = 64, ip[9] = IPPROTO_ICMP;
    uint32_t to = htonl(hop);
    memcpy(ip + 12, &self, 4);
    memcpy(ip + 16, &to, 4);
    uint16_t c = ip_checksum(ip, 20, 0);
    ip[10] = (unsigned char)(c >> 8), ip[11] = (unsigned char)c;
    icmp[0] = 8; /* an echo request */
    memcpy(icmp + 8, "harness", 7);
    c = ip_checksum(icmp, 16, 0);
    icmp[2] = (unsigned char)(c >> 8), icmp[3] = (unsigned char)c;
    xsk_send(fd, f, sizeof f);
}
