"""An environment with the project's services for the end-to-end tier.

The integration tier's ``sim_env`` runs the control plane only; these tests need sk-driver,
sk-ctrl and sk-cloudprov too, started the way a user starts them (``skctl env up
--services``). ``SIMKUBE_TEST_SERVICES_ENV`` names a running one to reuse between runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from tests.conftest import SimEnv, skctl

SERVICES_ENV_VARIABLE = "SIMKUBE_TEST_SERVICES_ENV"


@pytest.fixture(scope="session")
def services_env() -> Iterator[SimEnv]:
    named = os.environ.get(SERVICES_ENV_VARIABLE)
    name = named or f"e2e-{os.getpid()}"
    if not named:
        skctl("env", "up", "--name", name, "--services")
    status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    try:
        yield SimEnv(name=name, kubeconfig=status["kubeconfig"],
                     api_server=status["api_server"])
    finally:
        if not named:
            skctl("env", "down", "--name", name, check=False)
