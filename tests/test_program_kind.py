"""The program kind end to end: inspect reads each layout of competitive-programming data as ``program_io`` and
recommends the program templates; new_env maps the columns and the completion budget; test_reward passes both
program templates (every program check, none of the function-call probes on their rows). The planted defects are
tests/test_program_plants.py."""

from __future__ import annotations

import json
import shutil

import program_fixtures as fx
import pytest
from conftest import SKILL_ROOT

from vlab.core.result import Result, UsageError
from vlab.inspect import InspectRequest, inspect_dataset
from vlab.reward.checks import TestRewardRequest, run_test_reward
from vlab.scaffold.create import ScaffoldRequest, scaffold_environment

TEMPLATES = SKILL_ROOT / "templates" / "environments"
# sort (several tokens, quit(), sys.stdin.buffer), area (a float answer, a tolerance), sum (fast input, exit(), a
# '####' comment); the statement shows each problem's first test, the others are hidden
CHOSEN = ("sort", "area", "sum")


def chosen(names=CHOSEN) -> list[dict]:
    by_name = {p["name"]: p for p in fx.problems(slow_n=10)}
    return [by_name[n] for n in names]


def run(env, data, **opts) -> Result:
    result = Result("test_reward")
    opts = {"timeout": 10.0, "reach_seconds": 5.0, **opts}
    run_test_reward(TestRewardRequest(env=str(env), env_args={"dataset_path": str(data)}, **opts), result)
    return result


def status(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def message(result: Result, cid: str) -> str:
    return next(c.message for c in result.checks if c.id == cid)


def failed(result: Result) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in result.checks if c.status == "fail"]


PROGRAM_CHECKS = (
    "program_reference",
    "program_exit_status",
    "program_whitespace",
    "program_prefix",
    "program_hidden_tests",
    "program_isolation",
    "program_tolerance",
    "program_fences",
    "program_time_limit",
    "program_prompt",
    "program_tests_in_prompt",
    "program_duplicates",
)


def assert_sound(result: Result) -> None:
    assert result.exit_code() == 0, failed(result)
    for cid in PROGRAM_CHECKS:
        assert status(result).get(cid) == "pass", (cid, status(result).get(cid), failed(result))
    assert result.data["kinds"]["rows"] == {"program": len(CHOSEN)}
    probes = {p["probe"] for p in result.data["probes"]["by_probe"]}
    assert not probes & {"hack:first_call_only", "hack:always_equal", "hack:frame_walk_forgery", "gold:code_raw"}


@pytest.mark.v1
def test_the_v1_program_template_passes_every_program_check(tmp_path):
    data = fx.write_jsonl(tmp_path / "data.jsonl", fx.codecontests_rows(chosen()))
    env = shutil.copytree(TEMPLATES / "v1-program", tmp_path / "env")
    (env / "v1_program.py").write_text(
        (env / "v1_program.py")
        .read_text()
        .replace('QUESTION_COLUMN = "question"', 'QUESTION_COLUMN = "description"')
        .replace('TESTS_COLUMN = "input_output"', 'TESTS_COLUMN = ["public_tests", "private_tests", "generated_tests"]')
    )
    assert_sound(run(env / "v1_program.py", data))


@pytest.mark.classic
def test_the_classic_program_template_passes_every_program_check(tmp_path):
    folder = fx.write_folder(tmp_path / "problems", chosen())
    result = run(TEMPLATES / "classic-program", folder)
    assert_sound(result)


@pytest.mark.v1
def test_a_code_template_row_with_stdin_tests_is_a_program_row(tmp_path):
    """The code templates' io rows are claimed by the program unit: no function-call probe runs on them."""
    rows = [
        {
            "prompt": p["statement"],
            "test": json.dumps({"inputs": [t[0] for t in p["tests"]], "outputs": [t[1] for t in p["tests"]]}),
            "canonical_solution": p["reference"],
            "entry_point": None,
        }
        for p in chosen()
    ]
    data = fx.write_jsonl(tmp_path / "data.jsonl", rows)
    result = run(TEMPLATES / "v1-code", data, num_examples=2)
    assert result.data["kinds"]["rows"] == {"program": 2}
    probes = {p["probe"] for p in result.data["probes"]["by_probe"]}
    assert "hack:first_call_only" not in probes and "hack:no_spaces" in probes


# -- inspect and new_env --------------------------------------------------------------------------


def inspect(path) -> Result:
    result = Result("inspect_dataset")
    inspect_dataset(InspectRequest(source=str(path)), result)
    return result


@pytest.mark.parametrize("layout", ["apps", "codecontests", "livecodebench", "folder"])
def test_inspect_reads_each_layout_as_programs(tmp_path, layout):
    problems = fx.problems(slow_n=10)
    if layout == "folder":
        path = fx.write_folder(tmp_path / "problems", problems)
    else:
        rows = {"apps": fx.apps_rows, "codecontests": fx.codecontests_rows, "livecodebench": fx.livecodebench_rows}
        path = fx.write_jsonl(tmp_path / "data.jsonl", rows[layout](problems))
    result = inspect(path)
    fmt = result.data["answer_format"]
    assert fmt["type"] == "program_io" and fmt["match_share"] == 1.0, fmt
    assert result.data["recommendation"]["template"] in ("v1-program", "classic-program")
    assert fmt["rows_with_several_answers"] and fmt["rows_with_a_tolerance"]
    if layout == "codecontests":
        assert result.data["roles"]["tests"]["columns"] == ["public_tests", "private_tests", "generated_tests"]
        assert result.data["roles"]["prompt"]["column"] == "description"
    if layout != "livecodebench":  # LiveCodeBench has no reference program
        assert fmt["max_completion_tokens"] >= 1024


def test_a_folder_whose_tests_are_not_found_says_which_layouts_are_read(tmp_path):
    for k in range(3):
        (tmp_path / "p" / f"problem{k}").mkdir(parents=True)
        (tmp_path / "p" / f"problem{k}" / "PROBLEM.md").write_text("Print 1.")
        (tmp_path / "p" / f"problem{k}" / "case1.txt").write_text("1")
    with pytest.raises(UsageError) as err:
        inspect(tmp_path / "p")
    assert err.value.exit_code == 2 and "no tests found" in str(err.value)
    assert "tests/input_1.txt" in err.value.hint and '"input_output"' in err.value.hint


def test_new_env_maps_every_test_column_and_the_completion_budget(tmp_path, monkeypatch):
    long = "x = 1\n" * 800  # a 4,800-character reference: 512 tokens cannot hold it
    problems = fx.problems(slow_n=10)
    problems[0]["reference"] = problems[0]["reference"] + long
    data = fx.write_jsonl(tmp_path / "data.jsonl", fx.codecontests_rows(problems))
    inspected = inspect(data)
    (tmp_path / "inspect.json").write_text(
        json.dumps({"tool": "inspect_dataset", "status": "pass", "data": inspected.data})
    )
    monkeypatch.chdir(tmp_path)
    result = Result("new_env")
    scaffold_environment(ScaffoldRequest(name="cc", from_inspect=str(tmp_path / "inspect.json"), api="v1"), result)
    assert result.data["template"] == "v1-program"
    assert result.data["columns"]["TESTS_COLUMN"] == ["public_tests", "private_tests", "generated_tests"]
    budget = result.data["max_completion_tokens"]
    assert budget >= 2 * 4800 / 3.2, budget
    assert any(f"--max-tokens {budget}" in step for step in result.next_steps)
    assert f"-t {budget}" in (tmp_path / "environments" / "cc" / "README.md").read_text()
