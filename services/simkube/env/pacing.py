"""Starting the project's paced Go builds at a run's speed.

Karpenter (``toolchain/karpenter``) and kube-scheduler (``toolchain/kube-scheduler``) are
built with the shared ``toolchain/pacing`` clocks, which read two environment variables at
start: ``SIMKUBE_SPEED``, the run's speed, by which their waits are divided, and
``SIMKUBE_RUN_CONFIGMAP`` ("namespace/name"), where sk-ctrl publishes the run's holds, which
their clocks then follow. Unset, a build behaves as upstream's: that is what a ground truth
(speed 1) and ``env up`` get. A supervisor restart reuses the argv, so the variables travel
in an ``env`` prefix of the command line rather than in the supervisor's environment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from simkube.core.simtime import REAL_TIME, TimeScale

SPEED_VARIABLE = "SIMKUBE_SPEED"
RUN_CONFIGMAP_VARIABLE = "SIMKUBE_RUN_CONFIGMAP"
_OURS = (f"{SPEED_VARIABLE}=", f"{RUN_CONFIGMAP_VARIABLE}=")


def env_binary() -> str:
    return shutil.which("env") or "/usr/bin/env"


def paced_argv(argv: list[str], *, scale: TimeScale, run_configmap: str = "") -> list[str]:
    """``argv`` with the run's speed and hold ConfigMap set for the process, replacing any
    earlier ones; without them at speed 1. An ``env`` prefix is added when ``argv`` has none
    (the scheduler's), kept when it has one (Karpenter's, for its ``KUBECONFIG``)."""
    kept = [arg for arg in argv if not arg.startswith(_OURS)]
    if scale == REAL_TIME:
        return kept
    variables = [f"{SPEED_VARIABLE}={scale.speed!r}"]
    if run_configmap:
        variables.append(f"{RUN_CONFIGMAP_VARIABLE}={run_configmap}")
    if kept and Path(kept[0]).name == "env":  # assignments go between it and the program
        return [kept[0], *variables, *kept[1:]]
    return [env_binary(), *variables, *kept]
