"""What the recorded pods used, per workload: the load a replay feeds to metrics and the HPA.

Samples are kept per workload root (a Deployment, a StatefulSet, a bare Pod), not per pod:
replayed pods get new names from their controllers, so a per-pod series could not be matched
to a replayed pod, and an HPA acts on a workload's average anyway. Each sample is the SUM over
the workload's pods that reported metrics at that moment, with their count, so a replay can
spread the total over however many pods it runs. ``t_ms`` is trace time: milliseconds since
the trace's first event (the same clock as the events, shifted to start at zero).

A series read from a file is ``RecordedUsage`` first: its values exactly as written, so
``validate`` can report every problem as a finding; ``checked`` turns it into the validated
``WorkloadUsage`` (or raises a ``TraceFormatError`` naming the first problem).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simkube.trace.errors import TraceFormatError
from simkube.trace.model.fields import json_kind

SAMPLE_FIELDS = ("t_ms", "pods", "cpu_millicores", "memory_bytes")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSample:
    """A workload's total usage at one moment, over ``pods`` pods."""

    t_ms: int  # trace time: ms since the trace's first event
    pods: int  # how many of the workload's pods reported metrics at t
    cpu_millicores: int  # sum over those pods (sum of their containers)
    memory_bytes: int  # sum over those pods

    def __post_init__(self) -> None:
        # Inline (a day of a thousand workloads is millions of samples); explained on failure.
        t_ms, pods, cpu, memory = self.t_ms, self.pods, self.cpu_millicores, self.memory_bytes
        if (type(t_ms) is int and type(pods) is int and type(cpu) is int
                and type(memory) is int and t_ms >= 0 and pods >= 1 and cpu >= 0
                and memory >= 0):
            return
        problem = sample_problem([t_ms, pods, cpu, memory])
        if problem is not None:
            raise TraceFormatError(problem[1], where=f"usage sample {problem[0]}")

    def scaled(self, factor: float) -> UsageSample:
        """The same moment with ``factor`` times the load (same pods)."""
        return UsageSample(t_ms=self.t_ms, pods=self.pods,
                           cpu_millicores=round(self.cpu_millicores * factor),
                           memory_bytes=round(self.memory_bytes * factor))


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadUsage:
    """One workload's recorded usage: samples every ``period_ms``, in increasing time."""

    kind: str  # kind key of the workload root, e.g. "apps/v1.Deployment" or "v1.Pod"
    namespace: str  # "" for cluster-scoped roots
    name: str
    period_ms: int  # the tracer's sampling period
    samples: tuple[UsageSample, ...] = ()

    def __post_init__(self) -> None:
        problems = series_problems(kind=self.kind, workload=self.workload,
                                   period_ms=self.period_ms, rows=[])
        if not self.name:
            problems.append(("name", "the workload's name is empty"))
        last = None
        for index, sample in enumerate(self.samples):
            if last is not None and sample.t_ms <= last:
                problems.append((f"samples[{index}].t_ms", _order_message(sample.t_ms, last)))
                break
            last = sample.t_ms
        if problems:
            raise TraceFormatError(problems[0][1], where=f"usage of {self.kind} "
                                   f"{self.workload}, {problems[0][0]}")

    @property
    def workload(self) -> str:
        """``ns/name`` (``name`` when cluster-scoped), the way lifecycles name owners."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def at(self, t_ms: int) -> UsageSample | None:
        """The latest sample at or before ``t_ms`` (step-hold), or ``None`` before the first."""
        low, high = 0, len(self.samples)
        while low < high:
            middle = (low + high) // 2
            if self.samples[middle].t_ms <= t_ms:
                low = middle + 1
            else:
                high = middle
        return self.samples[low - 1] if low else None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedUsage:
    """A usage series as the file holds it: shape checked by the reader, values not yet."""

    kind: str
    workload: str  # "ns/name"
    period_ms: Any
    rows: tuple[Any, ...]  # each should be [t_ms, pods, cpu_millicores, memory_bytes]

    @classmethod
    def of(cls, usage: WorkloadUsage) -> RecordedUsage:
        return cls(kind=usage.kind, workload=usage.workload, period_ms=usage.period_ms,
                   rows=tuple([s.t_ms, s.pods, s.cpu_millicores, s.memory_bytes]
                              for s in usage.samples))

    @property
    def label(self) -> str:
        return f"{self.kind} {self.workload}"

    def problems(self) -> list[tuple[str, str]]:
        """Every problem as (field path, message); empty when ``checked`` would succeed."""
        return series_problems(kind=self.kind, workload=self.workload,
                               period_ms=self.period_ms, rows=self.rows)

    def checked(self) -> WorkloadUsage:
        """The validated series, or a ``TraceFormatError`` naming its first problem."""
        namespace, _, name = self.workload.rpartition("/")
        try:
            samples = tuple(UsageSample(t_ms=t_ms, pods=pods, cpu_millicores=cpu,
                                        memory_bytes=memory)
                            for t_ms, pods, cpu, memory in self.rows)
            return WorkloadUsage(kind=self.kind, namespace=namespace, name=name,
                                 period_ms=self.period_ms, samples=samples)
        except (TraceFormatError, TypeError, ValueError):
            pass  # something is wrong: say exactly what, from the values as written
        problems = self.problems()
        path, message = problems[0] if problems else ("", "the series is malformed")
        raise TraceFormatError(message, where=f"usage of {self.label}, {path}",
                               hint="`skctl trace validate` lists every problem")


def sample_problem(row: Any) -> tuple[str, str] | None:
    """The first thing wrong with one sample row, as (field, message), or ``None``."""
    if not isinstance(row, list | tuple) or len(row) != len(SAMPLE_FIELDS):
        return "", (f"a sample is [t_ms, pods, cpu_millicores, memory_bytes], found "
                    f"{json_kind(row)}" + (f" of {len(row)}" if isinstance(row, list) else ""))
    for name, value in zip(SAMPLE_FIELDS, row, strict=True):
        if not _is_int(value):
            return name, f"{name} is {json_kind(value)}, not an integer"
        if value < 0:
            return name, f"{name} is negative ({value})"
    if row[1] < 1:
        return "pods", "pods is 0: a sample covers at least one pod"
    return None


def series_problems(*, kind: Any, workload: Any, period_ms: Any,
                    rows: Any) -> list[tuple[str, str]]:
    """Every problem of one series, each as (field path, message)."""
    problems = []
    if not isinstance(kind, str) or not kind:
        problems.append(("kind", "the workload's kind must be a non-empty string"))
    if not isinstance(workload, str) or not workload.rpartition("/")[2]:
        problems.append(("workload", "the workload must be a non-empty 'ns/name' string"))
    if not _is_int(period_ms) or period_ms < 1:
        problems.append(("period_ms", f"period_ms must be a positive integer, found "
                         f"{period_ms!r}"))
    last = None
    for index, row in enumerate(rows):
        problem = sample_problem(row)
        if problem is not None:
            field = f".{problem[0]}" if problem[0] else ""
            problems.append((f"samples[{index}]{field}", problem[1]))
            continue
        if last is not None and row[0] <= last:
            problems.append((f"samples[{index}].t_ms", _order_message(row[0], last)))
        last = row[0] if last is None else max(last, row[0])
    return problems


def _order_message(t_ms: int, last: int) -> str:
    return f"t_ms {t_ms} is not after the previous sample's {last} (samples are in time order)"
