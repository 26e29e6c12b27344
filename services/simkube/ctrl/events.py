"""Kubernetes Events about a Simulation, for ``kubectl describe sim`` and ``kubectl get events``.

A cluster-scoped object's Events live in the ``default`` namespace (where kubectl looks for
them) and point at the Simulation through ``involvedObject``. An Event that cannot be
written is logged and dropped: it must never stop or fail a simulation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simkube.core.kubeapi import EVENTS, ApiError, KubeClient
from simkube.core.logs import get_logger
from simkube.ctrl.names import COMPONENT, EVENTS_NAMESPACE
from simkube.ctrl.statuses import now
from simkube.simulation.names import API_VERSION, KIND

log = get_logger(__name__)
MAX_MESSAGE = 1024


def event_body(simulation: Mapping[str, Any], *, reason: str, message: str,
               warning: bool = False) -> dict[str, Any]:
    meta = simulation.get("metadata", {})
    name = str(meta.get("name"))
    stamp = now()
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"generateName": f"{name}.", "namespace": EVENTS_NAMESPACE},
        "involvedObject": {"apiVersion": API_VERSION, "kind": KIND, "name": name,
                           "uid": meta.get("uid", ""),
                           "resourceVersion": meta.get("resourceVersion", "")},
        "reason": reason, "message": message[:MAX_MESSAGE],
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT, "reportingInstance": COMPONENT,
        "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
    }


async def emit(kube: KubeClient, simulation: Mapping[str, Any], *, reason: str,
               message: str, warning: bool = False) -> None:
    """Record an Event (``reason`` in CamelCase) about ``simulation``; never raises."""
    body = event_body(simulation, reason=reason, message=message, warning=warning)
    try:
        await kube.request("POST", EVENTS.path(namespace=EVENTS_NAMESPACE), body=body)
    except ApiError as exc:
        log.warning("event not recorded", reason=reason, error=str(exc))
    log.info("event", simulation=body["involvedObject"]["name"], reason=reason,
             message=message)
