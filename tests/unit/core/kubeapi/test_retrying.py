from __future__ import annotations

import asyncio

import pytest

from simkube.core.kubeapi import ApiError, Backoff, poll, retry

pytestmark = pytest.mark.unit


def test_backoff_grows_with_jitter_up_to_the_cap() -> None:
    backoff = Backoff(base=1, cap=8, floor=1)
    delays = [backoff.next_delay() for _ in range(10)]
    assert all(1 <= delay <= 8 for delay in delays)
    assert delays[0] == 1  # the first ceiling is the base
    backoff.reset()
    assert backoff.failures == 0


def test_backoff_without_jitter_doubles_to_the_cap() -> None:
    backoff = Backoff(base=0.5, cap=10, jitter=False)
    assert [backoff.next_delay() for _ in range(7)] == [0.5, 1, 2, 4, 8, 10, 10]


def test_jittered_delays_stay_between_floor_and_ceiling() -> None:
    backoff = Backoff(base=0.4, floor=0.1, cap=10)
    for failures in range(1, 2000):
        delay = backoff.next_delay()
        assert 0.1 <= delay <= min(10, 0.4 * 2 ** min(failures - 1, 60))


def fails(errors: list[ApiError]) -> tuple[list[int], object]:
    calls: list[int] = []

    async def call() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return "done"
    return calls, call


async def test_retry_retries_transient_errors_then_succeeds() -> None:
    calls, call = fails([ApiError(code=503, reason="r", message=""),
                         ApiError(code=0, reason="r", message="")])
    delays = Backoff(base=0.001, jitter=False)
    assert await retry(call, attempts=5, backoff=delays) == "done"  # type: ignore[arg-type]
    assert len(calls) == 3
    assert delays.failures == 2


async def test_retry_raises_what_is_not_transient_at_once() -> None:
    calls, call = fails([ApiError(code=404, reason="NotFound", message="")])
    with pytest.raises(ApiError) as caught:
        await retry(call, attempts=5, backoff=Backoff(base=0.001))  # type: ignore[arg-type]
    assert caught.value.code == 404
    assert len(calls) == 1


async def test_retry_gives_up_after_its_attempts() -> None:
    calls, call = fails([ApiError(code=503, reason="r", message=str(i)) for i in range(5)])
    with pytest.raises(ApiError, match="r \\(503\\): 2"):
        await retry(call, attempts=3, backoff=Backoff(base=0.001))  # type: ignore[arg-type]
    assert len(calls) == 3


async def test_retry_on_decides_what_is_retried() -> None:
    calls, call = fails([ApiError(code=409, reason="Conflict", message="")])
    result = await retry(call, attempts=2, backoff=Backoff(base=0.001),  # type: ignore[arg-type]
                         retry_on=lambda error: error.code == 409)
    assert (result, len(calls)) == ("done", 2)


async def test_poll_until_true_or_timeout() -> None:
    answers = iter([False, False, True])

    async def probe() -> bool:
        return next(answers)
    assert await poll(probe, timeout=1, interval=0.001)

    async def never() -> bool:
        return False
    started = asyncio.get_running_loop().time()
    assert not await poll(never, timeout=0.05, interval=0.01)
    assert asyncio.get_running_loop().time() - started >= 0.05
