"""``skctl sweep run FILE --on-cluster``: the sweep handed to Kubernetes as an Indexed Job.

The manifests come from ``simkube.sweep.job`` (pure); this module prints them (``--render``,
which contacts nothing), has the API server check them without storing anything
(``--dry-run``: a server-side dry run, so schema, defaulting and admission all apply), or
applies them (server-side apply: the inputs' ConfigMap first, then the Job). The sweep file is
read and every point built before any of that, so a bad file creates nothing on the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from simkube.core.errors import ConfigError
from simkube.core.kubeapi import KubeClient
from simkube.core.kubeapi.patching import apply
from simkube.skctl.sim_commands import with_cluster
from simkube.sweep.job import JobOptions, job_name, render, results_dir
from simkube.sweep.points import Point
from simkube.sweep.spec import Sweep

FIELD_MANAGER = "skctl-sweep"


@dataclass(frozen=True, kw_only=True)
class ClusterFlags:
    image: str | None
    pvc: str | None
    namespace: str
    trace_in_volume: str
    render_only: bool
    dry_run: bool
    kubeconfig: Path | None
    env_name: str | None


def _path(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    prefix = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
    plural = {"ConfigMap": "configmaps", "Job": "jobs"}[obj["kind"]]
    return f"{prefix}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"


def manifests(sweep: Sweep, points: list[Point], *, flags: ClusterFlags,
              parallel: int) -> list[dict[str, Any]]:
    """The objects to apply; ``ConfigError`` for a missing flag or an input that cannot
    travel."""
    missing = [name for name, value in (("--image", flags.image), ("--pvc", flags.pvc))
               if not value]
    if missing:
        raise ConfigError(f"--on-cluster needs {' and '.join(missing)}: the image the pods run "
                          "(deploy/Dockerfile's sweep target) and the PersistentVolumeClaim "
                          "their results go to", hint="docs/sweeps.md, 'On a cluster'")
    assert flags.image is not None  # noqa: S101  # checked above
    assert flags.pvc is not None  # noqa: S101
    return render(sweep, points=len(points), options=JobOptions(
        image=flags.image, namespace=flags.namespace, pvc=flags.pvc, parallel=parallel,
        trace_in_volume=flags.trace_in_volume))


def submit(sweep: Sweep, points: list[Point], *, flags: ClusterFlags, parallel: int) -> None:
    """Render, dry-run or apply the Job of ``sweep``; say what happened on stdout."""
    objects = manifests(sweep, points, flags=flags, parallel=parallel)
    if flags.render_only:
        click.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)
        return

    async def action(kube: KubeClient) -> list[str]:
        done = []
        for obj in objects:
            await apply(kube, _path(obj), obj, field_manager=FIELD_MANAGER,
                        dry_run=flags.dry_run)
            done.append(f"{obj['kind'].lower()}/{obj['metadata']['name']}")
        return done

    applied = with_cluster(flags.kubeconfig, flags.env_name, action)
    suffix = " (server dry run: checked, nothing stored)" if flags.dry_run else ""
    for name in applied:
        click.echo(f"{name} applied in namespace {flags.namespace}{suffix}")
    if flags.dry_run:
        return
    name = job_name(sweep)
    click.echo(f"{len(points)} points, {min(parallel, len(points))} at a time; results in "
               f"the volume {flags.pvc} under {results_dir(sweep).rpartition('/')[2]}/\n"
               f"  follow:  kubectl -n {flags.namespace} get job {name} -w\n"
               f"  collect: docs/sweeps.md, 'On a cluster' (a reader pod, kubectl cp, "
               f"then skctl sweep report)")
