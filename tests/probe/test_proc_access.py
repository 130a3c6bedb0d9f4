"""priv-proc-access in the host's PID namespace and beside another namespace's /proc.

The Landlock reference (`probe confine`) left in the host's PID namespace: its files
and ptrace stay refused, but root with Docker's capabilities may signal any host
process, unless the domain is scoped (Landlock ABI 6's LANDLOCK_SCOPE_SIGNAL, which
the reference sets); even scoped, root sets the limits of a host process of its uid
(prlimit64, no hook of Landlock's). `kill(pid, 0)` asks the permission and sends
nothing; prlimit64 writes back what it read. A sandbox
of its own PID namespace that shows the host's /proc sees numbers that name nothing
in its namespace: a call by one would reach its own process of that number (its pid
1 is itself), so nothing there is reached. Real Landlock, real unshare; root."""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


@pytest.fixture
def host_process() -> Iterator[int]:
    """A host process of root's, in a session of its own (a service's shape)."""
    sleeper = subprocess.Popen(["setsid", "sleep", "120"])
    try:
        yield sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()


def _row(probe: Path, *launcher: str, confine: tuple[str, ...] = ()) -> dict:
    argv = [*launcher, str(probe), "confine", *confine, "--read", "/usr", "--read", "/etc"]
    argv += ["--read", "/proc", "--write", "/tmp", "--write", "/dev/null", "--read", str(probe)]
    argv += ["--", str(probe), "run", "--tag", "t", "privilege-floor"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if "Landlock unavailable" in done.stderr:
        pytest.skip(done.stderr.strip())
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    found = [r for r in rows if r.get("id") == "priv-proc-access"]
    assert found, done.stdout + done.stderr
    return found[0]


def _landlock_abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.syscall(444, None, 0, 1))  # landlock_create_ruleset(VERSION): 444 everywhere


def test_the_hosts_pid_namespace_unscoped_lets_root_signal_host_processes(
    open_folder: Path, host_process: int
) -> None:
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=("--unscoped",))
    assert row["outcome"] == "escaped", row
    assert "kill(" in row["detail"] and "may signal (kill) that host process" in row["detail"]


SIGNALLING = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
LAST = ("pidfd_send_signal", "prlimit64", "setown")
# Every call that sets another process's scheduling, each by the same uid alone.
SCHED = (
    "setpriority",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "sched_setaffinity",
    "ioprio_set",
)
NO_SCHED = tuple(a for call in SCHED for a in ("--deny", call))


def test_a_deny_list_of_kill_leaves_pidfd_send_signal(open_folder: Path, host_process: int) -> None:
    """landlock-signal-pidfd's shape: the older signalling calls refused by seccomp,
    pidfd_send_signal (5.1) not: the same permission, taken by that call."""
    deny = tuple(a for call in SIGNALLING for a in ("--deny", call))
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=("--unscoped", *deny))
    assert row["outcome"] == "escaped", row
    assert "pidfd_send_signal(pidfd of " in row["detail"], row


@pytest.fixture
def witness() -> Iterator[int]:
    """harness's witness, as envelope.sh starts it: uid 65534, SIGIO and SIGURG blocked."""
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    argv += ["env", "--block-signal=IO,URG", "sleep", "120"]
    sleeper = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if Path(f"/proc/{sleeper.pid}/comm").read_text().strip() == "sleep":
                break
            time.sleep(0.01)
        yield sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()


def _pending(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("ShdPnd:")).split()[1], 16)


def test_a_deny_list_of_every_signalling_call_leaves_a_descriptors_owner(
    open_folder: Path, host_process: int, witness: int
) -> None:
    """landlock-signal-sigio's shape: every signalling call and prlimit64 refused, not
    F_SETOWN: the witness gets SIGURG (pending: it blocks it), and the line says so. By
    hand, the same from the mutant's argv killed a host sleeper of uid 65534 (F_SETSIG
    SIGTERM)."""
    deny = tuple(a for call in (*SIGNALLING, *LAST[:-1]) for a in ("--deny", call))
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=("--unscoped", *deny))
    assert row["outcome"] == "escaped", row
    said = re.search(
        r"fcntl\(F_SETOWN\) and O_ASYNC: SIGURG \(F_SETSIG\) queued to host process (\d+) "
        r"\(harness's witness", str(row["detail"]),
    )  # fmt: skip
    assert said, row
    # Any witness will do: a concurrent run's envelope starts one beside each sandbox,
    # and the probe takes its own cell's where it can tell it, else the first it finds
    # (this witness's parent names no tag the probe was given). Ours shows it.
    if int(said[1]) == witness:
        assert _pending(witness) & (1 << (signal.SIGURG - 1)), row


def _a_witness(tag: str, uid: int = 65534) -> tuple[subprocess.Popen[str], int]:
    """A witness as envelope.sh starts one for the cell of `tag`: the child of a shell
    whose arguments hold the tag. The shell, and the witness's pid."""
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "env"]
    argv += ["--block-signal=IO,URG", "sleep", "120"]
    script = 'shift; "$@" </dev/null & echo $!; wait'
    shell = subprocess.Popen(
        ["sh", "-c", script, "harness-cell", tag, *argv], stdout=subprocess.PIPE, text=True
    )  # fmt: skip
    assert shell.stdout is not None
    pid = int(shell.stdout.readline())
    for _ in range(100):
        if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep":
            break
        time.sleep(0.01)
    return shell, pid


def test_the_probe_signals_its_own_cells_witness(open_folder: Path, host_process: int) -> None:
    """Beside another cell's witness (started first, so found first), the probe takes the
    one whose environment names its own cell's tag: another cell's ends with that cell,
    maybe during this check, and its pending signals are that cell's evidence."""
    (other, other_pid), (ours, ours_pid) = _a_witness("harness-other-00001"), _a_witness("t")
    try:
        deny = tuple(a for call in (*SIGNALLING, *LAST[:-1]) for a in ("--deny", call))
        row = _row(
            runnable_copy(open_folder), "unshare", "--net", "--", confine=("--unscoped", *deny)
        )
        assert row["outcome"] == "escaped", row
        assert f"queued to host process {ours_pid} (harness's witness" in str(row["detail"]), row
        assert _pending(ours_pid) & (1 << (signal.SIGURG - 1)), row
        assert _pending(other_pid) == 0, row
    finally:
        for pid in (other_pid, ours_pid):
            os.kill(pid, signal.SIGKILL)
        for shell in (other, ours):
            shell.wait()
            assert shell.stdout is not None
            shell.stdout.close()


def test_a_deny_list_of_every_signalling_call_keeps_host_processes_out(
    open_folder: Path, host_process: int, witness: int
) -> None:
    """Its twin: pidfd_send_signal refused too (and prlimit64, another way to kill a host
    process: its CPU limit, a descriptor's owner, and the calls that set its scheduling),
    nothing signals a host process nor changes one, harness's witness among them."""
    deny = tuple(a for call in (*SIGNALLING, *LAST) for a in ("--deny", call))
    confine = ("--unscoped", *deny, *NO_SCHED)
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "blocked", row
    assert _pending(witness) == 0, row
    assert _sched(witness) == (0, 0), row


def test_without_a_witness_the_line_says_what_it_did_not_try(
    open_folder: Path, host_process: int
) -> None:
    """The twin's shape where the host has no witness (no setpriv, or coreutils before
    8.31): blocked by what was tried, and the line says the owner and scheduling ways
    were not (no host process harness may touch stood for them)."""
    deny = tuple(a for call in (*SIGNALLING, *LAST) for a in ("--deny", call))
    confine = ("--unscoped", *deny, *NO_SCHED)
    before = _witnesses()
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "blocked", row
    # A witness a killed envelope left (it lives out its cell's time) stands for one.
    said = "no witness of harness's in view" in str(row["detail"])
    assert said == (not before and not _witnesses()), (before, row)


def _witnesses() -> list[int]:
    """The witnesses in view: sleep, uid 65534, SIGIO and SIGURG blocked, none pending."""
    found, sigs = [], (1 << (signal.SIGIO - 1)) | (1 << (signal.SIGURG - 1))
    for entry in Path("/proc").iterdir():
        try:
            status = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        uids = status.get("Uid", "").split()
        if (
            status.get("Name", "").strip() == "sleep"
            and uids[:3] == ["65534"] * 3
            and int(status.get("SigBlk", "0"), 16) & sigs == sigs
            and not int(status.get("ShdPnd", "0"), 16) & sigs
        ):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the i386 entry is x86_64's")
def test_a_deny_list_of_x86_64s_numbers_leaves_the_i386_entrys(
    open_folder: Path, host_process: int
) -> None:
    """landlock-signal-i386's shape: every signalling call refused by x86_64's number,
    the i386 entry's let through (`--i386-open signal`): its kill (37) signals a host
    process all the same, and the line names that entry. The twin (the architecture
    checked) is the test above. By hand, the mutant's shape killed a host sleeper of
    uid 65534 by SIGTERM through that entry, x86_64's kill and pidfd_send_signal
    refused."""
    deny = tuple(a for call in (*SIGNALLING, *LAST) for a in ("--deny", call))
    confine = ("--unscoped", *deny, "--i386-open", "signal")
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "escaped", row
    assert "through the i386 entry (int $0x80, its number 37)" in row["detail"], row


# What each i386 family left through names (the rest of the list whole, every other call
# of that entry refused): landlock-prlimit-i386's and landlock-sigio-i386's shapes.
I386_LEFT = {
    "prlimit": "RLIMIT_CPU) through the i386 entry (int $0x80, its number 340)",
    "setown": "fcntl64(F_SETOWN) through the i386 entry (int $0x80, its number 221;",
    # every ioctl of that entry (the chmod filter family's mistake): FIOSETOWN on a socket
    "chattr": "ioctl(FIOSETOWN) through the i386 entry (int $0x80, its number 54;",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the i386 entry is x86_64's")
@pytest.mark.parametrize("family", sorted(I386_LEFT))
def test_a_complete_deny_list_of_x86_64s_numbers_leaves_each_i386_way(
    open_folder: Path, host_process: int, witness: int, family: str
) -> None:
    """landlock-prlimit-i386's and landlock-sigio-i386's shapes: every call that signals,
    prlimit64, a descriptor's owner and every scheduling call refused by x86_64's numbers,
    the i386 entry's prlimit64 (340), or its fcntl and fcntl64 (or its ioctl), left through: a host
    process's limits are read and written back (RLIMIT_CPU), or the witness gets SIGURG
    as a descriptor's owner, and the line names that entry. The twin (the architecture
    checked, every i386 call refused) is test_a_deny_list_of_every_signalling_call_keeps_
    host_processes_out. By hand, in the mutants' argv, the i386 prlimit64 set a host root
    sleeper's CPU limit to 3600 s (read by prlimit(1) on the host, then put back), and the
    i386 fcntl64(F_SETOWN) with F_SETSIG SIGTERM killed a host sleeper of uid 65534."""
    deny = tuple(a for call in (*SIGNALLING, *LAST) for a in ("--deny", call))
    confine = ("--unscoped", *deny, *NO_SCHED, "--i386-open", family)
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "escaped", row
    assert I386_LEFT[family] in row["detail"], row
    assert "through the i386 entry (int $0x80, its number" in row["detail"], row


def test_the_references_signal_scope_leaves_a_host_processs_limits(
    open_folder: Path, host_process: int
) -> None:
    """landlock-host-pid-prlimit's shape: the reference's signal scope refuses every
    signal to a host process, but prlimit64 asks the same uid alone (Landlock has no
    hook on it): RLIMIT_CPU read and written back unchanged. By hand, a CPU limit of 1 s
    set so killed a host busy loop of root's. With prlimit64 refused too (the twin),
    nothing reaches a host process."""
    if _landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (scopes) needed")
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--")
    assert row["outcome"] == "escaped", row
    assert "prlimit64(" in row["detail"] and "RLIMIT_CPU" in row["detail"], row
    launcher = ("unshare", "--net", "--")
    twin = _row(runnable_copy(open_folder), *launcher, confine=("--deny", "prlimit64", *NO_SCHED))
    assert twin["outcome"] == "blocked", twin


def _sched(pid: int) -> tuple[int, int]:
    """A process's nice and scheduling policy, from its /proc stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16]), int(fields[38])


# What each way's line names, the call left open (its twin: all six refused, above).
SCHED_WAYS = {
    "setpriority": "setpriority(PRIO_PROCESS) of harness's witness",
    "sched_setscheduler": "sched_setscheduler of harness's witness",
    "sched_setattr": "sched_setattr of harness's witness",
    "sched_setaffinity": "sched_setaffinity of harness's witness",
    "ioprio_set": "ioprio_set(IOPRIO_WHO_PROCESS) of harness's witness",
}


@pytest.mark.parametrize("left", sorted(SCHED_WAYS))
def test_each_call_that_sets_a_host_processs_scheduling_is_a_way(
    open_folder: Path, witness: int, left: str
) -> None:
    """landlock-host-pid-nice's shape, one call left out of the list at a time: the
    reference's signal scope and prlimit64 refused, the workload (as uid 65534, the
    check's second pass) changes the witness's scheduling by that call, read back, and
    the line names it. What was changed is restored, but a nice (only CAP_SYS_NICE
    lowers one). By hand, in landlock-host-pid-nice's argv, renice, chrt -b, taskset
    and ionice -c 3 as uid 65534 each changed a host sleeper of that uid, read from the
    host."""
    if _landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (scopes) needed")
    deny = tuple(a for call in SCHED if call != left for a in ("--deny", call))
    confine = ("--deny", "prlimit64", *deny)
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "escaped", row
    assert SCHED_WAYS[left] in row["detail"] and "read back" in row["detail"], row
    said = re.search(r"\(host process (\d+), uid 65534\)", str(row["detail"]))
    if said and int(said[1]) == witness and left != "setpriority":
        assert "restored" in row["detail"] and _sched(witness)[1] == 0, row
        assert os.sched_getaffinity(witness) == os.sched_getaffinity(0), row


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the i386 entry is x86_64's")
def test_a_deny_list_of_x86_64s_scheduling_calls_leaves_the_i386_entrys(
    open_folder: Path, witness: int
) -> None:
    """landlock-nice-i386's shape: every scheduling call refused by x86_64's number, the
    i386 entry's left through (`--i386-open sched`): its setpriority (97) raises the
    witness's nice all the same, and the line names that entry."""
    if _landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (scopes) needed")
    confine = ("--deny", "prlimit64", *NO_SCHED, "--i386-open", "sched")
    row = _row(runnable_copy(open_folder), "unshare", "--net", "--", confine=confine)
    assert row["outcome"] == "escaped", row
    assert "through the i386 entry (int $0x80, its number 97)" in row["detail"], row


def test_another_pid_namespaces_proc_names_no_process_here(open_folder: Path) -> None:
    """unshare --pid --fork without --mount-proc: /proc is the host's. Its pid 1 is the
    host's init, but process_vm_readv(1) here would read the probe's own namespace's
    pid 1, itself: it was a false escape."""
    launcher = ("unshare", "--net", "--pid", "--fork", "--")
    row = _row(runnable_copy(open_folder), *launcher, confine=("--unscoped",))
    assert row["outcome"] == "blocked", row
    assert row["detail"].startswith("/proc shows another PID namespace's processes"), row


MUTANT = Path(__file__).resolve().parents[2] / "scripts" / "mutant-sandbox"


def _sandboxed(probe: Path, mode: str, allowed: Path) -> dict:
    argv = [str(MUTANT), mode, str(allowed), str(probe), "run", "--tag", "t", "privilege-floor"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    found = [r for r in rows if r.get("id") == "priv-proc-access"]
    assert found, done.stdout + done.stderr
    return found[0]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")
def test_proc_pid_mem_reads_a_host_service_behind_a_filter_of_the_calls(
    open_folder: Path, tmp_path: Path
) -> None:
    """bwrap-proc-mem: every call that reaches another process refused by seccomp, no PID
    namespace, the uid of a host service: /proc/<pid>/mem opens all the same. In a PID
    namespace of its own (the twin) no host process is in view."""
    tmp_path.chmod(0o777)
    row = _sandboxed(runnable_copy(open_folder), "proc-mem", tmp_path)
    assert row["outcome"] == "escaped", row
    assert "/mem opened for reading" in row["detail"], row
    twin = _sandboxed(runnable_copy(open_folder), "proc-mem-twin", tmp_path)
    assert twin["outcome"] == "blocked", twin


def _holding_pidfd(probe: Path, *, as_nobody: bool) -> dict:
    """priv-proc-access's line in a PID namespace of its own (unshare --pid --fork
    --mount-proc), root keeping CAP_SETUID and CAP_SETGID alone (local.toml's bwrap),
    handed a pidfd of a host sleeper: nobody's with no capability, or root's."""
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
    drop += ["--bounding-set=-all"]
    sleeper = subprocess.Popen([*(drop if as_nobody else []), "sleep", "120"], cwd="/")
    try:
        pidfd = os.pidfd_open(sleeper.pid)
        try:
            argv = ["unshare", "--pid", "--fork", "--mount-proc", "--", "setpriv"]
            argv += ["--bounding-set=-all,+setuid,+setgid", str(probe), "run"]
            argv += ["--tag", "t", "privilege-floor"]
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=120, pass_fds=(pidfd,)
            )
        finally:
            os.close(pidfd)
    finally:
        sleeper.kill()
        sleeper.wait()
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    found = [r for r in rows if r.get("id") == "priv-proc-access"]
    assert found, done.stdout + done.stderr
    return found[0]


def test_a_held_pidfd_of_a_host_process_is_a_way_to_its_descriptors(open_folder: Path) -> None:
    """bwrap-held-pidfd's shape: no host process is in view, but a pidfd held at start
    names one; as its uid, pidfd_getfd takes its descriptors. Of root's, nothing."""
    row = _holding_pidfd(runnable_copy(open_folder), as_nobody=True)
    assert row["outcome"] == "escaped", row
    assert "pidfd_getfd through the pidfd held at descriptor" in row["detail"], row
    twin = _holding_pidfd(runnable_copy(open_folder), as_nobody=False)
    assert twin["outcome"] == "blocked", twin
    assert twin["evidence"]["held_pidfds"] == 1, twin


def test_a_writable_proc_is_a_way_to_a_host_processs_oom_score(
    open_folder: Path, tmp_path: Path, witness: int
) -> None:
    """landlock-host-pid-oom: the Landlock reference in the host's PID namespace, every
    call that signals, sets limits or scheduling refused, run as uid 65534 with /proc
    writable: the witness's /proc/<pid>/oom_score_adj (its owner's file) is written one
    more, read back, restored; with /proc for reading alone (the twin), nothing. By
    hand, in that argv, `echo 1000 > /proc/<pid>/oom_score_adj` as uid 65534 set a host
    sleeper of that uid's score, read from the host, then written back."""
    if _landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (scopes) needed")
    tmp_path.chmod(0o777)
    row = _sandboxed(runnable_copy(open_folder), "landlock-oom", tmp_path)
    assert row["outcome"] == "escaped", row
    assert "/proc/<pid>/oom_score_adj of harness's witness" in row["detail"], row
    assert Path(f"/proc/{witness}/oom_score_adj").read_text().strip() == "0", row
    twin = _sandboxed(runnable_copy(open_folder), "landlock-oom-twin", tmp_path)
    assert twin["outcome"] == "blocked", twin


def test_a_workload_of_another_uid_changes_a_host_process_of_its_own(
    open_folder: Path, tmp_path: Path, witness: int
) -> None:
    """landlock-nice-user: the reference's signal scope and prlimit64 refused, the
    workload run as uid 1000 (neither root nor 65534): uid 65534's witness is out of its
    reach, but setpriority asks the same uid alone, so it raises the nice of the witness
    of its own uid (envelope.sh starts one of the policy's run_as_user), and the line
    names it; the same made rootless (landlock-nice-rootless: its root uid 1000 on the
    host). Without that witness the line says what it did not try; with every
    scheduling call refused (the twins), nothing. By hand, in those argvs, renice made a
    host sleeper of uid 1000's nice 7 and 5, read from the host (kill refused)."""
    if _landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (scopes) needed")
    tmp_path.chmod(0o777)
    alone = _sandboxed(runnable_copy(open_folder), "landlock-nice-user", tmp_path)
    assert alone["outcome"] == "blocked", alone
    assert "no witness of harness's of uid 1000 (the workload's own)" in alone["detail"], alone
    shell, pid = _a_witness("t", uid=1000)
    try:
        row = _sandboxed(runnable_copy(open_folder), "landlock-nice-user", tmp_path)
        assert row["outcome"] == "escaped", row
        said = f"setpriority(PRIO_PROCESS) of harness's witness (host process {pid}, uid 1000,"
        assert said in row["detail"] and "the workload's own" in row["detail"], row
        assert _sched(pid)[0] == 1, row
        twin = _sandboxed(runnable_copy(open_folder), "landlock-nice-user-twin", tmp_path)
        assert twin["outcome"] == "blocked", twin
        assert "the workload's own" not in twin["detail"], twin
        # Rootless: a user namespace's root that is uid 1000 on the host (/proc shows
        # the witness as its uid 0 there); the line names the host's uid.
        row = _sandboxed(runnable_copy(open_folder), "landlock-nice-rootless", tmp_path)
        assert row["outcome"] == "escaped", row
        assert said in row["detail"] and _sched(pid)[0] == 2, row
        twin = _sandboxed(runnable_copy(open_folder), "landlock-nice-rootless-twin", tmp_path)
        assert twin["outcome"] == "blocked", twin
    finally:
        os.kill(pid, signal.SIGKILL)
        shell.wait()
        assert shell.stdout is not None
        shell.stdout.close()
