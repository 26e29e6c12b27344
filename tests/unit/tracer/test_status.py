from __future__ import annotations

import pytest

from simkube.gen.simkube.tracer.v1 import tracer_pb2
from simkube.tracer.status import WatchState

pytestmark = pytest.mark.unit


def test_watch_states_mirror_the_proto_enum() -> None:
    assert {state.name: state.value for state in WatchState} == {
        name.removeprefix("WATCH_STATE_"): value
        for name, value in tracer_pb2.WatchState.items()}
