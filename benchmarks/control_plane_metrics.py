"""What the API server and the scheduler did in a measured window, from their own metrics.

A slow pod pipeline is either too much work (requests per pod: every write is stored, fanned
out to every watcher and, for pods, tracked field by field) or work done slowly (etcd, CPU).
The API server's ``apiserver_request_total`` says how many writes of each kind a window
took, ``apiserver_terminated_watchers_total`` how often it closed a watch whose reader fell
behind (a reader that then re-reads), and the etcd request histogram how long storage took;
the scheduler's own counters say how many attempts it made and how long binding waited.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

Key = tuple[str, ...]
Counters = dict[Key, float]
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def client_context(pki: Path) -> ssl.SSLContext:
    """The admin certificate, not verifying the server: the scheduler's serving certificate
    is self-signed on loopback."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return context


def counters(text: str, metric: str, labels: Iterable[str]) -> Counters:
    """Samples named ``metric`` summed by the values of ``labels``."""
    keys = tuple(labels)
    found: Counters = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == metric:
                key = tuple(sample.labels.get(k, "") for k in keys)
                found[key] = found.get(key, 0.0) + sample.value
    return found


def delta(before: Counters, after: Counters) -> Counters:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0)}


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    apiserver: str
    scheduler: str


def snapshot(*, apiserver_url: str, scheduler_url: str, context: ssl.SSLContext) -> Snapshot:
    def get(url: str) -> str:
        response = httpx.get(f"{url}/metrics", verify=context, timeout=60)
        response.raise_for_status()
        return response.text
    return Snapshot(apiserver=get(apiserver_url), scheduler=get(scheduler_url))


def window(before: Snapshot, after: Snapshot, *, pods: int) -> dict[str, Any]:
    """Writes by kind (and per pod of the window's ``pods``), closed watches by resource,
    etcd's mean latency by operation, the scheduler's attempts and its mean bind wait."""
    def change(text_of: str, metric: str, labels: tuple[str, ...]) -> Counters:
        return delta(counters(getattr(before, text_of), metric, labels),
                     counters(getattr(after, text_of), metric, labels))
    requests = change("apiserver", "apiserver_request_total",
                      ("verb", "resource", "subresource"))
    writes = {"/".join(part for part in key if part): int(count)
              for key, count in sorted(requests.items(), key=lambda kv: -kv[1])
              if key[0] in WRITE_VERBS and count >= 1}
    terminated = change("apiserver", "apiserver_terminated_watchers_total", ("resource",))
    etcd_sum = change("apiserver", "etcd_request_duration_seconds_sum", ("operation",))
    etcd_count = change("apiserver", "etcd_request_duration_seconds_count", ("operation",))
    attempts = change("scheduler", "scheduler_schedule_attempts_total", ("result",))
    binds = change("scheduler", "scheduler_framework_extension_point_duration_seconds_sum",
                   ("extension_point",))
    bind_count = change("scheduler",
                        "scheduler_framework_extension_point_duration_seconds_count",
                        ("extension_point",))
    return {
        "writes": writes,
        "writes_per_pod": {name: round(count / pods, 2) for name, count in writes.items()
                           if count >= pods / 10},
        "terminated_watches": {key[0]: int(count) for key, count in terminated.items()},
        "etcd_mean_ms": {key[0]: round(1000 * etcd_sum[key] / count, 1)
                         for key, count in etcd_count.items() if count >= 100},
        "scheduler_attempts": {key[0]: int(count) for key, count in attempts.items()},
        "scheduler_bind_mean_ms": _mean_ms(binds.get(("Bind",)), bind_count.get(("Bind",))),
    }


def _mean_ms(total: float | None, count: float | None) -> float | None:
    return None if not total or not count else round(1000 * total / count, 1)
