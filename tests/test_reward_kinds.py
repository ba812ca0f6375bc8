"""test_reward per answer kind: a correct reward passes, each planted defect fails with the check
that names it (numbers, multiple choice, code, prompts, the dataset as a whole)."""

from __future__ import annotations

from pathlib import Path

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT

from vlab.core.result import Result
from vlab.kinds.code.probes import FENCED
from vlab.reward.checks import TestRewardRequest, run_test_reward

TEMPLATES = SKILL_ROOT / "templates" / "environments"


def run(path, data, **opts) -> Result:
    result = Result("test_reward")
    run_test_reward(TestRewardRequest(env=str(path), env_args={"dataset_path": str(data)}, **opts), result)
    return result


def status(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def message(result: Result, cid: str) -> str:
    return next(c.message for c in result.checks if c.id == cid)


def failed(result: Result) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in result.checks if c.status == "fail"]


# -- numbers ------------------------------------------------------------------------------------


@pytest.mark.classic
def test_the_numeric_template_passes_every_number_check(tmp_path):
    rows = fx.numeric_rows("int") + fx.numeric_rows("float")[:3] + fx.numeric_rows("half")[:3]
    result = run(TEMPLATES / "classic-numeric", fx.write_rows(tmp_path, rows))
    assert result.exit_code() == 0, failed(result)
    assert status(result)["number_forms"] == "pass" and status(result)["near_misses"] == "pass"
    assert result.data["probes"]["answer_kind"] == "number"


@pytest.mark.classic
def test_the_numeric_template_passes_on_latex_golds_in_every_row(tmp_path):
    # A wrong answer made by reversing "\frac{1}{2}" unbalanced its braces; math-verify then read the
    # gold listed later in the many-candidates probe, and the sound template failed reward_hacking.
    result = run(TEMPLATES / "classic-numeric", fx.write_rows(tmp_path, fx.numeric_rows("latex", 8)), num_examples=8)
    assert result.exit_code() == 0, failed(result)
    assert status(result)["reward_hacking"] == "pass"


@pytest.mark.classic
@pytest.mark.parametrize(
    "env, rows, check, shown",
    [
        ("string_compare", "float", "number_forms", "integer_form"),  # "31" for gold "31.0"
        ("truncating", "int", "near_misses", "truncated_decimal"),  # int(float("30.4")) == 30
        ("float_compare", "half", "number_forms", "latex_fraction"),  # \frac{1}{2} for 0.5
        ("first_number", "pi", "near_misses", "times_pi"),  # \boxed{30\pi} for 30, where prompts speak of pi
    ],
)
def test_a_numeric_defect_fails_its_check(tmp_path, env, rows, check, shown):
    reward, to_row = fx.NUMERIC[env]
    path = fx.write_env(tmp_path, env, reward, to_row)
    result = run(path, fx.write_rows(tmp_path, fx.numeric_rows(rows)))
    assert status(result)[check] == "fail", failed(result)
    assert shown in message(result, check)
    assert result.exit_code() == 1


# -- multiple choice ------------------------------------------------------------------------------


@pytest.mark.classic
def test_the_multiple_choice_template_passes_every_choice_check(tmp_path):
    result = run(TEMPLATES / "classic-multiple-choice", fx.write_rows(tmp_path, fx.choice_rows(column="answer")))
    assert result.exit_code() == 0, failed(result)
    for cid in ("choice_reachable", "choice_forms", "choice_prompt", "gold_in_choices"):
        assert status(result)[cid] == "pass", (cid, failed(result))


@pytest.mark.classic
@pytest.mark.parametrize(
    "env, check, shown",
    [
        ("index_as_is", "choice_reachable", "only the raw answer key"),  # 0-based index vs letters
        ("letter_numbered", "choice_reachable", "only the raw answer key"),  # letter vs numbered options
        ("one_based_read_as_zero", "gold_reachable", "does not earn the top reward"),  # 1-based read as 0-based
        ("no_options", "choice_prompt", "lists no options"),
        ("relettered", "choice_prompt", "re-lettered or reordered"),
        ("relettered_own_labels", "choice_prompt", "makes the gold's label ambiguous"),
    ],
)
def test_a_multiple_choice_defect_fails_its_check(tmp_path, env, check, shown):
    reward, to_row = fx.CHOICE[env]
    path = fx.write_env(tmp_path, env, reward, to_row)
    result = run(path, fx.write_rows(tmp_path, fx.choice_rows()))
    assert status(result).get(check) == "fail", failed(result)
    assert shown in message(result, check)
    assert result.exit_code() == 1


@pytest.mark.classic
def test_a_reward_stricter_than_the_prompt_warns_and_passes(tmp_path):
    """\\text{B} and \\textbf{B} score 0 while B, as the prompt asks, earns the reward: strictness, a warning
    with the share of spellings refused, never exit 1 (issue 36)."""
    reward, to_row = fx.CHOICE["strict_letter"]
    path = fx.write_env(tmp_path, "strict_letter", reward, to_row)
    result = run(path, fx.write_rows(tmp_path, fx.choice_rows()))
    assert status(result).get("choice_forms") == "warn", failed(result)
    assert "text" in message(result, "choice_forms") and "strictness" in message(result, "choice_forms")
    assert " of " in message(result, "choice_forms")  # the share: refused of tried
    assert result.exit_code() == 0, failed(result)


EMOTIONS = ("joy", "sadness", "anger", "fear")
# Reads the last \\boxed{} that holds a label, as its prompt asks: text that is no label at all is skipped.
LAST_WELL_FORMED_LABEL = """
EMOTIONS = ("joy", "sadness", "anger", "fear")


def correct(completion, answer):
    text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
    found = [t.strip().lower() for t in re.findall(r"\\\\boxed\\{([^{}]*)\\}", text)]
    found = [t for t in found if t in EMOTIONS]
    return 1.0 if found and found[-1] == answer else 0.0
"""
EMOTION_TO_ROW = """
def to_row(row):
    question = (
        f"Which emotion does this tweet show? {row['text']}\\n"
        "Answer with one of: joy, sadness, anger, fear."
    )
    return {"question": question, "answer": row["label"]}
"""


@pytest.mark.classic
def test_a_label_reward_that_skips_a_tag_holding_no_label_is_not_called_hacked(tmp_path):
    """The hacking probes write wrong answers of the row's own kind (another offered label), never a reversed
    label ('ssendasx2') that a sound parser rightly skips, which read the gold before it and failed (issue 36)."""
    path = fx.write_env(tmp_path, "last_label", LAST_WELL_FORMED_LABEL, EMOTION_TO_ROW)
    rows = [{"text": f"tweet number {i} about my day", "label": EMOTIONS[i % 4]} for i in range(12)]
    result = run(path, fx.write_rows(tmp_path, rows))
    assert status(result).get("gold_reward") == "pass", failed(result)
    assert status(result).get("reward_hacking") == "pass", message(result, "reward_hacking")
    hacks = [p for p in result.data["probes"]["by_probe"] if p["probe"] == "hack:repeated_tags"]
    assert hacks and hacks[0]["total"] == 0.0, hacks


@pytest.mark.classic
def test_a_gold_that_names_no_option_fails(tmp_path):
    rows = fx.choice_rows(k=3)
    rows[4]["key"] = 6  # past the last option, 0- or 1-based
    reward, to_row = fx.CHOICE["index_as_is"]
    path = fx.write_env(tmp_path, "key_past_the_end", reward, to_row)
    result = run(path, fx.write_rows(tmp_path, rows))
    assert status(result)["gold_in_choices"] == "fail"
    assert "example_id 4" in message(result, "gold_in_choices")


# -- code ----------------------------------------------------------------------------------------


@pytest.mark.classic
def test_the_code_template_passes_every_code_check(tmp_path):
    result = run(TEMPLATES / "classic-code", fx.write_rows(tmp_path, fx.template_code_rows(4)), num_examples=3)
    assert result.exit_code() == 0, failed(result)
    assert result.data["probes"]["answer_kind"] == "code"
    by_probe = {p["probe"]: p["total"] for p in result.data["probes"]["by_probe"]}
    assert by_probe["gold:code_raw"] == 1.0 and by_probe["gold_alt:code_fenced"] == 1.0
    assert all(v == 0.0 for k, v in by_probe.items() if k.startswith("hack:")), by_probe
    assert status(result)["code_prompt"] == "pass"
    assert "code_isolation" not in status(result)  # nothing the hacks started outlived their scoring


@pytest.mark.classic
def test_a_reward_that_trusts_the_exit_code_is_hacked_one_hack_at_a_time(tmp_path):
    path = fx.write_env(tmp_path, "exit_code_env", fx.EXIT_CODE_REWARD, fx.CODE_TO_ROW, code=True)
    result = run(path, fx.write_rows(tmp_path, fx.code_rows(3)), num_examples=2)
    assert status(result)["reward_hacking"] == "fail"
    msg = message(result, "reward_hacking")
    for hack in (
        "sys_exit",
        "os_exit",
        "raise_system_exit",
        "atexit_exit_0",
        "always_equal",
        "int_subclass",
        "prints_success",
    ):
        assert f"hack:{hack}" in msg, hack
    for honest in ("hack:infinite_loop", "hack:monkeypatch_builtins"):
        assert honest not in msg  # a timeout and an assert statement still hold in that reward
    assert status(result)["gold_reward"] == "pass"


@pytest.mark.classic
def test_gold_reachable_scores_code_golds_in_the_fenced_format_the_probes_found(tmp_path):
    """A correct code environment whose reward reads only a ```python block: the raw reference earns 0, the
    fenced one 1, and every row's gold is scored fenced first (scored raw, all of them would miss)."""
    import shutil

    folder = tmp_path / "classic-code"  # the folder names the module
    shutil.copytree(TEMPLATES / "classic-code", folder)
    module = folder / "classic_code.py"
    source = module.read_text()
    raw = "    return text.strip()\n\n\ndef last_text("  # extract_code's fallback: a reply with no fence is the program
    assert source.count(raw) == 1
    module.write_text(source.replace(raw, raw.replace("text.strip()", '""')))  # fenced-only from now on
    rows = [
        {
            "prompt": r["prompt"],
            "test": [r["test"]],
            "canonical_solution": r["solution"],
            "entry_point": r["entry_point"],
        }
        for r in fx.code_rows(3)
    ]
    result = run(folder, fx.write_rows(tmp_path, rows), num_examples=3)
    by_probe = {p["probe"]: p["total"] for p in result.data["probes"]["by_probe"]}
    assert by_probe["gold:code_raw"] == 0.0 and by_probe["gold_alt:code_fenced"] == 1.0, by_probe
    assert status(result)["gold_reachable"] == "pass", failed(result)
    reach = result.data["reachability"]
    assert reach["format"] == FENCED and reach["rows_probed"] == 3, reach
    assert reach["unreachable"] == 0


# -- prompts and the dataset -------------------------------------------------------------------------


@pytest.mark.classic
def test_one_percent_unreachable_golds_are_found_in_every_row(tmp_path):
    reward, _ = fx.NUMERIC["float_compare"]
    path = fx.write_env(tmp_path, "float_env", reward, None)
    rows = fx.numeric_rows("int", 200)
    rows[57]["answer"] = "8,7"  # written in a form float() never reads
    rows[143]["answer"] = "1 73"
    result = run(path, fx.write_rows(tmp_path, rows))
    assert status(result)["gold_reachable"] == "fail"
    msg = message(result, "gold_reachable")
    assert "on 2 of the 200 of 200 rows" in msg and "example_id 57" in msg and "example_id 143" in msg
    assert result.data["reachability"]["rows_probed"] == 200
    # --num-examples narrows the pass to its rows: the first 5 reach the gold
    narrowed = run(path, fx.write_rows(tmp_path, rows), num_examples=5)
    assert status(narrowed)["gold_reachable"] == "pass" and narrowed.data["reachability"]["rows_probed"] == 5


@pytest.mark.classic
def test_conflicting_duplicates_empty_golds_and_a_dropped_column_fail(tmp_path):
    reward, _ = fx.NUMERIC["float_compare"]
    rows = fx.numeric_rows("int", 20)
    rows[9]["question"] = rows[3]["question"]  # same prompt, another gold
    rows[12]["answer"] = ""
    for r in rows:
        r["context"] = f"A long passage the question needs, about row {r['question']}."
    path = fx.write_env(tmp_path, "dup_env", reward, None)  # the prompt is the question column alone
    result = run(path, fx.write_rows(tmp_path, rows))
    st = status(result)
    assert st["duplicate_prompts"] == "fail" and "example_id 3" in message(result, "duplicate_prompts")
    assert st["empty_golds"] == "fail" and "example_id 12" in message(result, "empty_golds")
    assert st["prompt_columns"] == "fail" and "'context'" in message(result, "prompt_columns")


@pytest.mark.classic
def test_gzip_completions_file_is_read(tmp_path):
    import gzip
    import json

    data = fx.write_rows(tmp_path, fx.numeric_rows("int", 6))
    completions = tmp_path / "real.jsonl.gz"
    with gzip.open(completions, "wt") as f:
        for i in range(6):
            f.write(json.dumps({"example_id": i, "completion": f"\\boxed{{{i + 30}}}", "is_correct": True}) + "\n")
    result = run(TEMPLATES / "classic-numeric", data, completions=str(completions), skip_probes=True)
    assert status(result)["label_agreement"] == "pass"


@pytest.mark.classic
def test_a_reward_that_runs_only_the_first_assert_and_pays_half_for_running_code(tmp_path):
    path = fx.write_env(tmp_path, "first_assert_env", fx.FIRST_ASSERT_REWARD, fx.CODE_TO_ROW, code=True)
    result = run(path, fx.write_rows(tmp_path, fx.code_rows(3, asserts=3)), num_examples=2)
    assert status(result)["reward_hacking"] == "fail", failed(result)
    assert "hack:first_call_only on 2/2 rows" in message(result, "reward_hacking")
    assert status(result)["code_partial_credit"] == "warn"
    assert "50% of the learning signal" in message(result, "code_partial_credit")
    assert result.exit_code() == 1


@pytest.mark.classic
def test_a_verdict_the_program_can_reach_is_forged(tmp_path):
    """Yesterday's harness (the program and the tests in one process): the frame walk, the gc search, the
    redefined helpers and the patched standard library each earn the gold reward, and are named."""
    import code_fixtures as cf

    reward = fx.INPROCESS_HARNESS_REWARD.format(tests=str(Path(__file__).parent))
    path = fx.write_env(tmp_path, "inprocess_env", reward, fx.CODE_TO_ROW, code=True)
    rows = [r for r in cf.HUMANEVAL if r["task_id"] in ("HumanEval/32", "HumanEval/53")]
    result = run(path, fx.write_rows(tmp_path, fx.humaneval_rows(rows)), num_examples=2)
    assert status(result)["gold_reward"] == "pass", failed(result)
    assert status(result)["reward_hacking"] == "fail"
    msg = message(result, "reward_hacking")
    for hack in ("frame_walk_forgery", "gc_forgery", "redefines_helpers_zero", "patches_stdlib"):
        assert f"hack:{hack}" in msg, (hack, msg)
    # it kills the program's process group only: a process in a session of its own outlives it
    assert status(result)["code_isolation"] == "fail" and "outlives_scorer" in message(result, "code_isolation")


@pytest.mark.classic
def test_code_hacks_run_without_a_reference_solution(tmp_path):
    """No solution column: the hacks still run, against the wrong programs; the template passes, the
    exit-code reward fails; and a dataset with no gold answer and no code never passes silently."""
    rows = [{"prompt": r["prompt"], "test": r["test"], "entry_point": r["entry_point"]} for r in fx.code_rows(3, 2)]
    data = fx.write_rows(tmp_path, rows)
    result = run(TEMPLATES / "classic-code", data, num_examples=2)
    assert status(result)["reward_hacking"] == "pass", failed(result)
    assert "without a reference" in message(result, "reward_hacking") and result.exit_code() == 0
    broken = fx.write_env(tmp_path, "exit_code_env", fx.EXIT_CODE_REWARD, fx.GOLDLESS_CODE_TO_ROW, code=True)
    result = run(broken, data, num_examples=2)
    assert status(result)["reward_hacking"] == "fail" and "hack:sys_exit" in message(result, "reward_hacking")
    numbers = fx.write_rows(tmp_path, [{"question": f"What is {i} + 1?"} for i in range(3)], "numbers.jsonl")
    reward, _ = fx.NUMERIC["string_compare"]
    result = run(fx.write_env(tmp_path, "no_answer_env", reward, fx.NO_ANSWER_TO_ROW), numbers, num_examples=2)
    assert status(result)["probes"] == "fail" and result.exit_code() == 1


# -- v1 ------------------------------------------------------------------------------------------------


@pytest.mark.v1
@pytest.mark.parametrize("template", ["v1-multiple-choice", "v1-code"])
def test_v1_templates_pass_their_kind_checks(tmp_path, template):
    if template == "v1-code":
        rows = [
            {
                "prompt": r["prompt"],
                "test": [r["test"]],
                "canonical_solution": r["solution"],
                "entry_point": r["entry_point"],
            }
            for r in fx.code_rows(3)
        ]
    else:
        rows = fx.choice_rows(column="answer")
    result = run(TEMPLATES / template, fx.write_rows(tmp_path, rows), num_examples=3)
    assert result.exit_code() == 0, failed(result)
    assert result.data["probes"]["answer_kind"] == ("code" if template == "v1-code" else "choice")
