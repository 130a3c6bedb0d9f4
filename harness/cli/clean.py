"""`harness clean`: remove what runs that are no longer alive left on hosts."""

from __future__ import annotations

from pathlib import Path

import anyio
import click

from harness.cli.app import err_console
from harness.errors import HarnessError, UsageError
from harness.exitcodes import ExitCode
from harness.matrix.models import Host
from harness.text import rich_text

# $1 workdir as configured: the work folder's real path, or nothing if it is not there.
RESOLVE = r"""cd "$HOME" 2>/dev/null || cd / || exit 0
cd "${1:-.cache/harness}" 2>/dev/null && pwd -P
exit 0
"""


async def _clean_host(host: Host) -> tuple[list[str], str | None]:
    """(cleaned run ids, or why the host could not be cleaned)."""
    from harness.hostside.lease import clean, dead_runs
    from harness.transport import open_transport
    from harness.transport.retry import connect_with_retries

    transport = open_transport(host)
    try:
        await connect_with_retries(transport, host)
        done = await transport.run(
            ["sh", "-c", RESOLVE, "harness-workdir", host.workdir or ""], timeout=60
        )
        workdir = done.stdout.strip()
        if not workdir:
            return [], None  # no work folder: nothing was ever left there
        dead = await dead_runs(transport, workdir)
        return (await clean(transport, workdir, dead) if dead else []), None
    except HarnessError as exc:
        return [], str(exc)
    finally:
        with anyio.CancelScope(shield=True):
            await transport.aclose()


@click.command()
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False), required=False)
@click.option("--host", "hosts", multiple=True, metavar="NAME", help="Only this host (repeatable).")
def clean(matrix: Path | None, hosts: tuple[str, ...]) -> None:
    """Remove what dead runs left on the hosts of MATRIX (this machine without one).

    A run owns what it makes on a host through a lease in the host's work folder;
    once the lease is over (its end passed, or its controller on this machine is
    gone), its canary, namespace, veth, sandboxes, cell and sentinel folders and
    log are removed. Live runs are never touched. Exit 0 when every host was
    cleaned, 3 when one could not be reached, 2 on bad input.
    """
    if matrix is None:
        if hosts:
            raise UsageError("--host needs a MATRIX naming the hosts")
        chosen = [Host(name="localhost", transport="local", address="localhost")]
    else:
        from harness.matrix import load_matrix

        loaded = load_matrix(matrix)
        known = {h.name: h for h in loaded.hosts}
        unknown = [h for h in hosts if h not in known]
        if unknown:
            raise UsageError(
                f"unknown host {unknown[0]!r} (known: {', '.join(sorted(known)) or 'none'})"
            )
        chosen = [known[h] for h in hosts] if hosts else list(known.values())

    async def all_hosts() -> list[tuple[Host, list[str], str | None]]:
        results: list[tuple[Host, list[str], str | None]] = []

        async def one(host: Host) -> None:
            results.append((host, *await _clean_host(host)))

        async with anyio.create_task_group() as tg:
            for host in chosen:
                tg.start_soon(one, host)
        return results

    failed = False
    for host, cleaned, error in sorted(anyio.run(all_hosts), key=lambda r: r[0].name):
        if error:
            failed = True
            err_console.print(rich_text(f"{host.name}: not cleaned: {error}"), soft_wrap=True)
        elif cleaned:
            click.echo(rich_text(f"{host.name}: cleaned runs {', '.join(cleaned)}").plain)
        else:
            click.echo(rich_text(f"{host.name}: nothing to clean").plain)
    if failed:
        raise SystemExit(ExitCode.INCONCLUSIVE)
