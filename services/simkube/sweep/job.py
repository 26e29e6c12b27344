"""A sweep as a Kubernetes Indexed Job: the ConfigMap that carries its inputs and the Job.

Kubernetes is the distributed engine here: the Job has one completion per point
(``completionMode: Indexed``), runs ``parallelism`` pods at a time, and gives each pod its
index in ``JOB_COMPLETION_INDEX``; every pod runs ``skctl sweep worker``, which builds the
point's complete simulated environment as processes inside the pod (the project's image with
the upstream binaries; no container engine, no root) and writes its results into the volume
the user names. Nothing here schedules points.

How inputs reach the pods: the sweep file travels in a ConfigMap, rewritten so its paths name
the pod's mounts; so do the node-groups file and, when it fits, the trace (binaryData). A
trace too big for a ConfigMap (1 MiB per object) is read from the results volume instead
(``trace_in_volume``), where the user copied it. Rendering is pure: what to apply, and
``ConfigError`` for what cannot work, before anything touches a cluster.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError
from simkube.sweep.spec import Sweep

INPUTS_MOUNT = "/sweep/inputs"
RESULTS_MOUNT = "/sweep/results"
STATE_MOUNT = "/sweep/state"  # $SIMKUBE_HOME: the environment's files, pod-local
SWEEP_KEY = "sweep.yaml"
NODE_GROUPS_KEY = "node-groups.yaml"
TRACE_KEY = "trace.sktrace"
# A ConfigMap (like any object) must stay under 1 MiB; leave room for the rest of it.
MAX_TRACE_IN_CONFIGMAP = 900 * 1024
RUN_AS = 10001  # the image's simkube user (deploy/Dockerfile)
PART_OF = {"app.kubernetes.io/part-of": "simkube", "app.kubernetes.io/component": "sweep"}


@dataclass(frozen=True, kw_only=True)
class JobOptions:
    image: str
    namespace: str
    pvc: str  # the PersistentVolumeClaim results go to (ReadWriteMany when pods spread)
    parallel: int
    cpu: str = "2"  # each pod runs a control plane, an autoscaler and a replay
    memory: str = "4Gi"
    trace_in_volume: str = ""  # the trace's path inside the volume; "": in the ConfigMap
    backoff_per_index: int = 1  # retries of a failed point (another pod, a fresh environment)


def job_name(sweep: Sweep) -> str:
    return f"sweep-{sweep.name}"


def results_dir(sweep: Sweep) -> str:
    """Where the pods write the sweep's directory (manifest, points/<index>) in the volume."""
    return f"{RESULTS_MOUNT}/{sweep.name}"


def render(sweep: Sweep, *, points: int, options: JobOptions) -> list[dict[str, Any]]:
    """The ConfigMap and the Job, in the order to apply them."""
    if options.trace_in_volume.startswith("/") or ".." in Path(options.trace_in_volume).parts:
        raise ConfigError(f"--trace-in-volume {options.trace_in_volume!r} must be a path inside "
                          f"the volume, relative to its root (it is mounted at {RESULTS_MOUNT})")
    return [_config_map(sweep, options=options),
            _job(sweep, points=points, options=options)]


def _config_map(sweep: Sweep, *, options: JobOptions) -> dict[str, Any]:
    raw = load_yaml_mapping(sweep.path, what="sweep file")
    base = dict(raw["base"])
    data = {}
    binary = {}
    if options.trace_in_volume:
        base["trace"] = f"{RESULTS_MOUNT}/{options.trace_in_volume}"
    else:
        size = sweep.base.trace.stat().st_size
        if size > MAX_TRACE_IN_CONFIGMAP:
            raise ConfigError(
                f"the trace {sweep.base.trace} is {size:,} bytes, more than a ConfigMap "
                f"carries ({MAX_TRACE_IN_CONFIGMAP:,})",
                hint="copy it into the volume and give --trace-in-volume PATH (docs/sweeps.md)")
        binary[TRACE_KEY] = base64.b64encode(sweep.base.trace.read_bytes()).decode()
        base["trace"] = f"{INPUTS_MOUNT}/{TRACE_KEY}"
    if sweep.base.node_groups is not None:
        data[NODE_GROUPS_KEY] = sweep.base.node_groups.read_text(encoding="utf-8")
        base["nodeGroups"] = f"{INPUTS_MOUNT}/{NODE_GROUPS_KEY}"
    data[SWEEP_KEY] = (f"# {sweep.path.name}, its paths rewritten for the pods of Job "
                       f"{job_name(sweep)}\n"
                       + yaml.safe_dump({**raw, "name": sweep.name, "base": base},
                                        sort_keys=False))
    config_map: dict[str, Any] = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{job_name(sweep)}-inputs", "namespace": options.namespace,
                     "labels": _labels(sweep)},
        "data": data}
    if binary:
        config_map["binaryData"] = binary
    return config_map


def _labels(sweep: Sweep) -> dict[str, str]:
    return {**PART_OF, "simkube.dev/sweep": sweep.name}


def _job(sweep: Sweep, *, points: int, options: JobOptions) -> dict[str, Any]:
    name = job_name(sweep)
    container = {
        "name": "worker", "image": options.image,
        # No --index: the worker reads JOB_COMPLETION_INDEX, which the Job sets.
        "command": ["skctl", "sweep", "worker", f"{INPUTS_MOUNT}/{SWEEP_KEY}",
                    "--output", results_dir(sweep)],
        "env": [{"name": "SIMKUBE_HOME", "value": STATE_MOUNT}],
        "resources": {"requests": {"cpu": options.cpu, "memory": options.memory},
                      "limits": {"memory": options.memory}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "inputs", "mountPath": INPUTS_MOUNT, "readOnly": True},
                         {"name": "results", "mountPath": RESULTS_MOUNT},
                         {"name": "state", "mountPath": STATE_MOUNT}]}
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": options.namespace, "labels": _labels(sweep),
                     "annotations": {"simkube.dev/sweep-file": sweep.path.name,
                                     "simkube.dev/sweep-digest": sweep.digest}},
        "spec": {
            "completionMode": "Indexed", "completions": points,
            "parallelism": min(options.parallel, points),
            # A failed point is retried on its own; the other indexes go on regardless.
            "backoffLimitPerIndex": options.backoff_per_index,
            "template": {
                "metadata": {"labels": _labels(sweep)},
                "spec": {
                    "restartPolicy": "Never",
                    "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS,
                                        "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [
                        {"name": "inputs", "configMap": {"name": f"{name}-inputs"}},
                        {"name": "results",
                         "persistentVolumeClaim": {"claimName": options.pvc}},
                        {"name": "state", "emptyDir": {}}]}}}}
