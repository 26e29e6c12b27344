from __future__ import annotations

from typing import Any, cast

import pytest

from simkube.core.kubeapi import INSTANCE_TYPE_LABEL, ApiError, KubeClient, NodeTypes
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit


def _nodes(**types: str | None) -> Any:
    """Answers GETs of the named nodes (labelled with their type, or unlabelled); 404 else."""
    def answer(method: str, path: str) -> Any:
        name = path.rsplit("/", 1)[-1]
        if name not in types:
            return ApiError(code=404, reason="NotFound", message=name)
        labels = {INSTANCE_TYPE_LABEL: types[name]} if types[name] else {}
        return {"metadata": {"name": name, "labels": labels}}
    return answer


async def test_a_node_is_read_once_and_its_type_remembered() -> None:
    kube = ScriptedKube(answer=_nodes(a="m5.large", b=None))
    types = NodeTypes(cast(KubeClient, kube))
    assert await types.of("a") == "m5.large"
    assert await types.of("a") == "m5.large"
    assert await types.of("b") is None  # unlabelled
    assert await types.of("b") is None
    assert [path for _, path, *_ in kube.requests] == ["/api/v1/nodes/a", "/api/v1/nodes/b"]


async def test_unnamed_and_missing_nodes_have_no_type_and_missing_ones_are_asked_again() -> None:
    kube = ScriptedKube(answer=_nodes())
    types = NodeTypes(cast(KubeClient, kube))
    assert await types.of(None) is None
    assert await types.of("") is None
    assert await types.of("gone") is None
    assert await types.of("gone") is None
    assert len(kube.requests) == 2


async def test_a_refusal_to_read_nodes_stops_asking() -> None:
    kube = ScriptedKube(answer=lambda method, path: ApiError(code=403, reason="Forbidden",
                                                              message="nodes"))
    types = NodeTypes(cast(KubeClient, kube))
    assert await types.of("a") is None
    assert await types.of("b") is None
    assert len(kube.requests) == 1


async def test_the_oldest_names_are_forgotten_beyond_the_limit() -> None:
    kube = ScriptedKube(answer=_nodes(a="s", b="m", c="l"))
    types = NodeTypes(cast(KubeClient, kube), remember=2)
    for name in ("a", "b", "a", "c", "a", "b"):  # c pushes out b (a was used since)
        await types.of(name)
    assert [path.rsplit("/", 1)[-1] for _, path, *_ in kube.requests] == ["a", "b", "c", "b"]
