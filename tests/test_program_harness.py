"""The program templates' judge (the harness's "io" mode, shared by the four code and program templates): every
accepted way to read standard input and end a program passes (fast input through os.read(0) and os.fstat(0),
sys.stdin.buffer, open(0), exit(), quit(), a thread for deep recursion); each test has a CPU-time limit of its own
(three slow tests pass where their sum would not); a crash or a non-zero exit fails whatever was printed; the
output is compared token by token (whitespace between tokens required, no prefix, no empty output), numbers
within a tolerance, or by a checker; nothing of a test reaches the next, and the program reads nothing but its
scratch folder. And the templates' own rules read every layout of competitive-programming data."""

from __future__ import annotations

import importlib.util
import json
import sys

import program_fixtures as fx
import pytest
from conftest import SKILL_ROOT

from vlab.kinds.program import rows as program_rows

pytestmark = pytest.mark.once

TEMPLATES = SKILL_ROOT / "templates" / "environments"
HARNESSES = ("v1-code/v1_code_harness.py", "classic-code/classic_code_harness.py")
HARNESSES += ("v1-program/v1_program_harness.py", "classic-program/classic_program_harness.py")
ADD = [("1 2\n", "3\n"), ("40 2\n", "42\n"), ("-5 5\n", "0\n")]


def harness():
    if "program_harness_under_test" not in sys.modules:
        spec = importlib.util.spec_from_file_location("program_harness_under_test", TEMPLATES / HARNESSES[2])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["program_harness_under_test"]


def spec(cases, **extra) -> dict:
    return {"mode": "io", "cases": [{"input": i, "output": o} for i, o in cases], **extra}


def judge(program: str, cases=ADD, limit: float = 2.0, **extra) -> dict:
    return harness().score(program, spec(cases, **extra), limit, 1024, extra.pop("checker_fn", None))


def test_the_four_templates_ship_one_harness():
    texts = {name: (TEMPLATES / name).read_text() for name in HARNESSES}
    assert len(set(texts.values())) == 1, "the code and program templates' harness files differ"


ACCEPTED = {
    "input": "a, b = map(int, input().split())\nprint(a + b)\n",
    "fast_input": "import os, io\ninput = io.BytesIO(os.read(0, os.fstat(0).st_size)).readline\n"
    "a, b = map(int, input().split())\nprint(a + b)\n",
    "stdin_buffer": "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nsys.stdout.buffer.write(b'%d\\n' % (a + b))\n",
    "fileno": "import os, sys\nprint(sum(map(int, os.read(sys.stdin.fileno(), 100).split())))\n",
    "open_0": "print(sum(map(int, open(0).read().split())))\n",
    "exit": "a, b = map(int, input().split())\nprint(a + b)\nexit()\n",
    "quit_0": "a, b = map(int, input().split())\nprint(a + b)\nquit(0)\n",
    "sys_exit": "import sys\nprint(sum(map(int, sys.stdin.read().split())))\nsys.exit(0)\n",
    "thread": "import sys, threading\nthreading.stack_size(1 << 26)\nsys.setrecursionlimit(10 ** 6)\n"
    "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
    "def main():\n    f(100000)\n    print(sum(map(int, input().split())))\n"
    "threading.Thread(target=main).start()\n",
    "deep_stack": "import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
    "f(60000)\nprint(sum(map(int, input().split())))\n",
    "hashes_comment": "print(sum(map(int, input().split())))\n#### a comment\n",
    "extra_whitespace": "a, b = map(int, input().split())\nprint('  ', a + b, '  \\r\\n\\n\\n')\n",
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_every_accepted_way_to_read_input_and_end_passes(name):
    verdict = judge(ACCEPTED[name])
    assert verdict["passed"], verdict["reason"]


def test_the_fixtures_references_pass_with_their_own_limits():
    for problem in fx.problems(slow_n=300_000):
        cases = problem["tests"]
        verdict = judge(problem["reference"], cases, float(problem.get("time_limit") or 2), tolerance=1e-6)
        assert verdict["passed"], (problem["name"], verdict["reason"])


WRONG = {
    "crash_after_output": (
        "print(sum(map(int, input().split())), flush=True)\nraise RuntimeError('late')\n",
        "exited with status 1",
    ),
    "exit_status_3": ("print(sum(map(int, input().split())))\nimport sys\nsys.exit(3)\n", "exited with status 3"),
    "killed_after_output": (
        "import os, signal, sys\nprint(sum(map(int, input().split())))\nsys.stdout.flush()\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        "crashed (SIGSEGV",
    ),
    "no_spaces": ("print('{}{}'.format(*input().split()))\n", "wrong answer"),
    "empty": ("import sys\nsys.stdin.read()\n", "wrong answer"),
    "syntax_error": ("print(1\n# a trailing comment\n", "did not run: SyntaxError"),
    "numpy": ("import numpy\n", "No module named 'numpy'"),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_crash_a_non_zero_exit_or_other_output_fails(name):
    program, why = WRONG[name]
    verdict = judge(program)
    assert not verdict["passed"] and why in verdict["reason"], verdict["reason"]
    assert verdict["reason"].startswith("test 1 of 3: ")


def test_tokens_are_compared_not_text_and_no_prefix_passes():
    same = harness().same_output
    assert same("1 2\n", "1   2  \r\n") and same("1\n2", "1 2") and same("", "\n")
    assert not same("12", "1 2") and not same("1", "1 2") and not same("", "0") and not same("1 2 3", "1 2")
    assert same("0.5000001", "0.5", 1e-6) and not same("0.50001", "0.5", 1e-6) and not same("0.5", "0.5000001")
    assert same("1000000.5", "1000000", 1e-6) and not same("nan", "1", 1e-6) and not same("1_0", "10", 1e-6)


def test_a_float_answer_within_the_tolerance_passes_and_outside_fails():
    cases = [("2\n", "0.6666666667\n")]
    assert judge("print(2 / 3)\n", cases, tolerance=1e-6)["passed"]
    assert "wrong answer" in judge("print(0.6667)\n", cases, tolerance=1e-6)["reason"]
    assert not judge("print(2 / 3)\n", cases)["passed"]  # no tolerance: tokens as they are


def test_a_checker_judges_rows_with_several_right_answers():
    cases = [("3\n", "1 2 3\n")]
    source = "def check(input, output, expected):\n    return sorted(output.split()) == sorted(expected.split())\n"
    assert judge("print(3, 1, 2)\n", cases, checker=source)["passed"]
    assert "checker refused" in judge("print(3, 1, 1)\n", cases, checker=source)["reason"]
    custom = harness().score(
        "print(2, 1, 3)\n", spec(cases, checker="custom"), 2.0, 1024, lambda i, o, e: len(o.split()) == 3
    )
    assert custom["passed"], custom["reason"]
    unwritten = harness().score("print(2, 1, 3)\n", spec(cases, checker="custom"), 2.0, 1024, lambda i, o, e: None)
    assert "wrong answer" in unwritten["reason"]  # None: the token comparison decides


def _iterations(seconds: float) -> int:
    """How many turns of the test's loop take ``seconds`` of CPU time here (the verdict is the machine's own). Timed
    as the program runs it, at module level (globals, not a function's locals: 1.5-2x slower), so a test of 0.4 s
    is 0.4 s in the child too, not 0.8 s of a 1 s limit."""
    import time

    code = compile("t = 0\nfor i in range(300_000):\n    t += i % 7\n", "<loop>", "exec")
    start = time.process_time()
    exec(code, {})
    return int(300_000 * seconds / max(time.process_time() - start, 1e-3))


def test_each_test_has_its_own_cpu_time_limit():
    """Three tests of about a third of a second each pass under a 1 s limit per test; a top-level loop is stopped
    on its first test by the CPU-time limit, not by a wall clock a busy machine eats."""
    loop = "n = int(input())\nt = 0\nfor i in range(n):\n    t += i % 7\nprint(t)\n"
    n = _iterations(0.4)  # each test 0.4 s of this machine's CPU: 1.2 s for the three, over one 1 s limit
    cases = [(f"{n + k}\n", f"{sum(i % 7 for i in range(n + k))}\n") for k in range(3)]
    verdict = judge(loop, cases, limit=1.0)
    assert verdict["passed"], verdict["reason"]
    stopped = judge("while True:\n    pass\n", cases, limit=1.0)
    assert stopped["reason"].startswith("test 1 of 3: time limit exceeded"), stopped["reason"]


def test_a_program_that_sleeps_is_stopped_by_the_wall_clock(monkeypatch):
    monkeypatch.setattr(harness(), "IO_WALL_FACTOR", 1.0)
    monkeypatch.setattr(harness(), "IO_WALL_SECONDS", 0.5)
    verdict = judge("import time\ntime.sleep(60)\n", limit=0.5)
    assert "did not finish within" in verdict["reason"], verdict["reason"]


def test_nothing_of_a_test_reaches_the_next_and_the_data_stays_closed(tmp_path):
    """A file written on the first test is gone on the second; the data file beside the scorer is not readable."""
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"input": "1 2\n", "output": "3\n"}) + "\n")
    remembers = (
        "import os\nseen = os.path.exists('marker')\nopen('marker', 'w').write('x')\n"
        "print(sum(map(int, input().split())) + (1000 if seen else 0))\n"
    )
    assert judge(remembers)["passed"]
    reads = f"try:\n    print(open({str(data)!r}).read())\nexcept OSError:\n    print(0)\n"
    verdict = judge(reads, [("1 2\n", "0\n")])
    assert verdict["passed"], verdict["reason"]
    assert verdict["isolation"].get("landlock", 0) > 0 or verdict["isolation"].get("uid") != 0


LAYOUTS = {
    "apps": fx.apps_rows,
    "codecontests": fx.codecontests_rows,
    "livecodebench": fx.livecodebench_rows,
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_templates_read_every_layout(layout):
    problems = fx.problems(slow_n=10)
    for problem, row in zip(problems, LAYOUTS[layout](problems)):
        cases = []
        for field in program_rows.TESTS_FIELDS:
            found, calls = program_rows.io_cases(row.get(field)) if row.get(field) is not None else ([], False)
            assert not calls
            cases += found
        assert [(c["input"], c["output"]) for c in cases] == problem["tests"], (layout, problem["name"])


def test_a_folder_of_problem_folders_reads_as_rows(tmp_path):
    folder = fx.write_folder(tmp_path / "problems", fx.problems(slow_n=10))
    (folder / "sum" / "tests" / "input_1.txt").write_bytes(b"1 2\r\n")  # Windows line endings read as \n
    rows = {r["id"]: r for r in program_rows.problem_rows(folder)}
    assert sorted(rows) == sorted(p["name"] for p in fx.problems(slow_n=10))
    assert rows["sum"]["input_output"]["inputs"][0] == "1 2\n"
    assert rows["sum"]["solutions"] == fx.SUM and rows["slow"]["time_limit"] == 3


def test_function_call_tests_are_not_programs_and_a_pickle_with_a_class_is_refused():
    assert program_rows.io_cases({"inputs": [[1]], "outputs": [2], "fn_name": "f"}) == ([], True)
    assert program_rows.io_cases([{"input": "1", "output": "2", "testtype": "functional"}]) == ([], True)
    import base64
    import pickle
    import zlib

    class Payload:
        def __reduce__(self):
            return (print, ("ran",))

    blob = base64.b64encode(zlib.compress(pickle.dumps(Payload()))).decode()
    assert program_rows.io_cases(blob) == ([], False)  # read as text, never run


def test_the_statement_says_tolerance_and_several_answers():
    tol, several = program_rows.statement_tolerance, program_rows.several_answers
    assert tol("Your answer is considered correct if its absolute or relative error does not exceed 10^{-6}.") == 1e-6
    assert tol("absolute or relative error does not exceed 1e-4") == 1e-4
    assert tol("Print the sum.") is None
    assert several("If there are multiple answers, print any of them.") and not several("Print the answer.")
