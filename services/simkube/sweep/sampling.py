"""Which combinations of the axes' values a sweep runs: all of them, or a seeded random few.

A grid of four axes of five values is 625 points, days of replays; ``random`` draws a budget
of distinct points from that grid instead, with a seed, so the same file always plans the
same points (a resumed sweep must find its points where it left them). Points keep the
grid's order whichever way they were chosen, so a point's index is stable and readable.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.core.errors import ConfigError

DEFAULT_SEED = 1


class Method(StrEnum):
    GRID = "grid"  # every combination
    RANDOM = "random"  # ``points`` distinct combinations drawn with ``seed``


@dataclass(frozen=True, kw_only=True)
class Sampling:
    method: Method = Method.GRID
    points: int | None = None  # random only
    seed: int = DEFAULT_SEED


def parse_sampling(raw: Any) -> Sampling:
    """``grid`` (or absent), or ``{method: random, points: N, seed: S}``."""
    if raw is None or raw == Method.GRID.value:
        return Sampling()
    if not isinstance(raw, dict):
        raise ConfigError(f"sampling {raw!r} must be 'grid' or "
                          "{method: random, points: N, seed: S}")
    unknown = sorted(str(key) for key in raw if key not in ("method", "points", "seed"))
    if unknown:
        raise ConfigError(f"sampling: unknown field(s) {', '.join(unknown)}; "
                          "allowed: method, points, seed")
    methods = [method.value for method in Method]
    if raw.get("method", Method.GRID.value) not in methods:
        raise ConfigError(f"sampling.method {raw.get('method')!r} is not one of "
                          f"{', '.join(methods)}")
    method = Method(raw.get("method", Method.GRID.value))
    if method is Method.GRID:
        if "points" in raw or "seed" in raw:
            raise ConfigError("sampling.points and sampling.seed need method: random")
        return Sampling()
    points, seed = raw.get("points"), raw.get("seed", DEFAULT_SEED)
    if type(points) is not int or points < 1:
        raise ConfigError(f"sampling.points {points!r} must be a whole number, 1 or more")
    if type(seed) is not int or seed < 0:
        raise ConfigError(f"sampling.seed {seed!r} must be a whole number, 0 or more")
    return Sampling(method=method, points=points, seed=seed)


def choose(sizes: Sequence[int], sampling: Sampling) -> list[tuple[int, ...]]:
    """The chosen combinations as value indices per axis, in grid order (first axis slowest)."""
    total = math.prod(sizes)
    if sampling.method is Method.GRID:
        return [_decode(number, sizes) for number in range(total)]
    budget = sampling.points or 0
    if budget > total:
        raise ConfigError(f"sampling.points {budget} is more than the {total} points of the "
                          "grid", hint="use sampling: grid to run them all")
    drawn = random.Random(sampling.seed).sample(range(total), budget)  # noqa: S311  # not crypto
    return [_decode(number, sizes) for number in sorted(drawn)]


def _decode(number: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """The ``number``-th combination of the grid (mixed radix, last axis fastest)."""
    indices = []
    for size in reversed(sizes):
        number, index = divmod(number, size)
        indices.append(index)
    return tuple(reversed(indices))
