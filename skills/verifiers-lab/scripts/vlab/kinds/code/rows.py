"""A code row's own fields: its tests, the function they call (``code_entry``) and the code run before them
(``setup``); and what a code answer looks like (``looks_like_code``)."""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

from vlab import catalog
from vlab.kinds.rows import field

TESTS_FIELDS = ("tests", "test", "test_list", "test_cases", "input_output", "unit_tests")
ENTRY_FIELDS = ("entry_point", "function_name", "fn_name")
SETUP_FIELDS = ("test_setup_code", "setup_code", "test_setup", "test_imports", "imports", "setup")
_CODE = re.compile(
    r"```|^\s*(def |class |import |from \S+ import |#include|public |function |fn |SELECT )|\breturn\b.*[;)]?$", re.M
)


def looks_like_code(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value.strip() and bool(_CODE.search(value))


def code_entry(
    given: str | None, tests: Any, gold: str | None, setup: str | None = None
) -> tuple[str | None, str | None]:
    """(the function a code row's tests call, where it was read): the entry point column's name unless it is
    a keyword or a builtin the reference does not define; else the call in the tests (``catalog.entry_point``,
    the templates' rule); else the reference's first function, a guess ("reference")."""
    if given and given.isidentifier() and not keyword.iskeyword(given):
        if not catalog.bad_entry_name(given) or re.search(rf"^\s*def\s+{re.escape(given)}\s*\(", gold or "", re.M):
            return given, "column"
    derived = catalog.entry_point(tests, gold, setup) if tests is not None else None
    if derived:
        return derived, "tests"
    guess = _defined_name(gold)
    return (guess, "reference") if guess else (None, None)


def setup_code(fields: dict[str, Any], tests: Any) -> tuple[str | None, str]:
    """(the field, the code) a code row runs before its tests: the code templates' spec "setup", else a setup
    column (test_setup_code, setup_code, test_imports...)."""
    spec = tests
    if isinstance(spec, str) and spec.strip()[:1] == "{":
        try:
            spec = json.loads(spec)
        except ValueError:
            spec = None
    if isinstance(spec, dict) and str(spec.get("setup") or "").strip():
        return None, str(spec["setup"]).strip()
    found = field(fields, SETUP_FIELDS)
    if found is None:
        return None, ""
    value = found[1]
    if isinstance(value, (list, tuple)):
        value = "\n".join(str(v) for v in value)
    return found[0], str(value).strip()


def _defined_name(code: str | None) -> str | None:
    m = re.search(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", code or "", re.M)
    return m.group(1) if m else None
