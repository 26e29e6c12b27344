"""The packaged CRD is the deployable one, and carries the speed rule's ceiling."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.simtime import MAX_SPEED
from simkube.ctrl.crd import CRD_FILE, crd_manifest, revision

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[3]


def test_packaged_crd_equals_deployed_crd() -> None:
    assert CRD_FILE.read_bytes() == (ROOT / "deploy" / "crds" / "simulation.yaml").read_bytes()


def test_crd_shape() -> None:
    crd = crd_manifest()
    assert crd["metadata"]["name"] == "simulations.simkube.dev"
    assert revision(crd) >= 1
    names = crd["spec"]["names"]
    assert names["shortNames"] == ["sim", "sims"]
    assert names["categories"] == ["simkube"]
    assert crd["spec"]["scope"] == "Cluster"
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["State", "Run", "Runs", "Events", "Speed", "Age"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert [list(o["required"]) for o in spec["trace"]["oneOf"]] == [["path"], ["url"],
                                                                      ["tracer"]]
    assert spec["speed"]["exclusiveMinimum"] is True
    assert spec["speed"]["maximum"] == MAX_SPEED  # the schema refuses what sk-driver would
    assert (spec["repetitions"]["minimum"], spec["repetitions"]["maximum"]) == (1, 100)
    assert spec["pausedTime"]["format"] == "date-time"
