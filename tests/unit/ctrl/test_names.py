"""sk-ctrl's own names are a contract with its RBAC: the sim overlay grants by name and namespace.

A rename here that the Role does not follow makes sk-ctrl fail with 403 in a real cluster and
nowhere else, so this reads the deployed Roles and checks the names sk-ctrl uses are the ones
they grant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.ctrl.names import DEFAULT_LEASE_NAMESPACE, EVENTS_NAMESPACE, LEASE_NAME

pytestmark = pytest.mark.unit
OVERLAY = Path(__file__).resolve().parents[3] / "deploy" / "overlays" / "sim" / "sk-ctrl.yaml"


def roles() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(OVERLAY.read_text())
            if doc and doc.get("kind") == "Role"]


def test_the_lease_role_grants_exactly_sk_ctrls_lease() -> None:
    granted = [(role["metadata"]["namespace"], name) for role in roles()
               for rule in role["rules"] if "leases" in rule.get("resources", [])
               for name in rule.get("resourceNames", [])]
    assert granted == [(DEFAULT_LEASE_NAMESPACE, LEASE_NAME)]


def test_events_are_written_where_the_role_allows() -> None:
    namespaces = {role["metadata"]["namespace"] for role in roles()
                  for rule in role["rules"] if "events" in rule.get("resources", [])}
    assert EVENTS_NAMESPACE in namespaces
