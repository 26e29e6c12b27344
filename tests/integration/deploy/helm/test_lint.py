"""``helm lint`` and ``helm template`` for the chart's defaults and every documented values
file (examples/), and the values schema refusing a wrong type before anything renders.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.deploy.helm.chart import CHART, EXAMPLES, Helm
from tests.integration.deploy.manifests import PART_OF

pytestmark = pytest.mark.integration


def test_every_example_is_listed_in_the_docs() -> None:
    assert len(EXAMPLES) >= 5  # the glob found the files at all
    docs = (CHART.parents[2] / "docs" / "helm.md").read_text()
    for path in EXAMPLES:
        assert f"examples/{path.name}" in docs, path.name


def test_version_is_the_pinned_one(helm: Helm) -> None:
    assert helm.ok("version", "--short").startswith("v3.22.0")


@pytest.mark.parametrize("values", [None, *EXAMPLES], ids=lambda p: p.name if p else "defaults")
def test_lint_passes_strictly(helm: Helm, values: Path | None) -> None:
    out = helm.ok("lint", "--strict", CHART, *(["--values", values] if values else []))
    assert "1 chart(s) linted, 0 chart(s) failed" in out, out


@pytest.mark.parametrize("values", EXAMPLES, ids=lambda p: p.name)
def test_every_object_renders_labelled(helm: Helm, values: Path) -> None:
    objects = helm.template(values)
    assert objects
    for o in objects:
        labels = o["metadata"].get("labels") or {}
        assert labels.get(PART_OF[0]) == PART_OF[1], (o["kind"], o["metadata"]["name"])


@pytest.mark.parametrize(("assignment", "field", "message"), [
    ("driver:\n  grace: thirty\n", "/driver/grace", "want integer"),
    ("clusterAutoscaler:\n  args: --scan-interval=2s\n", "/clusterAutoscaler/args",
     "want array"),
    ("tracer:\n  enabled: \"yes\"\n", "/tracer/enabled", "want boolean"),
    ("ctrl:\n  retries: 3\n", "/ctrl", "additional properties 'retries' not allowed"),
    ("logLevel: verbose\n", "/logLevel", "must be one of"),
    ("clusterAutoscaler:\n  args: [--namespace=kube-system]\n", "/clusterAutoscaler/args/0",
     "'not' failed"),
], ids=["integer", "array", "boolean", "unknown-key", "enum", "wiring-flag"])
def test_the_schema_refuses_bad_values(helm: Helm, tmp_path: Path, assignment: str,
                                       field: str, message: str) -> None:
    values = tmp_path / "bad.yaml"
    values.write_text(assignment)
    for command in ("lint", "template"):
        result = helm.run(command, CHART, "--values", values)
        assert result.returncode != 0, (command, result.stdout)
        text = result.stdout + result.stderr
        assert "values don't meet the specifications of the schema" in text, text
        assert field in text, text
        assert message in text, text
