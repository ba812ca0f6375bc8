"""How inspect recognises whole programs on standard input: a tests column (or several: CodeContests' public,
private and generated tests) holding stdin/stdout cases (``program_io``), with what the judging needs said: the
time limit per test and where it comes from, the rows whose statement gives a tolerance for numbers or accepts
several right outputs, the reference programs' length and the completion budget it asks for."""

from __future__ import annotations

import math
import re
from typing import Any

from vlab.kinds.base import Column, Format
from vlab.kinds.program.rows import (
    STATEMENT_FIELDS,
    io_cases,
    rules,
    several_answers,
    statement_tolerance,
)

TESTS_SHARE = 0.5  # rows whose tests are stdin/stdout cases, for the column to be programs
CHARS_PER_TOKEN = 3.2  # Python source, as tokenizers cut it
# The completion budget: room for the longest usual reference (the 90th percentile) twice over (a model writes
# more than a terse accepted solution, and says what it does), plus a paragraph of reasoning; in steps of 512.
BUDGET_ROOM, BUDGET_STEP, BUDGET_MIN, BUDGET_MAX = 512, 512, 1024, 16384


def _cases(col: Column, i: int) -> tuple[list, bool]:
    row = col.rows[i]
    names = [col.tests_column] + [k for k in row if k != col.tests_column and _test_name(k)]
    cases, calls = [], False
    for name in names:
        found, is_calls = io_cases(row.get(name))
        cases += found
        calls = calls or is_calls
    return cases, calls


def _test_name(name: str) -> bool:
    return re.sub(r"[\s_\-.]+", "", str(name).lower()) in TEST_GROUP


# The columns one problem's tests are spread over (CodeContests, LiveCodeBench), normalised as inspect names them.
TEST_GROUP = ("publictests", "privatetests", "generatedtests", "publictestcases", "privatetestcases", "hiddentests")


def _is_program(col: Column, i: int, value: Any) -> bool:
    cases, calls = _cases(col, i)
    return bool(cases) and not calls


def completion_budget(lengths: list[int]) -> int | None:
    """max_completion_tokens for programs as long as these references (characters)."""
    if not lengths:
        return None
    ordered = sorted(lengths)
    p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]
    tokens = 2 * p90 / CHARS_PER_TOKEN + BUDGET_ROOM
    return int(min(BUDGET_MAX, max(BUDGET_MIN, math.ceil(tokens / BUDGET_STEP) * BUDGET_STEP)))


def _reference(row: dict, answer: str) -> str:
    value = row.get(answer)
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict):
        langs, programs = value.get("language") or [], value.get("solution") or []
        value = [p for lang, p in zip(langs, programs) if str(lang).lower() in ("3", "python3", "python 3")]
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    return value if isinstance(value, str) else ""


def _extraction(col: Column) -> dict[str, Any]:
    statements = []
    for row in col.rows:
        text = next((row[k] for k in STATEMENT_FIELDS if isinstance(row.get(k), str) and row[k].strip()), "")
        statements.append(text)
    tolerance = [i for i, s in enumerate(statements) if statement_tolerance(s)]
    several = [i for i, s in enumerate(statements) if several_answers(s)]
    counts = [len(_cases(col, i)[0]) for i in range(col.n)]
    refs = [_reference(row, col.answer) for row in col.rows] if col.answer != col.tests_column else []
    lengths = [len(r) for r in refs if r.strip()]
    time_fields = [f for f in rules()["TIME_LIMIT_FIELDS"] if any(r.get(f) not in (None, "") for r in col.rows)]
    out: dict[str, Any] = {
        "extraction": "run the reply's program once per test as a process of its own (standard input a file; "
        "templates/environments/classic-program, v1-program): its own CPU-time limit and the memory limit, a crash "
        "or non-zero exit fails the test, the output compared token by token (numbers within the statement's "
        "tolerance; a checker for problems with several right answers); the answer column is the reference program",
        "tests": {
            "rows_with_tests": sum(1 for c in counts if c),
            "tests_per_row": round(sum(counts) / max(1, sum(1 for c in counts if c)), 1),
        },
        "time_limit": {"field": time_fields[0] if time_fields else None, "default_seconds": 2.0},
        "rows_with_a_tolerance": tolerance[:50],
        "rows_with_several_answers": several[:50],
    }
    if several:
        out["checker"] = (
            f"{len(several)} of {col.n} rows accept several right outputs: the templates send them to check_output, "
            "which you write (until then they compare tokens and a right program printing another answer scores 0)"
        )
    if lengths:
        out["references"] = {
            "rows": len(lengths),
            "mean_chars": round(sum(lengths) / len(lengths)),
            "max_chars": max(lengths),
        }
        out["max_completion_tokens"] = completion_budget(lengths)
    return out


FORMATS = (
    Format(
        "program_io",
        5,
        lambda col: col.tests_column is not None and col.results["program_io"][0] >= TESTS_SHARE,
        test=lambda col, i, v: _is_program(col, i, v),
        extraction=_extraction,
    ),
)
