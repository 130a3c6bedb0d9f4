"""Import hygiene: reading results never drags in the runner, asyncssh or the CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import harness

READERS = [
    "harness",
    "harness.report.runs",
    "harness.report.grid",
    "harness.report.render",
    "harness.report.diff",
    "harness.results.store",
    "harness.evidence",
    "harness.evidence.source",
    "harness.evidence.openshell",
]
HEAVY = ("harness.runner", "asyncssh", "click", "harness.transport.ssh")
# The writers that do not draw; render holds the JSON writer.
WRITERS = [
    "harness.report.junit",
    "harness.report.markdown",
    "harness.report.html",
    "harness.report.grid",
    "harness.report.runs",
    "harness.report.render",
    "harness.report.diff",
    "harness.bisect.report",
]


def _loaded(module: str, packages: tuple[str, ...]) -> str:
    """Which of `packages` (or their submodules) a fresh interpreter has after
    importing `module`, comma-separated."""
    probe = (
        f"import sys, {module}; print(','.join(m for m in sys.modules"
        f" if any(m == p or m.startswith(p + '.') for p in {packages!r})))"
    )
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("module", READERS)
def test_readers_never_import_the_runner(module: str) -> None:
    """A report, diff or evidence read loads neither the runner nor asyncssh nor click."""
    loaded = _loaded(module, HEAVY)
    assert loaded == "", f"{module} imports {loaded}"


@pytest.mark.parametrize("module", WRITERS)
def test_writers_that_do_not_draw_never_load_rich(module: str) -> None:
    """JUnit, Markdown, HTML and JSON are written without rich: only the terminal draws."""
    loaded = _loaded(module, ("rich",))
    assert loaded == "", f"{module} imports {loaded}"


def test_package_root_holds_only_the_version() -> None:
    """`import harness` gives the version and nothing that would import the runner."""
    import harness

    assert harness.__all__ == ["__version__"]


def test_cli_verbs_never_import_one_another() -> None:
    """Each verb module imports only the app and shared helpers, never another verb."""
    import ast
    from pathlib import Path

    import harness.cli

    shared = {"harness.cli.app", "harness.cli.signals", "harness.cli"}
    folder = Path(harness.cli.__file__).parent
    for path in folder.glob("*.py"):
        if path.name in {"__init__.py", "app.py", "signals.py"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness.cli"):
                assert node.module in shared, f"{path.name} imports {node.module}"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run: at the top and inside functions, not under `if TYPE_CHECKING:`
    (only the type checker follows those)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        elif isinstance(child, ast.If) and ast.unparse(child.test).endswith("TYPE_CHECKING"):
            for branch in child.orelse:
                found += _runtime_imports(branch)
        else:
            found += _runtime_imports(child)
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from X import ...` names, relative ones resolved from `package`."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    return ".".join([*parts[: len(parts) - node.level + 1], *filter(None, [node.module])])


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at `root` and the package's modules it imports.

    `from pkg import sub` depends on `pkg.sub` alone: the package is already being
    imported (a submodule's parent always is), so its `__init__` need not be done.
    """
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in files}
                continue
            source = _absolute(node, package)
            subs = {f"{source}.{a.name}" for a in node.names} & files.keys()
            edges |= subs
            if source in files and len(subs) < len(node.names):
                edges.add(source)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as the path that closes it (`a -> b -> a`), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for target in sorted(graph[module]):
            if cycle := visit(target):
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        if cycle := visit(module):
            return cycle
    return None


def test_no_module_is_part_of_an_import_cycle() -> None:
    """Every harness module can be imported first: no import cycle, at the top or in a
    function (a cycle works only in one import order, and hides a missing boundary)."""
    graph = import_graph(Path(harness.__file__).parent)
    assert "harness.bisect.session" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_releases_serve_run_and_bisect_without_importing_either() -> None:
    """`harness.releases` sits below both verbs: it imports neither bisect nor the runner."""
    graph = import_graph(Path(harness.__file__).parent)
    for module, targets in graph.items():
        if module.startswith("harness.releases"):
            above = sorted(t for t in targets if t.startswith(("harness.bisect", "harness.runner")))
            assert above == [], f"{module} imports {above}"


def test_the_cycle_check_sees_function_level_imports(tmp_path: Path) -> None:
    """A cycle closed inside a function counts; one through TYPE_CHECKING or through
    `from pkg import submodule` does not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import A\n")
    (pkg / "a.py").write_text("from pkg import b\nA = 1\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n"
    )
    assert find_cycle(import_graph(pkg)) is None
    (pkg / "b.py").write_text("def later():\n    from . import a\n")
    assert find_cycle(import_graph(pkg)) == ["pkg.a", "pkg.b", "pkg.a"]


def _harness_imports(path: Path) -> list[ast.ImportFrom]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness")
    ]


def test_benchmarks_and_scripts_import_names_that_exist() -> None:
    """A module moved or split inside harness breaks bench/ and scripts/ only when they run
    (nightly, or the slow smoke test): every name they import from harness must exist now."""
    import importlib

    root = Path(harness.__file__).parent.parent
    missing = []
    for path in sorted([*root.glob("bench/*.py"), *root.glob("scripts/*.py")]):
        for node in _harness_imports(path):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
    assert missing == []
