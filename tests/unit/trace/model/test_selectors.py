from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.trace import ObjectRef
from simkube.trace.model.selectors import Match, SelectorOp, parse_selector

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "labels", "expected"), [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("tier in (a, b)", {"tier": "b"}, True),
    ("tier notin (a,b)", {"tier": "a"}, False),
    ("tier notin (a,b)", {}, True),
    ("legacy", {"legacy": ""}, True),
    ("!legacy", {"legacy": "x"}, False),
    ("app=web,tier in (a,b),!legacy", {"app": "web", "tier": "a"}, True),
    ("example.com/team=core", {"example.com/team": "core"}, True),
    ("app=", {"app": ""}, True),
])
def test_kubectl_selector_semantics(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


def test_parsed_requirements_keep_their_text() -> None:
    selector = parse_selector("env in (prod,staging)")
    assert selector.requirements[0].op is SelectorOp.IN
    assert str(selector) == "env in (prod,staging)"


@pytest.mark.parametrize("text", ["", "a=b=c", "in (x)", "app in x", "-bad=1"])
def test_unparseable_selectors_name_the_part(text: str) -> None:
    with pytest.raises(ConfigError, match="selector"):
        parse_selector(text)


def test_match_needs_every_part_and_kinds_by_bare_or_full_name() -> None:
    ref = ObjectRef(api_version="apps/v1", kind="Deployment", namespace="dsb", name="x")
    assert Match().matches(ref, {})
    assert Match(kinds=frozenset({"deployment"})).matches(ref, {})
    assert Match(kinds=frozenset({"apps/v1.Deployment"})).matches(ref, {})
    assert not Match(kinds=frozenset({"v1.Pod"})).matches(ref, {})
    assert not Match(namespaces=frozenset({"other"})).matches(ref, {})
    both = Match(namespaces=frozenset({"dsb"}), selector=parse_selector("app=x"))
    assert both.matches(ref, {"app": "x"})
    assert not both.matches(ref, {"app": "y"})
