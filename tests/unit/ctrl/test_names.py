"""Run names stay DNS labels; the packaged CRD is the deployable one."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.ctrl.crd import CRD_FILE, crd_manifest, revision
from simkube.ctrl.names import run_name

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[3]


def test_run_name() -> None:
    assert run_name("nightly", 1) == "nightly-r1"
    assert run_name("nightly", 100) == "nightly-r100"


def test_long_run_names_are_cut_to_a_dns_label() -> None:
    name = run_name("a" * 63, 12)
    assert len(name) == 63
    assert name == "a" * 59 + "-r12"
    cut = run_name("x" * 59 + "-yyy", 7)  # the cut lands right after a dash
    assert cut == "x" * 59 + "-r7"


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
    assert (spec["repetitions"]["minimum"], spec["repetitions"]["maximum"]) == (1, 100)
    assert spec["pausedTime"]["format"] == "date-time"
