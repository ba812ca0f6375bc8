"""Probes by the shape of a competition-math gold: tuples, intervals, sets and roots, \\pm, irrational
and repeating values, degrees and percent, each derived from the row's own gold.

Near misses (category ``near_miss``) that a sound reward never pays: a decimal approximation of an
irrational or repeating gold at 1 to 4 places (unless the prompt asks for a decimal), a tuple's entries
swapped, an interval with a bracket flipped or its ends swapped, a set or list of roots with an element
dropped or added, one sign of a \\pm. Equivalent spellings (category ``number_form``) a good model writes
and a reward must pay: ``\\dfrac``, ``a/b``, ``sqrt(3)`` and ``2*sqrt(3)``, ``\\sqrt3``, other spacing,
``\\left(``...``\\right)``, a set or list of roots in another order; and cosmetic ones (degrees and percent
written the ways models write them, a thin space in a number) whose refusal only warns. Every probe is
confirmed first by the numeric templates' comparison (``equivalence.same_value``): equal for a spelling,
different for a near miss, so a verdict never rests on a probe that is itself wrong.
"""

from __future__ import annotations

import re
from fractions import Fraction

from vlab.kinds.number.equivalence import exact, same_value

# The names of the spellings whose refusal is strictness rather than a wrong verdict (checked by numbers).
COSMETIC = {
    "degrees_sign",
    "degree_macro",
    "degrees_circ",
    "percent_sign",
    "without_percent",
    "thin_space",
    "root_call",
}
# What a paid near miss says about the reward, for the check's message.
NEAR_MEANS = {
    "decimal_approximation": "a rounded decimal of an irrational or repeating gold earns it (a numeric tolerance)",
    "small_offset": "a value 0.01 away earns it (an absolute tolerance)",
    "off_by_one": "the integer next to the gold earns it (a relative tolerance)",
    "last_digit": "the gold with its last digit changed earns it (a tolerance too loose for small numbers)",
    "swapped_order": "a tuple with its entries swapped earns it (compared as a set: order ignored)",
    "flipped_bracket": "an interval with a bracket flipped earns it (open and closed ends not told apart)",
    "swapped_ends": "an interval with its ends swapped earns it",
    "dropped_element": "the set or list of roots with one element dropped earns it",
    "added_element": "the set or list of roots with an extra element earns it",
    "one_sign": "one sign of a \\pm answer earns it (both roots are the answer)",
}
_ASKS_DECIMAL = re.compile(
    r"\bdecimal\b|nearest\s+(?:tenth|hundredth|thousandth|whole|integer|percent)|\bround(?:ed)?\b|significant", re.I
)
_SPEAKS_DEGREES = re.compile(r"degree|\^\s*\{?\\circ|°|\bangle\b", re.I)
_SPEAKS_PERCENT = re.compile(r"percent|\\?%", re.I)
_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\{([^{}]*)\}")
_ATOM = re.compile(r"-?(?:\d+|[A-Za-z]|\\pi|\\sqrt\{[^{}]*\})")


def split_top(text: str) -> list[str]:
    """The comma-separated parts of a text at the top level (commas inside braces or brackets stay)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def shape_of(gold: str) -> tuple[str, list[str], str, str]:
    """(shape, parts, opening, closing): shape is tuple | interval | set | list | pm | matrix | value."""
    g = gold.strip().strip("$").strip()
    bare = re.sub(r"\\left\s*|\\right\s*", "", g).replace("\\{", "{").replace("\\}", "}")
    if "\\begin{" in g:
        return "matrix", [], "", ""
    if bare[:1] == "{" and bare[-1:] == "}" and g.startswith(("\\{", "\\left\\{")):
        return "set", split_top(bare[1:-1]), "\\{", "\\}"
    if bare[:1] in "([" and bare[-1:] in ")]" and len(bare) > 2:
        parts = split_top(bare[1:-1])
        if len(parts) >= 2 and all(parts):
            interval = len(parts) == 2 and (bare[0] != "(" or bare[-1] != ")" or "\\infty" in bare)
            return ("interval" if interval else "tuple"), parts, bare[0], bare[-1]
    if "\\pm" in g:
        return "pm", [], "", ""
    parts = split_top(g)
    if len(parts) >= 2 and all(parts) and exact(g) is None:
        return "list", parts, "", ""
    return "value", [g], "", ""


def _approximations(gold: str) -> list[tuple[str, str]]:
    """A gold whose decimal does not end (irrational, or a repeating fraction) rounded to 1 to 4 places."""
    rational = exact(gold)
    if rational is not None:
        if _terminates(rational):
            return []
        x = float(rational)
    else:
        x = _real_value(gold)
        if x is None or x == int(x):
            return []
    return [("decimal_approximation", f"{x:.{places}f}") for places in range(1, 5)]


def _terminates(value: Fraction) -> bool:
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _real_value(gold: str) -> float | None:
    """The gold's value when it is one real number without variables (\\pi, 2\\sqrt{3}), else None."""
    from math_verify import parse

    try:
        parsed = parse(f"\\boxed{{{gold}}}")
        expr = parsed[0] if parsed else None
        if expr is None or getattr(expr, "free_symbols", True) or not getattr(expr, "is_real", False):
            return None
        return float(expr.evalf())
    except Exception:  # noqa: BLE001 - what math-verify or sympy cannot evaluate gets no approximation
        return None


def _spellings(gold: str) -> list[tuple[str, str]]:
    """The gold written the other ways a good model writes the same value."""
    out = []
    if "\\frac" in gold:
        out.append(("dfrac", gold.replace("\\frac", "\\dfrac")))
    if _FRAC.search(gold):
        out.append(("slash_fraction", _FRAC.sub(_slash, gold)))
    if _ROOT.search(gold):
        call = _ROOT.sub(lambda m: f"sqrt({m.group(1)})", re.sub(r"(\d)\s*\\sqrt", r"\1*\\sqrt", gold))
        out.append(("sqrt_call", call))
        braceless = re.sub(r"\\sqrt\{(\d|[a-z])\}", r"\\sqrt\1", gold)
        if braceless != gold:
            out.append(("braceless_root", braceless))
    spaced = re.sub(r"\s*,\s*", ", ", gold)
    out.append(("spacing", spaced if spaced != gold else re.sub(r"\s*,\s*", ",", gold)))
    shape, parts, opening, closing = shape_of(gold)
    if shape in ("tuple", "interval") and "\\left" not in gold:
        out.append(("left_right", f"\\left{opening} {', '.join(parts)} \\right{closing}"))
    elif shape in ("tuple", "interval"):
        out.append(("left_right", f"{opening}{', '.join(parts)}{closing}"))
    if shape in ("set", "list") and len(set(parts)) > 1:
        reordered = ", ".join(reversed(parts))
        out.append(("reordered", f"\\{{{reordered}\\}}" if shape == "set" else reordered))
    return [(name, text) for name, text in out if text != gold]


def _slash(m: re.Match) -> str:
    top, bottom = m.group(1), m.group(2)
    top = top if _ATOM.fullmatch(top) else f"({top})"
    bottom = bottom if _ATOM.fullmatch(bottom) else f"({bottom})"
    return f"{top}/{bottom}"


def _cosmetic(gold: str, question: str) -> list[tuple[str, str]]:
    """Degrees, percent and a thin space, written the ways models write them, where the data speaks of them."""
    out = []
    g = gold.strip()
    number = re.fullmatch(r"-?\d+(?:\.\d+)?", g)
    degrees = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*\^\s*\{?\\circ\}?", g)
    if number and _SPEAKS_DEGREES.search(question):
        out += [("degrees_circ", f"{g}^\\circ"), ("degrees_sign", f"{g}°"), ("degree_macro", f"{g}\\degree")]
    elif degrees:
        out += [("degrees_sign", f"{degrees.group(1)}°"), ("degree_macro", f"{degrees.group(1)}\\degree")]
    percent = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*\\?%", g)
    if number and _SPEAKS_PERCENT.search(question):
        out.append(("percent_sign", f"{g}\\%"))
    elif percent:
        out.append(("without_percent", percent.group(1)))
    if re.search(r"\d\\sqrt\{", g):
        out.append(("root_call", _ROOT.sub(lambda m: f" sqrt({m.group(1)})", g)))
    if re.fullmatch(r"-?\d{4,}", g):
        digits = f"{int(g):,}".replace(",", "\\,")
        out.append(("thin_space", digits))
    return out


def _near(gold: str, question: str) -> list[tuple[str, str]]:
    """Wrong answers of the gold's own shape."""
    out: list[tuple[str, str]] = []
    shape, parts, opening, closing = shape_of(gold)
    if shape == "tuple" and len(set(parts)) > 1:
        out.append(("swapped_order", f"{opening}{', '.join([parts[1], parts[0], *parts[2:]])}{closing}"))
    if shape == "interval":
        flip = {"(": "[", "[": "(", ")": "]", "]": ")"}
        a, b = parts
        if "\\infty" not in a:
            out.append(("flipped_bracket", f"{flip[opening]}{a}, {b}{closing}"))
        if "\\infty" not in b:
            out.append(("flipped_bracket", f"{opening}{a}, {b}{flip[closing]}"))
        if a != b:
            out.append(("swapped_ends", f"{opening}{b}, {a}{closing}"))
    if shape in ("set", "list"):
        wrap = (lambda items: f"\\{{{', '.join(items)}\\}}") if shape == "set" else (lambda items: ", ".join(items))
        out.append(("dropped_element", wrap(parts[:-1])))
        extra = next((str(k) for k in range(7, 100) if all(not same_value(p, str(k)) for p in parts)), "99")
        out.append(("added_element", wrap([*parts, extra])))
    if shape == "pm":
        out += [("one_sign", gold.replace("\\pm", "+").lstrip("+ ").strip()), ("one_sign", gold.replace("\\pm", "-"))]
    if shape == "value":
        if not _ASKS_DECIMAL.search(question):
            out += _approximations(gold)
        value = exact(gold)
        if value is not None and value.denominator == 1:
            n = value.numerator
            out.append(("small_offset", f"{n}.01"))
            if abs(n) >= 10:
                out.append(("off_by_one", str(n + 1)))
        elif value is not None and re.fullmatch(r"-?\d*\.\d+", gold.strip()):
            text = gold.strip()
            last = int(text[-1])
            out.append(("last_digit", text[:-1] + str((last + 1) % 10 if last != 9 else 8)))
    return out


def shape_probes(gold: str, question: str = "") -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(equivalent spellings, near misses) of a gold, each confirmed by the numeric templates' comparison; the
    required spellings also by math-verify as it is (vf.MathRubric pays them: refusing them is a defect)."""
    forms = [(n, t) for n, t in _spellings(gold) if same_value(gold, t, native=True)]
    forms += [(n, t) for n, t in _cosmetic(gold, question) if same_value(gold, t)]
    near = [(n, t) for n, t in _near(gold, question) if not same_value(gold, t)]
    return forms, near


def shape_key(gold: str) -> str:
    """The shape a row's probes depend on: tuple, interval, set, list, pm, matrix, or for one value plain
    (a rational number) or symbolic (\\pi, a root, an expression)."""
    shape = shape_of(gold)[0]
    if shape != "value":
        return shape
    return "plain" if exact(gold) is not None else "symbolic"


def shape_rows(scope: list, sample: list, golds: dict, kinds: dict, limit: int) -> list:
    """Rows of ``scope`` beyond ``sample``, the first of each numeric answer shape the sample lacks (at most
    ``limit``): the first rows of a math set are often all integers, and a tuple compared as a set would pass."""
    numeric = lambda row: golds.get(row.index) is not None and kinds[row.index].kind == "number"  # noqa: E731
    covered = {shape_key(golds[r.index]) for r in sample if numeric(r)}
    taken = {r.index for r in sample}
    extra = []
    for row in scope:
        if len(extra) >= limit:
            break
        if row.index in taken or not numeric(row):
            continue
        key = shape_key(golds[row.index])
        if key not in covered:
            covered.add(key)
            extra.append(row)
    return extra
