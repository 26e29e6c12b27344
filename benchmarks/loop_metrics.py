"""CA's and sk-cloudprov's Prometheus figures over a window, per CA loop.

``benchmarks/autoscaler_loop.py`` reads CA's ``cluster_autoscaler_function_duration_seconds``,
sk-cloudprov's ``grpc_server_*`` metrics and, where CA talks to sk-cloudprov-front, the
front's ``sk_cloudprov_front_*`` counters before and after a window and turns the differences
into per-loop figures; the arithmetic lives here so that it is tested alone.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

WINDOW = 60.0
WARM_LOOPS = 3
TIMEOUT = 300.0
Samples = dict[tuple[str, ...], float]  # (metric name, function or method, code, le) -> value


def scrape(url: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=30).text):
        for sample in family.samples:
            labels = sample.labels
            key = (sample.name, labels.get("function") or labels.get("method") or "",
                   labels.get("code") or "", labels.get("le") or "")
            found[key] = sample.value
    return found


def delta(before: Samples, after: Samples, name: str, label: str, *, code: str = "",
           le: str = "") -> float:
    key = (name, label, code, le)
    return after.get(key, 0.0) - before.get(key, 0.0)


def loops_made(url: str) -> float:
    return scrape(url).get(
        ("cluster_autoscaler_function_duration_seconds_count", "main", "", ""), 0.0)


def wait_for(check: Any, what: str, *, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"CA exited with {process.returncode} before {what}")
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise TimeoutError(f"{what} within {TIMEOUT:.0f}s")


def window(ca_url: str, others: tuple[str, ...] = (), *,
           process: subprocess.Popen[bytes] | None = None,
           ) -> tuple[Samples, Samples, list[Samples], list[Samples]]:
    """CA's and the ``others``' metrics before and after WINDOW seconds, starting once CA has
    made WARM_LOOPS loops."""
    wait_for(lambda: loops_made(ca_url) >= WARM_LOOPS, f"{WARM_LOOPS} CA loops", process=process)
    ca_before, before = scrape(ca_url), [scrape(url) for url in others]
    time.sleep(WINDOW)
    return ca_before, scrape(ca_url), before, [scrape(url) for url in others]


def functions(before: Samples, after: Samples, *, nodes: int, provider: str) -> dict[str, Any]:
    name = "cluster_autoscaler_function_duration_seconds"
    loops = delta(before, after, f"{name}_count", "main")
    functions = sorted({key[1] for key in after if key[0] == f"{name}_sum"})
    per_loop = {f: round(delta(before, after, f"{name}_sum", f) / loops, 4)
                for f in functions if loops and delta(before, after, f"{name}_count", f)}
    bounds = sorted({key[3] for key in after if key[0] == f"{name}_bucket" and key[1] == "main"},
                    key=float)

    def quantile(fraction: float) -> float | None:
        for bound in bounds:
            if delta(before, after, f"{name}_bucket", "main", le=bound) >= fraction * loops:
                return float(bound)
        return None
    return {"figure": "autoscaler_loop.functions", "provider": provider, "nodes": nodes,
            "loops": int(loops), "main_p50_le": quantile(0.5), "main_p90_le": quantile(0.9),
            "seconds_per_loop": per_loop}


def rpcs(before: Samples, after: Samples, *, loops: int, nodes: int) -> dict[str, Any]:
    calls: dict[str, float] = {}
    for key in after:
        if key[0] == "grpc_server_handled_total":
            calls[key[1]] = calls.get(key[1], 0.0) + delta(before, after, key[0], key[1],
                                                                  code=key[2])
    total = "grpc_server_handling_seconds"
    return {"figure": "autoscaler_loop.rpcs", "provider": "sk-cloudprov", "nodes": nodes,
            "loops": loops,
            "calls_per_loop": {m: round(c / loops, 1) for m, c in sorted(calls.items()) if c},
            "server_ms_mean": {m: round(1000 * delta(before, after, f"{total}_sum", m) / c, 3)
                               for m, c in sorted(calls.items()) if c}}


def _per_method(before: Samples, after: Samples, name: str) -> dict[str, float]:
    """A counter's increase per method label, its status codes added up."""
    totals: dict[str, float] = {}
    for key in after:
        if key[0] == name:
            totals[key[1]] = totals.get(key[1], 0.0) + delta(before, after, name, key[1],
                                                             code=key[2])
    return totals


def front(before: Samples, after: Samples, *, loops: int, nodes: int) -> dict[str, Any]:
    """sk-cloudprov-front's answers per loop: from its cache, or forwarded to sk-cloudprov
    (with the mean time the front waited for those)."""
    prefix = "sk_cloudprov_front"
    hits = _per_method(before, after, f"{prefix}_cache_hits_total")
    forwards = _per_method(before, after, f"{prefix}_forwards_total")
    waited = f"{prefix}_upstream_seconds"
    return {"figure": "autoscaler_loop.front", "nodes": nodes, "loops": loops,
            "hits_per_loop": {m: round(c / loops, 1) for m, c in sorted(hits.items()) if c},
            "forwards_per_loop": {m: round(c / loops, 1)
                                  for m, c in sorted(forwards.items()) if c},
            "upstream_ms_mean": {m: round(1000 * delta(before, after, f"{waited}_sum", m) / c, 3)
                                 for m, c in sorted(forwards.items()) if c}}
