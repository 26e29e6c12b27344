"""The layer table in docs/architecture.md is the law: every import between packages obeys it.

A table that only describes the code drifts the first time someone adds a convenient import;
this reads the table out of the page (the fenced block under *Layers: who may import whom*) and
fails naming each import it does not allow, so the page and the code change together. The
environment's rooms (``simkube.env``) get the same treatment from their own order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.test_imports import imports_of, modules

pytestmark = pytest.mark.unit
ARCHITECTURE = Path(__file__).parents[2] / "docs" / "architecture.md"
ARROW = "──▶"


def parse_table(text: str) -> dict[str, set[str]]:
    """``package → allowed targets`` from the page's layer block.

    A row is ``name ──▶ target · target …``; a row may hold two entries side by side, a
    line starting with ``·`` continues the left-hand row above, ``(…)`` is commentary and
    ``nothing of ours`` is the empty set.
    """
    block = text.split("## Layers: who may import whom", 1)[1].split("```", 2)[1]
    table: dict[str, set[str]] = {}
    last: str | None = None
    for raw in block.splitlines():
        line = re.sub(r"\([^)]*\)", "", raw).strip()
        if not line:
            continue
        if line.startswith("·") and last is not None:
            table[last] |= _targets(line)
            continue
        rows = re.findall(rf"([\w.]+)\s+{ARROW}\s+((?:(?!\S+\s+{ARROW}).)*)", line)
        for name, targets in rows:
            table[name] = _targets(targets)
        last = rows[0][0] if rows else last  # a continuation belongs to the left-hand row
    return table


def _targets(text: str) -> set[str]:
    if "nothing of ours" in text:
        return set()
    return {part.strip() for part in text.split("·") if part.strip()}


def allowed(target: str, entries: set[str]) -> bool:
    """``target`` (``simkube.x.y…``) is covered by an entry ``x`` or ``x.y`` (or a parent
    package of an allowed entry, which Python loads on the way)."""
    dotted = target.removeprefix("simkube.")
    return any(dotted == entry or dotted.startswith(f"{entry}.") or entry.startswith(f"{dotted}.")
               for entry in entries)


def violations(table: dict[str, set[str]]) -> list[str]:
    known = modules()
    wrong = []
    for name, path in sorted(known.items()):
        package = name.split(".")[1] if name.count(".") else ""
        if package in ("", "gen"):
            continue
        for target in sorted(imports_of(path, set(known))):
            other = target.split(".")[1] if target.count(".") else ""
            if other in (package, "", "gen"):
                continue
            if not allowed(target, table.get(package, set())):
                wrong.append(f"{name} imports {target}")
    return wrong


def test_the_table_parses_rows_side_by_side_continuations_and_comments() -> None:
    text = ("## Layers: who may import whom\n\n```\n"
            " a ──▶ b · c.d (why)      e ──▶ b\n"
            "       · f\n"
            " b ──▶ nothing of ours\n```\n")
    assert parse_table(text) == {"a": {"b", "c.d", "f"}, "e": {"b"}, "b": set()}


def test_an_entry_covers_its_submodules_and_the_packages_on_the_way() -> None:
    assert allowed("simkube.core.kubeapi.client", {"core"})
    assert allowed("simkube.env", {"env.retiming"})
    assert allowed("simkube.env.retiming", {"env.retiming"})
    assert not allowed("simkube.env.lifecycle", {"env.retiming"})


def test_every_package_has_a_row() -> None:
    table = parse_table(ARCHITECTURE.read_text())
    packages = {name.split(".")[1] for name in modules() if name.count(".")} - {"gen"}
    assert sorted(packages - set(table)) == []


def test_every_import_between_packages_is_in_the_table() -> None:
    assert violations(parse_table(ARCHITECTURE.read_text())) == []


# simkube.env: a base, four rooms, and the modules on top that act on a whole environment.
# A room may import the base and the rooms before it in this order.
ENV_ROOMS = ("toolchain", "controlplane", "services", "autoscalers")
ENV_BASE = {"paths", "ports", "processes", "state", "health", "grpcprobe", "pacing"}


def _env_place(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["simkube", "env"] or len(parts) < 3:
        return None
    if parts[2] in ENV_ROOMS:
        return parts[2]
    return "base" if parts[2] in ENV_BASE else "top"


def test_the_env_rooms_import_only_downwards() -> None:
    order = ["base", *ENV_ROOMS, "top"]
    known = modules()
    wrong = []
    for name, path in sorted(known.items()):
        place = _env_place(name)
        if place is None:
            continue
        for target in imports_of(path, set(known)):
            other = _env_place(target)
            if other is not None and other != place and order.index(other) > order.index(place):
                wrong.append(f"{name} ({place}) imports {target} ({other})")
    assert wrong == []
