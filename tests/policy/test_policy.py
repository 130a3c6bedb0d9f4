"""A runtime's declared policy: OpenShell's file as it is, or the same fields inline;
every problem one line naming the file and the key (hypothesis-fuzzed)."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import SpecError
from harness.matrix import load_matrix
from harness.policy.models import Policy

OPENSHELL = """\
version: 1
filesystem_policy:
  include_workdir: true
  read_only:
    - /usr
    - /lib
    - /proc
    - /dev/urandom
    - /etc/
  read_write:
    - /sandbox
    - /tmp
landlock:
  compatibility: best_effort
process:
  run_as_user: sandbox
  run_as_group: sandbox
network_policies:
  github:
    name: github
    endpoints:
      - { host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only }
      - host: github.com
        port: 443
    binaries:
      - { path: /usr/bin/git }
"""


def _matrix(folder: Path, policy: str) -> Path:
    (folder / "inv.toml").write_text('[hosts.h]\ntransport = "local"\n')
    path = folder / "m.toml"
    path.write_text(
        f'name = "m"\ninventory = "inv.toml"\n[runtimes.r]\nkind = "host"\npolicy = {policy}\n'
    )
    return path


def _policy(path: Path) -> Policy:
    policy = load_matrix(path).runtimes["r"].policy
    assert policy is not None
    return policy


def test_an_openshell_policy_file_is_read_as_it_is(tmp_path: Path) -> None:
    """Every field of OpenShell's format, paths normalised, source and digest kept."""
    (tmp_path / "sandbox.yaml").write_text(OPENSHELL)
    policy = _policy(_matrix(tmp_path, '"sandbox.yaml"'))
    assert policy.readable == ("/usr", "/lib", "/proc", "/dev/urandom", "/etc", "/sandbox", "/tmp")
    assert policy.writable == ("/sandbox", "/tmp")
    assert (policy.process.run_as_user, policy.process.run_as_group) == ("sandbox", "sandbox")
    assert policy.source == str(tmp_path / "sandbox.yaml")
    assert len(policy.sha256) == 64
    assert policy.grants_read("/etc/passwd") and not policy.grants_read("/etcetera")
    assert policy.grants_write("/tmp/x") and not policy.grants_write("/usr/bin/env")
    notes = " ".join(policy.notes())
    for word in ("landlock", "include_workdir", "access", "enforcement", "protocol"):
        assert word in notes


def test_the_same_fields_inline(tmp_path: Path) -> None:
    """A matrix without a policy file writes the fields as a table; its digest is stable."""
    inline = '{ filesystem_policy = { read_only = ["/usr"] }, process = { run_as_user = 65534 } }'
    policy = _policy(_matrix(tmp_path, inline))
    assert policy.readable == ("/usr",) and policy.process.run_as_user == 65534
    assert policy.source == "inline" and policy == _policy(_matrix(tmp_path, inline))


@pytest.mark.parametrize(
    ("policy", "file", "error"),
    [
        ('"nope.yaml"', "nope.yaml", "no such file"),
        ('"dir"', "dir", "is a directory, expected a regular file"),
        ("5", "m.toml", "runtimes.r.policy: expected a policy file's path or an inline table"),
        ("{ filesystem_polcy = {} }", "m.toml", "runtimes.r.policy.filesystem_polcy: unknown key"),
        (
            '{ filesystem_policy = { read_only = ["usr"] } }',
            "m.toml",
            "runtimes.r.policy.filesystem_policy.read_only: 'usr' is not an absolute path",
        ),
        (
            '{ filesystem_policy = { read_write = ["/a/../etc"] } }',
            "m.toml",
            "runtimes.r.policy.filesystem_policy.read_write: '/a/../etc' contains '..'",
        ),
        ("{ version = 2 }", "m.toml", "runtimes.r.policy.version: version 2 is not supported"),
        ('{ process = { run_as_user = "²" } }', "m.toml", "runtimes.r.policy.process.run_as_user"),
        (
            '{ process = { run_as_group = "a b" } }',
            "m.toml",
            "runtimes.r.policy.process.run_as_group",
        ),
        ("{ process = { run_as_user = -1 } }", "m.toml", "runtimes.r.policy.process.run_as_user"),
        (
            '{ network_policies = { a = { endpoints = [ { host = "x", port = 0 } ] } } }',
            "m.toml",
            "runtimes.r.policy.network_policies.a.endpoints[0].port",
        ),
    ],
)
def test_a_bad_policy_names_its_file_and_key(
    tmp_path: Path, policy: str, file: str, error: str
) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(SpecError) as info:
        load_matrix(_matrix(tmp_path, policy))
    text = str(info.value)
    assert text.split(": ", 1)[0].endswith(file) and error in text and "\n" not in text, text


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("filesystem_policy:\n  read_only: [/usr, 5]\n", "filesystem_policy.read_only[1]"),
        ("filesystem_policy: [\n", "invalid YAML (line 2)"),
        ("process:\n  run_as_usr: x\n", "process.run_as_usr: unknown key"),
        ("- a list\n", "expected a policy (a mapping), got list"),
        ("", "expected a policy (a mapping), got nothing"),
        ("a: &x [*x]\n", ""),
    ],
)
def test_a_bad_policy_file_names_the_key_inside_it(
    tmp_path: Path, content: str, error: str
) -> None:
    (tmp_path / "p.yaml").write_text(content)
    with pytest.raises(SpecError) as info:
        load_matrix(_matrix(tmp_path, '"p.yaml"'))
    text = str(info.value)
    assert text.split(": ", 1)[0].endswith("p.yaml") and error in text, text


def test_a_special_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    """A FIFO, a device or a symlink loop is one line, never a hang or a traceback."""
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    for name in ("fifo.yaml", "loop.yaml", "/dev/zero"):
        with pytest.raises(SpecError):
            load_matrix(_matrix(tmp_path, f'"{name}"'))


yaml_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(["/usr", "usr", "/..", "sandbox", "\x00", "x" * 300, "443"]),
        st.text(max_size=10),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                ["version", "filesystem_policy", "read_only", "read_write", "include_workdir",
                 "process", "run_as_user", "run_as_group", "landlock", "network_policies",
                 "endpoints", "host", "port", "binaries", "path", "name", "rules"]
            )
            | st.text(max_size=6),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=20,
)  # fmt: skip
documents = st.one_of(
    yaml_values.map(lambda v: yaml.safe_dump(v)),
    st.text(alphabet=string.printable, max_size=200),
    st.binary(max_size=100).map(lambda b: b.decode("latin-1")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents)
def test_any_policy_file_gives_a_policy_or_one_spec_error(
    tmp_path_factory: pytest.TempPathFactory, doc: str
) -> None:
    """Generated policy files: a loaded policy, or one single-line SpecError naming it."""
    folder = tmp_path_factory.mktemp("pol")
    (folder / "p.yaml").write_text(doc, errors="surrogatepass")
    try:
        _policy(_matrix(folder, '"p.yaml"'))
    except SpecError as exc:
        text = str(exc)
        assert text.split(": ", 1)[0].endswith("p.yaml") and "\n" not in text, text


EVERY_KEY = """\
version: 1
filesystem_policy: { include_workdir: false, read_only: [/usr], read_write: [/tmp] }
landlock: { compatibility: hard_requirement }
process: { run_as_user: sandbox, run_as_group: sandbox }
network_policies:
  api:
    name: api
    endpoints:
      - host: api.example.test
        path: /v1
        ports: [443, 8443]
        protocol: rest
        tls: terminate
        enforcement: enforce
        access: read-write
        rules: [{ allow: { method: GET, path: /v1/** } }]
        deny_rules: [{ method: DELETE, path: /v1/** }]
        allowed_ips: [10.0.0.0/8]
        allow_encoded_slash: true
        websocket_credential_rewrite: true
        request_body_credential_rewrite: true
        allow_uninspected_credentials: false
        persisted_queries: deny
        graphql_persisted_queries: { abc: { operation_type: query, operation_name: Q } }
        graphql_max_body_bytes: 65536
        credential_signing: aws_sigv4
        signing_service: s3
        signing_region: us-east-1
        json_rpc: { max_body_bytes: 4096 }
        mcp: { max_body_bytes: 4096, strict_tool_names: true }
      - { allowed_ips: [192.0.2.0/24], port: 80 }
    binaries:
      - { path: /usr/bin/curl, harness: true }
network_middlewares:
  redact: { kind: anything, options: { a: 1 } }
"""


def test_every_key_of_openshells_format_is_read_and_noted(tmp_path: Path) -> None:
    """Every key OpenShell's policy format documents (its NetworkEndpointDef and
    PolicyFile, including allowed_ips and network_middlewares) is accepted, and each
    one harness does not judge is named in a note; an unknown key is still an error."""
    (tmp_path / "p.yaml").write_text(EVERY_KEY)
    policy = _policy(_matrix(tmp_path, '"p.yaml"'))
    notes = " ".join(policy.notes())
    for key in (
        "allowed_ips", "network_middlewares: redact", "deny_rules", "credential_signing",
        "graphql_persisted_queries", "json_rpc", "mcp", "websocket_credential_rewrite",
        "path", "harness flag",
    ):  # fmt: skip
        assert key in notes, key
    (tmp_path / "q.yaml").write_text(EVERY_KEY.replace("signing_region:", "signing_regoin:"))
    with pytest.raises(SpecError, match="signing_regoin: unknown key"):
        load_matrix(_matrix(tmp_path, '"q.yaml"'))
    (tmp_path / "r.yaml").write_text(
        EVERY_KEY.replace("ports: [443, 8443]", "port: 1\n        ports: [2]")
    )
    with pytest.raises(SpecError, match="give port or ports, not both"):
        load_matrix(_matrix(tmp_path, '"r.yaml"'))
