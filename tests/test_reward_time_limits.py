"""A reward's own time limit is the reward's error, never test_reward's "did not return" (issue 35): a judge or
tool call that the reward bounds itself (asyncio.wait_for, a client timeout) raises TimeoutError, which must be
recorded as that error (the judge_error path), while only test_reward's own expired bound marks a reward as
hanging and skips its later calls."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from conftest import SKILL_ROOT

from vlab.core.installed import load_scale
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


def test_only_our_own_bound_marks_a_reward_as_hanging(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # an idle machine: the bound as given
    calls = Calls()
    calls.timeout = 0.2
    wrapped = instrument(_never_returns, calls, "trace", False)
    first = _call(wrapped, calls)
    assert isinstance(first, RewardTimeout) and "did not return within 0.2 s" in str(first), first
    assert "_never_returns" in calls.hung
    second = _call(wrapped, calls)
    assert isinstance(second, RewardTimeout) and "earlier call" in str(second), second


async def _slow(trace=None):
    await asyncio.sleep(0.5)
    return 1.0


def test_the_bound_grows_with_the_machines_load_so_a_slow_machine_is_no_hang(monkeypatch):
    """A call that takes 0.5 s against a 0.2 s bound hangs on an idle machine; with the load at 10 per core the
    bound is ten times as long, and the same call returns its value (issue 36: verdicts must not move with load)."""
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (10.0 * cores, 0.0, 0.0))
    assert load_scale() == 10.0
    calls = Calls()
    calls.timeout = 0.2
    assert _call(instrument(_slow, calls, "trace", False), calls) == 1.0
    assert calls.scale_seen == 10.0 and "_slow" not in calls.hung
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert load_scale() == 1.0
    idle = Calls()
    idle.timeout = 0.2
    assert isinstance(_call(instrument(_slow, idle, "trace", False), idle), RewardTimeout)


@pytest.mark.v1
def test_test_reward_says_how_loaded_the_machine_was(tmp_path):
    """The result carries the time bounds' load scale at start and end and the seconds it ran."""
    import json

    from conftest import run_script

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"question": f"{i} + 1?", "answer": str(i + 1)}) + "\n" for i in range(6)))
    env = SKILL_ROOT / "templates" / "environments" / "v1-numeric"
    proc = run_script("test_reward", str(env), "--env-args", json.dumps({"dataset_path": str(data)}), "--json")
    load = proc.json["data"]["machine_load"]
    assert load["bound_scale_at_start"] >= 1.0 and load["bound_scale_at_end"] >= 1.0 and load["seconds"] > 0, load


def test_an_external_commands_bound_grows_with_the_load_so_a_slow_cli_start_is_no_hang(monkeypatch):
    """CI found `prime --version` (0.7 s idle) past its 20 s bound with four test workers on two cores, and
    preflight said the CLI hangs: run_command stretches its bound by the load as test_reward's bounds do."""
    from vlab.core.installed import run_command
    from vlab.core.result import ExternalError

    slow_start = [sys.executable, "-c", "import time; time.sleep(0.6); print('ok')"]
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (100.0 * cores, 0.0, 0.0))  # 30 s: however loaded it really is
    assert run_command(slow_start, timeout=0.3).stdout.strip() == "ok"
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    with pytest.raises(ExternalError, match=r"did not answer within 0.3 s \(timed out"):
        run_command(slow_start, timeout=0.3)
