"""The KWOK watchdog: pods bound to a fake node that KWOK never started are nudged.

KWOK 0.8.0 can leave a pod bound to a brand-new fake Node in Pending for good (docs/kwok.md);
nothing else would start it, and the scheduler and Cluster Autoscaler take a bound pod as
placed. So every environment runs this small process next to KWOK (``env up`` starts it with
KWOK, whatever else runs; deploy/kwok/ has it as a sidecar of KWOK's Deployment). Every
``interval`` it lists the Pending pods bound to a node (one field-selected list; they are few),
and each one whose node KWOK manages and which has waited past ``grace`` seconds plus the
longest startup delay its own annotations allow is nudged: an annotation update, which KWOK
takes as a new version of the pod (``core.podstart``, the same nudge the results recorder
uses during a run). Each nudge is logged and counted (``simkube_kwok_watchdog_nudges_total``),
and a pod is nudged again only a grace after its last nudge. Times are wall times, read from
the objects (``PodScheduled`` or, for pods created bound, ``creationTimestamp``) against this
machine's clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from simkube.core import podstart
from simkube.core.cli import run_command
from simkube.core.kubeapi import ApiError, KubeClient, list_all
from simkube.core.logs import configure_logging, get_logger
from simkube.core.serving import parse_address

log = get_logger(__name__)

DEFAULT_GRACE_S = 30.0
DEFAULT_INTERVAL_S = 5.0
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
FAKE_NODE_VALUE = "fake"
PENDING_BOUND = "spec.nodeName!=,status.phase=Pending"


def parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def bound_at(pod: Mapping[str, Any]) -> datetime | None:
    """When the pod was bound: the scheduler's ``PodScheduled`` time, else (a pod created with
    ``spec.nodeName``) its creation."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            scheduled = parse_time(condition.get("lastTransitionTime"))
            if scheduled is not None:
                return scheduled
    return parse_time((pod.get("metadata") or {}).get("creationTimestamp"))


@dataclass(frozen=True, slots=True)
class Unstarted:
    namespace: str
    name: str
    node: str
    waited_s: float   # since binding (or since the last nudge)
    allowed_s: float  # the grace plus the pod's own startup delay


def overdue(pods: Iterable[Mapping[str, Any]], *, now: datetime,
            grace_s: float) -> list[Unstarted]:
    """Pods bound to a node, still Pending, not being deleted, that have waited longer than
    ``grace_s`` plus their startup allowance since binding, and since their last nudge."""
    found = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        node = (pod.get("spec") or {}).get("nodeName")
        if (not node or metadata.get("deletionTimestamp")
                or (pod.get("status") or {}).get("phase", "Pending") != "Pending"):
            continue
        annotations = metadata.get("annotations") or {}
        since = bound_at(pod)
        if since is None:
            continue
        allowed = grace_s + podstart.startup_allowance_s(annotations)
        nudged = parse_time(annotations.get(podstart.NUDGE_ANNOTATION))
        if nudged is not None and nudged > since:
            since, allowed = nudged, grace_s  # a nudge answered at once, or not at all
        waited = (now - since).total_seconds()
        if waited > allowed:
            found.append(Unstarted(namespace=str(metadata.get("namespace")),
                                   name=str(metadata.get("name")), node=str(node),
                                   waited_s=waited, allowed_s=allowed))
    return found


def managed(node: Mapping[str, Any]) -> bool:
    """Whether KWOK plays this Node (and so its pods): our fake-node annotation."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return annotations.get(FAKE_NODE_ANNOTATION) == FAKE_NODE_VALUE


def rfc3339(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Watchdog:
    def __init__(self, *, kube: KubeClient, grace_s: float = DEFAULT_GRACE_S,
                 registry: CollectorRegistry | None = None) -> None:
        self._kube = kube
        self._grace_s = grace_s
        self.registry = registry or CollectorRegistry()
        self.nudges = Counter("simkube_kwok_watchdog_nudges", (
            "Pods bound to a KWOK node but not started in time, nudged so KWOK sees them "
            "again (outcome: nudged, or failed when the API server refused the patch)"),
            ["outcome"], registry=self.registry)
        self.sweeps = Counter("simkube_kwok_watchdog_sweeps",
                              "Sweeps of the Pending pods bound to a node",
                              ["outcome"], registry=self.registry)
        self.pending_bound = Gauge("simkube_kwok_watchdog_pending_bound_pods",
                                   "Pending pods bound to a node at the last sweep",
                                   registry=self.registry)

    async def _is_managed(self, node: str, known: dict[str, bool]) -> bool:
        if node not in known:
            try:
                known[node] = managed(await self._kube.request("GET", f"/api/v1/nodes/{node}"))
            except ApiError as exc:
                if exc.code != 404:
                    raise
                known[node] = False  # deleted: its pods go with it
        return known[node]

    async def sweep(self, *, now: datetime | None = None) -> list[Unstarted]:
        """One pass: list, pick the overdue pods on KWOK's nodes, nudge each; the ones nudged."""
        pods, _ = await list_all(self._kube, "/api/v1/pods",
                                 query={"fieldSelector": PENDING_BOUND})
        self.pending_bound.set(len(pods))
        moment = now or datetime.now(UTC)
        known: dict[str, bool] = {}
        nudged = []
        for pod in overdue(pods, now=moment, grace_s=self._grace_s):
            if not await self._is_managed(pod.node, known):
                continue
            where = {"pod": f"{pod.namespace}/{pod.name}", "node": pod.node,
                     "waited_s": round(pod.waited_s, 1), "allowed_s": round(pod.allowed_s, 1)}
            try:
                await podstart.nudge(self._kube, namespace=pod.namespace, name=pod.name,
                                     when=rfc3339(moment))
            except ApiError as exc:
                self.nudges.labels(outcome="failed").inc()
                log.warning("pod bound to a KWOK node but not started; nudging it failed",
                            **where, error=str(exc))
                continue
            self.nudges.labels(outcome="nudged").inc()
            log.warning("pod bound to a KWOK node but not started; nudged KWOK with an "
                        "update of it", **where)
            nudged.append(pod)
        return nudged

    async def run(self, *, interval_s: float = DEFAULT_INTERVAL_S) -> None:
        """Sweep every ``interval_s`` until cancelled; a failed sweep is logged and retried."""
        log.info("watching for pods KWOK did not start", grace_s=self._grace_s,
                 interval_s=interval_s)
        while True:
            try:
                await self.sweep()
                self.sweeps.labels(outcome="ok").inc()
            except ApiError as exc:
                self.sweeps.labels(outcome="failed").inc()
                log.warning("sweep failed; trying again", error=str(exc))
            await asyncio.sleep(interval_s)


async def serve(*, kubeconfig: Path | None, metrics_listen: str, grace_s: float,
                interval_s: float) -> None:
    host, port = parse_address(metrics_listen, flag="--metrics-listen")
    kube = await KubeClient.connect(kubeconfig=kubeconfig, pool_size=8, concurrency=8)
    try:
        watchdog = Watchdog(kube=kube, grace_s=grace_s)
        start_http_server(port, addr=host, registry=watchdog.registry)
        await watchdog.run(interval_s=interval_s)
    finally:
        await kube.close()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", type=click.Path(path_type=Path, dir_okay=False),
              envvar="KUBECONFIG",
              help="Cluster to watch (default: $KUBECONFIG, else the in-cluster account).")
@click.option("--metrics-listen", default="127.0.0.1:10248", show_default=True,
              help="Prometheus /metrics (and health) address, HOST:PORT.")
@click.option("--grace", "grace_s", type=click.FloatRange(min=1), default=DEFAULT_GRACE_S,
              show_default=True,
              help="Seconds past its own startup delay a bound pod may stay Pending.")
@click.option("--interval", "interval_s", type=click.FloatRange(min=0.1),
              default=DEFAULT_INTERVAL_S, show_default=True, help="Seconds between sweeps.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--log-json/--log-console", default=None,
              help="Log format (default: JSON unless stderr is a terminal).")
def command(*, kubeconfig: Path | None, metrics_listen: str, grace_s: float,
            interval_s: float, log_level: str, log_json: bool | None) -> None:
    """Nudge pods bound to a KWOK node that KWOK has not started."""
    configure_logging(level=log_level, json_output=log_json)
    parse_address(metrics_listen, flag="--metrics-listen")
    asyncio.run(serve(kubeconfig=kubeconfig, metrics_listen=metrics_listen, grace_s=grace_s,
                      interval_s=interval_s))


def main() -> None:
    run_command(command)


if __name__ == "__main__":
    main()
