"""How inspect recognises numeric and math answer columns: GSM8K's '#### N', a \\boxed{} answer, a plain number,
a math expression; and how a reward gets the comparable value out of each."""

from __future__ import annotations

from typing import Any

from vlab.kinds.base import PLAIN, STRONG, Column, Format
from vlab.kinds.number.values import (
    FRACTION,
    extract_boxed,
    extract_hash,
    looks_like_math,
    parse_number,
    well_formed_math,
)

# Non-matching numeric/math rows carried by index (``non_matching_rows``), for inspect to ask math-verify about.
READ_BACK_AT_MOST = 50


def _strings(col: Column) -> list[str]:
    return [v for v in col.values if isinstance(v, str)]


def _gsm8k(col: Column) -> dict[str, Any]:
    got = [extract_hash(v) for v in _strings(col)]
    ok = [g for g in got if g is not None and parse_number(g) is not None]
    return {
        "extraction": "the text after the last '####', commas removed (vf.extract_hash_answer)",
        "extraction_share": round(len(ok) / col.n, 4) if col.n else 0.0,
        "extracted_examples": [g.replace(",", "") for g in ok[:5]],
    }


def _boxed(col: Column) -> dict[str, Any]:
    got = [g for g in (extract_boxed(v) for v in _strings(col)) if g]
    return {
        "extraction": "the content of the last \\boxed{...} (vf.extract_boxed_answer)",
        "extraction_share": round(len(got) / col.n, 4) if col.n else 0.0,
        "extracted_examples": got[:5],
    }


def _read_back(col: Column, name: str) -> dict[str, Any]:
    """The rows the test missed, for inspect to ask math-verify whether the numeric templates read them."""
    misses = col.results[name][1]
    return {"non_matching_rows": misses[:READ_BACK_AT_MOST]} if misses else {}


def _math(col: Column) -> dict[str, Any]:
    return {
        **_read_back(col, "math"),
        "extraction": "the expression as it is; compare with math-verify (equivalent forms match)",
    }


def _number(col: Column) -> dict[str, Any]:
    kinds = set()
    for v in col.values:
        if isinstance(v, str):
            t = v.strip()
            if "," in t:
                kinds.add("thousands separators")
            if FRACTION.match(t):
                kinds.add("fractions")
            if t.startswith(("-", "−")):
                kinds.add("negatives")
            if "." in t:
                kinds.add("decimals")
            if "$" in t or "%" in t:
                kinds.add("units ($ or %)")
        elif isinstance(v, float) and not float(v).is_integer():
            kinds.add("decimals")
        elif isinstance(v, (int, float)) and v < 0:
            kinds.add("negatives")
    return {
        **_read_back(col, "number"),
        "extraction": "parse as a number (drop ',', '$', '%'; a/b as a fraction) and compare with a tolerance",
        "number_forms": sorted(kinds) or ["integers"],
    }


FORMATS = (
    Format(
        "gsm8k",
        60,
        lambda col: col.results["gsm8k"][0] >= STRONG,
        test=lambda col, i, v: isinstance(v, str) and parse_number(extract_hash(v) or "") is not None,
        extraction=_gsm8k,
    ),
    Format(
        "boxed",
        70,
        lambda col: col.results["boxed"][0] >= STRONG,
        test=lambda col, i, v: isinstance(v, str) and bool(extract_boxed(v)),
        extraction=_boxed,
    ),
    Format(
        "number",
        90,
        lambda col: col.results["number"][0] >= PLAIN,
        test=lambda col, i, v: parse_number(v) is not None,
        extraction=_number,
    ),
    Format(
        "math",
        100,
        lambda col: col.results["math"][0] >= PLAIN and col.results["math"][0] > col.results["number"][0],
        test=lambda col, i, v: parse_number(v) is not None or (looks_like_math(v) and well_formed_math(v)),
        extraction=_math,
    ),
)
