"""A sandbox something else started (`kind = "exec"`): `openshell sandbox exec`,
`kubectl exec`, `ctr task exec`. harness neither starts nor ends it; each cell runs
the probe inside it through the user's command.

No folder is shared. A cell is three calls into the sandbox, run by one command on
the host: the stager's (`stage_exec`, else `exec`) takes the probe on its stdin (the
host's staged copy, never sent from the controller) into a folder of the cell's own
under `stage`, where the probe makes what harness makes on the host for the other
runtimes (`probe stage`): the allowed folder with its planted link, and the privilege
helpers; the workload's (`exec`) runs the probe; the stager's removes the folder. A
helper the stager could not make as it must be is passed empty, so its check is an
error rather than "blocked". If the cell does not end cleanly, a last call kills what
of it still runs inside (where the sandbox has pkill) and removes the folder.

The sandbox outlives every cell by design, so whether its runtime's exit ends the
workload is not measured here (execution.measures_exit).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.matrix.models import ExecRuntimeSpec
from harness.runtimes.base import CellPaths, Invocation, Runtime, tagged

EXEC_ID = "{exec_id}"
# Where the shells below look for programs when the way in sets no PATH (ctr's).
_PATH = "PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}; export PATH\n"

# Inside, as the stager. $1 the cell's folder, $2 the planted link's target ("": none),
# $3 "1" to make the helpers. stdin: the probe. What was made goes to $1/made.
STAGE = (
    _PATH
    + r"""d=$1; link=$2; helpers=$3
if ! { mkdir -m 0755 "$d" && cat > "$d/probe" && chmod 0755 "$d/probe"; }; then
  echo "harness-exec: cannot stage the probe in $d: the sandbox needs /bin/sh, cat, mkdir," \
    "chmod and a writable stage folder" >&2
  rm -rf -- "$d"; exit 125
fi
# The whole probe arrived and runs here: a way in that passes no stdin (kubectl exec
# without -i, or with -t) leaves an empty or mangled file; a noexec folder refuses it.
if ! v=$("$d/probe" version 2>&1) || case $v in *'"type":"version"'*) false ;; *) true ;; esac; then
  v=$(printf '%s' "$v" | tr -d '\n' | cut -c 1-120)
  echo "harness-exec: the probe staged in $d does not run (${v:-no output}): the way in" \
    "must pass stdin through (kubectl exec -i, never -t), and stage must not be noexec" >&2
  rm -rf -- "$d"; exit 125
fi
if [ "$helpers" = 1 ]; then set -- --helpers; else set --; fi
if ! made=$("$d/probe" stage "$d" "$link" "$@" 2>&1) || ! printf '%s\n' "$made" > "$d/made"; then
  made=$(printf '%s' "$made" | tr '\n' ' ' | cut -c 1-200)
  echo "harness-exec: probe stage failed in $d: $made" >&2; rm -rf -- "$d"; exit 125
fi
echo "harness-exec: staged in $d:" $made >&2
"""
)

# Inside, as the workload. $1 the cell's folder; the rest is the probe's argv. A
# helper the stager could not make has its option passed empty: its check then says
# it was not given, never "blocked".
RUN = (
    _PATH
    + r"""d=$1; shift
made=$(cat "$d/made") || exit 125
i=$#; drop=
while [ "$i" -gt 0 ]; do
  a=$1; shift; i=$((i - 1))
  if [ -n "$drop" ]; then set -- "$@" ""; drop=; continue; fi
  set -- "$@" "$a"
  case $a in
    --setuid-helper) h=setuid ;; --setgid-helper) h=setgid ;; --fcap-helper) h=fcap ;;
    --inh-helper) h=inh ;; --other-binary) h=other ;; *) continue ;;
  esac
  case " $(echo $made) " in *" $h=ok "*) ;; *) drop=1 ;; esac
done
exec "$d/probe" "$@" < /dev/null
"""
)

# Inside, as the stager, after the cell. $1 its folder, $2 the pattern (pgrep's) of
# its processes' command lines, killed first where the sandbox has pkill.
UNSTAGE = (
    _PATH
    + r"""if [ -n "$2" ] && command -v pkill >/dev/null 2>&1; then pkill -KILL -f -- "$2"; fi
rm -rf -- "$1"
[ ! -e "$1" ]
"""
)

# On the host: $1 the staged probe, $2 and $3 the lengths of the stage and run
# commands, then the stage, run and unstage commands themselves. Each is run by
# `eval` of positional references only ("${4}" "${5}"...): no value is ever parsed.
LIFECYCLE = r"""p=$1; n=$2; m=$3; shift 3
words() { s=; i=$1; k=$2
  while [ "$k" -gt 0 ]; do s="$s \"\${$i}\""; i=$((i + 1)); k=$((k - 1)); done
  printf '%s' "$s"; }
stage=$(words 1 "$n"); run=$(words $((n + 1)) "$m"); unstage=$(words $((n + m + 1)) $(($# - n - m)))
eval "$stage" < "$p" || exit "$?"
eval "$run" < /dev/null
status=$?
# A cell whose folder stays in the sandbox (setuid-root helpers in it) is no clean
# end: a non-zero exit makes harness run the cleanup call and the cell an error.
if ! eval "$unstage" < /dev/null; then
  echo "harness-exec: the cell's folder could not be removed from the sandbox" >&2
  [ "$status" -ne 0 ] || status=125
fi
exit "$status"
"""


class ExecRuntime(Runtime):
    """The probe, run through a command that enters a sandbox already running."""

    kind = "exec"
    own_root = True  # the sandbox's root is its own, not a folder of the host's
    fixed_grants = True
    shares_allowed = False  # the allowed folder is made inside; the host never sees it
    root_declared = True
    spec: ExecRuntimeSpec

    @property
    def promises_own_kernel(self) -> bool:
        return self.spec.own_kernel

    @property
    def binary(self) -> str:
        return self.spec.exec[0]

    def version_argv(self) -> tuple[str, ...] | None:
        return (self.binary, "--version")

    def host_root(self, paths: CellPaths) -> str | None:
        return self.spec.root

    def stage_dir(self, cell_id: str) -> str:
        return f"{self.spec.stage.rstrip('/')}/{cell_id}"

    def inside(self, host_path: str, *, role: str, cell_id: str) -> str:
        return f"{self.stage_dir(cell_id)}/{'allowed' if role == 'allowed' else 'helpers'}"

    def enter(self, exec_id: str, *, stager: bool = False) -> list[str]:
        """The user's command into the sandbox (the stager's, if asked and given),
        `{exec_id}` made this call's own."""
        way = (self.spec.stage_exec if stager else None) or self.spec.exec
        return [exec_id if element == EXEC_ID else element for element in way]

    def invocation(self, paths: CellPaths, probe_args: Sequence[str]) -> Invocation:
        cell_id, cell = paths.cell_id, self.stage_dir(paths.cell_id)
        # The planted link leads where the host's does: to the fixture's sentinel
        # (filesystem.Sentinels: ROOT/allowed beside ROOT/outside).
        link = ""
        if paths.allowed is not None:
            link = f"{paths.allowed.rsplit('/', 1)[0]}/outside/sentinel"
        stage = [
            *self.enter(f"{cell_id}-stage", stager=True),
            "/bin/sh", "-c", STAGE, "harness-stage", cell, link,
            "1" if paths.helpers is not None else "",
        ]  # fmt: skip
        run = [*self.enter(cell_id), "/bin/sh", "-c", RUN, "harness-run", cell, *probe_args]
        argv = (
            "sh", "-c", LIFECYCLE, "harness-exec", paths.probe, str(len(stage)), str(len(run)),
            *stage, *run, *self.unstage(f"{cell_id}-unstage", cell, pattern=""),
        )  # fmt: skip
        # The cell's processes inside: those naming its id as a word (`--tag ID`).
        cleanup = tuple(self.unstage(f"{cell_id}-cleanup", cell, pattern=tagged(cell_id)))
        return Invocation(argv=argv, cleanup=(cleanup,))

    def unstage(self, exec_id: str, cell: str, *, pattern: str) -> list[str]:
        return [
            *self.enter(exec_id, stager=True),
            "/bin/sh", "-c", UNSTAGE, "harness-unstage", cell, pattern,
        ]  # fmt: skip
