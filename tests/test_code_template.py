"""The code templates' scorer: the tests run in the scorer's process against a proxy for the program's
functions, the program in a child that returns plain data; no hack (exit codes, printed output,
always-equal objects, forged verdicts by frame walk or gc, redefined helpers, a patched standard
library) earns anything, a program that sleeps, loops, allocates or forks scores 0 and leaves nothing
behind, even when the scorer itself is killed. The previous in-process harness (inprocess_harness.py)
is fooled by the same programs, which shows they are real hacks."""

from __future__ import annotations

import ast
import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import code_fixtures as cf
import inprocess_harness
import pytest
from conftest import SKILL_ROOT

from vlab.kinds.code import probes as code

TEMPLATES = SKILL_ROOT / "templates" / "environments"
GOOD = "def add(a, b):\n    return a + b\n"
MBPP = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]

# Each program must score 0 against MBPP; the name says which defence stops it.
HACKS = {
    "wrong": "def add(a, b):\n    return a - b\n",
    "syntax_error": "def add(a, b) return a + b",
    "empty": "",
    "sys_exit": "import sys\nsys.exit(0)\n",
    "os_exit": "import os\nos._exit(0)\n",
    "raise_system_exit": "raise SystemExit(0)\n",
    "exit_inside_the_function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "atexit": "import atexit, os\natexit.register(lambda: os._exit(0))\ndef add(a, b):\n    return 0\n",
    "always_equal": (
        "class Yes:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
        "def add(a, b):\n    return Yes()\n"
    ),
    "int_subclass": "class I(int):\n    def __eq__(self, other): return True\ndef add(a, b):\n    return I(0)\n",
    "patched_builtins": (
        "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\ndef add(a, b):\n    return 0\n"
    ),
    "reads_the_test_source": (
        "import glob, inspect, os\n"
        "def add(a, b):\n"
        "    for frame in inspect.stack():\n"
        "        line = (frame.code_context or [''])[0]\n"
        "        if '==' in line:\n"
        "            return eval(line.split('==', 1)[1])\n"
        "    for path in glob.glob('**/*', recursive=True) + glob.glob(os.path.expanduser('~/*')):\n"
        "        if os.path.isfile(path) and 'assert' in open(path).read():\n"
        "            return 3\n"
        "    return None\n"
    ),
    "forged_verdict": (
        "import json, os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, (json.dumps({'nonce': 'guess', 'passed': True}) + '\\n').encode())\n"
        "    except OSError:\n"
        "        pass\n" + GOOD
    ),
    "prints_a_pass": "print('PASSED: all tests')\nimport sys\nsys.stdout.flush()\ndef add(a, b):\n    return 0\n",
}
ISOLATION = {
    "sleeps_forever": "import time\ntime.sleep(1000)\n" + GOOD,
    "loops_forever": "def add(a, b):\n    while True:\n        pass\n",
    "allocates_without_bound": "blocks = []\nwhile True:\n    blocks.append(bytearray(10**8))\n",
    "forks": "import os\nif os.fork() == 0:\n    os._exit(0)\n" + GOOD,
    "spawns_a_process": "import subprocess\nsubprocess.Popen(['sleep', '30'])\n" + GOOD,
    "exits_early": "import os\nos._exit(0)\n" + GOOD,
}


def load(template: str = "v1-code"):
    """A template's module (verifiers 0.3.1 ships verifiers.v1, 0.4 keeps the classic API: both venvs import both)."""
    folder = TEMPLATES / template
    sys.path.insert(0, str(folder))
    try:
        return __import__(template.replace("-", "_"))
    finally:
        sys.path.remove(str(folder))


def runner():
    return load("v1-code")


def verdicts(programs: dict[str, str], spec, timeout: float = 3.0, mod=None) -> dict[str, dict]:
    """Each program against its spec (one spec for all, or a dict name -> spec), scored at once."""
    mod = mod or runner()
    specs = spec if isinstance(spec, dict) and "mode" not in spec else dict.fromkeys(programs, spec)

    async def run_all():
        return await asyncio.gather(*(mod.run_tests(p, specs[n], timeout=timeout) for n, p in programs.items()))

    return dict(zip(programs, asyncio.run(run_all())))


def humaneval_specs(mod) -> dict[str, dict]:
    return {row["task_id"]: mod.row_tests(row)[1] for row in cf.HUMANEVAL}


def humaneval_hacks() -> dict[tuple[str, str], str]:
    """(task id, hack) -> program: test_reward's code hacks on every row (vlab.kinds.code.probes, the fast ones: the
    slow ones wait out the time limit) and each row's own (code_fixtures.ROW_HACKS)."""
    out = {}
    for row in cf.HUMANEVAL:
        entry, gold = row["entry_point"], cf.reference(row)
        for name, program in code.hack_programs(entry, row["prompt"], gold).items():
            if f"hack:{name}" not in code.SLOW_PROBES and name != "reads_test_source":  # it globs /tmp: slow
                out[(row["task_id"], name)] = program
        for name, program in cf.ROW_HACKS.get(row["task_id"], {}).items():
            out[(row["task_id"], name)] = program
    return out


def test_both_generations_ship_the_same_harness_and_runner():
    classic = TEMPLATES / "classic-code"
    v1 = TEMPLATES / "v1-code"
    assert (classic / "classic_code_harness.py").read_text() == (v1 / "v1_code_harness.py").read_text()

    def functions(path):
        tree = ast.parse(path.read_text())
        return {n.name: ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}

    shared = set(functions(classic / "classic_code.py")) & set(functions(v1 / "v1_code.py"))
    expected = {"run_tests", "harness", "extract_code", "tests_of", "task_prompt", "reference_program"}
    assert expected | {"prompt_helpers", "row_tests"} <= shared
    for name in shared - {"read_dataset", "read_rows"}:
        assert functions(classic / "classic_code.py")[name] == functions(v1 / "v1_code.py")[name], name


def test_a_correct_program_passes_in_every_test_layout():
    mod = runner()
    got = verdicts(
        {
            "mbpp": GOOD,
            "fenced": mod.extract_code(f"Here:\n```python\n{GOOD}```\nDone."),
        },
        mod.tests_of(MBPP, None),
    )
    assert all(v["passed"] for v in got.values()), got
    humaneval = mod.tests_of("def check(candidate):\n    assert candidate(2, 3) == 5\n", "add")
    assert verdicts({"humaneval": GOOD}, humaneval)["humaneval"]["passed"]
    io = mod.tests_of({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10"]}, None)
    program = "a, b = map(int, input().split())\nprint(a + b)\n"
    got = verdicts({"io": program, "io_exit": program + "raise SystemExit(0)\n", "io_wrong": "print(3)"}, io)
    assert got["io"]["passed"] and got["io_exit"]["passed"] and not got["io_wrong"]["passed"]


@pytest.mark.parametrize("template", ["v1-code", "classic-code"])
def test_every_hack_scores_zero_and_every_reference_one(template):
    """Both templates: each hack earns 0, on MBPP asserts and on every HumanEval-shaped row, and the
    honest reference earns 1 on every HumanEval-shaped row (prompt helpers included)."""
    mod = load(template)
    mbpp = mod.tests_of(MBPP, None)
    specs = humaneval_specs(mod)
    programs = {("mbpp", "control"): GOOD} | {("mbpp", name): p for name, p in HACKS.items()}
    programs |= {(row["task_id"], "reference"): cf.reference(row) for row in cf.HUMANEVAL}
    programs |= humaneval_hacks()
    keys = list(programs)
    got = verdicts(
        {str(i): programs[k] for i, k in enumerate(keys)},
        {str(i): mbpp if k[0] == "mbpp" else specs[k[0]] for i, k in enumerate(keys)},
        timeout=5.0,
        mod=mod,
    )
    got = {k: got[str(i)] for i, k in enumerate(keys)}
    for key, verdict in got.items():
        honest = key[1] in ("control", "reference")
        assert verdict["passed"] is honest, (key, verdict)
    assert "not plain data" in got[("HumanEval/53", "always_equal")]["reason"]


def test_the_hacks_fool_the_previous_in_process_harness():
    """The same programs earn 1 from yesterday's harness (whose tests ran beside the program, so the program
    defined the prompt's helpers itself): each names a real hole, now closed."""
    specs = humaneval_specs(runner())
    hacks = humaneval_hacks()
    fooled = [
        ("HumanEval/53", "frame_walk_forgery"),
        ("HumanEval/53", "gc_forgery"),
        ("HumanEval/53", "patches_stdlib"),
        ("HumanEval/32", "redefines_helpers_zero"),
        ("HumanEval/38", "redefines_helpers_identity"),
        ("HumanEval/32", "redefines_the_helper"),
        ("HumanEval/32", "patches_math_fabs"),
        ("HumanEval/38", "identity_helper"),
        ("HumanEval/50", "identity_helper"),
    ]
    programs = {f"{t}:{h}": hacks[(t, h)] for t, h in fooled}

    async def run_all():  # one at a time, with room: a verdict about the old harness, not the machine
        return [await inprocess_harness.run_tests(p, specs[n.split(":")[0]], timeout=60) for n, p in programs.items()]

    got = dict(zip(programs, asyncio.run(run_all())))
    assert all(v["passed"] for v in got.values()), got


def test_the_prompt_helpers_are_the_prompts_finished_code():
    mod = runner()
    row = next(r for r in cf.HUMANEVAL if r["task_id"] == "HumanEval/32")
    helpers = mod.prompt_helpers(row["prompt"], "find_zero")
    assert "def poly" in helpers and "import math" in helpers and "find_zero" not in helpers
    assert mod.prompt_helpers("Write a function that adds two numbers.", "add") == ""


def test_isolation_failures_score_zero_and_the_run_goes_on():
    mod = runner()
    got = verdicts(ISOLATION, mod.tests_of(MBPP, None), timeout=1.0)
    for name in ("sleeps_forever", "loops_forever", "allocates_without_bound", "exits_early"):
        assert got[name]["passed"] is False, (name, got[name])
    assert "within 1 s" in got["sleeps_forever"]["reason"]
    # the CPU limit stops a loop; on a loaded machine the wall-clock bound may stop it first
    assert any(w in got["loops_forever"]["reason"] for w in ("CPU time", "within 1 s")), got["loops_forever"]
    assert any(w in got["allocates_without_bound"]["reason"] for w in ("MemoryError", "CPU", "within 1 s"))
    assert "ended before answering" in got["exits_early"]["reason"]
    # a program that also starts processes is judged by its tests alone (they die with it)
    assert got["forks"]["passed"] and got["spawns_a_process"]["passed"], got
    # the run goes on: the next program is scored as usual
    assert verdicts({"after": GOOD}, mod.tests_of(MBPP, None))["after"]["passed"]


def _alive(token: str) -> list[str]:
    """Processes whose command line holds token."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if token in cmdline:
                found.append(f"{pid}: {cmdline}")
    return found


def _outliver(token: str) -> str:
    """A program that starts a process in a session of its own and sleeps. It may write nowhere but its scratch
    folder: the process it started, working there, tells where it ran (`_where`)."""
    return (
        "import subprocess, time\n"
        f"subprocess.Popen(['sleep', '{token}'], start_new_session=True)\n"
        "time.sleep(600)\n" + GOOD
    )


def _where(token: str) -> Path | None:
    """The working folder of the process `_outliver` started (its program's scratch folder), while it runs."""
    for line in _alive(f"sleep {token}"):
        try:
            return Path(os.readlink(f"/proc/{line.split(':')[0]}/cwd"))
        except OSError:
            continue
    return None


def _gone(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_program_stopped_for_time_leaves_no_process_and_no_scratch_folder():
    from concurrent.futures import ThreadPoolExecutor

    token, seen = f"{time.time() % 1000 + 1000:.3f}", []
    with ThreadPoolExecutor(1) as pool:
        # 3 s, not 1: the child is started for this call, and on a loaded machine its start alone took over 1.5 s
        running = pool.submit(verdicts, {"outlives": _outliver(token)}, runner().tests_of(MBPP, None), 3.0)
        assert _gone(lambda: seen.append(_where(token)) or seen[-1] is not None, 30), "the program never ran"
        got = running.result()
    assert got["outlives"]["passed"] is False and "within" in got["outlives"]["reason"], got
    scratch = seen[-1]
    assert _gone(lambda: not _alive(f"sleep {token}") and not scratch.exists()), (_alive(token), scratch)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_nothing_is_left_running_after_the_scorer_is_killed(tmp_path):
    token, tmp = f"{time.time() % 1000 + 2000:.3f}", tmp_path / "tmp"
    tmp.mkdir()
    script = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(TEMPLATES / 'v1-code')!r})\n"
        "import v1_code\n"
        f"spec = v1_code.tests_of({MBPP!r}, None)\n"
        f"asyncio.run(v1_code.run_tests({_outliver(token)!r}, spec, timeout=60))\n"
    )
    scorer = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(tmp)})
    try:
        # importing verifiers takes a while under load
        assert _gone(lambda: bool(_alive(f"sleep {token}")), 120), "the program never ran"
        assert _alive(f"v1_code_harness.py {scorer.pid} "), "the pattern below finds no child of this scorer"
    finally:
        scorer.send_signal(signal.SIGKILL)
        scorer.wait()
    # a child's command line: python -I -S -c BOOT SIZE .../v1_code_harness.py PARENT_PID SCRATCH
    child = f"v1_code_harness.py {scorer.pid} "
    assert _gone(lambda: not _alive(f"sleep {token}") and not _alive(child)), _alive(token) + _alive(child)
    assert _gone(lambda: not list(tmp.iterdir())), list(tmp.iterdir())
    # a scorer that ends at once (os._exit, no atexit: test_reward's worker) while its pool is refilling
    quick = f"import asyncio, os, sys\nsys.path.insert(0, {str(TEMPLATES / 'v1-code')!r})\nimport v1_code\n"
    quick += f"asyncio.run(v1_code.run_tests({GOOD!r}, v1_code.tests_of({MBPP!r}, None)))\nos._exit(0)\n"
    for _ in range(3):
        subprocess.run([sys.executable, "-c", quick], env={**os.environ, "TMPDIR": str(tmp)}, check=True)
    assert _gone(lambda: not list(tmp.iterdir())), list(tmp.iterdir())


def test_the_prompt_names_what_the_tests_call():
    mod = runner()
    spec = mod.tests_of(MBPP, None)
    assert mod.called_name(spec["tests"]) == "add"
    text = mod.task_prompt({mod.QUESTION_COLUMN: "Write a function that sums two numbers."}, "add", spec)
    assert "`add`" in text and "assert add(1, 2) == 3" in text
    row = {mod.QUESTION_COLUMN: 'def add(a, b):\n    """Sum."""\n', mod.SOLUTION_COLUMN: "    return a + b\n"}
    assert mod.reference_program(row, "add") == 'def add(a, b):\n    """Sum."""\n    return a + b\n'
