"""Waiting for kube-controller-manager's controllers to act on a probe after a restart."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.kubeapi import ApiError
from simkube.env.controlplane import readiness
from simkube.env.controlplane.readiness import PROBE, _wait, observed, probe_deployment

pytestmark = pytest.mark.unit


class Controllers:
    """An API server whose controllers start acting after ``late`` reads of the probe."""

    def __init__(self, *, late: int, stale_set: bool = False) -> None:
        self.late = late
        self.reads = 0
        self.calls: list[tuple[str, str]] = []
        self.deployment: dict[str, Any] | None = None
        # An earlier probe's ReplicaSet, observed long ago and not yet collected.
        self.sets = ([{"metadata": {"generation": 1, "ownerReferences": [{"uid": "old"}]},
                       "status": {"observedGeneration": 1}}] if stale_set else [])

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Any = None) -> dict[str, Any]:
        self.calls.append((method, path))
        if method == "DELETE":
            if self.deployment is None:
                raise ApiError(code=404, reason="NotFound", message="gone")
            self.deployment = None
            return {}
        if method == "POST":
            self.deployment = {**body, "metadata": {**body["metadata"], "uid": "new",
                                                    "generation": 1}, "status": {}}
            return self.deployment
        if path.endswith("/replicasets"):
            return {"items": self.sets}
        self.reads += 1
        assert self.deployment is not None
        if self.reads >= self.late:
            self.deployment["status"] = {"observedGeneration": 1}
            self.sets = [*self.sets, {"metadata": {"generation": 1, "ownerReferences": [
                {"uid": "new"}]}, "status": {"observedGeneration": 1}}]
        return self.deployment


def test_an_object_is_observed_once_its_generation_is() -> None:
    assert observed({"metadata": {"generation": 2}, "status": {"observedGeneration": 2}})
    assert not observed({"metadata": {"generation": 2}, "status": {"observedGeneration": 1}})
    assert not observed({"metadata": {}, "status": {}})
    assert probe_deployment()["spec"]["replicas"] == 0


async def test_waits_until_both_controllers_acted_then_deletes_the_probe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "POLL_S", 0.001)
    api = Controllers(late=4, stale_set=True)
    await _wait(api, timeout_s=5)  # type: ignore[arg-type]
    assert api.reads == 4  # the stale ReplicaSet of an earlier probe did not count
    assert api.calls[0][0] == "DELETE"
    assert api.calls[1][0] == "POST"
    probe = f"/apis/apps/v1/namespaces/kube-system/deployments/{PROBE}"
    assert api.calls[-1] == ("DELETE", probe)
    assert api.deployment is None


async def test_controllers_that_never_act_are_an_error_and_the_probe_goes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "POLL_S", 0.001)
    api = Controllers(late=10**9)
    with pytest.raises(EnvironmentStateError, match="did not act on a probe Deployment"):
        await _wait(api, timeout_s=0.05)  # type: ignore[arg-type]
    assert api.deployment is None
