"""Scripted conversations (vlab/reward/conversation.py) through the tool templates' own rollout loops.

Each defect the issue planted into a copy of a tool template fails the check that names it;
the templates themselves pass. Plants load in-process (one load each, scripted turns are
cheap); the templates run end to end through test_reward, where a tool that never returns
is stopped by the worker's time limit.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import SKILL_ROOT, assert_result, run_script

from vlab.core.result import Result
from vlab.env.locate import load_env
from vlab.reward.conversation import conversation_checks

TEMPLATES = SKILL_ROOT / "templates" / "environments"
ROWS = [
    {
        "question": "Janet has 16 eggs, eats 3, bakes with 4 and sells the rest at $2 each. How many dollars does she make?",
        "answer": "She sells 16 - 3 - 4 = 9 eggs for 9 * 2 = 18 dollars.\n#### 18",
    },
    {
        "question": "A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total?",
        "answer": "It takes 2 / 2 = 1 bolt of white fiber, so 2 + 1 = 3 bolts in total.\n#### 3",
    },
]
OPTS = SimpleNamespace(
    correct_threshold=0.5,
    timeout=10.0,
    concurrency=8,
    gold_template=None,
    seq_len=None,
    max_tokens=None,
    tokenizer=None,
)

V1_CALL = "return 1.0 if given is not None and gold is not None and given == gold else 0.0"
V1_PLANTS = {
    "pays_per_call": (
        "tool_calls_pay",
        [
            (
                V1_CALL,
                "calls = sum(len(m.tool_calls or []) for m in trace.assistant_messages)\n"
                "        return min(1.0, (1.0 if given is not None and given == gold else 0.0) + 0.25 * calls)",
            )
        ],
    ),
    "answer_from_tool": (
        "answer_from_tool",
        [
            (
                "given = parse_number(final_boxed(trace.last_reply))",
                "outputs = [m.content for m in trace.messages if m.role == 'tool']\n"
                "        given = parse_number(str(outputs[-1]).strip()) if outputs else parse_number(final_boxed(trace.last_reply))",
            )
        ],
    ),
    "first_turn": (
        "reads_final_answer",
        [
            (
                "given = parse_number(final_boxed(trace.last_reply))",
                "given = parse_number(final_boxed(trace.assistant_messages[0].content))",
            )
        ],
    ),
    "tool_raises": (
        "tool_bad_arguments",
        [
            (
                "        return calculate(expression)\n",
                "        out = calculate(expression)\n        if out.startswith('error'):\n"
                "            raise ValueError(out)\n        return out\n",
            )
        ],
    ),
    "tool_evals": (
        "tool_executes_input",
        [("        return calculate(expression)\n", "        return str(eval(expression))\n")],
    ),
    "tool_looks_up": (
        "tool_leak",
        [
            (
                "        return calculate(expression)\n",
                "        return SOLUTIONS.get(expression) or calculate(expression)\n",
            ),
            (
                "    yield from dataset\n",
                "    SOLUTIONS.update({prompt_text(r): str(r[ANSWER_COLUMN]) for r in dataset})\n    yield from dataset\n",
            ),
            ("TOOL_NAME = ", "SOLUTIONS = {}\nTOOL_NAME = "),
        ],
    ),
    "no_turn_limit": (
        "turn_limit",
        [("    @vf.stop\n", ""), ("return trace.num_turns >= self.config.max_turns", "return False")],
    ),
    "one_turn": ("turn_limit", [("max_turns: int = 6", "max_turns: int = 1")]),
    "no_tool": ("tools_offered", [("return [CalculatorToolset(config.tools)]", "return []")]),
}

CLASSIC_CALL = "return 1.0 if given is not None and gold is not None and given == gold else 0.0"
CLASSIC_HELPERS = (
    "def _get(m, key):\n    return m.get(key) if isinstance(m, dict) else getattr(m, key, None)\n\n\n"
    "def calculate(expression: str) -> str:"
)
CLASSIC_PLANTS = {
    "pays_per_call": (
        "tool_calls_pay",
        [
            (
                CLASSIC_CALL,
                "calls = sum(len(_get(m, 'tool_calls') or []) for m in completion)\n"
                "        return min(1.0, (1.0 if given is not None and given == gold else 0.0) + 0.25 * calls)",
            )
        ],
    ),
    "answer_from_tool": (
        "answer_from_tool",
        [
            (
                "given = parse_number(parser.parse_answer(completion))",
                "outputs = [_get(m, 'content') for m in completion if _get(m, 'role') == 'tool']\n"
                "        given = parse_number(str(outputs[-1]).strip()) if outputs else parse_number(parser.parse_answer(completion))",
            )
        ],
    ),
    "first_turn": (
        "reads_final_answer",
        [
            (
                "given = parse_number(parser.parse_answer(completion))",
                "first = next(_get(m, 'content') for m in completion if _get(m, 'role') == 'assistant')\n"
                "        given = parse_number(vf.extract_boxed_answer(first or '', strict=True))",
            )
        ],
    ),
    "tool_raises": (
        "tool_bad_arguments",
        [
            ('        return "error: division by zero"\n', '        raise ValueError("division by zero")\n'),
            ('        return f"error: {err}"\n', "        raise\n"),
        ],
    ),
    "tool_evals": (
        "tool_executes_input",
        [
            (
                "    if not isinstance(expression, str) or len(",
                "    return str(eval(expression))\n    if not isinstance(expression, str) or len(",
            )
        ],
    ),
    "tool_looks_up": (
        "tool_leak",
        [
            (
                "    if not isinstance(expression, str) or len(",
                "    if expression in SOLUTIONS:\n        return SOLUTIONS[expression]\n    if not isinstance(expression, str) or len(",
            ),
            (
                "    if num_examples > 0:\n",
                "    SOLUTIONS.update({prompt_text(r): str(r[ANSWER_COLUMN]) for r in dataset})\n    if num_examples > 0:\n",
            ),
            ("_OPERATORS = ", "SOLUTIONS = {}\n_OPERATORS = "),
        ],
    ),
    "no_turn_limit": ("turn_limit", [("    max_turns: int = 6,", "    max_turns: int = -1,")]),
    "one_turn": ("turn_limit", [("    max_turns: int = 6,", "    max_turns: int = 1,")]),
    "no_tool": ("tools_offered", [("tools=[calculate],", "tools=[],")]),
}


def _write(folder: Path, template: str, module: str, name: str, edits) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    text = (TEMPLATES / template / f"{module}.py").read_text()
    text = text.replace("def calculate(expression: str) -> str:", CLASSIC_HELPERS, 1) if "classic" in template else text
    for old, new in edits:
        assert old in text, f"the plant no longer matches the template: {old!r}"
        text = text.replace(old, new, 1)
    path = folder / f"{name}.py"
    path.write_text(text)
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path, data


def _checks(path: Path, data: Path, args: dict | None = None, **opts) -> dict[str, tuple[str, str]]:
    env = load_env(str(path), {"dataset_path": str(data), **(args or {})})
    result = Result("test_reward")
    conversation_checks(result, env, env.rows(2), env.format_hints(), SimpleNamespace(**{**vars(OPTS), **opts}))
    return {c.id: (c.status, c.message) for c in result.checks}


@pytest.mark.v1
@pytest.mark.parametrize("plant", sorted(V1_PLANTS))
def test_v1_tool_template_plant_fails_its_check(tmp_path, plant):
    check, edits = V1_PLANTS[plant]
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", f"v1_plant_{plant}", edits)
    checks = _checks(path, data)
    assert checks.get(check, ("missing",))[0] == "fail", checks


@pytest.mark.classic
@pytest.mark.parametrize("plant", sorted(CLASSIC_PLANTS))
def test_classic_tool_env_plant_fails_its_check(tmp_path, plant):
    check, edits = CLASSIC_PLANTS[plant]
    path, data = _write(tmp_path, "classic-multiturn-tool", "classic_multiturn_tool", f"classic_plant_{plant}", edits)
    checks = _checks(path, data)
    assert checks.get(check, ("missing",))[0] == "fail", checks


@pytest.mark.v1
def test_a_search_tool_that_finds_the_answer_is_not_a_leak(tmp_path):
    """Finding the answer is what a retrieval tool is for: no tool_leak failure (the worked solution would be)."""
    edits = V1_PLANTS["tool_looks_up"][1] + [
        ("    def calculate(self, expression: str) -> str:", "    def search(self, expression: str) -> str:")
    ]
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_search_tool", edits)
    checks = _checks(path, data)
    assert checks["tools_offered"][0] == "pass" and "search" in checks["tools_offered"][1], checks
    assert checks["tool_leak"][0] == "pass", checks


@pytest.mark.v1
def test_toolsets_that_cannot_run_here_skip_the_conversations(tmp_path):
    edits = [("return [CalculatorToolset(config.tools)]", "raise RuntimeError('this toolset needs a sandbox')")]
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_sandbox_tool", edits)
    env = load_env(str(path), {"dataset_path": str(data)})
    assert env.capabilities.tools and env.capabilities.multi_turn and "sandbox" in env.tool_loop_error
    result = Result("test_reward")
    conversation_checks(result, env, env.rows(2), env.format_hints(), OPTS)
    assert [(c.id, c.status) for c in result.checks] == [("conversation", "skip")]


def _end_to_end(tmp_path: Path, template: str, module: str, edits=()) -> dict:
    path, data = _write(tmp_path, template, module, module, edits)
    run = run_script(
        "test_reward",
        str(path),
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--reach-seconds",
        "0",
        "--json",
    )
    return run.json


@pytest.mark.v1
def test_v1_tool_template_passes_every_conversation_check(tmp_path):
    out = assert_result(_end_to_end(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool"), "test_reward", 0)
    ids = {c["id"]: c["status"] for c in out["checks"]}
    for check in ("tools_offered", "conversation_gold", "tool_calls_pay", "turn_limit", "tool_time_bound", "tool_leak"):
        assert ids[check] == "pass", out["checks"]
    assert out["data"]["environment"]["multiturn"] is True
    assert out["data"]["conversation"]["tools"] == ["calculate"]
    assert out["data"]["conversation"]["rows"][0]["turns_until_stop"] == 6


@pytest.mark.v1
def test_v1_calculator_without_size_limit_is_stopped_by_the_time_bound(tmp_path):
    edits = [("        if _bits(value) > MAX_BITS:\n            raise", "        if False:\n            raise"),
             ("and _bits(left) * abs(right) > MAX_BITS", "and False")]  # fmt: skip
    out = assert_result(_end_to_end(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", edits), "test_reward", 1)
    failed = {c["id"]: c["message"] for c in out["checks"] if c["status"] == "fail"}
    assert "tool_time_bound" in failed and "worker_timeout" not in failed, failed


@pytest.mark.classic
def test_classic_tool_template_passes_every_conversation_check(tmp_path):
    out = assert_result(_end_to_end(tmp_path, "classic-multiturn-tool", "classic_multiturn_tool"), "test_reward", 0)
    ids = {c["id"]: c["status"] for c in out["checks"]}
    for check in ("tools_offered", "reads_final_answer", "answer_from_tool", "tool_bad_arguments", "tool_time_bound"):
        assert ids[check] == "pass", out["checks"]
    assert out["data"]["conversation"]["rows"][0]["turns_until_stop"] == 6


@pytest.mark.parametrize(
    "module", ["v1-multiturn-tool/v1_multiturn_tool.py", "classic-multiturn-tool/classic_multiturn_tool.py"]
)
def test_tool_templates_accept_numeric_spellings_and_bound_the_calculator(tmp_path, module):
    text = (TEMPLATES / module).read_text()
    namespace: dict = {}
    # the pure helpers only (no verifiers import needed): parse_number and calculate
    start = text.index("MAX_EXPRESSION = ")
    helpers = text[start : text.index("def reference_answer")]
    exec(
        compile(
            "import ast, operator, re\nfrom fractions import Fraction\n" + _operators(text) + helpers, module, "exec"
        ),
        namespace,
    )  # noqa: S102
    parse, calculate = namespace["parse_number"], namespace["calculate"]
    for spelling in ("18", "\\$18", "$18", "18 dollars", "18\\text{ dollars}", "18.0"):
        assert parse(spelling) == 18, spelling
    for wrong in ("2\\pi", "51 or 52", "x = 3"):
        assert parse(wrong) is None, wrong
    assert calculate("(((9**64)**64)**64)**64").startswith("error")
    assert calculate("(12 + 3) * 4 / 5") == "12"


def _operators(text: str) -> str:
    return text[text.index("_OPERATORS = ") : text.index("MAX_EXPRESSION = ")]


# -- the token budget of a rollout against --seq-len (reward/budget.py, train/turns.py) -------------


def _budget_cases(path: Path, data: Path, turn_args: dict) -> None:
    """No --seq-len: skipped, saying what to pass; a seq_len that cannot hold a call and an answer fails;
    one that holds two turns but not the turn limit's six warns; a large one passes. The turn limit is the
    environment's own (no max_turns argument), read from the loaded environment."""
    skip = _checks(path, data)["token_budget"]
    assert skip[0] == "skip" and "--seq-len" in skip[1], skip
    status, message = _checks(path, data, seq_len=300, max_tokens=128)["token_budget"]
    assert (
        status == "fail"
        and "one tool call (or environment reply) and an answer" in message
        and "characters per token" in message
    ), message
    status, message = _checks(path, data, seq_len=600, max_tokens=128)["token_budget"]
    assert status == "warn" and "max_turns=6" in message and "about" in message, message
    status, message = _checks(path, data, seq_len=8192, max_tokens=512)["token_budget"]
    assert status == "pass" and "max_turns=6" in message, message
    # the argument's limit is what the environment runs with
    status, message = _checks(path, data, turn_args, seq_len=8192, max_tokens=512)["token_budget"]
    assert status == "warn" and "max_turns=40" in message, message


@pytest.mark.v1
def test_v1_token_budget_against_seq_len(tmp_path):
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_budget", [])
    _budget_cases(path, data, {"task": {"max_turns": 40}})


@pytest.mark.classic
def test_classic_token_budget_against_seq_len(tmp_path):
    path, data = _write(tmp_path, "classic-multiturn-tool", "classic_multiturn_tool", "classic_budget", [])
    _budget_cases(path, data, {"max_turns": 40})


@pytest.mark.v1
def test_token_budget_counts_with_a_tokenizer_when_one_is_given(tmp_path):
    """A tokenizer saved to a folder (the tiny character-level one: a token per character) counts the tokens;
    one that is not available offline falls back to the estimate and says so."""
    pytest.importorskip("transformers")
    from vlab.train.tiny import make_tokenizer

    folder = tmp_path / "tok"
    make_tokenizer().save_pretrained(folder)
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_budget_tok", [])
    by_chars = _checks(path, data, seq_len=8192, max_tokens=64, tokenizer=str(folder))["token_budget"]
    estimate = _checks(path, data, seq_len=8192, max_tokens=64)["token_budget"]
    assert f"the tokenizer {str(folder)!r}" in by_chars[1], by_chars
    prompt = lambda m: int(m.split("prompt ")[1].split(",")[0])  # noqa: E731
    assert prompt(by_chars[1]) > prompt(estimate[1]), (by_chars, estimate)  # 1 char per token vs 3
    missing = _checks(path, data, seq_len=8192, tokenizer=str(tmp_path / "absent"))["token_budget"]
    assert "characters per token" in missing[1] and "not available offline" in missing[1], missing


@pytest.mark.v1
def test_token_budget_uses_the_turns_the_environment_allows_and_names_a_missing_limit(tmp_path):
    """A stop that ignores task.max_turns: the turns the scripted rollouts were allowed count, not the declared 6;
    no stop at all: the budget names the missing limit (and turn_limit fails)."""
    edits = [("return trace.num_turns >= self.config.max_turns", "return trace.num_turns >= 3")]
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_budget_own_stop", edits)
    status, message = _checks(path, data, seq_len=8192, max_tokens=512)["token_budget"]
    assert status == "pass" and "the 3 turns the scripted rollouts were allowed" in message, message
    edits = [("return trace.num_turns >= self.config.max_turns", "return False")]
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_budget_no_stop", edits)
    checks = _checks(path, data, seq_len=8192, max_tokens=512)
    assert checks["token_budget"][0] == "warn" and "no turn limit" in checks["token_budget"][1], checks
    assert checks["turn_limit"][0] == "fail", checks


@pytest.mark.v1
def test_test_reward_seq_len_end_to_end(tmp_path):
    path, data = _write(tmp_path, "v1-multiturn-tool", "v1_multiturn_tool", "v1_budget_cli", [])
    args = json.dumps({"dataset_path": str(data)})
    run = run_script("test_reward", str(path), "--env-args", args, "--reach-seconds", "0", "--seq-len", "300", "--json")
    out = assert_result(run.json, "test_reward", 1)
    failed = {c["id"]: c["message"] for c in out["checks"] if c["status"] == "fail"}
    assert list(failed) == ["token_budget"] and "seq_len 300" in failed["token_budget"], failed
    assert out["data"]["environment"]["max_turns"] == 6  # the taskset's own task.max_turns
    bad = run_script("test_reward", str(path), "--seq-len", "0", "--json")
    assert bad.returncode == 2, bad


@pytest.mark.classic
def test_classic_multi_turn_env_without_tools_budget_counts_its_replies(tmp_path):
    """A classic MultiTurnEnv game (max_turns=2, the env's reply between the turns): its own limit and its
    replies are what the budget holds."""
    import env_fixtures as fx

    data = fx.write_dataset(tmp_path)
    env = load_env(str(fx.multiturn_env(tmp_path, "mt_budget_env")), {"dataset_path": str(data)})
    assert env.capabilities.max_turns == 2 and not env.capabilities.tools
    result = Result("test_reward")
    opts = SimpleNamespace(**{**vars(OPTS), "seq_len": 200, "max_tokens": 64})
    conversation_checks(result, env, env.rows(2), env.format_hints(), opts)
    budget = next(c for c in result.checks if c.id == "token_budget")
    assert budget.status == "pass" and "max_turns=2" in budget.message, budget
    reply = -(-(len("Are you sure? Repeat the answer.")) // 3) + 4  # the env's reply, estimated, with its message
    assert f"environment reply up to {reply}," in budget.message, budget.message
