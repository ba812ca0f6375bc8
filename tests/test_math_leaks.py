"""answer_leak and test_split (test_reward) and inspect_dataset's test-split warning, on MATH-shaped rows:
a worked solution in the prompt leaks and names its column, a number in the problem does not; a test
file, a test split argument or test/ ids are a warning."""

from __future__ import annotations

import math_fixtures as mf
import pytest
from conftest import assert_result, run_script

from vlab.core.result import Result
from vlab.env import Row
from vlab.inspect import analyse, read_sample
from vlab.inspect.splits import named_test_split
from vlab.reward import leaks, splits
from vlab.reward import probes as rp
from vlab.reward.checks import TestRewardRequest, run_test_reward

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

SYSTEM = "Answer inside \\boxed{}."


def as_rows(data: list[dict], system: str | list[str] | None = SYSTEM, column: str = "problem") -> list[Row]:
    """Rows as a classic environment hands them over: the system prompt, the question column as the user
    message, every column (and 'question') in the row's fields."""
    out = []
    for i, r in enumerate(data):
        text = system[i] if isinstance(system, list) else system
        prompt = ([{"role": "system", "content": text}] if text else []) + [{"role": "user", "content": r[column]}]
        out.append(Row(i, prompt, r["answer"], r[column], {**r, "question": r[column]}))
    return out


def leak_check(rows: list[Row]) -> tuple[Result, object]:
    result = Result("test_reward")
    golds = {r.index: rp.gold_value(r.answer, r.question) for r in rows}
    leaks.check_answer_leak(result, rows, golds)
    return result, next(c for c in result.checks if c.id == "answer_leak")


def split_check(rows: list[Row], env_args: dict) -> object:
    result = Result("test_reward")
    splits.check_test_split(result, rows, env_args)
    return next(c for c in result.checks if c.id == "test_split")


# -- answer_leak: the rule ---------------------------------------------------------------------------


def test_a_boxed_solution_in_the_prompt_leaks_and_names_the_solution_column():
    result, check = leak_check(as_rows(mf.math_rows(leak=True)))
    assert check.status == "fail", check.message
    assert "'solution' column" in check.message and "61/61 rows (100%)" in check.message
    assert "\\boxed{42}" in check.message and "example_id 0, 1, 2" in check.message
    assert "problem column only" in check.hint
    listed = result.data["row_findings"]["answer_leak"]
    assert len(listed) == 61 and {f["status"] for f in listed} == {"fail"}
    assert all("'solution' column" in f["problem"] for f in listed)


def test_the_same_rows_without_the_solution_pass():
    _, check = leak_check(as_rows(mf.math_rows()))
    assert check.status == "pass" and "61 rows checked" in check.message


def test_a_number_in_the_problem_is_no_leak():
    data = [
        {"problem": f"Tom has {g} apples and eats none. How many apples does Tom have?", "answer": str(g)}
        for g in range(2, 22)
    ]
    data += [{"problem": "Which is larger, 3 or 5?", "answer": "5"}]
    _, check = leak_check(as_rows(data))
    assert check.status == "pass", check.message


def test_an_answer_column_that_is_the_gold_itself_is_no_leak():
    """'answer' shown as a plain value inside the problem is a number in the problem, not a worked solution."""
    data = [{"problem": f"Given that the total is {g}, compute the total.", "answer": str(g)} for g in range(10, 30)]
    _, check = leak_check(as_rows(data))
    assert check.status == "pass", check.message


def test_a_system_prompt_carrying_each_rows_answer_leaks_as_the_system_prompt():
    data = mf.math_rows(20)
    systems = [f"{SYSTEM} For reference, the answer is $\\boxed{{{r['answer']}}}$." for r in data]
    _, check = leak_check(as_rows(data, systems))
    assert check.status == "fail" and "from the system prompt on 20 row(s)" in check.message, check.message


def test_a_solution_column_copied_into_the_system_prompt_names_the_column():
    data = mf.math_rows(20)
    systems = [f"{SYSTEM}\n\nA worked solution: {r['solution']}" for r in data]
    _, check = leak_check(as_rows(data, systems))
    assert check.status == "fail" and "'solution' column" in check.message, check.message


def test_a_worked_example_shared_by_every_prompt_is_no_leak():
    """A few-shot system prompt boxes 42; the row whose gold is 42 shows it too, but so does every other row."""
    data = mf.math_rows(40)
    system = f"{SYSTEM}\n\nExample: What is $6 \\cdot 7$?\nWe multiply: $6 \\cdot 7 = \\boxed{{42}}$."
    _, check = leak_check(as_rows(data, system))
    assert check.status == "pass", check.message
    # an example that is a row of the data shows that row its own solution: one row, a warning
    system = f"{SYSTEM}\n\nExample: {data[0]['problem']}\n{data[0]['solution']}"
    _, check = leak_check(as_rows(data, system))
    assert check.status == "warn" and "1/40 rows" in check.message and "example_id 0;" in check.message


def test_a_gsm8k_rationale_in_the_prompt_leaks_through_its_hash_answer():
    data = [
        {
            "question": f"A box holds {i} pens and another holds 30. How many pens are there?",
            "answer": f"There are {i} + 30 = {i + 30} pens.\n#### {i + 30}",
        }
        for i in range(12)
    ]
    for r in data:
        r["shown"] = f"{r['question']}\n\nWorked answer: {r['answer']}"
    _, check = leak_check(as_rows(data, column="shown"))
    assert check.status == "fail" and "'answer' column" in check.message and "#### 30" in check.message


def test_a_rationale_ending_in_the_gold_leaks_without_a_box():
    data = [
        {
            "problem": f"Solve for x: x - {i} = 10.",
            "rationale": f"Adding {i} to both sides of the equation gives x = {10 + i}",
            "answer": str(10 + i),
        }
        for i in range(1, 11)
    ]
    for r in data:
        r["problem"] += "\n\n" + r["rationale"]
    _, check = leak_check(as_rows(data))
    assert check.status == "fail" and "'rationale' column" in check.message and "worked solution" in check.message


def test_an_equal_value_in_another_spelling_leaks():
    """The prompt boxes 0.25 where the gold says \\frac{1}{4}: math-verify calls them one value."""
    data = [
        {"problem": f"Compute $1/{k}$ as a decimal.\n\nHint: $\\boxed{{{1 / k:g}}}$", "answer": f"\\frac{{1}}{{{k}}}"}
        for k in (2, 4, 5, 8, 10, 16, 20, 25)
    ]
    _, check = leak_check(as_rows(data))
    assert check.status == "fail" and "8/8 rows" in check.message and "\\boxed{0.5}" in check.message
    assert "from the 'problem' column" in check.message  # the question column carries it: named as such


def test_few_leaking_rows_are_a_warning():
    data = mf.math_rows(61)
    data[7]["problem"] += "\n\nSolution: " + data[7]["solution"]  # 1 of 61: under 5%
    result, check = leak_check(as_rows(data))
    assert check.status == "warn" and "1/61 rows" in check.message and "example_id 7" in check.message
    assert [f["example_id"] for f in result.data["row_findings"]["answer_leak"]] == [7]


def test_rows_without_golds_are_skipped():
    rows = as_rows([{"problem": "Write a poem.", "answer": ""}])
    _, check = leak_check(rows)
    assert check.status == "skip"


# -- test_split: the evidence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, named",
    [
        ("data/test.jsonl", "the file test.jsonl"),
        ("/data/math_test.parquet", "the file math_test.parquet"),
        ("test-00000-of-00001.parquet", "the file test-00000-of-00001.parquet"),
        ("data/test-*.parquet", "the file test-*.parquet"),
        ("testing.csv.gz", "the file testing.csv.gz"),
        ("math/test/0.parquet", "the folder test/"),
        ("./data/test", "the folder test/"),
        ("data/train.jsonl", None),
        ("test/train.jsonl", None),  # the file's own name says train
        ("contest.jsonl", None),
        ("latest_test_results/data.jsonl", None),
        ("/tmp/pytest-of-me/pytest-3/test_split0/data.jsonl", None),  # a test_* folder is no test split
        ("openai/gsm8k", None),
        ("test", None),  # a bare name is no path
    ],
)
def test_a_file_name_says_test_split(path, named):
    assert named_test_split(path) == named


def test_a_test_file_in_the_env_args_warns():
    rows = as_rows(mf.math_rows(5))
    check = split_check(rows, {"dataset_path": "/data/math/test.jsonl"})
    assert check.status == "warn" and "dataset_path: the file test.jsonl" in check.message
    assert "train on the train split" in check.hint and "evaluation" in check.hint
    check = split_check(rows, {"data_files": ["/data/test-00000-of-00002.parquet"]})
    assert check.status == "warn" and "data_files" in check.message


def test_a_test_split_argument_warns_and_an_eval_argument_does_not():
    rows = as_rows(mf.math_rows(5))
    assert split_check(rows, {"dataset_name": "owner/math", "dataset_split": "test"}).status == "warn"
    assert "split='testing'" in split_check(rows, {"split": "testing"}).message
    assert split_check(rows, {"split": "train", "eval_split": "test", "eval_dataset_path": "test.jsonl"}).status == (
        "pass"
    )


def test_test_ids_warn_and_train_ids_pass():
    check = split_check(as_rows(mf.math_rows(10, ids="test")), {})
    assert check.status == "warn" and "10/10 'unique_id' ids" in check.message
    assert "'test/number_theory/0.json'" in check.message
    assert split_check(as_rows(mf.math_rows(10)), {"dataset_path": "train.jsonl"}).status == "pass"
    data = mf.math_rows(10, ids="test")
    for r in data[:6]:
        r["unique_id"] = r["unique_id"].replace("test/", "train/")
    assert split_check(as_rows(data), {}).status == "pass"  # 4 of 10: not most


def test_nothing_to_read_is_a_skip():
    data = [{"problem": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(4)]
    assert split_check(as_rows(data), {}).status == "skip"


# -- test_reward end to end --------------------------------------------------------------------------

ENV = """
import verifiers as vf
from datasets import load_dataset


def load_environment(dataset_path="data.jsonl"):
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    dataset = dataset.map(lambda row: {"question": row["problem"]})  # every column kept
    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)
    rubric = vf.MathRubric(parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt="Answer inside \\\\boxed{}.", parser=parser, rubric=rubric)
"""


def run_math_env(tmp_path, leak: bool, name: str = "data.jsonl") -> Result:
    env = tmp_path / "math_env.py"
    env.write_text(ENV)
    data = mf.write_jsonl(tmp_path / name, mf.math_rows(20, leak=leak))
    result = Result("test_reward")
    run_test_reward(TestRewardRequest(env=str(env), env_args={"dataset_path": str(data)}), result)
    return result


@pytest.mark.classic
def test_reward_fails_a_prompt_that_carries_the_solution(tmp_path):
    result = run_math_env(tmp_path, leak=True)
    check = next(c for c in result.checks if c.id == "answer_leak")
    assert result.exit_code() == 1
    assert check.status == "fail" and "'solution' column" in check.message and "20/20 rows" in check.message
    assert len(result.data["row_findings"]["answer_leak"]) == 20
    assert any("answer_leak" in s for s in result.next_steps)


@pytest.mark.classic
def test_reward_passes_the_same_environment_without_the_leak(tmp_path):
    result = run_math_env(tmp_path, leak=False, name="test.jsonl")
    checks = {c.id: c for c in result.checks}
    assert checks["answer_leak"].status == "pass", checks["answer_leak"].message
    assert checks["test_split"].status == "warn" and "the file test.jsonl" in checks["test_split"].message


# -- inspect_dataset ---------------------------------------------------------------------------------


def test_inspect_warns_on_a_file_named_test(tmp_path):
    path = mf.write_jsonl(tmp_path / "test.jsonl", mf.math_rows(12))
    r = run_script("inspect_dataset", str(path), "--json")
    checks = {c["id"]: c for c in assert_result(r.json, "inspect_dataset", 0)["checks"]}
    assert checks["test-split"]["status"] == "warn" and "the file test.jsonl" in checks["test-split"]["message"]


def test_inspect_warns_on_test_ids_and_not_on_train_ids(tmp_path):
    from vlab.inspect import inspect_dataset
    from vlab.inspect.analysis import InspectRequest

    data = mf.math_rows(12, ids="test")
    data[0]["unique_id"] = "test/algebra/1.json"
    path = mf.write_jsonl(tmp_path / "math.jsonl", data)
    result = Result("inspect_dataset")
    inspect_dataset(InspectRequest(str(path)), result)
    check = next(c for c in result.checks if c.id == "test-split")
    assert check.status == "warn" and "'test/algebra/1.json'" in check.message and "12/12" in check.message

    path = mf.write_jsonl(tmp_path / "train.jsonl", mf.math_rows(12))
    result = Result("inspect_dataset")
    inspect_dataset(InspectRequest(str(path)), result)
    assert "test-split" not in {c.id for c in result.checks}
    assert analyse(read_sample(str(path), 50))["roles"]["answer"]["column"] == "answer"
