"""Fixtures shared by every tier.

``sim_env`` gives integration and end-to-end tests a running local environment: the one named
by ``SIMKUBE_TEST_ENV`` when set (so a developer can keep one up between runs), otherwise a
fresh one started through the real ``skctl env up`` and stopped after the session.
``namespace`` gives each test its own namespace, deleted afterwards.

Hypothesis runs the ``deterministic`` profile unless ``SIMKUBE_HYPOTHESIS_PROFILE`` names
another: the same examples on every run, so ``make test`` passes or fails the same way
everywhere. ``make fuzz`` selects ``random`` to search new examples.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from kubernetes_asyncio import client, config

SKCTL = str(Path(sys.executable).parent / "skctl")
TEST_ENV_VARIABLE = "SIMKUBE_TEST_ENV"
SESSION_NODES = 4
HYPOTHESIS_PROFILE_VARIABLE = "SIMKUBE_HYPOTHESIS_PROFILE"

# Examples are drawn from a hash of each test (derandomize, which also turns off the example
# database, so failures saved on one machine do not change what another runs). Health checks
# and deadlines that measure time are the remaining source of flakiness: too_slow is off, and
# the deadline matches the fuzzer's per-input limit, far above any example's normal time.
settings.register_profile("deterministic", derandomize=True, deadline=timedelta(seconds=2),
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
# New examples on every run; failures are saved in .hypothesis/ and replayed first next time,
# and print_blob prints the @reproduce_failure line to pin one down.
settings.register_profile("random", derandomize=False, max_examples=500,
                          deadline=timedelta(seconds=2), print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get(HYPOTHESIS_PROFILE_VARIABLE, "deterministic"))


@dataclass(frozen=True)
class SimEnv:
    name: str
    kubeconfig: str
    api_server: str


def skctl(*args: str, check: bool = True, env: dict[str, str] | None = None,
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real skctl command as a user would."""
    result = subprocess.run([SKCTL, *args], capture_output=True, text=True, env=env,
                            timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"skctl {' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


@contextlib.contextmanager
def running_env(*, variable: str, prefix: str, up_args: tuple[str, ...]) -> Iterator[SimEnv]:
    """The environment named by ``$variable``, else a new one started with ``up_args`` and
    stopped afterwards."""
    named = os.environ.get(variable)
    name = named or f"{prefix}-{os.getpid()}"
    if not named:
        skctl("env", "up", "--name", name, *up_args)
    status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
    try:
        yield SimEnv(name=name, kubeconfig=status["kubeconfig"],
                     api_server=status["api_server"])
    finally:
        if not named:
            skctl("env", "down", "--name", name, check=False)


# Names an environment started with --metrics-server for the tests that need one (else each
# starts its own and stops it after).
METRICS_ENV_VARIABLE = "SIMKUBE_TEST_METRICS_ENV"
METRICS_UP_ARGS = ("--nodes", "1", "--metrics-server")


@pytest.fixture(scope="session")
def sim_env() -> Iterator[SimEnv]:
    with running_env(variable=TEST_ENV_VARIABLE, prefix="pytest",
                     up_args=("--nodes", str(SESSION_NODES))) as env:
        yield env


@pytest.fixture
async def kube(sim_env: SimEnv) -> AsyncIterator[client.ApiClient]:
    api = await config.new_client_from_config(config_file=sim_env.kubeconfig)
    async with api:
        yield api


@pytest.fixture
async def namespace(kube: client.ApiClient) -> AsyncIterator[str]:
    name = f"t-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(kube)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        await core.delete_namespace(name)


def _skipped(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return len(reporter.stats.get("skipped", [])) if reporter else 0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A skipped test hides a missing binary or cluster: count it as a failure."""
    if _skipped(session.config) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    skipped = _skipped(config)
    if skipped:
        terminalreporter.write_line(
            f"error: {skipped} test(s) were skipped; every test must run, so this run fails",
            red=True)
