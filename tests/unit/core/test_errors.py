from __future__ import annotations

import pytest

from simkube.core.errors import BuildError, ConfigError, EnvironmentStateError, SimkubeError

pytestmark = pytest.mark.unit


def test_message_and_hint() -> None:
    error = ConfigError("bad port", hint="pick another")
    assert str(error) == "bad port\n  hint: pick another"
    assert str(SimkubeError("plain")) == "plain"


def test_each_kind_has_its_own_exit_code() -> None:
    codes = {cls.exit_code for cls in (SimkubeError, ConfigError, EnvironmentStateError,
                                       BuildError)}
    assert len(codes) == 4
