"""Which format the answer column has, with the share of sampled rows that match.

The formats are the answer kinds' (``vlab.kinds``: each unit's ``formats``). Each format's test answers
"does this value match?" for one row; the formats are then asked in their order whether the column is theirs,
given every share, and the first that says yes is reported, with every candidate's share kept as evidence.
"""

from __future__ import annotations

import re
from typing import Any

from vlab import catalog, kinds
from vlab.inspect.columns import truncate
from vlab.kinds.base import STRONG, Column
from vlab.kinds.lists import list_column

WARN_BELOW = 0.98

# answer_format.type -> its human label (the types are the catalog's answer kinds; read from the catalog at each
# detection, so an entry added at run time is known).
FORMAT_LABELS = {k.name: k.label for k in catalog.ANSWER_KINDS}


def detect_answer_format(
    rows: list[dict],
    answer: str,
    choices: str | list[str] | None = None,
    class_names: list[str] | None = None,
    tests_column: str | None = None,
    multiple_column: str | None = None,
) -> dict[str, Any]:
    """The answer column's format, the share of rows matching it, and how to extract the answer.

    ``choices`` is the column of option lists, or the columns that hold one option each, in order.
    ``tests_column``: the column of tests of a code dataset (the answer is then its reference solution).
    An answer column of lists (``kinds.lists``: JSON or Arrow lists, lists written as text, records of aliases) is
    read as what it holds: one-element lists unwrapped, lists of numbers or math as several answers, lists of short
    texts as aliases; ``multiple_column``: a flag column saying a row holds several answers (is_multiple_answer).
    """
    values = [row.get(answer) for row in rows]
    flags = [row.get(multiple_column) for row in rows] if multiple_column else None
    listed = None if tests_column or choices else list_column(values, flags, multiple_column)
    col = Column(
        rows,
        answer,
        listed.values if listed is not None else values,
        [_row_options(row, choices) for row in rows],
        class_names,
        tests_column,
        choices,
    )
    formats = kinds.formats()
    for f in formats:
        if f.test is not None and f.name not in col.results:
            col.results[f.name] = col.share(lambda i, v, test=f.test: test(col, i, v))
    chosen = next(f for f in formats if f.chosen(col))
    match, misses = chosen.matched(col) if chosen.matched else col.results[chosen.name]
    shares = {name: round(s, 4) for name, s in col.shares().items()}
    out: dict[str, Any] = {
        "type": chosen.name,
        "label": catalog.answer_kind(chosen.name).label,
        "match_share": round(match, 4),
        "matched": col.n - len(misses),
        "rows": col.n,
        "candidates": {k: v for k, v in sorted(shares.items(), key=lambda kv: -kv[1]) if v > 0},
        "examples": [truncate(v, 80) for v in col.present[:3]],
        "non_matching": [{"row": i, "value": truncate(col.values[i], 80)} for i in misses[:5]],
    }
    if chosen.extraction is not None:
        out.update(chosen.extraction(col))
    if listed is not None:
        out["answer_list"] = listed.to_dict()
    return out


# A calculator annotation in a worked solution, as GSM8K writes them: "48/2 = <<48/2=24>>24".
_CALCULATOR = re.compile(r"<<[^<>=\n]*\d[^<>=\n]*=[^<>\n]*\d[^<>\n]*>>")


def calculator_annotations(rows: list[dict], columns: list[str]) -> dict[str, Any] | None:
    """The text column (of ``columns``, in order: the answer first) whose worked solutions carry calculator
    annotations (``<<48/2=24>>``) on at least STRONG of the rows that have a value: {"column", "rows",
    "annotated", "share", "example"}; None when no column does."""
    best: dict[str, Any] | None = None
    for column in columns:
        values = [r.get(column) for r in rows if isinstance(r.get(column), str) and r.get(column).strip()]
        if not values:
            continue
        hits = [m.group(0) for m in (_CALCULATOR.search(v) for v in values) if m]
        share = len(hits) / len(values)
        if share >= STRONG and (best is None or share > best["share"]):
            best = {"column": column, "rows": len(values), "annotated": len(hits), "share": round(share, 4)}
            best["example"] = truncate(hits[0], 60)
    return best


def _row_options(row: dict, choices: str | list[str] | None) -> list[str] | None:
    if not choices:
        return None
    if isinstance(choices, str):
        return _options(row.get(choices))
    return _options([row.get(c) for c in choices if row.get(c) not in (None, "")])


def _options(value: Any) -> list[str] | None:
    """The options of a choices cell: a list, or ARC's {"text": [...], "label": [...]}."""
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value = value["text"]
    if isinstance(value, (list, tuple)) and value:
        return [str(v) for v in value]
    return None
