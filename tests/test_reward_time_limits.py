"""A reward's own time limit is the reward's error, never test_reward's "did not return" (issue 35): a judge or
tool call that the reward bounds itself (asyncio.wait_for, a client timeout) raises TimeoutError, which must be
recorded as that error (the judge_error path), while only test_reward's own expired bound marks a reward as
hanging and skips its later calls."""

from __future__ import annotations

import asyncio

from vlab.env.instrument import Calls, RewardTimeout, instrument


async def _own_limit(trace=None):
    await asyncio.wait_for(asyncio.sleep(5), 0.01)  # the reward's own limit: raises TimeoutError at once
    return 1.0


async def _never_returns(trace=None):
    await asyncio.sleep(30)
    return 1.0


def _call(wrapped, calls: Calls):
    async def go():
        try:
            return await wrapped(trace=None)
        except BaseException as err:  # noqa: BLE001 - the test reads what came out
            return err

    return asyncio.run(go())


def test_a_timeout_the_reward_raises_itself_is_its_error_and_later_calls_still_run():
    calls = Calls()
    calls.timeout = 5.0
    wrapped = instrument(_own_limit, calls, "trace", False)
    first, second = _call(wrapped, calls), _call(wrapped, calls)
    assert type(first) is TimeoutError and type(second) is TimeoutError, (first, second)
    assert "_own_limit" not in calls.hung


def test_only_our_own_bound_marks_a_reward_as_hanging():
    calls = Calls()
    calls.timeout = 0.2
    wrapped = instrument(_never_returns, calls, "trace", False)
    first = _call(wrapped, calls)
    assert isinstance(first, RewardTimeout) and "did not return within 0.2 s" in str(first), first
    assert "_never_returns" in calls.hung
    second = _call(wrapped, calls)
    assert isinstance(second, RewardTimeout) and "earlier call" in str(second), second
