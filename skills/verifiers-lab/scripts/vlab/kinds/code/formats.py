"""How inspect recognises code: a tests column beside the reference program (``code_tests``), with the function
each row's tests call (``entry_points``), or code with no tests (``code``)."""

from __future__ import annotations

from typing import Any

from vlab import catalog
from vlab.kinds.base import Column, Format
from vlab.kinds.code.rows import looks_like_code


def entry_points(rows: list[dict], tests_column: str, answer: str) -> dict[str, Any]:
    """The function each code row's tests call, as the code templates read it (``catalog.entry_point``: from
    the asserts, never a keyword, builtin or module attribute, one the reference defines first; the setup
    column's own definitions aside). {"from": the entry point column or "tests", "examples": [names],
    "not_found": [rows whose asserts call no such function]}; an entry point column is taken as it is."""
    from vlab.inspect.roles import ENTRY_POINT_NAMES, SETUP_NAMES, normalise

    keys = list(dict.fromkeys(k for row in rows for k in row))
    entry = next((k for k in keys if normalise(k) in ENTRY_POINT_NAMES and any(r.get(k) for r in rows)), None)
    if entry is not None:
        names = [str(r.get(entry) or "").strip() for r in rows]
        return {"from": entry, "examples": list(dict.fromkeys(n for n in names if n))[:3]}
    setup = next((k for k in keys if normalise(k) in SETUP_NAMES and k != tests_column), None)
    found, missing = [], []
    for i, row in enumerate(rows):
        tests = row.get(tests_column)
        if tests in (None, "", []) or catalog.call_tests(tests) is None:
            continue  # no tests (counted apart), or stdin/stdout cases: no function is called
        reference = row.get(answer) if answer != tests_column else None
        if isinstance(reference, (list, tuple)):
            reference = reference[0] if reference else None
        name = catalog.entry_point(tests, str(reference) if reference else None, row.get(setup) if setup else None)
        (found if name else missing).append(name or i)
    return {"from": "tests", "examples": list(dict.fromkeys(found))[:3], "not_found": missing}


def _tested(col: Column) -> tuple[float, list[int]]:
    """Rows with tests whose function is found."""
    tests = [row.get(col.tests_column) for row in col.rows]
    unnamed = set(entry_points(col.rows, col.tests_column, col.answer).get("not_found", ()))
    return col.share(lambda i, v: tests[i] not in (None, "", []) and i not in unnamed)


FORMATS = (
    Format(
        "code_tests",
        10,
        lambda col: col.tests_column is not None,
        matched=_tested,
        extraction=lambda col: {
            "entry_points": entry_points(col.rows, col.tests_column, col.answer),
            "extraction": "run the reply's program against the row's tests in a child process "
            "(templates/environments/classic-code, v1-code); the answer column is the reference solution; the "
            "function's name is the entry point column's, else the call in the tests (entry_points); a setup "
            "column (test_setup_code) runs before the tests",
        },
    ),
    Format(
        "code",
        110,
        lambda col: col.results["code"][0] >= 0.5,
        test=lambda col, i, v: looks_like_code(v),
        extraction=lambda col: {
            "extraction": "code must be executed against tests; a string comparison is not a reward"
        },
    ),
)
