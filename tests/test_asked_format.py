"""The answer format a prompt asks for (issue 33): the common real forms ('Answer: $ANSWER' of simple-evals'
MATH prompt, 'Answer: X', 'ANSWER: ...', 'Final Answer: ...', 'after "Answer:"', 'The final answer is
$\\boxed{answer}$', 'Final Answer: \\boxed{<answer>}') are read in the system prompt and in the user's message,
the gold written that way is probed, and prompt_format fails when it earns nothing. A sentence that merely says
"answer" states no format."""

from __future__ import annotations

import textwrap

import pytest
import reward_kind_fixtures as fx

from vlab.core.result import Result
from vlab.env import FormatHints, Row
from vlab.reward import probes as rp
from vlab.reward.checks import TestRewardRequest, run_test_reward

SIMPLE_EVALS = (
    "The last line of your response should be of the form Answer: $ANSWER (without quotes) "
    "where $ANSWER is the answer to the problem."
)


def last_lines(templates: list[str]) -> list[str]:
    """Each template without the filler reasoning before it."""
    return [t.splitlines()[-1] for t in templates]


# -- recognition ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt, template",
    [
        (SIMPLE_EVALS, "Answer: {answer}"),
        ("Solve it. End your response with 'Answer: X' where X is the result.", "Answer: {answer}"),
        ("Answer: X", "Answer: {answer}"),
        ("Finish with a line ANSWER: ...", "ANSWER: {answer}"),
        ("Show your work, then write Final Answer: ...", "Final Answer: {answer}"),
        ("Final Answer: <your answer>", "Final Answer: {answer}"),
        ("Answer: $LETTER", "Answer: {answer}"),
        ('Think it through and put your final answer after "Answer:".', "Answer: {answer}"),
        ("Conclude with: The final answer is $\\boxed{answer}$.", "The final answer is $\\boxed{{answer}}$"),
        (
            "Return your final response as 'Final Answer: \\boxed{<answer>}', where <answer> is the number "
            "or mathematical expression of the solution.",
            "Final Answer: \\boxed{{answer}}",
        ),
    ],
)
def test_each_asked_form_becomes_its_template(prompt, template):
    assert last_lines(rp.answer_line_templates(prompt)) == [template]
    # read in the system prompt (after whatever the older placeholders read there)...
    assert template in last_lines(rp.system_prompt_templates(prompt))
    # ...and in the user's message, as a gold probe in that format
    row = Row(0, [{"role": "user", "content": f"What is 2 + 3?\n\n{prompt}"}], "5", f"What is 2 + 3?\n\n{prompt}")
    built = rp.build_probes(row, FormatHints(system_prompt="You are a careful solver."))
    gold = next(p for p in built.probes if p.id == "gold:user_prompt")
    assert gold.text.splitlines()[-1] == rp.fill(template, "5")
    stated = rp.prompt_stated_probe_ids(FormatHints(system_prompt="You are a careful solver."), None, row.question)
    assert "gold:user_prompt" in stated and "{answer}" not in stated["gold:user_prompt"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Answer the following question.",
        "Your answer should be a single number.",
        "Think about the answer: what does the question ask?",
        "Answer: explain your reasoning first.",
        "Answer: 42",  # a worked example's answer, not a placeholder
        "Answer: X is the unknown we solve for.",  # X in a sentence, not alone
        "Answer: N/A means there is no solution.",
        "The answer is the number of apples.",
        "Please reason step by step, and put your final answer within \\boxed{}.",  # the boxed convention
    ],
)
def test_a_sentence_that_only_speaks_of_an_answer_states_no_format(sentence):
    assert rp.answer_line_templates(sentence) == []
    row = Row(0, [{"role": "user", "content": f"What is 2 + 3? {sentence}"}], "5", f"What is 2 + 3? {sentence}")
    built = rp.build_probes(row, FormatHints(system_prompt="You are a careful solver."))
    assert not [p for p in built.probes if p.id.startswith("gold:user_prompt")]


def test_an_answer_label_before_a_tag_pair_is_the_tag_pair():
    prompt = "Answer: <answer>...</answer>"
    assert rp.answer_line_templates(prompt) == []
    assert last_lines(rp.system_prompt_templates(prompt)) == ["<answer>{answer}</answer>"]


def test_formats_read_before_keep_their_place():
    # 'Answer: N' and '<number>' were read before: the same template, the same probe id, nothing added
    for prompt in (
        "Think step by step. End with a line 'Answer: N'.",
        "End with a line in the format: Answer: <number>",
    ):
        assert last_lines(rp.system_prompt_templates(prompt)) == ["Answer: {answer}"]
    sources = [s for s, _ in rp.gold_templates(FormatHints(system_prompt="Reply with [number only]."), None, "")]
    assert sources == ["system_prompt"]


# -- test_reward end to end -------------------------------------------------------------------------------

# The reward reads only \boxed{} (the fixtures' parser), compared as a string.
BOX_ONLY = (
    "def correct(completion, answer, parser):\n"
    "    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer.strip() else 0.0\n"
)
# The reward reads the number on the last line after 'Answer:' (what simple-evals' MATH grader does).
ANSWER_LINE = r"""
def correct(completion, answer, parser):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    lines = [x for x in (text or "").strip().splitlines() if x.strip()]
    m = re.search(r"^answer:\s*(-?\d+(?:\.\d+)?)\s*$", lines[-1], re.I) if lines else None
    return 1.0 if m and float(m.group(1)) == float(answer) else 0.0
"""


def env(folder, name: str, reward: str, system: str):
    body = fx.HEAD + "\n" + textwrap.dedent(reward)
    body += f"\n\ndef load_environment(dataset_path='data.jsonl'):\n    return build(dataset_path, correct, None, system={system!r})\n"
    path = folder / f"{name}.py"
    path.write_text(body)
    return path


def run(path, data) -> Result:
    result = Result("test_reward")
    request = TestRewardRequest(env=str(path), env_args={"dataset_path": str(data)}, num_examples=3, reach_seconds=0)
    run_test_reward(request, result)
    return result


def status(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def message(result: Result, cid: str) -> str:
    return next(c.message for c in result.checks if c.id == cid)


def asking_rows(tmp_path, ask: str = SIMPLE_EVALS):
    """MATH-style rows: the format instruction is in the question itself."""
    rows = [dict(r, question=f"{r['question']}\n\n{ask}") for r in fx.numeric_rows("int")]
    return fx.write_rows(tmp_path, rows)


@pytest.mark.classic
def test_a_user_message_asking_for_answer_line_fails_a_reward_that_pays_only_boxed(tmp_path):
    result = run(env(tmp_path, "box_only", BOX_ONLY, "You are a careful solver."), asking_rows(tmp_path))
    st = status(result)
    assert st["gold_reward"] == "pass", result.checks  # \boxed{} still earns it...
    assert st["prompt_format"] == "fail" and result.exit_code() == 1  # ...but not what the question asks for
    assert "Answer: ANSWER" in message(result, "prompt_format")
    ids = [p["probe"] for p in result.data["probes"]["example"]["probes"]]
    assert "gold:user_prompt" in ids


@pytest.mark.classic
def test_a_user_message_asking_for_answer_line_passes_a_reward_that_reads_it(tmp_path):
    result = run(env(tmp_path, "answer_line", ANSWER_LINE, "You are a careful solver."), asking_rows(tmp_path))
    st = status(result)
    assert st["prompt_format"] == "pass", [(c.id, c.message) for c in result.checks]
    assert "Answer: ANSWER" in message(result, "prompt_format")
    assert st["gold_reward"] == "pass" and "gold:user_prompt" in message(result, "gold_reward")
    assert result.exit_code() == 0, [(c.id, c.message) for c in result.checks if c.status == "fail"]


@pytest.mark.classic
def test_a_system_prompt_asking_for_final_answer_boxed_passes_a_boxed_reward(tmp_path):
    system = "Return your final response as 'Final Answer: \\boxed{<answer>}', where <answer> is the number."
    result = run(env(tmp_path, "final_boxed", BOX_ONLY, system), fx.write_rows(tmp_path, fx.numeric_rows("int")))
    assert status(result)["prompt_format"] == "pass", [(c.id, c.message) for c in result.checks]
    assert "Final Answer: \\boxed{ANSWER}" in message(result, "prompt_format")
