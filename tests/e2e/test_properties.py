"""The four property scenarios, run for real: host, runsc, bwrap, runc, sshd.

Canaries sit in an "outside" network namespace that harness creates and
removes; every address involved is inside that namespace or on loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.catalogue.network import ROWS
from harness.catalogue.proof import mutants_of
from harness.catalogue.table import all_rows
from harness.scenarios import SCENARIOS
from tests.conftest import MUTANTS_TOOLS, ROOT, Lab, background_run, harness_cli
from tests.e2e.helpers import cells_of, leftovers, runsc_containers, verdicts_of
from tests.lab import free_port, require_tool
from tests.supervisor import Supervisor

PROPERTIES = ("egress_confinement", "filesystem_confinement", "privilege_floor")


def _no_harness_namespaces(run_id: str = "") -> bool:
    """No namespace of this run (or, without a run id, of any harness run) remains."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return f"harness-{run_id}" not in out


@pytest.fixture
def local_run(local_matrix_run: tuple[int, str, Path]) -> tuple[int, str, Path]:
    """The session's one run of the shipped default matrix (all scenarios)."""
    return local_matrix_run


def test_local_matrix_judges_every_property(local_run: tuple[int, str, Path]) -> None:
    """Host violates every property; runsc, bwrap, runc and the chroot jail enforce them;
    exit 0."""
    code, output, out = local_run
    assert code == 0, output
    v = verdicts_of(out)
    for prop in PROPERTIES:
        assert v[("localhost", "host", prop)]["observed"] == "violated", prop
        assert v[("localhost", "host", prop)]["verdict"] == "pass"
        for runtime in ("runsc", "bwrap", "runc", "jail"):
            row = v[("localhost", runtime, prop)]
            assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (runtime, row)
    assert v[("localhost", "runsc", "attribution")]["verdict"] == "skipped"


def test_the_colocated_shape_is_judged_against_its_policy(
    local_run: tuple[int, str, Path],
) -> None:
    """The co-located shape (issue 25), judged against the policy it declares: bwrap
    showing the host's /usr and /etc read-only to nobody, and Landlock on the host's
    own view behind the reference supervisor, enforced on every property; the
    Landlock one sees host mounts it cannot read, which are no escape."""
    _, _, out = local_run
    v = verdicts_of(out)
    for runtime, props in (
        ("bwrap-colocated", PROPERTIES),
        ("landlock-colocated", (*PROPERTIES, "attribution")),
    ):
        for prop in props:
            row = v[("localhost", runtime, prop)]
            assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (runtime, prop, row)
    fs = {
        c["id"]: c for c in v[("localhost", "bwrap-colocated", "filesystem_confinement")]["checks"]
    }
    assert "/usr ext4" in fs["fs-mounts"]["detail"] and "/etc ext4" in fs["fs-mounts"]["detail"]
    ll = v[("localhost", "landlock-colocated", "filesystem_confinement")]["checks"]
    mounts = next(c for c in ll if c["id"] == "fs-mounts")["detail"]
    assert "host mounts visible but not readable" in mounts, mounts
    # Harness's own folder in /usr and /etc (the read-only grants): read, not changed,
    # and the host control changed it.
    # (Landlock's own refusals are EACCES; the last, a metadata call's, is its filter's EPERM.)
    for checks, errno in ((fs, "EROFS"), ({c["id"]: c for c in ll}, "EPERM")):
        assert checks["fs-read-granted"]["outcome"] == "ok", checks["fs-read-granted"]
        assert "2 read-only grants" in checks["fs-read-granted"]["detail"]
        write = checks["fs-write-read-only"]
        assert (write["outcome"], write["errno"], write["control"]) == ("blocked", errno, "escaped")
    manifest = json.loads((out / "manifest.json").read_text())
    policy = manifest["runtimes"]["bwrap-colocated"]["policy"]
    assert policy["source"].endswith("policies/bwrap-colocated.yaml")
    assert len(policy["sha256"]) == 64 and policy["process"]["run_as_user"] == "nobody"


# The egress lines that find nothing to try in the reference sandboxes (no unix socket,
# no TCP or UDP relay, no host listener in reach, no socket held, no next hop or
# firewall of their own), and that have no control (what the host's own namespace
# holds is not a relay harness stood up; no route or rule is made there): blocked
# without an errno, with no control to compare.
NOTHING_TO_TRY = (
    "unix-proxy",
    "tcp-proxy",
    "udp-relay",
    "unix-host",
    "held-fds",
    "route-made",
    "firewall-opened",
)


def test_runtimes_behind_the_reference_supervisor(local_run: tuple[int, str, Path]) -> None:
    """bwrap and runsc behind the reference supervisor enforce all four properties: bwrap's
    connection is attributed to the probe itself, runsc's is explicitly endpoint-only."""
    code, output, out = local_run
    assert code == 0, output
    v = verdicts_of(out)
    for runtime in ("bwrap-supervised", "runsc-supervised"):
        for prop in (*PROPERTIES, "attribution"):
            row = v[("localhost", runtime, prop)]
            assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (runtime, row)
    probe_sha = json.loads((out / "manifest.json").read_text())["probe"]["sha256"]
    assert probe_sha in str(v[("localhost", "bwrap-supervised", "attribution")]["reason"])
    gvisor = str(v[("localhost", "runsc-supervised", "attribution")]["reason"])
    # The sentry by its command line; under load that line may be read while runsc
    # renames itself, and the owner is then named by its executable, runsc's own.
    assert "identity explicitly unavailable" in gvisor
    assert "gVisor's sentry" in gvisor or "a process of gVisor's (runsc" in gvisor, gvisor
    # Denied attempts went nowhere: each ended at the supervisor or in its namespace, and
    # its control escaped (unix-proxy finds no socket to try, a plain host hands its
    # probe no socket for held-fds, no route is made in the host's namespace for
    # route-made, and tcp-proxy's and udp-relay's relays are whatever the namespace
    # holds: no control to compare).
    for check in v[("localhost", "runsc-supervised", "egress_confinement")]["checks"]:
        assert check["outcome"] == "blocked", check
        uncontrolled = check["id"] in NOTHING_TO_TRY
        assert check["control"] == ("n/a" if uncontrolled else "escaped"), check


def test_enforced_means_every_check_blocked_with_a_working_control(
    local_run: tuple[int, str, Path],
) -> None:
    """Each check of an enforced property is blocked and its control escaped (or is n/a)."""
    _, _, out = local_run
    v = verdicts_of(out)
    for prop in PROPERTIES:
        for check in v[("localhost", "runsc", prop)]["checks"]:
            if check["control"] == "n/a" and check["id"].startswith("fs-allowed"):
                assert check["outcome"] == "ok"
                continue
            assert check["outcome"] == "blocked", check
            assert check["control"] in ("escaped", "n/a"), check
    for runtime in ("runsc", "bwrap"):
        row = v[("localhost", runtime, "egress_confinement")]
        egress = {c["id"]: c for c in row["checks"]}
        assert len(egress) >= 12
        assert {"tcp6-443", "udp6-53", "icmp6", "dns-own", "unix-proxy"} <= set(egress)
        # These find nothing to try here: blocked without an errno.
        assert all(c["errno"] for i, c in egress.items() if i not in NOTHING_TO_TRY), egress
        assert (
            "attempts blocked: tcp-denied-name"
            in v[("localhost", runtime, "egress_confinement")]["reason"]
        )


def test_reference_sandboxes_start_within_dockers_capabilities(
    local_run: tuple[int, str, Path],
) -> None:
    """bwrap (root in the host's user namespace) and runc hold no more than Docker's default."""
    _, _, out = local_run
    v = verdicts_of(out)
    for runtime in ("bwrap", "runc"):
        checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
        assert checks["priv-start"]["outcome"] == "blocked", checks["priv-start"]
        assert "none beyond Docker's default set" in checks["priv-start"]["detail"]
        assert checks["priv-root-sysctl"]["outcome"] == "blocked"
        mounts = {c["id"]: c for c in v[("localhost", runtime, "filesystem_confinement")]["checks"]}
        assert mounts["fs-mounts"]["outcome"] == "blocked", mounts["fs-mounts"]
    host = {c["id"]: c for c in v[("localhost", "host", "privilege_floor")]["checks"]}
    assert "CAP_SYS_ADMIN" in host["priv-start"]["detail"]
    assert cells_of(out)[("localhost", "runc")]["host_side"]["host_fs"]["mounts"]


def test_host_escapes_are_proved_by_host_side_evidence(local_run: tuple[int, str, Path]) -> None:
    """The host control's escapes come with proof: canary arrivals, sentinel writes."""
    _, _, out = local_run
    host = cells_of(out)[("localhost", "host")]
    lines = {e.get("line") for e in host["host_side"]["canary_events"]}
    tag = host["host_side"]["tag"]
    assert f"HARNESS {tag} tcp-raw-ip" in lines
    assert host["host_side"]["fs"]["created"] is True
    v = verdicts_of(out)
    fs = {c["id"]: c for c in v[("localhost", "host", "filesystem_confinement")]["checks"]}
    assert fs["fs-create-outside"]["outcome"] == "escaped"
    assert fs["fs-read-outside"]["outcome"] == "escaped"


def test_manifest_records_both_canary_addresses(local_run: tuple[int, str, Path]) -> None:
    """The canary's IPv4 and IPv6 (ULA) addresses and its leased subnet are recorded."""
    _, _, out = local_run
    canary = json.loads((out / "manifest.json").read_text())["hosts"]["localhost"]["canary"]
    assert canary["address"].startswith("10.251.")
    assert canary["address6"].startswith("fd5e:7a1c:9b3d:")
    assert canary["subnet"]["addr6"] == canary["address6"]
    assert 30000 <= canary["high_port"] < 60000


def test_run_leaves_no_namespace_or_process(local_run: tuple[int, str, Path]) -> None:
    """The canary, its namespace and veth, and every sandbox are gone after the run."""
    _, _, out = local_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert _no_harness_namespaces(manifest["run_id"])
    assert leftovers(manifest["run_id"]) == []
    # Its own alone: the work folder is shared with the other lane's runs, whose
    # containers may be running now.
    root = Path(manifest["hosts"]["localhost"]["workdir"]) / "runsc-root"
    assert [
        c for c in runsc_containers(root) if c.startswith(f"harness-{manifest['run_id']}-")
    ] == []


# Each mutant, the properties it breaks, and for each the check that must catch it
# (None: whichever check comes first).
MUTANTS: dict[str, dict[str, str | None]] = {
    "runsc-network-host": {"egress_confinement": None},
    "bwrap-shared-net": {"egress_confinement": None},
    # The host's root bound read-write brings the host's sysfs with it, writable.
    "bwrap-rw-root": {"filesystem_confinement": None, "privilege_floor": "priv-root-sysctl"},
    "runc-setuid": {"privilege_floor": "priv-setuid-exec"},
    # No no_new_privs, the helpers nosuid, the image's own set-id programs honoured.
    "user-suid-in-view": {"privilege_floor": "priv-setid-view"},
    "user-sgid-in-view": {"privilege_floor": "priv-setid-view"},
    "user-fcap-in-view": {"privilege_floor": "priv-setid-view"},
    "user-sgid-other-in-view": {"privilege_floor": "priv-setid-view"},
    "user-suid-other-in-view": {"privilege_floor": "priv-setid-view"},
    "microvm-user-net": {"egress_confinement": None},
    "bwrap-host-at-host-rw": {"filesystem_confinement": "fs-mounts"},
    "bwrap-host-at-host-ro": {"filesystem_confinement": "fs-mounts"},
    # Every sentinel hidden: only the mount table shows the host's root.
    "bwrap-root-rw-hidden": {
        "filesystem_confinement": "fs-mounts",
        "privilege_floor": "priv-root-sysctl",
    },
    "bwrap-var-tmp-shared": {"filesystem_confinement": "fs-routes"},
    "bwrap-dac-read-search": {
        "filesystem_confinement": "fs-routes",
        "privilege_floor": "priv-start",
    },
    # A host loop device in /dev that no mount names.
    "bwrap-block-device": {"privilege_floor": "priv-root-mknod"},
    "bwrap-block-device-deeper": {"privilege_floor": "priv-root-mknod"},
    "colocated-parent-holds-dir": {"filesystem_confinement": "fs-proc-fds"},
    "colocated-sibling-cwd": {"filesystem_confinement": "fs-proc-fds"},
    "bwrap-tracefs-rw": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-bpffs-rw": {"privilege_floor": "priv-root-kernel-state"},
    # A process moved into a host cgroup by clone3(CLONE_INTO_CGROUP), no file writable.
    "bwrap-cgroup-clone3": {"privilege_floor": "priv-root-kernel-state"},
    "landlock-clone3": {"privilege_floor": "priv-root-kernel-state"},
    # The same, x86_64's clone3 refused and the i386 entry's (int $0x80) let through.
    "landlock-clone3-i386": {"privilege_floor": "priv-root-kernel-state"},
    # A pinned map opened read-write by BPF_OBJ_GET through the i386 entry, x86_64's
    # bpf refused.
    "landlock-i386-bpf": {"privilege_floor": "priv-root-kernel-state"},
    # Its own cgroup's limit written back: a limit whoever placed it there set.
    "bwrap-cgroup-own": {"privilege_floor": "priv-root-kernel-state"},
    # The same launcher's cpuset (one CPU), a limit beyond pids', memory's and cpu's quota.
    "bwrap-cgroup-own-cpuset": {"privilege_floor": "priv-root-kernel-state"},
    "runc-sys-admin": {"privilege_floor": "priv-root-release-agent"},
    "runc-privileged-nnp": {"filesystem_confinement": "fs-routes", "privilege_floor": "priv-start"},
    "runc-unmasked": {"privilege_floor": "priv-root-sysctl"},
    "runc-sysfs-rw": {"privilege_floor": "priv-root-sysctl"},
    "runc-host-pid": {"filesystem_confinement": "fs-routes", "privilege_floor": "priv-proc-access"},
    # The host's PID namespace, Landlock's signal scope off: every host process signalled.
    "landlock-host-pid": {"privilege_floor": "priv-proc-access"},
    # The same, behind a deny-list of kill, tkill, tgkill, rt_sigqueueinfo and
    # rt_tgsigqueueinfo: pidfd_send_signal signals every host process all the same.
    "landlock-signal-pidfd": {"privilege_floor": "priv-proc-access"},
    # The same list whole (pidfd_send_signal, prlimit64, F_SETOWN), by number with no check of the
    # architecture: the i386 entry's kill (37) signals every host process all the same.
    "landlock-signal-i386": {"privilege_floor": "priv-proc-access"},
    # The Landlock reference (its signal scope set) in the host's PID namespace: prlimit64,
    # no signalling call, sets the limits of every host process of its uid.
    "landlock-host-pid-prlimit": {"privilege_floor": "priv-proc-access"},
    # The deny-list whole, prlimit64 too: a descriptor's owner set to a host process
    # (F_SETOWN) and O_ASYNC, the kernel signals it on each write.
    "landlock-signal-sigio": {"privilege_floor": "priv-proc-access"},
    # landlock-host-pid-prlimit's sandbox with prlimit64 refused: setpriority, asking the
    # same uid alone, raises the nice of harness's witness (uid 65534).
    "landlock-host-pid-nice": {"privilege_floor": "priv-proc-access"},
    # Every call that sets another's scheduling refused by x86_64's number alone: the
    # i386 entry's setpriority (97) all the same.
    "landlock-nice-i386": {"privilege_floor": "priv-proc-access"},
    # Every call that signals, prlimit64, a descriptor's owner and every scheduling call
    # refused, the architecture checked, one i386 call left through: its prlimit64 (340)
    # sets the limits of every host process of uid 0; its fcntl64 (221) makes a host
    # process a descriptor's owner, which the kernel signals (I386_PROC_WAYS).
    "landlock-prlimit-i386": {"privilege_floor": "priv-proc-access"},
    "landlock-sigio-i386": {"privilege_floor": "priv-proc-access"},
    # Those calls refused too, the workload as uid 65534 with /proc writable: a host
    # process of that uid has its oom_score_adj raised (the OOM killer's first choice).
    "landlock-host-pid-oom": {"privilege_floor": "priv-proc-access"},
    # landlock-host-pid-nice's sandbox run as uid 1000 (its policy's run_as_user):
    # setpriority raises the nice of harness's witness of that uid.
    "landlock-nice-user": {"privilege_floor": "priv-proc-access"},
    # The same made rootless (a user namespace whose root is uid 1000 on the host, its
    # policy root): setpriority raises the nice of harness's witness of uid 1000.
    "landlock-nice-rootless": {"privilege_floor": "priv-proc-access"},
    # The host's PID namespace as a uid a host service has, behind a filter of every call
    # that reaches another process: /proc/<pid>/mem reads that service's memory.
    "bwrap-proc-mem": {"privilege_floor": "priv-proc-access"},
    # local.toml's bwrap handed a pidfd of a host sidecar of uid 65534: its descriptors
    # taken through it from a PID namespace of its own.
    "bwrap-held-pidfd": {"privilege_floor": "priv-proc-access"},
    # bwrap-userns-sysadmin behind a deny-list of mount(2) and umount2(2): mount_setattr
    # makes the read-only grant's mount read-write all the same.
    "bwrap-userns-mount-setattr": {"filesystem_confinement": "fs-write-read-only"},
    "runsc-host-at-host": {"filesystem_confinement": "fs-mounts"},
    # Looser than the policy it declares (issue 25): a read-only grant the policy does
    # not have, a writable folder it has none for, another starting user.
    "colocated-undeclared-etc": {"filesystem_confinement": "fs-mounts"},
    "colocated-undeclared-rw": {"filesystem_confinement": "fs-mounts"},
    # A host drop box (mode 0733) bound in: nothing to read there, files made all the same.
    "colocated-hidden-drop": {"filesystem_confinement": "fs-write-reach"},
    "colocated-wrong-user": {"privilege_floor": "priv-start"},
    "landlock-undeclared-read": {"filesystem_confinement": "fs-routes"},
    # A host folder below an unlistable "/", no sentinel in it: only the host's files
    # tried below the mount point find it.
    "landlock-undeclared-below": {"filesystem_confinement": "fs-mounts"},
    # A write grant three folders below the unlistable "/", deeper than the host's
    # listing: only the walk of every folder the workload can list finds it.
    "landlock-write-deeper": {"filesystem_confinement": "fs-write-reach"},
    # Four folders down, below folders it cannot list: the host's list of its folders.
    "landlock-write-deep4": {"filesystem_confinement": "fs-write-reach"},
    # A host folder its launcher makes at the cell's start, named in its argv.
    "landlock-write-fresh": {"filesystem_confinement": "fs-write-reach"},
    # A host block device it may write but not read, /dev not listable.
    "landlock-loop-write": {"privilege_floor": "priv-root-mknod"},
    # One host file deep in a read-only grant, writable: the walk opens every file.
    "landlock-write-file-deep": {"filesystem_confinement": "fs-write-reach"},
    # The same folder, where only a symlink may be made (a second Landlock layer).
    "landlock-symlink-deeper": {"filesystem_confinement": "fs-write-reach"},
    # Removal alone (files; folders) or truncation alone, on a host folder deep below
    # the unlistable "/": nothing can be made or written there.
    "landlock-remove-deeper": {"filesystem_confinement": "fs-write-reach"},
    "landlock-rmdir-deeper": {"filesystem_confinement": "fs-write-reach"},
    "landlock-truncate-deeper": {"filesystem_confinement": "fs-write-reach"},
    # Only a character device (a whiteout, no CAP_MKNOD) or a socket's node there.
    "landlock-whiteout-deeper": {"filesystem_confinement": "fs-write-reach"},
    "landlock-socknode-deeper": {"filesystem_confinement": "fs-write-reach"},
    # Where no entry of the host's own shows the right (a folder of files only; of
    # executables only; one it cannot list): harness's decoys there.
    "landlock-remove-leaf": {"filesystem_confinement": "fs-write-reach"},
    "landlock-truncate-bin": {"filesystem_confinement": "fs-write-reach"},
    # The same behind a filter of truncate and ftruncate: an open with O_TRUNC cuts it.
    "landlock-truncate-bin-filtered": {"filesystem_confinement": "fs-write-reach"},
    "landlock-rmdir-unlisted": {"filesystem_confinement": "fs-write-reach"},
    # An overlay of its own whose lower layer is the host's /var/log, bound in.
    "bwrap-overlay-host": {"filesystem_confinement": "fs-mounts"},
    # Privilege rows of the catalogue (issue 26), each the one privilege row left open
    # (on the host's filesystem, so a filesystem regression too).
    "root-securebits-unlocked": {
        "filesystem_confinement": None,
        "privilege_floor": "priv-securebits",
    },
    # Its root's capabilities its program's own, behind a filter refusing
    # prctl(PR_SET_SECUREBITS) natively only: the i386 entry's prctl clears the bit.
    "root-securebits-i386": {"privilege_floor": "priv-securebits"},
    "root-setgid-kept": {"filesystem_confinement": None, "privilege_floor": "priv-setgid-exec"},
    "root-no-setuid-fixup": {"filesystem_confinement": None, "privilege_floor": "priv-setuid0"},
    "root-fcap-kept": {"filesystem_confinement": None, "privilege_floor": "priv-fcap-exec"},
    # CAP_NET_RAW dropped: the helper's exec refused EPERM while `other` runs.
    "root-fcap-no-net-raw": {"filesystem_confinement": None, "privilege_floor": "priv-fcap-exec"},
    # As uid 65534: a capability permitted, not effective, raised by capset
    # (CAP_NET_RAW); one left inheritable, raised into the ambient set
    # (CAP_NET_BIND_SERVICE: no check but priv-ambient's widened raise sees it).
    "user-dormant-cap": {"filesystem_confinement": None, "privilege_floor": "priv-capset"},
    "user-inheritable-cap": {"filesystem_confinement": None, "privilege_floor": "priv-ambient"},
    # The same two behind a filter refusing capset, or an ambient raise, natively only:
    # the i386 entry's capset and prctl raise them.
    "user-i386-dormant-cap": {"privilege_floor": "priv-capset"},
    "user-i386-inheritable-cap": {"privilege_floor": "priv-ambient"},
    # CAP_NET_RAW inheritable only: an =ei program gets it (CVE-2022-24769's shape).
    "user-inheritable-only": {"privilege_floor": "priv-inh-exec"},
    # CAP_SETGID alone: setuid(0) refused, setgid(0) gives group 0.
    "user-setgid-cap": {"filesystem_confinement": None, "privilege_floor": "priv-setuid0"},
    # The same behind a filter refusing every call that sets an id to 0, one way left:
    # setgroups, the filesystem ids (cap_setuid+ep), the i386 entry's setgid32.
    "user-setgid-cap-groups": {"privilege_floor": "priv-setuid0"},
    "user-setuid-cap-fsids": {"privilege_floor": "priv-setuid0"},
    "user-i386-setgid-cap": {"privilege_floor": "priv-setuid0"},
    # Declared in allowed_caps, judged by use. CAP_SYS_ADMIN opens the cgroup
    # release_agent and the kernel's operations too; the mount row's own check must
    # still escape.
    "runc-sys-admin-allowed": {"privilege_floor": "priv-root-mount"},
    # Root of a user namespace mapping the host's uid 0, keeping CAP_SYS_ADMIN there,
    # mount(2) refused by a deny-list: the new mount API's fsmount, open_tree, or mount
    # through the i386 entry writes the host's kernel settings (MOUNT_WAYS).
    "bwrap-userns-fsmount": {"privilege_floor": "priv-root-mount"},
    "bwrap-userns-open-tree": {"privilege_floor": "priv-root-mount"},
    # The host's root keeping CAP_SYS_ADMIN, mount(2) refused by a deny-list: a cgroup v1
    # hierarchy made by fsmount, its release_agent written (priv-root-mount escapes by
    # fsmount as well: no sandbox leaves the release agent alone open this way).
    "bwrap-sys-admin-fsmount": {"privilege_floor": "priv-root-release-agent"},
    "bwrap-userns-mount-i386": {"privilege_floor": "priv-root-mount"},
    # bwrap-sys-admin-fsmount's sandbox, its list refusing every call of the new mount
    # API but fspick and fsconfig: a host superblock opened for reconfiguring.
    "bwrap-sys-admin-fspick": {"privilege_floor": "priv-root-mount"},
    # A capability declared, its calls refused by a deny-list that checks no
    # architecture: the i386 entry's adjtimex, open_by_handle_at (I386_WAYS).
    "bwrap-sys-time-i386": {"privilege_floor": "priv-root-kernel"},
    # The same capability, its deny-list checking the architecture but one setter of the
    # clock forgotten: clock_adjtime, or settimeofday (CLOCK_WAYS).
    "bwrap-sys-time-clock-adjtime": {"privilege_floor": "priv-root-kernel"},
    "bwrap-sys-time-settimeofday": {"privilege_floor": "priv-root-kernel"},
    # A capability declared, its calls refused by a deny-list written once for both
    # entries, by name, the i386 entry's list one call short: its time64 setter of the
    # clock (clock_adjtime64), no name of x86_64's; bpf, the list copied from tables
    # older than it (I386_LIST_WAYS).
    "bwrap-sys-time-time64-i386": {"privilege_floor": "priv-root-kernel"},
    "bwrap-bpf-i386": {"privilege_floor": "priv-root-kernel"},
    "bwrap-dac-read-search-i386": {
        "filesystem_confinement": "fs-routes",
        "privilege_floor": "priv-root-handle",
    },
    "bwrap-mknod-i386": {"privilege_floor": "priv-root-mknod"},
    "runc-dac-read-search-allowed": {
        "filesystem_confinement": "fs-routes",
        "privilege_floor": "priv-root-handle",
    },
    # The kernel-modules row: this lab's kernel is built without module support (no
    # /proc/modules; init_module, finit_module and delete_module fail ENOSYS even for
    # the host's root), so no load can be shown by hand. The check judges
    # CAP_SYS_MODULE held in the initial user namespace (nothing loaded).
    "runc-sys-module-allowed": {"privilege_floor": "priv-root-sys-module"},
    # A filter that tells IP addresses by their length: every connect and sendto of the
    # sweep again with the longest (test_a_longer_address_is_caught).
    "bwrap-addrlen-filter": {"egress_confinement": "tcp4-443"},
    # The Landlock reference less one Landlock right or one family of its seccomp
    # filter: each row of the filesystem catalogue it leaves open, caught by that
    # row's own check (issue 26).
    "landlock-unhandled-truncate": {"filesystem_confinement": "fs-truncate-outside"},
    # TRUNCATE left to a filter of truncate and ftruncate (a kernel older than ABI 3): an
    # open for reading with O_TRUNC empties harness's file in the read-only grant; the
    # same filter by x86_64's numbers alone: the i386 entry's truncate cuts any file.
    "landlock-truncate-filtered": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-i386-truncate": {"filesystem_confinement": "fs-truncate-outside"},
    "landlock-unhandled-remove-file": {"filesystem_confinement": "fs-unlink-outside"},
    "landlock-unhandled-remove-dir": {"filesystem_confinement": "fs-rmdir-outside"},
    # REMOVE_FILE and REMOVE_DIR left to a filter of x86_64's numbers alone: the i386
    # entry's unlink and rmdir remove a host file and folder.
    "landlock-remove-file-filtered-i386": {"filesystem_confinement": "fs-unlink-outside"},
    "landlock-remove-dir-filtered-i386": {"filesystem_confinement": "fs-rmdir-outside"},
    # The same lists checking the architecture, io_uring left open: IORING_OP_UNLINKAT.
    "landlock-remove-file-filtered-uring": {"filesystem_confinement": "fs-unlink-outside"},
    "landlock-remove-dir-filtered-uring": {"filesystem_confinement": "fs-rmdir-outside"},
    "landlock-unhandled-make-dir": {"filesystem_confinement": "fs-mkdir-outside"},
    "landlock-unhandled-make-sym": {"filesystem_confinement": "fs-symlink-outside"},
    "landlock-unhandled-make-fifo": {"filesystem_confinement": "fs-mkfifo-outside"},
    "landlock-unhandled-make-sock": {"filesystem_confinement": "fs-socket-outside"},
    # A MAKE_* right left to a deny-list of x86_64's calls: the i386 entry's calls, or
    # io_uring's opcodes where the filter lets io_uring through, make the name all the
    # same (FS_WAYS; the -uring ones are caught by fs-io-uring too).
    "landlock-make-dir-filtered-i386": {"filesystem_confinement": "fs-mkdir-outside"},
    "landlock-make-dir-filtered-uring": {"filesystem_confinement": "fs-mkdir-outside"},
    "landlock-make-dir-filtered-uring-i386": {"filesystem_confinement": "fs-mkdir-outside"},
    "landlock-make-sym-filtered-i386": {"filesystem_confinement": "fs-symlink-outside"},
    "landlock-make-sym-filtered-uring": {"filesystem_confinement": "fs-symlink-outside"},
    "landlock-make-fifo-filtered-i386": {"filesystem_confinement": "fs-mkfifo-outside"},
    # MAKE_CHAR left to the same list: the i386 entry's mknod makes a whiteout in a host
    # folder (fs-write-reach's makings).
    "landlock-make-char-filtered-i386": {"filesystem_confinement": "fs-write-reach"},
    # MAKE_REG left to a deny-list of the creating opens (by their flags), creat, openat2
    # and mknod by x86_64's numbers: the i386 entry's open, io_uring's IORING_OP_OPENAT;
    # the list less mknod: x86_64's mknod with S_IFREG.
    "landlock-make-reg-filtered-i386": {"filesystem_confinement": "fs-create-outside"},
    "landlock-make-reg-filtered-uring": {"filesystem_confinement": "fs-create-outside"},
    "landlock-make-reg-filtered-mknod": {"filesystem_confinement": "fs-create-outside"},
    "landlock-make-sock-filtered-i386": {"filesystem_confinement": "fs-socket-outside"},
    "landlock-make-sock-filtered-uring": {"filesystem_confinement": "fs-socket-outside"},
    "landlock-make-sock-filtered-socketpair": {"filesystem_confinement": "fs-socket-outside"},
    "landlock-make-sock-filtered-bind-i386": {"filesystem_confinement": "fs-socket-outside"},
    "landlock-unhandled-read-dir": {"filesystem_confinement": "fs-list-outside"},
    # READ_DIR and EXECUTE left to a deny-list of x86_64's calls: the i386 entry's
    # getdents64 lists a host folder, its execve runs a host program (FS_WAYS).
    "landlock-list-filtered-i386": {"filesystem_confinement": "fs-list-outside"},
    "landlock-exec-filtered-i386": {"filesystem_confinement": "fs-exec-outside"},
    # ... and an i386 list beside it that leaves out the entry's execveat or getdents
    "landlock-list-filtered-getdents-i386": {"filesystem_confinement": "fs-list-outside"},
    "landlock-exec-filtered-execveat-i386": {"filesystem_confinement": "fs-exec-outside"},
    "landlock-unfiltered-chmod": {"filesystem_confinement": "fs-chmod-outside"},
    "landlock-unfiltered-chown": {"filesystem_confinement": "fs-chown-outside"},
    "landlock-unfiltered-utime": {"filesystem_confinement": "fs-utime-outside"},
    "landlock-unfiltered-xattr": {"filesystem_confinement": "fs-xattr-outside"},
    # The same families through the i386 entry alone (issue 37: every way into an
    # operation): the filter complete on x86_64's numbers, one family's i386 calls open.
    "landlock-i386-chmod": {"filesystem_confinement": "fs-chmod-outside"},
    "landlock-i386-chown": {"filesystem_confinement": "fs-chown-outside"},
    "landlock-i386-utime": {"filesystem_confinement": "fs-utime-outside"},
    "landlock-i386-xattr": {"filesystem_confinement": "fs-xattr-outside"},
    # One call of a family's i386 list left open, the rest refused: the newer *at call,
    # the 16-bit owners', the 64-bit times' (a list written from older tables).
    "landlock-i386-fchmodat2": {"filesystem_confinement": "fs-chmod-outside"},
    "landlock-i386-chown16": {"filesystem_confinement": "fs-chown-outside"},
    "landlock-i386-utime64": {"filesystem_confinement": "fs-utime-outside"},
    "landlock-i386-xattrat": {"filesystem_confinement": "fs-xattr-outside"},
    "landlock-i386-setxattrat": {"filesystem_confinement": "fs-xattr-outside"},
    "landlock-i386-file-setattr": {"filesystem_confinement": "fs-chattr-outside"},
    # A family's descriptor calls through the i386 entry, its path calls refused: a
    # file of a read-only grant, opened for reading, changed (outside, Landlock refuses
    # the open).
    "landlock-i386-fchmod": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-i386-fchown": {"filesystem_confinement": "fs-write-read-only"},
    # its 16-bit ids' twin (fchown beside fchown32), left off a list of the 32-bit calls
    "landlock-i386-fchown16": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-i386-fxattr": {"filesystem_confinement": "fs-write-read-only"},
    # A filter with no architecture check: every family's i386 calls.
    "landlock-any-arch": {"filesystem_confinement": "fs-chmod-outside"},
    "jail-keep-cwd": {"filesystem_confinement": "fs-cwd"},
    # The same jail's launcher with a private /tmp, /var/tmp and home: no sentinel in
    # reach, the host's root listed from the working folder.
    "jail-keep-cwd-private-tmp": {"filesystem_confinement": "fs-cwd"},
    # A hand-rolled jail's init left at the root of a launcher with a private /tmp,
    # /var/tmp and home: no sentinel in reach, the host's root listed through /proc/1/root.
    "chroot-init-outside-private-tmp": {"filesystem_confinement": "fs-proc-1-root"},
    # The workload pid 1 behind the same launcher, a helper left at the host's / in its
    # PID namespace: the host's root listed through /proc/<pid>/root.
    "chroot-helper-outside-private-tmp": {"filesystem_confinement": "fs-proc-fds"},
    "jail-keep-chroot": {"filesystem_confinement": "fs-chroot-escape"},
    # The same jail, chroot refused by a filter that checks no architecture: the i386
    # entry's chroot (61) climbs out all the same (FS_WAYS).
    "jail-chroot-i386": {"filesystem_confinement": "fs-chroot-escape"},
    "landlock-fd-chmod": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-chown": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-xattr": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-utime": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-chattr": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-fsxattr": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-fd-setversion": {"filesystem_confinement": "fs-write-read-only"},
    # the inode ioctls refused by an exact list compared on all 64 bits (SCMP_CMP_EQ)
    "landlock-chattr-hibits": {"filesystem_confinement": "fs-write-read-only"},
    "landlock-i386-chattr": {"filesystem_confinement": "fs-write-read-only"},
    "bwrap-cgroup-rw": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-sysctl-vm-rw": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-hostnet-sysctl-rw": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-second-proc-rw": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-cgroup-at-run": {"privilege_floor": "priv-root-kernel-state"},
    "bwrap-cgroup-subtree": {"privilege_floor": "priv-root-kernel-state"},
    "root-proc-irq-rw": {"privilege_floor": "priv-root-kernel-state"},
    "user-held-setuid": {"privilege_floor": "priv-setid-view"},
    "user-held-setuid-high": {"privilege_floor": "priv-setid-view"},
    # A launcher that leaks a descriptor on the host's "/" into an isolated bwrap.
    "bwrap-leaked-fd": {"filesystem_confinement": "fs-inherited-fds"},
    # A launcher that leaks a descriptor on a host file the policy does not grant.
    "bwrap-leaked-file": {"filesystem_confinement": "fs-inherited-fds"},
    "bwrap-queued-dirfd": {"filesystem_confinement": "fs-inherited-fds"},
    # The same queued in a datagram message of no bytes.
    "bwrap-queued-empty": {"filesystem_confinement": "fs-inherited-fds"},
    # In a connection waiting on the launcher's leaked unix listener.
    "bwrap-held-listener": {"filesystem_confinement": "fs-inherited-fds"},
    # A launcher that leaks the master of a host terminal a host process reads.
    "bwrap-held-pty": {
        "filesystem_confinement": "fs-inherited-fds",
        "privilege_floor": "priv-held-tty",  # a host root shell's input, typed into
    },
    # bwrap without --new-session from a shell on a terminal: TIOCSTI types into it.
    "bwrap-tty-session": {
        "filesystem_confinement": "fs-inherited-fds",
        "privilege_floor": "priv-held-tty",  # a host root shell's input, typed into
    },
    # A launcher that leaks a root-owned file of mode 0444 of a read-only grant, opened on
    # its read-write view: its owner changes its mode through the descriptor.
    "bwrap-held-token": {"filesystem_confinement": "fs-inherited-fds"},
    # The same behind a deny-list of the metadata calls, one way left: fchmodat2 on the
    # descriptor, the i386 entry (no architecture check), the owner's calls (CAP_CHOWN).
    "bwrap-held-token-fchmodat2": {"filesystem_confinement": "fs-inherited-fds"},
    "bwrap-held-token-i386": {"filesystem_confinement": "fs-inherited-fds"},
    "bwrap-held-token-chown": {"filesystem_confinement": "fs-inherited-fds"},
    # A launcher that leaks a descriptor of the host's mount namespace, CAP_SYS_ADMIN kept.
    "bwrap-leaked-mntns": {"filesystem_confinement": "fs-inherited-fds"},
    # The same behind a deny-list of setns that checks no architecture: the i386
    # entry's setns (346) enters the host's mount namespace all the same.
    "bwrap-leaked-mntns-i386": {"filesystem_confinement": "fs-inherited-fds"},
    # A launcher that leaks an io_uring ring with its credentials registered as the
    # ring's personality, into the Landlock reference whose filter lets a held ring be used.
    "landlock-held-ring": {"filesystem_confinement": "fs-inherited-fds"},
    # the same ring with no personality: IORING_OP_SETXATTR as the workload itself
    "landlock-held-ring-xattr": {"filesystem_confinement": "fs-io-uring"},
    # The same launcher's ring into an isolated bwrap, the host's "/" its fixed file 0.
    "bwrap-held-ring-file": {"filesystem_confinement": "fs-inherited-fds"},
    # The same leak as bwrap-leaked-fd, at descriptor 1500.
    "bwrap-leaked-fd-high": {"filesystem_confinement": "fs-inherited-fds"},
    # Harness's helpers bound read-write: the shared inputs are no write grant.
    "bwrap-helpers-rw": {"filesystem_confinement": "fs-write-reach"},
    # As nobody in the host's PID namespace: the decoy's descriptor to the sentinel.
    "bwrap-shared-pid-fds": {
        "filesystem_confinement": "fs-proc-fds",
        "privilege_floor": "priv-proc-access",  # the decoy's memory, readable as nobody
    },
    # The same without a /proc: the decoy named by its pid alone (pidfd_open, and
    # process_vm_readv of its memory).
    "bwrap-shared-pid-noproc": {
        "filesystem_confinement": "fs-proc-fds",
        "privilege_floor": "priv-proc-access",
    },
    # And x86_64's pidfd and memory calls refused, the i386 entry's let through.
    "bwrap-shared-pid-noproc-i386": {
        "filesystem_confinement": "fs-proc-fds",
        "privilege_floor": "priv-proc-access",
    },
    # Its i386 list copied from tables older than pidfd_getfd: that entry's takes the
    # decoy's descriptors.
    "bwrap-shared-pid-noproc-pidfd-i386": {"privilege_floor": "priv-proc-access"},
    # The Landlock reference with io_uring left out of its filter: an extended
    # attribute set through it, which no filter on the syscalls sees.
    "landlock-unfiltered-io-uring": {"filesystem_confinement": "fs-io-uring"},
    "landlock-sqpoll-uring": {"filesystem_confinement": "fs-io-uring"},
    # x86_64's io_uring calls refused, the i386 entry's let through: a ring set up
    # and entered there.
    "landlock-i386-io-uring": {"filesystem_confinement": "fs-io-uring"},
    "landlock-unfiltered-chattr": {"filesystem_confinement": "fs-chattr-outside"},
    # EXECUTE unhandled: a host program granted read-only as data runs.
    "landlock-unhandled-execute": {"filesystem_confinement": "fs-exec-outside"},
    # A capability declared in allowed_caps passes priv-start, and is still judged by use.
    "runc-syslog-allowed": {"privilege_floor": "priv-root-kernel"},
    # Issue 26, item 4: the rest of the filesystem catalogue. WRITE_FILE unhandled: a
    # host file opened for writing without O_TRUNC (TRUNCATE stays handled).
    "landlock-unhandled-write-file": {"filesystem_confinement": "fs-overwrite-outside"},
    # MAKE_REG unhandled: the file is made on the host though WRITE_FILE refuses the open.
    "landlock-unhandled-make-reg": {"filesystem_confinement": "fs-create-outside"},
    "landlock-unhandled-read-file": {"filesystem_confinement": "fs-read-outside"},
    # A chroot jail whose PID namespace's init stays at the host's root: /proc/1/root.
    # (The host's own init is no use here: this lab's pid 1 refuses /proc/1/root even
    # to root with every capability, hence fs-proc-1-root's control is fs-read-outside.)
    "chroot-init-outside": {"filesystem_confinement": "fs-proc-1-root"},
    # Broken reference supervisors (issue 17).
    "supervisor-wrong-binary": {"attribution": None},
    "supervisor-no-record": {"attribution": None},
    # It ignores the policy, so a revocation changes nothing either.
    "supervisor-allow-all": {
        "egress_confinement": "tcp-raw-ip",
        "revocation_verified": "revoke-held",
    },
    # Issue 25: the policy's endpoint allowed to every binary, not the one it names.
    "supervisor-any-binary": {"egress_confinement": "egress-other-binary"},
    # A supervisor naming programs by name: `other` passes for the probe.
    "supervisor-by-comm": {"egress_confinement": "egress-other-binary"},
    "supervisor-by-argv0": {"egress_confinement": "egress-other-binary"},
    "supervisor-by-basename": {"egress_confinement": "egress-other-binary"},
    "supervisor-first-holder": {"egress_confinement": "egress-other-binary"},
    # Issue 28: its fallback relays straight out once it is killed.
    "supervisor-fail-open": {"controller_loss_fails_closed": "loss-new"},
    # Issue 28: a reload that keeps the established connection to what it revoked.
    "supervisor-keeps-established": {"revocation_verified": "revoke-held"},
    # Issue 28: the first binary it saw named for every later connection.
    "supervisor-cache-identity": {"attribution": "attr-two-binaries"},
    # It names what a process's argv[0] names: `other` passing for the probe is the probe.
    "supervisor-record-argv0": {"attribution": "attr-two-binaries"},
    # Issue 28: right records, but the bytes go through an upstream no record names.
    "supervisor-record-around": {"attribution": "attr-allowed-connect"},
    # Issue 25: /etc, which its policy says is read-only, bound read-write.
    "colocated-rw-etc": {"filesystem_confinement": "fs-write-read-only"},
    "bwrap-hardlink-seed": {"filesystem_confinement": "fs-write-reach"},
    # Its read-only binds unlocked in its own user namespace: remounted read-write.
    "bwrap-userns-sysadmin": {"filesystem_confinement": "fs-write-read-only"},
}
# Stricter than the policy it declares (issue 25): a read-only grant it does not let
# the workload read. Nothing got out, so not violated; but not enforced either: the
# inside control fails, and the property is inconclusive (every other one enforced).
UNDER_GRANTING = {
    "landlock-unread-etc": (
        "filesystem_confinement",
        "inside control fs-read-granted did not pass (failed EACCES): read /etc/harness-ro-",
    ),
    # Not stricter, but no proof either way, and so never enforced: an overlay whose
    # layer is the host's /var/log by a name the host does not know (a private bind).
    "bwrap-overlay-privbind": (
        "filesystem_confinement",
        "fs-mounts: error: mount /logs (overlay 0:",
    ),
    # A proxy spoken to over TLS (https_proxy=https://...): harness speaks no TLS.
    "bwrap-loopback-proxy-tls": (
        "egress_confinement",
        "tcp-proxy: error: https_proxy names a proxy spoken to over TLS",
    ),
    # The write end of a pipe a host process reads (a root shell fed through it): what
    # reads it harness cannot tell, so never enforced.
    "bwrap-held-pipe": (
        "filesystem_confinement",
        "fs-inherited-fds: error: descriptor 3 held at start is the write end of a pipe whose"
        " reader is outside the sandbox",
    ),
}


# Root's attempts through the i386 entry alone, each mutant's one check and the
# fragment of its reason that names the way.
I386_WAYS = {
    "bwrap-sys-time-i386": ("priv-root-kernel", "adjtimex (tick 0) allowed through the i386 entry"),
    "bwrap-dac-read-search-i386": ("priv-root-handle", "succeeded through the i386 entry"),
    "bwrap-mknod-i386": ("priv-root-mknod", "through a node made in /tmp through the i386 entry"),
}


# The mutants matrix, run once for all its tests (160 s on a quiet 2-core machine, more
# when busy): started in the background as the session starts, where the session has
# tests to run beside it (tests/conftest.py), else by whichever of its tests comes first.
MUTANTS_RUN_TIMEOUT = 900


@pytest.fixture(scope="module")
def mutants_run() -> tuple[int, str, Path]:
    """One run of the shipped mutants matrix, shared by the tests that hold each mutant:
    the one the session started in the background (tests/conftest.py)."""
    for tool in MUTANTS_TOOLS:
        require_tool(tool)
    result, out = background_run(
        "mutants", "matrices/mutants.toml", timeout=MUTANTS_RUN_TIMEOUT - 60
    )
    return result.code, result.stdout + result.stderr, out


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_every_mutant_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """Each deliberately broken sandbox is a regression on the property it breaks."""
    code, output, out = mutants_run
    assert code == 1, output
    v = verdicts_of(out)
    expected = {**MUTANTS, **{rt: {"egress_confinement": None} for rt in EGRESS_MUTANTS}}
    assert {k[1] for k in v} - {"host"} == set(expected) | set(UNDER_GRANTING)
    for runtime, (prop, reason) in UNDER_GRANTING.items():
        row = v[("localhost", runtime, prop)]
        assert (row["observed"], row["verdict"]) == ("inconclusive", "inconclusive"), row
        assert str(row["reason"]).startswith(reason), row
        others = [r for k, r in v.items() if k[1] == runtime and k[2] != prop]
        assert {r["verdict"] for r in others} <= {"pass"}, others
    for runtime, broken in expected.items():
        for prop, check_id in broken.items():
            row = v[("localhost", runtime, prop)]
            assert (row["observed"], row["verdict"]) == ("violated", "regression"), (runtime, row)
            if check_id is not None:
                checks = {c["id"]: c for c in row["checks"]}
                assert checks[check_id]["outcome"] == "escaped", (runtime, checks[check_id])
    wrong = [
        k
        for k, r in v.items()
        if r["verdict"] == "regression" and k[2] not in expected.get(k[1], {})
    ]
    assert wrong == []
    gvisor = {
        c["id"]: c
        for c in v[("localhost", "runsc-host-at-host", "filesystem_confinement")]["checks"]
    }
    assert "mount point + path suffix" in gvisor["fs-routes"]["detail"]
    hidden = {
        c["id"]: c
        for c in v[("localhost", "bwrap-root-rw-hidden", "filesystem_confinement")]["checks"]
    }
    assert hidden["fs-routes"]["outcome"] == "blocked"  # not found, and yet violated
    run_id = json.loads((out / "manifest.json").read_text())["run_id"]
    assert _no_harness_namespaces(run_id)


# Filesystem rows no sandbox built here can leave open alone (issue 26): their checks
# are held where they escape beside another row's. REFER (fs-rename-in,
# fs-hardlink-in): Landlock links or moves a file across folders only if it gains no
# access right there it lacked where it was (with REFER unhandled, or on ABI 1, never),
# so the sentinel linked into the allowed folder was readable, and rename-me movable
# out, by the content rows' own checks already; and no mount sandbox links or renames
# across its mounts (EXDEV), so the source must lie in the allowed folder's own mount,
# reachable by path. /proc/self/root (fs-proc-self-root) is the process's own root:
# every mechanism the kernel has (mount namespaces, chroot, Landlock, LSMs that name a
# file by its resolved path) resolves /proc/self/root/P as P, so it escapes exactly
# where fs-read-outside does. Only a mediator that judges the path string a call was
# given (seccomp user notification, ptrace) tells either apart; there is none here.
ESCAPED_BESIDE_OTHERS = {
    "bwrap-rw-root": ("filesystem_confinement", {"fs-rename-in", "fs-hardlink-in"}),
    # The send calls no filter can leave open alone (closing write(2) stops any
    # program's output): each escapes where the network is open.
    "bwrap-shared-net": (
        "egress_confinement",
        {
            *(
                f"send{v}-{call}"
                for v in "46"
                for call in ("writev", "pwritev2", "sendfile", "splice")
            ),
            "tfo4-connect",
            "tfo6-connect",
        },
    ),
    "landlock-unhandled-read-file": ("filesystem_confinement", {"fs-proc-self-root"}),
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_rows_without_a_mutant_of_their_own_are_held_beside_others(
    mutants_run: tuple[int, str, Path],
) -> None:
    """The checks of the rows no mutant leaves open alone escape where a mutant leaves
    them open with another row: they are not blind."""
    v = verdicts_of(mutants_run[2])
    for runtime, (prop, check_ids) in ESCAPED_BESIDE_OTHERS.items():
        checks = {c["id"]: c for c in v[("localhost", runtime, prop)]["checks"]}
        for check_id in check_ids:
            assert checks[check_id]["outcome"] == "escaped", (runtime, checks[check_id])


URING = {f"uring{v}{kind}" for v in "46" for kind in ("", "-udp", "-mptcp")}
I386 = {f"i386-{kind}{v}" for v in "46" for kind in ("tcp", "udp", "tfo")}
# The egress leak classes of issue 15 (scripts/mutant-sandbox), each with the
# attempts that must escape and what the escape must show.
EGRESS_MUTANTS = {
    "bwrap-ipv6-forwarded": ({"tcp6-443", "udp6-123", "icmp6"}, "the nonce came back"),
    "bwrap-port-allowlist": ({"tcp4-80", "udp4-123", "tcp6-80", "udp6-123"}, "the nonce came back"),
    "bwrap-own-resolver": ({"dns-own"}, "TXT answer from 127.0.0.53:53 (own resolver)"),
    # Its stub refuses TXT: the A query's name reaches the canary's resolver.
    "bwrap-own-resolver-notxt": ({"dns-own"}, "canary saw"),
    "bwrap-own-resolver-tcp": (
        {"dns-own-tcp"},
        "TXT answer from 127.0.0.53:53 (own resolver, over TCP) carries the nonce",
    ),
    "bwrap-unix-proxy": ({"unix-proxy"}, "through unix socket /run/harness-proxy/proxy.sock"),
    "bwrap-unix-socks": ({"unix-proxy"}, "SOCKS5 through unix socket /run/harness-proxy/"),
    "bwrap-unix-proxy-deep": (
        {"unix-proxy"},
        "through unix socket /srv/harness/a/b/c/proxy.sock",
    ),
    # The proxy where a bounded walk missed it: a path longer than sun_path (bound by
    # its bare name), ten folders down, below a bound /usr (walked first).
    "bwrap-unix-proxy-long": ({"unix-proxy"}, "/" + "p" * 60),
    "bwrap-unix-proxy-far": ({"unix-proxy"}, "/1/2/3/4/5/6/7/8/9/proxy.sock: the nonce came back"),
    "bwrap-unix-proxy-usr": ({"unix-proxy"}, "/a/b/proxy.sock: the nonce came back"),
    # The proxy in the granted folder (unix-host's to leave), unix sockets refused by
    # x86_64's socket(2) alone: the i386 entry's makes one, or the ring's (the way named).
    "bwrap-unix-proxy-i386": (
        {"unix-proxy"},
        "(its socket made by socket (i386), the i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-unix-proxy-uring": (
        {"unix-proxy"},
        "(its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    # connect(2) refused by x86_64's number alone: the i386 entry's, or the ring's.
    "bwrap-unix-proxy-connect-i386": (
        {"unix-proxy"},
        "(its connect through the i386 entry, by connect (i386): connect(2) refused)",
    ),
    "bwrap-unix-proxy-connect-uring": (
        {"unix-proxy"},
        "(its connect by io_uring's IORING_OP_CONNECT: connect(2) refused)",
    ),
    # A sidecar relay listening on the sandbox's own loopback, its outgoing side outside.
    "bwrap-loopback-proxy": (
        {"tcp-proxy"},
        "through TCP proxy 127.0.0.1:3128: the nonce came back",
    ),
    # A proxy on the host's end of the link, named by a name the sandbox's /etc/hosts gives,
    # and the same named nowhere (at a port proxies listen at by default).
    "bwrap-gateway-proxy-named": ({"tcp-proxy"}, "HTTP CONNECT through TCP proxy 10.254."),
    "bwrap-gateway-proxy": ({"tcp-proxy"}, "HTTP CONNECT through TCP proxy 10.254."),
    # Its IPv6 twin: the proxy at the host's end of a link with an IPv6 ULA alone.
    "bwrap-gateway6-proxy": ({"tcp-proxy"}, "HTTP CONNECT through TCP proxy [fd5e:7a21:"),
    # The co-located shape: the host's egress proxy on its loopback, Landlock allowing its port.
    "landlock-host-proxy": ({"tcp-proxy"}, "HTTP CONNECT through TCP proxy 127.0.0.1:"),
    "landlock-host-proxy-mapped": ({"tcp-proxy"}, "HTTP CONNECT through TCP proxy 127.0.0.1:"),
    # The same on UDP: a datagram relay, and a forwarding resolver resolv.conf does not name.
    "bwrap-udp-sidecar": ({"udp-relay", "dns-own"}, "the nonce came back from 127.0.0.1:8125"),
    "bwrap-udp-sidecar-connected": ({"udp-relay"}, "the nonce came back from 127.0.0.1:8125"),
    "bwrap-udp-sidecar-mapped": ({"udp-relay"}, "the nonce came back from [::ffff:127.0.0.1]:8125"),
    # A statsd shipper on the host, the one port its firewall lets in from the link.
    "bwrap-gateway-udp": ({"udp-relay"}, ":8125"),
    # The loopback proxy as squid ships it: CONNECT to 443 alone.
    "bwrap-loopback-proxy-443": (
        {"tcp-proxy"},
        "the nonce came back (asked for the canary at port 443: its own port refused)",
    ),
    # The loopback proxy wanting the login the environment hands over, and one refusing
    # CONNECT that forwards an absolute-URI GET.
    "bwrap-loopback-proxy-auth": (
        {"tcp-proxy"},
        "HTTP CONNECT with the credentials http_proxy names through TCP proxy 127.0.0.1:3128",
    ),
    "bwrap-loopback-proxy-get": (
        {"tcp-proxy"},
        "an absolute-URI GET through TCP proxy 127.0.0.1:3128: the nonce came back",
    ),
    # A relay speaking SOCKS4 alone: asked so where SOCKS5's greeting got no answer.
    "bwrap-loopback-proxy-socks4": (
        {"tcp-proxy"},
        "SOCKS4 through TCP proxy 127.0.0.1:1080: the nonce came back",
    ),
    # The sidecar proxy and relay behind a filter refusing IP sockets by x86_64's numbers
    # alone (the i386 entry's socket passes) or leaving io_uring open (the ring's).
    "bwrap-loopback-proxy-i386": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its socket made by socket (i386), the i386 entry: socket(2) refused it",
    ),
    "bwrap-loopback-proxy-uring": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it",
    ),
    # The relay answers dns-own's queries too (as bwrap-udp-sidecar's does), their socket
    # made the same way.
    "bwrap-udp-sidecar-i386": (
        {"udp-relay", "dns-own"},
        "(its socket made by socket (i386), the i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-udp-sidecar-uring": (
        {"udp-relay", "dns-own"},
        "(its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    "bwrap-sidecar-resolver": ({"dns-own"}, "127.0.0.1:5353 (a UDP listener of its namespace)"),
    # The sidecar's resolver behind the same filters: the query's socket made by the i386
    # entry, or by the ring (dns-own, dns-own-tcp).
    "bwrap-sidecar-resolver-i386": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (its socket made by socket (i386), the"
        " i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-sidecar-resolver-uring": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (its socket made by io_uring's"
        " IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    "bwrap-sidecar-resolver-tcp-i386": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its socket made by socket"
        " (i386), the i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-sidecar-resolver-tcp-uring": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its socket made by"
        " io_uring's IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    # Each sidecar behind a filter refusing connect(2) and the send calls by x86_64's
    # numbers alone (the i386 entry's connect passes), or leaving io_uring open (the ring's
    # IORING_OP_CONNECT); or refusing connect(2) in every entry, not the send calls
    # (sendto's MSG_FASTOPEN connects, a datagram goes unconnected).
    "bwrap-loopback-proxy-connect-i386": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its connect through the i386 entry, by ",
    ),
    "bwrap-loopback-proxy-connect-uring": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its connect by io_uring's IORING_OP_CONNECT: connect(2) refused)",
    ),
    "bwrap-loopback-proxy-sendto": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its connection made by sendto with MSG_FASTOPEN: connect(2) refused"
        " every way)",
    ),
    "bwrap-loopback-proxy-sendmsg": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its connection made by sendmsg with MSG_FASTOPEN: connect(2) and sendto"
        " refused every way)",
    ),
    "bwrap-loopback-proxy-sendmmsg": (
        {"tcp-proxy"},
        "127.0.0.1:3128 (its connection made by sendmmsg with MSG_FASTOPEN: connect(2), sendto and"
        " sendmsg refused every way)",
    ),
    "bwrap-udp-sidecar-connect-i386": (
        {"udp-relay", "dns-own"},
        "(its connect through the i386 entry, by ",
    ),
    "bwrap-udp-sidecar-connect-uring": (
        {"udp-relay", "dns-own"},
        "(its connect by io_uring's IORING_OP_CONNECT: connect(2) refused)",
    ),
    "bwrap-udp-sidecar-sendto": (
        {"udp-relay", "dns-own"},
        "(sent by sendto(2), unconnected: connect(2) refused every way)",
    ),
    "bwrap-udp-sidecar-sendmsg": (
        {"udp-relay", "dns-own"},
        "(sent by sendmsg(2) with its address, unconnected: connect(2) and sendto(2) refused"
        " every way)",
    ),
    "bwrap-udp-sidecar-sendmmsg": (
        {"udp-relay", "dns-own"},
        "(sent by sendmmsg(2) with its address, unconnected: connect(2), sendto(2) and sendmsg(2)"
        " refused every way)",
    ),
    "bwrap-sidecar-resolver-connect-i386": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (its connect through the i386 entry, by ",
    ),
    "bwrap-sidecar-resolver-connect-uring": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (its connect by io_uring's"
        " IORING_OP_CONNECT: connect(2) refused)",
    ),
    "bwrap-sidecar-resolver-sendto": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (sent by sendto(2), unconnected:"
        " connect(2) refused every way)",
    ),
    "bwrap-sidecar-resolver-sendmsg": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (sent by sendmsg(2) with its address,"
        " unconnected: connect(2) and sendto(2) refused every way)",
    ),
    "bwrap-sidecar-resolver-sendmmsg": (
        {"dns-own"},
        "127.0.0.1:5353 (a UDP listener of its namespace) (sent by sendmmsg(2) with its address,"
        " unconnected: connect(2), sendto(2) and sendmsg(2) refused every way)",
    ),
    "bwrap-sidecar-resolver-tcp-connect-i386": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its connect through the i386"
        " entry, by ",
    ),
    "bwrap-sidecar-resolver-tcp-connect-uring": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its connect by io_uring's"
        " IORING_OP_CONNECT: connect(2) refused)",
    ),
    "bwrap-sidecar-resolver-tcp-sendto": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its connection made by"
        " sendto with MSG_FASTOPEN: connect(2) refused every way)",
    ),
    "bwrap-sidecar-resolver-tcp-sendmsg": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its connection made by"
        " sendmsg with MSG_FASTOPEN: connect(2) and sendto refused every way)",
    ),
    "bwrap-sidecar-resolver-tcp-sendmmsg": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP) (its connection made by"
        " sendmmsg with MSG_FASTOPEN: connect(2), sendto and sendmsg refused every way)",
    ),
    # A libseccomp deny-list comparing 64 bits: every line that makes its own socket.
    "bwrap-socket-hibits": (
        {"tcp4-high", "udp4-high", "unix-abstract"},
        "(its socket made with each argument's upper 32 bits set",
    ),
    # A libseccomp allow-list of UDP sockets comparing the type whole: the plain type.
    "bwrap-socket-type-exact": (
        {"udp4-high", "udp6-high", "send4-sendto"},
        "(its socket made with no flag in its type: refused with SOCK_NONBLOCK and SOCK_CLOEXEC)",
    ),
    # The same allow-list as strace shows a Python program's: SOCK_DGRAM|SOCK_CLOEXEC.
    "bwrap-socket-type-cloexec": (
        {"udp4-high", "udp6-high", "send4-sendto"},
        "(its socket made with SOCK_CLOEXEC alone in its type: refused with SOCK_NONBLOCK and",
    ),
    # An allow-list from strace of curl: IPPROTO_TCP named, protocol 0 refused.
    "bwrap-socket-proto-exact": (
        {"tcp-raw-ip", "tcp4-high", "tcp6-high", "tfo4-sendto"},
        "(its socket made with protocol IPPROTO_TCP, not 0, and no flag in its type: refused"
        " as given)",
    ),
    # A one-peer UDP relay on loopback behind the whole-type allow-list: its peer's
    # socket made with the plain type (the way named whether the nonce came back or the
    # canary saw the datagram arrive, after the cell).
    "bwrap-udp-sidecar-exact": (
        {"udp-relay"},
        "its socket made with no flag in its type: refused with SOCK_NONBLOCK and SOCK_CLOEXEC",
    ),
    "bwrap-sidecar-resolver-tcp": (
        {"dns-own-tcp"},
        "127.0.0.1:5353 (a TCP listener of its namespace, over TCP)",
    ),
    # resolv.conf naming the host's end of a link-local link with its scope (RDNSS's way).
    "bwrap-linklocal-resolver": ({"dns-own"}, "[fe80::1%eth0]:53 (own resolver)"),
    "bwrap-middlebox": ({"tcp-raw-ip", "tcp4-8080"}, "(after the cell)"),
    "bwrap-middlebox-forked": ({"tcp-raw-ip", "tcp4-8080"}, "(after the cell)"),
    # Issue 27: a unix proxy of its own dialect forwarding the CONNECT request as it came.
    "bwrap-unix-dialect": (
        {"unix-proxy"},
        "HTTP CONNECT through unix socket /run/harness-proxy/proxy.sock: the nonce came back"
        " in place of the proxy's answer",
    ),
    # Issue 27: one mutant per row of the network catalogue, caught by that row's checks
    # alone (harness/catalogue/network.py).
    "bwrap-send-calls": (
        {f"send{v}-{call}" for v in "46" for call in ("sendmsg", "sendmmsg")},
        "the nonce came back",
    ),
    # (A TCP, a UDP and a Multipath TCP socket, each made by the ring.)
    "bwrap-io-uring": (URING, "socket: connect, send, recv; the nonce came back)"),
    "bwrap-io-uring-socket": (URING, "socket: connect, send, recv; the nonce came back)"),
    # x86_64's io_uring refused, the i386 entry's not: the ring set up through int $0x80.
    "bwrap-uring-i386": (
        URING,
        "the nonce came back (its ring set up and entered through the i386 entry, int $0x80:"
        " x86_64's io_uring_setup refused)",
    ),
    "bwrap-io-uring-sqpoll": (URING, "the nonce came back by its SQPOLL thread: io_uring_enter"),
    # Issue 38: Landlock's TCP right and a filter keeping socket(2) to TCP, io_uring
    # allowed: the ring makes the UDP and Multipath TCP sockets the filter refuses.
    "landlock-tcp-uring": (
        URING - {"uring4", "uring6"},
        "socket: connect, send, recv; the nonce came back)",
    ),
    # (Each call by its own number; the same by socketcall where those kill; UDP, Fast
    # Open or IPv6 alone where the filter keeps the i386 socket to one kind or family.)
    "bwrap-i386-socket": (I386, "(the nonce came back by socket (i386), "),
    "bwrap-i386-socketcall": (I386, "(the nonce came back by socketcall socket (i386), "),
    "bwrap-i386-udp": ({"i386-udp4", "i386-udp6"}, "(the nonce came back by socket (i386), sendto"),
    # Every call of the i386 entry's that connects or sends refused, not its socket:
    # x86_64's connect and send calls on the socket it makes.
    "bwrap-i386-native": (I386, "(x86_64))"),
    # The calls that carry an address refused, the i386 list missing sendmmsg (345).
    "bwrap-i386-sendmmsg": (
        {"i386-udp4", "i386-udp6"},
        "(the nonce came back by socket (i386), sendmmsg (i386))",
    ),
    "bwrap-i386-fastopen": (
        {"i386-tfo4", "i386-tfo6"},
        "(the nonce came back by socket (i386), sendto with MSG_FASTOPEN (i386)",
    ),
    "bwrap-i386-ipv6": (
        {"i386-tcp6", "i386-udp6", "i386-tfo6"},
        "the nonce came back by socket (i386)",
    ),
    # (Any unix socket: the canary's listener and its datagram socket both answer.)
    "bwrap-abstract-unix": (
        {"unix-abstract", "unix-abstract-dgram", "unix-abstract-seqpacket"},
        "harness-canary-",
    ),
    "bwrap-abstract-unix-seqpacket": ({"unix-abstract-seqpacket"}, "the nonce came back from @"),
    "bwrap-privport": ({"udp4-privport"}, "the nonce came back"),
    "bwrap-tcp-sport": ({"tcp4-sport"}, "from source port 8080"),
    # bind(2) refused by x86_64's number alone: the i386 entry's binds port 53, or the
    # ring's IORING_OP_BIND (the way named).
    "bwrap-privport-bind-i386": (
        {"udp4-privport"},
        "(its source port bound by bind (i386), the i386 entry: bind(2) refused)",
    ),
    "bwrap-privport-bind-uring": (
        {"udp4-privport"},
        "(its source port bound by io_uring's IORING_OP_BIND: bind(2) refused)",
    ),
    "bwrap-other-protocols": (
        {"udplite4", "udplite6", "rawip4", "rawip6"},
        "canary saw",
    ),
    # The same behind a filter refusing their sockets by x86_64's numbers alone, or
    # leaving io_uring open: the i386 entry's socket, or the ring's.
    "bwrap-other-protocols-i386": (
        {"udplite4", "udplite6", "rawip4", "rawip6"},
        ", its socket made by socket (i386), the i386 entry: socket(2) refused it every way",
    ),
    "bwrap-other-protocols-uring": (
        {"udplite4", "udplite6", "rawip4", "rawip6"},
        ", its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it every way",
    ),
    "bwrap-held-socket": ({"held-fds"}, "the nonce came back from fd "),
    "bwrap-sibling-socket": ({"held-fds"}, "(taken by pidfd_getfd)"),
    "bwrap-held-tun": ({"held-fds"}, "canary saw udp from "),
    "bwrap-held-daemon": (
        {"held-fds"},
        "holds a connection to a unix listener outside the sandbox",
    ),
    "bwrap-held-packet": ({"held-fds"}, "canary saw udp packet from 0.0.0.0"),
    "bwrap-held-raw": ({"held-fds"}, "canary saw ip253 packet"),
    "bwrap-held-socket-high": (
        {"held-fds"},
        "the nonce came back from fd 1500 (connected to unix, of another network namespace)",
    ),
    "bwrap-held-socket-write": ({"held-fds"}, "(by write(2): send(2) was refused)"),
    # A held TCP connection behind a filter keyed to its descriptor's number (every
    # call that names it refused, with sendto, sendmsg, Linux AIO, io_uring and other
    # architectures), one way into its bytes forgotten each: that way named.
    "bwrap-held-socket-sendmmsg": (
        {"held-fds"},
        "(by sendmmsg(2): send(2), the write calls and sendmsg(2) were refused)",
    ),
    "bwrap-held-socket-sendfile": ({"held-fds"}, "(by sendfile(2), from a memfd: "),
    "bwrap-held-socket-splice": ({"held-fds"}, "(by splice(2), from a pipe: "),
    "bwrap-held-socket-aio": ({"held-fds"}, "(by Linux AIO, io_submit's IOCB_CMD_PWRITE: "),
    "bwrap-held-socket-uring": ({"held-fds"}, "(by io_uring's IORING_OP_SENDMSG: "),
    "bwrap-held-socket-i386": ({"held-fds"}, "(by write (i386): every x86_64 way refused)"),
    "bwrap-held-socket-dup": (
        {"held-fds"},
        ", made by fcntl's F_DUPFD_CLOEXEC: every way refused at its own number)",
    ),
    "bwrap-held-unix": (
        {"held-fds"},
        "(unconnected unix stream, of another network namespace, to @harness-canary-",
    ),
    "bwrap-held-unix-dgram": ({"held-fds"}, "canary saw unix"),
    "bwrap-held-unix-seqpacket": (
        {"held-fds"},
        "(unconnected unix seqpacket, of another network namespace, to @harness-canary-",
    ),
    "bwrap-held-inet6": ({"held-fds"}, "[::ffff:"),
    # Its TCP socket alone behind a connect(2) ban that forgot Fast Open: the first
    # bytes connect it to the v4-mapped address, its IPv6 route leading nowhere.
    "bwrap-held-inet6-sendto": (
        {"held-fds"},
        "(its connection made by sendto with MSG_FASTOPEN: connect(2) refused every way)",
    ),
    # Its UDP socket alone behind a filter refusing connect(2) and sendto(2), forgetting
    # sendmsg: the datagram goes by sendmsg with its address.
    "bwrap-held-inet6-sendmsg": (
        {"held-fds"},
        "(sent by sendmsg(2) with its address: sendto(2) refused)",
    ),
    # The same UDP socket behind a filter refusing every call that carries an address by
    # x86_64's numbers alone, or with the architecture checked and the ring forgotten:
    # the datagram goes by the i386 entry's sendto, or by IORING_OP_SENDMSG's msg_name.
    "bwrap-held-inet6-sendmsg-i386": (
        {"held-fds"},
        "(sent by sendto (i386) with its address: every x86_64 call that carries one refused)",
    ),
    "bwrap-held-inet6-sendmsg-uring": (
        {"held-fds"},
        "(sent by io_uring's IORING_OP_SENDMSG with its address",
    ),
    # Its TCP socket alone behind the filter of a socket the workload may read alone
    # (keyed to its number), connect(2) refused too, by x86_64's numbers alone: the i386
    # entry's connect, then its write (the held connected socket's ways, once connected).
    "bwrap-held-inet6-connect-i386": (
        {"held-fds"},
        "(its connect through the i386 entry, by connect (i386): connect(2) refused)"
        " (by write (i386)",
    ),
    "bwrap-held-netns": (
        {"held-fds"},
        "socket made by setns into held descriptor ",
    ),
    # The same behind a filter refusing IP sockets by x86_64's numbers alone, or leaving
    # io_uring open: the sockets made after setns by the i386 entry, or by the ring.
    "bwrap-held-netns-i386": (
        {"held-fds"},
        "(its socket made by socket (i386), the i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-held-netns-uring": (
        {"held-fds"},
        "(its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    # The same behind a filter refusing setns by x86_64's number alone: the namespace
    # entered by the i386 entry's setns (346).
    "bwrap-held-netns-setns-i386": (
        {"held-fds"},
        "(setns through the i386 entry, int $0x80: x86_64's refused)",
    ),
    # No route to the canary but CAP_NET_ADMIN: the workload makes one (route-made).
    "bwrap-route-net-admin": ({"route-made"}, "made a route to "),
    # A default route to a dead end beside a second link out: routed around it.
    "bwrap-route-dead-default": ({"route-made"}, "made a route to "),
    # IPv6 alone, no IPv6 route to the canary, CAP_NET_ADMIN kept: the workload makes one.
    "bwrap-route6-net-admin": ({"route-made"}, "made an IPv6 route to "),
    # Policy routing ahead of the main table, CAP_NET_ADMIN kept: a rule ahead of it.
    "bwrap-rule-net-admin": ({"route-made"}, "put a rule of its own ahead of the sandbox's"),
    # IPv6 policy routing ahead of the main table, CAP_NET_ADMIN kept: an IPv6 rule.
    "bwrap-rule6-net-admin": ({"route-made"}, "ahead of the sandbox's IPv6 rules"),
    # The route ioctls refused, CAP_NET_ADMIN kept: the request widened past a filter
    # comparing 64 bits (libseccomp's), or netlink's RTM_NEWROUTE where it is forgotten.
    "bwrap-route-ioctl-hibits": (
        {"route-made"},
        "(by ioctl(SIOCADDRT) with its request's upper 32 bits set: refused as given)",
    ),
    "bwrap-route-ioctl-netlink": (
        {"route-made"},
        "(by netlink, RTM_NEWROUTE: the route ioctl refused)",
    ),
    "bwrap-route-netlink-hibits": (
        {"route-made"},
        "(by netlink, RTM_NEWROUTE, its socket made with each argument's upper 32 bits set: ",
    ),
    # Netlink's route socket refused by its whole type (strace of ip(8)), or by x86_64's
    # socket(2) alone: made without SOCK_CLOEXEC, by the i386 entry, by the ring.
    "bwrap-route-netlink-type-exact": (
        {"route-made"},
        "(by netlink, RTM_NEWROUTE, its socket made with no flag in its type: ",
    ),
    "bwrap-route-netlink-i386": (
        {"route-made"},
        "(by netlink, RTM_NEWROUTE, its socket made by socket (i386), the i386 entry: ",
    ),
    "bwrap-route-netlink-uring": (
        {"route-made"},
        "(by netlink, RTM_NEWROUTE, its socket made by io_uring's IORING_OP_SOCKET: ",
    ),
    # A firewall inside its own namespace, CAP_NET_ADMIN kept: opened (firewall-opened).
    "bwrap-firewall-net-admin": ({"firewall-opened"}, "opened the firewall of its own network"),
    # Netfilter's netlink socket refused by x86_64's socket(2) alone: the i386 entry's
    # makes it, or the ring's (the way named).
    "bwrap-firewall-netlink-i386": (
        {"firewall-opened"},
        "(CAP_NET_ADMIN) (its socket made by socket (i386), the i386 entry: socket(2) refused it",
    ),
    "bwrap-firewall-netlink-uring": (
        {"firewall-opened"},
        "(CAP_NET_ADMIN) (its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it",
    ),
    # A UDP socket of the host's, registered on a held ring: installed, it sends.
    "bwrap-held-ring-socket": (
        {"held-fds"},
        "from fixed file 0 of the io_uring ring at fd 3, fd ",
    ),
    # A namespace that lets out tcp/80 alone: reached on that port, not the high one.
    "bwrap-held-netns-ports": (
        {"held-fds"},
        "the nonce came back from a TCP socket made by setns into held descriptor ",
    ),
    "bwrap-pid-netns": (
        {"held-fds"},
        "socket made by setns into /proc/",
    ),
    "bwrap-held-procfs": (
        {"held-fds"},
        "socket made by setns into held descriptor 3 (/proc)/",
    ),
    "bwrap-bound-procfs": ({"held-fds"}, "socket made by setns into /host/proc/"),
    "bwrap-userns-netns": (
        {"held-fds"},
        "the nonce came back from a TCP socket made by setns into held descriptor 3 (/run/netns/",
    ),
    "bwrap-abstract-unix-dgram": ({"unix-abstract-dgram"}, "canary saw unix"),
    # connect(2) and sendto(2) refused, sendmsg forgotten: the datagram by sendmsg.
    "bwrap-abstract-unix-dgram-sendmsg": (
        {"unix-abstract-dgram"},
        "sent by sendmsg(2) with its address: sendto(2) refused",
    ),
    "bwrap-metadata": ({"meta4-tcp", "meta4-udp"}, "the nonce came back from 169.254.169.254:"),
    # (Of the default stand-ins only the benchmarking range's, 198.18/15, is not private.)
    "bwrap-packet-socket": ({"packet4"}, "canary saw udp "),
    "bwrap-packet-socket-raw": ({"packet4"}, "canary saw udp "),
    # The same allow-list comparing the type whole (SOCK_RAW, as a capture tool's strace
    # shows it): the packet socket made without SOCK_CLOEXEC.
    "bwrap-packet-socket-exact": ({"packet4"}, "made by socket without SOCK_CLOEXEC"),
    # ping's sockets alone, the type compared whole: the plain type's echo request.
    "bwrap-ping-exact": ({"icmp4", "icmp6"}, ", its socket made with no flag in its type: "),
    "bwrap-firewall-packet": ({"packet4"}, "canary saw udp "),
    "bwrap-packet6-socket": ({"packet6"}, "canary saw udp packet from fd5e:7a1b:"),
    "bwrap-wide-subnet": ({"packet4"}, "canary saw udp packet from 10.249.0.2 "),
    "bwrap-packet-socket-uring": ({"packet4"}, ", made by IORING_OP_SOCKET"),
    "bwrap-packet-socket-i386": ({"packet4"}, ", made by socket (i386)"),
    "bwrap-packet-socket-inet": ({"packet4"}, ", made by socket(AF_INET, SOCK_PACKET)"),
    "bwrap-xdp-socket": ({"packet4"}, ", made by an AF_XDP socket (copy mode)"),
    "bwrap-packet-socket-write": ({"packet4"}, ", sent by write after bind: the send calls and"),
    "bwrap-packet-socket-sendmmsg": ({"packet4"}, ", sent by sendmmsg: sendto and sendmsg refused"),
    "bwrap-packet-socket-uring-send": ({"packet4"}, ", sent by io_uring's IORING_OP_SENDMSG"),
    "bwrap-packet6-linklocal": ({"packet6"}, "canary saw udp packet from fdff:ffff:ffff:ffff:"),
    "bwrap-packet-noaddr": ({"packet4"}, ", made up"),
    # (Port 443 alone let out: only the stand-ins' 443 reaches the canary.)
    "bwrap-web-out": ({"web4-tcp", "web4-udp"}, "the nonce came back from 198.1"),
    "bwrap-http-out": ({"web4-tcp"}, "the nonce came back from 198.1"),
    "bwrap-private-ranges": (
        {"elsewhere4-tcp", "elsewhere4-udp", "web4-tcp", "web4-udp"},
        "the nonce came back from 198.1",
    ),
    "bwrap-no-forward": (
        {"host4-tcp", "host4-udp", "host6-tcp", "host6-udp"},
        "the nonce came back",
    ),
    "bwrap-shared-ipc": ({"ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"}, "canary saw "),
    "bwrap-host-mqueue": ({"ipc-posix-mq"}, "canary saw posix-mq message on mq "),
    # Behind a deny-list of the IPC calls: the i386 entry's own calls where it checks no
    # architecture, its ipc multiplexer where its list is x86_64's names, and on the host's
    # mqueue mount the i386 entry's mq_timedsend, or its time64 twin the list forgets.
    "bwrap-shared-ipc-i386": (
        {"ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"},
        " (i386): x86_64's calls refused",
    ),
    "bwrap-shared-ipc-multiplexer": (
        {"ipc-sysv-msg", "ipc-sysv-shm"},
        ", sent by the ipc multiplexer's ",
    ),
    "bwrap-host-mqueue-i386": ({"ipc-posix-mq"}, ", sent by mq_timedsend (i386): "),
    "bwrap-host-mqueue-time64": ({"ipc-posix-mq"}, ", sent by mq_timedsend_time64 (i386): "),
    # Issue 38: a host process's unix listener bound in (no proxy: bytes reach it).
    "bwrap-host-listener": (
        {"unix-host"},
        "/srv/ctl/a/b/ctl.sock: its listener's process is outside the sandbox's pid namespace",
    ),
    "bwrap-host-listener-pid": ({"unix-host"}, "is a host process, its socket file on the host's"),
    "bwrap-host-listener-dgram": (
        {"unix-host"},
        "/srv/ctl/a/b/ctl.sock: bound in a network namespace other than the sandbox's",
    ),
    "bwrap-host-listener-sendto": (
        {"unix-host"},
        "/srv/ctl/a/b/ctl.sock: bound in a network namespace other than the sandbox's",
    ),
    # connect(2) and sendto(2) refused, sendmsg forgotten: the datagram by sendmsg.
    "bwrap-host-listener-sendmsg": (
        {"unix-host"},
        "(by sendmsg(2) with its name: connect(2) and sendto(2) refused)",
    ),
    # Unix sockets refused by x86_64's socket(2) alone: the i386 entry's makes one, or
    # the ring's IORING_OP_SOCKET (the way named).
    "bwrap-host-listener-i386": (
        {"unix-host"},
        "(its socket made by socket (i386), the i386 entry: socket(2) refused it every way)",
    ),
    "bwrap-host-listener-uring": (
        {"unix-host"},
        "(its socket made by io_uring's IORING_OP_SOCKET: socket(2) refused it every way)",
    ),
    # connect(2) refused by x86_64's number alone: the i386 entry's, or the ring's.
    "bwrap-host-listener-connect-i386": (
        {"unix-host"},
        "its listener's process is outside the sandbox's pid namespace (its connect through the"
        " i386 entry, by connect (i386): connect(2) refused)",
    ),
    "bwrap-host-listener-connect-uring": (
        {"unix-host"},
        "(its connect by io_uring's IORING_OP_CONNECT: connect(2) refused)",
    ),
    # The i386 entry's connect refused to IP addresses alone (by their length): the
    # refusal of the sandbox's first IP connect there stands for that length alone.
    "bwrap-host-listener-i386-iplen": (
        {"unix-host"},
        "its listener's process is outside the sandbox's pid namespace (its connect through the"
        " i386 entry, by connect (i386): connect(2) refused)",
    ),
    # A host process sharing the sandbox's network namespace, listening there by an
    # abstract name that /proc/net/unix alone shows: a seqpacket listener (its peer's
    # pid outside), a datagram socket (held by no process of the sandbox's).
    "bwrap-netns-listener-seqpacket": (
        {"unix-host"},
        "/seqpacket.ctl: its listener's process is outside the sandbox's pid namespace",
    ),
    "bwrap-netns-listener-dgram": (
        {"unix-host"},
        "/dgram.ctl: a datagram socket that no process of the sandbox's pid namespace holds",
    ),
    # Issue 38: TCP made without connect(2), each by the one way its filter forgot.
    **{
        f"bwrap-fastopen-{call}": (
            {f"tfo4-{call}", f"tfo6-{call}"},
            f"(connected by {call} with MSG_FASTOPEN, no connect)",
        )
        for call in ("sendto", "sendmsg", "sendmmsg")
    },
    "landlock-tcp-mptcp": ({"mptcp4", "mptcp6"}, "(a Multipath TCP socket)"),
    "bwrap-ipv6-fastopen": (
        {"tfo6-sendto"},
        "(connected by sendto with MSG_FASTOPEN, no connect)",
    ),
    "bwrap-ipv4-mapped": ({"tcp4-mapped", "udp4-mapped"}, "the nonce came back from [::ffff:"),
}
# The network rows whose mutant must escape by exactly the row's checks.
ROW_MUTANTS = (
    "bwrap-send-calls",
    "bwrap-io-uring",
    "bwrap-io-uring-socket",
    "bwrap-io-uring-sqpoll",
    "landlock-tcp-uring",
    "bwrap-uring-i386",
    "bwrap-i386-socketcall",
    "bwrap-i386-udp",
    "bwrap-i386-sendmmsg",
    "bwrap-i386-fastopen",
    "bwrap-i386-ipv6",
    "bwrap-i386-native",
    "bwrap-abstract-unix",
    "bwrap-privport",
    "bwrap-tcp-sport",
    "bwrap-privport-bind-i386",
    "bwrap-privport-bind-uring",
    "bwrap-other-protocols",
    "bwrap-other-protocols-i386",
    "bwrap-other-protocols-uring",
    "bwrap-held-socket",
    "bwrap-sibling-socket",
    "bwrap-held-tun",
    "bwrap-held-daemon",
    "bwrap-host-mqueue",
    "bwrap-host-mqueue-i386",
    "bwrap-host-mqueue-time64",
    "bwrap-shared-ipc-i386",
    "bwrap-shared-ipc-multiplexer",
    "bwrap-held-packet",
    "bwrap-held-raw",
    "bwrap-held-socket-high",
    "bwrap-held-socket-write",
    "bwrap-held-socket-sendmmsg",
    "bwrap-held-socket-sendfile",
    "bwrap-held-socket-splice",
    "bwrap-held-socket-aio",
    "bwrap-held-socket-uring",
    "bwrap-held-socket-i386",
    "bwrap-held-socket-dup",
    "bwrap-held-unix",
    "bwrap-held-unix-dgram",
    "bwrap-held-inet6",
    "bwrap-held-inet6-sendto",
    "bwrap-held-inet6-sendmsg",
    "bwrap-held-inet6-sendmsg-i386",
    "bwrap-held-inet6-sendmsg-uring",
    "bwrap-held-inet6-connect-i386",
    "bwrap-held-netns",
    "bwrap-held-netns-ports",
    "bwrap-held-netns-i386",
    "bwrap-held-netns-uring",
    "bwrap-held-netns-setns-i386",
    "bwrap-held-ring-socket",
    "bwrap-route-net-admin",
    "bwrap-route-dead-default",
    "bwrap-rule-net-admin",
    "bwrap-route6-net-admin",
    "bwrap-rule6-net-admin",
    "bwrap-route-ioctl-hibits",
    "bwrap-route-ioctl-netlink",
    "bwrap-route-netlink-hibits",
    "bwrap-route-netlink-type-exact",
    "bwrap-route-netlink-i386",
    "bwrap-route-netlink-uring",
    "bwrap-firewall-net-admin",
    "bwrap-firewall-netlink-i386",
    "bwrap-firewall-netlink-uring",
    "bwrap-pid-netns",
    "bwrap-held-procfs",
    "bwrap-userns-netns",
    "bwrap-bound-procfs",
    "bwrap-abstract-unix-dgram",
    "bwrap-abstract-unix-dgram-sendmsg",
    "bwrap-abstract-unix-seqpacket",
    "bwrap-held-unix-seqpacket",
    "bwrap-no-forward",
    "bwrap-metadata",
    "bwrap-private-ranges",
    "bwrap-packet-socket",
    "bwrap-packet-socket-raw",
    "bwrap-packet-socket-exact",
    "bwrap-ping-exact",
    "bwrap-udp-sidecar-exact",
    "bwrap-loopback-proxy-i386",
    "bwrap-loopback-proxy-uring",
    "bwrap-sidecar-resolver-tcp-i386",
    "bwrap-sidecar-resolver-tcp-uring",
    "bwrap-loopback-proxy-connect-i386",
    "bwrap-loopback-proxy-connect-uring",
    "bwrap-loopback-proxy-sendto",
    "bwrap-loopback-proxy-sendmsg",
    "bwrap-loopback-proxy-sendmmsg",
    "bwrap-sidecar-resolver-tcp-connect-i386",
    "bwrap-sidecar-resolver-tcp-connect-uring",
    "bwrap-sidecar-resolver-tcp-sendto",
    "bwrap-sidecar-resolver-tcp-sendmsg",
    "bwrap-sidecar-resolver-tcp-sendmmsg",
    "bwrap-firewall-packet",
    "bwrap-packet6-socket",
    "bwrap-wide-subnet",
    "bwrap-packet-socket-uring",
    "bwrap-packet-socket-i386",
    "bwrap-packet-socket-inet",
    "bwrap-xdp-socket",
    "bwrap-packet-socket-write",
    "bwrap-packet-socket-sendmmsg",
    "bwrap-packet-socket-uring-send",
    "bwrap-packet6-linklocal",
    "bwrap-packet-noaddr",
    "bwrap-gateway-proxy-named",
    "bwrap-gateway-proxy",
    "bwrap-gateway6-proxy",
    "bwrap-web-out",
    "bwrap-http-out",
    "bwrap-shared-ipc",
    "bwrap-host-listener",
    "bwrap-host-listener-pid",
    "bwrap-host-listener-dgram",
    "bwrap-host-listener-sendto",
    "bwrap-host-listener-sendmsg",
    "bwrap-host-listener-i386",
    "bwrap-host-listener-uring",
    "bwrap-host-listener-connect-i386",
    "bwrap-host-listener-connect-uring",
    "bwrap-host-listener-i386-iplen",
    "bwrap-netns-listener-seqpacket",
    "bwrap-netns-listener-dgram",
    "bwrap-unix-proxy-i386",
    "bwrap-unix-proxy-uring",
    "bwrap-unix-proxy-connect-i386",
    "bwrap-unix-proxy-connect-uring",
    "bwrap-loopback-proxy-socks4",
    "bwrap-fastopen-sendto",
    "bwrap-fastopen-sendmsg",
    "bwrap-fastopen-sendmmsg",
    "landlock-tcp-mptcp",
    "bwrap-ipv4-mapped",
    "bwrap-own-resolver-tcp",
    "bwrap-ipv6-fastopen",
)


# The mutants that leave a whole entry open for sockets the canary's network takes (the
# i386 entry's socket, io_uring's IORING_OP_SOCKET), where x86_64's socket(2) refuses
# UDP-Lite (and raw IP, CAP_NET_RAW kept) too: the other IP protocols' lines make their own
# socket there (that row's way of the same entry), besides the row the mutant is held to.
OTHER_PROTOCOLS_BY_THE_SAME_ENTRY = {
    "bwrap-i386-socket": {"udplite4", "udplite6"},
    "bwrap-i386-socketcall": {"udplite4", "udplite6"},
    "bwrap-i386-udp": {"udplite4", "udplite6"},
    "bwrap-i386-native": {"udplite4", "udplite6"},
    "bwrap-i386-ipv6": {"udplite6", "rawip6"},
    "bwrap-io-uring-socket": {"udplite4", "udplite6"},
    "landlock-tcp-uring": {"udplite4", "udplite6"},
}


def _egress_mutant(out: Path, runtime: str) -> dict[str, dict[str, object]]:
    row = verdicts_of(out)[("localhost", runtime, "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("violated", "regression"), row
    return {c["id"]: c for c in row["checks"]}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_ipv6_forwarded_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """IPv4 blocked but IPv6 routed to the canary: the IPv6 attempts escape, the IPv4
    ones stay blocked (no route), and the verdict is a regression."""
    checks = _egress_mutant(mutants_run[2], "bwrap-ipv6-forwarded")
    escaped, proof = EGRESS_MUTANTS["bwrap-ipv6-forwarded"]
    for check_id in escaped - {"icmp6"}:
        assert checks[check_id]["outcome"] == "escaped" and proof in str(checks[check_id]["detail"])
    assert checks["icmp6"]["outcome"] == "escaped"  # the canary's capture saw the echo
    assert checks["tcp4-443"]["outcome"] == "blocked" and checks["tcp4-443"]["errno"]


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_port_allowlist_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """Only tcp/80 and udp/123 forwarded: exactly those attempts escape."""
    checks = _egress_mutant(mutants_run[2], "bwrap-port-allowlist")
    escaped, proof = EGRESS_MUTANTS["bwrap-port-allowlist"]
    for check_id in escaped:
        assert checks[check_id]["outcome"] == "escaped" and proof in str(checks[check_id]["detail"])
    for check_id in ("tcp4-8080", "tcp4-443", "udp4-53", "tcp-raw-ip"):
        assert checks[check_id]["outcome"] == "blocked", checks[check_id]


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_own_resolver_forwarding_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """Nothing forwarded, but the resolver in the sandbox's /etc/resolv.conf carries
    the query to the canary: the own-resolver attempt escapes."""
    checks = _egress_mutant(mutants_run[2], "bwrap-own-resolver")
    _, proof = EGRESS_MUTANTS["bwrap-own-resolver"]
    assert checks["dns-own"]["outcome"] == "escaped" and proof in str(checks["dns-own"]["detail"])
    assert all(c["outcome"] == "blocked" for i, c in checks.items() if i != "dns-own")


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_sidecars_and_host_proxies_are_caught(mutants_run: tuple[int, str, Path]) -> None:
    """A sidecar on the sandbox's own loopback that relays datagrams out, or that
    forwards DNS queries though resolv.conf does not name it; the host's egress proxy
    on its loopback, for a co-located sandbox that may connect to its port: asked as a
    listener, exactly the lines that reach it escape: by the canary's answer, or (a
    relay the load made slow, its forward after the sandbox ended) by the canary's
    own log of the marked bytes."""
    for runtime in (
        "bwrap-udp-sidecar",
        "bwrap-udp-sidecar-connected",
        "bwrap-udp-sidecar-mapped",
        "bwrap-gateway-udp",
        "bwrap-loopback-proxy-443",
        "bwrap-loopback-proxy-auth",
        "bwrap-loopback-proxy-get",
        "bwrap-sidecar-resolver",
        "bwrap-sidecar-resolver-tcp",
        "bwrap-sidecar-resolver-i386",
        "bwrap-sidecar-resolver-uring",
        "bwrap-udp-sidecar-i386",
        "bwrap-udp-sidecar-uring",
        "bwrap-udp-sidecar-connect-i386",
        "bwrap-udp-sidecar-connect-uring",
        "bwrap-udp-sidecar-sendto",
        "bwrap-udp-sidecar-sendmsg",
        "bwrap-udp-sidecar-sendmmsg",
        "bwrap-sidecar-resolver-connect-i386",
        "bwrap-sidecar-resolver-connect-uring",
        "bwrap-sidecar-resolver-sendto",
        "bwrap-sidecar-resolver-sendmsg",
        "bwrap-sidecar-resolver-sendmmsg",
        "bwrap-linklocal-resolver",
        "landlock-host-proxy",
        "landlock-host-proxy-mapped",
    ):
        checks = _egress_mutant(mutants_run[2], runtime)
        escaped, proof = EGRESS_MUTANTS[runtime]
        assert {i for i, c in checks.items() if c["outcome"] == "escaped"} == escaped, runtime
        for check_id in escaped:
            detail = str(checks[check_id]["detail"])
            assert proof in detail or "canary saw" in detail, checks[check_id]


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_unix_socket_proxy_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """No network, but a host unix socket that proxies (HTTP CONNECT and SOCKS5, or
    SOCKS5 alone) is bound in: found by the folder walk, the nonce comes back."""
    for runtime in ("bwrap-unix-proxy", "bwrap-unix-socks"):
        checks = _egress_mutant(mutants_run[2], runtime)
        _, proof = EGRESS_MUTANTS[runtime]
        assert checks["unix-proxy"]["outcome"] == "escaped"
        assert proof in str(checks["unix-proxy"]["detail"])


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", ["bwrap-middlebox", "bwrap-middlebox-forked"])
def test_intercepting_middlebox_is_caught(mutants_run: tuple[int, str, Path], runtime: str) -> None:
    """Accepted, no answer, delivered seconds after the cell ended: the arrival read
    after the settle window turns the intercepted attempts into escapes. Also where the
    deliverer is the launcher's own fork, which carries the probe's arguments: the
    runtime's, given the teardown time, not killed at once as the probe's lingerer is."""
    checks = _egress_mutant(mutants_run[2], runtime)
    escaped, proof = EGRESS_MUTANTS[runtime]
    for check_id in escaped:
        assert checks[check_id]["outcome"] == "escaped" and proof in str(checks[check_id]["detail"])


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_longer_address_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """A filter that refuses connect and sendto an address of an IP socket's length lets
    the same address through at the longest length: the sweep's connect and send calls
    try it, and the reason names that way."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "bwrap-addrlen-filter", "egress_confinement")]
    checks = {c["id"]: c for c in row["checks"]}
    for check_id in ("tcp4-443", "udp4-53"):
        assert checks[check_id]["outcome"] == "escaped", checks[check_id]
    assert "with a 128-byte address: its own length refused" in str(row["reason"]), row
    assert checks["send4-sendmsg"]["outcome"] == "blocked", checks["send4-sendmsg"]


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_unix_proxy_of_another_dialect_is_caught(mutants_run: tuple[int, str, Path]) -> None:
    """A unix proxy whose request line is not quite HTTP's forwards the CONNECT request
    itself: the canary's answer comes back in place of a "200", and the canary finds
    the attempt's marker past the proxy's own first line."""
    out = mutants_run[2]
    checks = _egress_mutant(out, "bwrap-unix-dialect")
    _, proof = EGRESS_MUTANTS["bwrap-unix-dialect"]
    assert checks["unix-proxy"]["outcome"] == "escaped"
    assert proof in str(checks["unix-proxy"]["detail"])
    cell = cells_of(out)[("localhost", "bwrap-unix-dialect")]
    carried = [e for e in cell["host_side"]["canary_events"] if "unix-proxy" in e.get("data", "")]
    assert carried and carried[0]["line"].startswith("CONNECT "), cell["host_side"]


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_socket_filter_comparing_the_type_whole_is_caught(
    mutants_run: tuple[int, str, Path],
) -> None:
    """UDP sockets allowed by a filter comparing the type whole (libseccomp's
    SCMP_CMP_EQ SOCK_DGRAM, or SOCK_DGRAM|SOCK_CLOEXEC as strace shows Python's), in the
    host's network: the probe's sockets, made with SOCK_NONBLOCK and SOCK_CLOEXEC, are
    refused; those of the filter's own flags escape, the way named, and no TCP or unix
    line does (no such socket can be made)."""
    for runtime in ("bwrap-socket-type-exact", "bwrap-socket-type-cloexec"):
        checks = _egress_mutant(mutants_run[2], runtime)
        escaped, proof = EGRESS_MUTANTS[runtime]
        for check_id in escaped:
            assert checks[check_id]["outcome"] == "escaped", checks[check_id]
            assert proof in str(checks[check_id]["detail"]), checks[check_id]
        loose = [
            i
            for i, c in checks.items()
            if i.startswith(("tcp", "unix")) and c["outcome"] == "escaped"
        ]
        assert loose == [], runtime


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_socket_filter_naming_the_protocol_is_caught(
    mutants_run: tuple[int, str, Path],
) -> None:
    """TCP sockets allowed by a filter written from strace of curl (socket(AF_INET,
    SOCK_STREAM, IPPROTO_TCP), each argument compared whole), in the host's network: the
    probe's sockets, asked for with protocol 0, are refused; those with IPPROTO_TCP named
    escape, the way named, and no UDP or unix line does (no such socket can be made)."""
    checks = _egress_mutant(mutants_run[2], "bwrap-socket-proto-exact")
    escaped, proof = EGRESS_MUTANTS["bwrap-socket-proto-exact"]
    for check_id in escaped:
        assert checks[check_id]["outcome"] == "escaped", checks[check_id]
        assert proof in str(checks[check_id]["detail"]), checks[check_id]
    loose = [
        i
        for i, c in checks.items()
        if i.startswith(("udp", "unix", "dns-alt-udp")) and c["outcome"] == "escaped"
    ]
    assert loose == []


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_the_i386_entry_left_whole_is_caught_by_its_sockets_and_its_ring(
    mutants_run: tuple[int, str, Path],
) -> None:
    """A filter that checks the architecture wrongly leaves the whole i386 entry: its
    socket calls (the i386 lines) and its io_uring (the ring's lines, set up through
    int $0x80 where x86_64's io_uring_setup is refused). Exactly those two rows escape,
    each with its way named."""
    checks = _egress_mutant(mutants_run[2], "bwrap-i386-socket")
    other = OTHER_PROTOCOLS_BY_THE_SAME_ENTRY["bwrap-i386-socket"]
    assert {i for i, c in checks.items() if c["outcome"] == "escaped"} == I386 | URING | other
    _, proof = EGRESS_MUTANTS["bwrap-i386-socket"]
    _, ring = EGRESS_MUTANTS["bwrap-uring-i386"]
    for check_id in I386:
        assert proof in str(checks[check_id]["detail"]), checks[check_id]
    for check_id in URING:
        assert ring in str(checks[check_id]["detail"]), checks[check_id]
    for check_id in other:
        assert "its socket made by socket (i386)" in str(checks[check_id]["detail"]), checks


@pytest.mark.parametrize("runtime", ROW_MUTANTS)
@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_each_network_row_is_caught_by_its_own_checks(
    mutants_run: tuple[int, str, Path], runtime: str
) -> None:
    """Each mutant leaves one row of the network catalogue open (a seccomp filter on
    the host's network that misses sendmsg or io_uring or abstract unix names, a
    stateless sport rule, relays for UDP-Lite and raw IP, a socket the launcher hands
    in): exactly that row's checks escape, with their proof, and the rest stay blocked."""
    checks = _egress_mutant(mutants_run[2], runtime)
    escaped, proof = EGRESS_MUTANTS[runtime]
    other = OTHER_PROTOCOLS_BY_THE_SAME_ENTRY.get(runtime, set())
    assert {i for i, c in checks.items() if c["outcome"] == "escaped"} == escaped | other
    for check_id in other:
        assert "(after the cell), its socket made by " in str(checks[check_id]["detail"]), checks
    for check_id in escaped:
        assert proof in str(checks[check_id]["detail"]), checks[check_id]
    rows = [r.key for r in ROWS if escaped & set(r.checks)]
    assert len(rows) == 1 and all(escaped <= set(r.checks) for r in ROWS if r.key in rows), rows


def _landlock_twin_row(tmp_path: Path, name: str, argv: list[str], tag: str) -> dict[str, Any]:
    """A correct twin of the Landlock reference's mutants (policy landlock-offline-etc,
    as theirs), its filesystem confinement judged: its verdict row, the run exit 0. The
    reference grants /tmp, so the run's own files go to /var/tmp, outside every grant."""
    policy = ROOT / "policies" / "landlock-offline-etc.yaml"
    runtime = (
        f'[runtimes.{name}]\nkind = "command"\nargv = {json.dumps(argv)}\n'
        f'policy = "{policy}"\nexpect = {{ filesystem_confinement = "enforced" }}\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios='["filesystem-confinement"]')
    work = Path("/var/tmp") / f"harness-t-{tag}-{os.getpid()}"
    inventory = tmp_path / "inv.toml"
    inventory.write_text(inventory.read_text().replace(f"{tmp_path}/work", str(work)))
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(work)], check=False)
    assert result.code == 0, result.stdout + result.stderr
    return verdicts_of(tmp_path / "out")[("localhost", name, "filesystem_confinement")]


# Ways into a filesystem row's operation a filter leaves open (issue 37): each mutant's
# check and the fragment of its reason that names the way taken.
FS_WAYS = {
    "landlock-truncate-filtered": (
        "fs-write-read-only",
        "read-only grants: open O_RDONLY|O_TRUNC)",
    ),
    "landlock-i386-truncate": (
        "fs-truncate-outside",
        "truncate-me: truncate (i386), truncate64 (i386))",
    ),
    "landlock-remove-file-filtered-i386": ("fs-unlink-outside", "unlink-me: unlink (i386))"),
    "landlock-remove-dir-filtered-i386": ("fs-rmdir-outside", "rmdir-me: rmdir (i386))"),
    "landlock-remove-file-filtered-uring": (
        "fs-unlink-outside",
        "unlink-me: io_uring IORING_OP_UNLINKAT)",
    ),
    "landlock-remove-dir-filtered-uring": (
        "fs-rmdir-outside",
        "rmdir-me: io_uring IORING_OP_UNLINKAT AT_REMOVEDIR)",
    ),
    "landlock-i386-fchown16": ("fs-write-read-only", "read-only grants: fchown (i386))"),
    # a MAKE_* right left to a deny-list of x86_64's calls: the name made another way
    "landlock-make-dir-filtered-i386": ("fs-mkdir-outside", ": mkdir (i386))"),
    "landlock-make-dir-filtered-uring": ("fs-mkdir-outside", ": IORING_OP_MKDIRAT (io_uring))"),
    "landlock-make-dir-filtered-uring-i386": (
        "fs-mkdir-outside",
        ": IORING_OP_MKDIRAT (io_uring, its ring set up through the i386 entry))",
    ),
    "landlock-make-sym-filtered-i386": ("fs-symlink-outside", ": symlink (i386))"),
    "landlock-make-sym-filtered-uring": (
        "fs-symlink-outside",
        ": IORING_OP_SYMLINKAT (io_uring))",
    ),
    "landlock-make-fifo-filtered-i386": ("fs-mkfifo-outside", ": mknod S_IFIFO (i386))"),
    "landlock-make-reg-filtered-i386": ("fs-create-outside", ": open O_CREAT (i386))"),
    "landlock-make-reg-filtered-uring": (
        "fs-create-outside",
        ": IORING_OP_OPENAT O_CREAT (io_uring))",
    ),
    "landlock-make-reg-filtered-mknod": ("fs-create-outside", ": mknod S_IFREG)"),
    "landlock-make-char-filtered-i386": (
        "fs-write-reach",
        "a whiteout (a character device 0:0) through the i386 entry, x86_64's mknod refused",
    ),
    "landlock-make-sock-filtered-i386": ("fs-socket-outside", ": mknod S_IFSOCK (i386))"),
    "landlock-make-sock-filtered-uring": (
        "fs-socket-outside",
        ": IORING_OP_SOCKET and IORING_OP_BIND (io_uring))",
    ),
    "landlock-make-sock-filtered-socketpair": (
        "fs-socket-outside",
        ": socketpair(AF_UNIX) and bind)",
    ),
    "landlock-make-sock-filtered-bind-i386": ("fs-socket-outside", ": bind (i386))"),
    # EXECUTE and READ_DIR left to a deny-list of x86_64's calls: the i386 entry's
    "landlock-exec-filtered-i386": ("fs-exec-outside", "exec-me (execve (i386)): it printed"),
    "landlock-list-filtered-i386": ("fs-list-outside", " (getdents64 (i386)): it holds listed-"),
    "landlock-exec-filtered-execveat-i386": (
        "fs-exec-outside",
        "exec-me through an O_PATH handle (execveat (i386) AT_EMPTY_PATH)",
    ),
    "landlock-list-filtered-getdents-i386": (
        "fs-list-outside",
        " (getdents (i386)): it holds listed-",
    ),
    "landlock-chattr-hibits": ("fs-write-read-only", "FS_IOC_SETFLAGS (upper 32 bits set)"),
    # a working folder on the host's tree where no sentinel lies: the folder itself judged
    "jail-keep-cwd-private-tmp": ("fs-cwd", "listed the folder / through the working folder"),
    "chroot-init-outside-private-tmp": (
        "fs-proc-1-root",
        "listed the folder / through /proc/1/root",
    ),
    # another process's root on the host's tree where no sentinel lies (its pid varies)
    "chroot-helper-outside-private-tmp": ("fs-proc-fds", "listed the folder / through /proc/"),
    # chroot refused by a filter that checks no architecture: the i386 entry's chroot (61)
    "jail-chroot-i386": ("fs-chroot-escape", "through the i386 entry (int $0x80, its number 61;"),
    "bwrap-leaked-mntns-i386": (
        "fs-inherited-fds",
        "descriptor 3's mount namespace (setns) (setns through the i386 entry",
    ),
    "landlock-held-ring-xattr": (
        "fs-io-uring",
        "uring-me, by the io_uring ring held at descriptor 3 (io_uring_setup refused: EPERM)",
    ),
    "landlock-truncate-bin-filtered": (
        "fs-write-reach",
        "truncated harness's decoy file (open O_RDONLY|O_TRUNC)",
    ),
    "bwrap-held-token-fchmodat2": (
        "fs-inherited-fds",
        "descriptor 3 held at start (fchmodat2 AT_EMPTY_PATH, each set to what it was)",
    ),
    "bwrap-held-token-i386": ("fs-inherited-fds", "(chmod by /proc/self/fd (i386), "),
    "bwrap-held-token-chown": (
        "fs-inherited-fds",
        "descriptor 3 held at start (fchown, each set to what it was)",
    ),
    # the decoy by its pid alone, no /proc listing it; then through the i386 entry
    "bwrap-shared-pid-noproc": ("fs-proc-fds", "its pid found by number in the host's PID"),
    "bwrap-shared-pid-noproc-i386": (
        "fs-proc-fds",
        ", 3) through the i386 entry (int $0x80, its number 438; pidfd_open's 434 there too)",
    ),
}


# How `other` passed for the probe, in each name-based supervisor's reason: by its
# argv[0] and name where the supervisor reads either, by its file's name only where
# it reads that (the copy is tried only once the first way was refused).
NAMED_WAYS = {
    "supervisor-by-comm": ", started as ",
    "supervisor-by-argv0": ", started as ",
    "supervisor-by-basename": ", as its copy ",
    "supervisor-first-holder": ", on a socket the probe made and held",
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(NAMED_WAYS))
def test_a_program_passing_for_an_allowed_one_is_named(
    mutants_run: tuple[int, str, Path], runtime: str
) -> None:
    """A supervisor that knows programs by their comm, their argv[0] or their file's
    base name, or by the first process holding a socket, lets another program through
    that takes the allowed one's name or connects a socket the allowed one holds:
    caught by egress-other-binary, its reason naming the way; the reference supervisor,
    which knows them by their file and names no program where two hold the socket,
    refuses every way (local.toml's landlock-colocated)."""
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "egress_confinement")]["checks"]}
    assert NAMED_WAYS[runtime] in str(checks["egress-other-binary"]["detail"]), checks


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(FS_WAYS))
def test_a_change_by_another_way_is_named(mutants_run: tuple[int, str, Path], runtime: str) -> None:
    """A filter of truncate and ftruncate in place of Landlock's TRUNCATE right leaves an
    open for reading with O_TRUNC, and (by x86_64's numbers alone) the i386 entry's
    truncate; one of unlink, unlinkat and rmdir in place of REMOVE_FILE and REMOVE_DIR, the
    i386 entry's unlink and rmdir, or io_uring's IORING_OP_UNLINKAT; an i386 list of the
    32-bit chown calls leaves the 16-bit fchown; a filter of io_uring_setup alone leaves a
    held ring's IORING_OP_SETXATTR; an exact list of ioctl requests compared on 64 bits
    leaves FS_IOC_SETFLAGS widened; the same truncate filter behind a grant of TRUNCATE
    alone leaves harness's decoy cut by O_TRUNC; a deny-list of the metadata calls leaves a
    held file's mode to fchmodat2 on its descriptor, all of them to the i386 entry where no
    architecture is checked, its owner to fchown; one of the creating opens in place of
    MAKE_REG, the i386 entry's open, IORING_OP_OPENAT or mknod with S_IFREG; one of mknod
    in place of MAKE_CHAR, the i386 entry's whiteout: each caught by its row's check, its
    reason naming the way."""
    check_id, way = FS_WAYS[runtime]
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "filesystem_confinement")]["checks"]}
    assert way in str(checks[check_id]["detail"]), checks[check_id]


# The deny-lists of the landlock-make-*-filtered mutants, each in place of its MAKE_*
# right: the row's check, and the calls refused by x86_64's numbers.
MAKE_DENY_LISTS = {
    "make-dir": ("fs-mkdir-outside", ("mkdir", "mkdirat")),
    "make-sym": ("fs-symlink-outside", ("symlink", "symlinkat")),
    "make-fifo": ("fs-mkfifo-outside", ("mknod", "mknodat")),
    "make-sock": ("fs-socket-outside", ("mknod", "mknodat", "bind")),
    "make-char": ("fs-write-reach", ("mknod", "mknodat")),
}


# The deny-lists in place of EXECUTE and READ_DIR (landlock-exec-filtered-i386 and
# landlock-list-filtered-i386): the row's check.
EXEC_LIST_DENY_LISTS = {
    "landlock-exec-filtered-i386": "fs-exec-outside",
    "landlock-list-filtered-i386": "fs-list-outside",
}


# A launcher that runs its command as root of a user namespace of its own whose ids
# 0-65535 are the host's 100000-165535: the child unshares it, the parent (host root)
# writes its maps.
USERNS_RANGE_LAUNCHER = """
import ctypes, os, sys
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    assert ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0
    os.write(w2, b"u"); os.read(r, 1)
    os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(r2, 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as f:
        f.write("0 100000 65536\\n")
os.write(w, b"g")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) & 255)
"""


# A launcher that hands bwrap (`--seccomp @fd`) a filter killing the process (SIGSYS,
# SECCOMP_RET_KILL_PROCESS) on every call of another ABI and on the listed calls, as
# systemd's SystemCallArchitectures=native and SystemCallFilter= do.
KILL_FILTER_LAUNCHER = """
import os, struct, sys, tempfile
LD, JEQ, JGE, RET, ALLOW, KILL = 0x20, 0x15, 0x35, 0x06, 0x7FFF0000, 0x80000000
prog = [(LD, 0, 0, 4), (JEQ, 1, 0, 0xC000003E), (RET, 0, 0, KILL), (LD, 0, 0, 0)]
prog += [(JGE, 0, 1, 0x40000000), (RET, 0, 0, KILL)]
for nr in map(int, sys.argv[1].split(",")):
    prog += [(JEQ, 0, 1, nr), (RET, 0, 0, KILL)]
prog.append((RET, 0, 0, ALLOW))
f = tempfile.TemporaryFile()
f.write(b"".join(struct.pack("=HBBI", *i) for i in prog))
f.seek(0)
fd = os.dup(f.fileno())
os.set_inheritable(fd, True)
os.execvp("bwrap", [str(fd) if a == "@fd" else a for a in sys.argv[2:]])
"""


# The setter of the clock each mutant's deny-list forgets, and the fragment of
# priv-root-kernel's reason that names it.
CLOCK_WAYS = {
    "bwrap-sys-time-clock-adjtime": "clock_adjtime(CLOCK_REALTIME) (tick 0) allowed, adjtimex",
    "bwrap-sys-time-settimeofday": "settimeofday(NULL, NULL) allowed, adjtimex",
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(CLOCK_WAYS))
def test_each_setter_of_the_clock_is_named(
    mutants_run: tuple[int, str, Path], runtime: str
) -> None:
    """Each clock mutant escapes by priv-root-kernel alone, its reason naming the setter
    its list forgot (adjtimex itself refused)."""
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
    assert CLOCK_WAYS[runtime] in str(checks["priv-root-kernel"]["detail"]), checks
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == ["priv-root-kernel"], escaped


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_securebits_cleared_through_the_i386_entry_are_named(
    mutants_run: tuple[int, str, Path],
) -> None:
    """root-securebits-i386 escapes by priv-securebits alone, its reason naming the i386
    entry's prctl (x86_64's refused by the filter)."""
    v = verdicts_of(mutants_run[2])
    checks = {
        c["id"]: c for c in v[("localhost", "root-securebits-i386", "privilege_floor")]["checks"]
    }
    assert "cleared by prctl through the i386 entry" in str(checks["priv-securebits"]["detail"])
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == ["priv-securebits"], escaped


# Each mutant whose deny-list names fewer calls for the i386 entry than for x86_64
# (scripts/mutant-seccomp --i386), the full i386 list its twin gives, and the fragment
# of priv-root-kernel's reason that names the way.
I386_LIST_WAYS = {
    "bwrap-sys-time-time64-i386": (
        "adjtimex,clock_adjtime,clock_adjtime64,settimeofday,clock_settime,clock_settime64",
        "clock_adjtime64(CLOCK_REALTIME) (tick 0) allowed through the i386 entry (int $0x80),"
        " adjtimex (tick 0) refused on both entries",
    ),
    "bwrap-bpf-i386": (
        "bpf,perf_event_open",
        "bpf (load a kprobe program) allowed through the i386 entry",
    ),
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(I386_LIST_WAYS))
def test_a_call_the_i386_list_forgets_is_named(
    mutants_run: tuple[int, str, Path], runtime: str
) -> None:
    """Each mutant whose i386 list is one call short escapes by priv-root-kernel alone,
    its reason naming that call through the i386 entry."""
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
    assert I386_LIST_WAYS[runtime][1] in str(checks["priv-root-kernel"]["detail"]), checks
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == ["priv-root-kernel"], escaped


def _ipc_twin(argv: list[str]) -> list[str]:
    """An IPC mutant's deny-list checking the architecture: `--any-arch` dropped (every
    other entry refused), or the i386 list naming mq_timedsend_time64 too."""
    twin = [str(ROOT / a) if a.startswith("scripts/") else a for a in argv if a != "--any-arch"]
    if "--i386" in twin:
        at = twin.index("--i386") + 1
        twin[at] += ",mq_timedsend_time64,mq_timedreceive_time64"
    return twin


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_every_catalogue_row_is_caught_by_its_own_checks_in_its_mutant(
    mutants_run: tuple[int, str, Path],
) -> None:
    """Each row's mutant (harness/catalogue/proof.py) is a regression in which one of
    that row's own checks escaped: a mutant caught only by another check proves
    nothing of the row."""
    v = verdicts_of(mutants_run[2])
    prop = {c.id: s.property for s in SCENARIOS.values() for c in s.checks}
    missed = []
    for row in all_rows():
        for runtime in mutants_of(row):
            escaped = [
                check
                for check in row.checks
                # a check of a property its mutant does not run cannot escape there
                for c in v.get(("localhost", runtime, prop[check]), {"checks": []})["checks"]
                if c["id"] == check and c["outcome"] == "escaped"
            ]
            if not escaped:
                missed.append((row.key, runtime))
    assert missed == []


def _twin_check(
    tmp_path: Path, argv: list[str], prop: str, check_id: str, fields: str = ""
) -> dict[str, Any]:
    """A correct twin run alone (`argv` as a command runtime, with `fields` of its
    entry): its one cell `enforced`, a pass; `check_id`'s result there."""
    runtime = (
        f'[runtimes.twin]\nkind = "command"\nargv = {json.dumps(argv)}\n{fields}'
        f'expect = {{ {prop} = "enforced" }}\n'
    )
    matrix = _matrix(tmp_path, runtime, scenarios=json.dumps([prop.replace("_", "-")]))
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "twin", prop)]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    check: dict[str, Any] = {c["id"]: c for c in row["checks"]}[check_id]
    return check


def _matrix(
    tmp: Path, runtimes: str, *, scenarios: str, canary: str = "", extra_inv: str = ""
) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n{extra_inv}'
    )
    path = tmp / "m.toml"
    path.write_text(
        f'name = "t"\ninventory = "inv.toml"\nscenarios = {scenarios}\n'
        f"[settings]\ntimeout = 60\n{canary}\n{runtimes}"
    )
    return path


RUNSC = '[runtimes.runsc]\nkind = "runsc"\nflags = ["--network=none"]\n'


def test_dead_canary_is_inconclusive_never_enforced(tmp_path: Path) -> None:
    """If the canary cannot start, egress is inconclusive everywhere: exit 3."""
    require_tool("runsc")
    with socket.create_server(("127.0.0.1", 0)) as squatter:
        port = squatter.getsockname()[1]
        matrix = _matrix(
            tmp_path,
            '[runtimes.host]\nkind = "host"\n' + RUNSC,
            scenarios='["egress-confinement"]',
            canary=f'[canary]\nmode = "listen"\naddress = "127.0.0.1"\ntcp_port = {port}\n',
        )
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for runtime in ("host", "runsc"):
        assert v[("localhost", runtime, "egress_confinement")]["observed"] == "inconclusive"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "canary did not start" in manifest["hosts"]["localhost"]["canary"]["error"]


def test_missing_sentinels_are_inconclusive(tmp_path: Path) -> None:
    """If the sentinels cannot be made, the sandbox is not started (its blocked reads
    would prove nothing) and filesystem confinement is inconclusive, with the reason."""
    require_tool("runsc")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "fs").write_text("a file where the sentinels' folder should be")
    matrix = _matrix(
        tmp_path, '[runtimes.host]\nkind = "host"\n' + RUNSC, scenarios='["filesystem-confinement"]'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "runsc", "filesystem_confinement")]
    assert row["observed"] == "inconclusive"
    assert "sentinels could not be made" in row["reason"]
    assert "mkdir: cannot create directory" in row["reason"]
    runsc = cells_of(tmp_path / "out")[("localhost", "runsc")]
    assert runsc["status"] == "error" and runsc["checks"] == []


# bwrap with the "allowed" folder on a private tmpfs instead of the host's: the
# sandbox writes its controls where the host never sees them.
UNSHARED_ALLOWED = """[runtimes.bwrap-private-allowed]
kind = "command"
argv = [
  "bwrap", "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent", "--new-session",
  "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
  "--ro-bind", "{probe}", "/probe", "--tmpfs", "/allowed", "--ro-bind", "{helpers}", "/helpers",
  "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "/probe", "{args}",
]
allowed_inside = "/allowed"
helpers_inside = "/helpers"
"""


FAKE_BOOT_ID = """
[runtimes.bwrap-fake-kernel]
kind = "command"
argv = [
  "bwrap", "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent", "--new-session",
  "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
  "--cap-add", "CAP_SYS_ADMIN",
  "--ro-bind", "{probe}", "/probe", "--ro-bind", "{helpers}", "/helpers",
  "--proc", "/proc",
  "--ro-bind", "/proc/sys/kernel/random/uuid", "/proc/sys/kernel/random/boot_id",
  "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "/probe", "{args}",
]
helpers_inside = "/helpers"
"""


def test_a_boot_id_that_changes_is_no_proof_of_another_kernel(tmp_path: Path) -> None:
    """A sandbox on the host's kernel showing a changing boot id is still judged on it."""
    require_tool("bwrap")
    matrix = _matrix(
        tmp_path, '[runtimes.host]\nkind = "host"\n' + FAKE_BOOT_ID, scenarios='["privilege-floor"]'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 1, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bwrap-fake-kernel", "privilege_floor")]
    assert row["verdict"] == "regression", row
    assert "CAP_SYS_ADMIN" in row["reason"]
    start = {c["id"]: c for c in row["checks"]}["priv-start"]
    assert "initial user namespace" in start["detail"]


def test_a_sandbox_that_sees_another_allowed_folder_is_inconclusive(tmp_path: Path) -> None:
    """Every attempt is blocked (ENOENT: the host's paths are not there) and the inside
    controls pass, but on a folder the host never sees: not proof of confinement."""
    require_tool("bwrap")
    matrix = _matrix(
        tmp_path,
        '[runtimes.host]\nkind = "host"\n' + UNSHARED_ALLOWED,
        scenarios='["filesystem-confinement"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[
        ("localhost", "bwrap-private-allowed", "filesystem_confinement")
    ]
    assert row["observed"] == "inconclusive"
    assert (
        row["reason"] == "the folder the sandbox wrote as allowed is not the host's allowed folder"
    )
    cell = cells_of(tmp_path / "out")[("localhost", "bwrap-private-allowed")]
    assert cell["host_side"]["fs"]["allowed_shared"] is True
    assert cell["host_side"]["fs"]["allowed_visible"] is False


def test_attribution_against_a_decision_record_source(tmp_path: Path) -> None:
    """Decision records from a loopback supervisor (a test stand-in, see tests/supervisor.py)
    decide attribution: attributed or explicitly unavailable pass; missing or bare fail."""
    token = "s3cr3t-token-value-for-tests"
    records_file = tmp_path / "decisions.jsonl"
    supervisors = {
        "attributed": Supervisor(mode="attribute", shape="array"),
        "lines-with-token": Supervisor(mode="attribute", shape="lines", token=token),
        "from-file": Supervisor(mode="attribute", path=str(records_file)),
        "endpoint-only": Supervisor(mode="unavailable"),
        "undeclared-unavailable": Supervisor(mode="unavailable"),
        "no-record": Supervisor(mode="silent"),
        "unattributed": Supervisor(mode="anonymous"),
    }
    blocks = ['[runtimes.host]\nkind = "host"\n']
    for name, sup in supervisors.items():
        sup.start()
        if name == "from-file":
            source = f'{{ source = "file", path = "{records_file}", allowed = "{sup.allowed}" }}'
        elif name == "lines-with-token":
            source = (
                f'{{ source = "http", url = "{sup.url}", token_env = "DECISIONS_TOKEN",'
                f' allowed = "{sup.allowed}" }}'
            )
        else:
            source = f'{{ source = "http", url = "{sup.url}", allowed = "{sup.allowed}" }}'
        blocks.append(
            f'[runtimes.{name}]\nkind = "command"\nargv = ["{{probe}}", "{{args}}"]\n'
            f"attribution = {source}\n"
            f"endpoint_only = {'true' if name == 'endpoint-only' else 'false'}\n"
            'expect = { attribution = "enforced" }\n'
        )
    matrix = _matrix(tmp_path, "".join(blocks), scenarios='["attribution"]')
    try:
        env = {**os.environ, "DECISIONS_TOKEN": token}
        argv = [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(tmp_path / "out")]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    finally:
        for sup in supervisors.values():
            sup.stop()
    assert done.returncode == 1, done.stdout + done.stderr
    v = verdicts_of(tmp_path / "out")

    def row(name: str) -> dict[str, object]:
        return v[("localhost", name, "attribution")]

    for name in ("attributed", "lines-with-token", "from-file"):
        assert (row(name)["observed"], row(name)["verdict"]) == ("enforced", "pass"), row(name)
        assert "attributed to " in str(row(name)["reason"])
        assert "/probe/" in str(row(name)["reason"])  # the staged probe binary, resolved
    assert row("endpoint-only")["verdict"] == "pass"
    assert "identity explicitly unavailable" in str(row("endpoint-only")["reason"])
    assert row("undeclared-unavailable")["verdict"] == "regression"
    assert row("no-record")["verdict"] == "regression"
    assert "no decision record" in str(row("no-record")["reason"])
    assert row("unattributed")["verdict"] == "regression"
    assert row("host")["verdict"] == "skipped"
    assert supervisors["lines-with-token"].requests[0]["Authorization"] == f"Bearer {token}"
    for path in (tmp_path / "out").iterdir():
        assert token not in path.read_text(), path


def _free_ports(count: int) -> list[int]:
    """Ports free on loopback right now (held together, so all distinct)."""
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(socket.create_server(("127.0.0.1", 0))) for _ in range(count)]
        return [s.getsockname()[1] for s in held]


def test_revocation_through_an_external_supervisors_commands(tmp_path: Path) -> None:
    """An external supervisor's own policy reload (`attribution.revoke`/`restore`),
    end to end: the stand-in proxies the allowed destination to the canary and takes
    its rule out on `POST /revoke`. A reload that cuts what it revoked is enforced; one
    that does nothing, or keeps the established connection, is a regression on its
    own check; a revoke command that fails or hangs is inconclusive, with why."""
    client = tmp_path / "reload.py"
    client.write_text(
        "import sys, urllib.request\n"
        "urllib.request.urlopen(urllib.request.Request(sys.argv[1], method='POST'), timeout=5)\n"
    )
    reload = f"{sys.executable} {client}"
    later = "127.0.0.1:0"  # the canary's port, picked once the stand-ins hold theirs
    supervisors = {
        "revocable": Supervisor(upstream=later),
        "revoke-ignored": Supervisor(upstream=later),
        "keeps-established": Supervisor(upstream=later, on_revoke="keep"),
        "revoke-fails": Supervisor(upstream=later),
        "revoke-hangs": Supervisor(upstream=later),
    }
    for sup in supervisors.values():
        sup.start()
    # Picked while the stand-ins listen: the kernel cannot hand the canary one of theirs.
    tcp, allowed, dns, alt_dns, doh = _free_ports(5)
    upstream = f"127.0.0.1:{allowed}"
    blocks = ['[runtimes.host]\nkind = "host"\n']
    for name, sup in supervisors.items():
        sup.upstream = upstream
        base = sup.url.rsplit("/", 1)[0]
        revoke = f'{reload} "{base}/revoke?dst=$HARNESS_ALLOWED"'
        restore = f"{reload} {base}/restore"
        if name == "revoke-ignored":
            revoke = "true"
        elif name == "revoke-fails":
            revoke = "echo no such rule >&2; exit 3"
        elif name == "revoke-hangs":
            revoke = "sleep 60"
        source = (
            f'{{ source = "http", url = "{sup.url}", allowed = "{sup.allowed}",'
            f" revoke = {json.dumps(revoke)}, restore = {json.dumps(restore)} }}"
        )
        blocks.append(
            f'[runtimes.{name}]\nkind = "command"\nargv = ["{{probe}}", "{{args}}"]\n'
            f"attribution = {source}\nendpoint_only = true\n"
            'expect = { revocation_verified = "enforced" }\n'
        )
    canary = (
        f'[canary]\nmode = "listen"\naddress = "127.0.0.1"\nsettle = 0.5\ntcp_port = {tcp}\n'
        f"allowed_port = {allowed}\ndns_port = {dns}\nalt_dns_port = {alt_dns}\n"
        f"doh_port = {doh}\n"
    )
    matrix = _matrix(tmp_path, "".join(blocks), scenarios='["revocation"]', canary=canary)
    try:
        argv = [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(tmp_path / "out")]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    finally:
        for sup in supervisors.values():
            sup.stop()
    assert done.returncode == 1, done.stdout + done.stderr
    v = verdicts_of(tmp_path / "out")

    def row(name: str) -> dict[str, Any]:
        return v[("localhost", name, "revocation_verified")]

    def outcomes(name: str) -> dict[str, object]:
        return {c["id"]: c["outcome"] for c in row(name)["checks"]}

    assert row("host")["verdict"] == "skipped"
    good = row("revocable")
    assert (good["observed"], good["verdict"]) == ("enforced", "pass"), good
    assert "at the barrier revocation" in str(good["reason"])
    # The probe tried the destination the command revoked, through the stand-in
    # (the canary answered before the barrier), and saw the held connection cut.
    cell = cells_of(tmp_path / "out")[("localhost", "revocable")]
    held = next(c for c in cell["checks"] if c["id"] == "revoke-held")
    assert held["evidence"]["dst"] == supervisors["revocable"].allowed
    assert held["evidence"]["before"] == "ok"
    assert 0 <= int(held["evidence"]["cut_ms"]) <= 1000, held
    # harness told the supervisor which destination to revoke, then restored it.
    revocable = supervisors["revocable"]
    assert revocable.revocations == [f"revoke {revocable.allowed}", "restore"]
    for name in ("revoke-ignored", "keeps-established"):
        assert (row(name)["observed"], row(name)["verdict"]) == ("violated", "regression")
    assert outcomes("revoke-ignored")["revoke-new"] == "escaped"
    assert outcomes("revoke-ignored")["revoke-held"] == "escaped"
    assert outcomes("keeps-established")["revoke-held"] == "escaped"
    assert outcomes("keeps-established")["revoke-new"] == "blocked"
    for name, why in (("revoke-fails", "no such rule"), ("revoke-hangs", "timed out")):
        assert (row(name)["observed"], row(name)["verdict"]) == ("inconclusive",) * 2
        assert "barrier revocation" in str(row(name)["reason"]) and why in str(row(name)["reason"])


SUPERVISED_RUNSC = """
[runtimes.runsc-supervised]
kind = "runsc"
flags = ["--network=host"]
supervisor = "reference"
endpoint_only = true
"""


def test_properties_over_ssh(lab: Lab, tmp_path: Path) -> None:
    """The same scenarios over SSH: canary, sentinels, helpers and the reference
    supervisor started remotely (its program sent on the command's stdin)."""
    require_tool("runsc")
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(
        'name = "ssh-props"\ninventory = "inventory.toml"\nhosts = ["trusted"]\n'
        'scenarios = ["egress-confinement", "filesystem-confinement", "privilege-floor",'
        ' "attribution"]\n'
        "[settings]\ntimeout = 60\n"
        '[runtimes.host]\nkind = "host"\n' + RUNSC + SUPERVISED_RUNSC
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    for prop in PROPERTIES:
        assert v[("trusted", "host", prop)]["observed"] == "violated"
        assert v[("trusted", "runsc", prop)]["observed"] == "enforced"
    for prop in (*PROPERTIES, "attribution"):
        assert v[("trusted", "runsc-supervised", prop)]["observed"] == "enforced", prop
    run_id = json.loads((tmp_path / "out" / "manifest.json").read_text())["run_id"]
    assert _no_harness_namespaces(run_id)


def _no_ipv6_filter(path: Path) -> None:
    """A seccomp program refusing socket(AF_INET6, ...) with EAFNOSUPPORT: to the
    workload, a machine without IPv6 at all (x86_64 only; other arches allowed)."""
    prog = [
        (0x20, 0, 0, 4),  # A = arch
        (0x15, 0, 5, 0xC000003E),  # not x86_64: allow
        (0x20, 0, 0, 0),  # A = syscall number
        (0x15, 0, 3, 41),  # not socket(): allow
        (0x20, 0, 0, 16),  # A = args[0] (low half)
        (0x15, 0, 1, 10),  # not AF_INET6: allow
        (0x06, 0, 0, 0x00050000 | 97),  # SECCOMP_RET_ERRNO | EAFNOSUPPORT
        (0x06, 0, 0, 0x7FFF0000),  # SECCOMP_RET_ALLOW
    ]
    path.write_bytes(b"".join(struct.pack("=HBBI", *ins) for ins in prog))


def test_a_runtime_without_ipv6_still_passes(tmp_path: Path) -> None:
    """A sandbox with no IPv6 at all is enforced: its IPv6 attempts are blocked, each
    with its errno (EAFNOSUPPORT), and their controls escaped on the host."""
    require_tool("bwrap")
    _no_ipv6_filter(tmp_path / "no-ipv6.bpf")
    runtime = (
        '[runtimes.bwrap-no-ipv6]\nkind = "command"\n'
        'argv = ["sh", "-c", "exec 3<\\"$0\\" && exec \\"$@\\"", '
        f'"{tmp_path}/no-ipv6.bpf", "bwrap", "--seccomp", "3", "--unshare-net", "--unshare-ipc", '
        '"--unshare-pid", "--die-with-parent", "--ro-bind", "{probe}", "/probe", '
        '"--proc", "/proc", "--dev", "/dev", "--", "/probe", "{args}"]\n'
        'expect = { egress_confinement = "enforced" }\n'
    )
    matrix = _matrix(
        tmp_path,
        '[runtimes.host]\nkind = "host"\n' + runtime,
        scenarios='["egress-confinement"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "bwrap-no-ipv6", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
    v6 = [
        c for c in row["checks"] if c["id"].startswith(("tcp6", "udp6", "icmp6", "send6", "tfo6"))
    ]
    # TCP, UDP, ICMP, privport, source ports, send calls, Fast Open
    assert len(v6) == 9 + 4 + 1 + 1 + 1 + 8 + 4
    assert all(
        (c["outcome"], c["errno"], c["control"]) == ("blocked", "EAFNOSUPPORT", "escaped")
        for c in v6
    )


def test_a_supervised_runtime_without_network_scenarios_still_runs_behind_it(
    tmp_path: Path,
) -> None:
    """No canary is needed without egress or attribution, yet the supervised runtime
    still runs behind its supervisor (allowing nothing), and its namespace goes away."""
    for tool in ("runsc", "ip"):
        require_tool(tool)
    matrix = _matrix(
        tmp_path,
        '[runtimes.host]\nkind = "host"\n' + SUPERVISED_RUNSC,
        scenarios='["filesystem-confinement"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    assert v[("localhost", "runsc-supervised", "filesystem_confinement")]["verdict"] == "pass"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    supervisors = manifest["hosts"]["localhost"]["supervisors"]
    assert supervisors["runsc-supervised"]["error"] is None
    assert _no_harness_namespaces(manifest["run_id"])


def _ordinary_traffic(address: str, stop: threading.Event) -> None:
    """What any host's address gets besides harness's: unmarked TCP connections and UDP
    datagrams to ports nobody listens on (only the capture could see them)."""
    port = free_port(address)
    while not stop.wait(0.05):
        with contextlib.suppress(OSError):
            socket.create_connection((address, port), timeout=1).close()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"an ordinary datagram\n", (address, port))


def test_a_listen_canary_captures_a_sandbox_sharing_the_hosts_network(tmp_path: Path) -> None:
    """A listen-mode canary on a loopback address captures too: UDP-Lite and raw IP
    from a bwrap sandbox that shares the host's network reach it (asked, escaped),
    while the unmarked TCP and UDP the same address gets all along explain nothing
    and count against nobody (no unexplained arrival)."""
    require_tool("bwrap")
    address = f"127.{100 + os.getpid() % 100}.{os.getpid() % 250}.9"
    ports = [free_port(address) for _ in range(5)]
    canary = (
        f'[canary]\nmode = "listen"\naddress = "{address}"\ntcp_port = {ports[0]}\n'
        f"allowed_port = {ports[1]}\ndns_port = {ports[2]}\nalt_dns_port = {ports[3]}\n"
        f"doh_port = {ports[4]}\n"
    )
    runtime = (
        '[runtimes.bwrap-hostnet]\nkind = "command"\n'
        'argv = ["bwrap", "--unshare-ipc", "--unshare-pid", "--die-with-parent", '
        '"--ro-bind", "{probe}", "/probe", "--proc", "/proc", "--dev", "/dev", '
        '"--", "/probe", "{args}"]\n'
    )
    matrix = _matrix(
        tmp_path,
        '[runtimes.host]\nkind = "host"\n' + runtime,
        scenarios='["egress-confinement"]',
        canary=canary,
    )
    stop = threading.Event()
    traffic = threading.Thread(target=_ordinary_traffic, args=(address, stop))
    traffic.start()
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        stop.set()
        traffic.join()
    out = tmp_path / "out"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["hosts"]["localhost"]["canary"]["capture"] is True, result.stderr
    row = verdicts_of(out)[("localhost", "bwrap-hostnet", "egress_confinement")]
    assert row["observed"] == "violated", row
    checks = {c["id"]: c for c in row["checks"]}
    for check_id in ("udplite4", "rawip4", "icmp4"):
        assert (checks[check_id]["outcome"], checks[check_id]["control"]) == (
            "escaped",
            "escaped",
        ), checks[check_id]
    for cell in cells_of(out).values():
        assert not cell["host_side"].get("canary_unexplained"), cell["host_side"]


# A sandbox's own listeners: a stream and a datagram socket in /run, abstract names
# (a stream, a seqpacket listener and a datagram socket, which only /proc/net/unix
# shows), made before the probe is exec'd and held by a child of its own (the probe
# inherits none).
OWN_LISTENERS = """
import os, socket, sys, time
made = []
for kind, name in ((socket.SOCK_STREAM, "/run/s.sock"), (socket.SOCK_DGRAM, "/run/d.sock"),
                   (socket.SOCK_STREAM, "\\0own-abstract"),
                   (socket.SOCK_SEQPACKET, "\\0own-seqpacket"),
                   (socket.SOCK_DGRAM, "\\0own-dgram")):
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(name)
    if kind != socket.SOCK_DGRAM:
        s.listen(8)
    made.append(s)
if os.fork() == 0:  # holds them while the probe runs (the sandbox ends with the probe)
    time.sleep(120)
    os._exit(0)
for s in made:
    s.close()
os.execv("/probe", ["/probe", *sys.argv[1:]])
"""


def test_a_host_listener_bound_in_deeper_than_any_walk_is_caught_by_the_hosts_list(
    tmp_path: Path,
) -> None:
    """Issue 38: a listener of this process's (an ancestor of the probe's, so no pid
    tells it apart) bound in nine folders down, below the folder walk's depth: the
    host's list and the sandbox's mount table find its file, and `unix-host` escapes
    naming it and its owner. The same sandbox without the bind stays enforced, each
    listed listener refused; so does one with listeners of its own, abstract seqpacket
    and datagram sockets among them (each held by a process of its own: the twin of
    bwrap-netns-listener-seqpacket and -dgram)."""
    require_tool("bwrap")
    folder = tmp_path / "ctl"
    folder.mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "daemon.sock"))
    listener.listen()
    base = (
        'kind = "command"\nscenarios = ["egress-confinement"]\n'
        'argv = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "{probe}", '
        '"/probe", "--proc", "/proc", "--dev", "/dev", @BIND@"--", "/probe", "{args}"]\n'
        'expect = { egress_confinement = "enforced" }\n'
    )
    deep = "/srv/" + "/".join("abcdefgh")
    # A correct twin with listeners of its own (stream, datagram, abstract), started
    # inside before the probe: each answers, none is an escape.
    own = (
        '[runtimes.own]\nkind = "command"\nscenarios = ["egress-confinement"]\n'
        'argv = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr", '
        '"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", '
        f'"usr/bin", "/bin", "--ro-bind", "{tmp_path}/own.py", "/own.py", '
        '"--ro-bind", "{probe}", "/probe", "--proc", "/proc", "--dev", "/dev", '
        '"--tmpfs", "/run", "--", "python3", "/own.py", "{args}"]\n'
        'expect = { egress_confinement = "enforced" }\n'
    )
    (tmp_path / "own.py").write_text(OWN_LISTENERS)
    runtimes = (
        ("[runtimes.bound]\n" + base.replace("@BIND@", f'"--bind", "{folder}", "{deep}", '))
        + ("[runtimes.twin]\n" + base.replace("@BIND@", ""))
        + own
    )
    matrix = _matrix(tmp_path, runtimes, scenarios='["egress-confinement"]')
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        listener.close()
    v = verdicts_of(tmp_path / "out")
    bound = {c["id"]: c for c in v[("localhost", "bound", "egress_confinement")]["checks"]}
    assert bound["unix-host"]["outcome"] == "escaped", result.stdout + result.stderr
    assert bound["unix-host"]["detail"].startswith(
        f"connected: {deep}/daemon.sock is the host's listener {folder}/daemon.sock"
        f" (pid {os.getpid()}, python"
    )
    escaped = {i for i, c in bound.items() if c["outcome"] == "escaped"}
    assert escaped == {"unix-host"}
    twin = v[("localhost", "twin", "egress_confinement")]
    assert (twin["observed"], twin["verdict"]) == ("enforced", "pass"), twin
    line = next(c for c in twin["checks"] if c["id"] == "unix-host")
    assert line["outcome"] == "blocked" and " refused, 0 the sandbox's own" in line["detail"]
    own_row = v[("localhost", "own", "egress_confinement")]
    assert (own_row["observed"], own_row["verdict"]) == ("enforced", "pass"), own_row
    line = next(c for c in own_row["checks"] if c["id"] == "unix-host")
    assert line["outcome"] == "blocked" and "5 the sandbox's own" in line["detail"], line
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["hosts"]["localhost"]["unix_listeners"]["count"] >= 1


# scripts/mutant-sandbox's proxy (HTTP CONNECT and SOCKS5 to anywhere) at argv[2]:3128,
# argv[1] the script; "up" once it listens.
HOST_PROXY = """
import socket, sys, time
from importlib.machinery import SourceFileLoader
mutant = SourceFileLoader("mutant_sandbox", sys.argv[1]).load_module()
listener = mutant.bind(socket.AF_INET, socket.SOCK_STREAM, (sys.argv[2], 3128))
mutant.serve(mutant.unix_proxy, listener, "loopback-proxy")
print("up", flush=True)
time.sleep(600)
"""


def test_a_host_proxy_on_another_link_of_the_hosts_is_asked_at_its_address(
    tmp_path: Path,
) -> None:
    """A host takes packets for any address it holds, from whichever link they come: a
    sandbox whose default route leads through the host (which forwards nothing, its
    firewall letting in a proxy's port alone from the sandbox's link) reaches the host's
    proxy bound to the address of another of its links (a LAN's, a bridge's). The
    host's list names it; before, tcp-proxy asked a listed listener at the host's end of
    the canary's link and at next hops alone, and certified it enforced. Now it is asked
    at its own address and escapes naming it; the same sandbox without the default route
    stays enforced."""
    for tool in ("bwrap", "ip", "nft"):
        require_tool(tool)
    pid = os.getpid()
    far, link = f"harness-far-{pid}", f"hfo{pid}"[:15]
    address = f"10.247.{(pid >> 6) & 255}.{(pid & 63) * 4 + 1}"
    script = ROOT / "scripts" / "mutant-sandbox"
    runtimes = "".join(
        f'[runtimes.{name}]\nkind = "command"\n'
        f'argv = ["{script}", "{mode}", "{{allowed}}", "{{probe}}", "{{args}}"]\n'
        'allowed_inside = "/allowed"\nexpect = { egress_confinement = "enforced" }\n'
        for name, mode in (("routed", "gateway-ports"), ("twin", "gateway-ports-twin"))
    )
    matrix = _matrix(
        tmp_path, runtimes, scenarios='["egress-confinement"]', canary='[canary]\nmode = "netns"\n'
    )
    setup = (
        ["netns", "add", far],
        ["link", "add", link, "type", "veth", "peer", "name", "v1", "netns", far],
        ["addr", "add", f"{address}/30", "dev", link],
        ["link", "set", link, "up"],
        ["-n", far, "link", "set", "v1", "up"],
    )
    proxy = None
    try:
        for step in setup:
            subprocess.run(["ip", *step], check=True, capture_output=True)
        # The host's proxy (the mutants' own, HTTP CONNECT and SOCKS5 to anywhere), a
        # process of its own, up before the run lists the host's listeners.
        proxy = subprocess.Popen(
            [sys.executable, "-c", HOST_PROXY, str(script), address], stdout=subprocess.PIPE
        )
        assert proxy.stdout is not None and proxy.stdout.readline() == b"up\n"
        result = harness_cli("run", matrix, "--out", tmp_path / "out")
    finally:
        if proxy is not None:
            proxy.kill()
            proxy.wait()
            if proxy.stdout is not None:
                proxy.stdout.close()
        subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", far], capture_output=True, check=False)
    v = verdicts_of(tmp_path / "out")
    routed = v[("localhost", "routed", "egress_confinement")]
    assert (routed["observed"], routed["verdict"]) == ("violated", "regression"), result.stdout
    checks = {c["id"]: c for c in routed["checks"]}
    assert {i for i, c in checks.items() if c["outcome"] == "escaped"} == {"tcp-proxy"}
    assert f"through TCP proxy {address}:3128: the nonce came back" in checks["tcp-proxy"]["detail"]
    twin = v[("localhost", "twin", "egress_confinement")]
    assert (twin["observed"], twin["verdict"]) == ("enforced", "pass"), twin


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_stand_in_line_comes_from_one_source_port(mutants_run: tuple[int, str, Path]) -> None:
    """Every packet of a stand-in line, to each stand-in, leaves from the one source port
    the line reports (red team round nine: a SYN whose handshake never finished, from a
    port of its own, was an unexplained arrival that made every cell inconclusive)."""
    cell = cells_of(mutants_run[2])[("localhost", "host")]
    for line in ("elsewhere4-tcp", "elsewhere4-udp"):
        check = {c["id"]: c for c in cell["checks"]}[line]
        sent = [
            e for e in cell["host_side"]["canary_events"]
            if e.get("event") == "packet" and f".{line}." in str(e.get("mark"))
        ]  # fmt: skip
        assert len({e["dst"] for e in sent}) >= 5, sent  # the six default IPv4 stand-ins
        assert {e["sport"] for e in sent} == {check["evidence"]["src_port"]}, (check, sent)


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_clone3_through_the_i386_entry_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-clone3-i386 is caught by priv-root-kernel-state, its reason naming the
    way: x86_64's clone3 is refused, the i386 entry's is not."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "landlock-clone3-i386", "privilege_floor")]
    checks = {c["id"]: c for c in row["checks"]}
    assert "through the i386 entry" in str(checks["priv-root-kernel-state"]["detail"]), checks


# The ways into a mount each mutant leaves open alone, and the fragment of
# priv-root-mount's reason that names it.
MOUNT_WAYS = {
    "bwrap-userns-fsmount": "fsmount: the new mount API",
    "bwrap-userns-open-tree": "open_tree: the new mount API",
    "bwrap-userns-mount-i386": "mount through the i386 entry",
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(MOUNT_WAYS))
def test_each_way_into_a_mount_is_named(mutants_run: tuple[int, str, Path], runtime: str) -> None:
    """Each mount mutant escapes by priv-root-mount alone, its reason naming the way
    (mount(2) itself refused), every other check of the privilege floor blocked."""
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
    assert MOUNT_WAYS[runtime] in str(checks["priv-root-mount"]["detail"]), checks
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == ["priv-root-mount"], escaped


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_fspick_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """bwrap-sys-admin-fspick escapes by priv-root-mount through fspick, every other way
    into a mount refused (mount(2), fsopen, open_tree), and by priv-start (CAP_SYS_ADMIN
    in the initial user namespace, which fspick needs: in a child one it reaches only
    the sandbox's own superblocks)."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "bwrap-sys-admin-fspick", "privilege_floor")]
    checks = {c["id"]: c for c in row["checks"]}
    assert "for reconfiguring by fspick" in str(checks["priv-root-mount"]["detail"]), checks
    assert checks["priv-root-release-agent"]["outcome"] != "escaped", checks


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(I386_WAYS))
def test_roots_i386_ways_are_named(mutants_run: tuple[int, str, Path], runtime: str) -> None:
    """Each mutant whose deny-list checks no architecture escapes by its row's check
    alone, its reason naming the i386 entry."""
    check_id, proof = I386_WAYS[runtime]
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
    assert proof in str(checks[check_id]["detail"]), checks[check_id]
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == [check_id], escaped


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_signal_through_the_i386_entry_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-signal-i386 is caught by priv-proc-access, its reason naming the way:
    every x86_64 signalling call refused, the i386 entry's kill is not."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "landlock-signal-i386", "privilege_floor")]
    checks = {c["id"]: c for c in row["checks"]}
    assert "through the i386 entry" in str(checks["priv-proc-access"]["detail"]), checks


# The i386 way each mutant leaves through a complete deny-list of x86_64's numbers, and
# the fragment of priv-proc-access's reason that names it.
I386_PROC_WAYS = {
    "landlock-prlimit-i386": "RLIMIT_CPU) through the i386 entry (int $0x80, its number 340)",
    "landlock-sigio-i386": "fcntl64(F_SETOWN) through the i386 entry (int $0x80, its number 221;",
    # no /proc, the decoy's pid found by number; x86_64's memory and pidfd calls refused
    "bwrap-shared-pid-noproc-i386": (
        "through the i386 entry (int $0x80, its number 347) allowed, x86_64's refused: ptrace's"
        " permission to its memory, its pid found by number"
    ),
    "bwrap-shared-pid-noproc-pidfd-i386": (
        "through the i386 entry (int $0x80, its number 438) allowed, x86_64's refused: ptrace's"
        " permission to its descriptors, its pid found by number"
    ),
}


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
@pytest.mark.parametrize("runtime", sorted(I386_PROC_WAYS))
def test_a_host_processs_limits_and_owner_through_the_i386_entry_are_named(
    mutants_run: tuple[int, str, Path], runtime: str
) -> None:
    """landlock-prlimit-i386, landlock-sigio-i386 and the bwrap-shared-pid-noproc i386
    mutants are caught by priv-proc-access alone, each reason naming the i386 call its
    list left through (every x86_64 call refused)."""
    v = verdicts_of(mutants_run[2])
    checks = {c["id"]: c for c in v[("localhost", runtime, "privilege_floor")]["checks"]}
    assert I386_PROC_WAYS[runtime] in str(checks["priv-proc-access"]["detail"]), checks
    escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
    assert escaped == ["priv-proc-access"], escaped


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_host_processs_limits_are_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-host-pid-prlimit is caught by priv-proc-access, its reason naming the
    way: every signal refused by Landlock's scope, prlimit64 not."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "landlock-host-pid-prlimit", "privilege_floor")]
    checks = {c["id"]: c for c in row["checks"]}
    assert "prlimit64(" in str(checks["priv-proc-access"]["detail"]), checks


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_descriptors_owner_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-signal-sigio is caught by priv-proc-access at harness's witness, its
    reason naming the way: every signalling call refused, F_SETOWN not."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "landlock-signal-sigio", "privilege_floor")]
    detail = str({c["id"]: c for c in row["checks"]}["priv-proc-access"]["detail"])
    assert "fcntl(F_SETOWN) and O_ASYNC" in detail and "harness's witness" in detail, detail


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_a_host_processs_scheduling_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-host-pid-nice, landlock-nice-i386, landlock-host-pid-oom,
    landlock-nice-user and landlock-nice-rootless are caught by priv-proc-access at
    harness's witness, each reason naming the way: setpriority, by x86_64's number or by
    the i386 entry's, every signal and prlimit64 refused; its oom_score_adj, every
    scheduling call refused too; the witness of the workload's own host uid (1000: its
    policy's, or its user namespace root's), 65534's out of its reach."""
    v = verdicts_of(mutants_run[2])
    for runtime, way in (
        ("landlock-host-pid-nice", "setpriority(PRIO_PROCESS) of harness's witness"),
        ("landlock-nice-i386", "through the i386 entry (int $0x80, its number 97)"),
        ("landlock-host-pid-oom", "/proc/<pid>/oom_score_adj of harness's witness"),
        ("landlock-nice-user", "uid 1000, the workload's own)"),
        ("landlock-nice-rootless", "uid 1000, the workload's own)"),
    ):
        row = v[("localhost", runtime, "privilege_floor")]
        checks = {c["id"]: c for c in row["checks"]}
        detail = str(checks["priv-proc-access"]["detail"])
        assert way in detail and "read back" in detail, (runtime, detail)
        escaped = sorted(k for k, c in checks.items() if c["outcome"] == "escaped")
        if runtime != "landlock-host-pid-oom":  # a writable /proc/sys opens for others too
            assert escaped == ["priv-proc-access"], (runtime, escaped)


@pytest.mark.timeout(MUTANTS_RUN_TIMEOUT)
def test_an_i386_ring_is_named(mutants_run: tuple[int, str, Path]) -> None:
    """landlock-i386-io-uring is caught by fs-io-uring on a ring made through the i386
    entry, and the detail says so."""
    v = verdicts_of(mutants_run[2])
    row = v[("localhost", "landlock-i386-io-uring", "filesystem_confinement")]
    checks = {c["id"]: c for c in row["checks"]}
    assert "through the i386 entry" in str(checks["fs-io-uring"]["detail"]), checks
