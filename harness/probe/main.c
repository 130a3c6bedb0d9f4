/* `probe run`: its arguments, the check table and the check loop; and which mode
 * (run, canary, init, whoami, version) the arguments ask for. */

#include "probe.h"

int g_check_timeout_ms = 5000;
static long g_deadline_ms = 60000;
const char *g_argv0 = "probe";
unsigned g_unpriv_uid = 65534;

/* The probe's own executable: surely a readable regular file. */
void self_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    char cwd[512];
    if (g_argv0[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, cap, "%s", g_argv0);
    else
        snprintf(out, cap, "%s/%s", cwd, g_argv0);
}

struct run_options o;
static const struct { const char *name; const char **val; } run_opts[] = {
    { "--tag", &o.tag }, { "--canary-tcp", &o.canary_tcp }, { "--resolver", &o.resolver },
    { "--alt-dns", &o.alt_dns }, { "--doh", &o.doh }, { "--denied-name", &o.denied_name },
    { "--nonce", &o.nonce }, { "--allowed-dir", &o.allowed_dir }, { "--sentinel", &o.sentinel },
    { "--token", &o.token }, { "--outside-dir", &o.outside_dir }, { "--overwrite", &o.overwrite },
    { "--rename", &o.rename }, { "--planted-link", &o.planted_link },
    { "--setuid-helper", &o.setuid_helper }, { "--fcap-helper", &o.fcap_helper },
    { "--unpriv-uid", &o.unpriv_uid }, { "--allowed-tcp", &o.allowed_tcp },
    { "--canary4", &o.canary4 }, { "--canary6", &o.canary6 }, { "--high-port", &o.high_port },
    { "--resolver-ranges", &o.resolver_ranges }, { "--more-sentinels", &o.more_sentinels },
    { "--cell-nonce", &o.cell_nonce }, { "--reach-targets", &o.reach_targets },
    { "--setgid-helper", &o.setgid_helper },
    { "--other-binary", &o.other_binary },
    { "--barrier", &o.barrier },
    { "--canary-unix", &o.canary_unix }, { "--host4", &o.host4 }, { "--host6", &o.host6 },
    { "--meta4", &o.meta4 }, { "--meta6", &o.meta6 },
    { "--elsewhere4", &o.elsewhere4 }, { "--elsewhere6", &o.elsewhere6 },
    { "--elsewhere4-high", &o.own4 }, { "--elsewhere6-high", &o.own6 },
    { "--granted", &o.granted }, { "--granted-token", &o.granted_token },
    { "--canary-sysv", &o.canary_sysv }, { "--canary-mq", &o.canary_mq },
    { "--write-targets", &o.write_targets }, { "--write-skip", &o.write_skip },
    { "--write-named", &o.write_named }, { "--walk-folders", &o.walk_folders },
    { "--write-dirs", &o.write_dirs }, { "--inh-helper", &o.inh_helper },
    { "--host-unix", &o.host_unix }, { "--host-ns", &o.host_ns }, { "--host-tcp-skip", &o.host_tcp_skip },
    { "--host-tcp", &o.host_tcp }, { "--host-udp", &o.host_udp },
    { "--host-devs", &o.host_devs }, { "--block-devs", &o.block_devs }, { "--leased", &o.leased }, { "--decoys", &o.decoys },
    { "--unix-granted", &o.unix_granted }, { "--linger", &o.linger },
    { "--link-grants", &o.link_grants },
};

/* --linger SECONDS: at the end, a process of the workload's own that outlives the
 * probe (double-forked, its own session, every descriptor closed) and sleeps that
 * long. The host looks for it once the sandbox's runtime has exited: a runtime whose
 * exit ends its workload leaves nothing of the cell behind. Its command line is the
 * probe's, which names the cell. */
static void linger(const char *seconds)
{
    pid_t mid = fork();
    if (mid == 0) {
        if (fork() == 0) {
            setsid();
            for (int fd = 0; fd < 1024; fd++)
                close(fd);
            struct timespec t = { atoi(seconds), 0 };
            while (nanosleep(&t, &t) != 0 && errno == EINTR)
                ;
            _exit(0);
        }
        _exit(0);
    }
    if (mid > 0) /* the lingerer exists before the probe exits */
        waitpid(mid, NULL, 0);
}
#define NRUNOPTS (sizeof run_opts / sizeof run_opts[0])

/* The value of an option this check needs; "error" when it was not given. */
const char *need(const char **opt)
{
    for (size_t i = 0; i < NRUNOPTS; i++)
        if (run_opts[i].val == opt && (!*opt || !**opt))
            fail(0, "%s not given", run_opts[i].name);
    return *opt;
}

/* The address in an option this check needs. */
void need_addr(const char **opt, Addr *a)
{
    const char *s = need(opt);
    if (parse_addr(s, a) != 0)
        for (size_t i = 0; i < NRUNOPTS; i++)
            if (run_opts[i].val == opt)
                fail(0, "bad %s (want IP:PORT): %s", run_opts[i].name, s);
}

/* The check table (checks.def), in the order the checks run and print: a
 * row's KIND is its kind and whether it is light or concurrent. */
#define ROW_FACT K_FACT, 0
#define ROW_ATTEMPT K_ATTEMPT, 0
#define ROW_CONTROL K_CONTROL, 0
#define ROW_INFO K_INFO, 0
#define ROW_SWEEP K_SWEEP, 0
#define ROW_FACT_LIGHT K_FACT, 1
#define ROW_ATTEMPT_LIGHT K_ATTEMPT, 1
#define ROW_CONTROL_LIGHT K_CONTROL, 1
#define ROW_ATTEMPT_NET K_ATTEMPT, 2
#define ROW_CONTROL_NET K_CONTROL, 2
#define ROW_SWEEP_NET K_SWEEP, 2
static const struct check checks[] = {
#define CHECK(scenario, id, fn, kind) { scenario, id, fn, ROW_##kind },
#include "checks.def"
#undef CHECK
};
#define NCHECKS (sizeof checks / sizeof checks[0])

/* The running check's process group, and every concurrent row's. */
static void kill_children(void)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(-c, SIGKILL);
        kill(c, SIGKILL);
    }
    for (size_t k = 0; k < MAX_CONCURRENT; k++)
        if ((c = g_kids[k]) > 0) {
            kill(-c, SIGKILL);
            kill(c, SIGKILL);
        }
}

static void on_deadline(int sig)
{
    static const char msg[] = "{\"type\":\"fatal\",\"detail\":\"deadline\"}\n";
    (void)sig;
    kill_children();
    write_all(STDOUT_FILENO, msg, sizeof msg - 1);
    _exit(3);
}

/* SIGTERM/SIGINT/SIGHUP (e.g. from `timeout` at the cell deadline): take the
 * running check's process group down too, then go. */
static void on_term(int sig)
{
    kill_children();
    _exit(128 + sig);
}

static long parse_num(const char *opt, const char *s, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > max)
        fatal(2, "bad value for %s: %s", opt, s);
    return v;
}

static int scenario_known(const char *name)
{
    for (size_t i = 0; i < NCHECKS; i++)
        if (!strcmp(checks[i].scenario, name))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    fds_at_start(); /* before anything is opened: what the workload was handed */
    cwd_at_start(); /* and where it stood */
    if (argc > 0 && argv[0] && argv[0][0])
        g_argv0 = argv[0];
    if (argc == 2 && !strcmp(argv[1], "version")) {
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"version\",\"probe\":\"%s\",\"protocol\":%d}", PROBE_NAME, PROTOCOL);
        emit(&b);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "whoami")) {
        Buf b = { .n = 0 };
        bput(&b, "{\"type\":\"whoami\",");
        put_creds(&b, 0);
        bput(&b, "}");
        emit(&b);
        return 0;
    }
    /* A setuid or setgid copy (the privilege helpers, staged on the host in a folder
     * any local user can reach) answers `whoami` and nothing else: its other modes
     * run commands and touch files, and would do so as root or group 0. */
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 || ru != eu || rg != eg)
        fatal(2, "a setuid or setgid copy of the probe runs only `whoami`");
    /* The same for a copy that gained capabilities from its file (the kernel's
     * AT_SECURE): the fcap helper would hand any local user CAP_NET_RAW in `run` and
     * `canary`. A mutant's own workload copy (scripts/mutant-privilege, in a mount
     * namespace of its own, where nobody else can reach it) carries a mark that only
     * the file's owner could have set. */
    char mark[8];
    if (getauxval(AT_SECURE) &&
        getxattr("/proc/self/exe", "user.harness-workload", mark, sizeof mark) <= 0)
        fatal(2, "a file-capability copy of the probe runs only `whoami`");
    if (argc >= 2 && !strcmp(argv[1], "canary"))
        canary_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "init"))
        init_main();
    if (argc >= 2 && !strcmp(argv[1], "confine"))
        confine_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "jail"))
        jail_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "connect"))
        connect_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "stage"))
        stage_main(argc, argv);
    if (argc < 2 || strcmp(argv[1], "run"))
        fatal(2, "usage: probe run [--check-timeout-ms N] [--deadline-ms N] [--tag T] [OPTIONS] SCENARIO..."
                 " | probe canary --tcp IP:PORT... --dns IP:PORT... --nonce HEX --answer IP"
                 " [--netns PATH --iface NAME --iface-addr IP/N --gateway IP] [--daemon LOG] [--lease FILE]"
                 " | probe confine [--read PATH]... [--write PATH]... -- COMMAND..."
                 " | probe jail [--bind SRC DST]... [--ro-bind SRC DST]... -- COMMAND..."
                 " | probe connect TAG CHECK-ID IP:PORT NONCE | probe whoami | probe version");

    int i = 2;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char **slot = NULL;
        for (size_t k = 0; k < NRUNOPTS && !slot; k++)
            if (!strcmp(argv[i], run_opts[k].name))
                slot = run_opts[k].val;
        if (!strcmp(argv[i], "--check-timeout-ms") && i + 1 < argc)
            g_check_timeout_ms = (int)parse_num(argv[i], argv[i + 1], 86400000L), i++;
        else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
            g_deadline_ms = parse_num(argv[i], argv[i + 1], 86400000L), i++;
        else if (slot && i + 1 < argc)
            *slot = argv[++i];
        else
            fatal(2, "bad argument: %s", argv[i]);
    }
    if (o.unpriv_uid)
        g_unpriv_uid = (unsigned)parse_num("--unpriv-uid", o.unpriv_uid, 4294967294L);
    if (i == argc)
        fatal(2, "no scenario given");
    for (int j = i; j < argc; j++)
        if (!scenario_known(argv[j]))
            fatal(2, "unknown scenario: %s", argv[j]);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_deadline;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct itimerval itv = { .it_value = { .tv_sec = g_deadline_ms / 1000,
                                           .tv_usec = (g_deadline_ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &itv, NULL);

    Buf b = { .n = 0 };
    bput(&b, "{\"type\":\"start\",\"probe\":\"%s\",\"protocol\":%d,\"pid\":%d,\"uid\":%u,\"euid\":%u,\"gid\":%u",
         PROBE_NAME, PROTOCOL, (int)getpid(), (unsigned)getuid(), (unsigned)geteuid(), (unsigned)getgid());
    if (o.cell_nonce)
        bkv(&b, "cell_nonce", o.cell_nonce);
    bput(&b, "}");
    emit(&b);
    /* The digest covers the nonce and then every line up to the done line, so
     * lines recorded in another cell cannot pass for this one's. */
    sha_init(&g_digest);
    if (o.cell_nonce) {
        sha_update(&g_digest, o.cell_nonce, strlen(o.cell_nonce));
        sha_update(&g_digest, "\n", 1);
    }
    g_digesting = 1;

    /* Each scenario's rows in table order; consecutive light rows together, and
     * consecutive concurrent rows at once. */
    int count = 0;
    for (int j = i; j < argc; j++)
        for (size_t k = 0, n; k < NCHECKS; k += n) {
            n = 1;
            if (strcmp(checks[k].scenario, argv[j]))
                continue;
            while (checks[k].light && k + n < NCHECKS && checks[k + n].light == checks[k].light
                   && !strcmp(checks[k + n].scenario, argv[j])
                   && (checks[k].light != ROW_CONCURRENT || n < MAX_CONCURRENT))
                n++;
            count += run_rows(&checks[k], n);
        }

    g_digesting = 0;
    char digest[65];
    sha_hex(&g_digest, digest);
    b.n = 0;
    bput(&b, "{\"type\":\"done\",\"count\":%d", count);
    if (o.cell_nonce)
        bkv(&b, "cell_nonce", o.cell_nonce);
    bput(&b, ",\"digest\":\"%s\"}", digest);
    emit(&b);
    if (o.linger)
        linger(o.linger);
    /* As a container's first process, its exit ends the container at once, and a
     * runtime that copies the output through a FIFO (`ctr run`) may close the copy
     * before it has read the last lines (seen under load: a cell cut short after 122
     * lines, exit 0). A moment's wait lets it drain what was written. */
    if (getpid() == 1)
        usleep(150000);
    return 0;
}
