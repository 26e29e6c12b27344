"""Lifting a wave: every pod's delay ends at one instant; gone and failed pods told apart."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.core.kubeapi import ApiError
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.ctrl.scale_up_lifts import GatedPod, delay_until, lift_wave, regate_wave
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit


def gated(name: str, *, created_s: float | None = 100.0) -> GatedPod:
    return GatedPod(namespace="virtual-shop", name=name, seen_s=0.0, created_s=created_s)


def test_a_delay_ends_at_the_instant_asked_for() -> None:
    assert delay_until(created_s=100.0, until_s=112.3456) == "12346ms"  # never before it
    assert delay_until(created_s=100.0, until_s=99.0) == "0ms"
    assert delay_until(created_s=None, until_s=112.0) is None  # unknown: no delay at all


async def test_every_pod_of_a_wave_is_delayed_to_one_instant() -> None:
    kube = ScriptedKube()
    pods = {"a": gated("p-a", created_s=98.0), "b": gated("p-b"), "c": gated("p-c", created_s=None)}
    lift = await lift_wave(kube, pods, wall=lambda: 102.5,  # type: ignore[arg-type]
                           lead_s=0.1, lead_per_pod_s=0.01)
    delays = {path.rsplit("/", 1)[-1]: body["metadata"]["annotations"][SCALE_UP_DELAY_ANNOTATION]
              for method, path, body, *_ in kube.requests if method == "PATCH"}
    # 102.5 + 0.1 + 3 pods x 0.01 = 102.63, whatever each pod's creation time
    assert delays == {"p-a": "4630ms", "p-b": "2630ms", "p-c": None}
    assert (lift.gone, lift.failed) == ([], [])
    assert lift.spare_s == pytest.approx(0.13)
    assert not lift.late


def gone_or_refused(path: str) -> Any:
    """The API server's answer to a patch of ``p-gone`` (404), ``p-refused`` (500), else {}."""
    if path.endswith("p-gone"):
        return ApiError(code=404, reason="NotFound", message="gone")
    if path.endswith("p-refused"):
        return ApiError(code=500, reason="InternalError", message="etcd timeout")
    return {}


async def test_gone_and_failed_pods_are_told_apart_and_a_slow_lift_is_late() -> None:
    now = [200.0]

    def answer(method: str, path: str) -> Any:
        now[0] += 0.05  # each patch takes 50 ms
        return gone_or_refused(path)
    kube = ScriptedKube(answer=answer)
    pods = {"g": gated("p-gone"), "r": gated("p-refused"), "k": gated("p-kept")}
    lift = await lift_wave(kube, pods, wall=lambda: now[0],  # type: ignore[arg-type]
                           lead_s=0.1, lead_per_pod_s=0.0)
    assert (lift.gone, lift.failed) == (["g"], ["r"])
    assert lift.spare_s == pytest.approx(-0.05)
    assert lift.late


async def test_gating_again_gives_every_pod_the_ten_year_delay_and_tells_gone_ones() -> None:
    kube = ScriptedKube(answer=lambda _method, path: gone_or_refused(path))
    pods = {"g": gated("p-gone"), "r": gated("p-refused"), "k": gated("p-kept", created_s=None)}
    patched = await regate_wave(kube, pods)  # type: ignore[arg-type]
    delays = {path.rsplit("/", 1)[-1]: body["metadata"]["annotations"][SCALE_UP_DELAY_ANNOTATION]
              for method, path, body, *_ in kube.requests if method == "PATCH"}
    assert delays == dict.fromkeys(["p-gone", "p-refused", "p-kept"], GATED_DELAY)
    assert (patched.gone, patched.failed) == (["g"], ["r"])
