"""NodeClaim conditions a paced Karpenter dated ahead of the wall clock, brought back to now.

At a speed, the project's Karpenter build runs its node-termination controller on a trace
clock whose ``Now`` runs ahead of the wall clock by the trace time gained (traceclock.go), and
the conditions that controller sets on a NodeClaim being deleted (``Drained`` and the like)
carry that time. The process that set them measures its waits from them on the same clock. A
Karpenter started after it on another clock (the restart that restores production timers at
the end of a Simulation, or one at another speed) finds them in the future: upstream's
termination drains only once ``Since(lastTransitionTime)`` reaches its minimum drain time, so
it requeues every second, silently, until the wall clock passes them. A 10x replay killed
mid-drain left one 18 minutes ahead, and the next run's reset timed out waiting for that
claim (the Karpenter fidelity run of 2026-11-29). After each restart such times become now:
the new process then waits its minimum drain time from the restart, on its own clock.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from simkube.core.kubeapi import MERGE_PATCH, NODE_CLAIMS, ApiError, KubeClient, unix_s
from simkube.core.logs import get_logger

log = get_logger(__name__)
TOLERANCE_S = 1.0  # API timestamps have whole seconds; a clock a little ahead is no matter
ATTEMPTS = 3  # a claim Karpenter updates meanwhile is read again


def brought_back(claim: dict[str, Any], *, now: float) -> list[dict[str, Any]] | None:
    """The claim's conditions with every future transition time set to ``now``; None when
    none is ahead."""
    conditions = [dict(c) for c in (claim.get("status") or {}).get("conditions") or []]
    stamp = datetime.fromtimestamp(int(now), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ahead = False
    for condition in conditions:
        when = unix_s(condition.get("lastTransitionTime"))
        if when is not None and when > now + TOLERANCE_S:
            condition["lastTransitionTime"] = stamp
            ahead = True
    return conditions if ahead else None


async def bring_back_claim_times(kube: KubeClient) -> list[str]:
    """Every NodeClaim condition dated in the future is dated now; the claims changed."""
    changed: list[str] = []
    for listed in (await kube.request("GET", NODE_CLAIMS.path())).get("items") or []:
        name = str(listed["metadata"]["name"])
        claim = listed
        for _ in range(ATTEMPTS):
            conditions = brought_back(claim, now=time.time())
            if conditions is None:
                break
            try:  # the resourceVersion makes it a test-and-set: Karpenter may write too
                await kube.request(
                    "PATCH", NODE_CLAIMS.path(name=name, subresource="status"),
                    body={"metadata": {"resourceVersion": claim["metadata"].get(
                              "resourceVersion")},
                          "status": {"conditions": conditions}},
                    content_type=MERGE_PATCH)
            except ApiError as exc:
                if exc.code == 404:
                    break
                if exc.code != 409:
                    raise
                claim = await kube.request("GET", NODE_CLAIMS.path(name=name))
                continue
            changed.append(name)
            log.info("NodeClaim conditions a paced Karpenter dated ahead brought back to now",
                     nodeclaim=name)
            break
    return changed
