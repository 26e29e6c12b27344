from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.tracer.config import SecretPolicy, load_config, parse_config

pytestmark = pytest.mark.unit

SIMKUBE_CONFIG = """
trackedObjects:
  apps/v1.Deployment:
    podSpecTemplatePaths:
      - /spec/template
    trackLifecycle: true
  batch/v1.CronJob:
    podSpecTemplatePath: /spec/jobTemplate/spec/template
  v1.ServiceAccount: {}
  scheduling.k8s.io/v1.PriorityClass:
  sparkoperator.k8s.io/v1beta2.SparkApplication:
    skipOwned: true
"""


def test_simkube_schema_is_accepted_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(SIMKUBE_CONFIG)
    config = load_config(path)
    keys = [kind.kind.key for kind in config.kinds]
    assert keys == ["apps/v1.Deployment", "batch/v1.CronJob", "v1.ServiceAccount",
                    "scheduling.k8s.io/v1.PriorityClass",
                    "sparkoperator.k8s.io/v1beta2.SparkApplication"]
    deployment = config.kinds[0]
    assert deployment.pod_template_paths == ("/spec/template",)
    assert deployment.track_lifecycle
    assert config.kinds[1].pod_template_paths == ("/spec/jobTemplate/spec/template",)
    assert config.kinds[4].skip_owned
    assert config.secrets is SecretPolicy.REDACT
    assert deployment.tracked().kind_key == "apps/v1.Deployment"


def test_extensions_filters_secrets_and_retention() -> None:
    config = parse_config({
        "trackedObjects": {"v1.Pod": {"namespaces": ["a"], "labelSelector": "app=web"},
                           "v1.Secret": {}},
        "excludeNamespaces": ["kube-system"], "namespaces": ["b"], "secrets": "skip",
        "clusterName": "prod", "retention": {"maxAge": "2d", "maxBytes": "1GiB"}},
        source="c.yaml")
    pods, secrets = config.kinds
    assert pods.in_scope("a")
    assert not pods.in_scope("b")
    assert pods.in_scope("")
    assert secrets.in_scope("b")
    assert not secrets.in_scope("kube-system")
    assert pods.label_selector is not None
    assert pods.label_selector.text == "app=web"
    assert config.secrets is SecretPolicy.SKIP
    assert config.cluster_name == "prod"
    assert (config.retention.max_age_seconds, config.retention.max_bytes) == (2 * 86400, 2**30)


def test_default_config_tracks_common_workloads() -> None:
    keys = {kind.kind.key for kind in load_config(None).kinds}
    assert {"apps/v1.Deployment", "batch/v1.CronJob", "v1.Pod"} <= keys


@pytest.mark.parametrize(("raw", "problem"), [
    ({}, "trackedObjects must be a non-empty mapping"),
    ({"trackedObjects": {"v1.Pod": {}}, "tracked": 1}, r"unknown keys \['tracked'\]"),
    ({"trackedObjects": {"Deployment": {}}}, "trackedObjects.Deployment is not usable"),
    ({"trackedObjects": {"v1.Pod": {"podSpecTemplatePaths": "spec"}}}, "list of JSON"),
    ({"trackedObjects": {"v1.Pod": {"podSpecTemplatePaths": ["spec"]}}}, "not a JSON pointer"),
    ({"trackedObjects": {"v1.Pod": {"trackLifecycle": "yes"}}}, "must be true or false"),
    ({"trackedObjects": {"v1.Pod": {"labelSelector": "a in ("}}}, "labelSelector is not valid"),
    ({"trackedObjects": {"v1.Pod": {"colour": 1}}}, r"unknown keys \['colour'\]"),
    ({"trackedObjects": {"v1.Pod": []}}, "must be a mapping"),
    ({"trackedObjects": {"v1.Pod": {}}, "namespaces": ["Bad_NS"]}, "not a valid namespace"),
    ({"trackedObjects": {"v1.Pod": {}}, "secrets": "show"}, "use redact"),
    ({"trackedObjects": {"v1.Pod": {}}, "retention": {"maxAge": "forever"}}, "not a duration"),
    ({"trackedObjects": {"v1.Pod": {}}, "retention": {"keep": 1}}, "retention must be"),
])
def test_config_errors_name_file_and_key(raw: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        parse_config(raw, source="tracer.yaml")
    assert caught.value.message.startswith("tracer.yaml: ")


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("trackedObjects: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")


def test_usage_sampling_is_configured_and_checked() -> None:
    base = {"trackedObjects": {"v1.Pod": {}}}
    assert parse_config(base, source="c").usage.period_seconds == 15.0
    config = parse_config(base | {"usage": {"period": "30s", "maxSamples": 100,
                                            "maxWorkloads": 5}}, source="c")
    assert (config.usage.period_ms, config.usage.max_samples, config.usage.max_series) == (
        30_000, 100, 5)
    assert not parse_config(base | {"usage": {"period": 0}}, source="c").usage.enabled


@pytest.mark.parametrize(("usage", "problem"), [
    ({"period": "500ms"}, "use 1s to 1h, or 0"),
    ({"period": "soon"}, "usage is not valid"),
    ({"maxSamples": 0}, "maxSamples must be 1 to 100000"),
    ({"maxSamples": "many"}, "usage.maxSamples must be a whole number"),
    ({"every": "15s"}, "usage must be a mapping with period"),
    ("15s", "usage must be a mapping with period"),
])
def test_usage_mistakes_name_the_key(usage: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config({"trackedObjects": {"v1.Pod": {}}, "usage": usage}, source="c")


def test_hpas_are_tracked_by_default() -> None:
    config = load_config(None)
    assert config.kind("autoscaling/v2.HorizontalPodAutoscaler") is not None
