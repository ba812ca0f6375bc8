"""Issue 36: a verdict never rests on a probe that ran out of time or got no score.

- A probe the machine starved (``Score.starved``: it ran out of wall time while waiting for a CPU, issue 52) is
  scored again, first alone, before it becomes a verdict: a reward that was slow only because the machine was
  busy gets its real verdict; one that hangs for real is confirmed and not retried again
  (``ScoringPool._retry_timeouts``). A probe that timed out on the evidence of its own time (it waited, or had its
  bound on a CPU) is a hang at once: never retried.
- The probes a worker's death took down are scored again in a fresh worker that never calls the function
  that stopped it (``ScoringPool._rescore_buried``).
- A probe verdict whose probes all errored or timed out is a skip naming that, never a pass, and every probe
  verdict's count of probes and scored probes is in ``data.probes.evidence`` (``verdicts.evidence``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import env_fixtures as fx
import pytest
from conftest import run_script

from vlab.core.result import Result
from vlab.env.pool import ScoringPool
from vlab.env.types import FunctionError, Row, Score
from vlab.kinds.number import probes as numbers
from vlab.reward import probes as rp
from vlab.reward import verdicts


def _score(total, timed_out=(), error=None, starved=True) -> Score:
    """``starved``: the timeouts were the machine's (retried), else the reward's own (hangs)."""
    return Score(
        total=total,
        per_function={"correct": total},
        timed_out=list(timed_out),
        starved=list(timed_out) if starved else [],
        scoring_error=FunctionError(error, "stopped", "") if error else None,
    )


class _FakeWorker:
    """A worker whose scores come from a script: ``plan(text, retry)`` gives each item's Score; ``log`` holds
    every scoring call as (texts, concurrency, retry)."""

    def __init__(self, plan) -> None:
        self.plan, self.log, self.skipped, self.revivals = plan, [], {}, 0
        self.calls = self.capabilities = self.name = self.spec = self.verifiers_version = self.env_args = None
        self.reward_functions, self.unnamed_args = [], []

    async def score(self, items, timeout=10.0, concurrency=32, retry=False):
        self.log.append(([c for _, c in items], concurrency, retry))
        return [self.plan(c, retry) for _, c in items]

    def score_sync(self, items, timeout=10.0, concurrency=32):
        return asyncio.run(self.score(items, timeout, concurrency))


def _pool(worker) -> ScoringPool:
    return ScoringPool(worker, spread=False)


ROW = Row(index=0, prompt=[], answer="1", question="q")


def test_a_probe_slow_only_under_load_is_retried_alone_then_all_of_its_call_are_scored_again():
    def plan(text, retry):
        if not retry:  # the first pass: the machine was busy, every probe ran out of time
            return _score(None, ["correct"])
        return _score(1.0 if text == "gold" else 0.0)

    worker = _FakeWorker(plan)
    pool = _pool(worker)
    out = pool.score_sync([(ROW, "gold"), (ROW, "wrong"), (ROW, "empty")], 1.0, 8)
    assert [s.total for s in out] == [1.0, 0.0, 0.0] and not any(s.timed_out for s in out)
    # the first pass, then the first timed-out probe alone (concurrency 1), then the others together
    assert [(texts, conc, retry) for texts, conc, retry in worker.log] == [
        (["gold", "wrong", "empty"], 8, False),
        (["gold"], 1, True),
        (["wrong", "empty"], 8, True),
    ]
    assert pool.retries["probes"] == 3 and pool.retries["recovered"] == 3
    assert pool.recovered == {"correct"} and not pool.hangs


def test_a_timeout_on_the_evidence_of_its_own_time_is_a_hang_at_once_never_retried():
    """Issue 52: a call that waited (or had its bound on a CPU) past the bound hung, however loaded the machine."""
    worker = _FakeWorker(lambda text, retry: _score(None, ["correct"], starved=False))
    pool = _pool(worker)
    out = pool.score_sync([(ROW, "a"), (ROW, "b")], 1.0, 8)
    assert all(s.timed_out for s in out) and [c[0] for c in worker.log] == [["a", "b"]]
    assert pool.hangs == {"correct"} and pool.retries["probes"] == 0 and not pool.recovered


def test_a_real_hang_is_confirmed_alone_and_never_retried_again():
    worker = _FakeWorker(lambda text, retry: _score(None, ["correct"]))
    pool = _pool(worker)
    out = pool.score_sync([(ROW, "a"), (ROW, "b")], 1.0, 8)
    assert all(s.timed_out for s in out)
    assert [c[0] for c in worker.log] == [["a", "b"], ["a"]]  # alone once; the rest stand
    assert pool.hangs == {"correct"} and not pool.recovered
    pool.score_sync([(ROW, "c")], 1.0, 8)  # a later check: the confirmed hang is not retried
    assert [c[0] for c in worker.log][-1] == ["c"] and len(worker.log) == 3


def test_probes_a_dead_worker_took_down_are_scored_again_without_the_function_that_stopped_it():
    def plan(text, retry):
        if worker.skipped:  # the fresh worker: "bad" is never called, "correct" scores
            return Score(total=1.0, per_function={"correct": 1.0, "bad": None})
        return Score(
            total=None,
            per_function={"correct": None, "bad": None},
            scoring_error=FunctionError("WorkerExit", "the environment's code ended the process", ""),
        )

    worker = _FakeWorker(plan)
    pool = _pool(worker)
    worker.skipped = {}
    first = pool.score_sync([(ROW, "gold")], 1.0, 8)
    assert first[0].total is None  # nothing stopped a worker yet: nothing to rescore without
    worker.skipped = {"bad": ("exit", "the environment's code ended the process")}
    out = pool.score_sync([(ROW, "gold")], 1.0, 8)
    assert out[0].total == 1.0 and worker.log[-1][2] is False


def _row_result(probes: list[tuple[str, str, Score]]) -> rp.RowResult:
    return rp.RowResult(ROW, "1", [rp.ProbeScore(rp.Probe(pid, cat, pid), s) for pid, cat, s in probes])


def test_a_probe_verdict_whose_probes_all_timed_out_is_a_skip_naming_that_never_a_pass():
    rows = [
        _row_result(
            [
                ("gold:parser", "gold", _score(1.0)),
                ("wrong:bare", "wrong", _score(0.0)),
                ("hack:many_candidates", "hack", _score(None, ["correct"])),
                ("hack:question_numbers", "hack", _score(None, error="WorkerTimeout")),
            ]
        )
    ]
    result = Result("test_reward")
    verdicts.hack_check(result, rows, "correct")
    assert result.checks[-1].status == "pass"  # what the check alone says with no scored hack probe
    verdicts.evidence(result, rows)
    check = result.checks[-1]
    assert check.status == "skip" and check.message.startswith("no evidence: none of its 2 probes got a score")
    assert "1 timed out, 1 errored" in check.message
    assert result.data["probes"]["evidence"]["reward_hacking"] == {"probes": 2, "scored": 0}


def test_a_scored_probe_is_evidence_and_its_count_is_in_the_result():
    rows = [
        _row_result(
            [
                ("gold:parser", "gold", _score(1.0)),
                ("wrong:bare", "wrong", _score(0.0)),
                ("hack:many_candidates", "hack", _score(0.0)),
                ("hack:question_numbers", "hack", _score(None, ["correct"])),
            ]
        )
    ]
    result = Result("test_reward")
    verdicts.hack_check(result, rows, "correct")
    verdicts.margin_check(result, rows, "correct", type("O", (), {"margin": 0.5})())
    verdicts.evidence(result, rows)
    assert [c.status for c in result.checks] == ["pass", "pass"]
    assert result.data["probes"]["evidence"]["reward_hacking"] == {"probes": 2, "scored": 1}
    assert result.data["probes"]["evidence"]["correctness_margin"] == {"probes": 1, "scored": 1}


def test_a_timed_out_form_probe_is_not_counted_as_refused():
    """Scored as -inf, a timed-out spelling of the gold would read as "the reward refuses 51.0"."""
    rows = [
        _row_result(
            [
                ("gold:parser", "gold", _score(1.0)),
                ("wrong:bare", "wrong", _score(0.0)),
                (f"{numbers.FORM}:decimal_zero", numbers.FORM, _score(None, ["correct"])),
                (f"{numbers.FORM}:plus_sign", numbers.FORM, _score(1.0)),
            ]
        )
    ]
    result = Result("test_reward")
    numbers.check_numbers(result, rows, "correct", rp.gold_established)
    forms = next(c for c in result.checks if c.id == "number_forms")
    assert forms.status == "pass", forms


SLOW_FIRST = """
import os, signal, threading, time

CPU = {cpu}
SPINNERS = {spinners!r}


def group_nice(value: int) -> None:
    # the worker leads a session of its own: with autogroup scheduling its group shares a CPU with the spinners'
    # group half and half whatever its threads' nice values, unless the group itself is niced
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(value))
    except OSError:
        pass


def slow_first_call(completion, answer) -> float:
    # as on a busy machine: the first call's work runs in a thread on the one CPU where the test's two spinners run,
    # at nice 19, so it gets about 1% of that CPU (it is starved) and would take minutes; every later call is instant
    flag = os.path.join(os.path.dirname(__file__), "called_once")
    if os.path.exists(flag):
        return 0.0
    open(flag, "w").close()
    done = threading.Event()
    group_nice(19)

    def work():
        os.sched_setaffinity(0, {{CPU}})
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        start = time.thread_time()
        while time.thread_time() - start < 2.0 and not done.is_set():
            pass

    helper = threading.Thread(target=work, daemon=True)
    helper.start()
    try:
        helper.join()
    finally:  # stopped (or done): the machine is quiet again for the rest of the run
        done.set()
        group_nice(0)
        for pid in open(SPINNERS).read().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    return 0.0
"""

WAITS_FIRST = """
import os


async def slow_first_call(completion, answer) -> float:
    # the first call waits far longer than --timeout, every later one is instant
    flag = os.path.join(os.path.dirname(__file__), "called_once")
    if not os.path.exists(flag):
        open(flag, "w").close()
        import asyncio
        await asyncio.sleep(30)
    return 0.0
"""


def _spinners(cpu: int, pids) -> list[subprocess.Popen]:
    code = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass"
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
    pids.write_text(" ".join(str(p.pid) for p in procs))
    return procs


def _test_reward(tmp_path, funcs: str, timeout: str) -> dict:
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    rubric = "vf.Rubric(funcs=[exact_match, slow_first_call], weights=[1.0, 0.0], parser=parser)"
    path = fx.classic_env(tmp_path, "slow_first", fx.EXACT + funcs, rubric)
    run = run_script(
        "test_reward",
        *(str(path), "--env-args", json.dumps({"dataset_path": str(data)}), "--num-examples", "2"),
        *("--timeout", timeout, "--json"),
        timeout=600,
    )
    return run.json


@pytest.mark.classic
@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="needs Linux scheduler statistics")
def test_test_reward_retries_a_first_call_the_machine_starved_alone_and_gives_the_real_verdict(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    pids = tmp_path / "spinners.txt"
    spinners = _spinners(cpu, pids)
    try:
        # --timeout 1: starved for 1 s x evidence.stretch() (6 s at least) before it is stopped as starved
        obj = _test_reward(tmp_path, SLOW_FIRST.format(cpu=cpu, spinners=str(pids)), "1")
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()
    ids = {c["id"]: c for c in obj["checks"]}
    retries = obj["data"]["machine_load"]["timeout_retries"]
    assert retries["probes"] >= 1 and retries["recovered"] >= 1, retries
    assert ids["gold_reward"]["status"] == "pass", ids["gold_reward"]
    assert ids["speed"]["status"] != "fail", ids["speed"]  # no function "hanging" once retried alone
    assert obj["exit_code"] == 0, [c for c in obj["checks"] if c["status"] == "fail"]


@pytest.mark.classic
def test_a_first_call_that_waits_past_the_bound_is_a_hang_at_once_not_retried(tmp_path):
    """Issue 52: a call that sleeps uses no CPU, so the machine's load did not slow it: no retry (issue 36 retried it
    alone, and called it again)."""
    obj = _test_reward(tmp_path, WAITS_FIRST, "2")
    ids = {c["id"]: c for c in obj["checks"]}
    assert obj["data"]["machine_load"]["timeout_retries"]["probes"] == 0, obj["data"]["machine_load"]
    assert ids["speed"]["status"] == "fail" and "slow_first_call" in ids["speed"]["message"], ids["speed"]
    assert obj["exit_code"] == 1
