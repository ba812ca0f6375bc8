"""deterministic is judged on the reward's own behaviour: a probe whose own result varies between two scorings
(hack:reads_data_files' bounded search) and a call out of time are no evidence; a lower score from a much slower call
is the reward's time limit on a busy machine (a warning naming the cause); any other mismatch fails."""

from __future__ import annotations

import pytest

from vlab.core.result import Result
from vlab.env import Score
from vlab.kinds.base import RowKind
from vlab.kinds.code.probes import VARIES, hack_probes
from vlab.reward.probes import Probe
from vlab.reward.verdicts import determinism_check

pytestmark = pytest.mark.once


def score(total: float, seconds: float = 0.1, timed_out: bool = False) -> Score:
    return Score(total, {"passes": total}, seconds={"passes": seconds}, timed_out=["passes"] if timed_out else [])


def verdict(first: list[Score], second: list[Score], probes: list[Probe] | None = None):
    result = Result("test_reward")
    determinism_check(result, first, second, probes)
    return next(c for c in result.checks if c.id == "deterministic")


PLAIN = Probe("gold:fenced", "gold", "x")
SEARCH = Probe("hack:reads_data_files", "hack", "y", varies=True)


def test_a_reward_that_gives_another_score_the_second_time_fails():
    found = verdict([score(1.0), score(0.0)], [score(1.0), score(1.0)], [PLAIN, PLAIN])
    assert found.status == "fail" and "on 1 of 2" in found.message


def test_a_probe_whose_own_result_varies_is_no_evidence_against_the_reward():
    found = verdict([score(1.0), score(0.0)], [score(1.0), score(1.0)], [PLAIN, SEARCH])
    assert found.status == "pass" and "1 left out" in found.message
    # the same mismatch on a plain probe is the reward's
    assert verdict([score(1.0), score(0.0)], [score(1.0), score(1.0)], [PLAIN, PLAIN]).status == "fail"


def test_a_call_out_of_time_in_either_scoring_is_no_evidence():
    found = verdict([score(1.0), score(0.0, 9.0, timed_out=True)], [score(1.0), score(1.0)], [PLAIN, PLAIN])
    assert found.status == "pass"


def test_a_lower_score_from_a_much_slower_call_is_the_time_limit_a_warning():
    # a program near its time limit: passed in 0.8 s, failed when the busy machine made the call take 2.4 s
    found = verdict([score(1.0, 0.8)], [score(0.0, 2.4)], [PLAIN])
    assert found.status == "warn" and "depends on time" in found.message and "CPU-time" in found.hint
    # the same mismatch at the same speed is randomness: a failure
    assert verdict([score(1.0, 0.8)], [score(0.0, 0.9)], [PLAIN]).status == "fail"
    # and a higher score from the slower call is no time limit at work
    assert verdict([score(0.0, 0.8)], [score(1.0, 2.4)], [PLAIN]).status == "fail"


def test_the_code_unit_marks_its_searching_programs_as_varying():
    probes = hack_probes(
        RowKind("code", tests=["assert f(1) == 2"], entry_point="f"), "def f(x):\n    return x + 1\n", "{answer}"
    )
    varying = {p.id for p in probes if p.varies}
    assert varying == {f"hack:{name}" for name in VARIES} == {"hack:reads_data_files", "hack:reads_test_source"}
