"""How inspect recognises free text: short answers (a few words) and long ones (a judge's work)."""

from __future__ import annotations

from typing import Any

from vlab.kinds.base import Format


def is_short_text(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value.strip()) <= 80 and len(value.split()) <= 10


FORMATS = (
    Format(
        "short_text",
        120,
        lambda col: col.results["short_text"][0] >= 0.75,
        test=lambda col, i, v: is_short_text(v),
        extraction=lambda col: {
            "extraction": "normalise (lower-case, strip punctuation and articles) and compare exactly"
        },
    ),
    Format(
        "long_text",
        1000,  # what is left: never asked before every other format
        lambda col: True,
        matched=lambda col: col.share(lambda i, v: isinstance(v, str) and bool(v.strip())),
        extraction=lambda col: {"extraction": "free text: compare with an LLM judge (vf.JudgeRubric / a v1 judge)"},
    ),
)
