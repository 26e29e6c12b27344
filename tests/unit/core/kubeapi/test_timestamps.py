"""Kubernetes timestamps read as Unix time."""

from __future__ import annotations

import pytest

from simkube.core.kubeapi import unix_s

pytestmark = pytest.mark.unit


def test_a_timestamp_in_z_or_with_an_offset_is_its_instant() -> None:
    assert unix_s("2026-11-28T10:00:00Z") == 1795860000.0
    assert unix_s("2026-11-28T11:00:00+01:00") == 1795860000.0
    assert unix_s("2026-11-28T10:00:00.250000Z") == 1795860000.25


@pytest.mark.parametrize("text", [None, "", 17, "yesterday", "2026-11-28T10:00:00"])
def test_absent_malformed_or_zoneless_is_none(text: object) -> None:
    assert unix_s(text) is None
