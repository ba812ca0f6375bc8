"""How inspect recognises short answers with aliases: a list per row (read by ``kinds.lists``) whose first answer
is short text. Long answers listed (TruthfulQA's sentences) are no aliases: a judge's work."""

from __future__ import annotations

from typing import Any

from vlab.kinds.base import STRONG, Column, Format
from vlab.kinds.text.formats import is_short_text


def is_alias_list(value: Any) -> bool:
    """A list of answers (as ``kinds.lists`` hands them to the formats) whose first answer is short text."""
    return isinstance(value, list) and bool(value) and is_short_text(value[0])


def _extraction(col: Column) -> dict[str, Any]:
    counts = [len(v) for v in col.values if isinstance(v, list) and v]
    return {
        "extraction": "every alias normalised as QA exact match does (lower case; punctuation and a/an/the dropped); "
        "the boxed answer must equal one of them",
        "aliases_per_row": {
            "max": max(counts, default=0),
            "mean": round(sum(counts) / len(counts), 2) if counts else 0,
        },
    }


FORMATS = (
    Format(
        "answer_aliases",
        35,  # before the label and number formats: a list is never a label or a number
        lambda col: col.results["answer_aliases"][0] >= STRONG,
        test=lambda col, i, v: is_alias_list(v),
        extraction=_extraction,
    ),
)
