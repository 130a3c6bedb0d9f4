"""A sandbox's declared policy: what it says the workload may read, change, run as and
reach. harness judges a sandbox against it (docs/policy.md): "outside" means outside
the policy (plus harness's own grants), so a sandbox that shows the host's /usr
because its policy grants it is not escaping.

The file format is OpenShell's sandbox policy (YAML) as it is; the same fields may be
written inline in a matrix's runtime entry. Unknown keys are errors naming the file and
key; keys harness reads but does not judge (Landlock's compatibility mode, L7 endpoint
rules) are accepted with a note that says so, never silently.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

MAX_POLICY_BYTES = 1024 * 1024
MAX_PATHS = 256

HostPath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
# A user or group: a number, or a name (POSIX portable characters; a trailing $ for
# machine accounts). Nothing else: "²" is a digit to str.isdigit and not to int().
Principal = (
    Annotated[int, Field(ge=0, le=2**32 - 2)]
    | Annotated[str, StringConstraints(pattern=r"^([0-9]+|[A-Za-z_][A-Za-z0-9_.-]{0,31}[$]?)$")]
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _absolute(paths: list[str]) -> list[str]:
    """Absolute, normalised paths: `/usr/` and `/usr` are one grant; `..` is refused."""
    out = []
    for path in paths:
        if "\x00" in path:
            raise ValueError("a path cannot contain a NUL byte")
        if not path.startswith("/"):
            raise ValueError(f"{path!r} is not an absolute path")
        if ".." in path.split("/"):
            raise ValueError(f"{path!r} contains '..'")
        out.append(posixpath.normpath(path).replace("//", "/"))
    return out


class FilesystemPolicy(_Strict):
    """Host paths the workload may read (`read_only`) and change (`read_write`)."""

    include_workdir: bool = False
    read_only: Annotated[list[HostPath], Field(max_length=MAX_PATHS)] = []
    read_write: Annotated[list[HostPath], Field(max_length=MAX_PATHS)] = []

    @field_validator("read_only", "read_write")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        return _absolute(value)


class ProcessPolicy(_Strict):
    """Who the workload must start as: a name (as the sandbox's own /etc/passwd and
    /etc/group say) or a number."""

    run_as_user: Principal | None = None
    run_as_group: Principal | None = None


class LandlockPolicy(_Strict):
    """How OpenShell applies Landlock: a mechanism, recorded, never judged."""

    compatibility: Annotated[str, StringConstraints(max_length=64)] | None = None


class Binary(_Strict):
    path: HostPath
    harness: bool = False  # deprecated upstream, ignored there: accepted, never read


Short = Annotated[str, StringConstraints(max_length=4096)]
Port = Annotated[int, Field(ge=1, le=65535)]
# The layer-7 and credential keys of an endpoint, read and never judged: harness judges
# whether bytes can get out, not what OpenShell's proxy does with them.
L7_KEYS = (
    "path", "protocol", "enforcement", "access", "tls", "rules", "deny_rules",
    "allow_encoded_slash", "websocket_credential_rewrite", "request_body_credential_rewrite",
    "allow_uninspected_credentials", "persisted_queries", "graphql_persisted_queries",
    "graphql_max_body_bytes", "credential_signing", "signing_service", "signing_region",
    "json_rpc", "mcp",
)  # fmt: skip


class Endpoint(_Strict):
    """An allowed destination, with every key OpenShell's policy format has (its
    crates/openshell-policy NetworkEndpointDef). `host` with `port` or `ports`, or
    `allowed_ips`, say where; the rest is layer 7, accepted and noted."""

    host: Annotated[str, StringConstraints(max_length=253)] | None = None
    port: Port | None = None
    ports: Annotated[list[Port], Field(max_length=MAX_PATHS)] = []
    allowed_ips: Annotated[list[Short], Field(max_length=MAX_PATHS)] = []
    path: Short | None = None
    protocol: Annotated[str, StringConstraints(max_length=64)] | None = None
    enforcement: Annotated[str, StringConstraints(max_length=64)] | None = None
    access: Annotated[str, StringConstraints(max_length=64)] | None = None
    tls: Annotated[str, StringConstraints(max_length=64)] | None = None
    rules: list[Any] | None = None
    deny_rules: list[Any] | None = None
    allow_encoded_slash: bool | None = None
    websocket_credential_rewrite: bool | None = None
    request_body_credential_rewrite: bool | None = None
    allow_uninspected_credentials: bool | None = None
    persisted_queries: Short | None = None
    graphql_persisted_queries: dict[str, Any] | None = None
    graphql_max_body_bytes: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = None
    credential_signing: Short | None = None
    signing_service: Short | None = None
    signing_region: Short | None = None
    json_rpc: dict[str, Any] | None = None
    mcp: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _somewhere(self) -> Endpoint:
        if not self.host and not self.allowed_ips:
            raise ValueError("an endpoint needs a host (or allowed_ips)")
        if self.port is not None and self.ports:
            raise ValueError("give port or ports, not both")
        return self


class NetworkPolicy(_Strict):
    name: Annotated[str, StringConstraints(max_length=128)] | None = None
    endpoints: Annotated[list[Endpoint], Field(max_length=MAX_PATHS)] = []
    binaries: Annotated[list[Binary | HostPath], Field(max_length=MAX_PATHS)] = []


class PolicyFile(_Strict):
    """A sandbox policy as written: a YAML file's top level, or a matrix's inline table."""

    version: int = 1
    filesystem_policy: FilesystemPolicy = FilesystemPolicy()
    process: ProcessPolicy = ProcessPolicy()
    landlock: LandlockPolicy | None = None
    network_policies: dict[Annotated[str, StringConstraints(max_length=128)], NetworkPolicy] = {}
    # OpenShell's request middlewares (its own schema, validated by OpenShell): accepted
    # and noted, never judged.
    network_middlewares: dict[Annotated[str, StringConstraints(max_length=128)], Any] = {}

    @field_validator("version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"version {value} is not supported (expected 1)")
        return value

    @property
    def readable(self) -> tuple[str, ...]:
        """Every host path the policy lets the workload read."""
        fs = self.filesystem_policy
        return tuple(dict.fromkeys([*fs.read_only, *fs.read_write]))

    @property
    def writable(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.filesystem_policy.read_write))

    @property
    def names_binaries(self) -> bool:
        """Does a network policy with endpoints name the binaries that may reach
        them? Then another program must be refused there (docs/policy.md)."""
        return any(net.endpoints and net.binaries for net in self.network_policies.values())

    def grants_read(self, path: str) -> bool:
        """Does the policy let the workload read `path` (a host path)?"""
        return any(within(path, root) for root in self.readable)

    def grants_write(self, path: str) -> bool:
        return any(within(path, root) for root in self.writable)

    def notes(self) -> list[str]:
        """What harness reads here but does not judge, in words for `harness validate`."""
        out = []
        if self.landlock is not None:
            out.append("landlock: a mechanism, recorded for audit, never judged")
        if self.filesystem_policy.include_workdir:
            out.append(
                "filesystem_policy.include_workdir: the workload's working folder is"
                " harness's allowed folder"
            )
        l7 = sorted(
            {
                f
                for net in self.network_policies.values()
                for e in net.endpoints
                for f in L7_KEYS
                if getattr(e, f) is not None
            }
        )
        if l7:
            out.append(
                f"network_policies: {', '.join(l7)} (layer 7) not judged; harness judges"
                " which destinations bytes can reach"
            )
        if any(e.allowed_ips for n in self.network_policies.values() for e in n.endpoints):
            out.append(
                "network_policies: allowed_ips (which resolved addresses an endpoint may"
                " have) not judged; the endpoint stands for the canary's allowed destination"
            )
        if self.network_middlewares:
            out.append(
                f"network_middlewares: {', '.join(sorted(self.network_middlewares))} (request"
                " middlewares, layer 7) not judged"
            )
        if any(b.harness for n in self.network_policies.values() for b in n.binaries
               if isinstance(b, Binary)):  # fmt: skip
            out.append("network_policies: binaries' harness flag (deprecated upstream) ignored")
        if self.network_policies:
            out.append(
                "network_policies: every endpoint host and port stands for the canary's"
                " allowed destination, every binary for the probe (by its sha256); the"
                " reference supervisor enforces them, and every other destination is an"
                " attempt that must fail"
            )
        return out


class Policy(PolicyFile):
    """A loaded policy: `source` is the file it came from ("inline" for a matrix
    table) and `sha256` the digest of what was read, for the manifest and the evidence
    export."""

    source: str = "inline"
    sha256: str = ""


def within(path: str, root: str) -> bool:
    """Is `path` `root` or below it (both absolute, normalised)? The one test of
    "beneath a folder" for grants, policies and host listings."""
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def digest(data: Any) -> str:
    """The sha256 of an inline policy: its canonical JSON."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
