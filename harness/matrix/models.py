"""Validated shapes of inventories and matrices.

Every model forbids unknown keys: a typo in a security matrix must fail loudly,
not silently drop a flag. Paths are already resolved (relative to the file that
named them) by the time a model is built.
"""

from __future__ import annotations

import difflib
import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_network
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    model_validator,
)

from harness.caps import CAP_NAMES
from harness.policy.models import Policy
from harness.scenarios.base import Property

Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]
FactValue = int | bool | str
# A fact expectation that compares a number: ">= 3", "!= 0" (the syntax of `facts`).
COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+)\s*$")


def _cap_name(value: str) -> str:
    if value not in CAP_NAMES:
        close = difflib.get_close_matches(value, CAP_NAMES, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(
            f"unknown capability {value!r} ({hint}expected a Linux capability name,"
            f" {CAP_NAMES[0]} ... {CAP_NAMES[-1]})"
        )
    return value


CapName = Annotated[str, AfterValidator(_cap_name)]

# Where a netns canary's subnets may come from: private ranges only (RFC 1918, and
# RFC 4193's unique local addresses), wide enough that a run's pick is one of many.
PRIVATE4 = tuple(IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
PRIVATE6 = IPv6Network("fc00::/7")
SUBNET_BITS = 8  # at least 2**8 subnets: /30s in a range4 (a /22), /64s in a range6 (a /56)


def _private4(net: IPv4Network) -> IPv4Network:
    if not any(net.subnet_of(p) for p in PRIVATE4):
        raise ValueError(f"{net} is not private (RFC 1918: {', '.join(map(str, PRIVATE4))})")
    if net.prefixlen > 30 - SUBNET_BITS:
        raise ValueError(f"{net} is too narrow: at least {2**SUBNET_BITS} /30s (a /22) are needed")
    return net


def _private6(net: IPv6Network) -> IPv6Network:
    if not net.subnet_of(PRIVATE6):
        raise ValueError(f"{net} is not private (RFC 4193: {PRIVATE6})")
    if net.prefixlen > 64 - SUBNET_BITS:
        raise ValueError(f"{net} is too narrow: at least {2**SUBNET_BITS} /64s (a /56) are needed")
    return net


Range4 = Annotated[IPv4Network, Strict(False), AfterValidator(_private4)]
Range6 = Annotated[IPv6Network, Strict(False), AfterValidator(_private6)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# --- inventory -------------------------------------------------------------------


# The ciphers a host may be asked to prefer: AEAD or CTR modes that OpenSSH and
# asyncssh both enable by default. Weaker ones cannot be chosen.
Cipher = Literal[
    "chacha20-poly1305@openssh.com",
    "aes256-gcm@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
]


class HostDefaults(_Strict):
    """Values every host in one inventory file inherits unless it sets its own."""

    transport: Literal["ssh", "local"] = "ssh"
    user: str | None = None
    port: Annotated[int, Field(ge=1, le=65535)] = 22
    identity_file: str | None = None
    # The name of an environment variable holding the identity file's passphrase;
    # the passphrase itself is never written in an inventory, result or log.
    passphrase_env: str | None = None
    known_hosts: str | None = None
    workdir: str | None = None
    connect_timeout: Annotated[float, Field(gt=0, le=600)] = 15.0
    connect_retries: Annotated[int, Field(ge=0, le=20)] = 2
    max_sessions: Annotated[int, Field(ge=1, le=256)] = 8
    max_cells: Annotated[int, Field(ge=1, le=256)] = 4
    accept_new_host_key: bool = False
    # SSH ciphers in order of preference; unset: asyncssh's set, AES-GCM first where
    # the controller's CPU has AES instructions, chacha20-poly1305 first elsewhere.
    ciphers: list[Cipher] | None = None


class HostEntry(_Strict):
    """One `[hosts.NAME]` table as written; unset fields fall back to defaults."""

    address: str | None = None
    transport: Literal["ssh", "local"] | None = None
    user: str | None = None
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    identity_file: str | None = None
    passphrase_env: str | None = None
    known_hosts: str | None = None
    workdir: str | None = None
    connect_timeout: Annotated[float, Field(gt=0, le=600)] | None = None
    connect_retries: Annotated[int, Field(ge=0, le=20)] | None = None
    max_sessions: Annotated[int, Field(ge=1, le=256)] | None = None
    max_cells: Annotated[int, Field(ge=1, le=256)] | None = None
    # Opt in, per host, to trusting a host key never seen before (and recording it in
    # known_hosts). A *changed* key is always refused.
    accept_new_host_key: bool | None = None
    ciphers: list[Cipher] | None = None
    tags: list[Name] = []


class InventoryFile(_Strict):
    defaults: HostDefaults = HostDefaults()
    hosts: dict[Name, HostEntry] = {}


class Host(_Strict):
    """A fully resolved host: where it is, how to reach it, and how hard to push it."""

    name: str
    transport: Literal["ssh", "local"]
    address: str
    port: int = 22
    user: str | None = None
    identity_file: Path | None = None
    passphrase_env: str | None = None
    known_hosts: Path | None = None
    workdir: str | None = None
    connect_timeout: float = 15.0
    connect_retries: int = 2
    max_sessions: int = 8
    max_cells: int = 4
    accept_new_host_key: bool = False
    ciphers: tuple[str, ...] | None = None
    tags: tuple[str, ...] = ()
    source: str = ""

    def reached_by(self) -> dict[str, object]:
        """How the host is reached, as a run's manifest records it."""
        port = self.port if self.transport == "ssh" else None
        return {"transport": self.transport, "address": self.address, "port": port,
                "user": self.user}  # fmt: skip


# --- runtimes --------------------------------------------------------------------


Expectation = Literal["enforced", "violated"]


class Bind(_Strict):
    """A host folder bound into a generated OCI bundle (mutants only)."""

    source: Annotated[str, StringConstraints(min_length=1, pattern=r"^/")]
    destination: Annotated[str, StringConstraints(min_length=2, pattern=r"^/")]
    readonly: bool = True


class AttributionSource(_Strict):
    """Where the sandbox's egress supervisor publishes its decision records.

    `http`: GET `url` (JSON array or JSON lines); the bearer token, if any, is read
    from the environment variable `token_env` and never written anywhere.
    `file`: a JSON-lines file on the host, read over the transport.
    """

    source: Literal["http", "file"]
    url: str | None = None
    path: str | None = None
    token_env: str | None = None
    allowed: str | None = None  # IP:PORT of the allowed destination; default: the canary's
    # The supervisor's own policy reload, for the scenario `revocation`: shell run on
    # the host, with HARNESS_ALLOWED set to the allowed destination (IP:PORT).
    # `revoke` takes its rule out and returns once the reload is in force;
    # `restore` puts it back after the cell (docs/matrix.md).
    revoke: Annotated[str, StringConstraints(min_length=1, max_length=2000)] | None = None
    restore: Annotated[str, StringConstraints(min_length=1, max_length=2000)] | None = None

    @model_validator(mode="after")
    def _where(self) -> AttributionSource:
        needed = "url" if self.source == "http" else "path"
        if getattr(self, needed) is None:
            raise ValueError(f"source {self.source!r} needs {needed}")
        if (self.revoke is None) != (self.restore is None):
            raise ValueError("revoke and restore come together")
        return self


# The four properties of OpenShell's BoundaryConfirmation (see docs/evidence.md).
ContractProperty = Literal[
    "filesystem_confinement", "egress_interception", "request_attribution", "privilege_floor"
]
# Its outer fence's guarantees (evidence/fence.py): a runtime may declare a mechanism
# for them too, shown as declared and never as established.
FenceGuarantee = Literal[
    "default_deny_egress",
    "no_unmanaged_egress_path",
    "revocation_verified",
    "controller_loss_fails_closed",
]


# Deliberate faults of the reference supervisor, for mutants (docs/supervisor.md).
SupervisorFault = Literal[
    "wrong-binary",
    "no-record",
    "allow-all",
    "any-binary",
    "fail-open",
    "keep-established",
    "cache-identity",
    "record-around",
    "by-comm",
    "by-argv0",
    "by-basename",
    "first-holder",
    "record-argv0",
]
# Kinds that harness can put in a network namespace of its own (nsenter).
SUPERVISED_KINDS = ("runsc", "oci", "command")


class OpenShellBinding(_Strict):
    """What an OpenShell confirmation of this runtime is bound to (`harness evidence
    --format openshell-confirmation`): the caller's values, never measured; flags
    override them."""

    generation: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    # upstream's SandboxSessionId: a canonical lowercase UUID, not the nil one
    session_id: (
        Annotated[
            str,
            StringConstraints(
                pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
            ),
        ]
        | None
    ) = None
    resource_claims: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=200)],
        Annotated[str, StringConstraints(max_length=1000)],
    ] = {}

    @model_validator(mode="after")
    def _not_nil(self) -> OpenShellBinding:
        if self.session_id == "00000000-0000-0000-0000-000000000000":
            raise ValueError("session_id must not be the nil UUID")
        return self


class _RuntimeBase(_Strict):
    # Only these of the matrix's scenarios run in this runtime's cells (default: all):
    # a matrix of mutants runs each one's own, not every scenario in every sandbox.
    scenarios: list[Name] | None = None
    facts: dict[Name, FactValue] = {}
    expect: dict[Property, Expectation] = {}
    attribution: AttributionSource | None = None
    endpoint_only: bool = False
    # Capabilities beyond Docker's default set that this runtime may hold in the
    # host's initial user namespace without failing the privilege floor; audited:
    # the verdict names them.
    allowed_caps: list[CapName] = []
    # "reference": run the sandbox behind harness's reference egress supervisor
    # (harness/supervisor/), which is then the attribution source.
    supervisor: Literal["reference"] | None = None
    supervisor_fault: SupervisorFault | None = None
    # The caller's binding for an OpenShell confirmation (harness/evidence/confirmation.py).
    openshell: OpenShellBinding | None = None
    # Declared, never consulted: copied into evidence documents for audit only.
    mechanisms: dict[
        ContractProperty | FenceGuarantee, Annotated[str, StringConstraints(max_length=200)]
    ] = {}
    # What the sandbox declares it allows (harness/policy/models.py), loaded from the
    # entry's `policy` key (a path to an OpenShell policy file, or the same fields
    # inline) by `matrix/load.py`. None: judged against harness's own grants alone.
    policy: Policy | None = None


class HostRuntimeSpec(_RuntimeBase):
    """The probe runs directly on the host: the positive control."""

    kind: Literal["host"]


# A gVisor build named in a matrix: the newest of a channel, or one version.
_RELEASE_NAME = r"^(latest|nightly|\d{8}(\.\d{1,6})?|\d{4}-\d{2}-\d{2}(\.\d{1,6})?)$"


class RunscRuntimeSpec(_RuntimeBase):
    """gVisor: the probe runs in an OCI bundle the harness generates.

    With `release`, harness fetches the build itself from the release index
    (verified by sha512, cached by content) and stages it on each host for that
    host's architecture; `binary` is then not given.
    """

    kind: Literal["runsc"]
    binary: str = "runsc"
    release: Annotated[str, StringConstraints(pattern=_RELEASE_NAME)] | None = None
    channel: Literal["release", "nightly"] | None = None
    platform: str | None = None
    flags: list[str] = []
    user: Annotated[int, Field(ge=0)] = 0
    no_new_privs: bool = True
    nosuid: bool = True  # mount the privilege helpers nosuid
    netns: str | None = None  # join this network namespace (a name under /var/run/netns, or a path)
    cap_add: list[CapName] = []  # beyond Docker's default set, when uid 0 (mutants)
    masked_paths: bool = True  # Docker's default maskedPaths and readonlyPaths
    host_pid: bool = False  # share the host's PID namespace (a mutant)
    binds: list[Bind] = []  # more host folders in the bundle (a mutant)
    # A sysfs at /sys: Docker mounts one read-only; read-write is a mutant.
    sysfs: Literal["none", "ro", "rw"] = "none"

    @model_validator(mode="after")
    def _release(self) -> RunscRuntimeSpec:
        if self.release is None:
            if self.channel is not None:
                raise ValueError("channel needs release")
            return self
        if "binary" in self.model_fields_set:
            raise ValueError("give binary or release, not both")
        said = self.channel
        if self.release == "nightly" and said == "release":
            raise ValueError("release 'nightly' is in channel 'nightly'")
        if self.release[:1].isdigit():
            shape = "nightly" if "-" in self.release else "release"
            if said is not None and said != shape:
                raise ValueError(f"release {self.release!r} is a {shape} version, not {said}")
        return self

    @property
    def release_channel(self) -> str | None:
        """The channel the release is looked up in (None without a release)."""
        if self.release is None:
            return None
        if self.release == "nightly" or "-" in self.release:
            return "nightly"
        return self.channel or "release"


class OciRuntimeSpec(_RuntimeBase):
    """Any runtime with runc's command line (runc, crun), from the same generated bundle."""

    kind: Literal["oci"]
    binary: str
    flags: list[str] = []
    user: Annotated[int, Field(ge=0)] = 0
    no_new_privs: bool = True
    nosuid: bool = True
    netns: str | None = None
    own_kernel: bool = False
    cap_add: list[CapName] = []  # beyond Docker's default set, when uid 0 (mutants)
    masked_paths: bool = True  # Docker's default maskedPaths and readonlyPaths
    host_pid: bool = False  # share the host's PID namespace (a mutant)
    binds: list[Bind] = []  # more host folders in the bundle (a mutant)
    # A sysfs at /sys: Docker mounts one read-only; read-write is a mutant.
    sysfs: Literal["none", "ro", "rw"] = "none"


class CommandRuntimeSpec(_RuntimeBase):
    """Any wrapper expressible as an argv template with `{probe}` and `{args}`."""

    kind: Literal["command"]
    argv: Annotated[list[str], Field(min_length=1)]
    own_kernel: bool = False
    # Where the template's {allowed} and {helpers} folders appear inside the
    # sandbox; default: at the same path as on the host.
    allowed_inside: str | None = None
    helpers_inside: str | None = None


class MicrovmRuntimeSpec(_RuntimeBase):
    """The probe is /init of a guest kernel booted by a VMM (qemu microvm, firecracker).

    `kernel` and `modules` are paths on the target host (`~/` is its home): an ELF
    `vmlinux`, and the kernel's lib/modules/RELEASE folder when the NIC drivers are
    modules. `accel = "auto"` means TCG, recorded with its reason: a KVM that opens
    is no proof that a guest boots under it.
    """

    kind: Literal["microvm"]
    kernel: Annotated[str, StringConstraints(min_length=1)]
    modules: str | None = None
    vmm: Literal["qemu", "firecracker"] = "qemu"
    binary: str | None = None  # default: qemu-system-x86_64, or firecracker
    accel: Literal["auto", "kvm", "tcg"] = "auto"
    memory_mb: Annotated[int, Field(ge=64, le=65536)] = 256
    cpus: Annotated[int, Field(ge=1, le=64)] = 1
    network: Literal["none", "user"] = "none"  # user: qemu user-mode networking (a mutant)
    kernel_cmdline_extra: list[str] = []
    no_new_privs: bool = True
    nosuid: bool = True  # the helpers are remounted nosuid inside the guest

    @model_validator(mode="after")
    def _vmm(self) -> MicrovmRuntimeSpec:
        if self.vmm == "firecracker" and self.accel == "tcg":
            raise ValueError("firecracker needs KVM: accel must be 'auto' or 'kvm'")
        if self.vmm == "firecracker" and self.network != "none":
            raise ValueError("network 'user' needs vmm 'qemu'")
        for word in self.kernel_cmdline_extra:
            if not word or word == "--" or any(c.isspace() or c in "\"'" for c in word):
                raise ValueError(f"kernel_cmdline_extra: {word!r} is not one command-line word")
        return self


class KataRuntimeSpec(_RuntimeBase):
    """Kata Containers through containerd: `ctr run --runtime SHIM --rootfs DIR`."""

    kind: Literal["kata"]
    runtime: Annotated[str, StringConstraints(min_length=1)] = "io.containerd.kata.v2"
    binary: str = "ctr"
    address: str = "/run/containerd/containerd.sock"
    namespace: Annotated[str, StringConstraints(min_length=1)] = "harness"
    flags: list[str] = []  # more `ctr run` flags, e.g. --allow-new-privs for a mutant


class ExecRuntimeSpec(_RuntimeBase):
    """A sandbox something else started and keeps running (`openshell sandbox exec`,
    `kubectl exec`, `ctr task exec`): `exec` is the argv that runs a command inside it,
    to which harness appends its own. The probe is staged through that command (on its
    stdin, into `stage`, a folder inside), never through a shared folder; the sandbox
    needs /bin/sh, cat, mkdir, chmod and rm. `{exec_id}`, as a whole element, becomes a
    name of harness's own for each call (ctr's --exec-id). The host in the inventory
    must be the machine whose kernel runs the sandbox: what the host sees is evidence."""

    kind: Literal["exec"]
    exec: Annotated[list[Annotated[str, StringConstraints(min_length=1)]], Field(min_length=1)]
    # The same way in as a user who may make root-owned setuid files (`ctr task exec
    # --user 0`): it stages the probe and its helpers, and removes them. Default: exec.
    stage_exec: (
        Annotated[list[Annotated[str, StringConstraints(min_length=1)]], Field(min_length=1)] | None
    ) = None
    stage: Annotated[str, StringConstraints(pattern=r"^/[^\n]*$", max_length=200)] = "/tmp"
    # Where the sandbox's root is on the host (a container's rootfs folder or mount):
    # granted as the sandbox's own. Without it, a host filesystem at / is beyond the grants.
    root: Annotated[str, StringConstraints(pattern=r"^/[^\n]*$")] | None = None
    own_kernel: bool = False

    @model_validator(mode="after")
    def _root_of_its_own(self) -> ExecRuntimeSpec:
        if self.root is not None and self.root.strip("/") == "":
            raise ValueError(
                "root '/' is the host's own root, not a sandbox's: name the sandbox's rootfs"
                " folder or mount on the host, or leave root out"
            )
        return self


RuntimeSpec = (
    HostRuntimeSpec
    | RunscRuntimeSpec
    | OciRuntimeSpec
    | CommandRuntimeSpec
    | MicrovmRuntimeSpec
    | KataRuntimeSpec
    | ExecRuntimeSpec
)

RUNTIME_SPECS: dict[str, type[RuntimeSpec]] = {
    "host": HostRuntimeSpec,
    "runsc": RunscRuntimeSpec,
    "oci": OciRuntimeSpec,
    "command": CommandRuntimeSpec,
    "microvm": MicrovmRuntimeSpec,
    "kata": KataRuntimeSpec,
    "exec": ExecRuntimeSpec,
}


# --- matrix ----------------------------------------------------------------------


# The canary's stand-ins (`[canary] elsewhere`): ranges no traffic leaves a machine
# for, so that harness may answer there (private, shared, link-local, benchmarking).
DEFAULT_ELSEWHERE = (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16",
    "198.18.0.0/15", "fc00::/7", "2001:2::/48",
)  # fmt: skip
MAX_ELSEWHERE = 12
ELSEWHERE_WORDS = ("gateway", "resolvers")


def _elsewhere(value: object) -> object:
    """A range (its host bits clear) or one of the words; never loopback or multicast."""
    if not isinstance(value, str):
        return value
    if value in ELSEWHERE_WORDS:
        return value
    try:
        where = ip_network(value)
    except ValueError as exc:
        raise ValueError(
            f"{exc}: give a range such as 10.0.0.0/8, 'gateway' or 'resolvers'"
        ) from None
    if (
        where.is_loopback
        or where.is_multicast
        or (where.num_addresses == 1 and where.is_unspecified)
    ):
        raise ValueError(f"{value} is no destination outside the host")
    return where


Elsewhere = Annotated[IPv4Network | IPv6Network | str, BeforeValidator(_elsewhere)]


class Canary(_Strict):
    """Where egress attempts are aimed, and who starts the canary there.

    `netns`: harness makes an "outside" network namespace on each host, joined to
    the host by a veth pair, and runs the canary inside it: traffic that really
    leaves a sandbox arrives there. (Root needed; removed after the run.)
    `listen`: the canary listens on `address` (and `address6`, for IPv6 attempts),
    addresses of the host itself. A canary only on loopback would call any
    namespaced sandbox enforced. In netns mode both addresses come from subnets
    leased per host, picked at random per run: a /30 in `range4` and a /64 in
    `range6` (private, and wide, so that no blocklist of harness's own subnets can
    single the canary out).
    `metadata` (netns mode): the canary also answers at the cloud metadata addresses
    (169.254.169.254, fd00:ec2::254) on the run's high port alone, routed there by a
    rule for that port (a real metadata service's port is routed as before).
    `elsewhere` (netns mode): where else it answers, on the high port alone, by the same
    kind of rule: a random address of each range given, and the words `gateway` (the
    host's default gateways) and `resolvers` (its resolv.conf's): a sandbox that refuses
    harness's own ranges and lets the rest out is seen. By default ranges no one's
    traffic leaves a machine for: the private, shared and link-local ones and the
    benchmarking ranges (RFC 2544, 5180); a fleet adds `0.0.0.0/0` and `2000::/3` (a
    global address) and the two words.
    `settle`: seconds the canary stays up after a host's last sandbox exited, for
    late arrivals. `resolver_ranges`: where the probe may send its query through the
    sandbox's own resolver (a resolver elsewhere is asked only if no packet could
    leave, i.e. there is no route to it); by default loopback and the two ranges.
    """

    mode: Literal["netns", "listen"] = "netns"
    address: Annotated[IPv4Address, Strict(False)] | None = None  # netns default: leased
    address6: Annotated[IPv6Address, Strict(False)] | None = None  # listen mode only
    range4: Range4 = IPv4Network("10.251.0.0/16")
    range6: Range6 = IPv6Network("fd5e:7a1c:9b3d::/48")
    settle: Annotated[float, Field(ge=0, le=300)] = 3.0
    metadata: bool = True
    elsewhere: Annotated[list[Elsewhere], Field(max_length=MAX_ELSEWHERE)] = Field(
        default_factory=lambda: list[IPv4Network | IPv6Network | str](
            ip_network(r) for r in DEFAULT_ELSEWHERE
        )
    )
    resolver_ranges: list[
        Annotated[IPv4Network, Strict(False)] | Annotated[IPv6Network, Strict(False)]
    ] = Field(
        default_factory=lambda data: [
            IPv4Network("127.0.0.0/8"),
            IPv6Network("::1/128"),
            data["range4"],
            data["range6"],
        ]
    )
    denied_name: Annotated[
        str,
        StringConstraints(
            max_length=200,
            pattern=r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$",
        ),
    ] = "denied.harness.test"
    tcp_port: Annotated[int, Field(ge=1, le=65535)] = 8080
    allowed_port: Annotated[int, Field(ge=1, le=65535)] = 8081
    dns_port: Annotated[int, Field(ge=1, le=65535)] = 53
    alt_dns_port: Annotated[int, Field(ge=1, le=65535)] = 5353
    doh_port: Annotated[int, Field(ge=1, le=65535)] = 443

    @model_validator(mode="after")
    def _listen_needs_an_address(self) -> Canary:
        if self.mode == "listen" and self.address is None:
            raise ValueError("mode 'listen' needs an address sandbox traffic would really reach")
        if self.mode == "netns" and self.address6 is not None:
            raise ValueError("address6 is for mode 'listen'; netns mode leases its own")
        for given in (self.address, self.address6):
            if given is not None and given.is_unspecified:
                raise ValueError(f"{given} is no destination: name an address of the host's")
        return self


class Settings(_Strict):
    """How hard to push: cells at once, and how long any one cell may take."""

    concurrency: Annotated[int, Field(ge=1, le=4096)] = 16
    timeout: Annotated[float, Field(gt=0, le=86400)] = 120.0
    check_timeout: Annotated[float, Field(gt=0, le=3600)] = 5.0
    # Where runsc runtimes with `release` find their builds: an http(s) URL of
    # gVisor's bucket or a mirror, or a folder laid out like it (relative to the
    # matrix). Default: gVisor's public bucket; `run --index` overrides it.
    index: Annotated[str, StringConstraints(min_length=1, max_length=2000)] | None = None


class MatrixFile(_Strict):
    """A matrix as written; `runtimes` is validated per kind by the loader."""

    name: Name
    inventory: str | list[str]
    hosts: list[Name] | None = None
    scenarios: list[Name] | None = None  # default: every property scenario, then mechanisms
    settings: Settings = Settings()
    canary: Canary = Canary()
    runtimes: dict[Name, dict[str, object]]


class Matrix(_Strict):
    """A loaded matrix: its hosts selected, its runtimes validated, ready to plan."""

    name: str
    path: Path
    sha256: str
    hosts: tuple[Host, ...]
    runtimes: dict[str, RuntimeSpec]
    scenarios: tuple[str, ...]
    settings: Settings
    canary: Canary = Canary()
