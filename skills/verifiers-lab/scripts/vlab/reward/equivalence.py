"""Are two answers the same value? math-verify decides, as verifiers' own math rewards do.

math-verify (a hard dependency of verifiers 0.3.1 and 0.4.0; the parser behind
``vf.MathRubric`` and ``vf.verify_boxed_math_answer``) compares both sides wrapped in
\\boxed{}. Two plain integers are compared directly: on canonical integer literals
math-verify's verdict is integer equality (tests/test_templates.py checks the shortcut
against it). Whole numbers side by side ("2 40 19") are never one value here, although
math-verify reads them as their sum. The probes use this to be sure that every spelling they call equivalent
is the gold value and every near miss is not, before asking the reward about them.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# Whole numbers side by side: math-verify reads "2 40 19" as 2 + 40 + 19; as an answer it is several values.
_SEVERAL = re.compile(r"(?<![\d.])\d+\s+\d+(?![\d./])")
_DECIMAL = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_FRACTION = re.compile(r"(-?\d+)\s*/\s*(\d+)|\\d?frac\{(-?\d+)\}\{(\d+)\}")
# A comma is a thousands separator only between groups of three digits ("1,234", "1{,}234"); in "-2,1",
# "(1,2)" or "[0,3)" it separates the values of a list, a tuple or an interval.
_GROUPED = re.compile(r"-?\$?\d{1,3}(?:(?:,|\{,\})\d{3})+(?:\.\d+)?")
# The question asks for several values: a grouped-looking "1,234" is then a list too.
_ASKS_LIST = re.compile(
    r"separated by commas|comma[- ]separated|\ball (?:the |possible |real )?(?:roots|solutions|values)", re.I
)


def without_separators(text: str, question: str = "") -> str:
    """The number with its thousands separators removed ("1,234" -> "1234"); anything else as it is.

    Answers are read by kind before any normalisation: a list ("-2,1"), a tuple or an interval keeps
    its commas, and so does a grouped-looking answer to a question that asks for several values."""
    t = text.strip()
    if _GROUPED.fullmatch(t) and not _ASKS_LIST.search(question or ""):
        return t.replace("{,}", "").replace(",", "")
    return t


def integer_verdict(a: str, b: str) -> bool | None:
    """Equal as integers when both are canonical integer literals; None otherwise."""
    a, b = a.strip(), b.strip()
    if _INTEGER.fullmatch(a) and _INTEGER.fullmatch(b):
        return int(a) == int(b)
    return None


@lru_cache(maxsize=4096)
def same_value(a: str, b: str) -> bool:
    """math-verify's verdict on two answers (the integer shortcut first); False when it cannot parse them."""
    fast = integer_verdict(a, b)
    if fast is not None:
        return fast
    if _SEVERAL.search(a) or _SEVERAL.search(b):
        return False
    from math_verify import parse, verify

    try:
        return bool(verify(parse(f"\\boxed{{{a}}}"), parse(f"\\boxed{{{b}}}")))
    except Exception:  # noqa: BLE001 - math-verify raises on what it cannot read: not equal
        return False


def exact(text: str) -> Fraction | None:
    """The exact rational a plain numeric answer states (51, 51.0, .5, 1/2, \\frac{1}{2}), or None."""
    t = without_separators(text).replace("$", "")
    if _DECIMAL.fullmatch(t):
        return Fraction(t)
    m = _FRACTION.fullmatch(t)
    if m:
        num, den = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        return Fraction(int(num), int(den)) if int(den) else None
    return None


def decimal_text(value: Fraction) -> str | None:
    """A terminating decimal's text ("0.5"), or None when it does not terminate within 12 places."""
    for places in range(13):
        scaled = value * 10**places
        if scaled.denominator == 1:
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            text = f"{digits[:-places]}.{digits[-places:]}" if places else digits
            return ("-" if value < 0 else "") + text
    return None
