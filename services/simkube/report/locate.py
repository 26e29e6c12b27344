"""Where a simulation's results are, and which run a reference like ``shop/run-2`` means.

Results are written by sk-ctrl on its own host under ``<results dir>/<simulation>/run-<n>/``.
A user names a simulation, not a path, so the lookup goes: an explicit ``--results``
directory; else the Simulation resource's ``status.resultsDir`` when the resource exists and
the cluster answers; else the local environment's results (``$SIMKUBE_HOME/results/<env>/``,
kept after ``env down``). An
unreachable cluster is not an error (reports are often read after ``env down`` of another
env, or offline), only a reason to fall back.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

import structlog

from simkube.core.errors import ConfigError, SimkubeError
from simkube.env import state
from simkube.env.paths import DEFAULT_ENV_NAME, env_dir, results_dir

log = structlog.get_logger(__name__)
LOOKUP_TIMEOUT = 5.0
_RUN_DIR = re.compile(r"^run-([1-9][0-9]*)$")
_REF = re.compile(r"^(?P<name>[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(/run-(?P<run>[1-9][0-9]*))?$")


@dataclass(frozen=True, kw_only=True)
class RunRef:
    simulation: str
    run: int | None  # None: the latest run


def parse_ref(text: str) -> RunRef:
    """``NAME`` (latest run) or ``NAME/run-N``."""
    match = _REF.match(text.strip())
    if not match:
        raise ConfigError(f"{text!r} is not a run reference",
                          hint="use NAME (its latest run) or NAME/run-N")
    run = match.group("run")
    return RunRef(simulation=match.group("name"), run=int(run) if run else None)


def simulation_dir(*, name: str, results: Path | None, kubeconfig: Path | None = None,
                   env: str | None = None) -> Path:
    """The directory holding ``run-<n>`` directories of simulation ``name``."""
    if results is not None:
        for candidate in (results / name, results):
            if run_numbers(candidate):
                return candidate
        raise ConfigError(f"no results of simulation {name!r} in {results}",
                          hint=f"expected {results / name}/run-1/ (or run-N directories "
                               f"directly in {results})")
    looked: list[str] = []
    status_dir = _status_results_dir(name=name, kubeconfig=kubeconfig, env=env)
    if status_dir is not None:
        if run_numbers(status_dir):
            return status_dir
        looked.append(f"{status_dir} (the Simulation's status.resultsDir)")
    local = results_dir(env or DEFAULT_ENV_NAME) / name
    if run_numbers(local):
        return local
    looked.append(str(local))
    raise ConfigError(f"no results for simulation {name!r}: looked in {', '.join(looked)}",
                      hint="pass --results DIR (the results root sk-ctrl writes to)")


def run_numbers(directory: Path) -> list[int]:
    """The run numbers present in a simulation's directory, ascending."""
    if not directory.is_dir():
        return []
    found = (_RUN_DIR.match(child.name) for child in directory.iterdir() if child.is_dir())
    return sorted(int(match.group(1)) for match in found if match)


def run_dir(directory: Path, *, run: int | None) -> Path:
    """``run-<run>`` in ``directory``, or its latest run when ``run`` is None."""
    runs = run_numbers(directory)
    if not runs:
        raise ConfigError(f"{directory} has no run-N directories")
    if run is None:
        return directory / f"run-{runs[-1]}"
    if run not in runs:
        raise ConfigError(f"simulation {directory.name!r} has no run {run}",
                          hint=f"runs in {directory}: {', '.join(map(str, runs))}")
    return directory / f"run-{run}"


def _status_results_dir(*, name: str, kubeconfig: Path | None, env: str | None) -> Path | None:
    """``status.resultsDir`` of Simulation ``name``, or None when it cannot be had."""
    config = kubeconfig or _env_kubeconfig(env or DEFAULT_ENV_NAME)
    if config is None:
        return None
    try:
        return asyncio.run(_fetch_status_dir(name=name, kubeconfig=config))
    except (SimkubeError, OSError) as exc:
        log.info("simulation status unavailable, using local results", error=str(exc))
        return None


async def _fetch_status_dir(*, name: str, kubeconfig: Path) -> Path | None:
    # aiohttp and kubernetes_asyncio cost half a second: only when a cluster is asked.
    from simkube.core.kubeapi import SIMULATIONS, ApiError, KubeClient  # noqa: PLC0415

    kube = await KubeClient.connect(kubeconfig=kubeconfig, pool_size=2)
    try:
        simulation = await kube.request("GET", SIMULATIONS.path(name=name),
                                        timeout=LOOKUP_TIMEOUT)
    except ApiError as exc:
        log.info("simulation not readable, using local results", simulation=name,
                 error=str(exc))
        return None
    finally:
        await kube.close()
    value = (simulation.get("status") or {}).get("resultsDir")
    return Path(value) if isinstance(value, str) and value else None


def _env_kubeconfig(name: str) -> Path | None:
    try:
        recorded = state.load(env_dir(name))
    except SimkubeError:
        return None
    return Path(recorded.kubeconfig) if recorded else None
