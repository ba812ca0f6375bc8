"""Programming problems with tests as a verifiers v1 taskset.

Each row has a prompt, tests and, optionally, an entry point and a reference solution, in
the layouts code datasets use: HumanEval (prompt, a `check(candidate)` test, entry_point,
canonical_solution), MBPP (text, test_list of asserts, code) and stdin/stdout problems
(tests as {"inputs": [...], "outputs": [...]}). The model replies with a Python program
(the last ```python block of the reply, or the whole reply without one). The reward is 1.0
when the program passes every test, else 0.0; `validate` runs the reference solution, so
`vf-validate` finds rows whose own solution fails.

The tests run in THIS process (``v1_code_harness.py`` next to this module), with the prompt's
helper functions and this process's standard library, against a proxy for each function the
program defines: every call's arguments go to a child process that runs only the program's
code (CPU-time, memory, file and process limits, no network where the OS allows it, a
scratch folder, no API keys) and sends back plain data (numbers, strings, bytes, lists,
tuples, dicts, sets). The verdict never exists in the child, so no program can write it:
sys.exit(0), printed output, an always-equal object, a forged verdict (frames, gc), redefined
helpers or a patched standard library earn nothing. stdin/stdout problems: the child runs the
program on one input, the comparison is made here. Not a security sandbox: for untrusted
code at scale use a hosted sandbox (verifiers v1's sandbox runtimes, Prime sandboxes).

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
import os
import re
import sys
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: the task, its tests, the function the tests call, the reference solution, and the
# code the tests need run first (MBPP's test_setup_code: imports, helper definitions).
# QUESTION_COLUMN may be a list of columns (joined in order). ENTRY_POINT_COLUMN,
# SOLUTION_COLUMN and SETUP_COLUMN may be None: the entry point is then read from the tests
# (called_name), there is no reference program (test_reward's gold probes need one), and no
# setup code. SETUP_COLUMN is read only where a row has that column.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "prompt"
TESTS_COLUMN = "test"
ENTRY_POINT_COLUMN = "entry_point"
SOLUTION_COLUMN = "canonical_solution"
SETUP_COLUMN = "test_setup_code"

SYSTEM_PROMPT = (
    "Write a correct Python solution. Reply with the complete program (imports and every "
    "function the task asks for) in one ```python code block."
)
TIMEOUT_SECONDS = 5.0  # wall clock per program run (all its tests)
MEMORY_MB = 1024  # address space of the child process
PARALLEL = max(8, 4 * (os.cpu_count() or 1))  # programs run at once (most of a run is waiting on a child)
HARNESS = Path(__file__).with_name("v1_code_harness.py")

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.S | re.I)
_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> Semaphore
_threads: list[ThreadPoolExecutor] = []


# -- the reply and the row ---------------------------------------------------------------


def extract_code(text: str | None) -> str:
    """The program in a reply: its last ```python block, the rest of an unclosed one, or the whole text."""
    text = text or ""
    blocks = _FENCE.findall(text)
    if blocks:
        return blocks[-1].strip()
    if "```" in text:
        tail = text.rsplit("```", 1)[1]
        return tail.split("\n", 1)[1].strip() if "\n" in tail else ""
    return text.strip()


def tests_of(raw, entry_point: str | None) -> dict:
    """How to run a row's tests: asserts / a check(candidate) function ("call"), or stdin/stdout cases ("io")."""
    if isinstance(raw, str) and raw.strip()[:1] in ("{", "["):
        try:
            raw = json.loads(raw)
        except ValueError:
            pass
    if isinstance(raw, dict) and "inputs" in raw and "outputs" in raw:
        cases = [{"input": i, "output": o} for i, o in zip(raw["inputs"], raw["outputs"])]
        return {"mode": "io", "cases": cases}
    if isinstance(raw, (list, tuple)):
        raw = "\n".join(str(t) for t in raw)
    return {"mode": "call", "tests": str(raw or ""), "entry_point": entry_point}


def prompt_helpers(text: str, entry_point: str | None) -> str:
    """The prompt's own code the tests may call (HumanEval's `poly`, `encode_cyclic`): its imports and every
    finished function or class but the entry point. The tests run with these, never with the reply's versions."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
            if node.name == entry_point or all(isinstance(n, ast.Pass) for n in body):
                continue  # the function the reply writes (a signature and docstring only)
        elif not isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            continue
        kept.append(node)
    return ast.unparse(ast.Module(kept, [])) if kept else ""


def row_tests(row: dict) -> tuple[str | None, dict]:
    """The row's entry point and how to run its tests: the prompt's helper code and the row's setup code
    (SETUP_COLUMN) run in the tests' namespace first, in that order."""
    entry = row_entry_point(row, row[TESTS_COLUMN])
    spec = tests_of(row[TESTS_COLUMN], entry)
    if spec["mode"] == "call":
        spec["helpers"] = prompt_helpers(prompt_text(row), entry)
        setup = setup_code(row)
        if setup:
            spec["setup"] = setup
    return entry, spec


def setup_code(row: dict) -> str:
    """The code the row's tests need run first (SETUP_COLUMN: imports, helper definitions), or ''."""
    value = row.get(SETUP_COLUMN) if SETUP_COLUMN else None
    if isinstance(value, (list, tuple)):
        value = "\n".join(str(v) for v in value)
    return str(value).strip() if value else ""


def called_name(tests: str, reference: str | None = None) -> str | None:
    """The function the tests call: in the asserts, in order (`assert f(x) == y`, `assert (f(x)) == y`,
    `assert not f(x)`, `assert math.isclose(f(x), y)`, `assert set(f(x)) == ...`), the first call of a plain
    name that is no builtin (set, sorted, abs, round, len...), no attribute (math.isclose) and nothing the
    tests define, import, assign or take as an argument themselves (check's `candidate`, setup helpers). With
    a reference program, the first such name it defines wins (even one shadowing a builtin). None if none."""
    try:
        statements = ast.parse(tests).body
    except (SyntaxError, ValueError):  # a broken line: read the others one by one
        statements = []
        for line in tests.splitlines():
            try:
                statements += ast.parse(line.strip()).body
            except (SyntaxError, ValueError):
                continue
    bound, in_asserts, anywhere = set(), [], []
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                anywhere.append(node.func.id)
            elif isinstance(node, ast.Assert):
                calls = [n for n in ast.walk(node.test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
                in_asserts += [n.func.id for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]
    names = [n for n in in_asserts if n not in bound] or [n for n in anywhere if n not in bound]
    defined = set(re.findall(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", reference or "", re.M))
    for name in names:
        if name in defined:
            return name
    return next((name for name in names if not hasattr(builtins, name)), None)


def row_entry_point(row: dict, raw_tests) -> str | None:
    """The entry point column's value, else the function the tests call (called_name, the setup code's own
    definitions aside, preferring one the reference solution defines); None for stdin/stdout tests."""
    if ENTRY_POINT_COLUMN and row.get(ENTRY_POINT_COLUMN):
        return str(row[ENTRY_POINT_COLUMN]).strip()
    spec = tests_of(raw_tests, None)
    if spec["mode"] != "call":
        return None
    solution = row.get(SOLUTION_COLUMN) if SOLUTION_COLUMN else None
    if isinstance(solution, (list, tuple)):
        solution = solution[0] if solution else None
    return called_name(setup_code(row) + "\n" + spec["tests"], str(solution) if solution else None)


def prompt_text(row: dict) -> str:
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


def task_prompt(row: dict, entry_point: str | None, spec: dict) -> str:
    """The prompt, with what the tests need said in it: the function's name and, for bare asserts, one example."""
    text = prompt_text(row)
    if entry_point and not re.search(rf"\b{re.escape(entry_point)}\b", text):
        text += f"\n\nThe function must be named `{entry_point}`."
    if spec["mode"] == "call" and "def check(" not in spec["tests"]:
        first = next((t.strip() for t in spec["tests"].splitlines() if t.strip().startswith("assert")), None)
        if first and first not in text:
            text += f"\n\nYour code should pass tests like this one:\n{first}"
    return text


def reference_program(row: dict, entry_point: str | None) -> str:
    """The reference solution as a whole program (HumanEval's is the body under the prompt; APPS lists several)."""
    if not SOLUTION_COLUMN or not row.get(SOLUTION_COLUMN):
        return ""
    solution = row[SOLUTION_COLUMN]
    if isinstance(solution, str) and solution.lstrip().startswith("["):  # APPS: a JSON list of solutions
        try:
            solution = json.loads(solution)
        except ValueError:
            pass
    if isinstance(solution, (list, tuple)):
        solution = solution[0] if solution else ""
    solution = str(solution)
    if entry_point and f"def {entry_point}" not in solution and f"def {entry_point}" in prompt_text(row):
        return prompt_text(row) + solution
    return solution


# -- running the tests ---------------------------------------------------------------------


def harness():
    """The harness module beside this one (loaded once): it runs the tests here and the program in a child."""
    name = HARNESS.stem
    if name not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(name, HARNESS)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


async def run_tests(program: str, spec: dict, timeout: float = TIMEOUT_SECONDS, memory_mb: int = MEMORY_MB) -> dict:
    """{"passed": bool, "reason": str}: the tests run in this process against the program run in a limited child."""
    if not program.strip():
        return {"passed": False, "reason": "no code"}
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(PARALLEL)
    async with _slots[loop]:
        if not _threads:  # one thread per program run at once: it runs the tests, waiting on the child
            _threads.append(ThreadPoolExecutor(PARALLEL, thread_name_prefix="code-tests"))
        return await loop.run_in_executor(_threads[0], harness().score, program, spec, timeout, memory_mb)


# -- the taskset ------------------------------------------------------------------------------


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_code_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_code_data")
NO_DATASET = (
    "no dataset named: set dataset_path (a .jsonl/.json/.csv/.parquet file; a relative path is also looked up "
    "in the package's data/ folder) or dataset_name (a Hub dataset). This environment never picks one for you."
)
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def data_file(path: str) -> str:
    """A dataset file: the path as given (absolute, or relative to the current folder), else the
    same relative path in the package's data folder (data/train.jsonl and train.jsonl both name data/train.jsonl)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return str(given)
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    for folder in DATA_DIRS:
        if (folder / inside).is_file():
            return str(folder / inside)
    looked = ", ".join(str(p) for p in (Path.cwd() / given, *(folder / inside for folder in DATA_DIRS)))
    raise FileNotFoundError(f"dataset_path {path!r} not found (looked at {looked})")


def read_rows(config: V1CodeConfig) -> Iterator[dict]:
    """Rows of a local file if dataset_path is set (.jsonl/.json/.csv/.parquet, text ones also .gz; see
    data_file), else of the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    from datasets import load_dataset  # only needed when tasks are loaded

    if config.dataset_path:
        builder = _BUILDERS.get(Path(Path(config.dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {config.dataset_path!r})")
        dataset = load_dataset(builder, data_files=data_file(config.dataset_path), split="train")
    elif config.dataset_name:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    else:
        raise ValueError(NO_DATASET)
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, TESTS_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1CodeData(vf.TaskData):
    tests: str
    """How to run the tests (JSON: mode "call" with asserts / check(), or "io" cases)."""
    entry_point: str = ""
    answer: str = ""
    """The reference program ('' when the dataset has none)."""


class V1CodeTaskConfig(vf.TaskConfig):
    timeout_seconds: float = TIMEOUT_SECONDS
    memory_mb: int = MEMORY_MB


class V1CodeTask(vf.Task[V1CodeData, vf.State, V1CodeTaskConfig]):
    @vf.reward(weight=1.0)
    async def passes_tests(self, trace: vf.Trace) -> float:
        """1.0 when the reply's program passes every test of the row."""
        program = extract_code(trace.last_reply)
        verdict = await run_tests(
            program, json.loads(self.data.tests), self.config.timeout_seconds, self.config.memory_mb
        )
        return 1.0 if verdict["passed"] else 0.0

    @vf.metric
    async def code_block(self, trace: vf.Trace) -> float:
        """Did the reply hold a ```python block?"""
        return 1.0 if _FENCE.search(trace.last_reply or "") else 0.0

    async def validate(self, runtime) -> bool:
        """The reference program, when there is one, must pass the tests."""
        if not self.data.answer:
            return True
        verdict = await run_tests(self.data.answer, json.loads(self.data.tests), self.config.timeout_seconds)
        return verdict["passed"]


class V1CodeConfig(vf.TasksetConfig):
    task: V1CodeTaskConfig = V1CodeTaskConfig()
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "test"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1CodeTaskset(vf.Taskset[V1CodeTask, V1CodeConfig]):
    def load(self) -> Iterator[V1CodeTask]:
        for i, row in enumerate(read_rows(self.config)):
            entry, spec = row_tests(row)
            yield V1CodeTask(
                V1CodeData(
                    id=str(row.get("task_id", row.get("id", i))),
                    prompt=task_prompt(row, entry, spec),
                    system_prompt=SYSTEM_PROMPT,
                    tests=json.dumps(spec),
                    entry_point=entry or "",
                    answer=reference_program(row, entry),
                ),
                self.config.task,
            )


__all__ = ["V1CodeTaskset"]
