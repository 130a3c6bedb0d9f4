"""MicroVMs: the probe is /init of a guest kernel that a VMM boots for one cell.

The guest boots an uncompressed ELF `vmlinux` (PVH under qemu: decompressing a
bzImage under TCG costs tens of seconds) with an initramfs made for the cell:
the probe as /init, started as `/init init` (see harness/probe/init.c), which runs
`probe run ARGS` with its output on the serial console, then reboots. With
`reboot=t` and `-no-reboot` (or firecracker) the VMM exits when it does.

Everything happens in one command on the host: build the initramfs (the
per-cell part arrives on stdin, the files already on the host are appended by
a shell cpio writer), boot, remove the folder. The runner's `timeout` kills the
VMM when a guest hangs; its command line names the cell, so cleanup finds it.

Accelerator: `auto` is TCG. A /dev/kvm that opens proves nothing (a nested
software hypervisor accepts KVM_CREATE_VM yet never finishes booting a stock
guest), so KVM is used only when an entry asks for it with `accel = "kvm"`.
Under TCG the microvm machine has no HPET and no PM timer: the guest is told
the host's TSC rate (`tsc_early_khz`) or it hangs calibrating.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.matrix.models import MicrovmRuntimeSpec
from harness.runtimes import initramfs
from harness.runtimes.base import (
    ALLOWED_INSIDE,
    HELPERS_INSIDE,
    CellPaths,
    Identity,
    Invocation,
    Runtime,
)

# qemu's user-mode network (slirp) and the address it gives the first guest.
USER_NET = "eth0 10.0.2.15 24 10.0.2.2"
# What a guest needs for a virtio NIC on the microvm machine, when they are modules.
NIC_MODULES = ("virtio_mmio", "virtio_net")
AUTO_REASON = "auto: TCG; KVM is used only when forced (an openable /dev/kvm proves no boot)"

# $1 cell folder, $2 probe, $3 kernel, $4 modules folder, $5 modules wanted,
# $6 allowed folder, $7 helpers folder, $8 VMM config text; the rest is the VMM's
# argv, in which @KHZ@, @KERNEL@ and @DIR@ are replaced with this host's values.
LIFECYCLE = (
    r"""set -eu
export LC_ALL=C
dir=$1; probe=$2; kernel=$3; mods=$4; want=$5; allowed=$6; helpers=$7; config=$8; shift 8
case $kernel in "~/"*) kernel=$HOME/${kernel#"~/"} ;; esac
case $mods in "~/"*) mods=$HOME/${mods#"~/"} ;; esac
[ -r "$kernel" ] || { echo "microvm: kernel image not readable: $kernel" >&2; exit 1; }
khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo 2>/dev/null || true)
mkdir -p "$dir"
"""
    + initramfs.SH_WRITER
    + r"""
listed=" "
module() { # a path under $mods; once each
  case $listed in *" $1 "*) return 0 ;; esac
  listed="$listed$1 "
  b=${1##*/}
  member "modules/$b" 33188 "$mods/$1"
  echo "/modules/$b" >> "$dir/modules"
}
: > "$dir/modules"
cat > "$dir/initrd"
{
  member init 33261 "$probe"
  if [ -n "$helpers" ]; then
    member helpers/setuid 35309 "$helpers/setuid"
    member helpers/fcap 33261 "$helpers/fcap"
    if [ -f "$helpers/setgid" ]; then member helpers/setgid 34285 "$helpers/setgid"; fi
  fi
  if [ -n "$allowed" ]; then
    for f in "$allowed"/* "$allowed"/.[!.]*; do
      b=${f##*/}
      if [ -L "$f" ]; then symlink "allowed/$b" "$(readlink "$f")"
      elif [ -f "$f" ]; then member "allowed/$b" 33188 "$f"; fi
    done
  fi
  for m in $want; do
    [ -n "$mods" ] || break
    line=$(grep -E "^([^:]*/)?$m[.]ko:" "$mods/modules.dep" || true)
    if [ -z "$line" ]; then
      grep -qE "(^|/)$m[.]ko\$" "$mods/modules.builtin" 2>/dev/null && continue
      echo "microvm: module $m is not in $mods" >&2; exit 1
    fi
    deps=""; for d in ${line#*:}; do deps="$d $deps"; done
    for d in $deps; do module "$d"; done
    module "${line%%:*}"
  done
  member harness/modules 33188 "$dir/modules"
  trailer
} >> "$dir/initrd"
if [ -n "$config" ]; then printf '%s' "$config" > "$dir/vm.json"; fi
for a do
  shift
  case $a in *@KHZ@*) a="${a%%@KHZ@*}${khz:-0}${a#*@KHZ@}" ;; esac
  case $a in *@KERNEL@*) a="${a%%@KERNEL@*}$kernel${a#*@KERNEL@}" ;; esac
  case $a in *@DIR@*) a="${a%%@DIR@*}$dir${a#*@DIR@}" ;; esac
  set -- "$@" "$a"
done
status=0
"$@" < /dev/null || status=$?
rm -rf "$dir"
exit "$status"
"""
)

# $1 kernel, $2 modules folder (may be empty); the rest: the VMM's version command.
FINGERPRINT = r"""kernel=$1; mods=$2; shift 2
case $kernel in "~/"*) kernel=$HOME/${kernel#"~/"} ;; esac
case $mods in "~/"*) mods=$HOME/${mods#"~/"} ;; esac
echo "vmm_version=$("$@" 2>&1 | head -n 1)"
if [ ! -r "$kernel" ]; then echo "missing=kernel image not readable: $kernel"; exit 0; fi
if [ -n "$mods" ] && [ ! -r "$mods/modules.dep" ]; then
  echo "missing=no modules.dep in the modules folder $mods"; exit 0
fi
release=$(grep -a -m 1 -o 'Linux version [^ ]*' "$kernel" | head -n 1)
echo "kernel_release=${release#Linux version }"
"""


class MicrovmRuntime(Runtime):
    """qemu `-M microvm` or firecracker, booting the probe as a guest's init."""

    kind = "microvm"
    own_kernel = True
    own_root = True
    fixed_grants = True
    shares_allowed = False  # the guest gets a copy of the allowed folder in its initramfs
    spec: MicrovmRuntimeSpec

    @property
    def binary(self) -> str:
        default = "firecracker" if self.spec.vmm == "firecracker" else "qemu-system-x86_64"
        return self.spec.binary or default

    @property
    def accel(self) -> str:
        """The accelerator a boot uses: TCG unless the entry forces KVM."""
        if self.spec.vmm == "firecracker":
            return "kvm"
        return "kvm" if self.spec.accel == "kvm" else "tcg"

    def version_argv(self) -> tuple[str, ...] | None:
        return (
            "sh", "-c", FINGERPRINT, "harness-microvm-id",
            self.spec.kernel, self.spec.modules or "", self.binary, "--version",
        )  # fmt: skip

    def identify(self, output: str) -> Identity:
        seen = dict(
            line.split("=", 1) for line in output.splitlines() if "=" in line.split(" ", 1)[0]
        )
        version = seen.get("vmm_version", "").strip() or None
        fingerprint = {
            "vmm": self.spec.vmm,
            "vmm_version": version or "unknown",
            "accel": self.accel,
            "accel_reason": "forced by the runtime entry"
            if self.spec.accel != "auto" or self.spec.vmm == "firecracker"
            else AUTO_REASON,
            "kernel": self.spec.kernel,
            "kernel_release": seen.get("kernel_release", "").strip() or "unknown",
            "network": self.spec.network,
        }
        return Identity(version=version, fingerprint=fingerprint, unavailable=seen.get("missing"))

    def filter_output(self, stdout: str) -> str:
        """Only the probe's JSON lines; the console also carries the kernel's log."""
        lines = (line.strip("\r") for line in stdout.split("\n"))
        return "".join(f"{line}\n" for line in lines if line.startswith('{"type":'))

    def kernel_cmdline(self) -> str:
        """Serial console, reboot on panic and at the end, init's mode after `--`."""
        words = ["console=ttyS0", "reboot=t", "panic=-1"]
        if self.spec.vmm == "firecracker":
            words = ["console=ttyS0", "reboot=k", "panic=-1", "pci=off"]
        elif self.accel == "tcg":
            words += ["tsc_early_khz=@KHZ@"]  # no HPET or PM timer to calibrate against
        return " ".join([*words, *self.spec.kernel_cmdline_extra, "--", "init"])

    def vmm_argv(self, paths: CellPaths) -> tuple[str, ...]:
        """The VMM's command line; @KERNEL@ and @DIR@ are filled in on the host."""
        spec = self.spec
        if spec.vmm == "firecracker":
            return (
                self.binary,
                "--no-api",
                "--id",
                paths.cell_id,
                "--config-file",
                "@DIR@/vm.json",
            )
        argv = [
            self.binary, "-name", paths.cell_id,
            "-M", "microvm", "-accel", self.accel, "-cpu", "host" if self.accel == "kvm" else "max",
            "-m", str(spec.memory_mb), "-smp", str(spec.cpus),
            "-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot",
            "-kernel", "@KERNEL@", "-initrd", "@DIR@/initrd", "-append", self.kernel_cmdline(),
        ]  # fmt: skip
        if spec.network == "user":
            argv += ["-netdev", "user,id=net0", "-device", "virtio-net-device,netdev=net0"]
        return tuple(argv)

    def vmm_config(self) -> str:
        """firecracker's --config-file; qemu takes everything on its command line."""
        if self.spec.vmm != "firecracker":
            return ""
        return json.dumps(
            {
                "boot-source": {
                    "kernel_image_path": "@KERNEL@",
                    "initrd_path": "@DIR@/initrd",
                    "boot_args": self.kernel_cmdline(),
                },
                "drives": [],
                "machine-config": {
                    "vcpu_count": self.spec.cpus,
                    "mem_size_mib": self.spec.memory_mb,
                },
            }
        )

    def cell_archive(self, probe_args: Sequence[str], *, helpers: bool) -> bytes:
        """The first initramfs archive: folders, the console, and /harness's files."""
        for arg in probe_args:
            if "\0" in arg:
                raise ValueError("a probe argument holds a NUL byte")
        allowed, helpers_dir = ALLOWED_INSIDE.lstrip("/"), HELPERS_INSIDE.lstrip("/")
        entries = [
            initramfs.folder(name)
            for name in ("dev", "proc", "sys", "tmp", allowed, "modules", "harness", helpers_dir)
        ]
        entries[4] = initramfs.folder(allowed, 0o777)
        entries.append(initramfs.Entry("dev/console", initramfs.CHR | 0o600, rdev=(5, 1)))
        entries.append(
            initramfs.file("harness/args", b"".join(a.encode() + b"\0" for a in probe_args))
        )
        if self.spec.network == "user":
            entries.append(initramfs.file("harness/net", USER_NET.encode() + b"\n"))
        if self.spec.no_new_privs:
            entries.append(initramfs.file("harness/nnp", b""))
        if self.spec.nosuid and helpers:
            entries.append(initramfs.file("harness/nosuid", b""))
        return initramfs.newc(entries)

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        wanted = NIC_MODULES if self.spec.network == "user" else ()
        argv = (
            "sh", "-c", LIFECYCLE, "harness-microvm",
            paths.cell_dir, paths.probe, self.spec.kernel, self.spec.modules or "",
            " ".join(wanted), paths.allowed or "", paths.helpers or "", self.vmm_config(),
            *self.vmm_argv(paths),
        )  # fmt: skip
        return Invocation(
            argv=argv,
            stdin=self.cell_archive(probe_args, helpers=paths.helpers is not None),
            cleanup=(("rm", "-rf", "--", paths.cell_dir),),
        )
