"""Creating fake nodes from a template and waiting for KWOK to make them Ready.

A template is a Node manifest in which ``{name}`` stands for each node's name. Whatever it
says, a fake node always carries KWOK's annotation (or KWOK would ignore it), its taint
(so only pods that opt in land on fake nodes) and the label replayed pods select
(``simkube.core.fake_nodes``).
"""

from __future__ import annotations

import asyncio
import copy
import json
import ssl
import time
from pathlib import Path
from typing import Any

import httpx

from simkube.core.config import load_yaml_mapping
from simkube.core.errors import ConfigError, EnvironmentStateError
from simkube.core.fake_nodes import NODE_TYPE_LABEL, NODE_TYPE_VALUE
from simkube.core.kubeapi import NODES
from simkube.env.controlplane.components import FAKE_NODE_ANNOTATION, FAKE_NODE_VALUE

DEFAULT_TEMPLATE = Path(__file__).resolve().parent / "fake-node.yaml"
FAKE_TAINT = {"key": FAKE_NODE_ANNOTATION, "value": FAKE_NODE_VALUE, "effect": "NoSchedule"}
CREATE_CONCURRENCY = 32


def load_template(path: Path | None) -> dict[str, Any]:
    template = load_yaml_mapping(path or DEFAULT_TEMPLATE, what="node template")
    if template.get("kind") != "Node":
        raise ConfigError(f"node template {path} has kind {template.get('kind')!r}; "
                          "expected 'Node'")
    if not isinstance(template.get("metadata", {}), dict):
        raise ConfigError(f"node template {path}: metadata must be a mapping")
    return template


def render_node(template: dict[str, Any], *, name: str) -> dict[str, Any]:
    text = json.dumps(template).replace("{name}", name)
    node: dict[str, Any] = json.loads(text)
    metadata = node.setdefault("metadata", {})
    metadata["name"] = name
    metadata.setdefault("annotations", {})[FAKE_NODE_ANNOTATION] = FAKE_NODE_VALUE
    metadata.setdefault("labels", {})[NODE_TYPE_LABEL] = NODE_TYPE_VALUE
    spec = node.setdefault("spec", {})
    taints = spec.setdefault("taints", [])
    if not any(t.get("key") == FAKE_NODE_ANNOTATION for t in taints):
        taints.append(copy.deepcopy(FAKE_TAINT))
    return node


def node_names(count: int, *, prefix: str = "kwok-node") -> list[str]:
    return [f"{prefix}-{index}" for index in range(count)]


async def create_nodes(*, server: str, tls: ssl.SSLContext, template: dict[str, Any],
                       names: list[str]) -> None:
    limit = asyncio.Semaphore(CREATE_CONCURRENCY)
    async with httpx.AsyncClient(base_url=server, verify=tls, timeout=30) as client:
        async def create(name: str) -> None:
            async with limit:
                response = await client.post(NODES.path(),
                                             json=render_node(template, name=name))
            if response.status_code not in (201, 409):
                raise EnvironmentStateError(
                    f"creating node {name} failed: HTTP {response.status_code} "
                    f"{response.text[:300]}")
        await asyncio.gather(*(create(n) for n in names))


def _is_ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


async def wait_nodes_ready(*, server: str, tls: ssl.SSLContext, names: list[str],
                           timeout: float) -> float:
    """Seconds until every named node is Ready; raises after ``timeout``."""
    wanted = set(names)
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=server, verify=tls, timeout=30) as client:
        while True:
            response = await client.get(NODES.path())
            response.raise_for_status()
            ready = {n["metadata"]["name"] for n in response.json()["items"] if _is_ready(n)}
            missing = wanted - ready
            if not missing:
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise EnvironmentStateError(
                    f"{len(missing)} of {len(wanted)} fake nodes are not Ready after "
                    f"{timeout:.0f}s (e.g. {sorted(missing)[0]}); is kwok running?")
            await asyncio.sleep(0.2)


__all__ = ["create_nodes", "load_template", "node_names", "render_node", "wait_nodes_ready"]
