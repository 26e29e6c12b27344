"""Fixtures of the sk-cloudprov unit tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.cloudprov.fakes import ScalingSetup


@pytest.fixture
async def setup() -> AsyncIterator[ScalingSetup]:
    setup = ScalingSetup()
    yield setup
    await setup.scaler.close()
