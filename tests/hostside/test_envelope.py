"""The cell's envelope, run for real by `sh` through the local transport: the
sentinels are made before the sandbox command, the canary's log and the sentinels'
state are reported after it, and nothing the sandbox prints can pass for the report.

The "sandbox" here is a small `sh -c` script standing in for the runtime's command;
what is under test is the wrapping around it, which is the same for every runtime.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from harness.hostside.canary_log import parse_events
from harness.hostside.canary_setup import RunningCanary
from harness.hostside.envelope import SETUP_FAILED, Envelope
from harness.hostside.filesystem import MADE, ORIGINAL, OWN, Sentinels
from harness.matrix.models import Canary
from harness.transport import Completed, LocalTransport
from tests.lab import require_tool

pytestmark = pytest.mark.anyio

TAG = "harness-abcd1234-00001"


@pytest.fixture
def canary(tmp_path: Path) -> Iterator[RunningCanary]:
    """A live process standing in for the canary, with a log holding two arrivals
    and lines written to look like the report's own."""
    log = tmp_path / "canary.log"
    events = [
        {"event": "ready"},
        {"event": "tcp", "peer": "10.0.0.2:4000", "line": f"HARNESS {TAG} egress-raw-ip"},
        {"event": "dns", "peer": "10.0.0.2:4001", "qname": f"x.{TAG}.example"},
    ]
    text = "\n".join(json.dumps(e) for e in events)
    log.write_text(f"{text}\nfs\ncanary ok 9\nsentinel=intact\n\n")
    proc = subprocess.Popen(["sleep", "60"])
    yield RunningCanary("10.0.0.1", Canary(), "nonce", str(log), pid=str(proc.pid))
    proc.kill()
    proc.wait()


async def _run(envelope: Envelope, script: str, stdin: bytes | None = None) -> Completed:
    return await LocalTransport().run(
        envelope.wrap(["sh", "-c", script, "sandbox"]), stdin=stdin, timeout=30
    )


async def test_sandbox_output_and_status_pass_through_untouched(tmp_path: Path) -> None:
    envelope = Envelope.new(TAG, sentinels=None, canary=None)
    # The sandbox prints a forged report with the real marker, and no final newline.
    forged = f"line one\n\n{envelope.marker} evidence\ncanary ok 0\n{envelope.marker} 0 1\nend"
    done = await _run(envelope, f"printf '%s' '{forged}'; cat; exit 3", stdin=b"from stdin")
    opened, report = envelope.open(done)
    assert report is not None
    assert report.exit_status == 3 and opened.exit_status == 3 and done.exit_status == 3
    assert opened.stdout == forged + "from stdin"
    assert report.canary_alive is None and report.fs is None  # none was asked for


async def test_canary_log_is_reported_and_framed(tmp_path: Path, canary: RunningCanary) -> None:
    envelope = Envelope.new(TAG, sentinels=None, canary=canary)
    opened, report = envelope.open(await _run(envelope, "echo probe-output"))
    assert report is not None and opened.stdout == "probe-output\n"
    assert report.canary_alive
    events = parse_events(report.canary_log)
    assert [e["peer"] for e in events] == ["10.0.0.2:4000", "10.0.0.2:4001"]
    assert report.fs is None  # the log's look-alike lines stayed inside its frame


async def test_sizes_count_bytes_whatever_the_text(tmp_path: Path, canary: RunningCanary) -> None:
    """Non-ASCII in the canary's log and invalid UTF-8 from the sandbox: the report
    is still found, byte for byte."""
    with open(canary.log_path, "a", encoding="utf-8") as fh:
        fh.write('{"event":"tcp","peer":"10.0.0.2:4002","line":"HARNESS é 🙂"}\n')
    envelope = Envelope.new(TAG, sentinels=None, canary=canary)
    opened, report = envelope.open(await _run(envelope, r"printf 'caf\303\251 \377\n'"))
    assert report is not None
    assert opened.stdout == "café \ufffd\n"
    lines = [e["line"] for e in parse_events(report.canary_log) if e["event"] == "tcp"]
    assert lines[-1] == "HARNESS é 🙂"


async def test_a_dead_canary_is_an_error_not_an_empty_log(
    tmp_path: Path, canary: RunningCanary
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    canary.pid = str(dead.pid)
    envelope = Envelope.new(TAG, sentinels=None, canary=canary)
    _, report = envelope.open(await _run(envelope, "true"))
    assert report is not None
    assert report.canary_alive is False and report.canary_log == ""


async def test_a_canary_without_a_pid_is_never_taken_for_alive(
    tmp_path: Path, canary: RunningCanary
) -> None:
    canary.pid = ""
    envelope = Envelope.new(TAG, sentinels=None, canary=canary)
    _, report = envelope.open(await _run(envelope, "true"))
    assert report is not None and report.canary_alive is False


async def test_sentinels_are_made_before_and_inspected_after(tmp_path: Path) -> None:
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    outside = f"{sentinels.root}/outside"
    # The "sandbox" sees the fixture, writes through one path and leaves the rest.
    script = (
        f'test "$(cat {outside}/sentinel)" = {sentinels.token} || exit 9\n'
        f'test "$(cat {outside}/overwrite-me)" = "{ORIGINAL.strip()}" || exit 9\n'
        f"printf changed > {outside}/overwrite-me\n"
        f"printf %s {sentinels.token} > {sentinels.allowed}/control-{TAG}\n"
    )
    opened, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0, opened
    fs = sentinels.inspection(report.fs or {})
    assert str(fs.pop("changes")).startswith("outside/overwrite-me: size")
    assert fs == {
        **{k: v for k, v in UNTOUCHED.items() if k != "changes"},
        "overwritten": True,
        "allowed_visible": True,
    }
    assert not Path(sentinels.root).exists()  # removed after the inspection


async def test_the_envelope_places_and_inspects_the_read_only_grants(tmp_path: Path) -> None:
    """The folder in a read-only grant is there while the sandbox runs, holding its
    own token; a change to it is seen from the host; it is gone afterwards."""
    (tmp_path / "grant").mkdir()
    sentinels = replace(
        Sentinels.new(workdir=str(tmp_path), cell_id="c"),
        granted=((str(tmp_path / "grant"), "/etc"),),
    )
    mine = f"{tmp_path}/grant/{sentinels.granted_name}"
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    script = (
        f'test "$(cat {mine}/sentinel)" = {sentinels.granted_token} || exit 9\n'
        f"printf %s {sentinels.token} > {sentinels.allowed}/control-{TAG}\n"
        f"rm {mine}/unlink-me\n"
    )
    opened, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0, opened
    fs = sentinels.inspection(report.fs or {})
    assert fs["granted_changed"] is True and fs["granted"] == [f"{tmp_path}/grant"]
    assert f"{mine}/unlink-me: missing" in str(fs["changes"])
    assert os.listdir(tmp_path / "grant") == []


# What the host reports when nothing outside changed (and this host has no getfattr).
UNTOUCHED: dict[str, object] = {
    "sentinel": "intact",
    "overwritten": False,
    "created": False,
    "renamed": False,
    "allowed_visible": False,
    **{fact: False for fact in (*OWN.values(), *MADE.values(), "granted_changed")},
    "changes": "",
    **({} if shutil.which("getfattr") else {"xattrs": "not compared (no getfattr on the host)"}),
}


@pytest.mark.parametrize(
    ("action", "seen", "said"),
    [
        ("echo x > {outside}/created-{tag}", {"created": True}, ""),
        (
            "mv {outside}/rename-me {outside}/renamed",
            {"renamed": True},
            "outside/rename-me: missing; outside: 1 name(s) harness did not make",
        ),
        ("echo forged > {outside}/sentinel", {"sentinel": "changed"}, "outside/sentinel: size"),
        ("rm {outside}/sentinel", {"sentinel": "missing"}, "outside/sentinel: missing"),
        ("ln -s /nowhere {outside}/created-{tag}", {"created": True}, ""),
        (
            "rm {outside}/rename-me && ln -s sentinel {outside}/rename-me",
            {"renamed": True},
            "outside/rename-me: type and mode",
        ),
        # A link to a file that blocks when read: never followed, not a hang.
        (
            "rm {outside}/sentinel && ln -s /dev/zero {outside}/sentinel",
            {"sentinel": "missing"},
            "outside/sentinel: type and mode",
        ),
        ("ln -s /proc/kmsg {allowed}/control-{tag}", {}, ""),
        ("printf %s {token} > {allowed}/control-{tag}", {"allowed_visible": True}, ""),
        # Each write kind on its own target, and the metadata of every sentinel.
        (": > {outside}/truncate-me", {"truncated": True}, "outside/truncate-me: size"),
        ("rm {outside}/unlink-me", {"unlinked": True}, "outside/unlink-me: missing"),
        ("rmdir {outside}/rmdir-me", {"removed_dir": True}, "outside/rmdir-me: missing"),
        ("mkdir {outside}/dir-{tag}", {"made_dir": True}, ""),
        ("ln -s x {outside}/symlink-{tag}", {"made_symlink": True}, ""),
        ("mkfifo {outside}/fifo-{tag}", {"made_fifo": True}, ""),
        ("chmod 600 {outside}/chmod-me", {"mode_changed": True}, "outside/chmod-me: type and mode"),
        ("chown 65534 {outside}/chown-me", {"owner_changed": True}, "outside/chown-me: owner"),
        ("chgrp 65534 {outside}/chown-me", {"owner_changed": True}, "outside/chown-me: group"),
        ("touch -d @5 {outside}/utime-me", {"times_changed": True}, "outside/utime-me: mtime"),
        (
            '{python} -c \'import os, sys; os.setxattr(sys.argv[1], "user.x", b"1")\''
            " {outside}/xattr-me",
            {"xattrs_changed": True},
            "outside/xattr-me: ctime",
        ),
        ("chmod 600 {outside}/sentinel", {"sentinel": "changed"}, "outside/sentinel: type and"),
        ("touch -d @5 {outside}/sentinel", {"sentinel": "changed"}, "outside/sentinel: mtime"),
        (
            "ln {outside}/sentinel {outside}/more",
            {"sentinel": "changed"},
            "outside/sentinel: links",
        ),
        ("mkdir {outside}/.hidden", {}, "outside: 1 name(s) harness did not make"),
        ("chmod 600 {in_tmp}", {"sentinel": "changed"}, "/tmp/harness-sentinel-"),
        ("rm {in_var_tmp}", {"sentinel": "changed"}, "/var/tmp/harness-sentinel-"),
    ],
)
async def test_each_escape_is_seen_from_the_host(
    tmp_path: Path, action: str, seen: dict[str, object], said: str
) -> None:
    """Every change the judge relies on, made by the "sandbox", is what the host
    reports: content, size, existence, name, mode, owner, times, of every file harness
    made outside (`said` is how the change is named)."""
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    script = action.format(
        outside=f"{sentinels.root}/outside", allowed=sentinels.allowed, tag=TAG,
        token=sentinels.token, in_tmp=sentinels.places[0], in_var_tmp=sentinels.places[1],
        python=sys.executable,
    )  # fmt: skip
    _, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0
    fs = sentinels.inspection(report.fs or {})
    changes = str(fs.pop("changes"))
    assert fs == {**{k: v for k, v in UNTOUCHED.items() if k != "changes"}, **seen}
    assert changes.startswith(said), changes


async def test_fixture_modes_do_not_depend_on_the_hosts_umask(tmp_path: Path) -> None:
    """A sandbox user must traverse the fixture and write the allowed and outside
    folders, whatever umask the login shell has."""
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    root = sentinels.root
    show = f"stat -c '%n %a' {root} {root}/allowed {root}/outside {root}/outside/*"
    argv = ["sh", "-c", 'umask 077; exec "$@"', "umask", *envelope.wrap(["sh", "-c", show])]
    opened, report = envelope.open(await LocalTransport().run(argv, timeout=30))
    assert report is not None, opened
    modes = dict(line.rsplit(" ", 1) for line in opened.stdout.splitlines())
    assert modes == {
        root: "755",
        f"{root}/allowed": "777",
        f"{root}/outside": "777",
        f"{root}/outside/sentinel": "644",
        f"{root}/outside/listed-{sentinels.token}": "666",
        f"{root}/outside/rmdir-me": "777",
        **{f"{root}/{name}": "666" for name in OWN if name != "outside/rmdir-me"},
        f"{root}/outside/overwrite-me": "666",
        f"{root}/outside/rename-me": "666",
    }


async def test_an_existing_fixture_is_never_reused(tmp_path: Path) -> None:
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    Path(sentinels.root).mkdir(parents=True)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    _, report = envelope.open(await _run(envelope, "true"))
    assert report is not None and report.setup_error is not None
    assert "File exists" in report.setup_error
    assert Path(sentinels.root).is_dir()  # not ours to remove


async def test_a_fifo_in_the_sentinels_place_is_missing_not_a_hang(tmp_path: Path) -> None:
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    outside = f"{sentinels.root}/outside"
    script = f"rm {outside}/sentinel {outside}/overwrite-me && mkfifo {outside}/sentinel"
    script += f" && ln -s /dev/zero {outside}/overwrite-me"
    _, report = envelope.open(await _run(envelope, script))
    assert report is not None
    fs = sentinels.inspection(report.fs or {})
    assert fs["sentinel"] == "missing" and fs["overwritten"] is True


@pytest.mark.parametrize("locale", [None, "C.UTF-8"])
async def test_the_sandbox_keeps_the_callers_locale(tmp_path: Path, locale: str | None) -> None:
    envelope = Envelope.new(TAG, sentinels=None, canary=None)
    inner = envelope.wrap(["sh", "-c", 'echo "${LC_ALL-unset}"'])
    argv = ["env", "-u", "LC_ALL", *([f"LC_ALL={locale}"] if locale else []), *inner]
    opened, report = envelope.open(await LocalTransport().run(argv, timeout=30))
    assert report is not None
    assert opened.stdout == f"{locale or 'unset'}\n"


async def test_sentinels_that_cannot_be_made_stop_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "fs").write_text("a file where the folder should be")
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    ran = tmp_path / "sandbox-ran"
    _, report = envelope.open(await _run(envelope, f"touch {ran}"))
    assert report is not None and report.exit_status == SETUP_FAILED
    assert not ran.exists()
    assert report.setup_reason.startswith("sentinels could not be made: mkdir:")
    assert report.fs is None


@pytest.mark.parametrize(
    "cut",
    [
        lambda s: s[:-1],  # the last newline
        lambda s: s[: s.rfind(" ")] + "\n",  # the count
        lambda s: s.replace(" evidence\n", " evidenc\n"),  # the header
        lambda s: s[: s.rfind("\n", 0, len(s) - 1) + 1],  # the whole trailer
    ],
)
async def test_a_damaged_report_is_no_report(
    tmp_path: Path, canary: RunningCanary, cut: Callable[[str], str]
) -> None:
    envelope = Envelope.new(TAG, sentinels=None, canary=canary)
    done = await _run(envelope, "echo probe-output")
    assert envelope.open(done)[1] is not None
    damaged = Completed(**{**_fields(done), "stdout": cut(done.stdout)})
    opened, report = envelope.open(damaged)
    assert report is None and opened.stdout == damaged.stdout


async def test_a_report_that_does_not_read_is_none_and_leaves_the_output_clean(
    tmp_path: Path,
) -> None:
    """The frame intact (this cell's marker, sizes that add up) around a body that is
    not the script's: no report, and the sandbox's output without the frame."""
    envelope = Envelope.new(TAG, sentinels=None, canary=None)
    done = await _run(envelope, "echo probe-output")
    body = "what no envelope writes\n"
    framed = f"probe-output\n\n{envelope.marker} evidence\n{body}{envelope.marker} 0 {len(body)}\n"
    opened, report = envelope.open(Completed(**{**_fields(done), "stdout": framed}))
    assert report is None and opened.stdout == "probe-output\n"


async def test_another_cells_marker_is_not_accepted(tmp_path: Path) -> None:
    mine = Envelope.new(TAG, sentinels=None, canary=None)
    theirs = Envelope.new(TAG, sentinels=None, canary=None)
    done = await _run(theirs, "echo x")
    assert mine.open(done)[1] is None


def _fields(done: Completed) -> dict[str, object]:
    return {name: getattr(done, name) for name in Completed.__dataclass_fields__}


async def test_sentinels_in_other_host_places_are_made_and_removed(tmp_path: Path) -> None:
    """/tmp, /var/tmp and the work folder hold the token during the cell, and not after."""
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    places = sentinels.places
    assert [p.rsplit("/", 1)[0] for p in places] == ["/tmp", "/var/tmp", str(tmp_path)]
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    script = "".join(f'test "$(cat {p})" = {sentinels.token} || exit 9\n' for p in places)
    opened, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0, opened
    assert not any(Path(p).exists() for p in places)
    args = sentinels.probe_args(allowed_inside="/allowed")
    assert args[args.index("--more-sentinels") + 1] == "\n".join(places)


async def test_an_existing_file_in_a_sentinels_place_is_never_touched(tmp_path: Path) -> None:
    """A file already at a sentinel's name stops the cell and is neither written nor removed."""
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    first, taken, _ = sentinels.places
    Path(taken).write_text("not harness's")
    try:
        envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
        _, report = envelope.open(await _run(envelope, "true"))
        assert report is not None and report.setup_error is not None
        assert Path(taken).read_text() == "not harness's"
        assert not Path(first).exists() and not Path(sentinels.root).exists()
    finally:
        Path(taken).unlink()


async def test_a_decoy_process_runs_during_the_cell_and_is_stopped(tmp_path: Path) -> None:
    """An unprivileged decoy process (for the /proc/<pid>/root route) lives only during the cell."""
    require_tool("setpriv")
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None)
    script = f'cat {sentinels.root}/decoy.pid; stat -c %u "/proc/$(cat {sentinels.root}/decoy.pid)"'
    opened, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0, opened
    pid, uid = opened.stdout.split()
    assert uid == "65534"
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            break
        await anyio.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# The sandbox lists harness's witnesses beside it: each `sleep` whose parent's arguments
# hold the cell's tag, by pid and uid.
WITNESSES = f"""
import os
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        st = dict(ln.split(":", 1) for ln in open(f"/proc/{{p}}/status").read().splitlines())
        parent = open(f"/proc/{{st['PPid'].strip()}}/cmdline", "rb").read().split(b"\\0")
    except (OSError, ValueError):
        continue
    if st["Name"].strip() == "sleep" and {TAG!r}.encode() in parent:
        print(p, st["Uid"].split()[0])
"""


def _account() -> str:
    """A uid of an account of this host's (its passwd) that is neither root nor 65534."""
    uids = sorted({p.pw_uid for p in pwd.getpwall()} - {0, 65534})
    if not uids:
        pytest.skip("no account here but root and nobody")
    return str(1000 if 1000 in uids else uids[-1])


def _unused() -> str:
    """A uid no account of this host's has."""
    taken = {p.pw_uid for p in pwd.getpwall()}
    return str(next(u for u in range(4000, 60000) if u not in taken))


@pytest.mark.parametrize(
    ("user", "uids"),
    [("account", ["account", "65534"]), ("", ["65534"]), ("root", ["65534"]),
     ("65534", ["65534"]), ("unused", ["65534"])],
)  # fmt: skip
async def test_a_witness_of_the_workloads_own_uid_lives_only_during_the_cell(
    tmp_path: Path, user: str, uids: list[str]
) -> None:
    """Beside uid 65534's witness, one of the policy's run_as_user where that is neither
    root nor 65534 (a host process of the workload's own uid, for the same-uid calls:
    setpriority, F_SETOWN), and an account of this host's (a uid none has stands for no
    host process); both stopped with the cell."""
    require_tool("setpriv")
    if os.geteuid() != 0:
        pytest.skip("needs root (setpriv --reuid)")
    named = {"account": _account(), "unused": _unused()}
    user, uids = named.get(user, user), sorted(named.get(u, u) for u in uids)
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None, user=user)
    lister = tmp_path / "witnesses.py"
    lister.write_text(WITNESSES)
    opened, report = envelope.open(await _run(envelope, f"{sys.executable} {lister}"))
    assert report is not None and report.exit_status == 0, opened
    seen = dict(line.split() for line in opened.stdout.splitlines())
    assert sorted(seen.values()) == uids, opened.stdout
    for pid in seen:
        for _ in range(100):
            if _state(pid) == "Z":
                break
            await anyio.sleep(0.05)
        assert _state(pid) == "Z", pid


async def test_a_witness_of_each_uid_the_sandbox_runs_as(tmp_path: Path) -> None:
    """In a cell of the privilege floor's, the envelope looks for the uids the sandbox's
    processes (their arguments hold `--tag TAG`, as the probe's do) run as on the host,
    and starts a witness of each but root and 65534: a user namespace's root may be an
    unprivileged uid here, which no policy names. Stopped with the cell."""
    require_tool("setpriv")
    if os.geteuid() != 0:
        pytest.skip("needs root (setpriv --reuid)")
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id=TAG)
    envelope = Envelope.new(TAG, sentinels=sentinels, canary=None, watch=True)
    lister = tmp_path / "witnesses.py"
    lister.write_text(WITNESSES)
    as_uid = "setpriv --reuid={0} --regid={0} --clear-groups sh -c 'sleep 1.2' sh --tag {1}"
    account = _account()
    # Another account's process with another cell's tag: no witness of its uid here.
    others = {p.pw_uid for p in pwd.getpwall()} - {0, 65534, int(account)}
    other_uid = min(others) if others else 65534
    ours, other = as_uid.format(account, TAG), as_uid.format(other_uid, "harness-other")
    script = f"{other} & {ours}; wait; {sys.executable} {lister}"
    opened, report = envelope.open(await _run(envelope, script))
    assert report is not None and report.exit_status == 0, opened
    seen = dict(line.split() for line in opened.stdout.splitlines())
    assert sorted(seen.values()) == sorted([account, "65534"]), opened.stdout
    for pid in seen:
        for _ in range(100):
            if _state(pid) == "Z":
                break
            await anyio.sleep(0.05)
        assert _state(pid) == "Z", pid
