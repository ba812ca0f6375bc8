"""The program checks read from every row without scoring: the prompt says how input and output work
(``program_prompt``), the tests are not all shown in the prompt (``program_tests_in_prompt``: a program
copying the examples would pass), the rows whose statement accepts several right outputs have a checker
(``program_checker``), and the same problem is not several rows (``program_duplicates``)."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from vlab.kinds.program.rows import several_answers, shown_in, statement, statement_tolerance, tokens
from vlab.kinds.rows import row_fields
from vlab.reward.prompts import report_rows

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.kinds.base import RowKind

_STDIN = re.compile(r"standard input|stdin|sys\.stdin|input\(\)|reads? (the )?input", re.I)
_STDOUT = re.compile(r"standard output|stdout|print", re.I)


def prompt_text(row: Row) -> str:
    return "\n".join(str(m.get("content") or "") for m in row.prompt if isinstance(m, dict))


def check_rows(result: Result, rows: list[tuple[Row, RowKind]]) -> None:
    _check_prompt(result, rows)
    _check_tests_shown(result, rows)
    _check_checker(result, rows)
    _check_duplicates(result, rows)


def _check_prompt(result: Result, rows) -> None:
    bad = []
    for row, _ in rows:
        text = prompt_text(row)
        if not (_STDIN.search(text) and _STDOUT.search(text)):
            why = "the prompt never says the program reads standard input and prints to standard output"
            bad.append((row, "warn", "input and output never named", why))
    report_rows(
        result,
        "program_prompt",
        bad,
        len(rows),
        "the prompt says the program reads standard input and prints to standard output",
        "say in the prompt (or system prompt) that the program reads standard input and prints the answer to "
        "standard output, with the time limit (the program templates add it)",
    )


def _check_tests_shown(result: Result, rows) -> None:
    """A row whose every test (input and output) is written in its prompt: a program printing the prompt's
    outputs for the prompt's inputs passes every test. Rows with one short test are left out (its text is found
    anywhere)."""
    bad = []
    for row, kind in rows:
        cases = kind.tests["cases"]
        if len(cases) < 2 and all(len(tokens(c.get("input", ""))) < 3 for c in cases):
            continue
        text = prompt_text(row)
        if cases and all(shown_in(c.get("input", ""), text) and shown_in(c.get("output", ""), text) for c in cases):
            why = f"all {len(cases)} tests the reward runs are written in the prompt"
            bad.append((row, "fail", "every test shown in the prompt", why))
    if bad:
        report_rows(
            result,
            "program_tests_in_prompt",
            bad,
            len(rows),
            "",
            "keep hidden tests out of the prompt (show the statement's examples only), and run tests beyond them",
        )
    else:
        result.passed("program_tests_in_prompt", f"no row shows all of its tests in the prompt ({len(rows)} rows)")


def _check_checker(result: Result, rows) -> None:
    """Rows whose statement accepts several right outputs (or whose spec says so) and that a token comparison
    judges: a right program printing another valid answer scores 0. A warning (the reward is stricter than the
    statement), every row listed; the rows with a tolerance for numbers are probed (``program_tolerance``)."""
    bad, floats = [], 0
    for row, kind in rows:
        spec = kind.tests.get("spec") or {}
        text = statement(row_fields(row), prompt_text(row))
        if statement_tolerance(text):
            floats += 1
        needs = spec.get("needs_checker") or several_answers(text)
        own = spec.get("checker") not in (None, "", "custom")
        if needs and not own:
            routed = " (the template sends it to check_output: write it)" if spec.get("checker") == "custom" else ""
            why = "the statement accepts several right outputs and no checker judges them" + routed
            bad.append((row, "warn", "several right outputs, no checker", why))
    result.data.setdefault("program", {}).update(
        {"rows_with_several_answers": len(bad), "rows_with_a_tolerance": floats}
    )
    if not bad:
        result.passed("program_checker", f"no row accepts several right outputs without a checker ({len(rows)} rows)")
        return
    result.data.setdefault("row_findings", {})["program_checker"] = [
        {"example_id": row.index, "status": "warn", "problem": why} for row, _, _, why in bad
    ]
    ids = ", ".join(str(row.index) for row, *_ in bad[:50]) + (" ..." if len(bad) > 50 else "")
    result.warn(
        "program_checker",
        f"{len(bad)} of {len(rows)} rows accept several right outputs (their statement or data says so) and no checker of "
        f"their own judges them (example_id {ids}; e.g. {bad[0][3]}): compared token by token, a right program "
        "printing another valid answer scores 0",
        "write check_output in the environment module (the program templates route these rows to it), or give the "
        "rows a checker field (Python defining check(input, output, expected)); else drop them",
    )


def _check_duplicates(result: Result, rows) -> None:
    """The same problem on several rows (the same statement, or the same tests): a warning naming them."""
    seen: dict[str, list[int]] = {}
    for row, kind in rows:
        text = " ".join(tokens(statement(row_fields(row), prompt_text(row))))[:4000].lower()
        cases = kind.tests["cases"][:20]
        tests = "\x00".join(
            " ".join(tokens(c.get("input", ""))) + "\x01" + " ".join(tokens(c.get("output", ""))) for c in cases
        )
        for key in (f"s:{text}" if len(text) > 40 else None, f"t:{hashlib.sha1(tests.encode()).hexdigest()}"):
            if key:
                seen.setdefault(key, []).append(row.index)
    groups = sorted({tuple(dict.fromkeys(v)) for v in seen.values() if len(set(v)) > 1})
    if not groups:
        result.passed("program_duplicates", f"no problem appears twice ({len(rows)} rows)")
        return
    shown = "; ".join("example_id " + ", ".join(map(str, g)) for g in groups[:10])
    result.data.setdefault("program", {})["duplicates"] = [list(g) for g in groups]
    result.warn(
        "program_duplicates",
        f"{len(groups)} problem(s) appear on several rows (the same statement or the same tests): {shown}; "
        "a duplicate weighs its problem twice in training and leaks it from a training split into an eval split",
        "keep one row per problem",
    )
