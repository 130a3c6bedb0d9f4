#!/usr/bin/env python3
"""Mutation testing of the judging modules: would the fast tests notice a wrong verdict?

Usage (from the repository root):

    .venv/bin/python scripts/mutate.py                     # every judging module
    .venv/bin/python scripts/mutate.py harness/judge.py    # one module
    .venv/bin/python scripts/mutate.py --list              # the mutants, not run
    .venv/bin/python scripts/mutate.py --show ID           # one mutant's diff
    .venv/bin/python scripts/mutate.py --changed --record  # what changed since the record

`--changed` runs only the modules whose fingerprint differs from tests/mutation-record.json:
the sha256 of every file that can change a mutant's fate (the module, its fast tests,
every harness and tests module they import, transitively, this script and the review
table in docs/testing.md). Where none of them changed, the result cannot have: the suite
runs the gate this way. `--record` writes the fingerprints of the modules run, once
their run ends with no dangerous survivor.

Each mutant is one small edit of one module: a flipped comparison, `and`<->`or`,
a dropped `not`, a negated condition, a deleted `return`, `raise` or call, `any`<->`all`,
a verdict or outcome word swapped for the dangerous one, a misspelt mapping key,
`True`<->`False`, a number off by one (docs/testing.md lists them all). The module's
fast unit tests are run against each mutant; a mutant they do not fail on has
*survived*.

How it runs fast: one parent process imports harness, pytest and the tests once,
then forks a child per mutant. The child swaps the mutated function's code object
in (`__code__`, so every module holding a reference sees it) and runs the tests
with `pytest -x`; nothing is written to disk and the source files are never
touched.

A survivor is acceptable only when docs/testing.md lists its id in the table of
reviewed survivors, with why it is equivalent (no input can tell it apart) or
harmless (it changes a message, never a verdict). Any other survivor is reported
as DANGEROUS: until someone shows otherwise, it may turn a result into `enforced`
or `pass`. Exit status: 0 when there is none, 1 otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import hashlib
import json
import os
import re
import signal
import sys
import time
import types
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "testing.md"
RECORD = ROOT / "tests" / "mutation-record.json"

# Module -> the fast unit tests that judge it (never e2e: those start sandboxes).
FAST = [
    "tests/judge/test_properties.py",
    "tests/judge/test_verdicts.py",
    "tests/judge/test_attribution.py",
    "tests/judge/test_judge.py",
    "tests/results/test_protocol.py",
    "tests/judge/test_arrivals.py",
    "tests/judge/test_reach.py",
    "tests/judge/test_write_reach.py",
    "tests/judge/test_overlay.py",
    "tests/judge/test_fence.py",
    "tests/judge/test_attribution_two.py",
]
TARGETS: dict[str, list[str]] = {
    "harness/judge/properties.py": FAST,
    "harness/judge/arrivals.py": FAST,
    "harness/judge/reach.py": FAST,
    "harness/judge/overlay.py": FAST,
    "harness/judge/start.py": FAST,
    "harness/judge/verdicts.py": FAST,
    "harness/judge/attribution.py": FAST,
    "harness/judge/cell.py": FAST,
    "harness/judge/fence.py": FAST,
    "harness/probe/protocol.py": FAST,
    "harness/policy/models.py": FAST,
    "harness/results/resume.py": ["tests/results/test_resume_merge.py"],
    "harness/results/merge.py": ["tests/results/test_resume_merge.py"],
    "harness/execution.py": ["tests/judge/test_verdicts.py"],
}
# Modules of which only some functions judge: the rest is I/O, for the e2e tests.
ONLY = {"harness/execution.py": {"cell_status"}, "harness/policy/models.py": {"within"}}
# Judging modules not yet at their target: run only when named, so CI gates on the others.
NOT_YET: set[str] = set()
# Kill-rate targets (issue 20); the default run reports against them.
TARGET_RATE = {
    "harness/results/resume.py": 0.90,
    "harness/results/merge.py": 0.90,
}
DEFAULT_RATE = 0.95

# Words whose swap could change a verdict, each with what it is swapped for.
WORDS: dict[str, tuple[str, ...]] = {
    "enforced": ("violated", "inconclusive"),
    "violated": ("enforced",),
    "inconclusive": ("enforced",),
    "skipped": ("enforced",),
    "blocked": ("escaped", "error"),
    "escaped": ("blocked",),
    "succeeded": ("blocked",),
    "error": ("blocked",),
    "timeout": ("blocked",),
    "missing": ("blocked",),
    "ok": ("failed",),
    "failed": ("ok",),
    "n/a": ("escaped",),
    "attempt": ("control",),
    "control": ("attempt",),
    "unavailable": ("available",),
    "available": ("unavailable",),
    "intact": ("changed",),
    "changed": ("intact",),
    "done": ("fact",),
    "fact": ("check",),
    "check": ("fact",),
    "start": ("info",),
    "fatal": ("info",),
    "info": ("fatal",),
}
ENUM_SWAPS: dict[str, dict[str, tuple[str, ...]]] = {
    "Verdict": {
        "PASS": ("INCONCLUSIVE",),
        "REGRESSION": ("PASS",),
        "UNEXPECTED": ("PASS",),
        "INCONCLUSIVE": ("PASS",),
        "SKIPPED": ("PASS",),
        "FLAKY": ("PASS",),
    },
    "CellStatus": {
        "COMPLETE": ("ERROR",),
        "CANCELLED": ("COMPLETE",),
        "ERROR": ("COMPLETE",),
    },
    "Control": {"NONE": ("HOST",), "HOST": ("NONE",)},
    "CheckOutcome": {
        "BLOCKED": ("ESCAPED", "ERROR"),
        "ESCAPED": ("BLOCKED",),
        "SUCCEEDED": ("BLOCKED",),
        "ERROR": ("BLOCKED",),
        "TIMEOUT": ("BLOCKED",),
        "MISSING": ("BLOCKED",),
        "OK": ("FAILED",),
        "FAILED": ("OK",),
    },
    "Observed": {
        "ENFORCED": ("VIOLATED", "INCONCLUSIVE"),
        "VIOLATED": ("ENFORCED",),
        "INCONCLUSIVE": ("ENFORCED",),
        "SKIPPED": ("ENFORCED",),
        "FLAKY": ("ENFORCED",),
    },
    "Rule": {
        "PROBE": ("READ",),
        "ARRIVAL": ("PROBE",),
        "READ": ("PROBE",),
        "WRITE": ("PROBE",),
        "MOUNTS": ("PROBE",),
        "CAPS": ("PROBE",),
        "ROOT": ("PROBE",),
        "SENTINEL": ("PROBE",),
    },
    "ExitCode": {
        "MISMATCH": ("OK", "INCONCLUSIVE"),
        "INCONCLUSIVE": ("OK",),
        "OK": ("INCONCLUSIVE",),
    },
}
COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.GtE, ast.LtE),
    ast.LtE: (ast.Gt, ast.Lt),
    ast.Gt: (ast.LtE, ast.GtE),
    ast.GtE: (ast.Lt, ast.Gt),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
SWAP_CALLS = {"any": "all", "all": "any", "min": "max", "max": "min"}
SYMBOL = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
    ast.And: "and", ast.Or: "or",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Mutant:
    """One edit: where (module, function), what, and the node to edit."""

    id: str  # module::function::what#n, stable while the function is unchanged
    module: str  # path relative to the repository root
    function: str  # qualified name of the enclosing def, or <module>
    line: int
    what: str
    path: tuple[tuple[str, int | None], ...]  # fields from the module node to the edited node
    choice: int  # which replacement, when a site has several


# --- finding mutants ----------------------------------------------------------------


def _is_docstring(parent: ast.AST, node: ast.AST) -> bool:
    return (
        isinstance(parent, ast.Expr)
        and isinstance(node, ast.Constant)
        and isinstance(node.value, str)
    )


def _edits(node: ast.AST, parent: ast.AST | None) -> list[str]:
    """The edits a node admits, each described in words; [] for none."""
    out: list[str] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in COMPARE_SWAPS.get(type(op), ()):
                out.append(f"{SYMBOL[type(op)]} -> {SYMBOL[new]} (operator {i + 1})")
    elif isinstance(node, ast.BoolOp):
        new_op = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append(f"{SYMBOL[type(node.op)]} -> {SYMBOL[new_op]}")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append("drop not")
    elif isinstance(node, ast.If | ast.While | ast.IfExp):
        out.append("negate the condition")
    elif isinstance(node, ast.Return) and node.value is not None:
        out.append("delete return")
    elif isinstance(node, ast.Raise):
        out.append("delete raise")
    elif isinstance(node, ast.Continue):
        out.extend(("continue -> break", "delete continue"))
    elif isinstance(node, ast.Set | ast.Tuple | ast.List) and _is_table(node):
        # A member dropped from, or misspelt in, a constant set or tuple that decides
        # a judgement (filesystem types, outcome sets, id prefixes).
        for i, elt in enumerate(node.elts):
            shown = ast.unparse(elt)
            out.append(f"drop member {i + 1} ({shown})")
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(f"misspell member {i + 1} ({shown})")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in SWAP_CALLS:
            out.append(f"{node.func.id} -> {SWAP_CALLS[node.func.id]}")
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        out.append("delete the call")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        if any(_is_int(side) for side in (node.left, node.right)):
            sign = "+ -> -" if isinstance(node.op, ast.Add) else "- -> +"
            out.append(sign)
    elif (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ENUM_SWAPS
        and isinstance(node.ctx, ast.Load)
    ):
        for member in ENUM_SWAPS[node.value.id].get(node.attr, ()):
            out.append(f"{node.value.id}.{node.attr} -> {node.value.id}.{member}")
    elif isinstance(node, ast.Constant) and parent is not None:
        value = node.value
        if isinstance(value, bool):
            out.append(f"{value} -> {not value}")
        elif isinstance(value, int) and not isinstance(parent, ast.Slice):
            out.append(f"{value} -> {value + 1}")
        elif isinstance(value, str) and not _is_docstring(parent, node):
            out.extend(f"{value!r} -> {new!r}" for new in WORDS.get(value, ()))
            if _is_key(node, parent):
                out.append(f"key {value!r} -> {value + '_'!r}")
    return out


def _is_table(node: ast.Set | ast.Tuple | ast.List) -> bool:
    """A literal collection of names for things: every member a string or an enum
    member (`Rule.CAPS`), read, not assigned to."""
    if not node.elts or isinstance(getattr(node, "ctx", None), ast.Store):
        return False
    words = all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
    members = all(
        isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id[0].isupper()
        for e in node.elts
    )
    return words or members


def _is_int(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _is_key(node: ast.AST, parent: ast.AST) -> bool:
    """A string used as a mapping key: `x["key"]` or `x.get("key")`."""
    if isinstance(parent, ast.Subscript):
        return parent.slice is node
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in ("get", "pop", "setdefault")
        and bool(parent.args)
        and parent.args[0] is node
    )


def _walk(
    node: ast.AST, path: tuple[tuple[str, int | None], ...], scope: str, parent: ast.AST | None
) -> Iterator[tuple[ast.AST, ast.AST | None, tuple[tuple[str, int | None], ...], str]]:
    yield node, parent, path, scope
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "decorator_list", "type_comment"):
            continue  # annotations are not run; decorators are declarations
        if isinstance(node, ast.JoinedStr):
            continue  # message text
        inner = scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = node.name if scope == "<module>" else f"{scope}.{node.name}"
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _walk(item, (*path, (name, i)), inner, node)
        elif isinstance(value, ast.AST):
            yield from _walk(value, (*path, (name, None)), inner, node)


def _skip_module_level(node: ast.AST, scope: str) -> bool:
    """Module-level and class-body code is declarations (imports, `__all__`, fields),
    except module constants, which are mutated."""
    return scope == "<module>" and isinstance(node, ast.If | ast.Raise | ast.Return)


def find_mutants(module: str) -> list[Mutant]:
    """Every mutant of one module, in source order."""
    tree = ast.parse((ROOT / module).read_text(), filename=module)
    seen: Counter[str] = Counter()
    found = []
    only = ONLY.get(module)
    for node, parent, path, scope in _walk(tree, (), "<module>", None):
        if _skip_module_level(node, scope):
            continue
        if only is not None and scope.split(".")[0] not in only:
            continue
        if scope != "<module>" and _in_class_body_only(tree, path):
            continue
        for choice, what in enumerate(_edits(node, parent)):
            key = f"{module}::{scope}::{what}"
            seen[key] += 1
            found.append(
                Mutant(
                    id=f"{key}#{seen[key]}",
                    module=module,
                    function=scope,
                    line=getattr(node, "lineno", 0),
                    what=what,
                    path=path,
                    choice=choice,
                )
            )
    return found


def _in_class_body_only(tree: ast.AST, path: tuple[tuple[str, int | None], ...]) -> bool:
    """True for nodes of a class body outside any method (field defaults)."""
    node = tree
    in_function = False
    for name, index in path:
        child = getattr(node, name)
        node = child[index] if index is not None else child
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            in_function = True
    return not in_function


# --- making a mutant ----------------------------------------------------------------


def _locate(
    tree: ast.AST, path: tuple[tuple[str, int | None], ...]
) -> tuple[ast.AST, str, int | None, ast.AST]:
    node, holder, field, index = tree, tree, "", None
    for name, i in path:
        holder, field, index = node, name, i
        child = getattr(node, name)
        node = child[i] if i is not None else child
    return holder, field, index, node


def mutate_tree(tree: ast.Module, mutant: Mutant) -> ast.Module:
    """A copy of the module's tree with the mutant's one edit made."""
    tree = copy.deepcopy(tree)
    holder, field, index, node = _locate(tree, mutant.path)
    new: ast.AST
    if isinstance(node, ast.Compare):
        n = int(re.search(r"operator (\d+)", mutant.what).group(1)) - 1  # type: ignore[union-attr]
        swaps = COMPARE_SWAPS[type(node.ops[n])]
        options = [(n, s) for s in swaps]
        # choice counts over all operators of the node; find this operator's offset
        offset = sum(len(COMPARE_SWAPS.get(type(o), ())) for o in node.ops[:n])
        _, new_op = options[mutant.choice - offset]
        node.ops[n] = new_op()
        new = node
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        new = node
    elif isinstance(node, ast.UnaryOp):
        new = node.operand
    elif isinstance(node, ast.If | ast.While | ast.IfExp):
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        new = node
    elif isinstance(node, ast.Continue):
        new = ast.Break() if mutant.what == "continue -> break" else ast.Pass()
    elif isinstance(node, ast.Return | ast.Raise):
        new = ast.Pass()
    elif isinstance(node, ast.Set | ast.Tuple | ast.List):
        verb, n = re.match(r"(drop|misspell) member (\d+)", mutant.what).groups()  # type: ignore[union-attr]
        member = node.elts[int(n) - 1]
        if verb == "drop":
            del node.elts[int(n) - 1]
        else:
            assert isinstance(member, ast.Constant)
            member.value = _misspelt(member.value)
        new = node
    elif isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        node.func.id = SWAP_CALLS[node.func.id]
        new = node
    elif isinstance(node, ast.Expr):
        new = ast.Pass()
    elif isinstance(node, ast.BinOp):
        node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        new = node
    elif isinstance(node, ast.Attribute):
        assert isinstance(node.value, ast.Name)
        node.attr = ENUM_SWAPS[node.value.id][node.attr][mutant.choice]
        new = node
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, int):
            node.value = value + 1
        elif isinstance(value, str):
            words = WORDS.get(value, ())
            node.value = words[mutant.choice] if mutant.choice < len(words) else value + "_"
        new = node
    else:  # pragma: no cover - _edits and mutate_tree disagree
        raise AssertionError(f"cannot mutate {type(node).__name__}")
    if index is None:
        setattr(holder, field, new)
    else:
        getattr(holder, field)[index] = new
    return ast.fix_missing_locations(tree)


def _misspelt(word: str) -> str:
    """A near miss that matches nothing real: the last letter doubled."""
    return word + word[-1] if word else "_"


def module_name(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


def _functions(
    namespace: dict[str, object], prefix: str = ""
) -> Iterator[tuple[str, types.FunctionType]]:
    """Every function (and method, property getter) reachable by qualified name."""
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType):
            yield prefix + name, value
        elif isinstance(value, type) and value.__module__ == namespace.get("__name__"):
            for attr, member in vars(value).items():
                target = member.fget if isinstance(member, property) else member
                if isinstance(target, staticmethod | classmethod):
                    target = target.__func__
                if isinstance(target, types.FunctionType):
                    yield f"{prefix}{name}.{attr}", target


def apply(mutant: Mutant) -> None:
    """Make the live module behave as the mutant (in this process only)."""
    source = (ROOT / mutant.module).read_text()
    tree = mutate_tree(ast.parse(source, filename=mutant.module), mutant)
    code = compile(tree, str(ROOT / mutant.module), "exec")
    live = sys.modules[module_name(mutant.module)]
    fresh: dict[str, object] = {"__name__": live.__name__, "__file__": live.__file__}
    exec(code, fresh)
    if mutant.function == "<module>":
        # A module constant: rebind it wherever it was imported by name.
        for name, value in fresh.items():
            old = live.__dict__.get(name)
            if name.startswith("__") or old is None or isinstance(value, type | types.FunctionType):
                continue
            if _differs(value, old):
                for mod in list(sys.modules.values()):
                    space = getattr(mod, "__dict__", None)
                    if space is not None and space.get(name) is old:
                        space[name] = value
        return
    old = dict(_functions(live.__dict__))
    new = dict(_functions(fresh))
    top = mutant.function.split(".")
    for qualname in (mutant.function, ".".join(top[:2]), top[0]):
        if qualname in old and qualname in new:
            # Defaults live on the function, not in its code: a mutated default too.
            old[qualname].__code__ = new[qualname].__code__
            old[qualname].__defaults__ = new[qualname].__defaults__
            old[qualname].__kwdefaults__ = new[qualname].__kwdefaults__
            return
    raise LookupError(f"{mutant.id}: no live function {mutant.function}")


def _differs(a: object, b: object) -> bool:
    try:
        return bool(a != b)
    except Exception:
        return True


# --- running ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    mutant: Mutant
    survived: bool
    how: str  # killed | survived | timeout | crashed | no test reaches it
    tests: int  # how many tests ran against it


def _top(qualname: str) -> str:
    """`f.<locals>.<listcomp>` -> `f`; `C.m.<locals>.g` -> `C.m`: the unit a mutant patches."""
    return qualname.split(".<locals>")[0]


class Mutator:
    """A pytest plugin that takes over the test loop: run every test once, noting
    which judging functions each one calls, then fork a child per mutant that runs
    only the tests calling the mutated function, stopping at the first failure."""

    def __init__(self, mutants: list[Mutant], *, jobs: int, timeout: float, progress: int) -> None:
        self.mutants = mutants
        self.jobs = jobs
        self.timeout = timeout
        self.progress = progress  # a file descriptor for progress lines
        self.results: list[Result] = []
        self.failed = False
        self.error: str | None = None

    def pytest_runtest_logreport(self, report: object) -> None:
        if getattr(report, "failed", False):
            self.failed = True

    def _run_items(self, items: list[object]) -> bool:
        """Run items in order; False at the first failure."""
        for item in items:
            self.failed = False
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)  # type: ignore[attr-defined]
            if self.failed:
                return False
        return True

    def pytest_runtestloop(self, session: object) -> bool:
        items = list(session.items)  # type: ignore[attr-defined]
        files = {str(ROOT / m.module): m.module for m in self.mutants}
        calls: dict[tuple[str, str], list[int]] = {}
        for index, item in enumerate(items):
            seen: set[tuple[str, str]] = set()

            def profile(
                frame: types.FrameType, event: str, arg: object, seen: set[Any] = seen
            ) -> None:
                if event == "call" and frame.f_code.co_filename in files:
                    seen.add((files[frame.f_code.co_filename], _top(frame.f_code.co_qualname)))

            sys.setprofile(profile)
            try:
                ok = self._run_items([item])
            finally:
                sys.setprofile(None)
            if not ok:
                self.error = f"a test fails without any mutant: {getattr(item, 'nodeid', item)}"
                return True
            for key in seen:
                calls.setdefault(key, []).append(index)
        for module in {m.module for m in self.mutants}:
            __import__(module_name(module))
        self.results = self._fork_all(items, calls)
        return True

    def _tests_for(
        self, mutant: Mutant, items: list[object], calls: dict[tuple[str, str], list[int]]
    ) -> list[object]:
        if mutant.function == "<module>":  # a module constant: anything may read it
            wanted = {i for (mod, _), idx in calls.items() if mod == mutant.module for i in idx}
        else:
            parts = mutant.function.split(".")
            wanted = set()
            for name in {mutant.function, ".".join(parts[:2]), parts[0]}:
                wanted.update(calls.get((mutant.module, name), []))
        return [items[i] for i in sorted(wanted)]

    def _fork_all(
        self, items: list[object], calls: dict[tuple[str, str], list[int]]
    ) -> list[Result]:
        pending = list(self.mutants)
        running: dict[int, tuple[Mutant, int]] = {}
        results: list[Result] = []
        while pending or running:
            while pending and len(running) < self.jobs:
                mutant = pending.pop(0)
                tests = self._tests_for(mutant, items, calls)
                if not tests:
                    results.append(Result(mutant, True, "no test reaches it", 0))
                    continue
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child
                    signal.alarm(max(1, int(self.timeout)))
                    try:
                        apply(mutant)
                    except Exception:  # a mutant that does not even load is killed
                        os._exit(3)
                    os._exit(0 if self._run_items(tests) else 1)
                running[pid] = (mutant, len(tests))
            if not running:
                continue
            pid, status = os.wait()
            mutant, count = running.pop(pid)
            if os.WIFSIGNALED(status):
                how = "timeout" if os.WTERMSIG(status) == signal.SIGALRM else "crashed"
                results.append(Result(mutant, False, how, count))
            else:
                code = os.WEXITSTATUS(status)
                how = {0: "survived", 1: "killed"}.get(code, "did not load")
                results.append(Result(mutant, code == 0, how, count))
            if len(results) % 50 == 0:
                os.write(self.progress, f"mutate: {len(results)}/{len(self.mutants)}\n".encode())
        order = {m.id: i for i, m in enumerate(self.mutants)}
        return sorted(results, key=lambda r: order[r.mutant.id])


def run(mutants: list[Mutant], *, jobs: int, timeout: float) -> list[Result]:
    """Run the mutants against their modules' fast tests; pytest's output is hidden."""
    import pytest

    tests = sorted({t for m in mutants for t in TARGETS[m.module]})
    args = [
        "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", "-o", "timeout=0",
        "-W", "ignore::pytest.PytestAssertRewriteWarning", *tests,
    ]  # fmt: skip
    progress = os.dup(2)
    plugin = Mutator(mutants, jobs=jobs, timeout=timeout, progress=progress)
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1), os.dup(2)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        code = pytest.main(args, plugins=[plugin])
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (devnull, progress, *saved):
            os.close(fd)
    if plugin.error or (not plugin.results and mutants):
        raise SystemExit(f"mutate: {plugin.error or f'pytest exit {code} before any mutant ran'}")
    return plugin.results


# --- the reviewed survivors ---------------------------------------------------------

_ROW = re.compile(r"^\|\s*`([^`|]+)`\s*\|\s*(equivalent|harmless)\s*\|\s*(.+?)\s*\|\s*$")


def reviewed(doc: Path = DOC) -> dict[str, tuple[str, str]]:
    """Survivor id -> (equivalent|harmless, reason), from docs/testing.md's table."""
    if not doc.is_file():
        return {}
    found = {}
    for line in doc.read_text().splitlines():
        if m := _ROW.match(line):
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


def diff(mutant: Mutant) -> str:
    source = (ROOT / mutant.module).read_text()
    tree = ast.parse(source)
    before = ast.unparse(tree).splitlines()
    after = ast.unparse(mutate_tree(tree, mutant)).splitlines()
    return "\n".join(
        difflib.unified_diff(
            before, after, mutant.module, f"{mutant.module} (mutant)", n=1, lineterm=""
        )
    )


def report(results: list[Result], known: dict[str, tuple[str, str]], out: TextIO) -> int:
    """Kill rate per module, then the survivors; returns the number of dangerous ones.

    The rate leaves out the survivors reviewed as equivalent: no test can kill them.
    """
    by_module: dict[str, list[Result]] = {}
    for r in results:
        by_module.setdefault(r.mutant.module, []).append(r)
    print(f"{'module':32} {'mutants':>7} {'killed':>6} {'equiv':>5} {'rate':>6}  target", file=out)
    for module, rows in by_module.items():
        killed = sum(not r.survived for r in rows)
        equivalent = sum(
            r.survived and known.get(r.mutant.id, ("",))[0] == "equivalent" for r in rows
        )
        judged = len(rows) - equivalent
        rate = killed / judged if judged else 1.0
        want = TARGET_RATE.get(module, DEFAULT_RATE)
        mark = "ok" if rate >= want else "BELOW"
        print(
            f"{module:32} {len(rows):7} {killed:6} {equivalent:5} {rate:6.1%}  {want:.0%} {mark}",
            file=out,
        )
    dangerous = 0
    survivors = [r for r in results if r.survived]
    if survivors:
        print("\nsurvivors:", file=out)
    for r in survivors:
        m = r.mutant
        kind, why = known.get(
            m.id, ("DANGEROUS", "not reviewed: may turn a result into enforced or pass")
        )
        dangerous += kind == "DANGEROUS"
        note = "" if r.how == "survived" else f"; {r.how}"
        print(f"  [{kind}] {m.id}  (line {m.line}{note})\n      {why}", file=out)
    ran = {r.mutant.module for r in results}
    alive = {r.mutant.id for r in survivors}
    stale = [i for i in known if i.split("::")[0] in ran and i not in alive]
    if stale:
        print("\nreviewed in docs/testing.md but no longer surviving (remove them):", file=out)
        for i in stale:
            print(f"  {i}", file=out)
    return dangerous


def _imported(path: Path) -> set[Path]:
    """The project's own modules (harness.*, tests.*) a file imports, as files."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            if name.split(".")[0] not in ("harness", "tests"):
                continue
            parts = name.split(".")
            for k in range(1, len(parts) + 1):  # each package on the way, and the module
                base = ROOT.joinpath(*parts[:k])
                for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                    if candidate.is_file():
                        found.add(candidate)
    return found


def fingerprint(module: str) -> str:
    """The sha256 of every file that can change the fate of this module's mutants: the
    module, its tests and what they import, and the data files beside the tests."""
    tests = [ROOT / t for t in TARGETS[module]]
    data = {p for t in tests for p in t.parent.iterdir() if p.is_file() and p.suffix != ".py"}
    todo = [ROOT / module, *tests, ROOT / "tests" / "conftest.py"]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imported(path) - seen)
    digest = hashlib.sha256()
    for path in sorted(seen | data | {DOC}):
        digest.update(f"{path.relative_to(ROOT)}\0".encode() + path.read_bytes() + b"\0")
    digest.update(Path(__file__).resolve().read_bytes())  # how mutants are made and judged
    return digest.hexdigest()


def _recorded() -> dict[str, str]:
    try:
        data = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutate.py", description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", help="module paths (default: every judging module)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    parser.add_argument("--show", metavar="ID", help="print one mutant's diff")
    parser.add_argument(
        "--changed", action="store_true", help="only modules whose fingerprint left the record"
    )
    parser.add_argument(
        "--record", action="store_true", help="record the modules run, if none has a danger"
    )
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    modules = args.modules or [m for m in TARGETS if m not in NOT_YET]
    unknown = [m for m in modules if m not in TARGETS]
    if unknown:
        print(
            f"mutate: error: unknown module {unknown[0]} (expected one of: {', '.join(TARGETS)})",
            file=sys.stderr,
        )
        return 2
    prints = {m: fingerprint(m) for m in modules} if args.changed or args.record else {}
    if args.changed:
        record = _recorded()
        same = [m for m in modules if record.get(m) == prints[m]]
        for module in same:
            print(f"unchanged since the record: {module}")
        modules = [m for m in modules if m not in same]
    mutants = [m for module in modules for m in find_mutants(module)]
    if args.show:
        match = [m for m in mutants if m.id == args.show]
        if not match:
            print(f"mutate: error: no mutant {args.show}", file=sys.stderr)
            return 2
        print(diff(match[0]))
        return 0
    if args.list:
        for m in mutants:
            print(f"{m.id}  (line {m.line})")
        print(f"{len(mutants)} mutants", file=sys.stderr)
        return 0
    started = time.monotonic()
    # No mutant, no run: pytest given no test file would collect the whole suite.
    results = run(mutants, jobs=args.jobs, timeout=args.timeout) if mutants else []
    dangerous = report(results, reviewed(), sys.stdout)
    hows = Counter(r.how for r in results)
    print("\n" + ", ".join(f"{n} {how}" for how, n in sorted(hows.items())))
    took = time.monotonic() - started
    print(f"\n{len(results)} mutants in {took:.0f}s with {args.jobs} jobs; {dangerous} dangerous")
    if args.record and not dangerous:
        record = {**_recorded(), **{m: prints[m] for m in modules}}
        RECORD.write_text(json.dumps(dict(sorted(record.items())), indent=1) + "\n")
    return 1 if dangerous else 0


if __name__ == "__main__":
    raise SystemExit(main())
