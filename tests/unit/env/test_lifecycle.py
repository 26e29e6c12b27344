"""KWOK's options as the environment writes them (issue #26)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simkube.env.lifecycle import KWOK_OPTIONS

pytestmark = pytest.mark.unit
DEPLOYED = Path(__file__).resolve().parents[3] / "deploy" / "kwok" / "kwok.yaml"


def test_kwok_relists_a_new_nodes_pods() -> None:
    """KWOK 0.8.0 applies no defaults to a KwokConfiguration it reads: without these, no
    worker lists a new node's pods, and a pod seen before its node is never started."""
    options = yaml.safe_load(KWOK_OPTIONS)["options"]
    assert options["podsOnNodeSyncParallelism"] >= 1
    assert options["enablePodsOnNodeSyncListPager"] is True  # a consistent list


def test_the_deployed_kwok_has_the_same_options() -> None:
    assert yaml.safe_load(DEPLOYED.read_text()) == yaml.safe_load(KWOK_OPTIONS)
