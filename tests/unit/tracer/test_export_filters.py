from __future__ import annotations

from collections.abc import Callable

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import obj, ref
from tests.unit.tracer.test_exporting import DEPLOY, export

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]


def test_filters(open_store: OpenStore) -> None:
    store = open_store()
    store.apply(ref(DEPLOY, "web", "a"), obj(DEPLOY, "web", "a",
                                             metadata={"labels": {"app": "web"}}))
    store.apply(ref(DEPLOY, "db", "b"), obj(DEPLOY, "db", "b", metadata={"labels": {"app": "db"}}))
    store.apply(ref("v1.Pod", "p", "a"), obj("v1.Pod", "p", "a"))
    store.apply(ref("scheduling.k8s.io/v1.PriorityClass", "high", ""),
                obj("scheduling.k8s.io/v1.PriorityClass", "high", ""))

    def run(**kwargs: list[str]) -> list[str]:
        arguments: dict[str, list[str]] = {"include_namespaces": [], "exclude_namespaces": [],
                                           "label_selectors": [], "include_kinds": [],
                                           "exclude_kinds": [], **kwargs}
        events, _, _ = export(store, filters=ExportFilters.parse(**arguments))
        return sorted(r.name for e in events for r in e.applied_refs())

    assert run(include_namespaces=["a"]) == ["high", "p", "web"]  # cluster-scoped kept
    assert run(exclude_namespaces=["a"]) == ["db", "high"]
    assert run(label_selectors=["app in (web,db)"]) == ["db", "web"]
    assert run(include_kinds=[DEPLOY]) == ["db", "web"]
    assert run(exclude_kinds=["v1.Pod", "scheduling.k8s.io/v1.PriorityClass"]) == ["db", "web"]


@pytest.mark.parametrize(("kwargs", "problem"), [
    ({"include_namespaces": ["Bad"]}, "not a valid namespace"),
    ({"include_namespaces": ["a"], "exclude_namespaces": ["a"]}, "both included and excluded"),
    ({"include_kinds": ["Deployment"]}, "kind filter 'Deployment' is not a kind key"),
    ({"label_selectors": ["app in (x"]}, "cannot parse"),
])
def test_bad_filters(kwargs: dict[str, list[str]], problem: str) -> None:
    arguments: dict[str, list[str]] = {"include_namespaces": [], "exclude_namespaces": [],
                                       "label_selectors": [], "include_kinds": [],
                                       "exclude_kinds": [], **kwargs}
    with pytest.raises(ConfigError, match=problem):
        ExportFilters.parse(**arguments)
