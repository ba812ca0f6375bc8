"""The templates are real environments: each loads with verifiers' own loader and scores a
gold answer 1.0 and a wrong one 0.0 through verifiers' own scoring; each package is
installable-shaped; every config template passes the checker that owns it."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, VERIFIERS, assert_result, run_script

from vlab.env import compat

TEMPLATES = SKILL_ROOT / "templates" / "environments"
CLASSIC = [
    "classic-numeric",
    "classic-multiple-choice",
    "classic-classification",
    "classic-multiturn-tool",
    "classic-code",
    "classic-program",
    "classic-short-answer",
]
V1 = [
    "v1-numeric",
    "v1-multiple-choice",
    "v1-classification",
    "v1-multiturn-tool",
    "v1-code",
    "v1-program",
    "v1-short-answer",
]
# Scored by an LLM judge: tests/test_judge.py scores them against the loopback stub judge.
JUDGE = ["classic-judge", "v1-judge"]

# Rows in each template's default column layout, written into tmp_path by the tests.
ROWS = {
    "numeric": [
        {
            "question": "Ada has 3 boxes with 12 shells in each box. How many shells?",
            "answer": "3 * 12 = <<3*12=36>>36\n#### 36",
        },
        {"question": "What is 1,200 + 34?", "answer": "1234"},
    ],
    "multiple-choice": [
        {"question": "What is 2 + 2?", "choices": ["3", "4", "5"], "answer": 1},
        {"question": "Capital of France?", "choices": ["Rome", "Paris"], "answer": "Paris"},
        {"question": "Largest planet?", "choices": ["Mars", "Jupiter", "Venus"], "answer": "B"},
    ],
    "classification": [
        {"text": "a wonderful, moving film", "label": "positive"},
        {"text": "dull and far too long", "label": "negative"},
    ],
    "short-answer": [  # Natural Questions' layout: a list of aliases, any one right
        {
            "question": "when was the last time anyone was on the moon",
            "answer": ["14 December 1972 UTC", "December 1972"],
        },
        {"question": "who wrote he ain't heavy he's my brother lyrics", "answer": ["Bobby Scott", "Bob Russell"]},
    ],
    "code": [  # HumanEval's layout: the solution is the body under the prompt's signature
        {
            "prompt": 'def add(a, b):\n    """Return a + b."""\n',
            "canonical_solution": "    return a + b\n",
            "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
            "entry_point": "add",
        },
        {
            "prompt": 'def neg(x):\n    """Return -x."""\n',
            "canonical_solution": "    return -x\n",
            "test": "def check(candidate):\n    assert candidate(2) == -2\n",
            "entry_point": "neg",
        },
    ],
    "program": [  # APPS/TACO's layout: a statement, stdin/stdout tests, a list of accepted programs
        {
            "question": "Print the sum of two integers.\n\nInput\n1 2\n\nOutput\n3",
            "input_output": json.dumps({"inputs": ["1 2\n", "40 2\n"], "outputs": ["3\n", "42\n"]}),
            "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n"]),
        },
        {
            "question": "Print the number twice.",
            "input_output": json.dumps({"inputs": ["7\n"], "outputs": ["7 7\n"]}),
            "solutions": json.dumps(["n = input().strip()\nprint(n, n)\n"]),
        },
    ],
}
# (gold reply, wrong reply) for the first row of each kind.
REPLIES = {
    "numeric": ("3 boxes of 12 make 36. \\boxed{36}", "I think it is \\boxed{35}"),
    "multiple-choice": ("2 + 2 = 4, option B. \\boxed{B}", "\\boxed{A}"),
    "classification": ("Clearly praise. \\boxed{positive}", "\\boxed{negative}"),
    "short-answer": ("The last landing was Apollo 17: \\boxed{December 1972}", "\\boxed{July 1969}"),
    "code": (
        "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```",
        "```python\ndef add(a, b):\n    return a - b\n```",
    ),
    "program": (
        "Read both and add:\n```python\nimport sys\nprint(sum(map(int, sys.stdin.read().split())))\nexit()\n```",
        "```python\nprint(12)\n```",
    ),
}


def kind(template: str) -> str:
    return "numeric" if "numeric" in template or "tool" in template else template.split("-", 1)[1]


def write_rows(tmp_path: Path, template: str) -> Path:
    path = tmp_path / f"{kind(template)}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[kind(template)]))
    return path


def module_name(template: str) -> str:
    return template.replace("-", "_")


@pytest.fixture
def on_path(monkeypatch):
    def add(folder: Path, module: str):
        monkeypatch.syspath_prepend(str(folder))
        sys.modules.pop(module, None)

    return add


# -- classic (verifiers 0.3.x) --------------------------------------------------------------


def classic_score(env, row: dict, reply: str) -> tuple[float, dict]:
    state = compat.scoring_state(row, [{"role": "assistant", "content": reply}])
    asyncio.run(env.rubric.score_rollout(state))
    return compat.state_scores(state)


@pytest.mark.classic
@pytest.mark.parametrize("template", CLASSIC)
def test_classic_template_scores_gold_1_and_wrong_0(template, tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / template, module_name(template))
    env = vf.load_environment(module_name(template), dataset_path=str(write_rows(tmp_path, template)))
    rows = env.get_dataset()
    assert len(rows) == len(ROWS[kind(template)])
    gold, wrong = REPLIES[kind(template)]
    reward, metrics = classic_score(env, rows[0], gold)
    assert reward == 1.0, metrics
    reward, metrics = classic_score(env, rows[0], wrong)
    assert reward == 0.0, metrics
    assert classic_score(env, rows[0], "")[0] == 0.0


@pytest.mark.classic
def test_classic_multiple_choice_reads_index_text_and_letter_answers(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-multiple-choice", "classic_multiple_choice")
    env = vf.load_environment(
        "classic_multiple_choice", dataset_path=str(write_rows(tmp_path, "classic-multiple-choice"))
    )
    assert list(env.get_dataset()["answer"]) == ["B", "B", "B"]


@pytest.mark.classic
def test_classic_numeric_compares_numbers_exactly(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-numeric", "classic_numeric")
    env = vf.load_environment("classic_numeric", dataset_path=str(write_rows(tmp_path, "classic-numeric")))
    row = env.get_dataset()[1]  # answer "1234"
    for reply, expected in [
        ("\\boxed{1,234}", 1.0),
        ("\\boxed{1234.0}", 1.0),
        ("\\boxed{$1234}", 1.0),
        ("\\boxed{1234.5}", 0.0),
        ("\\boxed{1234 or 1235}", 0.0),
        ("1234", 0.0),
    ]:
        assert classic_score(env, row, reply)[0] == expected, reply


@pytest.mark.classic
def test_classic_classification_lists_labels_from_the_data(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-classification", "classic_classification")
    env = vf.load_environment(
        "classic_classification", dataset_path=str(write_rows(tmp_path, "classic-classification"))
    )
    assert "negative, positive" in env.system_prompt
    row = env.get_dataset()[0]
    assert classic_score(env, row, "\\boxed{ Positive }")[0] == 1.0


@pytest.mark.classic
def test_classic_calculator_tool_is_safe(on_path):
    on_path(TEMPLATES / "classic-multiturn-tool", "classic_multiturn_tool")
    import classic_multiturn_tool as mod

    assert mod.calculate("(12 + 3) * 4 / 5") == "12"
    assert mod.calculate("7/2") == "3.5"
    assert mod.calculate("1/0").startswith("error")
    assert mod.calculate("__import__('os').system('true')").startswith("error")
    assert mod.calculate("9**9**9").startswith("error")


@pytest.mark.classic
def test_classic_missing_column_is_a_clear_error(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-numeric", "classic_numeric")
    data = tmp_path / "other.jsonl"
    data.write_text(json.dumps({"problem": "1+1", "solution": "2"}) + "\n")
    with pytest.raises(Exception, match="no column"):
        vf.load_environment("classic_numeric", dataset_path=str(data))


@pytest.mark.classic
@pytest.mark.parametrize("template", CLASSIC)
def test_classic_template_without_a_dataset_is_an_error_not_a_default(template, on_path):
    """No dataset_path and no dataset_name: a clear error, never a Hub dataset the user did not name."""
    import verifiers as vf

    on_path(TEMPLATES / template, module_name(template))
    with pytest.raises(Exception, match="no dataset named") as err:
        vf.load_environment(module_name(template))
    assert "dataset_path" in str(err.value) and "dataset_name" in str(err.value)


def package_copy(tmp_path: Path, template: str, data_folder: str, file_name: str = "train.jsonl") -> Path:
    """The template's folder copied under tmp_path, with its rows shipped in data_folder/ inside it."""
    folder = tmp_path / "pkg" / template
    shutil.copytree(TEMPLATES / template, folder)
    (folder / data_folder).mkdir()
    shutil.copy(write_rows(tmp_path, template), folder / data_folder / file_name)
    return folder


@pytest.mark.classic
@pytest.mark.parametrize("data_folder", ["data", "classic_classification_data"])  # a checkout; a wheel install
@pytest.mark.parametrize("given", ["train.jsonl", "data/train.jsonl"])
def test_classic_template_finds_data_shipped_in_the_package(tmp_path, on_path, monkeypatch, data_folder, given):
    import verifiers as vf

    folder = package_copy(tmp_path, "classic-classification", data_folder)
    on_path(folder, "classic_classification")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # a trainer's working folder: nothing there
    env = vf.load_environment("classic_classification", dataset_path=given)
    assert list(env.get_dataset()["answer"]) == [r["label"] for r in ROWS["classification"]]
    with pytest.raises(Exception, match="looked at") as err:  # verifiers' loader re-raises it as a RuntimeError
        vf.load_environment("classic_classification", dataset_path="other.jsonl")
    assert str(folder / "data" / "other.jsonl") in str(err.value)


# Reference answer, reply in \\boxed{}, expected reward: math-verify's verdicts the numeric templates give.
NUMERIC_CASES = [
    ("51.0", "51", 1.0),  # a float gold and its integer form
    ("51", "51.0", 1.0),
    ("51", "51.4", 0.0),  # a near miss an int(float(x)) reward would pay
    ("0.5", "\\frac{1}{2}", 1.0),
    ("0.5", ".5", 1.0),
    ("\\frac{1}{2}", "0.5", 1.0),
    ("2", "2\\pi", 0.0),  # LaTeX that merely contains the gold
    ("1000", "1{,}000", 1.0),
    ("-3", "3", 0.0),
    ("12345678901234567", "12345678901234568", 0.0),
    ("61", "60 1", 0.0),  # math-verify alone reads side-by-side numbers as their sum
    ("1.5", "1\\frac{1}{2}", 1.0),  # a mixed number is one value
    # issue 33: the spellings math-verify misreads are made readable; small numbers are compared exactly
    ("90", "90°", 1.0),
    ("90", "90\\degree", 1.0),
    ("90^\\circ", "90", 1.0),
    ("2220", "2\\,220", 1.0),
    ("3\\sqrt{5}", "3 sqrt(5)", 1.0),
    ("(1,\\sqrt{3})", "(1, sqrt(3))", 1.0),
    ("9", "9.", 1.0),
    ("10", "10\\%", 1.0),
    (".0000672", "0.0000673", 0.0),  # math-verify's 6-place rounding would pay it
    (".0000672", "0.0000672", 1.0),
    ("\\frac{14}{3}", "14/3", 1.0),
    ("\\frac{14}{3}", "4.6667", 0.0),
    ("\\pi", "3.14", 0.0),
    ("(3, \\frac{\\pi}{2})", "(\\frac{\\pi}{2}, 3)", 0.0),
    ("[-2,7]", "(-2,7]", 0.0),
    (".0000672", "0.0112 0.006", 0.0),  # the question's two numbers: math-verify reads their product
]


def test_the_numeric_templates_share_one_comparison():
    """classic-numeric and v1-numeric compare with the same code, which vlab's probes also run
    (vlab.kinds.number.equivalence.template_comparison reads it from v1-numeric)."""
    import ast

    from vlab.kinds.number.equivalence import COMPARISON

    def segments(path):
        text = path.read_text()
        out = {}
        for node in ast.parse(text).body:
            name = getattr(node, "name", None) or (
                node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) else None
            )
            if name in COMPARISON:
                out[name] = ast.get_source_segment(text, node)
        return out

    classic = segments(TEMPLATES / "classic-numeric" / "classic_numeric.py")
    v1 = segments(TEMPLATES / "v1-numeric" / "v1_numeric.py")
    assert set(classic) == set(COMPARISON) and classic == v1


def _definitions(path: Path, names) -> dict[str, str]:
    import ast

    text = path.read_text()
    out = {}
    for node in ast.parse(text).body:
        name = getattr(node, "name", None) or (
            node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) else None
        )
        if name in names:
            out[name] = ast.get_source_segment(text, node)
    return out


def test_the_numeric_templates_read_several_answers_and_units_with_one_code():
    """Several answers, units and answers held as lists: the same code in classic-numeric and v1-numeric, which the
    number unit's probes and inspect run (vlab.kinds.number.equivalence.template_answers)."""
    from vlab.kinds.number.equivalence import ANSWERS

    classic = _definitions(TEMPLATES / "classic-numeric" / "classic_numeric.py", ANSWERS)
    v1 = _definitions(TEMPLATES / "v1-numeric" / "v1_numeric.py", ANSWERS)
    assert set(v1) == set(ANSWERS) and classic == v1


def test_the_short_answer_templates_share_one_comparison_and_every_template_reads_lists_alike():
    """classic-short-answer and v1-short-answer compare with the same code (vlab.kinds.short_answer.compare reads it
    from v1-short-answer); the four templates that read answer lists read them with one answer_list
    (vlab.kinds.lists runs it for inspect)."""
    from vlab.kinds.lists import LIST_RULE
    from vlab.kinds.short_answer.compare import RULES

    short = [TEMPLATES / t / f"{module_name(t)}.py" for t in ("classic-short-answer", "v1-short-answer")]
    found = [_definitions(path, RULES) for path in short]
    assert set(found[1]) == set(RULES) and found[0] == found[1]
    numeric = [TEMPLATES / t / f"{module_name(t)}.py" for t in ("classic-numeric", "v1-numeric")]
    lists = [_definitions(path, LIST_RULE) for path in short + numeric]
    assert set(lists[0]) == set(LIST_RULE) and all(found == lists[0] for found in lists)


@pytest.mark.classic
def test_classic_numeric_uses_math_verify(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-numeric", "classic_numeric")
    data = tmp_path / "golds.jsonl"
    data.write_text(
        "".join(json.dumps({"question": f"q{i}", "answer": g}) + "\n" for i, (g, _, _) in enumerate(NUMERIC_CASES))
    )
    env = vf.load_environment("classic_numeric", dataset_path=str(data))
    rows = env.get_dataset()
    for row, (gold, reply, expected) in zip(rows, NUMERIC_CASES):
        assert classic_score(env, row, f"\\boxed{{{reply}}}")[0] == expected, (gold, reply)


def test_plain_integer_verdict_is_math_verifys_verdict(on_path):
    """The plain-integer shortcut of the numeric templates never disagrees with math-verify."""
    import random

    from math_verify import parse, verify

    template = "classic-numeric" if VERIFIERS.classic else "v1-numeric"  # each imports its own generation
    on_path(TEMPLATES / template, module_name(template))
    mod = __import__(module_name(template))

    rng = random.Random(7)
    pairs = [("0", "-0"), ("7", "7"), ("10", "010"), ("-5", "5"), ("99999999999999999999", "99999999999999999998")]
    pairs += [
        (str(a), str(a + rng.choice([0, 0, 1, -1, 10]))) for a in (rng.randint(-(10**12), 10**12) for _ in range(200))
    ]
    for given, gold in pairs:
        fast = mod.plain_verdict(given, gold)
        if fast is None:  # "010" is not a plain integer: it goes to math-verify
            continue
        assert fast == float(verify(parse(f"\\boxed{{{gold}}}"), parse(f"\\boxed{{{given}}}"))), (given, gold)


MC_ROWS = [
    # a 1-based key (INDEX_BASE = 1), options that carry their own labels, one column per option
    {"question": "2 + 2?", "A": "A) 3", "B": "B) 4", "C": "C) 5", "answer": 2},
    {"question": "3 + 3?", "A": "A) 6", "B": "B) 7", "C": "C) 8", "answer": 1},
]


@pytest.mark.classic
def test_classic_multiple_choice_reads_every_key_and_label_form(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-multiple-choice", "classic_multiple_choice")
    import classic_multiple_choice as mod

    data = tmp_path / "mc.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in MC_ROWS))
    mod.CHOICES_COLUMN, mod.INDEX_BASE = ["A", "B", "C"], 1
    try:
        env = vf.load_environment("classic_multiple_choice", dataset_path=str(data))
    finally:
        mod.CHOICES_COLUMN, mod.INDEX_BASE = "choices", 0
    row = env.get_dataset()[0]
    assert row["answer"] == "B" and row["info"]["choices"] == ["3", "4", "5"]
    assert "A) 3\nB) 4\nC) 5" in row["question"] and "A) A)" not in row["question"]
    for reply in ("B", "(B)", "B)", "\\text{B}", "\\textbf{B}", "4", "B. 4"):
        assert classic_score(env, row, f"\\boxed{{{reply}}}")[0] == 1.0, reply
    for reply in ("A", "(C)", "\\text{A}", "3", "5", "2"):
        assert classic_score(env, row, f"\\boxed{{{reply}}}")[0] == 0.0, reply


# -- v1 (verifiers >= 0.4) -------------------------------------------------------------------


def v1_tasks(template: str, data: Path):
    import verifiers.v1 as vf

    config = vf.taskset_config_type(module_name(template))(id=module_name(template), dataset_path=str(data))
    return list(vf.load_taskset(config))


def v1_score(task, reply: str) -> float:
    trace = compat.scoring_trace(
        task, [{"role": "user", "content": task.data.prompt_text}], [{"role": "assistant", "content": reply}]
    )
    asyncio.run(task.score(trace))
    return compat.trace_total(trace)


@pytest.mark.v1
@pytest.mark.parametrize("template", V1)
def test_v1_template_scores_gold_1_and_wrong_0(template, tmp_path, on_path):
    on_path(TEMPLATES / template, module_name(template))
    tasks = v1_tasks(template, write_rows(tmp_path, template))
    assert len(tasks) == len(ROWS[kind(template)])
    gold, wrong = REPLIES[kind(template)]
    assert v1_score(tasks[0], gold) == 1.0
    assert v1_score(tasks[0], wrong) == 0.0
    assert v1_score(tasks[0], "") == 0.0
    assert all(asyncio.run(t.validate(None)) for t in tasks)  # vf-validate's gold check


@pytest.mark.v1
@pytest.mark.parametrize("template", ["v1-numeric", "v1-multiple-choice", "v1-classification", "v1-multiturn-tool"])
def test_v1_template_keeps_the_datasets_own_id_column(template, tmp_path, on_path):
    if VERIFIERS.classic:
        pytest.skip("verifiers 0.3.1's v1 TaskData has no id field (it drops the id); task ids are 0.4's")
    on_path(TEMPLATES / template, module_name(template))
    rows = [
        dict(r, **({"ID": f"own-{i}"} if i == 0 else {"task_id": f"t{i}"})) for i, r in enumerate(ROWS[kind(template)])
    ]
    data = tmp_path / "ids.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [t.data.id for t in v1_tasks(template, data)] == ["own-0"] + [f"t{i}" for i in range(1, len(rows))]
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[kind(template)]))  # no id column: the position
    assert [t.data.id for t in v1_tasks(template, data)] == [str(i) for i in range(len(rows))]


@pytest.mark.v1
def test_v1_numeric_uses_math_verify(tmp_path, on_path):
    on_path(TEMPLATES / "v1-numeric", "v1_numeric")
    data = tmp_path / "golds.jsonl"
    data.write_text(
        "".join(json.dumps({"question": f"q{i}", "answer": g}) + "\n" for i, (g, _, _) in enumerate(NUMERIC_CASES))
    )
    tasks = v1_tasks("v1-numeric", data)
    for task, (gold, reply, expected) in zip(tasks, NUMERIC_CASES):
        assert v1_score(task, f"\\boxed{{{reply}}}") == expected, (gold, reply)
    assert v1_score(tasks[0], "<think>\\boxed{51}") == 0.0  # an unclosed reasoning block answers nothing


@pytest.mark.v1
def test_v1_multiple_choice_reads_every_key_and_label_form(tmp_path, on_path):
    on_path(TEMPLATES / "v1-multiple-choice", "v1_multiple_choice")
    import v1_multiple_choice as mod

    data = tmp_path / "mc.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in MC_ROWS))
    mod.CHOICES_COLUMN, mod.INDEX_BASE = ["A", "B", "C"], 1
    try:
        task = v1_tasks("v1-multiple-choice", data)[0]
    finally:
        mod.CHOICES_COLUMN, mod.INDEX_BASE = "choices", 0
    assert task.data.answer == "B" and task.data.choices == ["3", "4", "5"]
    assert "A) 3\nB) 4\nC) 5" in task.data.prompt_text and "A) A)" not in task.data.prompt_text
    for reply in ("B", "(B)", "B)", "\\text{B}", "\\textbf{B}", "4"):
        assert v1_score(task, f"\\boxed{{{reply}}}") == 1.0, reply
    for reply in ("A", "(C)", "3", "2"):
        assert v1_score(task, f"\\boxed{{{reply}}}") == 0.0, reply


@pytest.mark.v1
@pytest.mark.parametrize("template", V1)
def test_v1_template_without_a_dataset_is_an_error_not_a_default(template, on_path):
    """No dataset_path and no dataset_name: a clear error, never a Hub dataset the user did not name."""
    import verifiers.v1 as vf

    on_path(TEMPLATES / template, module_name(template))
    config = vf.taskset_config_type(module_name(template))(id=module_name(template))
    assert config.dataset_name is None and config.dataset_path is None
    with pytest.raises(ValueError, match="no dataset named") as err:
        list(vf.load_taskset(config))
    assert "dataset_path" in str(err.value) and "dataset_name" in str(err.value)


@pytest.mark.v1
@pytest.mark.parametrize("data_folder", ["data", "v1_numeric_data"])  # a checkout; a wheel install
def test_v1_template_finds_data_shipped_in_the_package(tmp_path, on_path, monkeypatch, data_folder):
    folder = package_copy(tmp_path, "v1-numeric", data_folder)
    on_path(folder, "v1_numeric")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    tasks = v1_tasks("v1-numeric", Path("train.jsonl"))
    assert [t.data.answer for t in tasks] == ["36", "1234"]
    with pytest.raises(FileNotFoundError, match="looked at"):
        v1_tasks("v1-numeric", Path("data/other.jsonl"))


@pytest.mark.v1
def test_v1_classification_lists_labels_from_the_data_and_checks_them(tmp_path, on_path):
    import verifiers.v1 as vf

    on_path(TEMPLATES / "v1-classification", "v1_classification")
    data = write_rows(tmp_path, "v1-classification")
    task = v1_tasks("v1-classification", data)[0]
    assert "negative, positive" in task.data.system_prompt and task.data.answer == "positive"
    assert v1_score(task, "\\boxed{ Positive }") == 1.0
    assert v1_score(task, "positive") == 0.0  # no box, no answer
    assert v1_score(task, "\\boxed{positive or negative}") == 0.0
    # a labels list that leaves a class out: the prompt cannot name the gold, and vf-validate says so
    config = vf.taskset_config_type("v1_classification")(
        id="v1_classification", dataset_path=str(data), labels=["negative", "neutral"]
    )
    tasks = list(vf.load_taskset(config))
    assert [asyncio.run(t.validate(None)) for t in tasks] == [False, True]


@pytest.mark.v1
def test_v1_classification_reads_class_label_columns(tmp_path, on_path):
    from datasets import ClassLabel, Dataset, Features, Value

    on_path(TEMPLATES / "v1-classification", "v1_classification")
    features = Features({"text": Value("string"), "label": ClassLabel(names=["neg", "pos"])})
    path = tmp_path / "labels.parquet"
    Dataset.from_list([{"text": "fine", "label": 1}, {"text": "awful", "label": 0}], features=features).to_parquet(
        str(path)
    )
    tasks = v1_tasks("v1-classification", path)
    assert [t.data.answer for t in tasks] == ["pos", "neg"] and tasks[0].data.labels == ["neg", "pos"]


@pytest.mark.v1
def test_v1_calculator_toolset_counts_and_scores(tmp_path, on_path):
    on_path(TEMPLATES / "v1-multiturn-tool", "v1_multiturn_tool")
    import v1_multiturn_tool as mod

    task = v1_tasks("v1-multiturn-tool", write_rows(tmp_path, "v1-multiturn-tool"))[1]  # answer 1234
    [toolset] = type(task).toolsets(task.config)
    assert isinstance(toolset, mod.CalculatorToolset) and toolset.calculate("1200 + 34") == "1234"
    assert toolset.calculate("__import__('os').system('true')").startswith("error")
    assert toolset.calculate("9**9**9").startswith("error") and toolset.calculate("1/0").startswith("error")
    call = {"id": "c1", "name": "calculate", "arguments": json.dumps({"expression": "1200 + 34"})}
    turns = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "1234"},
        {"role": "assistant", "content": "It is \\boxed{1,234}"},
    ]
    from vlab.env import compat

    trace = compat.scoring_trace(task, [{"role": "user", "content": task.data.prompt_text}], turns)
    asyncio.run(task.score(trace))
    assert compat.trace_total(trace) == 1.0
    assert trace.metrics == {"total_tool_calls": 1.0, "calculate_calls": 1.0}
    for reply, expected in [("\\boxed{1234.0}", 1.0), ("\\boxed{1234.5}", 0.0), ("\\boxed{1234 or 1235}", 0.0)]:
        assert v1_score(task, reply) == expected, reply
    assert task.config.max_turns == 6


@pytest.mark.v1
def test_v1_exports_exactly_one_taskset(on_path):
    import verifiers.v1 as vf

    for template in V1:
        on_path(TEMPLATES / template, module_name(template))
        module = __import__(module_name(template))
        exported = [getattr(module, n) for n in module.__all__]
        assert [c for c in exported if isinstance(c, type) and issubclass(c, vf.Taskset)] == exported
        assert not hasattr(module, "load_environment")


# -- packaging ---------------------------------------------------------------------------------


@pytest.mark.parametrize("template", CLASSIC + V1 + JUDGE)
def test_package_layout(template):
    folder = TEMPLATES / template
    module = module_name(template)
    assert (folder / f"{module}.py").is_file()
    cfg = tomllib.loads((folder / "pyproject.toml").read_text())
    assert cfg["project"]["name"] == template
    deps = " ".join(cfg["project"]["dependencies"])
    assert ("verifiers>=0.3.1,<0.4" in deps) if template.startswith("classic") else ("verifiers>=0.4" in deps)
    assert "datasets" in deps
    assert f"{module}.py" in cfg["tool"]["hatch"]["build"]["include"]
    # data shipped in data/ installs as <module>_data/, where the module looks for it
    assert "data/**" in cfg["tool"]["hatch"]["build"]["include"]
    assert cfg["tool"]["hatch"]["build"]["targets"]["wheel"]["sources"] == {"data": f"{module}_data"}
    assert cfg["build-system"]["build-backend"] == "hatchling.build"
    readme = (folder / "README.md").read_text()
    assert readme.startswith(f"# {template}\n") and module in readme
    source = (folder / f"{module}.py").read_text()
    compile(source, f"{module}.py", "exec")
    assert f'parent / "{module}_data"' in source and "NO_DATASET" in source
    if template.startswith("classic"):
        assert "def load_environment(" in source and "import verifiers as vf" in source
    else:
        assert "import verifiers.v1 as vf" in source and "__all__" in source


@pytest.mark.parametrize("template", CLASSIC + V1 + JUDGE)
def test_readme_quickstart_names_the_shipped_data_and_the_real_commands(template):
    """Issue #21: the quickstart runs from the user's project folder on data/train.jsonl, no placeholder file,
    and calls the pack's scripts as ``$SKILL_DIR/scripts/...`` (new_env writes the real command there)."""
    module = module_name(template)
    readme = (TEMPLATES / template / "README.md").read_text()
    block = readme.split("## Quickstart\n```bash\n", 1)[1].split("```", 1)[0]
    commands = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith(("#", " "))]
    assert f"pip install -e environments/{module}" in commands
    assert f"environments/{module}/data/train.jsonl" in block
    scripts = [ln for ln in commands if "scripts/" in ln]
    assert scripts and (SKILL_ROOT / "scripts" / "test_reward.py").is_file(), block
    for line in scripts:  # the exact prefix scaffold/create.py replaces with the pack's own command
        assert line.startswith(f'python "$SKILL_DIR/scripts/test_reward.py" environments/{module}/'), line
    paths = re.findall(r'dataset_path": "([^"]+)"|dataset-path (\S+)', block)
    assert paths and {a or b for a, b in paths} == {"train.jsonl"}, paths


def test_every_template_is_listed_here():
    found = sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir())
    assert found == sorted(CLASSIC + V1 + JUDGE)


# -- config templates ---------------------------------------------------------------------------


def test_endpoints_template_loads_with_vf_eval_registry():
    path = SKILL_ROOT / "templates" / "configs" / "endpoints.toml"
    raw = tomllib.loads(path.read_text())
    assert raw["endpoint"] and all({"endpoint_id", "model", "url", "key"} <= set(e) for e in raw["endpoint"])
    assert all(e["key"].isupper() for e in raw["endpoint"]), "key names an environment variable, never a secret"
    if not VERIFIERS.classic:
        pytest.skip("vf-eval's endpoint registry reader is classic verifiers (0.3.x)")
    from verifiers.legacy.utils.eval_utils import load_endpoints

    endpoints = load_endpoints(str(path))
    assert set(endpoints) == {e["endpoint_id"] for e in raw["endpoint"]}


TRAINING_CONFIGS = ["hosted-training.toml", "prime-rl-single-node.toml"]


@pytest.mark.parametrize("name", TRAINING_CONFIGS)
def test_training_config_template_passes_submit_training(name, tmp_path):
    path = SKILL_ROOT / "templates" / "configs" / name
    if not path.is_file():
        pytest.skip(f"{name} not written yet (submit_training engineer)")
    if not (SKILL_ROOT / "scripts" / "submit_training.py").is_file():
        pytest.skip("scripts/submit_training.py does not exist yet")
    tomllib.loads(path.read_text())
    target = "prime-rl" if "prime-rl" in name else "hosted"
    args = ["--config", str(path), "--target", target, "--offline", "--no-rehearse", "--json"]  # no source here
    if target == "hosted":
        # The hosted template names the placeholder OWNER/my-env: copied as it is, it must not pass.
        proc = run_script("submit_training", *args, "--output", str(tmp_path / "as-is.toml"), cwd=tmp_path)
        obj = assert_result(proc.json, "submit_training", 1)
        assert [c["id"] for c in obj["checks"] if c["status"] == "fail"] == ["env-placeholder"]
        args += ["--env", "alice/my-env"]
    proc = run_script("submit_training", *args, "--output", str(tmp_path / name), cwd=tmp_path)
    obj = assert_result(proc.json, "submit_training")
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0, failed


def test_local_train_config_template_is_strict_toml():
    """Its semantics are local_train's to test; here: it parses strictly, as the docs promise."""
    path = SKILL_ROOT / "templates" / "configs" / "local-train.toml"
    if not path.is_file():
        pytest.skip("local-train.toml not written yet (local_train engineer)")
    cfg = tomllib.loads(path.read_text())
    assert cfg.get("model", {}).get("name"), "local-train.toml names a model"
