"""The Indexed Job and its inputs' ConfigMap, rendered from a sweep file: pure."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.core.errors import ConfigError
from simkube.sweep.job import MAX_TRACE_IN_CONFIGMAP, JobOptions, render
from simkube.sweep.points import build_points
from simkube.sweep.spec import load_sweep
from tests.unit.sweep.files import BASE, write_sweep

pytestmark = pytest.mark.unit
AXES = [{"caFlag": "--expander", "values": ["least-waste", "price", "random"]}]
OPTIONS = JobOptions(image="registry.example/simkube-py-sweep:1", namespace="sweeps",
                     pvc="sweep-results", parallel=2)
GROUPS = """\
nodeGroups:
- id: small
  minSize: 1
  maxSize: 5
  pricePerHour: 0.1
  shape: {cpu: 2, memory: 8Gi, instanceType: m5.large, zone: z1}
"""


def _render(tmp_path: Path, options: JobOptions = OPTIONS,
            **base: Any) -> list[dict[str, Any]]:
    sweep = load_sweep(write_sweep(tmp_path, axes=AXES, base={**BASE, **base}))
    return render(sweep, points=len(build_points(sweep)), options=options)


def test_the_job_is_indexed_with_a_completion_per_point(tmp_path: Path) -> None:
    config_map, job = _render(tmp_path)
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == (
        "Indexed", 3, 2)
    assert spec["backoffLimitPerIndex"] == 1
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == OPTIONS.image
    # No --index: the worker reads JOB_COMPLETION_INDEX, set by Kubernetes in each pod.
    assert container["command"] == ["skctl", "sweep", "worker", "/sweep/inputs/sweep.yaml",
                                    "--output", "/sweep/results/sw"]
    assert {"name": "SIMKUBE_HOME", "value": "/sweep/state"} in container["env"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert volumes["results"]["persistentVolumeClaim"] == {"claimName": "sweep-results"}
    assert volumes["inputs"]["configMap"] == {"name": config_map["metadata"]["name"]}
    assert "emptyDir" in volumes["state"]
    assert job["metadata"]["namespace"] == config_map["metadata"]["namespace"] == "sweeps"


def test_parallelism_is_never_more_than_the_points(tmp_path: Path) -> None:
    _, job = _render(tmp_path, JobOptions(image="i", namespace="n", pvc="p", parallel=10))
    assert job["spec"]["parallelism"] == 3


def test_the_configmap_carries_the_sweep_file_with_the_pod_s_paths(tmp_path: Path) -> None:
    (tmp_path / "groups.yaml").write_text(GROUPS)
    config_map, _ = _render(tmp_path, nodeGroups="groups.yaml")
    inside = yaml.safe_load(config_map["data"]["sweep.yaml"])
    assert inside["name"] == "sw"  # the pod's file is sweep.yaml: the name must not change
    assert inside["base"]["trace"] == "/sweep/inputs/trace.sktrace"
    assert inside["base"]["nodeGroups"] == "/sweep/inputs/node-groups.yaml"
    assert inside["axes"] == AXES
    assert config_map["data"]["node-groups.yaml"] == GROUPS
    trace = base64.b64decode(config_map["binaryData"]["trace.sktrace"])
    assert trace == (tmp_path / "t.sktrace").read_bytes()


def test_a_trace_in_the_volume_is_read_from_there(tmp_path: Path) -> None:
    options = JobOptions(image="i", namespace="n", pvc="p", parallel=1,
                         trace_in_volume="traces/big.sktrace")
    config_map, _ = _render(tmp_path, options)
    inside = yaml.safe_load(config_map["data"]["sweep.yaml"])
    assert inside["base"]["trace"] == "/sweep/results/traces/big.sktrace"
    assert "binaryData" not in config_map


def test_a_trace_too_big_for_a_configmap_is_refused_with_the_way_out(tmp_path: Path) -> None:
    sweep = load_sweep(write_sweep(tmp_path, axes=AXES))
    (tmp_path / "t.sktrace").write_bytes(b"x" * (MAX_TRACE_IN_CONFIGMAP + 1))
    with pytest.raises(ConfigError) as caught:
        render(sweep, points=3, options=OPTIONS)
    assert "more than a ConfigMap carries" in caught.value.message
    assert "--trace-in-volume" in (caught.value.hint or "")


@pytest.mark.parametrize("path", ["/abs/t.sktrace", "../t.sktrace"])
def test_a_trace_path_outside_the_volume_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(ConfigError, match="must be a path inside the volume"):
        _render(tmp_path, JobOptions(image="i", namespace="n", pvc="p", parallel=1,
                                     trace_in_volume=path))
