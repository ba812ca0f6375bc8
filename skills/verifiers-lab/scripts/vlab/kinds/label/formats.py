"""How inspect recognises class labels: yes/no answers, a ClassLabel (or a label map) naming integer ids, and a
column of few distinct short values; and the labels it reports."""

from __future__ import annotations

from typing import Any

from vlab.kinds.base import PLAIN, Column, Format
from vlab.kinds.choice.options import as_index

CLASS_MAX_DISTINCT = 10
_BOOL = {"yes": True, "no": False, "true": True, "false": False}


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return _BOOL.get(value.strip().lower()) if isinstance(value, str) else None


def few_distinct(present: list, distinct: set) -> bool:
    return len(present) >= 20 and len(distinct) <= CLASS_MAX_DISTINCT and len(distinct) <= 0.2 * len(present)


def _matched(col: Column) -> tuple[float, list[int]]:
    if col.class_names:
        n = len(col.class_names)
        return col.share(lambda i, v: as_index(v) is not None and 0 <= as_index(v) < n)
    distinct = col.distinct
    return col.share(lambda i, v: str(v).strip() in distinct)


def _extraction(col: Column) -> dict[str, Any]:
    if col.class_names:
        return {"extraction": "the integer is a ClassLabel id: name = names[answer]", "labels": list(col.class_names)}
    return {
        "extraction": "the label text, stripped and lower-cased",
        "labels": sorted(col.distinct)[:CLASS_MAX_DISTINCT],
    }


_CLASS_LABEL = {"test": None, "matched": _matched, "extraction": _extraction}
FORMATS = (
    Format("class_label", 40, lambda col: bool(col.class_names), **_CLASS_LABEL),
    Format(
        "boolean",
        75,
        lambda col: col.results["boolean"][0] >= PLAIN,
        test=lambda col, i, v: as_bool(v) is not None,
        extraction=lambda col: {"extraction": "yes/true -> yes, no/false -> no (case-insensitive)"},
    ),
    Format(
        "class_label",
        80,
        lambda col: (
            few_distinct(col.present, col.distinct) and col.results["short_text"][0] + col.results["number"][0] >= PLAIN
        ),
        **_CLASS_LABEL,
    ),
)
