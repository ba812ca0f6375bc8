"""Issue 36: a verdict never rests on a probe that ran out of time or got no score.

- A probe that timed out is scored again, first alone, before it becomes a verdict: a reward that was slow
  only because the machine was busy gets its real verdict; one that hangs for real is confirmed and not
  retried again (``ScoringPool._retry_timeouts``).
- The probes a worker's death took down are scored again in a fresh worker that never calls the function
  that stopped it (``ScoringPool._rescore_buried``).
- A probe verdict whose probes all errored or timed out is a skip naming that, never a pass, and every probe
  verdict's count of probes and scored probes is in ``data.probes.evidence`` (``verdicts.evidence``).
"""

from __future__ import annotations

import asyncio
import json

import env_fixtures as fx
import pytest
from conftest import run_script

from vlab.core.result import Result
from vlab.env.pool import ScoringPool
from vlab.env.types import FunctionError, Row, Score
from vlab.kinds.number import probes as numbers
from vlab.reward import probes as rp
from vlab.reward import verdicts


def _score(total, timed_out=(), error=None) -> Score:
    return Score(
        total=total,
        per_function={"correct": total},
        timed_out=list(timed_out),
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
import os


async def slow_first_call(completion, answer) -> float:
    # as on a busy machine: the first call takes far longer than --timeout, every later one is instant
    flag = os.path.join(os.path.dirname(__file__), "called_once")
    if not os.path.exists(flag):
        open(flag, "w").close()
        import asyncio
        await asyncio.sleep(30)
    return 0.0
"""


@pytest.mark.classic
def test_test_reward_retries_a_slow_first_call_alone_and_gives_the_real_verdict(tmp_path):
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    rubric = "vf.Rubric(funcs=[exact_match, slow_first_call], weights=[1.0, 0.0], parser=parser)"
    path = fx.classic_env(tmp_path, "slow_first", fx.EXACT + SLOW_FIRST, rubric)
    run = run_script(
        "test_reward",
        *(str(path), "--env-args", json.dumps({"dataset_path": str(data)}), "--num-examples", "2"),
        *("--timeout", "2", "--json"),
        timeout=600,
    )
    obj = run.json
    ids = {c["id"]: c for c in obj["checks"]}
    retries = obj["data"]["machine_load"]["timeout_retries"]
    assert retries["probes"] >= 1 and retries["recovered"] >= 1, retries
    assert ids["gold_reward"]["status"] == "pass", ids["gold_reward"]
    assert ids["speed"]["status"] != "fail", ids["speed"]  # no function "hanging" once retried alone
    assert run.returncode == obj["exit_code"] == 0, [c for c in obj["checks"] if c["status"] == "fail"]
