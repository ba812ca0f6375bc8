"""test_reward verdicts without false alarms and without silent checks (issue 22): for each rule a correct
hand-written reward (regex on the last line, the last tag, \\boxed{} with math-verify) passes and a broken
one fails naming the check. Runs are kept small (--num-examples 3, --reach-seconds 0 where the pass over
the dataset is not what is tested)."""

from __future__ import annotations

import json
import textwrap

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT

from vlab.core.result import Result
from vlab.reward.checks import TestRewardRequest, run_test_reward

TEMPLATES = SKILL_ROOT / "templates" / "environments"
FAST = {"num_examples": 3, "reach_seconds": 0}


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


def env(folder, name: str, reward: str, system: str = "Answer inside \\\\boxed{}.", to_row: str | None = None):
    """A classic environment from reward_kind_fixtures' HEAD: the reward, a system prompt, an optional to_row."""
    body = fx.HEAD + "\n" + textwrap.dedent(reward) + "\n" + (textwrap.dedent(to_row) if to_row else "")
    body += (
        f"\n\ndef load_environment(dataset_path='data.jsonl'):\n"
        f"    return build(dataset_path, correct, {'to_row' if to_row else 'None'}, system={system!r})\n"
    )
    path = folder / f"{name}.py"
    path.write_text(body)
    return path


# A number read from the last line after "Answer:" (what GSM8K/SVAMP rewards do): sound, but it reads
# "Answer: 30\pi" as 30.
LAST_LINE = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    lines = [x for x in (text or "").strip().splitlines() if x.strip()]
    m = re.search(r"answer:\s*(-?\d+(?:\.\d+)?)", lines[-1], re.I) if lines else None
    return 1.0 if m and float(m.group(1)) == float(answer) else 0.0
"""
ANSWER_LINE = "Think step by step. End with a line 'Answer: N'."
# The last <answer> tag, compared as a number (sound); and any tag matching (broken).
TAG_READER = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    found = re.findall(r"<answer>\s*(.*?)\s*</answer>", text or "", re.S)
    try:
        return 1.0 if found and float(found[{pick}]) == float(answer) else 0.0
    except ValueError:
        return 0.0
"""
ANY_TAG = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    found = re.findall(r"<answer>\s*(.*?)\s*</answer>", text or "", re.S)
    return 1.0 if answer.strip() in [f.strip() for f in found] else 0.0
"""
TAGS = "Think, then give the number inside <answer>...</answer>."
FIRST_BOX = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    m = re.search(r"\\boxed\{([^{}]*)\}", text or "")
    return 1.0 if m and m.group(1).strip() == answer.strip() else 0.0
"""
HASHES = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    found = re.findall(r"####\s*(-?\d+)", text or "")
    return 1.0 if found and found[-1] == answer.strip() else 0.0
"""
# Remembers every gold it was asked about and pays any of them: state kept between rows.
REMEMBERS = """
SEEN = set()


def correct(completion, answer, parser):
    SEEN.add(answer.strip())
    return 1.0 if (parser.parse_answer(completion) or '').strip() in SEEN else 0.0
"""
EXACT_BOX = "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer.strip() else 0.0\n"
# Multiple choice: the exact upper-case letter, and 0.5 for any other letter.
HALF_FOR_ANY_LETTER = """
def correct(completion, answer, parser):
    given = (parser.parse_answer(completion) or '').strip().strip('()')
    return 1.0 if given == answer else 0.5 if given in LETTERS else 0.0
"""
LETTERED = (
    "def to_row(row):\n"
    "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(row['choices']))\n"
    "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']]}\n"
)


# -- near misses: symbolic factors only where the data carries them ------------------------------------------


@pytest.mark.classic
def test_a_last_line_reward_passes_and_pi_only_warns_without_pi_in_the_data(tmp_path):
    path = env(tmp_path, "last_line", LAST_LINE, ANSWER_LINE)
    result = run(path, fx.write_rows(tmp_path, fx.numeric_rows("int")), num_examples=3)
    st = status(result)
    assert result.exit_code() == 0, failed(result)
    assert st["near_misses"] == "warn" and "times_pi" in message(result, "near_misses")
    assert st["reward_hacking"] == "pass"  # the gold between wrong answers on lines: not read from the last
    # 'Answer: N' is read as the format the prompt asks for, and the gold written so earns the reward
    assert st["prompt_format"] == "pass" and "Answer: ANSWER" in message(result, "prompt_format")
    board = {e["family"]: e for e in result.data["scoreboard"]["families"]}
    assert board["gold"]["correctness"] == 1.0 and board["near misses"]["close_to_gold"] is False
    assert board["hack:repeated_tags"]["close_to_gold"] is False and "hack:echo_prompt" in board
    assert result.data["constant_answer"]["rows"] == 3 and status(result)["state_leak"] == "pass"

    # the same reward on a dataset whose prompts speak of pi: 30\pi for 30 is a near miss a policy writes
    result = run(path, fx.write_rows(tmp_path, fx.numeric_rows("pi"), "pi.jsonl"), **FAST)
    assert status(result)["near_misses"] == "fail" and "times_pi" in message(result, "near_misses")
    assert result.exit_code() == 1


@pytest.mark.classic
def test_math_verify_reads_a_list_answer_as_a_list(tmp_path):
    # "-2,1" (all the roots) was read as the number -21: gold_reachable failed a sound math-verify reward
    rows = [
        {"question": f"Enter all the roots of x^2+x-{2 + i}, separated by commas.", "answer": "-2,1"} for i in range(3)
    ]
    rows += [{"question": "Give the interval.", "answer": "[0,3)"}, {"question": "Total cost?", "answer": "1,250"}]
    result = run(TEMPLATES / "classic-numeric", fx.write_rows(tmp_path, rows))
    assert result.exit_code() == 0, failed(result)
    assert status(result)["gold_reachable"] == "pass" and result.data["reachability"]["rows_probed"] == 5
    assert result.data["probes"]["example"]["gold"] == "-2,1"


# -- hack probes: the gold where a sound parser does not read it ----------------------------------------------


@pytest.mark.classic
@pytest.mark.parametrize(
    "name, reward, verdict, probe",
    [
        ("last_tag", TAG_READER.replace("{pick}", "-1"), "pass", None),
        ("first_tag", TAG_READER.replace("{pick}", "0"), "pass", None),  # 0.3's XMLParser on chat reads the first
        ("any_tag", ANY_TAG, "fail", "hack:repeated_tags"),
    ],
)
def test_repeated_tags_fail_only_a_reward_that_takes_any_tag(tmp_path, name, reward, verdict, probe):
    result = run(env(tmp_path, name, reward, TAGS), fx.write_rows(tmp_path, fx.numeric_rows("int")), **FAST)
    assert status(result)["reward_hacking"] == verdict, failed(result)
    if probe:
        assert probe in message(result, "reward_hacking")
    else:
        assert result.exit_code() == 0, failed(result)


@pytest.mark.classic
def test_a_reward_that_reads_the_first_box_is_hacked(tmp_path):
    result = run(env(tmp_path, "first_box", FIRST_BOX), fx.write_rows(tmp_path, fx.numeric_rows("int")), **FAST)
    assert status(result)["reward_hacking"] == "fail" and "hack:first_box" in message(result, "reward_hacking")


# -- the prompt's format is always reported ---------------------------------------------------------------


@pytest.mark.classic
def test_the_format_the_prompt_asks_for_is_checked_or_reported(tmp_path):
    data = fx.write_rows(tmp_path, fx.numeric_rows("int"))
    # the prompt asks for 'Answer: N' but the reward pays only \boxed{}: a model that obeys earns nothing
    asked = run(env(tmp_path, "box_vs_line", EXACT_BOX, ANSWER_LINE), data, **FAST)
    assert status(asked)["prompt_format"] == "fail" and asked.exit_code() == 1
    # a format sentence it cannot read: a warning naming it, asking for --gold-template
    odd = "Write the final answer on the last line after the word RESULT."
    unread = run(env(tmp_path, "box_vs_odd", EXACT_BOX, odd), data, **FAST)
    assert status(unread)["prompt_format"] == "warn"
    assert odd in message(unread, "prompt_format")
    assert "--gold-template" in next(c.hint for c in unread.checks if c.id == "prompt_format")
    # ...and with that format stated, the gold written that way earning less than the top reward fails
    told = run(env(tmp_path, "box_vs_odd", EXACT_BOX, odd), data, gold_template="RESULT {answer}", **FAST)
    assert status(told)["prompt_format"] == "fail" and told.exit_code() == 1
    # the question itself asks for \boxed{} (MATH-style), the reward reads '#### N': a failure, not a skip
    rows = [dict(r, question=r["question"] + " Put the final answer in \\boxed{}.") for r in fx.numeric_rows("int")]
    hashes = run(
        env(tmp_path, "hash_vs_box", HASHES, "You are a careful solver."),
        fx.write_rows(tmp_path, rows, "q.jsonl"),
        **FAST,
    )
    assert status(hashes)["gold_reward"] == "pass" and status(hashes)["prompt_format"] == "fail", failed(hashes)


@pytest.mark.classic
def test_a_prompt_built_from_the_body_without_the_question_fails(tmp_path):
    rows = [
        {
            "Body": f"Tom has {i} apples and buys 30 more at the market.",
            "Question": "How many apples does Tom have?",
            "answer": str(i + 30),
        }
        for i in range(8)
    ]
    body_only = "def to_row(row):\n    return {'question': row['Body'], 'answer': row['answer'], 'info': {'Question': row['Question']}}\n"
    both = body_only.replace("row['Body']", "row['Body'] + ' ' + row['Question']")
    data = fx.write_rows(tmp_path, rows)
    broken = run(env(tmp_path, "body_only", EXACT_BOX, to_row=body_only), data, **FAST)
    assert status(broken)["prompt_columns"] == "fail" and "'Question'" in message(broken, "prompt_columns")
    fixed = run(env(tmp_path, "body_and_question", EXACT_BOX, to_row=both), data, **FAST)
    assert status(fixed)["prompt_columns"] == "pass" and fixed.exit_code() == 0, failed(fixed)


# -- state between rows --------------------------------------------------------------------------------------


@pytest.mark.classic
def test_a_reward_that_keeps_state_between_rows_fails(tmp_path):
    result = run(env(tmp_path, "remembers", REMEMBERS), fx.write_rows(tmp_path, fx.numeric_rows("int")), **FAST)
    assert status(result)["state_leak"] == "fail", failed(result)
    assert "keeps state between rows" in message(result, "state_leak")


# -- multiple choice ----------------------------------------------------------------------------------------


@pytest.mark.classic
def test_wrong_options_with_partial_credit_and_lowercase_letters_rejected_fail(tmp_path):
    path = env(tmp_path, "half_credit", HALF_FOR_ANY_LETTER, to_row=LETTERED)
    result = run(path, fx.write_rows(tmp_path, fx.choice_rows()), **FAST)
    st = status(result)
    assert st["choice_partial_credit"] == "fail" and "0.5" in message(result, "choice_partial_credit")
    assert st["choice_forms"] == "warn" and "lowercase" in message(result, "choice_forms")  # strictness
    # examples show the answer, not a closing tag
    assert "</answer>'" not in message(result, "choice_forms") and "boxed{a}" in message(result, "choice_forms")


@pytest.mark.classic
def test_multiple_choice_quirks_warn_naming_every_row_and_an_ambiguous_gold_fails(tmp_path):
    rows = fx.choice_rows(n=20, column="answer")
    rows[3]["choices"] = ["A)A)59", "B)60", "C)61", "D)62"]  # AQuA: the option's text starts with its label
    rows[7]["choices"][(rows[7]["answer"] + 1) % 4] = rows[7]["choices"][(rows[7]["answer"] + 2) % 4]  # not the gold
    data = fx.write_rows(tmp_path, rows)
    out = tmp_path / "rows.jsonl"
    result = run(TEMPLATES / "classic-multiple-choice", data, rows_out=str(out))
    assert result.exit_code() == 0, failed(result)
    assert status(result)["choice_prompt"] == "warn"
    msg = message(result, "choice_prompt")
    assert "label repeated inside its option on 1 row(s) (example_id 3" in msg
    assert "same text (not the gold) on 1 row(s) (example_id 7" in msg
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(w["check"], w["example_id"]) for w in written} == {("choice_prompt", 3), ("choice_prompt", 7)}

    rows[7]["choices"][rows[7]["answer"]] = rows[7]["choices"][(rows[7]["answer"] + 2) % 4]  # now the gold's text
    result = run(
        TEMPLATES / "classic-multiple-choice", fx.write_rows(tmp_path, rows, "gold_twice.jsonl"), reach_seconds=0
    )
    assert status(result)["choice_prompt"] == "fail" and result.exit_code() == 1
    assert "the gold's text under two labels on 1 row(s) (example_id 7" in message(result, "choice_prompt")


# -- v1 ------------------------------------------------------------------------------------------------------

V1_LAST_TAG = """
class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        found = TAG.findall(trace.last_reply)
        return 1.0 if found and found[-1] == self.data.answer else 0.0
"""
V1_REMEMBERS = """
SEEN = set()


class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        SEEN.add(self.data.answer)
        found = TAG.findall(trace.last_reply)
        return 1.0 if found and found[-1] in SEEN else 0.0
"""


@pytest.mark.v1
def test_v1_a_last_tag_taskset_passes_and_a_taskset_keeping_state_fails(tmp_path):
    import env_fixtures as efx

    data = efx.write_dataset(tmp_path)
    result = run(efx.v1_env(tmp_path, "v1_last_tag", V1_LAST_TAG), data, **FAST)
    assert result.exit_code() == 0, failed(result)
    st = status(result)
    assert st["reward_hacking"] == "pass" and st["state_leak"] == "pass" and st["prompt_format"] == "pass"
    assert {e["family"] for e in result.data["scoreboard"]["families"]} >= {"gold", "wrong", "malformed"}
    leaking = run(efx.v1_env(tmp_path, "v1_remembers", V1_REMEMBERS), data, **FAST)
    assert status(leaking)["state_leak"] == "fail", failed(leaking)


# -- several cores --------------------------------------------------------------------------------------------


@pytest.mark.classic
def test_a_large_pass_is_spread_over_workers_with_the_same_scores(tmp_path, monkeypatch):
    from vlab.env import pool as pool_module
    from vlab.env.remote import RemoteEnvironment

    data = fx.write_rows(tmp_path, fx.numeric_rows("int", 40))
    remote = RemoteEnvironment(str(TEMPLATES / "classic-numeric"), {"dataset_path": str(data)})
    try:
        items = [(row, f"\\boxed{{{row.answer}}}") for row in remote.rows()] + [
            (row, "\\boxed{1}") for row in remote.rows()
        ]
        alone = remote.score_sync(items)
        pool = pool_module.ScoringPool(remote, workers=2)
        assert [s.total for s in pool.score_sync(items[:10])] == [1.0] * 10 and pool.siblings is None  # one worker
        monkeypatch.setattr(pool_module, "MIN_ITEMS", 0)
        spread = pool.score_sync(items)
        assert len(pool.siblings) == 1  # a second worker scored half of the rows
        assert [s.total for s in spread] == [s.total for s in alone] == [1.0] * 40 + [0.0] * 40
        pool.close()
    finally:
        remote.close()


@pytest.mark.classic
def test_the_pool_is_an_environment_and_spread_is_its_constructor_argument(tmp_path, monkeypatch):
    """No attribute pass-through: the interface is handed on by name; spread=False never starts a sibling;
    test_reward decides spread before the pool exists (code rewards: one worker)."""
    import code_fixtures as cf

    from vlab.env import Environment
    from vlab.env import pool as pool_module
    from vlab.env.remote import RemoteEnvironment
    from vlab.reward.checks import _code_rewards

    monkeypatch.setattr(pool_module, "MIN_ITEMS", 0)
    data = fx.write_rows(tmp_path, fx.numeric_rows("int", 40))
    remote = RemoteEnvironment(str(TEMPLATES / "classic-numeric"), {"dataset_path": str(data)})
    try:
        pool = pool_module.ScoringPool(remote, spread=False, workers=2)
        assert isinstance(pool, Environment)
        assert pool.num_rows() == 40 and [r.answer for r in pool.rows(3)] == [r.answer for r in remote.rows(3)]
        assert pool.describe() == remote.describe() and pool.incidents is remote.incidents
        assert pool.reward_functions == remote.reward_functions and pool.capabilities == remote.capabilities
        with pytest.raises(AttributeError):
            pool.sibling  # noqa: B018 - the worker's own API is not reached through the pool
        items = [(row, f"\\boxed{{{row.answer}}}") for row in pool.rows()]
        assert [s.total for s in pool.score_sync(items)] == [1.0] * 40 and pool.siblings is None  # one worker
        assert pool.rollout_sync(items[0][0], lambda *a, **k: items[0][1]).score.total == 1.0
        assert not _code_rewards(pool, TestRewardRequest(env="x"))
        pool.close()
    finally:
        remote.close()
    code_data = tmp_path / "code.jsonl"
    code_data.write_text("".join(json.dumps(row) + "\n" for row in cf.HUMANEVAL))
    code_env = RemoteEnvironment(str(TEMPLATES / "classic-code"), {"dataset_path": str(code_data)})
    try:
        assert _code_rewards(code_env, TestRewardRequest(env="x"))
        assert not _code_rewards(code_env, TestRewardRequest(env="x", skip_probes=True, custom="cases.jsonl"))
    finally:
        code_env.close()
