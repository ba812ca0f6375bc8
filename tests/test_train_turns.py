"""local_train and the prime-rl hand-off carry a tool environment's max_turns and warn when seq_len
cannot hold the turns (vlab/train/turns.py)."""

from __future__ import annotations

import json
import shutil
import tomllib

import pytest
from conftest import SKILL_ROOT, assert_result

from vlab.core.result import Result
from vlab.train.turns import check_turn_budget, max_turns, tokens_needed

TOOL_TEMPLATE = SKILL_ROOT / "templates" / "environments" / "v1-multiturn-tool" / "v1_multiturn_tool.py"


def _budget(args: dict, completion_tokens: int, seq_len: int) -> dict:
    result = Result("local_train")
    check_turn_budget(args, completion_tokens, seq_len, result)
    return {c.id: (c.status, c.message) for c in result.checks}


def test_turn_limit_is_read_from_either_generation_s_arguments():
    assert max_turns({"max_turns": 8}) == 8 and max_turns({"task": {"max_turns": 3}}) == 3
    assert max_turns({}) is None and max_turns({"max_turns": True}) is None


def test_seq_len_too_short_for_the_turns_warns_and_a_fitting_one_passes():
    need = tokens_needed(10, 512)
    assert need > 10 * 512
    status, message = _budget({"max_turns": 10}, 512, 4096)["turn_budget"]
    assert status == "warn" and "max_turns=10" in message and "seq_len 4096" in message
    assert _budget({"max_turns": 10}, 512, need)["turn_budget"][0] == "pass"
    assert _budget({"max_turns": 1}, 512, 100) == {} and _budget({}, 512, 100) == {}


def call(*argv: str, capsys) -> tuple[int, dict]:
    import local_train

    capsys.readouterr()
    code = local_train.main(["--json", "--no-progress", *argv])
    return code, assert_result(json.loads(capsys.readouterr().out), "local_train", code)


@pytest.mark.v1
def test_prime_rl_hand_off_carries_max_turns_and_warns_on_seq_len(tmp_path, capsys):
    shutil.copy(TOOL_TEMPLATE, tmp_path / "turns_tool_env.py")
    argv = [
        "--engine",
        "prime-rl",
        "--env",
        str(tmp_path / "turns_tool_env.py"),
        "--model",
        "Qwen/Qwen2.5-0.5B-Instruct",
    ]
    argv += ["--output-dir", str(tmp_path / "o"), "--dry-run", "--gpus", "2", "--env-arg", "task.max_turns=12"]
    code, obj = call(*argv, "--set", "model.seq_len=2048", capsys=capsys)
    assert code == 0, obj
    budget = next(c for c in obj["checks"] if c["id"] == "turn_budget")
    assert budget["status"] == "warn" and "max_turns=12" in budget["message"] and "seq_len 2048" in budget["message"]
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    assert doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]["task"]["max_turns"] == 12
    code, obj = call(*argv, "--set", "model.seq_len=8192", "--force", capsys=capsys)
    assert code == 0 and next(c for c in obj["checks"] if c["id"] == "turn_budget")["status"] == "pass", obj
