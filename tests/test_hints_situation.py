"""Issue 38: hints built from the situation, not fixed text.

- test_reward without --env-args on an environment that needs its dataset named: exit 2 with the --env-args to
  pass (it said "fix the environment's loading code").
- A v1 key at the wrong level (`{"max_turns": 3}`): exit 2 naming where it lives (`task.max_turns`) as JSON to
  paste, not raw pydantic text.
- A missing verifiers: the install for the environment's own generation (0.4 for a v1 taskset), read from its
  source without importing it.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SKILL_ROOT, assert_result, run_script

from vlab.env import locate

TEMPLATES = SKILL_ROOT / "templates" / "environments"
ROWS = [{"question": f"What is {i} plus {i}?", "answer": str(2 * i)} for i in range(1, 5)]


def _project(tmp_path, template: str):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    module = template.replace("-", "_")
    shutil.copytree(TEMPLATES / template, tmp_path / "environments" / module)
    return f"environments/{module}"


@pytest.mark.parametrize(
    "template",
    [pytest.param("v1-numeric", marks=pytest.mark.v1), pytest.param("classic-numeric", marks=pytest.mark.classic)],
)
def test_no_env_args_for_a_loader_that_needs_its_dataset_says_which_to_pass(tmp_path, template):
    env = _project(tmp_path, template)
    r = run_script("test_reward", env, "--json", cwd=tmp_path, timeout=300)
    obj = assert_result(r.json, "test_reward", 2)
    assert "no dataset named" in obj["summary"] and "--env-args gives neither" in obj["summary"], obj["summary"]
    assert any("""--env-args '{"dataset_path": "data/train.jsonl"}'""" in s for s in obj["next_steps"]), obj
    assert "fix the environment's loading code" not in json.dumps(obj)


@pytest.mark.v1
def test_a_v1_key_at_the_top_is_named_where_it_lives(tmp_path):
    env = _project(tmp_path, "v1-multiturn-tool")
    args = json.dumps({"max_turns": 3, "dataset_path": "data/train.jsonl"})
    r = run_script("test_reward", env, "--env-args", args, "--json", cwd=tmp_path, timeout=300)
    obj = assert_result(r.json, "test_reward", 2)
    assert "has no 'max_turns' at its top; it is task.max_turns" in obj["summary"], obj["summary"]
    assert any("""--env-args '{"task": {"max_turns": 3}}'""" in s for s in obj["next_steps"]), obj["next_steps"]
    assert "pydantic" not in json.dumps(obj)


@pytest.mark.parametrize(
    "template, wanted, not_wanted",
    [
        ("v1-numeric", 'pip install "verifiers>=0.4.0"', "0.3.1"),
        ("classic-numeric", 'pip install "verifiers==0.3.1"', "0.4.0"),
    ],
)
def test_a_missing_verifiers_is_installed_for_the_environments_generation(tmp_path, template, wanted, not_wanted):
    env = _project(tmp_path, template)
    hint = locate.install_for(str(tmp_path / env))
    assert hint.startswith(wanted) and not_wanted not in hint, hint
