/* Securebits, scenario "privilege": every bit a sandbox set and left unlocked
 * (SECBIT_NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE) cleared, natively and, where
 * that is refused as a filter refuses, through the i386 entry's prctl; then an exec,
 * whose capabilities tell what clearing gave back. */

#include "probe.h"

#define SECBIT_NOROOT_ 0
#define SECBIT_NO_SETUID_FIXUP_ 2
#define SECBIT_NO_CAP_AMBIENT_RAISE_ 6

/* In i386_gains' child: the securebits now those asked for. */
static int securebits_are(void *want)
{
    return prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == *(int *)want;
}

/* PR_SET_SECUREBITS's way through the i386 entry's prctl (172), where x86_64's is
 * refused as a filter refuses: tried first in a child (a filter may kill on it), then,
 * made there, made here, where the exec that follows inherits it. 0 if made. */
static int securebits_by_i386(int want)
{
#if defined(__x86_64__)
    long v[6] = { PR_SET_SECUREBITS, want, 0, 0, 0, 0 };
    if (!i386_here() || i386_gains(I386_NR_prctl, v, securebits_are, &want) != 1)
        return -1;
    return int80(I386_NR_prctl, v) == 0 ? 0 : -1;
#else
    (void)want;
    return -1;
#endif
}

/* As started: clear every securebit the sandbox set and left unlocked (with
 * CAP_SETPCAP, in Docker's default set), then run the probe's own file: a
 * capability the new program holds beyond those held before is the gain (a root
 * neutered by SECBIT_NOROOT, unlocked, gets its bounding set back at exec). Where
 * the clearing is refused as a filter refuses (EPERM, ENOSYS), again through the i386
 * entry's prctl: a filter of x86_64's numbers never matches it. */
void chk_priv_securebits(void)
{
    struct cap_data d[2];
    struct whoami w;
    const int bits[] = { SECBIT_NOROOT_, SECBIT_NO_SETUID_FIXUP_, SECBIT_NO_CAP_AMBIENT_RAISE_ };
    if (caps_get(d) != 0)
        fail(errno, "capget");
    uint64_t held = cap64(d[0].effective | d[0].permitted, d[1].effective | d[1].permitted);
    /* A kernel without securebits (gVisor's sentry): nothing to clear, the exec
     * still tried. */
    int sb = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    ev_int("securebits", sb);
    if (sb < 0)
        sb = 0;
    int want = sb, e = 0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (sb >> bits[i] & 1 && !(sb >> (bits[i] + 1) & 1))
            want &= ~(1 << bits[i]);
    const char *way = "";
    if (want != sb && prctl(PR_SET_SECUREBITS, want, 0, 0, 0) != 0) {
        e = errno;
        if ((e == EPERM || e == ENOSYS) && securebits_by_i386(want) == 0)
            way = " (cleared by prctl through the i386 entry, int $0x80: x86_64's refused)";
    }
    int now = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    ev_int("cleared", now >= 0 ? sb & ~now : 0);
    run_whoami("/proc/self/exe", &w);
    uint64_t gained = w.cap_eff & ~held;
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)gained);
    if (gained && initial_userns())
        outcome(OC_ESCAPED, 0, "securebits 0x%x, now 0x%x%s: exec gained capabilities %s", sb, now, way, hex);
    outcome(OC_BLOCKED, e, "securebits 0x%x (%s), exec gained no capability", sb,
            want == sb ? "nothing unlocked to clear" : *way ? "cleared through the i386 entry"
            : e ? "clearing refused" : "cleared");
}
