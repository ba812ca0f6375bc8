"""Programming problems with tests as a classic verifiers environment.

Each row has a prompt, tests and, optionally, an entry point and a reference solution, in
the layouts code datasets use: HumanEval (prompt, a `check(candidate)` test, entry_point,
canonical_solution), MBPP (text, test_list of asserts, code) and stdin/stdout problems
(tests as {"inputs": [...], "outputs": [...]}). The model replies with a Python program
(the last ```python block of the reply, or the whole reply without one). The reward is 1.0
when the program passes every test, else 0.0.

The tests run in THIS process (``classic_code_harness.py`` next to this module), with the prompt's
helper functions and this process's standard library, against a proxy for each function the
program defines: every call's arguments go to a child process that runs only the program's
code (CPU-time, memory, file and process limits, no network where the OS allows it, a
scratch folder, no API keys) and sends back plain data (numbers, strings, bytes, lists,
tuples, dicts, sets). The verdict never exists in the child, so no program can write it:
sys.exit(0), printed output, an always-equal object, a forged verdict (frames, gc), redefined
helpers or a patched standard library earn nothing. stdin/stdout problems: the child runs the
program on one input, the comparison is made here. Not a security sandbox: for untrusted
code at scale use a hosted sandbox (verifiers v1's sandbox runtimes, Prime sandboxes).

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset

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
HARNESS = Path(__file__).with_name("classic_code_harness.py")

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


def last_text(completion) -> str:
    """The text of the last message of a completion (text, message dicts or message objects)."""
    if isinstance(completion, str):
        return completion
    if not completion:
        return ""
    last = completion[-1]
    content = last.get("content") if isinstance(last, dict) else getattr(last, "content", "")
    return content if isinstance(content, str) else ""


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


# -- the environment ----------------------------------------------------------------------------


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# classic_code_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "classic_code_data")
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


def read_dataset(dataset_name: str | None, dataset_config: str | None, split: str, dataset_path: str | None) -> Dataset:
    """A local file if dataset_path is given (.jsonl/.json/.csv/.parquet, the text ones also .gz; see data_file),
    else the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    if dataset_path:
        builder = _BUILDERS.get(Path(Path(dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {dataset_path!r})")
        return load_dataset(builder, data_files=data_file(dataset_path), split="train")
    if not dataset_name:
        raise ValueError(NO_DATASET)
    return load_dataset(dataset_name, dataset_config, split=split)


def to_rows(dataset: Dataset, num_examples: int) -> Dataset:
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, TESTS_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))

    def convert(row):
        entry, spec = row_tests(row)
        return {
            "question": task_prompt(row, entry, spec),
            "answer": reference_program(row, entry),
            "info": {"tests": json.dumps(spec), "entry_point": entry or ""},
        }

    return dataset.map(convert, remove_columns=dataset.column_names)


def load_environment(
    dataset_name: str | None = None,
    dataset_config: str | None = None,
    dataset_split: str = "test",
    dataset_path: str | None = None,
    num_examples: int = -1,
    timeout_seconds: float = TIMEOUT_SECONDS,
    memory_mb: int = MEMORY_MB,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.Environment:
    """Build the environment. Name the data: dataset_path for a file, or dataset_name for a Hub dataset."""
    dataset = to_rows(read_dataset(dataset_name, dataset_config, dataset_split, dataset_path), num_examples)
    parser = vf.Parser(extract_fn=extract_code)

    async def passes_tests(completion, info, parser) -> float:
        """1.0 when the reply's program passes every test of the row."""
        program = parser.parse_answer(completion) or ""
        verdict = await run_tests(program, json.loads(info["tests"]), timeout_seconds, memory_mb)
        return 1.0 if verdict["passed"] else 0.0

    def code_block(completion) -> float:
        """Format signal (weight 0): did the reply hold a ```python block?"""
        return 1.0 if _FENCE.search(last_text(completion)) else 0.0

    rubric = vf.Rubric(funcs=[passes_tests, code_block], weights=[1.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system_prompt, parser=parser, rubric=rubric)
