"""A program row's own data: its stdin/stdout tests in every layout competitive-programming data comes in, what
its statement says about the judging (a tolerance for numbers, several right answers), its reference program, and
a folder of problem folders read as rows.

The rules live in the program templates (``v1-program``: the environment must read the data exactly as inspect
and test_reward do) and are run from there (``core.templatecode``): ``io_cases`` (APPS/TACO ``input_output``,
CodeContests' ``{"input": [...], "output": [...]}``, LiveCodeBench's lists, its compressed private tests read
without running anything), ``statement_tolerance``, ``several_answers``, ``problem_rows``."""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from vlab.core.templatecode import run_template_definitions

TEMPLATE = ("v1-program", "v1_program.py")
_RULES = (
    "_unpickled",
    "_decoded",
    "_text",
    "io_cases",
    "_TOLERANCE",
    "_ERROR_WORDS",
    "_SEVERAL",
    "statement_tolerance",
    "several_answers",
    "TIME_LIMIT_FIELDS",
    "MEMORY_LIMIT_FIELDS",
    "STATEMENT_FILES",
    "REFERENCE_FILES",
    "TEST_FOLDERS",
    "_INPUT_NAME",
    "PACKAGE_TESTS",
    "_outputs_for",
    "_sort_key",
    "problem_tests",
    "_read_text",
    "_package_reference",
    "_package_limits",
    "_limits_file",
    "problem_row",
    "problem_rows",
)
# Where a row keeps its tests: the templates' spec ("tests", info's "tests"), APPS/TACO, CodeContests,
# LiveCodeBench, and the usual names.
TESTS_FIELDS = (
    "tests",
    "input_output",
    "public_tests",
    "private_tests",
    "generated_tests",
    "public_test_cases",
    "private_test_cases",
    "test_cases",
    "test",
)
# The statement's field, for the checks that read it (the row's prompt when none).
STATEMENT_FIELDS = ("question", "description", "question_content", "problem", "statement", "prompt")
PYTHON = re.compile(r"^\s*(import |from \S+ import |def |class |print\(|for |while |if |[A-Za-z_][\w, ]*=)", re.M)


@cache
def rules() -> dict[str, Any]:
    """The program templates' own reading rules (see the module's docstring), run here."""
    modules = {"base64": base64, "io": io, "json": json, "pickle": pickle, "re": re, "zlib": zlib, "Path": Path}
    return run_template_definitions(*TEMPLATE, _RULES, modules)


def io_cases(value: Any) -> tuple[list[dict], bool]:
    """(the stdin/stdout cases a tests cell holds, whether it holds function-call tests instead)."""
    return rules()["io_cases"](value)


def statement_tolerance(text: str) -> float | None:
    return rules()["statement_tolerance"](text)


def several_answers(text: str) -> bool:
    return rules()["several_answers"](text)


def problem_rows(folder: Path) -> list[dict]:
    return rules()["problem_rows"](folder)


def problem_row(folder: Path) -> dict | None:
    return rules()["problem_row"](folder)


def statement_files() -> tuple[str, ...]:
    return rules()["STATEMENT_FILES"]


def spec_of(value: Any) -> dict | None:
    """The templates' judging spec ({"mode": "io", "cases": [...], ...}) when a tests value is one."""
    if isinstance(value, str) and value.strip()[:1] == "{":
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, dict) and value.get("mode") == "io" and isinstance(value.get("cases"), list):
        return value
    return None


def program_tests(fields: dict[str, Any]) -> dict | None:
    """A row's stdin/stdout tests: {"cases": [{"input", "output"}], "spec": the templates' spec or None,
    "fields": where they were read}; None for a row without them (or with function-call tests)."""
    for name in TESTS_FIELDS:
        spec = spec_of(fields.get(name))
        if spec is not None:
            cases = [c for c in spec["cases"] if isinstance(c, dict)]
            return {"cases": cases, "spec": spec, "fields": [name]} if cases else None
    cases, names = [], []
    for name in TESTS_FIELDS:
        value = fields.get(name)
        if value in (None, "", [], {}):
            continue
        found, calls = io_cases(value)
        if calls:
            return None
        if found:
            cases += found
            names.append(name)
    return {"cases": cases, "spec": None, "fields": names} if cases else None


def statement(fields: dict[str, Any], prompt: str) -> str:
    for name in STATEMENT_FIELDS:
        if isinstance(fields.get(name), str) and fields[name].strip():
            return fields[name]
    return prompt


def looks_like_program(text: Any) -> bool:
    return isinstance(text, str) and bool(PYTHON.search(text))


def tokens(text: str) -> list[str]:
    return str(text).split()


def shown_in(text: str, haystack: str) -> bool:
    """Is ``text`` (as tokens) written in ``haystack`` (as tokens)?"""
    needle = " ".join(tokens(text))
    return bool(needle) and f" {needle} " in f" {' '.join(tokens(haystack))} "
