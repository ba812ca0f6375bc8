"""Issue 36's proof: test_reward's verdict does not move with the machine's load.

A correct and a broken environment of three kinds (numbers through math-verify, multiple choice, code with
tests run in child processes) are each checked twice: on the machine as it is, and beside a CPU hog that
keeps every core busy (spawned here, bounded in time). The exit code and the failing checks must be the
same in both runs. Under load a bound is stretched by the load average, and a probe that still runs out
of time is retried alone before it becomes a verdict (``env.pool``), so a correct reward is never called
hanging because other work shared its cores.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT

from vlab.core.result import Result
from vlab.reward.checks import TestRewardRequest, run_test_reward

pytestmark = [pytest.mark.slow, pytest.mark.classic]

TEMPLATES = SKILL_ROOT / "templates" / "environments"
HOG_SECONDS = 600  # the hog's own end, should the test die before it stops it


def _cases(tmp_path, kind: str):
    """(name, environment, data, options, expected exit code) for one kind: correct, then broken."""
    if kind == "numeric":
        data = fx.write_rows(tmp_path, fx.numeric_rows("int", 6) + fx.numeric_rows("half", 3), "numeric.jsonl")
        broken = fx.write_env(tmp_path, "truncating", *fx.NUMERIC["truncating"])
        return [("correct", TEMPLATES / "classic-numeric", data, {}, 0), ("broken", broken, data, {}, 1)]
    if kind == "choice":
        broken = fx.write_env(tmp_path, "index_as_is", *fx.CHOICE["index_as_is"])
        return [
            (
                "correct",
                TEMPLATES / "classic-multiple-choice",
                fx.write_rows(tmp_path, fx.choice_rows(8, column="answer"), "a.jsonl"),
                {},
                0,
            ),
            ("broken", broken, fx.write_rows(tmp_path, fx.choice_rows(8), "key.jsonl"), {}, 1),
        ]
    broken = fx.write_env(tmp_path, "exit_code_env", fx.EXIT_CODE_REWARD, fx.CODE_TO_ROW, code=True)
    return [
        (
            "correct",
            TEMPLATES / "classic-code",
            fx.write_rows(tmp_path, fx.template_code_rows(3), "code.jsonl"),
            {"num_examples": 1},
            0,
        ),
        ("broken", broken, fx.write_rows(tmp_path, fx.code_rows(3), "raw.jsonl"), {"num_examples": 1}, 1),
    ]


def _verdict(path, data, options) -> tuple[int, list[str]]:
    result = Result("test_reward")
    run_test_reward(TestRewardRequest(env=str(path), env_args={"dataset_path": str(data)}, **options), result)
    return result.exit_code(), sorted(c.id for c in result.checks if c.status == "fail")


def _start_hog() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("cpu_hog.py")), "--seconds", str(HOG_SECONDS)]
    )


def _stop(hog: subprocess.Popen) -> None:
    hog.terminate()  # it kills its spinning children
    hog.wait()


@pytest.mark.parametrize("kind", ["numeric", "choice", "code"])
def test_correct_and_broken_environments_get_the_same_verdict_alone_and_beside_a_cpu_hog(tmp_path, kind):
    cases = _cases(tmp_path, kind)
    alone = {name: _verdict(path, data, options) for name, path, data, options, _ in cases}
    for name, _, _, _, expected in cases:
        assert alone[name][0] == expected, (name, alone[name])
    hog = _start_hog()
    try:
        time.sleep(2)  # the hog is running on every core before the first check starts
        loaded = {name: _verdict(path, data, options) for name, path, data, options, _ in cases}
    finally:
        _stop(hog)
    assert loaded == alone, {n: (alone[n], loaded[n]) for n in alone if alone[n] != loaded[n]}
