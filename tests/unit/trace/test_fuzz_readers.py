"""Fuzz target for every trace reader: mutated real traces must fail cleanly or read fully.

Each input must either be read completely (every object decoded, then summarised, validated
and auto-fixed, as a user would) or fail with ``TraceFormatError``, within
``SLOW_INPUT_SECONDS``: any other exception, or an input that takes seconds, is a bug.

Inputs come from a seeded stream: a seed gives the same inputs in the same order on every
machine, and input ``i`` depends on the inputs before it (replaying it regenerates them,
without reading them).

Default run (``make test``), deterministic: each seed in ``CORPUS`` reads its first
``INPUTS_PER_SEED`` inputs, and each entry of ``REGRESSIONS`` replays the one input that
found a bug; a few seconds in all.

Opt-in modes, read from the environment:

- ``SIMKUBE_FUZZ_SECONDS=300`` (what ``make fuzz`` sets from ``FUZZ_SECONDS``) also fuzzes
  random seeds, ``INPUTS_PER_SEED`` inputs each, until the time is up, then fails listing
  every finding as ``seed S, input I``. Once it is fixed, add ``S: Regression(I, ...)`` to
  ``REGRESSIONS``.
- ``SIMKUBE_FUZZ_SEED=S`` reads the first ``INPUTS_PER_SEED`` inputs of seed ``S``, to
  replay a finding of ``make fuzz``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator

import pytest
import zstandard

from simkube.trace import TraceFormatError, open_trace_bytes, read_trace
from simkube.trace.model.source import load
from simkube.trace.native.format import PREAMBLE
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.info import summarise
from simkube.trace.tools.validate import validate
from tests.unit.trace.conftest import SAMPLE_NAMES, SAMPLES, native_bytes, sample_trace
from tests.unit.trace.fuzzing import (
    Family,
    Regression,
    assert_no_bug,
    chosen_seed,
    search_seconds,
)

pytestmark = pytest.mark.unit
# About 170 mutations of each sample trace per seed; the corpus and the regressions take
# about 3 s together on a loaded 2-core machine. Fuzz-mode seeds run the same count, so what
# it reports sits early in a seed's stream and is cheap to replay.
INPUTS_PER_SEED = 1500
CORPUS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)  # arbitrary: only their being fixed matters


# Seeds that found bugs, replayed on every run so the bugs stay fixed. 922428914 came from the
# old time-bounded fuzzing, hence its deep input (regenerating up to it takes about 1.5 s).
REGRESSIONS = {
    922428914: Regression(114_445, "validate: containerPort [80] (a list) crashed the "
                          "duplicate-port check with TypeError: unhashable type: 'list'"),
}
INTERESTING = [b"\x00", b"\xff", b"\xc1", b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff",
               b"\xdb\x7f\xff\xff\xff", b"\x91" * 64, b"\xd4\x01\x02", b"\x7f\xff\xff\xff"]


@functools.cache
def starting_traces() -> tuple[bytes, ...]:
    """The traces every input is mutated from."""
    found = [(SAMPLES / name).read_bytes() for name in SAMPLE_NAMES]
    found += [native_bytes(read_trace(SAMPLES / name)) for name in SAMPLE_NAMES]
    found.append(native_bytes(sample_trace()))
    return tuple(found)


@functools.cache
def _native_body(data: bytes) -> bytes:
    # Decompressed once per starting trace: a replay may regenerate 100,000 inputs.
    return zstandard.ZstdDecompressor().decompressobj().decompress(data[PREAMBLE.size:])


def mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buffer:
            buffer.extend(rng.randbytes(rng.randint(1, 64)))
        position = rng.randrange(len(buffer))
        operation = rng.randrange(6)
        if operation == 0:
            buffer[position] ^= 1 << rng.randrange(8)
        elif operation == 1:
            buffer[position] = rng.randrange(256)
        elif operation == 2:
            del buffer[position:]
        elif operation == 3:
            buffer[position:position] = rng.choice(INTERESTING)
        elif operation == 4:
            end = min(len(buffer), position + rng.randint(1, 32))
            buffer[position:position] = buffer[position:end]
        else:
            del buffer[position:position + rng.randint(1, 16)]
    return bytes(buffer)


def mutate_inside_compression(data: bytes, rng: random.Random) -> bytes:
    """Mutate a native trace's decompressed records, so the decoders behind zstd get fuzzed."""
    body = mutate(_native_body(data), rng)
    return data[:PREAMBLE.size] + zstandard.ZstdCompressor().compress(body)


def inputs(seed: int) -> Iterator[bytes]:
    """The endless input stream of ``seed``. Any change to how it draws from ``rng`` changes
    every stream, and so what the corpus and the regressions test."""
    rng = random.Random(seed)  # noqa: S311  # reproducible fuzzing, not secrets
    corpus = starting_traces()
    natives = [data for data in corpus if data.startswith(b"\x89SKT")]
    while True:
        choice = rng.random()
        if choice < 0.05:
            yield rng.randbytes(rng.randint(0, 256))
        elif choice < 0.35:
            yield mutate_inside_compression(rng.choice(natives), rng)
        else:
            yield mutate(rng.choice(corpus), rng)


def read_fully(data: bytes) -> None:
    """Read every object, then run the tools that walk them (what a user would do next)."""
    source = open_trace_bytes(data, name="fuzz")
    load(source)
    summarise(source)
    findings = validate(source)
    fixed = apply_fixes(source, findings, choose_fixes(findings, requested={}, auto=True))
    list(fixed.initial_state)
    list(fixed.events)
    fixed.lifecycles()


def describe(data: bytes) -> str:
    return f"input starts {data[:64]!r} ({len(data)} bytes)"


FAMILY = Family(inputs=inputs, check=read_fully, describe=describe,
                inputs_per_seed=INPUTS_PER_SEED)


@pytest.mark.parametrize("seed", CORPUS)
def test_corpus_seed(seed: int) -> None:
    assert_no_bug(FAMILY.first_bug(seed))


@pytest.mark.parametrize("seed", sorted(REGRESSIONS))
def test_regression_seed(seed: int) -> None:
    index = REGRESSIONS[seed].input
    assert_no_bug(FAMILY.first_bug(seed, index, index + 1), previously=REGRESSIONS[seed].found)


# The opt-in modes are defined only when asked for: a skipped test fails the run.
if (SEED := chosen_seed()) is not None:
    def test_chosen_seed() -> None:
        assert_no_bug(FAMILY.first_bug(SEED))

if (SECONDS := search_seconds()) is not None:
    def test_random_seeds_until_time_is_up() -> None:
        FAMILY.search(SECONDS)


def test_random_bytes_are_refused() -> None:
    rng = random.Random(1)  # noqa: S311  # reproducible
    for size in (0, 1, 7, 12, 100, 5000):
        for prefix in (b"", b"\x89SKT\r\n\x1a\n\x00\x01\x00\x00", b"\x85", b"{"):
            with pytest.raises(TraceFormatError):
                read_fully(prefix + rng.randbytes(size))


def test_the_starting_traces_read_cleanly() -> None:
    for data in starting_traces():
        read_fully(data)
