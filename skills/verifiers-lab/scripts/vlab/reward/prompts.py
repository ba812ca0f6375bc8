"""Checks on what the prompt shows: a model can only earn the reward if the prompt carries what it needs.

Read from every row (no scoring): a passage or body the row carries (``context``, ``passage``, ``body``...)
appears in the prompt (``prompt_columns``). A kind's own prompt checks (the options of a multiple-choice row,
the function a code row's tests call) are its unit's (``vlab.kinds``), reported the same way (``report_rows``).
"""

from __future__ import annotations

from vlab.core.result import Result
from vlab.env import Row
from vlab.kinds.rows import CONTEXT_FIELDS, QUESTION_FIELDS, row_fields

LISTED = 50  # example ids named per finding in the message (all of them in data.row_findings)
COLUMNS_HINT = (
    "build the prompt from every column the question needs (inspect_dataset --prompt-column "
    "A --prompt-column B; the templates join a list of columns)"
)


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _prompt_fields(row: Row) -> list[tuple[str, str]]:
    """The texts the row carries that its prompt must show: the question column and a passage or body,
    by name whatever its case (SVAMP's 'Body' and 'Question')."""
    fields = {str(k).lower(): (k, v) for k, v in row_fields(row).items()}
    out = []
    for name in QUESTION_FIELDS + CONTEXT_FIELDS:
        if name in fields and isinstance(fields[name][1], str) and len(fields[name][1].strip()) >= 20:
            out.append(fields[name])
    return out


def check_prompt_columns(result: Result, rows: list[Row]) -> None:
    """prompt_columns over the given rows: no question, passage or body the rows carry is missing from their
    prompt; every row found is listed (``data.row_findings``, and ``--rows-out``)."""
    dropped = []
    for row in rows:
        prompt_text = _norm(" ".join(str(m.get("content") or "") for m in row.prompt))
        for name, text in _prompt_fields(row):
            if _norm(text)[:200] not in prompt_text:
                why = f"the row's {name!r} text is not in the prompt"
                dropped.append((row, "fail", "a choice or column missing from the prompt", why))
    if rows:
        report_rows(
            result,
            "prompt_columns",
            dropped,
            len(rows),
            "no question, passage or body the rows carry is missing from their prompt",
            COLUMNS_HINT,
        )


def report_rows(result: Result, cid: str, bad: list, total: int, ok: str, hint: str) -> None:
    """One check over the rows: fail when a row fails, warn when rows only warn; every row is named (the
    ids in the message up to LISTED, all of them with their reasons in data.row_findings). ``bad``: (row, status,
    group, why): the rows a finding is on are grouped by what it is."""
    if not bad:
        result.passed(cid, f"{ok} ({total} rows)")
        return
    result.data.setdefault("row_findings", {})[cid] = [
        {"example_id": row.index, "status": status, "problem": why} for row, status, _, why in bad
    ]
    failing = [b for b in bad if b[1] == "fail"]
    shown = failing or bad
    by_what: dict[str, list[int]] = {}
    for row, _, group, _ in shown:
        by_what.setdefault(group, []).append(row.index)
    rows_hit = len({row.index for row, *_ in shown})
    parts = []
    for what, ids in by_what.items():
        ids = list(dict.fromkeys(ids))
        listed = ", ".join(str(i) for i in ids[:LISTED]) + (
            f" and {len(ids) - LISTED} more" if len(ids) > LISTED else ""
        )
        example = next(why for _, _, group, why in shown if group == what)
        parts.append(f"{what} on {len(ids)} row(s) (example_id {listed}; e.g. {example})")
    if failing:
        result.fail(cid, f"{rows_hit}/{total} rows cannot be answered as the reward expects: " + "; ".join(parts), hint)
        result.step(hint)
    else:
        result.warn(
            cid,
            f"{rows_hit}/{total} rows have a quirk that leaves the gold answerable: " + "; ".join(parts),
            "fix the data where you can; every row is in data.row_findings (--rows-out FILE writes them)",
        )
