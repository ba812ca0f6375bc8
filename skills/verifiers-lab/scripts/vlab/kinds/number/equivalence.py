"""Are two answers the same value? The numeric templates' comparison decides, as the pack's rewards do.

math-verify (a hard dependency of verifiers 0.3.1 and 0.4.0; the parser behind
``vf.MathRubric`` and ``vf.verify_boxed_math_answer``) compares both sides wrapped in
\\boxed{}, after the templates' ``readable`` rewrites the spellings it misreads (90°, 2\\,220,
3 sqrt(5), 9.). Two plain rationals are compared exactly (``plain_verdict``: math-verify's own
verdict on integers, tests/test_templates.py checks it; on decimals its 6-place rounding is not
used). Numbers side by side ("2 40 19", "0.0112 0.006") are never one value here, although math-verify
reads them as their sum. The comparison's one home is the v1-numeric template (``template_comparison``
reads it from there). The probes use this to be sure that every spelling they call equivalent
is the gold value and every near miss is not, before asking the reward about them.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from functools import cache, lru_cache
from types import SimpleNamespace

from vlab.core.templatecode import run_template_definitions, template_definitions

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


NUMERIC_TEMPLATE = ("v1-numeric", "v1_numeric.py")
# The template's comparison: the functions and the module names they read.
COMPARISON = ("_INTEGER", "_SEVERAL", "_PLAIN", "_REWRITES", "readable", "plain_value", "plain_verdict")


# Several answers, units and answers held as lists (the same code in both numeric templates): read by the number
# unit's probes for several answers and units, and by inspect (how the templates read a gold).
ANSWERS = (
    "reference_answer",
    "_ANSWER_KEYS",
    "answer_list",
    "split_answers",
    "several_flag",
    "_MATH_DOLLARS",
    "reference_of",
    "answer_instructions",
    "_TEXT_MACRO",
    "without_unit",
    "boxed_contents",
    "_BETWEEN_BOXES",
    "boxed_run",
    "_plain_text",
    "_brackets",
    "quick_verdict",
    "pair_up",
)


@cache
def template_answers() -> SimpleNamespace:
    """The numeric templates' reading of several answers, units and lists (``ANSWERS``), run from v1-numeric's
    source beside its comparison."""
    import ast as ast_module
    import json
    from collections.abc import Callable

    modules = {"re": re, "Fraction": Fraction, "ast": ast_module, "json": json, "Callable": Callable}
    namespace = run_template_definitions(*NUMERIC_TEMPLATE, COMPARISON + ANSWERS, modules)
    return SimpleNamespace(**{name.lstrip("_"): namespace[name] for name in ANSWERS})


@cache
def template_comparison() -> SimpleNamespace:
    """The numeric templates' ``readable`` and ``plain_verdict``, run from the v1-numeric template's source."""
    namespace = run_template_definitions(*NUMERIC_TEMPLATE, COMPARISON, {"re": re, "Fraction": Fraction})
    return SimpleNamespace(
        readable=namespace["readable"],
        plain_value=namespace["plain_value"],
        plain_verdict=namespace["plain_verdict"],
        several=namespace["_SEVERAL"],
    )


def comparison_source() -> str:
    """The comparison's source as the template writes it, for inspect's snippets (they import re and Fraction)."""
    _, text, nodes = template_definitions(*NUMERIC_TEMPLATE, COMPARISON)
    names = [ast.get_source_segment(text, n) or "" for n in nodes if not isinstance(n, ast.FunctionDef)]
    functions = [ast.get_source_segment(text, n) or "" for n in nodes if isinstance(n, ast.FunctionDef)]
    return "\n".join(names) + "\n\n\n" + "\n\n\n".join(functions) + "\n"


@lru_cache(maxsize=4096)
def same_value(a: str, b: str, native: bool = False) -> bool:
    """The numeric templates' verdict on two answers: both made readable, two plain rationals exactly, else
    math-verify; False when it cannot parse them, and for numbers side by side on either side.
    ``native``: math-verify on the texts as they are (what vf.MathRubric pays), the exact rule still first."""
    compare = template_comparison()
    if not native:
        a, b = compare.readable(a), compare.readable(b)
    if compare.several.search(a) or compare.several.search(b):
        return False
    fast = compare.plain_verdict(a, b)
    if fast is not None:
        return fast == 1.0
    from math_verify import parse, verify

    try:
        return bool(verify(parse(f"\\boxed{{{a}}}"), parse(f"\\boxed{{{b}}}")))
    except Exception:  # noqa: BLE001 - math-verify raises on what it cannot read: not equal
        return False


def exact(text: str) -> Fraction | None:
    """The exact rational a plain numeric answer states (51, 51.0, .5, 1/2, \\frac{1}{2}, \\frac12), or None:
    the numeric templates' ``plain_value``."""
    return template_comparison().plain_value(text)


def decimal_text(value: Fraction) -> str | None:
    """A terminating decimal's text ("0.5"), or None when it does not terminate within 12 places."""
    for places in range(13):
        scaled = value * 10**places
        if scaled.denominator == 1:
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            text = f"{digits[:-places]}.{digits[-places:]}" if places else digits
            return ("-" if value < 0 else "") + text
    return None
