"""The Pareto frontier of a sweep's points on two figures, both to be minimised.

A sweep rarely has a best point: a cheaper configuration makes pods wait longer. What it can
say is which points are not beaten on both at once. Point *a* **dominates** *b* when *a* is
no worse on both figures and strictly better on at least one; the frontier is every point
no other point dominates. Two points with the same figures do not dominate each other, so
ties are both on the frontier. A point whose figure is missing (None: e.g. no pod was ever
scheduled, so there is no pending p90) or not a finite number cannot be compared; it is left
out of both sides, with a note saying so, rather than treated as zero (which would make it
look best) or infinity (which would hide it).

Pure and small on purpose: the report's decisions rest on it, and it is tested on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Candidate:
    key: int  # the point's index
    x: float | None  # e.g. cost
    y: float | None  # e.g. pending p90


@dataclass(frozen=True, kw_only=True)
class Frontier:
    front: tuple[int, ...]  # keys on the frontier, by x then y
    dominated: tuple[int, ...]  # keys of compared points some other point dominates
    excluded: tuple[int, ...]  # keys left out: a figure missing or not finite
    notes: tuple[str, ...] = ()


def _comparable(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """``a`` is no worse than ``b`` on both figures and better on one."""
    return a[0] <= b[0] and a[1] <= b[1] and (a[0] < b[0] or a[1] < b[1])


def frontier(candidates: Sequence[Candidate], *, x_name: str = "x",
             y_name: str = "y") -> Frontier:
    """The non-dominated candidates; the names only word the notes."""
    compared = {c.key: (c.x, c.y) for c in candidates
                if c.x is not None and c.y is not None and _comparable(c.x) and _comparable(c.y)}
    excluded = tuple(c.key for c in candidates if c.key not in compared)
    front = sorted((key for key, figures in compared.items()
                    if not any(dominates(other, figures) for other in compared.values())),
                   key=lambda key: (*compared[key], key))
    on_front = set(front)
    notes = tuple(f"point {c.key} left out of the {x_name} / {y_name} frontier: "
                  f"{_missing(c, x_name=x_name, y_name=y_name)}"
                  for c in candidates if c.key in excluded)
    return Frontier(front=tuple(front),
                    dominated=tuple(key for key in compared if key not in on_front),
                    excluded=excluded, notes=notes)


def _missing(candidate: Candidate, *, x_name: str, y_name: str) -> str:
    names = [name for name, value in ((x_name, candidate.x), (y_name, candidate.y))
             if not _comparable(value)]
    return f"no {' and no '.join(names)}"
