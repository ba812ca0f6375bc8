"""A reward's own time limit is the reward's error, never test_reward's "did not return" (issue 35): a judge or
tool call that the reward bounds itself (asyncio.wait_for, a client timeout) raises TimeoutError, which must be
recorded as that error (the judge_error path), while only test_reward's own expired bound marks a reward as
hanging and skips its later calls. That bound is on the call's own time (issue 52, ``vlab.env.evidence``): a call
that waits is a hang at the bound as given whatever the load, one the machine held up is bounded by its own time,
and one the machine starved is stopped as starved (a retry calls it again), never as hung."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
from conftest import SKILL_ROOT

from vlab.core.installed import load_scale
from vlab.env import evidence
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


def _sleeps_sync(trace=None):
    time.sleep(0.6)
    return 1.0


async def _sleeps(trace=None):
    await asyncio.sleep(0.6)
    return 1.0


def _waits_forever_sync(trace=None):
    time.sleep(30)
    return 1.0


def _spins(trace=None):
    while True:
        pass


def _seen_as(monkeypatch, waited_share: float) -> None:
    """The evidence as on a loaded machine: ``waited_share`` of every wall second spent waiting for a CPU."""
    real = evidence.held

    def held(since, pid=None):
        h = real(since, pid)
        return evidence.Held(h.wall, h.cpu, h.wall * waited_share, h.cores)

    monkeypatch.setattr(evidence, "held", held)


def test_a_waiting_call_is_a_hang_at_the_bound_as_given_whatever_the_load(monkeypatch):
    """Issue 52: a call that sleeps or waits uses no CPU, so the machine's load did not slow it. At a load of 10 per
    core it is stopped at the bound as given (issue 36 stretched the bound tenfold by the load), and it hung: it is
    not starved, so nothing retries it."""
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (10.0 * cores, 0.0, 0.0))
    assert load_scale() == 10.0
    for func in (_never_returns, _waits_forever_sync):
        calls = Calls()
        calls.timeout = 0.2
        t0 = time.monotonic()
        err = _call(instrument(func, calls, "trace", False), calls)
        seconds = time.monotonic() - t0
        assert isinstance(err, RewardTimeout) and not err.starved, err
        assert "did not return within 0.2 s (0.0 s of CPU" in str(err), err
        assert seconds < 1.5, f"{func.__name__} stopped after {seconds:.1f} s: the load stretched its bound"
        assert calls.hung == {func.__name__} and not calls.starved


@pytest.mark.parametrize("func", [_sleeps, _sleeps_sync], ids=["async", "sync"])
def test_a_call_the_machine_held_up_is_bounded_by_its_own_time(monkeypatch, func):
    """0.6 s of wall time against a 0.3 s bound, two thirds of it spent waiting for a CPU (the evidence, as a hog on
    every core makes it): 0.2 s of its own time, so it returns its value."""
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    _seen_as(monkeypatch, 2 / 3)
    calls = Calls()
    calls.timeout = 0.3
    assert _call(instrument(func, calls, "trace", False), calls) == 1.0
    assert not calls.hung and not calls.starved


@pytest.mark.parametrize("func", [_never_returns, _waits_forever_sync], ids=["async", "sync"])
def test_a_call_the_machine_starved_is_stopped_as_starved_and_a_retry_calls_it_again(monkeypatch, func):
    """Nearly all of its wall time spent waiting for a CPU: at the bound times evidence.stretch() it is stopped as
    starved (the machine, not the reward), skipped as starved after that, and called again after a retry."""
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    _seen_as(monkeypatch, 0.99)
    calls = Calls()
    calls.timeout = 0.1
    wrapped = instrument(func, calls, "trace", False)
    t0 = time.monotonic()
    first = _call(wrapped, calls)
    assert time.monotonic() - t0 >= 0.1 * evidence.MIN_STRETCH
    assert isinstance(first, RewardTimeout) and first.starved and "starved" in str(first), first
    assert calls.starved == {func.__name__} and not calls.hung
    second = _call(wrapped, calls)
    assert isinstance(second, RewardTimeout) and second.starved and str(second).startswith("skipped"), second
    calls.forget_starved()
    monkeypatch.setattr(evidence, "held", lambda since, pid=None: evidence.Held(9.0, 0.0, 0.0))  # quiet now
    third = _call(wrapped, calls)
    assert isinstance(third, RewardTimeout) and not third.starved and calls.hung == {func.__name__}, third


def test_a_cpu_loop_is_stopped_once_it_had_its_bound_on_a_cpu(monkeypatch):
    monkeypatch.setattr(evidence, "MIN_STRETCH", 1000.0)  # however loaded the machine, it is never starved here
    calls = Calls()
    calls.timeout = 0.3
    err = _call(instrument(_spins, calls, "trace", False), calls)
    assert isinstance(err, RewardTimeout) and not err.starved, err
    cpu = float(str(err).split("(", 1)[1].split(" s of CPU")[0])
    assert cpu >= 0.2, err  # its own time was its time on a CPU
    assert calls.hung == {"_spins"}


@pytest.mark.v1
def test_test_reward_says_how_loaded_the_machine_was(tmp_path):
    """The result carries the load scale at start and end (a starved call's bound stretches by it, evidence.stretch)
    and the seconds it ran."""
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


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="needs Linux scheduler statistics")
def test_the_evidence_tells_a_process_the_machine_starved_from_one_that_sleeps(tmp_path):
    """The real kernel's figures (no fake): a CPU loop at nice 19 on a CPU where two spinners run spends most of its
    wall time waiting for that CPU, so its own time is a small part of its wall time; a sleeping process's own time
    is its wall time, and it used no CPU."""
    import subprocess

    cpu = min(os.sched_getaffinity(0))
    pin = f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\n"
    ready, asleep = tmp_path / "ready", tmp_path / "asleep"
    procs = [subprocess.Popen([sys.executable, "-c", pin + "while True:\n    pass"]) for _ in range(2)]
    starved = pin + f"os.nice(19)\nopen({str(ready)!r}, 'w').close()\nwhile True:\n    pass"
    procs.append(subprocess.Popen([sys.executable, "-c", starved]))
    sleeper = f"import time\nopen({str(asleep)!r}, 'w').close()\ntime.sleep(60)"
    procs.append(subprocess.Popen([sys.executable, "-c", sleeper]))
    try:
        deadline = time.monotonic() + 30
        while not (ready.exists() and asleep.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists() and asleep.exists(), "the processes never started"
        time.sleep(0.1)  # past the sleeper's last instructions before its sleep
        marks = {p.pid: evidence.thread_mark(p.pid) for p in procs[2:]}
        time.sleep(1.0)
        held = {pid: evidence.held(mark, pid) for pid, mark in marks.items()}
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    spun, slept = held[procs[2].pid], held[procs[3].pid]
    assert spun.delay is not None and spun.delay > 0.5 * spun.wall and spun.own < 0.5 * spun.wall, spun
    assert slept.delay is not None and slept.own > 0.9 * slept.wall and slept.cpu < 0.1, slept
