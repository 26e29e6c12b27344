"""What tracked pods use, summed per workload, in bounded memory until an export asks for it.

A HorizontalPodAutoscaler acts on a workload's average, and replayed pods get new names, so
the tracer keeps one series per workload root (the outermost tracked object of a pod's owner
chain: the Deployment, not its ReplicaSet; a bare Pod is its own root), each sample the sum
over the pods that reported at that moment and their count. Every series is a ring of at most
``max_samples`` samples and at most ``max_series`` workloads are kept, so memory is bounded
whatever the cluster does (about 40 bytes a sample: a day at 15 s is 230 KB per workload).
Samples live only in memory: a restarted tracer starts its series afresh.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from simkube.core.durations import parse_duration
from simkube.core.errors import ConfigError
from simkube.core.logs import get_logger
from simkube.core.quantities import parse_quantity
from simkube.trace import ObjectRef, UsageSample, WorkloadUsage
from simkube.tracer.config import UsageSettings
from simkube.tracer.segments import Ancestors

log = get_logger(__name__)
Totals = tuple[int, int, int]  # pods, cpu millicores, memory bytes
_Row = tuple[int, int, int, int]  # ts_ms, pods, cpu millicores, memory bytes


def pod_usage(metrics: Any) -> tuple[int, int] | None:
    """A PodMetrics object's CPU (millicores) and memory (bytes), summed over its containers;
    ``None`` when it reports none or something unreadable (skipped, never guessed)."""
    containers = metrics.get("containers") if isinstance(metrics, dict) else None
    if not isinstance(containers, list) or not containers:
        return None
    cpu, memory = Decimal(0), Decimal(0)
    try:
        for container in containers:
            usage = container.get("usage") if isinstance(container, dict) else None
            if not isinstance(usage, dict):
                return None
            cpu += parse_quantity(usage.get("cpu", 0))
            memory += parse_quantity(usage.get("memory", 0))
    except ConfigError:
        return None
    if cpu < 0 or memory < 0:
        return None
    return int((cpu * 1000).to_integral_value()), int(memory.to_integral_value())


def reading_window(metrics: Any) -> tuple[int, int] | None:
    """The window a PodMetrics measured: (its end, Unix ms; its length, ms), read from its
    ``timestamp`` and ``window``; ``None`` when either is missing or unreadable.

    The end is when metrics-server took the reading, and so the moment from which the
    source's HPA could act on it: a sample stamped there, replayed through a metrics-server
    that scrapes far faster than the source's (a run's own ``metric-resolution``, 2 s of
    trace), reaches the replay's HPA when the recorded one reached the source's, one metrics
    lag, not two. Stamped with the time the tracer read it, every change replayed up to a
    sampling period late, on top of a second metrics-server lag: at 1x each HPA decision fell
    one sync later (docs/fidelity.md)."""
    if not isinstance(metrics, dict):
        return None
    stamp, window = metrics.get("timestamp"), metrics.get("window")
    if not isinstance(stamp, str) or not isinstance(window, str):
        return None
    try:
        end = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        span_ms = parse_duration(window, field="PodMetrics window", allow_zero=True)
    except (ValueError, ConfigError):
        return None
    if end.tzinfo is None:
        return None
    return round(end.timestamp() * 1000), span_ms


def add_pod(totals: dict[ObjectRef, Totals], root: ObjectRef, usage: tuple[int, int]) -> None:
    """Count one pod's CPU and memory into its workload's totals of this round."""
    pods, cpu, memory = totals.get(root, (0, 0, 0))
    totals[root] = (pods + 1, cpu + usage[0], memory + usage[1])


def workload_root(pod: ObjectRef, ancestors: Ancestors,
                  tracked: Callable[[ObjectRef], bool]) -> ObjectRef | None:
    """The outermost tracked object of ``pod``'s chain (the pod itself counts), if any."""
    return next((ref for ref in reversed((pod, *ancestors)) if tracked(ref)), None)


class UsageBook:
    """The series of every workload, each a bounded ring of (ts_ms, pods, cpu, memory)."""

    def __init__(self, settings: UsageSettings) -> None:
        self.settings = settings
        self._series: dict[ObjectRef, deque[_Row]] = {}
        self._full_logged = False

    def __len__(self) -> int:
        return len(self._series)

    def record(self, ts_ms: int, totals: dict[ObjectRef, Totals]) -> None:
        """One sampling round: each workload's totals at ``ts_ms`` (Unix ms, event clock)."""
        for ref, (pods, cpu, memory) in totals.items():
            series = self._series.get(ref)
            if series is None:
                if len(self._series) >= self.settings.max_series:
                    if not self._full_logged:
                        log.warning("usage: too many workloads, new ones are not sampled",
                                    limit=self.settings.max_series)
                        self._full_logged = True
                    continue
                series = self._series[ref] = deque(maxlen=self.settings.max_samples)
            if series and series[-1][0] >= ts_ms:
                continue  # the clock did not advance: keep the series strictly increasing
            series.append((ts_ms, pods, cpu, memory))

    def count_in(self, root: ObjectRef, *, since_ms: int, before_ms: int) -> None:
        """Count one more pod in ``root``'s samples stamped in [since, before), at their
        average per reporting pod: a pod that had started by then but had no reading yet
        (metrics-server has a pod's first rate only at its second scrape)."""
        series = self._series.get(root)
        index = len(series) if series is not None else 0
        while series is not None and index > 0 and series[index - 1][0] >= since_ms:
            index -= 1
            ts, pods, cpu, memory = series[index]
            if ts < before_ms and pods > 0:
                series[index] = (ts, pods + 1, cpu + round(cpu / pods),
                                 memory + round(memory / pods))

    def window(self, *, origin_ms: int, end_ms: int,
               keep: Callable[[ObjectRef], bool]) -> list[WorkloadUsage]:
        """Series of the workloads ``keep`` admits, samples in [origin, end] re-timed to trace
        time (ms since ``origin_ms``, the trace's first event)."""
        found = []
        for ref, series in sorted(self._series.items(), key=lambda item: str(item[0])):
            if not keep(ref):
                continue
            samples = tuple(UsageSample(t_ms=ts - origin_ms, pods=pods, cpu_millicores=cpu,
                                        memory_bytes=memory)
                            for ts, pods, cpu, memory in series if origin_ms <= ts <= end_ms)
            if samples:
                found.append(WorkloadUsage(kind=ref.kind_key, namespace=ref.namespace,
                                           name=ref.name, period_ms=self.settings.period_ms,
                                           samples=samples))
        return found
