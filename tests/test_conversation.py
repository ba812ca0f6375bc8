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
OPTS = SimpleNamespace(correct_threshold=0.5, timeout=10.0, concurrency=8, gold_template=None)

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


def _checks(path: Path, data: Path) -> dict[str, tuple[str, str]]:
    env = load_env(str(path), {"dataset_path": str(data)})
    result = Result("test_reward")
    conversation_checks(result, env, env.rows(2), env.format_hints(), OPTS)
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
