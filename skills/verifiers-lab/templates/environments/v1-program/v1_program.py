"""Competitive programming: whole programs on standard input, judged as contest judges do, as a v1 taskset.

Each row is a problem: a statement, stdin/stdout tests and, optionally, an accepted reference program, in
the layouts competitive-programming data comes in: APPS/TACO (question, input_output as
{"inputs": [...], "outputs": [...]}, solutions), CodeContests (description, public_tests / private_tests /
generated_tests as {"input": [...], "output": [...]}, solutions by language, time_limit), LiveCodeBench
(question_content, public_test_cases / private_test_cases, the private ones compressed), or a folder of
problem folders (``problem_rows``: a statement file, tests/input_N.txt + tests/output_N.txt or N.in + N.out,
an optional main.py). The model replies with a Python program (the last ```python block of the reply, or the
whole reply without one). The reward is 1.0 when the program passes every test, else 0.0; `validate` runs
the reference program, so `vf-validate` finds rows whose own solution fails.

Each test runs the program as a process of its own (``v1_program_harness.py`` next to this module): standard
input a file holding the test's input (``sys.stdin``, ``sys.stdin.buffer``, ``os.read(0)``, ``os.fstat(0)``,
``open(0)``, ``exit()``, ``quit()`` all work as under ``python main.py < input``), its own CPU-time limit
(the row's time limit where the data gives one, x TIME_SCALE, else TIME_LIMIT_SECONDS), the memory limit,
no network, nothing to read but its scratch folder and the standard library. A crash or a non-zero exit
fails the test whatever was printed; the output is compared token by token (line endings and trailing
whitespace ignored, whitespace between tokens required), numbers within the statement's tolerance where it
gives one ("absolute or relative error ... 10^{-6}"), or by a checker: the row's CHECKER_FIELDS (Python
source defining ``check(input, output, expected)``), or ``check_output`` below for the rows whose statement
accepts several answers (or whose NEEDS_CHECKER_FIELDS say so): write it for your problems; rows that need
one and have none are listed when the tasks load. Not a security sandbox: for untrusted code at scale use a
hosted sandbox (verifiers v1's sandbox runtimes, Prime sandboxes).

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import os
import pickle
import re
import sys
import weakref
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: the statement, its tests, the accepted reference program. QUESTION_COLUMN and TESTS_COLUMN may
# be lists of columns (a statement in parts joined in order; CodeContests' public_tests, private_tests and
# generated_tests, all run). SOLUTION_COLUMN may be None (test_reward's gold probes need a reference).
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
TESTS_COLUMN = "input_output"
SOLUTION_COLUMN = "solutions"
# Fields of a row read where present: the time limit per test (seconds, "2 seconds", CodeContests'
# {"seconds": 2, "nanos": 0}, or milliseconds where the field says ms), the memory limit (MB, "256 megabytes",
# bytes), a checker (Python source defining check(input, output, expected)), a flag sending the row to
# check_output.
TIME_LIMIT_FIELDS = ("time_limit", "time_limit_seconds", "timeout", "time_limit_ms")
MEMORY_LIMIT_FIELDS = ("memory_limit_bytes", "memory_limit", "memory_limit_mb")
CHECKER_FIELDS = ("checker", "checker_code", "special_judge_code")
TOLERANCE_FIELDS = ("tolerance", "float_tolerance")  # numbers compared within it (else what the statement says)
NEEDS_CHECKER_FIELDS = ("needs_checker", "special_judge", "multiple_answers")

SYSTEM_PROMPT = (
    "Solve the programming problem with a complete Python 3 program: read the input from standard input and "
    "print the answer to standard output, exactly in the format the problem asks for. Only the Python standard "
    "library is available. Reply with the program in one ```python code block."
)
TIME_LIMIT_SECONDS = 2.0  # CPU time per test when the row gives no time limit
TIME_SCALE = 1.0  # the data's time limit is multiplied by this (contest limits were set for other machines)
MEMORY_MB = 1024  # address space per test, or the row's memory limit where larger
PARALLEL = max(8, 4 * (os.cpu_count() or 1))  # programs run at once (most of a run is waiting on a child)
HARNESS = Path(__file__).with_name("v1_program_harness.py")

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.S | re.I)
_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> Semaphore
_threads: list[ThreadPoolExecutor] = []


def check_output(input_text: str, output_text: str, expected_text: str) -> bool | None:
    """Your checker for the rows with several right answers: True (accepted) or False; None falls back to the
    token comparison with the expected output. It runs in the scorer, never in the program's process, and
    gets plain text. Written for your problems, e.g. for "print any permutation p with ...": parse
    ``input_text``, check ``output_text`` against the conditions, return the verdict."""
    return None


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


def question_columns() -> list[str]:
    return [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)


def tests_columns() -> list[str]:
    return [TESTS_COLUMN] if isinstance(TESTS_COLUMN, str) else list(TESTS_COLUMN)


def _unpickled(data: bytes):
    """LiveCodeBench's private tests are pickled JSON text: only plain values load, never a class or function."""

    class NoGlobals(pickle.Unpickler):
        def find_class(self, module, name):
            raise pickle.UnpicklingError(f"{module}.{name} refused")

    return NoGlobals(io.BytesIO(data)).load()


def _decoded(value):
    """A tests cell as data: JSON text parsed; LiveCodeBench's base64(zlib(pickle(JSON))) unpacked."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return value
    if len(text) > 16 and re.fullmatch(r"[A-Za-z0-9+/=\s]+", text):
        try:
            inner = _unpickled(zlib.decompress(base64.b64decode(text)))
            return _decoded(inner)
        except Exception:  # noqa: BLE001 - not that encoding: the text as it is
            return value
    return value


def io_cases(value) -> tuple[list[dict], bool]:
    """(the stdin/stdout cases of one tests cell, whether it holds function-call tests instead): APPS/TACO's
    {"inputs", "outputs"} (a non-empty "fn_name" makes them calls), CodeContests' {"input": [...], "output":
    [...]}, LiveCodeBench's [{"input", "output", "testtype"}] ("functional" is calls), as data or JSON text."""
    value = _decoded(value)
    if isinstance(value, dict):
        if value.get("fn_name"):
            return [], True
        ins = value.get("inputs", value.get("input"))
        outs = value.get("outputs", value.get("output"))
        if isinstance(ins, list) and isinstance(outs, list):
            return [{"input": _text(i), "output": _text(o)} for i, o in zip(ins, outs)], False
        return [], False
    if isinstance(value, list):
        cases, calls = [], False
        for item in value:
            if isinstance(item, dict) and "input" in item and "output" in item:
                if str(item.get("testtype") or "stdin").lower() == "functional":
                    calls = True
                    continue
                cases.append({"input": _text(item["input"]), "output": _text(item["output"])})
        return cases, calls and not cases
    return [], False


def _text(value) -> str:
    """A test's input or output as text (APPS keeps some as lists of lines)."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value) + "\n"
    return "" if value is None else str(value)


def _field(row: dict, names: tuple[str, ...]):
    for name in names:
        if row.get(name) not in (None, "", [], {}):
            return name, row[name]
    return None, None


def _seconds(name: str | None, value) -> float | None:
    """A time limit in seconds: a number (ms when the field name says so), "2 seconds", "1000 ms",
    {"seconds": 2, "nanos": 0}."""
    if isinstance(value, dict):
        total = float(value.get("seconds") or 0) + float(value.get("nanos") or 0) / 1e9
        return total or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / (1000.0 if name and name.endswith("_ms") else 1.0) or None
    m = re.search(r"(\d+(?:\.\d+)?)\s*(ms|millisecond|s\b|sec|second)?", str(value or ""), re.I)
    if not m:
        return None
    return float(m.group(1)) / (1000.0 if (m.group(2) or "").lower().startswith("m") else 1.0) or None


def _megabytes(name: str | None, value) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value / (1 << 20)) if name and name.endswith("_bytes") or value > 1 << 20 else int(value)
    m = re.search(r"(\d+(?:\.\d+)?)\s*(k|m|g)?", str(value or ""), re.I)
    if not m:
        return None
    scale = {"k": 1 / 1024, "m": 1, "g": 1024}.get((m.group(2) or "m").lower(), 1)
    return int(float(m.group(1)) * scale) or None


# The statement says the output is compared within a tolerance, or that several answers are right.
_TOLERANCE = re.compile(
    r"(absolute|relative)\s+(?:or\s+(?:absolute|relative)\s+)?error[^.]{0,120}?"
    r"(?:10\s*\^\s*\{?\s*[-−]\s*(\d+)\s*\}?|1e\s*[-−]\s*(\d+)|10\s*[-−]\s*(\d+)\b|(0\.0*1)\b)",
    re.I | re.S,
)
_ERROR_WORDS = re.compile(r"(absolute|relative)\s+(?:or\s+(?:absolute|relative)\s+)?error", re.I)
_SEVERAL = re.compile(
    r"(if there are (several|multiple|many) (possible |correct |valid |optimal )?(answers|solutions|ways)"
    r"|(print|output) any (of them|one of them|valid|correct|such)|you (can|may) (print|output) any"
    r"|any (valid|correct) (answer|solution) (will be|is) accepted|any of them will be accepted)",
    re.I,
)


def statement_tolerance(text: str) -> float | None:
    """The tolerance a statement gives numbers ("absolute or relative error does not exceed 10^{-6}"), or None."""
    m = _TOLERANCE.search(text or "")
    if m:
        digits = m.group(2) or m.group(3) or m.group(4)
        return 10.0 ** -int(digits) if digits else float(m.group(5))
    return 1e-6 if _ERROR_WORDS.search(text or "") else None


def several_answers(text: str) -> bool:
    """Does the statement accept several right outputs ("If there are multiple answers, print any of them")?"""
    return bool(_SEVERAL.search(text or ""))


def row_spec(row: dict) -> dict | None:
    """How to judge a row: {"mode": "io", "cases", "time_limit", "memory_mb", "tolerance", "checker",
    "needs_checker"}; None for a row without stdin/stdout tests (function-call tests: the code template's)."""
    cases, calls = [], False
    for column in tests_columns():
        found, is_calls = io_cases(row.get(column))
        cases += found
        calls = calls or is_calls
    if not cases:
        return None
    name, value = _field(row, TIME_LIMIT_FIELDS)
    given = _seconds(name, value)
    limit = round(given * TIME_SCALE, 3) if given else TIME_LIMIT_SECONDS
    name, value = _field(row, MEMORY_LIMIT_FIELDS)
    memory = max(MEMORY_MB, _megabytes(name, value) or 0)
    statement = prompt_text(row)
    spec = {"mode": "io", "cases": cases, "time_limit": limit, "memory_mb": memory}
    _, given_tolerance = _field(row, TOLERANCE_FIELDS)
    tolerance = float(given_tolerance) if given_tolerance else statement_tolerance(statement)
    if tolerance:
        spec["tolerance"] = tolerance
    _, checker = _field(row, CHECKER_FIELDS)
    _, flagged = _field(row, NEEDS_CHECKER_FIELDS)
    if checker:
        spec["checker"] = str(checker)
    elif flagged or several_answers(statement):
        spec["checker"] = "custom"  # check_output decides; unwritten, the token comparison does
        spec["needs_checker"] = True
    return spec


def prompt_text(row: dict) -> str:
    return "\n\n".join(str(row[c]) for c in question_columns() if row.get(c) is not None and str(row[c]).strip())


def task_prompt(row: dict, spec: dict) -> str:
    """The statement, then how input and output work and the limits the judge applies."""
    limits = f"Time limit: {spec['time_limit']:g} s of CPU time per test. Memory limit: {spec['memory_mb']} MB."
    return (
        prompt_text(row).rstrip() + "\n\nYour program reads the input from standard input and prints the answer to "
        "standard output (Python 3, standard library only). " + limits
    )


def reference_program(row: dict) -> str:
    """The first accepted Python 3 reference: a program, a list of them (APPS/TACO, also as JSON text), or
    CodeContests' {"language": [...], "solution": [...]} (language 3 is Python 3)."""
    if not SOLUTION_COLUMN or SOLUTION_COLUMN in tests_columns() or row.get(SOLUTION_COLUMN) in (None, "", [], {}):
        return ""  # no reference column (inspect names the tests column then: the tests are all there is)
    solution = row[SOLUTION_COLUMN]
    if isinstance(solution, str) and solution.lstrip()[:1] in ("[", "{"):
        try:
            solution = json.loads(solution)
        except ValueError:
            pass
    if isinstance(solution, dict):
        languages, programs = solution.get("language") or [], solution.get("solution") or []
        python3 = [p for lang, p in zip(languages, programs) if str(lang).lower() in ("3", "python3", "python 3")]
        solution = python3 or ([] if languages else programs)
    if isinstance(solution, (list, tuple)):
        solution = next((s for s in solution if isinstance(s, str) and s.strip()), "")
    return str(solution or "")


# -- a folder of problem folders ---------------------------------------------------------------

STATEMENT_FILES = (
    "PROBLEM.md",
    "problem.md",
    "statement.md",
    "README.md",
    "problem.txt",
    "statement.txt",
    "question.txt",
    "problem_statement/problem.en.md",  # the ICPC problem package format (Kattis, DOMjudge)
    "statement/problem.en.md",
    "problem_statement/problem.en.tex",
    "statement/problem.en.tex",
    "problem_statement/problem.md",
    "problem_statement/problem.tex",
)
REFERENCE_FILES = ("main.py", "solution.py", "sol.py", "reference.py", "accepted.py", "answer.py")
TEST_FOLDERS = ("tests", "test", "testcases", "data", "cases", "examples", "samples", ".")
# In an ICPC problem package the tests are data/sample/*.in + *.ans, then data/secret/**, and the accepted programs
# submissions/accepted/*.py; problem.yaml says "validation: custom" where a checker judges.
PACKAGE_TESTS = ("data/sample", "data/secret")
_INPUT_NAME = re.compile(r"^(?:input[_-]?(\w+)\.txt|(\w+)\.in|in[_-]?(\w+)\.txt|(\w+)\.input)$", re.I)


def _outputs_for(key: str, folder: Path) -> Path | None:
    for name in (f"output_{key}.txt", f"output-{key}.txt", f"output{key}.txt", f"{key}.out", f"{key}.ans"):
        for found in (folder / name, folder / name.lower()):
            if found.is_file():
                return found
    for name in (f"out_{key}.txt", f"out{key}.txt", f"{key}.output", f"{key}.a"):
        if (folder / name).is_file():
            return folder / name
    return None


def _sort_key(key: str):
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def problem_tests(problem: Path) -> list[dict]:
    """A problem folder's tests, in order: tests/input_N.txt with tests/output_N.txt (N.in with N.out or N.ans,
    in_N.txt with out_N.txt; in tests/, test/, testcases/, data/ or the folder itself), or input/ and output/
    folders of files with the same names. Windows line endings read as \\n."""
    found: dict[str, tuple[Path, Path]] = {}
    for name in PACKAGE_TESTS:  # an ICPC problem package: every .in with its .ans, sample first, subfolders too
        for path in sorted((problem / name).rglob("*.in")) if (problem / name).is_dir() else []:
            answer = path.with_suffix(".ans")
            if answer.is_file():
                found[f"{name}/{path.relative_to(problem / name).as_posix()}"] = (path, answer)
    if found:
        return [{"input": _read_text(i), "output": _read_text(o)} for i, o in found.values()]
    for name in TEST_FOLDERS:
        folder = problem / name
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            m = _INPUT_NAME.match(path.name)
            if path.is_file() and m:
                key = next(g for g in m.groups() if g is not None)
                answer = _outputs_for(key, folder)
                if answer is not None:
                    found.setdefault(f"{name}/{key}", (path, answer))
        if found:
            break
    for ins, outs in (("input", "output"), ("inputs", "outputs"), ("in", "out")):
        if not found and (problem / ins).is_dir() and (problem / outs).is_dir():
            for path in sorted((problem / ins).iterdir()):
                answer = problem / outs / path.name
                if path.is_file() and answer.is_file():
                    found[path.stem] = (path, answer)
    keys = sorted(found, key=lambda k: _sort_key(k.rsplit("/", 1)[-1]))
    return [{"input": _read_text(found[k][0]), "output": _read_text(found[k][1])} for k in keys]


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")


def _package_reference(problem: Path) -> Path | None:
    """An ICPC problem package's accepted Python 3 program (one named py3 first; one that parses as Python 3)."""
    folder = problem / "submissions" / "accepted"
    programs = sorted(folder.rglob("*.py"), key=lambda p: ("py3" not in p.name, p.name)) if folder.is_dir() else []
    for path in programs:
        try:
            compile(_read_text(path), str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue  # Python 2
        return path
    return None


def _package_limits(problem: Path) -> dict:
    """What an ICPC problem package's problem.yaml (or DOMjudge's .timelimit) says of the judging: a checker
    ("validation: custom"), a float tolerance (validator_flags), the time limit, the memory limit."""
    out = {}
    text = (problem / "problem.yaml").read_text(encoding="utf-8") if (problem / "problem.yaml").is_file() else ""
    yaml = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    if re.search(r"^validation:\s*custom", yaml, re.M):
        out["special_judge"] = True
    m = re.search(r"float_(?:relative_|absolute_)?tolerance\s+([0-9.eE+-]+)", yaml)
    if m:
        out["float_tolerance"] = float(m.group(1))
    m = re.search(r"^\s+time_limit:\s*([0-9.]+)", yaml, re.M)
    if m:
        out["time_limit"] = float(m.group(1))
    m = re.search(r"^\s+memory:\s*([0-9]+)", yaml, re.M)
    if m:
        out["memory_limit_mb"] = int(m.group(1))
    if "time_limit" not in out and (problem / ".timelimit").is_file():
        try:
            out["time_limit"] = float((problem / ".timelimit").read_text().strip())
        except ValueError:
            pass
    return out


def _limits_file(problem: Path) -> dict:
    for name in ("metadata.json", "problem.json", "config.json", "limits.json"):
        path = problem / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if isinstance(data, dict):
                return {k: v for k, v in data.items() if k in TIME_LIMIT_FIELDS + MEMORY_LIMIT_FIELDS}
    return {}


def problem_row(problem: Path) -> dict | None:
    """One problem folder as a row: {"id", "question", "input_output": {"inputs", "outputs"}, "solutions"} and
    the limits a metadata.json / problem.json gives; None for a folder with no statement or no tests. An APPS
    folder (question.txt, input_output.json, solutions.json) reads the same way."""
    statement = next((problem / n for n in STATEMENT_FILES if (problem / n).is_file()), None)
    if statement is None:
        return None
    tests = problem_tests(problem)
    if not tests and (problem / "input_output.json").is_file():
        tests, _ = io_cases((problem / "input_output.json").read_text(encoding="utf-8"))
    if not tests:
        return None
    reference = next((problem / n for n in REFERENCE_FILES if (problem / n).is_file()), None)
    reference = reference or _package_reference(problem)
    solutions = _read_text(reference) if reference else ""
    if not solutions and (problem / "solutions.json").is_file():
        solutions = (problem / "solutions.json").read_text(encoding="utf-8")
    row = {
        "id": problem.name,
        "question": _read_text(statement),
        "input_output": {"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests]},
        "solutions": solutions,
    }
    return row | _package_limits(problem) | _limits_file(problem)


def problem_rows(folder: Path) -> list[dict]:
    """Every problem folder directly inside ``folder`` (sorted by name) that has a statement and tests."""
    rows = []
    for problem in sorted(p for p in Path(folder).iterdir() if p.is_dir() and not p.name.startswith(".")):
        row = problem_row(problem)
        if row is not None:
            rows.append(row)
    return rows


# -- running the tests ---------------------------------------------------------------------


def harness():
    """The harness module beside this one (loaded once): it runs each test in a child and judges the output."""
    name = HARNESS.stem
    if name not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(name, HARNESS)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


async def run_tests(program: str, spec: dict, memory_mb: int = MEMORY_MB) -> dict:
    """{"passed": bool, "reason": str}: every test of the row, each in a limited child process, judged here."""
    if not program.strip():
        return {"passed": False, "reason": "no code"}
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(PARALLEL)
    async with _slots[loop]:
        if not _threads:  # one thread per program run at once: it waits on the child
            _threads.append(ThreadPoolExecutor(PARALLEL, thread_name_prefix="program-tests"))
        limit = float(spec.get("time_limit") or TIME_LIMIT_SECONDS)
        return await loop.run_in_executor(
            _threads[0],
            harness().score,
            program,
            spec,
            limit,
            max(memory_mb, int(spec.get("memory_mb") or 0)),
            check_output,
        )


def unchecked_rows(specs: list[tuple[str, dict]]) -> list[str]:
    """The ids of the rows that need a checker (several right outputs) and have only check_output, while it is
    still the template's (it decides nothing): those rows compare tokens, so a right program printing another
    valid answer scores 0. Logged when the tasks load."""
    try:
        unwritten = check_output("", "", "") is None
    except Exception:  # noqa: BLE001 - a checker of your own that wants real text: written
        unwritten = False
    return [row_id for row_id, spec in specs if spec.get("needs_checker")] if unwritten else []


def _tell_unchecked(specs: list[tuple[str, dict]], skipped: list[str]) -> None:
    unchecked = unchecked_rows(specs)
    if unchecked:
        shown = ", ".join(unchecked[:10]) + (" ..." if len(unchecked) > 10 else "")
        logging.getLogger(__name__).warning(
            f"{len(unchecked)} of {len(specs)} problems accept several right outputs and no checker is written "
            f"({shown}): they compare tokens with the expected output; write check_output for them"
        )
    if skipped:
        logging.getLogger(__name__).warning(
            f"{len(skipped)} rows have function-call tests or none, not stdin/stdout ones, and were left out "
            f"({', '.join(skipped[:10])}): use the code template for them"
        )


# -- the taskset ------------------------------------------------------------------------------


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_program_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_program_data")
NO_DATASET = (
    "no dataset named: set dataset_path (a .jsonl/.json/.csv/.parquet file or a folder of problem folders; a "
    "relative path is also looked up in the package's data/ folder) or dataset_name (a Hub dataset). This "
    "environment never picks one for you."
)
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def data_file(path: str) -> str:
    """A dataset file or folder: the path as given (absolute, or relative to the current folder), else the
    same relative path in the package's data folder (data/train.jsonl and train.jsonl both name data/train.jsonl)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return str(given)
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    for folder in DATA_DIRS:
        if (folder / inside).exists():
            return str(folder / inside)
    looked = ", ".join(str(p) for p in (Path.cwd() / given, *(folder / inside for folder in DATA_DIRS)))
    raise FileNotFoundError(f"dataset_path {path!r} not found (looked at {looked})")


def read_rows(config: V1ProgramConfig) -> Iterator[dict]:
    """Rows of a local file or folder of problem folders if dataset_path is set (.jsonl/.json/.csv/.parquet, text
    ones also .gz; see data_file), else of the Hub dataset dataset_name. Neither is an error: no dataset is ever
    picked for the user."""
    from datasets import load_dataset  # only needed when tasks are loaded

    if config.dataset_path and Path(data_file(config.dataset_path)).is_dir():
        rows = problem_rows(Path(data_file(config.dataset_path)))
        if not rows:
            raise ValueError(
                f"{config.dataset_path}: no problem folder (a statement file such as PROBLEM.md and tests such as "
                "tests/input_1.txt with tests/output_1.txt) in this folder"
            )
        yield from rows[: config.num_examples] if config.num_examples > 0 else rows
        return
    if config.dataset_path:
        builder = _BUILDERS.get(Path(Path(config.dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(
                f"dataset_path must be a folder of problem folders or end in .jsonl, .json, .csv or .parquet "
                f"(got {config.dataset_path!r})"
            )
        dataset = load_dataset(builder, data_files=data_file(config.dataset_path), split="train")
    elif config.dataset_name:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    else:
        raise ValueError(NO_DATASET)
    missing = [c for c in (*question_columns(), *tests_columns()) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1ProgramData(vf.TaskData):
    tests: str
    """How to judge the row (JSON: mode "io", its cases, time limit, memory, tolerance, checker)."""
    answer: str = ""
    """The reference program ('' when the dataset has none)."""


class V1ProgramTaskConfig(vf.TaskConfig):
    memory_mb: int = MEMORY_MB


class V1ProgramTask(vf.Task[V1ProgramData, vf.State, V1ProgramTaskConfig]):
    @vf.reward(weight=1.0)
    async def passes_tests(self, trace: vf.Trace) -> float:
        """1.0 when the reply's program passes every test of the row."""
        program = extract_code(trace.last_reply)
        verdict = await run_tests(program, json.loads(self.data.tests), self.config.memory_mb)
        return 1.0 if verdict["passed"] else 0.0

    @vf.metric
    async def code_block(self, trace: vf.Trace) -> float:
        """Did the reply hold a ```python block?"""
        return 1.0 if _FENCE.search(trace.last_reply or "") else 0.0

    async def validate(self, runtime) -> bool:
        """The reference program, when there is one, must pass the tests."""
        if not self.data.answer:
            return True
        verdict = await run_tests(self.data.answer, json.loads(self.data.tests), self.config.memory_mb)
        return verdict["passed"]


class V1ProgramConfig(vf.TasksetConfig):
    task: V1ProgramTaskConfig = V1ProgramTaskConfig()
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "test"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz) or a folder of problem folders: a path, or one in
    the package's data/ folder; wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1ProgramTaskset(vf.Taskset[V1ProgramTask, V1ProgramConfig]):
    def load(self) -> Iterator[V1ProgramTask]:
        specs, skipped, tasks = [], [], []
        for i, row in enumerate(read_rows(self.config)):
            row_id = str(row.get("task_id", row.get("id", row.get("name", i))))
            spec = row_spec(row)
            if spec is None:
                skipped.append(row_id)
                continue
            specs.append((row_id, spec))
            tasks.append(
                V1ProgramTask(
                    V1ProgramData(
                        id=row_id,
                        prompt=task_prompt(row, spec),
                        system_prompt=SYSTEM_PROMPT,
                        tests=json.dumps(spec),
                        answer=reference_program(row),
                    ),
                    self.config.task,
                )
            )
        _tell_unchecked(specs, skipped)
        yield from tasks


__all__ = ["V1ProgramTaskset"]
