from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.selectors import parse_selector

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "labels", "expected"), [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("app!=web", {"app": "web"}, False),
    ("env in (prod, staging)", {"env": "staging"}, True),
    ("env notin (prod)", {"env": "prod"}, False),
    ("env notin (prod)", {}, True),
    ("canary", {"canary": ""}, True),
    ("!canary", {"canary": "yes"}, False),
    ("app=web,tier in (a,b),!canary", {"app": "web", "tier": "b"}, True),
    ("example.com/team=x", {"example.com/team": "x"}, True),
    ("", {"anything": "goes"}, True),
])
def test_matching(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


@pytest.mark.parametrize(("text", "problem"), [
    ("app=web,tier in (a", "unclosed"),
    ("app)", "unmatched"),
    ("env in ()", "lists no values"),
    ("bad key=x", "is not a requirement"),
    ("app=we b", "is not a requirement"),
    ("-app=web", "invalid label key"),
    ("app=web!", "invalid label value"),
])
def test_bad_selectors_name_the_requirement(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_selector(text)
