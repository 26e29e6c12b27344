"""One retry idiom for an unreachable sk-driver: transient refusals retried within the
budget, others raised at once, the budget renewed once the driver answers."""

from __future__ import annotations

import pytest

from simkube.ctrl.driving import DriverError
from simkube.ctrl.retrying import Retrier, SimulationFailedError
from tests.unit.ctrl.fakes import NOT_FOUND, UNAVAILABLE, refusal

pytestmark = pytest.mark.unit


class Flaky:
    def __init__(self, *errors: DriverError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


async def test_transient_refusals_are_retried_until_the_driver_answers() -> None:
    flaky = Flaky(refusal(UNAVAILABLE), refusal(UNAVAILABLE))
    retrier = Retrier(address="d:1", budget=5, delay=0.001)
    assert await retrier.call(flaky, what="list runs") == "answer"
    assert flaky.calls == 3


async def test_a_refusal_that_is_not_transient_is_raised_at_once() -> None:
    flaky = Flaky(refusal(NOT_FOUND, "no such run"))
    with pytest.raises(DriverError, match="no such run"):
        await Retrier(address="d:1", budget=5, delay=0.001).call(flaky, what="x")
    assert flaky.calls == 1


async def test_past_the_budget_the_simulation_fails_naming_the_driver() -> None:
    flaky = Flaky(*[refusal(UNAVAILABLE, "refused")] * 1000)
    retrier = Retrier(address="d:1", budget=0.02, delay=0.005)
    with pytest.raises(SimulationFailedError) as caught:
        await retrier.call(flaky, what="start run s-r1")
    assert caught.value.message == ("sk-driver at d:1 did not answer for 0s "
                                    "(start run s-r1): refused")
    assert 1 < flaky.calls < 1000


async def test_reset_gives_the_next_outage_the_whole_budget() -> None:
    retrier = Retrier(address="d:1", budget=0.5, delay=0.3)
    await retrier.backoff(refusal(UNAVAILABLE), what="x")
    await retrier.backoff(refusal(UNAVAILABLE), what="x")  # 0.3 s of a 0.5 s budget used
    retrier.reset()
    await retrier.backoff(refusal(UNAVAILABLE), what="x")  # a new outage: no failure
    await retrier.backoff(refusal(UNAVAILABLE), what="x")
    with pytest.raises(SimulationFailedError):
        await retrier.backoff(refusal(UNAVAILABLE), what="x")
