"""What the tracer records from a real cluster, checked through real exports."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from tests.integration.tracer.conftest import TracerProcess, events_of, unpacked
from tests.support.kube import FAKE_TOLERATION, deployment, eventually

pytestmark = pytest.mark.integration
MakeTracer = Callable[[dict[str, Any]], TracerProcess]
DEPLOYMENT = "apps/v1.Deployment"


async def recorded(tracer: TracerProcess, kind: str, count: int) -> None:
    """Wait until the tracer stored ``count`` events of ``kind``."""
    async def done() -> bool:
        status = await tracer.status()
        return any(k.kind == kind and k.events_stored >= count for k in status.kinds)
    await eventually(done, timeout=60, what=f"{count} {kind} events stored")


async def test_deployment_create_scale_update_delete_are_exact_events(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path) -> None:
    process = tracer({"trackedObjects": {DEPLOYMENT: {"podSpecTemplatePaths": ["/spec/template"]},
                                         "v1.Pod": {}},
                      "namespaces": [namespace]})
    await process.start(watching=2)
    apps = client.AppsV1Api(kube)
    await apps.create_namespaced_deployment(namespace, deployment("web", replicas=2))
    await recorded(process, DEPLOYMENT, 1)
    await apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 4}})
    await recorded(process, DEPLOYMENT, 2)
    await asyncio.sleep(0.05)
    middle = int(time.time() * 1000)
    image = {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.example/app:2"}]}}}}
    await apps.patch_namespaced_deployment("web", namespace, image)
    await recorded(process, DEPLOYMENT, 3)
    # Let the controllers write status and revision annotations: none of that is a change.
    await eventually(lambda: _rollout_done(apps, namespace), timeout=90, what="rollout")
    await apps.delete_namespaced_deployment("web", namespace)
    await recorded(process, DEPLOYMENT, 4)

    whole = process.export(tmp_path)
    key = f"{namespace}/web"
    assert events_of(whole) == [("apply", DEPLOYMENT, key)] * 3 + [("delete", DEPLOYMENT, key)]
    replicas = [e.applied[0]["spec"]["replicas"] for e in whole.events[:3]]
    assert replicas == [2, 4, 4]
    assert whole.events[2].applied[0]["spec"]["template"]["spec"]["containers"][0][
        "image"] == "registry.example/app:2"
    for event in whole.events[:3]:
        obj = event.applied[0]
        assert "status" not in obj
        assert not {"uid", "resourceVersion", "managedFields", "generation",
                    "creationTimestamp"} & set(obj["metadata"])
        assert "deployment.kubernetes.io/revision" not in obj["metadata"].get("annotations", {})

    # From the middle: the state then (4 replicas) is the first event, at the window start.
    window = process.export(tmp_path, "--start", _rfc3339(middle))
    assert window.events[0].ts_ms == middle
    assert [e.applied[0]["spec"]["replicas"] for e in window.events[:2]] == [4, 4]
    assert events_of(window)[2:] == [("delete", DEPLOYMENT, key)]
    # A window that ends before the update holds the creation and the scale only.
    early = process.export(tmp_path, "--end", _rfc3339(middle))
    assert [e.applied[0]["spec"]["replicas"] for e in early.events] == [2, 4]


async def _rollout_done(apps: client.AppsV1Api, namespace: str) -> bool:
    status = (await apps.read_namespaced_deployment("web", namespace)).status
    return bool(status.updated_replicas == 4 and status.ready_replicas == 4
                and not status.unavailable_replicas)


def _rfc3339(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


async def test_cronjob_jobs_complete_and_their_pods_become_lifecycles(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path) -> None:
    template = {"spec": {"restartPolicy": "Never", "tolerations": [FAKE_TOLERATION],
                         "nodeSelector": {"type": "kwok"},
                         "containers": [{"name": "c", "image": "registry.example/job:1"}]}}
    process = tracer({"trackedObjects": {
        "batch/v1.CronJob": {"podSpecTemplatePaths": ["/spec/jobTemplate/spec/template"],
                             "trackLifecycle": True},
        "batch/v1.Job": {"podSpecTemplatePaths": ["/spec/template"]}, "v1.Pod": {}},
        "namespaces": [namespace]})
    await process.start(watching=3)
    batch = client.BatchV1Api(kube)
    cron = await batch.create_namespaced_cron_job(namespace, {
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 0 1 1 *", "suspend": True,
                 "jobTemplate": {"spec": {"template": template}}}})
    owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly",
             "uid": cron.metadata.uid, "controller": True}
    for index in range(2):  # what `kubectl create job --from=cronjob/nightly` does
        await batch.create_namespaced_job(namespace, {
            "metadata": {"name": f"nightly-{index}", "ownerReferences": [owner]},
            "spec": {"template": template}})

    async def jobs_complete() -> bool:
        jobs = (await batch.list_namespaced_job(namespace)).items
        return len(jobs) == 2 and all((job.status.succeeded or 0) == 1 for job in jobs)
    await eventually(jobs_complete, timeout=90, what="both Jobs to succeed")

    async def runs_recorded() -> Any:
        trace = process.export(tmp_path)
        runs = [run for lc in trace.lifecycles for run in lc.runs]
        return trace if len(runs) == 2 and all(run.end_ms for run in runs) else None
    trace = await eventually(runs_recorded, timeout=60, what="two finished pod runs")
    # Jobs and pods belong to the exported CronJob: its controller recreates them.
    assert events_of(trace) == [("apply", "batch/v1.CronJob", f"{namespace}/nightly")]
    [lifecycle] = trace.lifecycles
    assert (lifecycle.owner_kind, lifecycle.owner) == ("batch/v1.CronJob", f"{namespace}/nightly")
    starts = [run.start_ms for run in lifecycle.runs]
    assert starts == sorted(starts)
    assert all(run.start_ms <= (run.end_ms or 0) for run in lifecycle.runs)


async def test_crd_without_pod_template_cluster_scoped_kind_and_bare_pods(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    widget = f"{group}/v1.Widget"
    priority = f"{namespace}-high"
    process = tracer({"trackedObjects": {widget: {}, "v1.Pod": {},
                                         "scheduling.k8s.io/v1.PriorityClass": {}},
                      "namespaces": [namespace]})
    await process.start(watching=2)
    status = await process.status()
    waiting = next(k for k in status.kinds if k.kind == widget)
    assert waiting.state == 4  # WAITING_FOR_CRD; the other kinds already record
    assert "CRD" in waiting.last_error

    extensions = client.ApiextensionsV1Api(kube)
    crd_name = f"widgets.{group}"
    await extensions.create_custom_resource_definition({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object",
                                         "x-kubernetes-preserve-unknown-fields": True}}}]}})
    scheduling = client.SchedulingV1Api(kube)
    try:
        await process.wait_watching(3)
        custom = client.CustomObjectsApi(kube)
        await custom.create_namespaced_custom_object(group, "v1", namespace, "widgets", {
            "apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3}})
        await scheduling.create_priority_class({"metadata": {"name": priority},
                                                "value": 1000})
        await client.CoreV1Api(kube).create_namespaced_pod(namespace, {
            "metadata": {"name": "bare"},
            "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}],
                     "tolerations": [FAKE_TOLERATION]}})
        await recorded(process, widget, 1)
        await recorded(process, "v1.Pod", 1)

        async def priority_recorded() -> Any:
            trace = process.export(tmp_path, "--kind", "scheduling.k8s.io/v1.PriorityClass")
            return trace if ("apply", "scheduling.k8s.io/v1.PriorityClass",
                             priority) in events_of(trace) else None
        await eventually(priority_recorded, timeout=30, what="the PriorityClass")
        trace = process.export(tmp_path, "--exclude-kind",
                               "scheduling.k8s.io/v1.PriorityClass")
        assert sorted(events_of(trace)) == [("apply", widget, f"{namespace}/w1"),
                                            ("apply", "v1.Pod", f"{namespace}/bare")]
        body = next(obj for e in trace.events for obj in e.applied if obj["kind"] == "Widget")
        assert body["spec"] == {"size": 3}
    finally:
        await extensions.delete_custom_resource_definition(crd_name)
        await scheduling.delete_priority_class(priority)


async def test_secret_values_never_reach_the_store_or_an_export(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path) -> None:
    secret_value = f"hunter2-{uuid.uuid4().hex}"
    process = tracer({"trackedObjects": {"v1.Secret": {}}, "namespaces": [namespace]})
    await process.start(watching=1)
    import base64  # noqa: PLC0415
    import json  # noqa: PLC0415
    encoded = base64.b64encode(secret_value.encode()).decode()
    manifest = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                "stringData": {"password": secret_value}}
    await client.CoreV1Api(kube).create_namespaced_secret(namespace, {
        **manifest, "metadata": {"name": "db", "annotations": {
            # what `kubectl apply` leaves behind: the whole manifest, values included
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(manifest)}}})
    await client.CoreV1Api(kube).patch_namespaced_secret(
        "db", namespace, {"data": {"token": base64.b64encode(b"second-" + secret_value.encode())
                                   .decode()}})
    await recorded(process, "v1.Secret", 2)
    trace = process.export(tmp_path)
    process.stop()  # seal the segment: every byte is on disk
    [*_, last] = [obj for e in trace.events for obj in e.applied]
    assert last["data"] == {"password": "", "token": ""}
    assert "annotations" not in last["metadata"]
    exported = unpacked(tmp_path, "export-*.trace")
    stored = unpacked(process.store)
    for needle in (secret_value, encoded, "second-"):
        assert needle.encode() not in stored
        assert needle.encode() not in exported
    # The keys are kept: proof that the grep reads decompressed content.
    assert b"password" in stored
    assert b"password" in exported


async def test_a_run_records_the_instance_type_of_its_node(
        kube: client.ApiClient, namespace: str, tracer: MakeTracer, tmp_path: Path) -> None:
    name = f"typed-{uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(kube)
    await core.create_node({
        "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                     "labels": {"type": "kwok", "typed-pool": name,
                                "node.kubernetes.io/instance-type": "it-m5.large"}},
        "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake",
                             "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "20"},
                   "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}})
    try:
        process = tracer({"trackedObjects": {DEPLOYMENT: {
            "podSpecTemplatePaths": ["/spec/template"], "trackLifecycle": True}},
            "namespaces": [namespace]})
        await process.start(watching=1)  # the pods' watch has no status
        web = deployment("web", replicas=1)
        web["spec"]["template"]["spec"]["nodeSelector"] = {  # type: ignore[index]
            "type": "kwok", "typed-pool": name}
        await client.AppsV1Api(kube).create_namespaced_deployment(namespace, web)

        async def run_recorded() -> Any:
            runs = [run for lc in process.export(tmp_path).lifecycles for run in lc.runs]
            return runs or None
        [run] = await eventually(run_recorded, timeout=60, what="the web pod's run")
        assert run.node_type == "it-m5.large"
    finally:
        await core.delete_node(name)
