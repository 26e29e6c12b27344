"""Fixtures of the chart's tests: the helm built by ``skctl env build`` (a cached binary,
as kubectl is), each run in a home directory of its own."""

from __future__ import annotations

import pytest

from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from tests.integration.deploy.helm.chart import Helm


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return Helm(binary=binary_path(Binary.HELM), home=tmp_path_factory.mktemp("helm-home"))
