"""Cluster Autoscaler through sk-cloudprov-front, and without it.

``env up --autoscaler`` points CA's cloud-config at the front, which answers CA's per-node
calls from its cache and forwards the rest to sk-cloudprov. The twenty-pod episode of
test_scale_up must end exactly as it does against sk-cloudprov itself — one plan, three
nodes, every pod Running, only CA's chosen nodes deleted — also when the front is killed
right after CA's first plan, and with ``--no-cloudprov-front``, where CA talks to
sk-cloudprov directly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.autoscaler.conftest import FAST_SCALE_DOWN, CaEnv, connect, group
from tests.autoscaler.test_scale_up import episode
from tests.conftest import skctl

pytestmark = pytest.mark.autoscaler
FRONT = "sk-cloudprov-front"


def wiring(env: CaEnv) -> tuple[dict[str, Any], str]:
    """``env status --json`` and the address in CA's cloud-config."""
    status = json.loads(skctl("env", "status", "--name", env.name, "--json").stdout)
    kubeconfig = Path(status["kubeconfig"])
    cloud = yaml.safe_load((kubeconfig.parent / "autoscaler-cloud-config.yaml").read_text())
    return status, str(cloud["address"])


def front_hits(status: dict[str, Any]) -> float:
    record = next(c for c in json.loads(
        (Path(status["kubeconfig"]).parent / "state.json").read_text())["components"]
        if c["name"] == FRONT)
    metrics = next(a.split("=", 1)[1] for a in record["argv"] if a.startswith("--metrics-listen="))
    text = httpx.get(f"http://{metrics}/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith('sk_cloudprov_front_cache_hits_total{method="NodeGroupForNode"'))


async def test_ca_scales_through_the_front_even_when_it_is_killed(make_env: Any) -> None:
    env = make_env([group("large", cpu=8, price=0.384, min_size=1)], *FAST_SCALE_DOWN)
    status, address = wiring(env)
    assert address == status["cloudprov_front"] != status["cloudprov"]
    assert {c["name"]: c["health"] for c in status["components"]}[FRONT] == "running"
    async with await connect(env) as api:
        await episode(env, api, 0, None)
        assert front_hits(status) > 0  # CA's per-node questions were answered by the front
        await episode(env, api, 1, FRONT)
        await episode(env, api, 2, "sk-cloudprov")


async def test_without_the_front_ca_talks_to_sk_cloudprov(make_env: Any) -> None:
    env = make_env([group("large", cpu=8, price=0.384, min_size=1)], *FAST_SCALE_DOWN,
                   "--no-cloudprov-front")
    status, address = wiring(env)
    assert address == status["cloudprov"]
    assert status["cloudprov_front"] is None
    assert FRONT not in {c["name"] for c in status["components"]}
    async with await connect(env) as api:
        await episode(env, api, 0, None)
