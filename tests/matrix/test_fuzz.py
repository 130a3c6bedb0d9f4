"""Fuzzing the matrix and inventory loaders: every input gives a model or one SpecError.

Generated documents: syntax errors, wrong types, unknown keys, self-references,
duplicate and missing inventories, huge and hostile values. Never a traceback.
"""

from __future__ import annotations

import ipaddress
import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import SpecError
from harness.matrix import load_matrix

KEYS = [
    "name", "inventory", "hosts", "scenarios", "settings", "runtimes", "canary", "kind",
    "binary", "flags", "argv", "facts", "expect", "attribution", "endpoint_only", "mechanisms",
    "timeout", "concurrency", "check_timeout", "mode", "address", "port", "transport",
    "defaults", "user", "identity_file", "known_hosts", "tags", "workdir", "netns", "platform",
    "supervisor", "supervisor_fault", "range4", "range6",
]  # fmt: skip
HOSTILE = ["$(touch /tmp/pwned)", "`id`", "a;b", "../../etc/passwd", "-oProxyCommand=x",
           "\u0000", "\n", "é🙂", "' OR 1=1", "x" * 5000, "{probe}", "{args}", "tag:"]  # fmt: skip

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [*HOSTILE, "host", "runsc", "command", "local", "ssh", "mechanisms", "reference"]
    ),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=25,
)


def toml_value(v: Any) -> str:
    """A tiny TOML writer for generated values (inline tables and arrays)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON string escapes are valid TOML basic strings
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def toml_doc(d: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in d.items()) + "\n"


documents = st.one_of(
    # Structured: top-level keys from the real vocabulary with arbitrary values.
    st.dictionaries(st.sampled_from(KEYS), values, max_size=8).map(toml_doc),
    # Near-valid: a real skeleton with one part replaced.
    st.builds(
        lambda inv, rt, extra: toml_doc({"name": "f", "inventory": inv, "runtimes": rt, **extra}),
        st.sampled_from(["inv.toml", ["inv.toml", "inv.toml"], "m.toml", "nope.toml", ".", ""])
        | values,
        st.dictionaries(st.text(max_size=6), values, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), values, max_size=2),
    ),
    # Raw text: syntax errors, binary junk, deep nesting.
    st.text(alphabet=string.printable + "[]{}=\"'\u00e9", max_size=300),
    st.integers(min_value=1, max_value=3000).map(lambda n: "a = " + "[" * n + "]" * n),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)
INVENTORY = '[hosts.l]\ntransport = "local"\n[hosts.r]\naddress = "r.example"\ntags = ["x"]\n'


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents, inventory=st.one_of(st.just(INVENTORY), documents))
def test_loader_gives_a_model_or_one_spec_error(
    tmp_path_factory: pytest.TempPathFactory, doc: str, inventory: str
) -> None:
    """1000 generated matrices (and inventories): load, or one single-line SpecError."""
    folder = tmp_path_factory.mktemp("fz")
    (folder / "inv.toml").write_text(inventory, errors="surrogatepass")
    path = folder / "m.toml"
    path.write_text(doc, errors="surrogatepass")
    try:
        load_matrix(path)
    except SpecError as exc:
        text = str(exc)
        assert "\n" not in text and text.strip(), text
        assert exc.file
        assert len(text) < 2000


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents)
def test_validate_never_prints_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, doc: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`harness validate` on generated files: exit 0 or 2, at most one stderr line."""
    folder = tmp_path_factory.mktemp("fzcli")
    (folder / "inv.toml").write_text(INVENTORY)
    (folder / "m.toml").write_text(doc, errors="surrogatepass")
    with pytest.raises(SystemExit) as info:
        main(["validate", str(folder / "m.toml")])
        raise SystemExit(0)
    err = capsys.readouterr().err
    assert info.value.code in (0, 2), err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 1


def test_a_huge_file_is_refused(tmp_path: Path) -> None:
    """A matrix over the size limit is refused before parsing."""
    path = tmp_path / "m.toml"
    path.write_text("# " + "x" * (5 * 1024 * 1024))
    with pytest.raises(SpecError, match="larger than"):
        load_matrix(path)


def test_inventory_cycle_through_the_matrix_is_refused(tmp_path: Path) -> None:
    """A matrix naming itself as its inventory is a clear error, not a loop."""
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\ninventory = ["m.toml"]\n[runtimes.h]\nkind = "host"\n')
    with pytest.raises(SpecError, match="refers to the matrix itself"):
        load_matrix(path)


def test_a_name_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    """Found by the fuzzer: a runtime named "\\n" is quoted in the error key."""
    (tmp_path / "inv.toml").write_text(INVENTORY)
    path = tmp_path / "m.toml"
    path.write_text('name = "0"\ninventory = "inv.toml"\n"runtimes" = {"\\n" = false}\n')
    with pytest.raises(SpecError) as info:
        load_matrix(path)
    assert "\n" not in str(info.value)
    assert info.value.key == 'runtimes."\\n"'


PRIVATE = [
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
]
networks = st.one_of(
    st.builds(
        lambda a, plen: ipaddress.IPv4Network((a, plen), strict=False),
        st.integers(min_value=0, max_value=(1 << 32) - 1)
        | st.sampled_from([0x0A000000, 0xAC100000]),
        st.integers(min_value=0, max_value=32),
    ),
    st.builds(
        lambda a, plen: ipaddress.IPv6Network((a, plen), strict=False),
        st.integers(min_value=0, max_value=(1 << 128) - 1) | st.just(0xFD << 120),
        st.integers(min_value=0, max_value=128),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(net=networks, key=st.sampled_from(["range4", "range6"]))
def test_a_canary_range_is_private_and_wide_or_one_error(
    tmp_path_factory: pytest.TempPathFactory, net: ipaddress.IPv4Network, key: str
) -> None:
    """Any network as `range4` or `range6`: it loads only if it is of the key's family,
    private and wide enough (2**8 subnets), and then the resolver ranges follow it;
    otherwise one line naming the file and `canary.<key>`."""
    folder = tmp_path_factory.mktemp("range")
    (folder / "inv.toml").write_text(INVENTORY)
    path = folder / "m.toml"
    matrix = f'name = "r"\ninventory = "inv.toml"\n[canary]\n{key} = "{net}"\n'
    path.write_text(matrix + '[runtimes.h]\nkind = "host"\n')
    family, widest = (4, 22) if key == "range4" else (6, 56)
    fits = (
        net.version == family
        and net.prefixlen <= widest
        and any(p.version == family and net.subnet_of(p) for p in PRIVATE)
    )
    try:
        canary = load_matrix(path).canary
    except SpecError as exc:
        assert not fits, exc
        assert exc.key == f"canary.{key}" and exc.file
        assert f"m.toml: canary.{key}: " in str(exc) and "\n" not in str(exc)
    else:
        assert fits
        assert getattr(canary, key) == net
        assert net in canary.resolver_ranges
