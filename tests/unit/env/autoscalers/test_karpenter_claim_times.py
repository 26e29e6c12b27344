from __future__ import annotations

import calendar
import time
from typing import Any, cast

import pytest

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.env.autoscalers.karpenter_claim_times import bring_back_claim_times, brought_back
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit

CLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
STATUS = f"{CLAIMS}/simkube-pg26q/status"
NOW = 1795959222.0  # 2026-11-29T13:33:42Z


def claim(drained_at: str, *, version: str = "7") -> dict[str, Any]:
    return {"metadata": {"name": "simkube-pg26q", "resourceVersion": version,
                         "deletionTimestamp": "2026-11-29T13:33:45Z"},
            "status": {"conditions": [
                {"type": "Launched", "status": "True",
                 "lastTransitionTime": "2026-11-29T13:33:32Z"},
                {"type": "Drained", "status": "Unknown", "reason": "Draining",
                 "lastTransitionTime": drained_at}]}}


def test_only_times_ahead_of_now_move() -> None:
    # What a 10x build killed mid-drain left: its trace clock 18 minutes ahead.
    conditions = brought_back(claim("2026-11-29T13:51:40Z"), now=NOW)
    assert conditions is not None
    assert [c["lastTransitionTime"] for c in conditions] == [
        "2026-11-29T13:33:32Z", "2026-11-29T13:33:42Z"]
    assert conditions[1]["reason"] == "Draining"  # the rest of the condition stays


@pytest.mark.parametrize("stamp", ["2026-11-29T13:33:40Z", "2026-11-29T13:33:43Z", "soon"])
def test_past_barely_ahead_or_unreadable_times_stay(stamp: str) -> None:
    assert brought_back(claim(stamp), now=NOW) is None


def future(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


async def test_a_claim_dated_ahead_is_patched_with_its_resource_version() -> None:
    api = FakeApi(lists={CLAIMS: [claim(future(1080)), {
        **claim(future(-60)), "metadata": {"name": "simkube-ok", "resourceVersion": "3"}}]})
    assert await bring_back_claim_times(cast(KubeClient, api)) == ["simkube-pg26q"]
    [body] = api.sent("PATCH")
    assert body["metadata"] == {"resourceVersion": "7"}
    drained = body["status"]["conditions"][1]["lastTransitionTime"]
    assert abs(calendar.timegm(time.strptime(drained, "%Y-%m-%dT%H:%M:%SZ")) - time.time()) <= 2


async def test_a_claim_karpenter_changed_meanwhile_is_read_again() -> None:
    api = FakeApi(lists={CLAIMS: [claim(future(1080))]},
                  objects={f"{CLAIMS}/simkube-pg26q": claim(future(1080), version="8")})
    api.fail("PATCH", STATUS, ApiError(code=409, reason="Conflict", message="modified"))
    assert await bring_back_claim_times(cast(KubeClient, api)) == ["simkube-pg26q"]
    assert [b["metadata"]["resourceVersion"] for b in api.sent("PATCH")] == ["7", "8"]


async def test_a_claim_gone_meanwhile_is_skipped() -> None:
    api = FakeApi(lists={CLAIMS: [claim(future(1080))]})
    api.fail("PATCH", STATUS, ApiError(code=404, reason="NotFound", message="gone"))
    assert await bring_back_claim_times(cast(KubeClient, api)) == []
