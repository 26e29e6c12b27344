"""The seed harness every trace fuzz family shares: seeded input streams, findings, modes.

A family supplies ``inputs(seed)`` (an endless, reproducible stream) and ``check(input)``
(raises on a bug; ``TraceFormatError`` is a clean refusal, not a bug). The harness finds the
first bad input of a seed, and in ``make fuzz`` mode tries random seeds until the time is up,
printing each new finding as ``seed S, input I`` so it can be replayed and kept as a
regression.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from simkube.trace import TraceFormatError

SLOW_INPUT_SECONDS = 2.0
SEED_ENV = "SIMKUBE_FUZZ_SEED"  # replay one seed
SECONDS_ENV = "SIMKUBE_FUZZ_SECONDS"  # search random seeds for this long (make fuzz)


@dataclass(frozen=True)
class Regression:
    input: int  # index of the input, in the seed's stream, that found the bug
    found: str


@dataclass(frozen=True)
class Bug:
    seed: int
    input: int
    problem: str  # the same for every input that hits the same bug, as far as can be told
    detail: str

    def __str__(self) -> str:
        return f"seed {self.seed}, input {self.input}: {self.problem}; {self.detail}"


@dataclass(frozen=True)
class Family:
    """One fuzz target: its input stream, the check each input must pass, how to show one."""

    inputs: Callable[[int], Iterator[Any]]
    check: Callable[[Any], None]
    describe: Callable[[Any], str]
    inputs_per_seed: int

    def first_bug(self, seed: int, start: int = 0, stop: int | None = None) -> Bug | None:
        """The first bad input of ``seed`` among ``start <= i < stop``, if any."""
        stop = self.inputs_per_seed if stop is None else stop
        for index, data in enumerate(self.inputs(seed)):
            if index >= stop:
                return None
            if index < start:
                continue
            started = time.monotonic()
            try:
                self.check(data)
            except TraceFormatError:
                pass
            except Exception as exc:  # any other exception is the finding
                return Bug(seed, index, f"{type(exc).__name__}: {exc}", self.describe(data))
            elapsed = time.monotonic() - started
            if elapsed >= SLOW_INPUT_SECONDS:
                return Bug(seed, index, f"slower than {SLOW_INPUT_SECONDS}s",
                           f"took {elapsed:.1f}s")
        raise AssertionError("unreachable: the input stream is endless")

    def search(self, seconds: float) -> None:
        """Random seeds until ``seconds`` pass; fails listing every distinct finding."""
        deadline = time.monotonic() + seconds
        seed_source = random.SystemRandom()
        bugs: dict[str, list[Bug]] = {}  # by problem: one bug is often hit by many seeds
        tried = 0
        while time.monotonic() < deadline:
            tried += 1
            bug = self.first_bug(seed_source.randrange(2**32))
            if bug is not None:
                if bug.problem not in bugs:
                    print(f"\nfuzz finding: {bug}", flush=True)  # seen live with pytest -s
                bugs.setdefault(bug.problem, []).append(bug)
        print(f"\nfuzzed {tried} random seeds in {seconds:.0f}s", flush=True)
        report = [f"{len(found)} seed(s), e.g. {found[0]}" for found in bugs.values()]
        assert not bugs, (f"{sum(map(len, bugs.values()))} of {tried} random seeds found "
                          f"{len(bugs)} problem(s); fix each, then add a seed of it to "
                          "REGRESSIONS:\n" + "\n".join(report))


def chosen_seed() -> int | None:
    return int(os.environ[SEED_ENV]) if SEED_ENV in os.environ else None


def search_seconds() -> float | None:
    return float(os.environ[SECONDS_ENV]) if SECONDS_ENV in os.environ else None


def assert_no_bug(bug: Bug | None, *, previously: str | None = None) -> None:
    suffix = f" (previously: {previously})" if previously else ""
    assert bug is None, f"{bug}{suffix}"
