"""Fuzz family for the recorded-usage section: hostile USAGE records in otherwise good traces.

The readers' family (``test_fuzz_readers``) breaks framing; this one keeps the framing and
the objects sound and attacks what a USAGE record holds: wrong types, negative, huge and
fractional values, samples out of order or after the trace, pods of zero, unknown and
duplicated workloads, odd record shapes; and, for a share of the inputs, byte mutations of a
trace whose usage is good. On each input ``validate`` runs first (it must name every problem
without raising), then ``info``, loading, ``fix --auto``, the usage edits (scale load, drop,
window, time stretch) and ``convert``. Each must finish or refuse with ``TraceFormatError``;
anything else is a bug. And one rule is checked: an input that loads must validate without
``invalid-usage``, and one that validates without it must load.

Modes and seeds work as in ``test_fuzz_readers`` (``fuzzing.py``).
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simkube.trace import TraceFormatError, open_trace_bytes
from simkube.trace.model.source import load
from simkube.trace.native.format import encode_header, envelope_of
from simkube.trace.tools.convert import write_converted
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import (
    DropUsage,
    ScaleLoad,
    TimePoint,
    TimeStretch,
    TimeWindow,
)
from simkube.trace.tools.findings import FindingCode
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.info import summarise
from simkube.trace.tools.validate import validate
from tests.unit.trace.conftest import HEADER, crafted, deployment, native_bytes, usage_trace
from tests.unit.trace.fuzzing import Family, assert_no_bug, chosen_seed, search_seconds
from tests.unit.trace.test_fuzz_readers import mutate, mutate_inside_compression

pytestmark = pytest.mark.unit
INPUTS_PER_SEED = 150
CORPUS = (1, 2, 3, 4, 5)
T0 = 1_700_000_000_000
HOSTILE: tuple[Any, ...] = (
    -1, 0, 1, 2**63 - 1, -(2**63), 2**64 - 1, 1.5, -0.0, float("nan"), float("inf"), "x", "100m",
    "", None, True, False, [], [1], {}, {"a": 1}, b"\x00",
)
KINDS = ("apps/v1.Deployment", "v1.Pod", "", "Deployment", "apps/v1.StatefulSet")
WORKLOADS = ("shop/web", "shop/ghost", "web", "/", "shop/", "a/b/c", "")


def _row(rng: random.Random, t_ms: int, *, hostile: bool) -> Any:
    row: list[Any] = [t_ms, rng.randint(1, 5), rng.randint(0, 4000), rng.randint(0, 2**33)]
    for _ in range(rng.choice((0, 0, 1, 2)) if hostile else 0):
        row[rng.randrange(4)] = rng.choice(HOSTILE)
    if hostile and rng.random() < 0.05:
        return rng.choice([row[:3], [*row, 1], rng.choice(HOSTILE)])
    return row


def _series(rng: random.Random) -> list[Any]:
    """Half the series are sound (so the paths that play usage run too), half hostile."""
    hostile = rng.random() < 0.5
    times = sorted(rng.sample(range(0, 60_001, 1000), rng.randint(0, 12)))
    if hostile and times and rng.random() < 0.2:
        rng.shuffle(times)  # out of order
    if hostile and times and rng.random() < 0.1:
        times.append(times[-1])  # a repeated instant
    if rng.random() < 0.1:
        times.append(rng.randint(60_001, 10**9))  # after the trace
    if not hostile:
        return [7, rng.choice(KINDS[:2]), "shop/web", 15_000,
                [_row(rng, t, hostile=False) for t in times]]
    record: list[Any] = [7, rng.choice(KINDS), rng.choice(WORKLOADS),
                         rng.choice((15_000, 15_000, 1, 0, -5, "15s", None)),
                         [_row(rng, t, hostile=True) for t in times]]
    if rng.random() < 0.05:
        record = record[:rng.randint(1, 4)]  # a record of the wrong shape
    return record


def _usage_trace(rng: random.Random) -> bytes:
    """A sound trace (a Deployment and a Pod over 60 s) with one to four hostile series."""
    objects = [envelope_of(deployment("web"), where="fuzz"), envelope_of(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}},
        where="fuzz")]
    usage = [_series(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.1:
        usage.append(usage[0])  # a workload recorded twice
    records = [[1, encode_header(HEADER)], [3, [[T0, objects, []], [T0 + 60_000, [], []]]],
               *usage, [6, 2, 0, 0, len(usage)]]
    return crafted(records, version=2)


def inputs(seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)  # noqa: S311  # reproducible fuzzing, not secrets
    good = native_bytes(usage_trace())
    while True:
        choice = rng.random()
        if choice < 0.7:
            yield _usage_trace(rng)
        elif choice < 0.85:
            yield mutate_inside_compression(good, rng)
        else:
            yield mutate(good, rng)


def check(data: bytes) -> None:
    source = open_trace_bytes(data, name="fuzz")
    findings = validate(source)  # first: it must judge usage a load would refuse
    summarise(source)
    invalid = any(finding.code is FindingCode.INVALID_USAGE for finding in findings)
    try:
        load(source)
    except TraceFormatError:
        if not invalid and not _objects_fail(source):
            raise AssertionError("the trace loads with an error validate did not "
                                 "report as invalid-usage") from None
    else:
        assert not invalid, "validate reported invalid usage in a trace that loads"
    fixed = apply_fixes(source, findings, choose_fixes(findings, requested={}, auto=True))
    with tempfile.TemporaryDirectory() as scratch:
        write_converted(fixed, source, Path(scratch) / "fixed.trace")
        for step in (ScaleLoad(factor=2.5), DropUsage(), TimeStretch(factor=0.3),
                     TimeWindow(start=TimePoint(offset_ms=20_000))):
            try:
                write_converted(apply_edits(source, [step]), source, Path(scratch) / "e.trace")
            except TraceFormatError:
                if not invalid:
                    raise
        if not invalid:
            fixed_source = open_trace_bytes((Path(scratch) / "fixed.trace").read_bytes())
            load(fixed_source)  # what fix --auto writes loads


def _objects_fail(source: Any) -> bool:
    """Whether the trace's framing or objects (not its usage) refuse to load."""
    try:
        for event in source.events():
            _ = event.applied, event.deleted
    except TraceFormatError:
        return True
    return False


def describe(data: bytes) -> str:
    return f"a native trace of {len(data)} bytes"


FAMILY = Family(inputs=inputs, check=check, describe=describe, inputs_per_seed=INPUTS_PER_SEED)


@pytest.mark.parametrize("seed", CORPUS)
def test_corpus_seed(seed: int) -> None:
    assert_no_bug(FAMILY.first_bug(seed))


def test_the_good_usage_trace_passes_every_step() -> None:
    check(native_bytes(usage_trace()))


# The opt-in modes are defined only when asked for: a skipped test fails the run.
if (SEED := chosen_seed()) is not None:
    def test_chosen_seed() -> None:
        assert_no_bug(FAMILY.first_bug(SEED))

if (SECONDS := search_seconds()) is not None:
    def test_random_seeds_until_time_is_up() -> None:
        FAMILY.search(SECONDS or 0.0)
