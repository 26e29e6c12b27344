"""Fuzz target for every trace reader: mutated real traces must fail cleanly or read fully.

Runs for ``SIMKUBE_FUZZ_SECONDS`` (default 8) per run of the unit suite; set it higher to fuzz
for longer, and ``SIMKUBE_FUZZ_SEED`` to replay a reported failure. Each input must either be
read completely (every object decoded) or fail with ``TraceFormatError``, quickly: any other
exception, or an input that takes seconds, is a bug.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

import pytest
import zstandard

from simkube.trace import TraceFormatError, open_trace_bytes, read_trace
from simkube.trace.info import summarise
from simkube.trace.native_format import PREAMBLE
from simkube.trace.source import load
from simkube.trace.validate import validate
from tests.unit.trace.conftest import SAMPLE_NAMES, SAMPLES, native_bytes, sample_trace

pytestmark = pytest.mark.unit
SECONDS = float(os.environ.get("SIMKUBE_FUZZ_SECONDS", "8"))
SLOW_INPUT_SECONDS = 2.0
INTERESTING = [b"\x00", b"\xff", b"\xc1", b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff",
               b"\xdb\x7f\xff\xff\xff", b"\x91" * 64, b"\xd4\x01\x02", b"\x7f\xff\xff\xff"]


def seeds() -> list[bytes]:
    found = [(SAMPLES / name).read_bytes() for name in SAMPLE_NAMES]
    found += [native_bytes(read_trace(SAMPLES / name)) for name in SAMPLE_NAMES]
    found.append(native_bytes(sample_trace()))
    return found


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
    body = zstandard.ZstdDecompressor().decompressobj().decompress(data[PREAMBLE.size:])
    return data[:PREAMBLE.size] + zstandard.ZstdCompressor().compress(mutate(body, rng))


def read_fully(data: bytes) -> None:
    """Read every object, then run the tools that walk them (what a user would do next)."""
    source = open_trace_bytes(data, name="fuzz")
    load(source)
    summarise(source)
    validate(source)


def fuzz(seconds: float, seed: int, target: Callable[[bytes], None]) -> int:
    rng = random.Random(seed)  # noqa: S311  # reproducible fuzzing, not secrets
    corpus = seeds()
    natives = [data for data in corpus if data.startswith(b"\x89SKT")]
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        choice = rng.random()
        if choice < 0.05:
            data = rng.randbytes(rng.randint(0, 256))
        elif choice < 0.35:
            data = mutate_inside_compression(rng.choice(natives), rng)
        else:
            data = mutate(rng.choice(corpus), rng)
        started = time.monotonic()
        try:
            target(data)
        except TraceFormatError:
            pass
        except Exception as exc:  # any other exception is the finding
            pytest.fail(f"seed {seed}, input {runs}: {type(exc).__name__}: {exc}; "
                        f"input starts {data[:64]!r} ({len(data)} bytes)")
        elapsed = time.monotonic() - started
        assert elapsed < SLOW_INPUT_SECONDS, f"seed {seed}, input {runs} took {elapsed:.1f}s"
        runs += 1
    return runs


def test_readers_survive_mutated_traces() -> None:
    seed = int(os.environ.get("SIMKUBE_FUZZ_SEED", str(time.time_ns() % 2**32)))
    runs = fuzz(SECONDS, seed, read_fully)
    assert runs > 50, f"only {runs} inputs in {SECONDS}s"


def test_random_bytes_are_refused() -> None:
    rng = random.Random(1)  # noqa: S311  # reproducible
    for size in (0, 1, 7, 12, 100, 5000):
        for prefix in (b"", b"\x89SKT\r\n\x1a\n\x00\x01\x00\x00", b"\x85", b"{"):
            with pytest.raises(TraceFormatError):
                read_fully(prefix + rng.randbytes(size))


def test_the_seeds_themselves_read_cleanly() -> None:
    for data in seeds():
        read_fully(data)
