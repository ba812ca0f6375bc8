"""Issue 52: a hang is named in seconds, beside a CPU hog on every core too, and a slow reward is not a hang.

Each hang case of ``tests/hang_cases.py`` (a sync sleep that ignores SIGALRM, ``time.sleep`` in an async reward of
either generation, a CPU loop that never returns in a sync and in an async reward) runs through test_reward at
``--timeout 5`` while ``tests/cpu_hog.py`` spins on every core (started here, stopped here). The run must name
``bad`` as hanging, without a retry (a call that waited is a hang at its bound whatever the load; a CPU loop at
its bound of CPU time), within 30 s of wall time measured here. A reward whose first call spends 4 s of CPU time
beside the same hog (more than 5 s of wall time) is not stopped at all: it had less than its bound on a CPU.

The 30 s is the issue's figure for the 2-core development machine, where loading this environment beside the hog
takes up to ``LOAD_BESIDE_HOG`` s; on a machine busier still (the rest of ``make test`` on the same cores), the
bound grows with the load time the run itself reports, since every part of the run is CPU work slowed alike.
"""

from __future__ import annotations

import time

import hang_cases as hc
import pytest

pytestmark = pytest.mark.slow

TIMEOUT = 5.0
NAMED_WITHIN = 30.0
LOAD_BESIDE_HOG = 8.0  # seconds test_reward took to load this environment beside the hog (2 cores, 2026-11-29)


def _beside_hog(tmp_path, name: str, body: str | None = None, per_core: int = 1) -> tuple[dict, float]:
    env, data = hc.build(tmp_path, name, body)
    hog = hc.start_hog(per_core=per_core)
    try:
        time.sleep(1)  # the hog spins on every core before test_reward starts
        obj, seconds, stderr = hc.run_test_reward(env, data, TIMEOUT)
    finally:
        hc.stop_hog(hog)
    assert obj["exit_code"] in (0, 1), stderr
    return obj, seconds


def _bound(obj: dict) -> float:
    load = float((obj["data"].get("environment") or {}).get("load_seconds") or LOAD_BESIDE_HOG)
    return NAMED_WITHIN * max(1.0, load / LOAD_BESIDE_HOG)


def _case(name: str):
    mark = pytest.mark.v1 if hc.CASES[name].generation == "v1" else pytest.mark.classic
    return pytest.param(name, marks=mark, id=name)


@pytest.mark.parametrize("name", [_case(n) for n in hc.HANGS])
def test_each_hang_is_named_within_30_s_beside_a_cpu_hog(tmp_path, name):
    obj, seconds = _beside_hog(tmp_path, name)
    check = hc.CASES[name].check
    message = hc.named(obj, check)
    assert obj["exit_code"] == 1 and message, [c for c in obj["checks"] if c["status"] != "pass"]
    if check == "worker_timeout":  # held the worker: stopped by test_reward, once
        assert "while scoring in bad (1x)" in message, message
    load = obj["data"]["machine_load"]
    assert load["timeout_retries"]["probes"] == 0, load  # its own time said hang: no retry, no stretched bound
    assert load["fresh_workers"] == 0, load  # the call was stopped inside the worker, which lived on
    assert seconds < _bound(obj), f"named after {seconds:.1f} s (bound {_bound(obj):.0f} s): {load}"


@pytest.mark.classic
def test_a_cpu_bound_reward_that_finishes_under_its_bound_is_no_hang_beside_a_cpu_hog(tmp_path):
    """4 s of CPU time at --timeout 5: beside the hog it takes more than 5 s of wall time, and is not stopped (two
    spinners a core: the call gets at most half a core, with the kernel's autogroups or without, on any machine)."""
    body = hc.slow_body(0.8 * TIMEOUT, tmp_path / "called")
    obj, seconds = _beside_hog(tmp_path, hc.SLOW_BUT_FINISHING, body, per_core=2)
    ids = {c["id"]: c for c in obj["checks"]}
    assert obj["exit_code"] == 0, [c for c in obj["checks"] if c["status"] == "fail"]
    assert ids["speed"]["status"] != "fail" and "worker_timeout" not in ids, ids.get("speed")
    assert obj["data"]["machine_load"]["timeout_retries"]["probes"] == 0, obj["data"]["machine_load"]
    slowest = obj["data"]["timing"]["bad"]["max_ms"] / 1000
    if slowest <= TIMEOUT:  # the verdict above held, but this run did not make the case the test is about
        pytest.skip(f"the first call took {slowest:.1f} s of wall time: the scheduler gave it a core beside the hog")
