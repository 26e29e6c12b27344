"""An environment with the project's services for the end-to-end tier.

The integration tier's ``sim_env`` runs the control plane only; these tests need sk-driver,
sk-ctrl and sk-cloudprov too, started the way a user starts them (``skctl env up
--services``). ``SIMKUBE_TEST_SERVICES_ENV`` names a running one to reuse between runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import SimEnv, running_env

SERVICES_ENV_VARIABLE = "SIMKUBE_TEST_SERVICES_ENV"


@pytest.fixture(scope="session")
def services_env() -> Iterator[SimEnv]:
    with running_env(variable=SERVICES_ENV_VARIABLE, prefix="e2e",
                     up_args=("--services",)) as env:
        yield env
