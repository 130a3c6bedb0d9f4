"""The OCI bundle harness generates for the `oci` and `runsc` kinds."""

from __future__ import annotations

from harness.caps import DOCKER_DEFAULT_CAPS
from harness.matrix.models import Bind
from harness.runtimes.oci import bundle_config


def test_bundle_masks_and_protects_docker_default_paths() -> None:
    """/proc/sys and the rest of Docker's read-only paths, and its masked paths, are set."""
    linux = bundle_config(args=["run"], uid=0)["linux"]
    assert "/proc/sys" in linux["readonlyPaths"]
    assert {"/proc/kcore", "/proc/keys", "/sys/firmware"} <= set(linux["maskedPaths"])


def test_root_gets_dockers_default_capabilities_and_no_more() -> None:
    """uid 0 holds Docker's default set; another uid holds none."""
    caps = bundle_config(args=["run"], uid=0)["process"]["capabilities"]
    assert set(caps["effective"]) == set(caps["bounding"]) == DOCKER_DEFAULT_CAPS
    assert bundle_config(args=["run"], uid=1000)["process"]["capabilities"]["effective"] == []


def test_mutant_options_do_what_they_say() -> None:
    """cap_add, masked_paths=false and host_pid build the mutants they name."""
    config = bundle_config(
        args=["run"], uid=0, cap_add=["CAP_SYS_ADMIN"], masked_paths=False, host_pid=True
    )
    assert "CAP_SYS_ADMIN" in config["process"]["capabilities"]["effective"]
    assert "maskedPaths" not in config["linux"] and "readonlyPaths" not in config["linux"]
    assert "pid" not in [n["type"] for n in config["linux"]["namespaces"]]


def test_sysfs_is_absent_unless_asked_and_read_write_only_when_asked() -> None:
    """No /sys by default; `sysfs = "ro"` is Docker's read-only one, `"rw"` the mutant."""

    def sysfs(mode: str | None) -> list[dict[str, object]]:
        kw = {} if mode is None else {"sysfs": mode}
        return [
            m for m in bundle_config(args=["run"], uid=0, **kw)["mounts"] if m["type"] == "sysfs"
        ]

    assert sysfs(None) == [] and sysfs("none") == []
    assert [m["options"] for m in sysfs("ro")] == [["nosuid", "noexec", "nodev", "ro"]]
    assert [m["options"] for m in sysfs("rw")] == [["nosuid", "noexec", "nodev"]]


def test_binds_add_host_folders_read_only_by_default() -> None:
    """A mutant's binds appear as bind mounts, read-only unless asked otherwise."""
    binds = [
        Bind(source="/", destination="/host"),
        Bind(source="/tmp", destination="/t", readonly=False),
    ]
    mounts = bundle_config(args=["run"], uid=0, binds=binds)["mounts"]
    assert {
        "destination": "/host",
        "type": "bind",
        "source": "/",
        "options": ["rbind", "ro"],
    } in mounts
    assert {
        "destination": "/t",
        "type": "bind",
        "source": "/tmp",
        "options": ["rbind", "rw"],
    } in mounts
