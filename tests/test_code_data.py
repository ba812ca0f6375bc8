"""MBPP-shaped code data (text, code, test_list of asserts, test_setup_code, task_id): inspect_dataset finds the
setup column and the function the tests call, new_env writes the setup code into the environment, and
test_reward names it on a failing row, checks the prompt names a real function (never `assert`), and takes two
reference programs of one task as a warning."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, VERIFIERS, run_script

from vlab import catalog
from vlab.core.result import Result
from vlab.env import Row
from vlab.kinds import KindContext, RowKind, row_kind, unit
from vlab.reward import dataset

TEMPLATES = SKILL_ROOT / "templates" / "environments"
SETUP = "from math import isclose"
REMOVE_OCC = (
    "def remove_Occ(s, ch):\n    s = s.replace(ch, '', 1)\n    i = s.rfind(ch)\n"
    "    return s[:i] + s[i + 1 :] if i >= 0 else s\n"
)


def mbpp_rows() -> list[dict]:
    """Eight plain rows, two `assert (f(x)) == y` rows, one row needing its setup code, the same task again
    with another correct reference, and one `assert set(f(x)) == ...` row."""
    rows = [
        {
            "task_id": i,
            "text": f"Write a function to add {i} to a number.",
            "code": f"def add_{i}(x):\n    return x + {i}\n",
            "test_list": [f"assert add_{i}(1) == {1 + i}", f"assert add_{i}(2) == {2 + i}"],
            "test_setup_code": "",
            "challenge_test_list": [],
        }
        for i in range(8)
    ]
    rows += [
        {
            "task_id": 8,
            "text": "Write a python function to remove first and last occurrence of a given character from the string.",
            "code": REMOVE_OCC,
            "test_list": ['assert (remove_Occ("hello","l")) == "heo"', 'assert (remove_Occ("abcda","a")) == "bcd"'],
            "test_setup_code": "",
            "challenge_test_list": [],
        },
        {
            "task_id": 9,
            "text": "Write a python function to remove the character at both ends of its occurrences.",
            "code": "def strip_both(s, ch):\n    return s.strip(ch)\n",
            "test_list": ['assert (strip_both("xabx","x")) == "ab"'],
            "test_setup_code": "",
            "challenge_test_list": [],
        },
        {
            "task_id": 10,
            "text": "Write a function to find the area of a circle.",
            "code": "import math\ndef circle_area(r):\n    return math.pi * r * r\n",
            "test_list": ["assert isclose(circle_area(1), 3.14159, rel_tol=1e-3)"],
            "test_setup_code": SETUP,
            "challenge_test_list": [],
        },
        {
            "task_id": 11,
            "text": "Write a function to find the area of a circle.",
            "code": "from math import pi\ndef circle_area(r):\n    return pi * r ** 2\n",
            "test_list": ["assert isclose(circle_area(1), 3.14159, rel_tol=1e-3)"],
            "test_setup_code": SETUP,
            "challenge_test_list": [],
        },
        {
            "task_id": 12,
            "text": "Write a function to find the shared elements from the given two lists.",
            "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
            "test_list": ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))"],
            "test_setup_code": "",
            "challenge_test_list": [],
        },
    ]
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def inspect(data: Path, tmp_path: Path) -> tuple[Path, dict]:
    proc = run_script("inspect_dataset", str(data), "--json")
    out = tmp_path / f"{data.stem}.inspect.json"
    out.write_text(proc.stdout)
    return out, proc.json


def template_module(template: str):
    folder = TEMPLATES / template
    sys.path.insert(0, str(folder))
    try:
        return __import__(template.replace("-", "_"))
    finally:
        sys.path.remove(str(folder))


# -- the function the tests call ------------------------------------------------------------------

FORMS = [
    ("assert f(3) == 4", None, "f"),
    ('assert (remove_Occ("hello","l")) == "heo"', None, "remove_Occ"),
    ("assert math.isclose(area(2), 12.5, rel_tol=0.001)", None, "area"),
    ("assert set(similar((3, 4), (4, 5))) == set((4,))", None, "similar"),
    ("assert sorted(g([2, 1])) == [1, 2]", None, "g"),
    ("assert round(h(2), 2) == 1.0", None, "h"),
    ("assert abs(k(-1) - 1) < 1e-9", None, "k"),
    ("assert len(pairs(4)) == 2", None, "pairs"),
    ("assert not is_odd(2)", None, "is_odd"),
    ("assert is_odd(3)", None, "is_odd"),
    ("assert (is_odd(3))", None, "is_odd"),
    ("assert f(g(1)) == 2", "def g(x):\n    return x\n\ndef f(x):\n    return 2 * x\n", "f"),
    ("assert helper(main(1)) == 2", "def helper(x):\n    return x\ndef main(x):\n    return x + 1\n", "helper"),
    ("def helper(x):\n    return x\nassert helper(main(1)) == 2", None, "main"),  # the tests' own helper
    ("assert sum_list([1, 2]) == 3", "def sum_list(xs):\n    return sum(xs)\n", "sum_list"),
    ("assert sum([1, 2]) == 3", "def sum(xs):\n    return 3\n", "sum"),  # the reference shadows a builtin
    ("assert max(3, 4) == 4", None, None),  # builtins only
    ("def check(candidate):\n    assert candidate(1) == 2\n", None, None),  # HumanEval: the entry point column
    ("assert f(1) == 2\nthis line is ( broken", None, "f"),
    (["assert first([1]) == 1", "assert first([2]) == 2"], None, "first"),
    ({"inputs": ["1\n"], "outputs": ["2\n"]}, None, None),  # stdin/stdout: no function
]


@pytest.mark.parametrize("tests, reference, expected", FORMS, ids=[str(f[0])[:40] for f in FORMS])
def test_the_entry_point_is_the_function_the_asserts_call(tests, reference, expected):
    assert catalog.entry_point(tests, reference) == expected
    if isinstance(tests, str):  # the rule is the templates' own: both code templates give the same name
        for template in ("v1-code", "classic-code"):
            assert template_module(template).called_name(tests, reference) == expected, template


def test_the_entry_point_leaves_out_what_the_setup_code_defines():
    tests = "assert isclose(circle_area(1), 3.14159, rel_tol=1e-3)"
    assert catalog.entry_point(tests) == "isclose"  # without the setup code, a guess
    assert catalog.entry_point(tests, setup=SETUP) == "circle_area"
    assert catalog.entry_point(tests, setup=[SETUP]) == "circle_area"
    spec = {"mode": "call", "tests": tests, "setup": SETUP, "helpers": ""}
    assert catalog.entry_point(spec) == catalog.entry_point(json.dumps(spec)) == "circle_area"


def test_no_keyword_or_builtin_is_ever_the_entry_point():
    for tests, reference, _ in FORMS:
        name = catalog.entry_point(tests, reference)
        assert name is None or not catalog.bad_entry_name(name) or name == "sum", name


# -- inspect_dataset ---------------------------------------------------------------------------------


def test_inspect_finds_the_setup_column_and_the_called_functions(tmp_path):
    rows = mbpp_rows()
    rows.append({**rows[0], "task_id": 13, "text": "Write anything.", "test_list": ["assert max(1, 2) == 2"]})
    _, obj = inspect(write_jsonl(tmp_path / "mbpp.jsonl", rows), tmp_path)
    data = obj["data"]
    assert data["roles"]["setup"]["column"] == "test_setup_code"
    assert data["roles"]["tests"]["column"] == "test_list" and data["roles"]["answer"]["column"] == "code"
    assert next(c for c in data["columns"] if c["name"] == "test_setup_code")["type"] == "string"
    assert data["recommendation"]["column_mapping"]["setup"] == "test_setup_code"
    names = data["answer_format"]["entry_points"]
    assert names["from"] == "tests" and names["not_found"] == [13]  # listed: its asserts call builtins only
    assert "assert" not in names["examples"]
    check = next(c for c in obj["checks"] if c["id"] == "answer-format")
    assert check["status"] == "warn" and "13" in check["message"]


def test_a_setup_column_of_empty_strings_is_text_not_null(tmp_path):
    rows = mbpp_rows()[:8]  # test_setup_code is "" on every row
    _, obj = inspect(write_jsonl(tmp_path / "plain.jsonl", rows), tmp_path)
    data = obj["data"]
    column = next(c for c in data["columns"] if c["name"] == "test_setup_code")
    assert column["type"] == "string" and column["nulls"] == len(rows)
    assert data["roles"]["setup"]["column"] == "test_setup_code"
    assert data["roles"]["prompt"]["column"] == "text" and data["roles"]["answer"]["column"] == "code"


# -- new_env -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["classic", "v1"])
def test_new_env_writes_the_setup_column_and_runs_it_before_the_tests(tmp_path, api):
    report, _ = inspect(write_jsonl(tmp_path / "mbpp.jsonl", mbpp_rows()), tmp_path)
    made = run_script(
        "new_env", f"mbpp-{api}", "--from-inspect", str(report), "--api", api, "--path", str(tmp_path), "--json"
    ).json
    assert made["exit_code"] == 0, made
    assert made["data"]["columns"]["SETUP_COLUMN"] == "test_setup_code"
    assert made["data"]["columns"]["ENTRY_POINT_COLUMN"] is None
    module = tmp_path / f"mbpp_{api}" / f"mbpp_{api}.py"
    assert 'SETUP_COLUMN = "test_setup_code"' in module.read_text()

    sys.path.insert(0, str(module.parent))
    try:
        mod = __import__(module.stem)
    finally:
        sys.path.remove(str(module.parent))
    rows = mbpp_rows()
    entry, spec = mod.row_tests(rows[10])
    assert entry == "circle_area" and spec["setup"] == SETUP
    assert "The function must be named `circle_area`" in mod.task_prompt(rows[10], entry, spec)
    for row in rows[8:10]:  # `assert (f(x)) == y`: the function, never `assert`
        entry, spec = mod.row_tests(row)
        prompt = mod.task_prompt(row, entry, spec)
        assert entry in ("remove_Occ", "strip_both") and f"`{entry}`" in prompt and "`assert`" not in prompt
    assert "setup" not in mod.row_tests(rows[0])[1]  # an empty setup code adds nothing

    import asyncio

    passed = asyncio.run(mod.run_tests(mod.reference_program(rows[10], "circle_area"), mod.row_tests(rows[10])[1]))
    assert passed["passed"], passed
    without = {k: v for k, v in mod.row_tests(rows[10])[1].items() if k != "setup"}
    assert not asyncio.run(mod.run_tests(rows[10]["code"], without))["passed"]  # the tests need it


def test_new_env_from_flags_keeps_the_setup_default_quietly(tmp_path):
    made = run_script(
        "new_env",
        "flagged",
        "--template",
        "v1-code",
        "--question-column",
        "text",
        "--tests-column",
        "test_list",
        "--entry-point-column",
        "fn",
        "--answer-column",
        "code",
        "--path",
        str(tmp_path),
        "--json",
    ).json
    assert made["exit_code"] == 0, made
    check = next(c for c in made["checks"] if c["id"] == "column-setup")
    assert check["status"] == "pass" and "where a row has it" in check["message"]
    assert made["data"]["columns"]["SETUP_COLUMN"] == "test_setup_code"


def test_both_code_templates_declare_the_setup_column():
    for t in (catalog.template("classic-code"), catalog.template("v1-code")):
        tree = ast.parse((TEMPLATES / t.name / f"{t.module}.py").read_text())
        assigned = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)}
        assert ast.literal_eval(assigned["SETUP_COLUMN"]) == "test_setup_code"
        assert t.role_constants["setup"] == "SETUP_COLUMN"
    assert catalog.role("setup").flag == "--setup-column"


# -- test_reward's checks ------------------------------------------------------------------------------


def row(index: int, question: str, fields: dict, answer: str = "") -> Row:
    return Row(index, [{"role": "user", "content": question}], answer, question, fields)


def old_template_row(index: int, source: dict) -> Row:
    """A row as the code templates built it before: the entry point read as `assert` from `assert (f(x)) == y`."""
    tests = "\n".join(source["test_list"])
    spec = {"mode": "call", "tests": tests, "entry_point": "assert", "helpers": ""}
    question = f"{source['text']}\n\nThe function must be named `assert`."
    return row(index, question, {"tests": json.dumps(spec), "entry_point": "assert", "answer": source["code"]})


def check(rows: list[Row]) -> Result:
    """The code unit's checks on the rows as test_reward runs them (code_prompt)."""
    result = Result("test_reward")
    golds = {r.index: r.answer or None for r in rows}
    ctx = KindContext(rows, golds, {r.index: row_kind(r, golds[r.index]) for r in rows})
    unit("code").dataset_checks(result, ctx)
    return result


def test_the_prompt_check_fails_a_prompt_naming_assert():
    source = mbpp_rows()[8]
    kind = row_kind(old_template_row(0, source), source["code"])
    assert kind.entry_point == "remove_Occ" and kind.entry_from == "tests"
    result = check([old_template_row(0, source)])
    found = next(c for c in result.checks if c.id == "code_prompt")
    assert found.status == "fail"
    assert "'assert', a Python keyword" in found.message and "never names 'remove_Occ'" in found.message


def test_the_prompt_check_passes_the_templates_prompt_and_lists_rows_without_a_function(monkeypatch):
    mod = template_module("v1-code")
    mapped = {
        "QUESTION_COLUMN": "text",
        "TESTS_COLUMN": "test_list",
        "ENTRY_POINT_COLUMN": None,
        "SOLUTION_COLUMN": "code",
    }
    for constant, column in mapped.items():
        monkeypatch.setattr(mod, constant, column)
    built = []
    for i, source in enumerate(mbpp_rows()[8:11]):
        entry, spec = mod.row_tests(source)
        question = mod.task_prompt(source, entry, spec)
        built.append(row(i, question, {"tests": json.dumps(spec), "entry_point": entry or ""}, source["code"]))
    result = check(built)
    assert next(c for c in result.checks if c.id == "code_prompt").status == "pass"

    builtins_only = {"text": "Return the larger one.", "test_list": ["assert max(1, 2) == 2"], "code": "x = 1\n"}
    entry, spec = mod.row_tests(builtins_only)
    assert entry is None
    built.append(row(3, mod.task_prompt(builtins_only, entry, spec), {"tests": json.dumps(spec)}))
    result = check(built)
    found = next(c for c in result.checks if c.id == "code_prompt")
    assert found.status == "warn" and "example_id 3" in found.message and "no function name found" in found.message
    assert result.data["row_findings"]["code_prompt"][0]["example_id"] == 3


def test_the_same_task_with_two_references_warns_and_conflicting_numbers_still_fail():
    rows = mbpp_rows()
    code_rows = [row(i, r["text"], {"test_list": r["test_list"]}, r["code"]) for i, r in enumerate(rows)]
    golds = {r.index: r.answer for r in code_rows}
    kinds = {r.index: row_kind(r, r.answer) for r in code_rows}
    result = Result("test_reward")
    dataset.check_rows(result, code_rows, golds, kinds)
    found = next(c for c in result.checks if c.id == "duplicate_prompts")
    assert found.status == "warn" and "example_id 10 and 11" in found.message, found.message
    assert result.data["row_findings"]["duplicate_prompts"] == [
        {"example_id": 11, "status": "warn", "problem": "the prompt of example_id 10 again"}
    ]

    numbers = [row(i, "What is 2 + 2?" if i < 2 else f"What is {i}?", {}, str(4 + i)) for i in range(4)]
    result = Result("test_reward")
    dataset.check_rows(
        result, numbers, {r.index: r.answer for r in numbers}, {r.index: RowKind("number") for r in numbers}
    )
    assert next(c for c in result.checks if c.id == "duplicate_prompts").status == "fail"


def test_a_code_row_names_its_setup_code_when_it_fails():
    source = mbpp_rows()[10]
    spec = {"mode": "call", "tests": "\n".join(source["test_list"]), "setup": SETUP}
    kind = row_kind(row(0, source["text"], {"tests": json.dumps(spec)}, source["code"]), source["code"])
    assert kind.setup == SETUP and kind.entry_point == "circle_area"
    assert SETUP in kind.setup_note()
    raw = row_kind(row(0, source["text"], {"test_list": source["test_list"], "test_setup_code": SETUP}), source["code"])
    assert raw.setup_field == "test_setup_code" and "its test_setup_code" in raw.setup_note()
    assert row_kind(row(0, "x", {"test_list": ["assert f(1) == 1"], "test_setup_code": ""}), None).setup_note() == ""


def _runs_here(template: str) -> bool:
    if template.startswith("classic"):
        return VERIFIERS.classic
    from vlab.core.installed import version_tuple

    return VERIFIERS.v1 and version_tuple(VERIFIERS.version or "0") >= (0, 4)


@pytest.mark.slow
@pytest.mark.parametrize("api", ["classic", "v1"])
def test_test_reward_on_mbpp_rows(tmp_path, api):
    """The scaffolded package on MBPP rows: every gold (the setup-code rows too) reaches the reward, the prompt
    names each function, the repeated task is a warning; with its setup code broken, the failure names it."""
    if not _runs_here(f"{api}-code"):
        pytest.skip(f"{api}-code is tested in its own verifiers generation (installed: {VERIFIERS.version})")
    data = write_jsonl(tmp_path / "mbpp.jsonl", mbpp_rows())
    report, _ = inspect(data, tmp_path)
    made = run_script(
        "new_env", "mbpp-e", "--from-inspect", str(report), "--api", api, "--path", str(tmp_path / "envs")
    )
    assert made.returncode == 0, made.stdout
    package = str(tmp_path / "envs" / "mbpp_e")

    def run(path: Path) -> dict:
        proc = run_script("test_reward", package, "--env-args", json.dumps({"dataset_path": str(path)}), "--json")
        return {c["id"]: c for c in proc.json["checks"]}

    checks = run(data)
    assert checks["gold_reachable"]["status"] == "pass", checks["gold_reachable"]
    assert checks["code_prompt"]["status"] == "pass", checks["code_prompt"]
    assert checks["duplicate_prompts"]["status"] == "warn", checks["duplicate_prompts"]

    broken = mbpp_rows()
    for r in broken[10:12]:
        r["test_setup_code"] = "from math import isclos"
    checks = run(write_jsonl(tmp_path / "broken.jsonl", broken))
    found = checks["gold_reachable"]
    assert found["status"] == "fail" and "example_id 10" in found["message"]
    assert "from math import isclos" in found["message"] and "runs before the tests" in found["message"]
