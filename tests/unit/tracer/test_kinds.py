from __future__ import annotations

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.kinds import KindKey, parse_kind_key

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "group", "version", "kind", "prefix"), [
    ("apps/v1.Deployment", "apps", "v1", "Deployment", "/apis/apps/v1"),
    ("v1.Pod", "", "v1", "Pod", "/api/v1"),
    ("sparkoperator.k8s.io/v1beta2.SparkApplication", "sparkoperator.k8s.io", "v1beta2",
     "SparkApplication", "/apis/sparkoperator.k8s.io/v1beta2"),
])
def test_kind_keys(text: str, group: str, version: str, kind: str, prefix: str) -> None:
    key = parse_kind_key(text)
    assert (key.group, key.version, key.kind, key.api_prefix) == (group, version, kind, prefix)
    assert key.key == text == str(key)
    assert KindKey.of(key.api_version, kind) == key


@pytest.mark.parametrize("text", ["Deployment", "apps/v1/Deployment", "apps.v1.Deployment",
                                  "apps/v1.deployment", "v1.", "/v1.Pod", "Apps/v1.Pod", ""])
def test_bad_kind_keys_explain_the_syntax(text: str) -> None:
    with pytest.raises(ConfigError, match=r"is not a kind key; write group/version\.Kind"):
        parse_kind_key(text)
