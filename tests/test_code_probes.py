"""Code rewards on MBPP-shaped data (``text``, ``code``, ``test_list`` of asserts) (issue 34): a reward that
grades the first fenced block, one that runs only the first assert (rows of exactly two asserts), one
whose own time limit is longer than test_reward's --timeout (its other checks still run; a reward that
never returns is still named), and check_reward_distribution reading code replies as code."""

from __future__ import annotations

import importlib
import json
import shutil

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT, assert_result
from evalfile_fixtures import Roll, write_classic_run

from vlab.core.result import Result
from vlab.evals.answers import Program, final_answer
from vlab.kinds.base import RowKind
from vlab.kinds.code import probes as code
from vlab.reward.checks import TestRewardRequest, run_test_reward

TEMPLATES = SKILL_ROOT / "templates" / "environments"


def mbpp_rows(n: int = 3, asserts: int = 2) -> list[dict]:
    """MBPP's layout: the reference defines a helper BEFORE the function the tests call."""
    cases = [(1, 2), (5, 5), (0, 7)][:asserts]
    return [
        {
            "task_id": 600 + i,
            "text": f"Write a function plus{i}(a, b) returning a + b + {i}.",
            "code": f"def _base{i}(a):\n    return a + {i}\n\n\ndef plus{i}(a, b):\n    return _base{i}(a) + b\n",
            "test_list": [f"assert plus{i}({a}, {b}) == {a + b + i}" for a, b in cases],
        }
        for i in range(n)
    ]


def template_copy(tmp_path, *edits: tuple[str, str], template: str = "classic-code"):
    """A code template mapped to MBPP's columns, with the given (old, new) edits planted."""
    folder = tmp_path / template  # the folder names the module
    shutil.copytree(TEMPLATES / template, folder)
    module = folder / f"{template.replace('-', '_')}.py"
    source = module.read_text()
    for old, new in (
        ('QUESTION_COLUMN = "prompt"', 'QUESTION_COLUMN = "text"'),
        ('TESTS_COLUMN = "test"', 'TESTS_COLUMN = "test_list"'),
        ('ENTRY_POINT_COLUMN = "entry_point"', "ENTRY_POINT_COLUMN = None"),
        ('SOLUTION_COLUMN = "canonical_solution"', 'SOLUTION_COLUMN = "code"'),
        *edits,
    ):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    module.write_text(source)
    return folder


def run(path, data, **opts) -> Result:
    result = Result("test_reward")
    args = {"dataset_path": str(data), **opts.pop("env_args", {})}
    run_test_reward(TestRewardRequest(env=str(path), env_args=args, **opts), result)
    return result


def checks(result: Result) -> dict[str, tuple[str, str]]:
    return {c.id: (c.status, c.message) for c in result.checks}


def failed(result: Result) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in result.checks if c.status == "fail"]


# -- the probes themselves (no environment) ---------------------------------------------------------


def test_mbpp_rows_get_the_first_fence_and_first_call_probes_on_the_called_function():
    row = mbpp_rows(1, asserts=2)[0]
    # the entry point read from the reference is its helper; the tests call plus0
    kind = RowKind("code", tests=row["test_list"], entry_point="_base0")
    assert code.entry_of(kind, row["code"]) == "plus0"
    assert code.count_tests(kind) == 2
    probes = {p.id: p.text for p in code.hack_probes(kind, row["code"], code.FENCED)}
    assert "hack:first_call_only" in probes and "def plus0(*args" in probes["hack:first_call_only"]
    reply = probes["hack:first_fence"]
    blocks = reply.split("```python\n")
    assert len(blocks) == 3 and "return _base0(a) + b" in blocks[1] and "NotImplementedError" in blocks[2]
    gold_alts = {p.id for p in code.code_probes(row["code"], kind)[0] if p.category == "gold_alt"}
    assert "gold_alt:code_last_fence" in gold_alts
    # one assert: the first call is the whole test, the probe would be right
    single = RowKind("code", tests=row["test_list"][:1], entry_point="plus0")
    assert "hack:first_call_only" not in {p.id for p in code.hack_probes(single, row["code"], code.FENCED)}


def test_tests_are_counted_over_every_test_column_of_the_row():
    """The harness's tests (one left after filtering) and the data's test column (two asserts): two."""
    from vlab.env.types import Row

    spec = json.dumps({"mode": "call", "tests": "assert plus0(1, 2) == 3", "entry_point": "plus0"})
    data = ["assert plus0(1, 2) == 3", "assert plus0(5, 5) == 10"]
    row = Row(index=0, prompt=[], answer="", question="q", fields={"info": {"tests": spec}, "test_list": data})
    kind = RowKind("code", tests=spec, entry_point="plus0")
    assert code.count_tests(kind) == 1 and code.count_tests(kind, row) == 2
    several = "\n".join(["assert f(1) == 2", "assert f(2) == 3"])  # a test string with two asserts
    assert code.count_tests(RowKind("code", tests=several, entry_point="f")) == 2


def test_data_file_records_are_matched_to_rows_by_reference_id_or_prompt(tmp_path, monkeypatch):
    """The data file named in --env-args, found from the current folder or the environment's data/ folder;
    each row matched to its record by its reference, else its id, else the record text its prompt holds."""
    from vlab.env.types import Row
    from vlab.reward import data_file

    env = tmp_path / "env"
    (env / "data").mkdir(parents=True)
    (env / "env.py").write_text("")
    records = mbpp_rows(3)
    (env / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.chdir(tmp_path)
    assert data_file.data_paths({"dataset_path": "train.jsonl", "n": 3}, str(env / "env.py")) == [
        env / "data" / "train.jsonl"
    ]
    assert data_file.data_paths({"dataset_path": "missing.jsonl"}, str(env / "env.py")) == []
    rows = [
        Row(0, [], records[2]["code"], "q"),  # by reference
        Row(1, [], "", "q", fields={"id": "601"}),  # by id
        Row(2, [{"role": "user", "content": "Solve: " + records[0]["text"]}], "", records[0]["text"]),  # by prompt
        Row(3, [{"role": "user", "content": "nothing of the file"}], "", "x"),
    ]
    found = data_file.matched_records(rows, {"dataset_path": "train.jsonl"}, str(env / "env.py"))
    assert {k: v["task_id"] for k, v in found.items()} == {0: 602, 1: 601, 2: 600}
    kind = RowKind("code", tests=json.dumps({"mode": "call", "tests": records[0]["test_list"][0]}), entry_point="plus0")
    assert code.count_tests(kind) == 1 and code.count_tests(kind, record=found[2]) == 2
    assert code.tests_cut(kind, found[2]) == "the data file's test_list holds 2 tests, the environment's tests 1"


# -- the environments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template", [pytest.param("classic-code", marks=pytest.mark.classic), pytest.param("v1-code", marks=pytest.mark.v1)]
)
def test_the_code_templates_pass_the_new_probes_on_mbpp_rows(tmp_path, template):
    """The sound templates: the last block graded, every assert run; a reference whose helper comes first."""
    result = run(template_copy(tmp_path, template=template), fx.write_rows(tmp_path, mbpp_rows(3)), num_examples=2)
    st = checks(result)
    assert result.exit_code() == 0, failed(result)
    assert st["code_fences"][0] == "pass" and st["code_all_tests"][0] == "pass", st
    assert st["code_time_limit"][0] == "pass", st["code_time_limit"]
    by_probe = {p["probe"]: p["total"] for p in result.data["probes"]["by_probe"]}
    assert by_probe["gold_alt:code_last_fence"] == 1.0 and by_probe["hack:first_fence"] == 0.0, by_probe
    assert by_probe["hack:first_call_only"] == 0.0 and by_probe["hack:infinite_loop"] == 0.0, by_probe


@pytest.mark.parametrize(
    "template", [pytest.param("classic-code", marks=pytest.mark.classic), pytest.param("v1-code", marks=pytest.mark.v1)]
)
def test_a_reward_that_grades_the_first_fenced_block_fails_naming_it(tmp_path, template):
    folder = template_copy(tmp_path, ("return blocks[-1].strip()", "return blocks[0].strip()"), template=template)
    result = run(folder, fx.write_rows(tmp_path, mbpp_rows(3)), num_examples=2)
    st = checks(result)
    assert st["gold_reward"][0] == "pass", failed(result)
    assert st["code_fences"][0] == "fail", st.get("code_fences")
    assert "grades the first fenced block" in st["code_fences"][1] and "2/2 rows" in st["code_fences"][1]
    assert "hack:first_fence on 2/2 rows" in st["reward_hacking"][1]
    assert any("LAST ```python block" in s for s in result.next_steps), result.next_steps
    assert result.exit_code() == 1


FIRST_ASSERT_ONLY = (
    'verdict = await run_tests(program, json.loads(info["tests"]), timeout_seconds, memory_mb)',
    'verdict = await run_tests(program, first_assert(json.loads(info["tests"])), timeout_seconds, memory_mb)',
)
FIRST_ASSERT_FN = (
    "def load_environment(",
    "def first_assert(spec):\n"
    "    lines = spec['tests'].splitlines()\n"
    "    k = next(i for i, t in enumerate(lines) if t.strip().startswith('assert'))\n"
    "    return {**spec, 'tests': '\\n'.join(lines[: k + 1])}\n\n\n"
    "def load_environment(",
)


@pytest.mark.classic
def test_a_reward_that_runs_only_the_first_assert_fails_on_rows_of_exactly_two(tmp_path):
    """The template's sound harness, but only the first assert of each row run: on rows holding exactly two
    asserts the reference right on its first call earns the gold, and code_all_tests names it."""
    folder = template_copy(tmp_path, FIRST_ASSERT_ONLY, FIRST_ASSERT_FN)
    result = run(folder, fx.write_rows(tmp_path, mbpp_rows(3, asserts=2)), num_examples=2)
    st = checks(result)
    assert st["gold_reward"][0] == "pass", failed(result)
    assert st["code_all_tests"][0] == "fail", st.get("code_all_tests")
    assert "only the first assert" in st["code_all_tests"][1] and "2 of the 2 rows" in st["code_all_tests"][1]
    assert "hack:first_call_only on 2/2 rows" in st["reward_hacking"][1]
    assert st["code_fences"][0] == "pass", st["code_fences"]  # its parser reads the last block
    assert result.exit_code() == 1


@pytest.mark.v1
def test_a_v1_loader_that_keeps_only_the_first_assert_fails_against_the_data_files_test_column(tmp_path):
    """A v1 task carries only the tests its loader kept (here the first of each row's two asserts): the rows
    alone hold one test, so only the data file named in --env-args (dataset_path, its test_list) shows that
    the reference right on its first call must be probed, and code_all_tests names the loss."""
    drop = ("spec = tests_of(row[TESTS_COLUMN], entry)", "spec = tests_of(row[TESTS_COLUMN][:1], entry)")
    folder = template_copy(tmp_path, drop, template="v1-code")
    result = run(folder, fx.write_rows(tmp_path, mbpp_rows(3, asserts=2)), num_examples=2)
    st = checks(result)
    assert st["gold_reward"][0] == "pass", failed(result)
    assert st["code_all_tests"][0] == "fail", st.get("code_all_tests")
    assert "2 of the 2 rows" in st["code_all_tests"][1], st["code_all_tests"]
    assert "test_list" in st["code_all_tests"][1], st["code_all_tests"]  # the column the loader cut named
    assert "hacking programs" in st["reward_hacking"][1]  # a code reward's hint names programs, not answer parsing
    assert not any("final answer" in step for step in result.next_steps), result.next_steps
    assert result.exit_code() == 1


# A sync reward with a time limit of its own (LIMIT s, None: none at all), longer than test_reward's
# --timeout: the program and every test in one child, paid when the child prints a nonce after the tests.
# Its planted defect: it grades the FIRST fenced block.
OWN_LIMIT_REWARD = """
import secrets


def correct(completion, answer, info):
    text = completion[-1]["content"] if isinstance(completion, list) else completion
    blocks = re.findall(r"```(?:python)?\\n(.*?)```", text or "", re.S)
    program = blocks[0] if blocks else (text or "")
    nonce = secrets.token_hex(8)
    source = program + "\\n\\n" + "\\n".join(info["test_list"]) + f"\\nprint({{nonce!r}})\\n"
    with tempfile.TemporaryDirectory() as scratch:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", source], capture_output=True, text=True,
                                  timeout={limit}, cwd=scratch)
        except subprocess.TimeoutExpired:
            return 0.0
    return 1.0 if nonce in done.stdout.splitlines() else 0.0
"""
MBPP_TO_ROW = (
    "def to_row(row):\n"
    "    return {'question': row['text'], 'answer': row['code'], 'info': {'test_list': row['test_list']}}\n"
)


def test_the_infinite_loop_is_scored_on_two_rows_and_on_the_first_row_of_every_other_test_form():
    """It spins a core for the reward's whole limit on each row (16 of test_reward's 22 s on five MBPP rows):
    two rows of asserts are its evidence, and a row of stdin/stdout cases (another path in the reward) gets it
    too. The outliving-process probe and every fast probe stay on every row."""
    from vlab.env.types import Row
    from vlab.reward.probes import Probe, RowProbes

    io = json.dumps({"mode": "io", "tests": {"inputs": ["1\n"], "outputs": ["2\n"]}})
    fields = [{"test_list": ["assert f(1) == 2"]}] * 4 + [{"info": {"tests": io}}, {"info": {"tests": io}}]
    built = [
        RowProbes(
            Row(index=i, prompt=[], answer="", question="q", fields=f),
            "",
            [Probe(pid, "hack", "x") for pid in ("hack:always_equal", "hack:infinite_loop", "hack:outlives_scorer")],
        )
        for i, f in enumerate(fields)
    ]
    fast, slow, owners = code.slow_apart(built)
    assert [[p.id for p in b.probes] for b in fast] == [["hack:always_equal"]] * 6
    assert owners == [0, 1, 2, 3, 4, 5]  # every row keeps its outliving-process probe
    looped = [k for k, b in zip(owners, slow) if "hack:infinite_loop" in {p.id for p in b.probes}]
    assert looped == [0, 1, 4], looped
    assert code.LOOP_ROWS == 2


@pytest.mark.classic
def test_a_reward_with_its_own_longer_time_limit_gets_its_other_checks(tmp_path):
    """--timeout 8 and a reward limit of 10 s: the infinite loop returns within the slow probes' bound
    (3 x --timeout), every other check runs, and the verdict names the real defect (the first block).
    A normal call takes well under a second, and every call's bound stretches with the machine's load, so a
    loaded machine gives the same verdict (the loop spins a core for the whole 10 s)."""
    path = fx.write_env(tmp_path, "own_limit_env", OWN_LIMIT_REWARD.format(limit=10), MBPP_TO_ROW, code=True)
    result = run(path, fx.write_rows(tmp_path, mbpp_rows(1)), num_examples=1, timeout=8.0)  # one 10 s wait
    st = checks(result)
    assert "worker_timeout" not in st and st["speed"][0] != "fail", failed(result)
    assert st["code_time_limit"][0] == "pass" and "reward's own limit" in st["code_time_limit"][1], st
    assert st["gold_reward"][0] == "pass" and st["gold_reachable"][0] == "pass", failed(result)
    assert st["deterministic"][0] == "pass", st["deterministic"]
    assert st["code_fences"][0] == "fail" and "first fenced block" in st["code_fences"][1]
    slow = result.data["probes"]["slow_probes"]
    assert slow["bound_seconds"] == pytest.approx(24.0) and 8.0 < slow["slowest_seconds"] < 24.0, slow


@pytest.mark.classic
def test_a_reward_that_never_returns_on_an_infinite_loop_still_fails(tmp_path):
    """No time limit at all: the loop is stopped at the slow probes' bound and code_time_limit fails, after
    every other check ran (gold, reachability) with their real verdicts."""
    path = fx.write_env(tmp_path, "no_limit_env", OWN_LIMIT_REWARD.format(limit=None), MBPP_TO_ROW, code=True)
    # --timeout 3: the loop spins a core for the whole bound (9 s, 3 x --timeout), and again when it is retried
    # alone. hack:reads_data_files searches for 1.2 s of it (code.reads_seconds): it read for 5 s, and on a machine
    # full of data files (a suite's tmp folders) the reward was called a hang on it and not called again, so the
    # loop was never scored (a skip: 1 suite run in 5 on the development machine)
    result = run(path, fx.write_rows(tmp_path, mbpp_rows(1)), num_examples=1, timeout=3.0)
    st = checks(result)
    assert st["code_time_limit"][0] == "fail" and "hack:infinite_loop" in st["code_time_limit"][1], (
        st["code_time_limit"],
        failed(result),
    )
    assert "within 9 s" in st["code_time_limit"][1]
    assert st["gold_reward"][0] == "pass" and st["gold_reachable"][0] == "pass", failed(result)
    assert st["code_fences"][0] == "fail"
    ids = [c.id for c in result.checks]
    assert ids.index("reward_hacking") < ids.index("code_time_limit") < ids.index("gold_reachable")
    assert result.exit_code() == 1


# -- check_reward_distribution on code replies --------------------------------------------------------


def _code_reply(example: int, k: int, same: bool) -> str:
    body = "return x + 1" if same else f"return x + {k}  # try {k}"
    return f"Here is my solution:\n\n```python\ndef f{example}(x):\n    {body}\n```\n"


def _check(capsys, folder) -> dict:
    script = importlib.import_module("check_reward_distribution")
    code_ = script.main(["--results", str(folder), "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert_result(obj, "check_reward_distribution", code_)
    return obj


def test_code_replies_are_read_as_code_not_as_an_empty_answer():
    assert final_answer("```python\ndef f():\n    return 1\n```\n") == "def f(): return 1"
    assert isinstance(final_answer("```python\nx = 1\n```"), Program)
    assert final_answer("```\n```") is None  # an empty block is no answer, never ''
    assert final_answer("```python\nx = 1\n```\nAnswer: 42") == "answer: 42"  # a stated answer after code


@pytest.mark.parametrize("same", [False, True])
def test_check_reward_distribution_on_code_replies_says_nothing_of_an_empty_answer(tmp_path, capsys, same):
    rolls = [
        Roll(ex, correct=float((ex + k) % 3 == 0), text=_code_reply(ex, k, same)) for ex in range(30) for k in range(4)
    ]
    obj = _check(capsys, write_classic_run(tmp_path / "run", rolls))
    text = json.dumps(obj["checks"]) + json.dumps(obj["next_steps"])
    assert "''" not in text and "most common answer" not in text, text
    answers = obj["data"]["answers"]
    assert answers["code_answers"] == 120 and answers["top_answer"] != ""
    same_answers = [c for c in obj["checks"] if c["id"] == "same_answers"]
    if same:  # every rollout of a group writes one program: said as programs
        assert same_answers and "writes the same program" in same_answers[0]["message"], obj["checks"]
        assert "30/30 groups" in same_answers[0]["message"]
    else:
        assert not same_answers, same_answers
