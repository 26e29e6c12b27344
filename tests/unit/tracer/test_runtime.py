from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.gen.simkube.tracer.v1 import tracer_pb2
from simkube.tracer.client import get_status
from simkube.tracer.config import load_config
from simkube.tracer.runtime import Tracer, TracerOptions

pytestmark = pytest.mark.unit
UNREACHABLE = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


async def test_unusable_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\n")
    tracer = Tracer(TracerOptions(config=load_config(None), store=tmp_path / "store",
                                  kubeconfig=path, listen="127.0.0.1:0"))
    with pytest.raises(ConfigError, match="cannot use"):
        await tracer.start()


async def test_an_unreachable_api_server_does_not_stop_the_tracer(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE)
    tracer = Tracer(TracerOptions(config=load_config(None), store=tmp_path / "store",
                                  kubeconfig=kubeconfig, listen="127.0.0.1:0"))
    await tracer.start()
    try:
        address = f"127.0.0.1:{tracer.service.port}"
        for _ in range(100):
            status = await get_status(address)
            if all(k.state == tracer_pb2.WATCH_STATE_BACKOFF for k in status.kinds):
                break
            await asyncio.sleep(0.05)
        assert all(k.state == tracer_pb2.WATCH_STATE_BACKOFF for k in status.kinds)
        assert all(k.last_error for k in status.kinds)
        assert status.segments == 1
    finally:
        await tracer.stop()
    second = Tracer(TracerOptions(config=load_config(None), store=tmp_path / "store",
                                  kubeconfig=kubeconfig, listen="127.0.0.1:0"))
    await second.start()  # the store was released by the clean stop
    await second.stop()
