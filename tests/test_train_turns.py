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


def test_the_environment_s_own_turn_limit_is_read_before_loading(tmp_path):
    """No max_turns argument: a classic load_environment's max_turns default, a v1 taskset config's
    task.max_turns default; nothing when the module declares none or does not import here."""
    from vlab.train.envargs import declared_turn_limit

    classic = tmp_path / "declared_classic_env.py"
    classic.write_text(
        "def load_environment(dataset_path=None, max_turns: int = 7, **kwargs):\n    raise RuntimeError\n"
    )
    none = tmp_path / "declared_single_env.py"
    none.write_text("def load_environment(dataset_path=None):\n    raise RuntimeError\n")
    broken = tmp_path / "declared_broken_env.py"
    broken.write_text("import no_such_module_here\n")
    assert declared_turn_limit(str(classic)) == 7
    assert declared_turn_limit(str(none)) is None and declared_turn_limit(str(broken)) is None
    # the limit an argument names wins over the default; the message says which one it used
    result = Result("local_train")
    check_turn_budget({}, 512, 2048, result, declared=7)
    assert "max_turns=7 (the environment's default)" in result.checks[0].message
    result = Result("local_train")
    check_turn_budget({"max_turns": 2}, 512, 2048, result, declared=7)
    assert result.checks[0].status == "pass" and "max_turns=2 " in result.checks[0].message


@pytest.mark.v1
def test_prime_rl_hand_off_checks_the_taskset_s_own_turn_limit_without_an_argument(tmp_path, capsys):
    from vlab.train.envargs import declared_turn_limit

    shutil.copy(TOOL_TEMPLATE, tmp_path / "own_turns_tool_env.py")
    env = str(tmp_path / "own_turns_tool_env.py")
    assert declared_turn_limit(env) == 6  # V1MultiturnToolTaskConfig.max_turns
    argv = ["--engine", "prime-rl", "--env", env, "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpus", "2"]
    argv += ["--output-dir", str(tmp_path / "o"), "--dry-run", "--set", "sampling.max_completion_tokens=1024"]
    code, obj = call(*argv, "--set", "model.seq_len=2048", capsys=capsys)
    budget = next(c for c in obj["checks"] if c["id"] == "turn_budget")
    assert code == 0 and budget["status"] == "warn", obj
    assert "max_turns=6 (the environment's default)" in budget["message"], budget
