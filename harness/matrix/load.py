"""Read matrices and inventories from TOML into validated models.

Every failure becomes one `SpecError` naming the file and the dotted key, in the
same words the user would search their file for.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.errors import SpecError
from harness.files import Unreadable, read_regular
from harness.matrix.models import (
    COMPARISON,
    RUNTIME_SPECS,
    SUPERVISED_KINDS,
    Host,
    InventoryFile,
    Matrix,
    MatrixFile,
    RuntimeSpec,
    Settings,
)
from harness.policy.load import inline_policy, load_policy, validated
from harness.scenarios import SCENARIOS, known_facts, listed

MAX_FILE_BYTES = 4 * 1024 * 1024
PATH_SHOWN = 240  # a longer path is shown by its start and its end
# A run plans every (host, runtime) cell up front; past this a plan would take
# minutes and gigabytes before the first cell (docs/matrix.md).
MAX_CELLS = 100_000
# Facts whose values are words; every other fact is a number or a boolean, so a
# word expected of it must be a status or a comparison.
WORD_FACTS = frozenset({"kernel_release", "kernel_machine"})
STATUSES = ("available", "unavailable")
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def _display(path: Path) -> str:
    """Show a path the way the user most likely typed it: relative to cwd if inside."""
    try:
        shown = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        shown = str(path)
    # A name from a file may hold a newline: the error must stay one line, and short.
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)
    return shown if len(shown) <= PATH_SHOWN else f"{shown[:120]}…{shown[-(PATH_SHOWN - 121) :]}"


def _read_toml(path: Path) -> tuple[dict[str, Any], bytes]:
    shown = _display(path)
    try:
        raw = read_regular(path, limit=MAX_FILE_BYTES)
    except Unreadable as exc:
        why = "is a directory, expected a TOML file" if "directory" in exc.why else exc.why
        raise SpecError(shown, "", why) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(shown, "", f"not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text), raw
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(shown, "", f"invalid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(shown, "", "invalid TOML: nested too deeply") from None


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _part(name: object) -> str:
    """A key as TOML would write it: bare when it can be, quoted (and escaped)
    otherwise, so an error line never breaks on a name holding a newline."""
    text = str(name)
    return text if _BARE.match(text) else json.dumps(text, ensure_ascii=False)


def _key(prefix: str, loc: Sequence[int | str]) -> str:
    parts = [prefix] if prefix else []
    for item in loc:
        if item == "[key]":
            continue
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
        else:
            parts.append(_part(item))
    return ".".join(parts)


def unknown(what: str, given: object, options: Sequence[str]) -> str:
    """ "unknown kind 'runc' (did you mean 'runsc'? expected one of: ...)": one wording
    for every name that is not one of a known set."""
    close = difflib.get_close_matches(str(given), options, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    shown = f" {given!r}" if what != "key" else ""
    return f"unknown {what}{shown} ({hint}expected one of: {', '.join(options)})"


def _explain(err: Mapping[str, Any], model: type[BaseModel], loc: Sequence[int | str]) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        fields = sorted(_fields_at(model, loc[:-1]))
        if not fields:
            return "unknown key"
        return unknown("key", loc[-1] if loc else "", fields)
    if kind == "missing":
        return "required key is missing"
    if kind == "value_error":
        return str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    value = err.get("input")
    shown = repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{err.get('msg', 'invalid value').rstrip('.').lower()}, got {shown}"


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model an annotation holds, and whether it sits inside a dict (keyed by name)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    args = getattr(annotation, "__args__", ())
    is_dict = getattr(annotation, "__origin__", None) is dict
    for arg in args:
        found, nested = _model_in(arg)
        if found is not None:
            return found, is_dict or nested
    return None, False


def _fields_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys a model accepts at a nested location, for 'expected one of' hints."""
    current: type[BaseModel] | None = model
    skip_key = False
    for item in loc:
        if skip_key:
            skip_key = False
            continue
        if current is None or isinstance(item, int) or item not in current.model_fields:
            return []
        current, skip_key = _model_in(current.model_fields[item].annotation)
    return list(current.model_fields) if current is not None and not skip_key else []


def _validate(model: type[M], data: object, *, file: str, prefix: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first.get("loc", ())
        raise SpecError(file, _key(prefix, loc), _explain(first, model, loc)) from None


def _resolve_path(value: str | None, base: Path) -> Path | None:
    if value is None:
        return None
    if "\x00" in value:
        raise ValueError("a path cannot contain a NUL byte")
    expanded = Path(os.path.expanduser(value))
    return expanded if expanded.is_absolute() else (base / expanded)


def _first(value: T | None, default: T) -> T:
    return default if value is None else value


def _path(value: str | None, base: Path, *, file: str, key: str) -> Path | None:
    try:
        return _resolve_path(value, base)
    except ValueError as exc:
        raise SpecError(file, key, str(exc)) from None


def load_inventory(path: Path) -> list[Host]:
    """Load one inventory file; relative paths inside it resolve against its folder."""
    data, _ = _read_toml(path)
    shown = _display(path)
    inv = _validate(InventoryFile, data, file=shown)
    base = path.parent
    hosts: list[Host] = []
    d = inv.defaults
    for name, entry in inv.hosts.items():
        transport = entry.transport or d.transport
        address = entry.address or (name if transport == "ssh" else "localhost")
        if any(c.isspace() for c in address) or address.startswith("-") or "\x00" in address:
            key = f"hosts.{_part(name)}.address"
            raise SpecError(shown, key, f"not a host address: {address!r}")
        hosts.append(
            Host(
                name=name,
                transport=transport,
                address=address,
                port=entry.port or d.port,
                user=entry.user or d.user,
                identity_file=_path(
                    entry.identity_file or d.identity_file,
                    base,
                    file=shown,
                    key=f"hosts.{_part(name)}.identity_file",
                ),
                passphrase_env=entry.passphrase_env or d.passphrase_env,
                known_hosts=_path(
                    entry.known_hosts or d.known_hosts,
                    base,
                    file=shown,
                    key=f"hosts.{_part(name)}.known_hosts",
                ),
                workdir=entry.workdir or d.workdir,
                connect_timeout=entry.connect_timeout or d.connect_timeout,
                connect_retries=_first(entry.connect_retries, d.connect_retries),
                accept_new_host_key=_first(entry.accept_new_host_key, d.accept_new_host_key),
                max_sessions=entry.max_sessions or d.max_sessions,
                max_cells=entry.max_cells or d.max_cells,
                ciphers=_tuple(entry.ciphers or d.ciphers),
                tags=tuple(entry.tags),
                source=shown,
            )
        )
    return hosts


def _tuple(values: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values else None


def _select_hosts(
    selectors: list[str] | None, pool: dict[str, Host], *, file: str
) -> tuple[Host, ...]:
    if selectors is None:
        return tuple(pool.values())
    chosen: dict[str, Host] = {}
    for i, sel in enumerate(selectors):
        if sel.startswith("tag:"):
            tag = sel[4:]
            tagged = [h for h in pool.values() if tag in h.tags]
            if not tagged:
                raise SpecError(file, f"hosts[{i}]", f"no host has tag {tag!r}")
            chosen.update((h.name, h) for h in tagged)
        elif sel in pool:
            chosen[sel] = pool[sel]
        else:
            known = ", ".join(sorted(pool)) or "none"
            raise SpecError(file, f"hosts[{i}]", f"unknown host {sel!r} (known: {known})")
    return tuple(chosen.values())


def _load_runtime(name: str, raw: dict[str, object], *, file: str) -> RuntimeSpec:
    prefix = f"runtimes.{_part(name)}"
    if not isinstance(raw, dict):
        raise SpecError(file, prefix, f"expected a table, got {type(raw).__name__}")
    kind = raw.get("kind")
    if kind is None:
        raise SpecError(file, f"{prefix}.kind", "required key is missing")
    if kind not in RUNTIME_SPECS:
        raise SpecError(file, f"{prefix}.kind", unknown("kind", kind, list(RUNTIME_SPECS)))
    # The policy is loaded on its own (`_with_policy`): a path or a table, never a
    # loaded `Policy` written by hand.
    entry = {k: v for k, v in raw.items() if k != "policy"}
    spec = _validate(RUNTIME_SPECS[str(kind)], entry, file=file, prefix=prefix)
    facts = known_facts()
    for fact in spec.facts:
        if fact not in facts:
            raise SpecError(
                file,
                f"{prefix}.facts.{_part(fact)}",
                unknown("fact", fact, list(facts)).replace(f" {fact!r}", "", 1),
            )
        _check_fact_value(fact, spec.facts[fact], file=file, key=f"{prefix}.facts.{_part(fact)}")
    _check_supervisor(spec, file=file, prefix=prefix)
    if spec.kind == "command":
        if "{probe}" not in spec.argv:
            raise SpecError(file, f"{prefix}.argv", "must contain the element '{probe}'")
        if spec.argv.count("{args}") != 1:
            raise SpecError(file, f"{prefix}.argv", "must contain the element '{args}' once")
    if spec.kind == "exec":
        for element in spec.exec:
            if "{exec_id}" in element and element != "{exec_id}":
                why = '\'{exec_id}\' must be a whole element, e.g. ["--exec-id", "{exec_id}"]'
                raise SpecError(file, f"{prefix}.exec", why)
    return spec


_PROPERTIES = {s.property for s in SCENARIOS.values() if s.property}


def _check_runtime_scenarios(name: str, raw: object, matrix: list[str], *, file: str) -> None:
    """A runtime's own `scenarios` are some of the matrix's. The host runtime runs
    them all: it is every other cell's control on its host. Every property the entry
    `expect`s is measured by one of them: else the expectation is never checked."""
    if not isinstance(raw, dict) or not isinstance(raw.get("scenarios"), list):
        return  # absent, or a wrong type the runtime's validation names
    chosen, key = raw["scenarios"], f"runtimes.{_part(name)}.scenarios"
    if raw.get("kind") == "host":
        raise SpecError(file, key, "the host runtime is every cell's control: it runs them all")
    if not chosen:
        raise SpecError(file, key, "names no scenario (leave the runtime out instead)")
    for i, scenario in enumerate(chosen):
        if scenario not in matrix:
            raise SpecError(
                file,
                f"{key}[{i}]",
                f"{scenario!r} is not one of the matrix's scenarios ({', '.join(matrix)})",
            )
    expect = raw.get("expect")
    measured = {SCENARIOS[s].property for s in chosen if s in SCENARIOS}
    for prop in expect if isinstance(expect, dict) else ():
        if prop in _PROPERTIES and prop not in measured:  # an unknown one: its own error
            raise SpecError(
                file,
                f"runtimes.{_part(name)}.expect.{_part(str(prop))}",
                f"none of the runtime's scenarios measures it ({', '.join(chosen)}):"
                " the expectation would never be checked",
            )


def _with_policy(spec: RuntimeSpec, raw: object, base: Path, *, file: str, key: str) -> RuntimeSpec:
    """The runtime entry with its declared policy loaded (docs/policy.md): a policy
    file's path, relative to the matrix, or the same fields as an inline table."""
    if raw is None:
        return spec
    if isinstance(raw, str):
        where = _path(raw, base, file=file, key=key)
        assert where is not None
        where = Path(os.path.normpath(where))
        policy = load_policy(where, shown=_display(where))
    elif isinstance(raw, dict):
        policy = inline_policy(validated(raw, file=file, prefix=key))
    else:
        why = f"expected a policy file's path or an inline table, got {type(raw).__name__}"
        raise SpecError(file, key, why)
    return spec.model_copy(update={"policy": policy})


def _check_supervisor(spec: RuntimeSpec, *, file: str, prefix: str) -> None:
    """A supervisor that can be started, and an attribution expectation that can be
    measured: an expectation with no record source would be a green skip."""
    if spec.supervisor is not None:
        if spec.kind not in SUPERVISED_KINDS:
            kinds = ", ".join(SUPERVISED_KINDS)
            raise SpecError(
                file, f"{prefix}.supervisor", f"kind {spec.kind!r} cannot be supervised ({kinds})"
            )
        if spec.attribution is not None:
            raise SpecError(
                file,
                f"{prefix}.attribution",
                "the supervisor is the record source: give one or the other",
            )
        flags = getattr(spec, "flags", [])
        if spec.kind == "runsc" and "--network=host" not in flags:
            raise SpecError(
                file,
                f"{prefix}.flags",
                "a supervised runsc needs '--network=host': the sentry's sockets must live"
                " in the namespace the supervisor guards",
            )
    elif spec.supervisor_fault is not None:
        raise SpecError(file, f"{prefix}.supervisor_fault", "needs supervisor = 'reference'")
    if spec.expect.get("attribution") and spec.attribution is None and spec.supervisor is None:
        raise SpecError(
            file,
            f"{prefix}.expect.attribution",
            "cannot be measured: no decision-record source (set attribution = {...}"
            " or supervisor = 'reference')",
        )


def _check_fact_value(fact: str, value: object, *, file: str, key: str) -> None:
    """A misspelt status must not become an exact value that can never match."""
    if not isinstance(value, str) or value in STATUSES or COMPARISON.match(value):
        return
    close = difflib.get_close_matches(value, STATUSES, n=1, cutoff=0.75)
    if close:
        raise SpecError(file, key, f"{value!r} is not a status (did you mean {close[0]!r}?)")
    if fact not in WORD_FACTS:
        raise SpecError(
            file,
            key,
            f"{value!r}: expected 'available', 'unavailable', a comparison such as '>= 3',"
            " or an exact number or boolean",
        )


def _settings(settings: Settings, base: Path, *, file: str) -> Settings:
    """`index` as a URL, or as a folder resolved against the matrix's own folder."""
    index = settings.index
    if index is None or index.startswith(("http://", "https://")):
        return settings
    folder = _path(index.removeprefix("file://"), base, file=file, key="settings.index")
    if folder is None or not folder.is_dir():
        raise SpecError(file, "settings.index", f"neither an http(s) URL nor a folder: {index!r}")
    return settings.model_copy(update={"index": str(folder)})


def default_scenarios() -> list[str]:
    """A matrix without `scenarios` judges every property and records the
    mechanisms: a nightly job that forgot the key must still catch a regression."""
    return [s.name for s in SCENARIOS.values() if s.property] + ["mechanisms"]


def load_matrix(path: Path | str) -> Matrix:
    """Load a matrix and everything it references, or raise one SpecError."""
    path = Path(path)
    data, raw = _read_toml(path)
    shown = _display(path)
    mf = _validate(MatrixFile, data, file=shown)
    inventories = [mf.inventory] if isinstance(mf.inventory, str) else mf.inventory
    if not inventories:
        raise SpecError(shown, "inventory", "names no inventory file")
    pool: dict[str, Host] = {}
    for i, inv in enumerate(inventories):
        where = "inventory" if isinstance(mf.inventory, str) else f"inventory[{i}]"
        inv_path = _path(inv, path.parent, file=shown, key=where)
        assert inv_path is not None
        # realpath, not resolve(): a symlink loop is for the read to report, in one line
        if os.path.realpath(inv_path) == os.path.realpath(path):
            key = "inventory" if isinstance(mf.inventory, str) else f"inventory[{i}]"
            raise SpecError(shown, key, "refers to the matrix itself")
        for host in load_inventory(inv_path):
            if host.name in pool:
                raise SpecError(
                    _display(inv_path),
                    f"hosts.{_part(host.name)}",
                    f"host already defined in {pool[host.name].source}",
                )
            pool[host.name] = host
    scenarios = default_scenarios() if mf.scenarios is None else mf.scenarios
    for i, scenario in enumerate(scenarios):
        if scenario not in SCENARIOS:
            raise SpecError(
                shown,
                f"scenarios[{i}]",
                unknown("scenario", scenario, [s.name for s in listed()]),
            )
    if not mf.runtimes:
        raise SpecError(shown, "runtimes", "defines no runtime")
    selected = _select_hosts(mf.hosts, pool, file=shown)
    cells = len(selected) * len(mf.runtimes)
    if cells > MAX_CELLS:  # before any runtime is bound or any cell planned
        raise SpecError(
            shown,
            "runtimes",
            f"{len(selected)} hosts x {len(mf.runtimes)} runtimes = {cells} cells, more than"
            f" the {MAX_CELLS} one matrix may plan; split it into several matrices",
        )
    for name, raw_rt in mf.runtimes.items():
        _check_runtime_scenarios(name, raw_rt, scenarios, file=shown)
        argv = raw_rt.get("argv") if isinstance(raw_rt, dict) else None
        if isinstance(argv, list) and "{policy}" in argv and not raw_rt.get("policy"):
            why = "names {policy} (a launcher derived from the policy), but declares no policy"
            raise SpecError(shown, f"runtimes.{_part(name)}.argv", why)
    runtimes = {
        name: _with_policy(
            _load_runtime(name, raw_rt, file=shown),
            raw_rt.get("policy") if isinstance(raw_rt, dict) else None,
            path.parent,
            file=shown,
            key=f"runtimes.{_part(name)}.policy",
        )
        for name, raw_rt in mf.runtimes.items()
    }
    return Matrix(
        name=mf.name,
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        hosts=selected,
        runtimes=runtimes,
        scenarios=tuple(dict.fromkeys(scenarios)),
        settings=_settings(mf.settings, path.parent, file=shown),
        canary=mf.canary,
    )
