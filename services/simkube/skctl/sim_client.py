"""The Simulation API calls behind ``skctl run/status/pause/resume/delete``.

skctl talks to the cluster, never to sk-ctrl directly: the Simulation resource is the
interface, so everything skctl does can also be done with kubectl and a YAML file. The API
server's refusals are turned into messages that say what to do (no CRD means no sk-ctrl has
run against this cluster yet; 409 means the name is taken).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simkube.core.errors import ConfigError, EnvironmentStateError
from simkube.core.kubeapi import MERGE_PATCH, ApiError, KubeClient, poll
from simkube.ctrl.decisions import state_of
from simkube.ctrl.statuses import now
from simkube.env.paths import DEFAULT_ENV_NAME
from simkube.env.status import load_state
from simkube.simulation import names
from simkube.simulation.states import TERMINAL

NO_CRD_HINT = ("sk-ctrl installs the Simulation CRD when it starts: run "
               "'skctl env up --services' (or deploy deploy/overlays/sim)")


def kubeconfig_for(*, kubeconfig: Path | None, env: str | None) -> Path:
    """``--kubeconfig`` when given, else the kubeconfig of local environment ``env``."""
    if kubeconfig is not None:
        return kubeconfig
    return Path(load_state(env or DEFAULT_ENV_NAME).kubeconfig)


def _api_failure(exc: ApiError, *, doing: str) -> Exception:
    if exc.code == 0:
        return EnvironmentStateError(f"cannot {doing}: the API server does not answer "
                                     f"({exc.message})")
    return ConfigError(f"cannot {doing}: {exc}")


async def create(kube: KubeClient, simulation: dict[str, Any]) -> dict[str, Any]:
    name = simulation["metadata"]["name"]
    try:
        return await kube.request("POST", names.SIMULATIONS_PATH, body=simulation)
    except ApiError as exc:
        if exc.code == 404:
            raise EnvironmentStateError("the cluster has no Simulation resource type",
                                        hint=NO_CRD_HINT) from None
        if exc.code == 409:
            raise ConfigError(f"a simulation named {name!r} already exists",
                              hint=f"pick another --name, or 'skctl delete {name}' first"
                              ) from None
        raise _api_failure(exc, doing=f"create simulation {name!r}") from None


async def get(kube: KubeClient, name: str) -> dict[str, Any]:
    try:
        return await kube.request("GET", names.simulation_path(name))
    except ApiError as exc:
        if exc.code != 404:
            raise _api_failure(exc, doing=f"read simulation {name!r}") from None
    known = [item["metadata"]["name"] for item in await list_all(kube)]
    raise ConfigError(f"no simulation named {name!r} "
                      f"(known: {', '.join(known) if known else 'none'})")


async def list_all(kube: KubeClient) -> list[dict[str, Any]]:
    try:
        listing = await kube.request("GET", names.SIMULATIONS_PATH)
    except ApiError as exc:
        if exc.code == 404:
            return []  # no CRD yet: no simulations either
        raise _api_failure(exc, doing="list simulations") from None
    items: list[dict[str, Any]] = listing.get("items", [])
    return sorted(items, key=lambda item: (item["metadata"].get("creationTimestamp", ""),
                                           item["metadata"]["name"]))


async def set_paused(kube: KubeClient, name: str, *, paused: bool) -> dict[str, Any]:
    """Set or clear ``spec.pausedTime``; sk-ctrl pauses or resumes the run in sk-driver."""
    current = await get(kube, name)
    if state_of(current) in TERMINAL:
        raise ConfigError(f"simulation {name!r} is {state_of(current)}; there is nothing to "
                          f"{'pause' if paused else 'resume'}")
    body = {"spec": {"pausedTime": now() if paused else None}}
    try:
        return await kube.request("PATCH", names.simulation_path(name), body=body,
                                  content_type=MERGE_PATCH)
    except ApiError as exc:
        raise _api_failure(exc, doing=f"update simulation {name!r}") from None


async def delete(kube: KubeClient, name: str, *, wait: float) -> bool:
    """Delete ``name``; with ``wait`` > 0, True once sk-ctrl cleaned up and it is gone."""
    await get(kube, name)  # a clear "no simulation named ..." with the known ones
    try:
        await kube.request("DELETE", names.simulation_path(name))
    except ApiError as exc:
        if exc.code != 404:
            raise _api_failure(exc, doing=f"delete simulation {name!r}") from None

    async def gone() -> bool:
        return not await kube.exists(names.simulation_path(name))

    return wait <= 0 or await poll(gone, timeout=wait, interval=0.3)
