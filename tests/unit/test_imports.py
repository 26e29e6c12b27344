"""The package's imports form no circle, type-only and function-level imports included.

Layers import one way (docs/architecture.md); a circle — even one hidden behind
``TYPE_CHECKING`` or inside a function — means two modules that cannot be understood, tested
or moved apart, so this walks every module's syntax tree and fails naming the circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
PACKAGE = Path(__file__).parents[2] / "services" / "simkube"
GENERATED = PACKAGE / "gen"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")
            if GENERATED not in path.parents}


def imports_of(path: Path, known: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found.update(name for name in names if name in known)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_circles() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back() -> None:
    known = modules()
    names = set(known)
    graph = {name: imports_of(path, names) - {name} - _packages_of(name)
             for name, path in known.items()}
    assert circles(graph) == []


def _packages_of(name: str) -> set[str]:
    """A module's own parent packages: importing them is how Python loads it, not a circle."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


# The trace package's rooms (services/simkube/trace/__init__.py): what each may import of it.
TRACE_ROOMS = {
    "model": {"model"},
    "native": {"model", "native"},
    "simkube_v2": {"model", "simkube_v2"},
    "tools": {"model", "tools"},
}
TRACE_BASE = {"simkube.trace.errors", "simkube.trace.limits", "simkube.trace.encoding"}
# Above the formats: only the tools may open and write files by path.
TRACE_FILES = {"simkube.trace.detect", "simkube.trace.files"}


def _trace_room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["simkube", "trace"] or len(parts) < 4:
        return None
    return parts[2]


def test_the_trace_rooms_import_only_downwards() -> None:
    known = modules()
    wrong = []
    for name, path in known.items():
        room = _trace_room(name)
        if room is None:
            continue
        for target in imports_of(path, set(known)):
            target_room = _trace_room(target)
            allowed = TRACE_BASE | (TRACE_FILES if room == "tools" else set())
            if target.startswith("simkube.trace") and target not in allowed and (
                    target_room not in TRACE_ROOMS[room] and target != f"simkube.trace.{room}"):
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_other_packages_use_the_public_trace_api() -> None:
    """Outside the package only ``simkube.trace`` (and, for ``skctl trace``, its tools)."""
    known = modules()
    wrong = []
    for name, path in known.items():
        if name.startswith("simkube.trace"):
            continue
        for target in imports_of(path, set(known)):
            public = target == "simkube.trace" or target.startswith("simkube.trace.tools")
            if target.startswith("simkube.trace.") and not public and not (
                    target.rsplit(".", 1)[0] == "simkube.trace"
                    and target.rsplit(".", 1)[1] in _public_trace_names()):
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def _public_trace_names() -> set[str]:
    import simkube.trace  # noqa: PLC0415  # only this test needs the package loaded

    return set(simkube.trace.__all__)


def test_the_simulation_package_sits_on_core_alone() -> None:
    """``simulation`` is what skctl, sk-ctrl, sk-cloudprov and the recorder share about a
    Simulation, so it may import only ``core``; and ``core`` (the speed rule sk-driver uses
    too) and ``driver`` must not depend on the Simulation resource."""
    known = modules()
    wrong = []
    for name, path in known.items():
        layer = name.split(".")[1] if name.count(".") else ""
        for target in imports_of(path, set(known)):
            target_layer = target.split(".")[1] if target.count(".") else ""
            if layer == "simulation" and target_layer not in {"core", "simulation"}:
                wrong.append(f"{name} imports {target}")
            if layer in {"core", "driver"} and target_layer == "simulation":
                wrong.append(f"{name} imports {target}")
    assert wrong == []
