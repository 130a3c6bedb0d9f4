"""The probe's JSON lines: what is trusted, what spoils the cell, and what is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.probe.protocol import PROTOCOL, parse_output, probe_args

START = {"type": "start", "probe": "harness-probe", "protocol": PROTOCOL, "pid": 1}


def _out(*lines: dict[str, Any] | str, done: int | None = None) -> str:
    rows = [json.dumps(START)]
    rows += [line if isinstance(line, str) else json.dumps(line) for line in lines]
    if done is not None:
        rows.append(json.dumps({"type": "done", "count": done}))
    return "\n".join(rows) + "\n"


def _check(**fields: Any) -> dict[str, Any]:
    return {
        "type": "check",
        "scenario": "egress-confinement",
        "id": "tcp-raw-ip",
        "kind": "attempt",
        "outcome": "blocked",
        **fields,
    }


def _fact(**fields: Any) -> dict[str, Any]:
    return {
        "type": "fact",
        "scenario": "mechanisms",
        "id": "landlock_abi",
        "status": "ok",
        "value": 7,
        **fields,
    }


def test_a_complete_output_is_kept_whole() -> None:
    """Facts, checks and info lines are kept with their fields; blank lines are ignored."""
    stdout = _out(
        _fact(errno=None, elapsed_ms=2, detail="x"),
        "",
        "   ",
        _check(
            errno="ENETUNREACH",
            detail="d",
            elapsed_ms=1.5,
            evidence={"src_port": 4, "nested": {"a": 1}, "s": "v", "f": 0.5},
        ),
        {"type": "info", "id": "uid", "value": 65534},
        done=2,
    )
    out = parse_output(stdout)
    assert out.complete and out.done and out.problems == [] and out.fatal is None
    assert out.start == START
    [fact] = out.facts
    assert (
        fact.id,
        fact.scenario,
        fact.status,
        fact.value,
        fact.errno,
        fact.detail,
        fact.elapsed_ms,
    ) == ("landlock_abi", "mechanisms", "ok", 7, None, "x", 2.0)
    [check] = out.checks
    assert (check.id, check.scenario, check.kind, check.outcome, check.errno, check.detail) == (
        "tcp-raw-ip",
        "egress-confinement",
        "attempt",
        "blocked",
        "ENETUNREACH",
        "d",
    )
    assert check.elapsed_ms == 1.5
    assert check.evidence == {"src_port": 4, "s": "v", "f": 0.5}
    assert out.info == {"uid": {"id": "uid", "value": 65534}}


def test_fields_of_the_wrong_type_are_dropped_not_trusted() -> None:
    """A non-string errno, a non-numeric elapsed time and overlong details are cut."""
    out = parse_output(
        _out(
            _fact(errno=38, elapsed_ms="slow", detail="d" * 600),
            _check(errno=111, elapsed_ms=[1], detail="c" * 600),
            done=2,
        )
    )
    assert out.complete
    assert out.facts[0].errno is None and out.facts[0].detail == "d" * 500
    assert out.checks[0].errno is None and out.checks[0].detail == "c" * 500
    assert out.checks[0].elapsed_ms is None
    assert out.facts[0].elapsed_ms is None


@pytest.mark.parametrize(
    ("lines", "done", "problem"),
    [
        ([_check(), _check(outcome="escaped")], 2, "check tcp-raw-ip reported twice"),
        ([_fact(), _fact(status="unavailable")], 2, "fact landlock_abi reported twice"),
        (
            [_check(kind="control", id="priv-setuid0", scenario="privilege-floor", outcome="ok")],
            1,
            "check priv-setuid0 has kind 'control', not 'attempt'",
        ),
        (
            [_check(kind="attempt", id="attr-allowed-connect", scenario="attribution")],
            1,
            "check attr-allowed-connect has kind 'attempt', not 'control'",
        ),
        ([_check(kind="probe")], 1, "unknown check kind 'probe'"),
        ([_check(outcome="ok")], 1, "unknown attempt outcome 'ok'"),
        ([_check(evidence=[1])], 1, "evidence is not an object"),
        ([_fact(status="maybe")], 1, "unknown status 'maybe'"),
        ([_fact(value=[7])], 1, "value is not a number, bool or string"),
        ([_fact(value={"a": 1})], 1, "value is not a number, bool or string"),
        (
            [
                {
                    "type": "check",
                    "scenario": "egress-confinement",
                    "kind": "attempt",
                    "outcome": "blocked",
                }
            ],
            1,
            "'id'",
        ),
        ([{"type": "fact", "status": "ok"}], 1, "'id'"),
        ([{"type": "info"}], 0, "'id'"),
        ([{"type": "mystery"}], 0, "unknown line type 'mystery'"),
        (["[1, 2]"], 0, "not an object"),
        (["not json"], 0, "Expecting value"),
        ([START], 0, "a second start line"),
        ([_fact()], 0, "completion line counts 0, saw 1"),
        ([_fact()], 2, "completion line counts 2, saw 1"),
        ([_fact(), _check()], 1, "completion line counts 1, saw 2"),
    ],
)
def test_a_malformed_line_spoils_the_output(lines: list[Any], done: int, problem: str) -> None:
    """Each of these makes the output incomplete (the cell inconclusive), naming the line."""
    out = parse_output(_out(*lines, done=done))
    assert not out.complete
    assert out.problems, out
    assert problem in out.problems[0]
    assert out.failure() == out.problems[0]
    assert out.problems[0].startswith("probe output line ")


def test_output_after_the_done_line_is_refused() -> None:
    """Anything after `done` (a check, a fact, a second done) is a problem."""
    for extra in (_check(), _fact(), {"type": "done", "count": 1}):
        out = parse_output(_out(_fact(), done=1) + json.dumps(extra) + "\n")
        assert not out.complete
        line = json.dumps(extra)
        shown = line if len(line) <= 80 else line[:77] + "..."
        why = "output after the completion line"
        assert out.problems == [f"probe output line 4 unusable ({why}): {shown!r}"]


def test_a_boolean_count_is_not_a_count() -> None:
    """`count: true` is not 1."""
    stdout = _out(_fact()) + '{"type":"done","count":true}\n'
    assert not parse_output(stdout).complete
    assert parse_output(_out(_fact(), done=1)).complete


def test_lines_before_the_start_line_are_refused() -> None:
    """Facts, checks, info and done before `start` are not this probe's run."""
    for line in (_fact(), _check(), {"type": "info", "id": "x"}, {"type": "done", "count": 0}):
        out = parse_output(json.dumps(line) + "\n" + json.dumps(START) + "\n")
        assert out.problems and "output before the start line" in out.problems[0]


@pytest.mark.parametrize(
    ("stdout", "failure"),
    [
        ("", "probe printed nothing it understood"),
        (_out(_fact()), "probe output ended without its completion line"),
        (_out('{"type":"fatal","detail":"deadline"}'), "probe failed: deadline"),
        (_out('{"type":"fatal"}', done=0), "probe failed: unknown"),
        (json.dumps({**START, "protocol": PROTOCOL + 1}) + "\n", "expected 1"),
    ],
)
def test_why_an_output_is_not_trusted(stdout: str, failure: str) -> None:
    """The one-line reason names what was missing or wrong."""
    out = parse_output(stdout)
    assert not out.complete
    assert failure in out.failure()


def test_a_fatal_line_spoils_even_a_done_output() -> None:
    """A probe that reported a fatal error is never complete, and its detail is cut."""
    out = parse_output(_out(json.dumps({"type": "fatal", "detail": "x" * 400}), done=0))
    assert out.done and not out.complete
    assert out.fatal == "x" * 300


def test_a_long_bad_line_is_shown_cut() -> None:
    """A problem shows at most 80 characters of the line."""
    line = "y" * 200
    out = parse_output(_out(line, done=0))
    assert out.problems[0].endswith(repr("y" * 77 + "..."))
    short = parse_output(_out("y" * 80, done=0))
    assert short.problems[0].endswith(repr("y" * 80))


def test_probe_arguments() -> None:
    """Limits in milliseconds (at least 1), the tag, options, then the scenarios."""
    assert probe_args(
        ["egress-confinement", "mechanisms"],
        check_timeout=2.5,
        deadline=60,
        tag="t-1",
        options=["--resolver", "10.0.0.1"],
    ) == [
        "run",
        "--tag",
        "t-1",
        "--check-timeout-ms",
        "2500",
        "--deadline-ms",
        "60000",
        "--resolver",
        "10.0.0.1",
        "egress-confinement",
        "mechanisms",
    ]
    assert probe_args([], check_timeout=0.0001, deadline=0, tag="t")[3:7] == [
        "--check-timeout-ms",
        "1",
        "--deadline-ms",
        "1",
    ]


def test_distinct_checks_are_all_kept() -> None:
    """Two checks of one scenario, or one id under two scenarios, are not duplicates."""
    out = parse_output(_out(_check(), _check(id="doh-port"), _check(scenario="other"), done=3))
    assert out.complete, out.problems
    assert [(c.scenario, c.id) for c in out.checks] == [
        ("egress-confinement", "tcp-raw-ip"),
        ("egress-confinement", "doh-port"),
        ("other", "tcp-raw-ip"),
    ]


def test_a_bad_line_of_81_characters_is_cut() -> None:
    """The cut starts just past 80 characters."""
    out = parse_output(_out("z" * 81, done=0))
    assert out.problems[0].endswith(repr("z" * 77 + "..."))


MOUNT = ["254:0", "ext4", "/allowed", "/w/allowed"]


@pytest.mark.parametrize(
    ("mounts", "kept"),
    [
        ([MOUNT], True),
        ([], True),
        ([MOUNT] * 512, True),
        ([MOUNT] * 513, False),  # bounded
        ([MOUNT[:3]], False),
        ([[*MOUNT, "passwd"]], True),  # what the probe read at the mount point
        ([[*MOUNT, "x", "y"]], False),
        ([[*MOUNT, 5]], False),
        ([["254:0", "ext4", "/allowed", 7]], False),
        ([MOUNT, "254:0 ext4 / /"], False),
        ("254:0 ext4 / /", True),  # a scalar is kept as a scalar
    ],
)
def test_only_a_well_formed_mount_table_is_kept(mounts: Any, kept: bool) -> None:
    """Evidence keeps scalars and `mounts` as bounded [dev, type, point, root] rows."""
    line = _check(scenario="filesystem-confinement", id="fs-mounts", outcome="succeeded",
                  evidence={"mounts": mounts, "boot_id": "b"})  # fmt: skip
    [check] = parse_output(_out(line, done=1)).checks
    assert check.evidence.get("boot_id") == "b"
    assert ("mounts" in check.evidence) is kept
    other = _check(evidence={"table": [MOUNT]})
    assert parse_output(_out(other, done=1)).checks[0].evidence == {}


# --- the cell nonce and the digest (a replayed output is never complete) -------------


def _bound(nonce: str, *body: dict[str, Any], start_nonce: str | None = None,
           done_nonce: str | None = None, digest: str | None = None) -> str:  # fmt: skip
    """Output as the probe prints it with --cell-nonce: the nonce in start and done,
    the digest over the nonce and every line between."""
    import hashlib

    lines = [json.dumps(b) for b in body]
    start = {**START, "cell_nonce": start_nonce if start_nonce is not None else nonce}
    want = hashlib.sha256(f"{nonce}\n".encode() + "".join(f"{ln}\n" for ln in lines).encode())
    done = {
        "type": "done",
        "count": len(body),
        "cell_nonce": done_nonce if done_nonce is not None else nonce,
        "digest": digest if digest is not None else want.hexdigest(),
    }
    return "\n".join([json.dumps(start), *lines, json.dumps(done)]) + "\n"


def test_output_bound_to_this_cell_is_complete() -> None:
    """The nonce in start and done and the right digest: complete, every line kept."""
    out = parse_output(_bound("n1", _check(), _fact()), cell_nonce="n1")
    assert out.complete, out.problems
    assert len(out.checks) == 1 and len(out.facts) == 1


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"start_nonce": "n0"}, "start line without this cell's nonce"),
        ({"done_nonce": "n0"}, "completion line without this cell's nonce"),
        ({"digest": "0" * 64}, "digest does not match"),
        ({"digest": ""}, "digest does not match"),
    ],
)
def test_output_of_another_cell_is_never_complete(change: dict[str, str], why: str) -> None:
    """A nonce or digest that is not this cell's: incomplete (the cell is an error and
    its verdicts inconclusive), with the reason."""
    out = parse_output(_bound("n1", _check(), **change), cell_nonce="n1")
    assert not out.complete
    assert why in out.failure()


def test_replayed_lines_under_a_fresh_frame_fail_the_digest() -> None:
    """Check lines recorded in another cell, between a start and a done line that carry
    this cell's nonce and the other cell's digest, are caught by the digest."""
    recorded = _bound("n0", _check(outcome="blocked")).splitlines()
    own = _bound("n1", _check(outcome="escaped")).splitlines()
    forged = "\n".join([own[0], recorded[1], own[2]]) + "\n"
    out = parse_output(forged, cell_nonce="n1")
    assert not out.complete and "digest" in out.failure()


def test_without_a_cell_nonce_nothing_is_asked() -> None:
    """Parsing without a nonce (an older results folder) asks for neither."""
    out = parse_output(_out(_check(), done=1))
    assert out.complete, out.problems


def test_probe_args_carry_the_cell_nonce() -> None:
    """The nonce is on the probe's command line only when there is one."""
    args = probe_args(
        ["egress-confinement"], check_timeout=1, deadline=2, tag="t", cell_nonce="abc"
    )
    assert args[args.index("--cell-nonce") + 1] == "abc"
    assert "--cell-nonce" not in probe_args(
        ["egress-confinement"], check_timeout=1, deadline=2, tag="t"
    )


WRITE = ["254:0", "ext4", "/srv/drop", "/var/tmp/drop", "", "made a file (O_TMPFILE)"]
HELD = ["3", "file", "254:0", "/var/tmp/s", "", "", "r", "read", "100"]
LINK = ["254:0", "ext4", "/allowed/config.toml", "2", "1", "opened a file for writing"]
CTTY = ["fd 0", "0", "own", "0:26", "/dev/pts/0", "", "1", "0"]
OVERLAY = ["/logs", "rw,lowerdir=/var/log", "dpkg.log", "7", "apt/term.log", "8"]


@pytest.mark.parametrize(
    ("key", "row", "kept"),
    [
        ("writes", WRITE, True),
        ("writes", WRITE[:5], False),
        ("writes", [*WRITE, "x"], False),
        ("held_files", HELD, True),
        ("held_files", HELD[:8], False),
        ("held_files", [*HELD, "x"], False),
        ("held_changed", ["3", "fchmod, futimens"], True),
        ("held_changed", ["3"], False),
        ("links", LINK, True),
        ("links", LINK[:5], False),
        ("links", [*LINK, "x"], False),
        ("ctty", CTTY, True),
        ("ctty", CTTY[:7], False),
        ("ctty", [*CTTY, "x"], False),
        ("overlays", OVERLAY[:2], True),
        ("overlays", OVERLAY[:4], True),
        ("overlays", OVERLAY[:6], True),
        ("overlays", OVERLAY[:3], False),
        ("overlays", OVERLAY[:1], False),
        ("overlays", [*OVERLAY[:2], *["n", "1"] * 16], True),
        ("overlays", [*OVERLAY[:2], *["n", "1"] * 17], False),
    ],
)
def test_the_other_tables_keep_their_own_width(key: str, row: list[str], kept: bool) -> None:
    """`fs-write-reach`'s writes are six strings a row, `fs-inherited-fds`' held files
    nine and its controlling terminal eight, `fs-mounts`' overlays two and up to 16
    pairs: a row of another width drops the table (the judge then errs, never passes)."""
    line = _check(scenario="filesystem-confinement", id="fs-x", outcome="succeeded",
                  evidence={key: [row], "boot_id": "b"})  # fmt: skip
    [check] = parse_output(_out(line, done=1)).checks
    assert (key in check.evidence) is kept


@pytest.mark.parametrize(
    "line",
    [
        '{"type":"check","n":1.5e3,"s":"\\u00e9"}',
        ' {"a":1}',
        '{"a":1} ',
        '{"a":1}\t',
        '{"a":1} {"b":2}',
        '{"a":1}x',
        "\ufeff{}",
        "",
        "   ",
        "[1, 2]",
        "1 2",
        "NaN",
        '"text"',
        '{"a":',
        "{'a': 1}",
        '{"a":1,}',
    ],
)
def test_a_line_is_read_as_json_loads_reads_it(line: str) -> None:
    """The probe's lines are decoded without `json.loads`' wrapping where a line is one
    value and nothing else: the same value or the same error, whatever the line."""
    from harness.probe.protocol import _loads

    try:
        expected: Any = ("value", json.loads(line))
    except ValueError as exc:
        expected = ("error", type(exc), str(exc))
    try:
        got: Any = ("value", _loads(line))
    except ValueError as exc:
        got = ("error", type(exc), str(exc))
    assert repr(got) == repr(expected)


@pytest.mark.parametrize(
    "line",
    [
        '{"type": "fact", "id": "f", "status": "ok", "elapsed_ms": ' + "9" * 400 + "}",
        '{"type": "check", "id": "c", "kind": "attempt", "outcome": "blocked", '
        '"elapsed_ms": ' + "9" * 400 + "}",
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["fact too large for a float", "check too large for a float", "nested too deep"],
)
def test_a_line_python_cannot_hold_is_a_problem_never_a_crash(line: str) -> None:
    """The sandbox writes these lines: one whose number no float holds, or whose value
    nests deeper than Python's stack, spoils the output like any other bad line."""
    out = parse_output(json.dumps(START) + "\n" + line + "\n")
    assert len(out.problems) == 1 and "probe output line 2 unusable" in out.problems[0]
    assert not out.done
