"""Probes for numeric and math answers: the gold value spelled other ways, and near misses.

Every spelling offered as equivalent is first confirmed equal to the gold by math-verify
(``equivalence.same_value``), every near miss confirmed different, so a verdict never rests
on a probe that is itself wrong. Spellings a model writes for that value (51 for a gold of
51.0, \\frac{1}{2} and .5 for 0.5, 0.5 for 1/2) must earn the gold reward: a reward that
rejects them fails ``number_forms``. Cosmetic ones (51.0 for 51, 1,000, 1{,}000) only warn.
A near miss of the gold's own kind (51.4 for 51, the sign flipped, a digit appended or dropped)
must never earn it: a reward that pays one fails ``near_misses``. A symbolic factor (2\\pi for 2)
fails only when the dataset's golds or prompts carry such a symbol (a policy could then write it);
elsewhere a policy gains nothing by writing it, and paying it is a warning.
"""

from __future__ import annotations

import re
from fractions import Fraction

from vlab.kinds.number import shapes
from vlab.kinds.number.equivalence import decimal_text, exact, same_value
from vlab.reward.probes import EPS, Probe, RowResult, answer_part, best_gold, fill, value

FORM = "number_form"
NEAR = "near_miss"
# The plainest spellings of the value: refusing any of them fails the check.
REQUIRED = {"integer_form", "decimal_form_of_fraction", "leading_point", "latex_fraction"}
# The other spellings math-verify pays (shapes: \dfrac, a/b, 2*sqrt(3), \sqrt3, spacing, \left(, roots in another
# order): refusing at least this share of all the spellings tried fails too (a real share of correct answers
# paid nothing); fewer warn, and so do the cosmetic ones (shapes.COSMETIC, 51.0 for 51, 1,000).
REFUSED_SHARE = 0.1
# Near misses a policy writes only where the data speaks of the symbol (the others are the gold's own kind).
SYMBOLIC = {"times_pi": re.compile(r"\\pi\b|π|\bpi\b", re.I)}


def symbols_in_data(texts) -> set[str]:
    """The SYMBOLIC near misses whose symbol some gold or prompt of the dataset carries."""
    texts = [t for t in texts if t]
    return {name for name, pattern in SYMBOLIC.items() if any(pattern.search(t) for t in texts)}


def _latex(value: Fraction) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def number_probes(gold: str, template: str, question: str = "") -> list[Probe]:
    """Equivalent spellings (category number_form) and near misses (near_miss) of a numeric gold, those of its
    shape (``shapes``: tuples, intervals, sets, \\pm, irrational values, degrees, percent) included."""
    value = exact(gold)
    forms: list[tuple[str, str]] = []
    near: list[tuple[str, str]] = []
    if value is not None and value.denominator == 1:
        n = value.numerator
        if gold.strip() != str(n):
            forms.append(("integer_form", str(n)))
        else:
            forms.append(("decimal_spelling", f"{n}.0"))
        if abs(n) >= 1000:
            forms += [("thousands_separator", f"{n:,}"), ("latex_thousands", f"{n:,}".replace(",", "{,}"))]
        near += [("truncated_decimal", f"{n}.4"), ("times_pi", f"{n}\\pi"), ("appended_digit", f"{n}0")]
        if abs(n) >= 10:
            near.append(("dropped_digit", str(n)[:-1]))
        if n:
            near.append(("sign_flipped", str(-n)))
    elif value is not None:
        decimal = decimal_text(value)
        if decimal and gold.strip() != decimal:
            forms.append(("decimal_form_of_fraction", decimal))
        if decimal and decimal.lstrip("-").startswith("0."):
            forms.append(("leading_point", decimal.replace("0.", ".", 1)))
        if value.denominator <= 1000 and "frac" not in gold:
            forms.append(("latex_fraction", _latex(value)))
        if "/" not in gold:
            forms.append(("slash_fraction", f"{value.numerator}/{value.denominator}"))
        off = value * Fraction(11, 10)
        near.append(("ten_percent_off", decimal_text(off) or _latex(off)))
        near.append(("sign_flipped", decimal_text(-value) or _latex(-value)))
        if value.numerator not in (0, 1, -1) or abs(value) != 1:
            inverse = 1 / value if value else None
            if inverse is not None and inverse != value:
                near.append(("inverted", _latex(inverse)))
    elif gold.strip():
        near += [("plus_one", f"{gold.strip()}+1"), ("sign_flipped", f"-\\left({gold.strip()}\\right)")]
    forms = [(n, t) for n, t in forms if same_value(gold, t)]
    near = [(n, t) for n, t in near if not same_value(gold, t)]
    shaped_forms, shaped_near = shapes.shape_probes(gold, question)
    seen: set[str] = set()
    probes = []
    for category, found in ((FORM, forms + shaped_forms), (NEAR, near + shaped_near)):
        for name, text in found:
            if text not in seen and text.strip() != gold.strip():
                seen.add(text)
                probes.append(Probe(f"{category}:{name}", category, fill(template, text)))
    return probes


def check_numbers(
    result, rows: list[RowResult], fn: str | None, established, symbols: set[str] | frozenset = frozenset()
) -> None:
    """number_forms and near_misses, on the rows whose gold beats wrong answers. ``symbols``: the SYMBOLIC
    near misses the dataset's golds or prompts carry (``symbols_in_data``); the others paid only warn."""
    rejected: dict[str, list] = {}
    paid: dict[str, list] = {}
    tried = forms_tried = 0
    for rr in rows:
        gold = best_gold(rr)
        if gold is None or not established(rr):
            continue
        top = value(gold, fn)
        for p in rr.of(FORM):
            tried += 1
            forms_tried += 1
            if value(p, fn) < top - EPS:
                rejected.setdefault(p.probe.id.split(":", 1)[1], []).append((rr, p))
        for p in rr.of(NEAR):
            tried += 1
            if value(p, fn) >= top - EPS:
                paid.setdefault(p.probe.id.split(":", 1)[1], []).append((rr, p))
    if not tried:
        if any(rr.of(FORM) or rr.of(NEAR) for rr in rows):  # numeric rows, none with a gold to compare with
            why = "no probed numeric row has a gold answer that beats wrong answers to compare with"
            result.skip("near_misses", why)
            result.skip("number_forms", why)
        return
    scorer = f"{fn!r}" if fn else "the total reward"
    _near_misses(result, paid, symbols, scorer, tried)
    _number_forms(result, rejected, forms_tried)


def _near_misses(result, paid: dict[str, list], symbols, scorer: str, tried: int) -> None:
    hint = (
        "compare the value exactly: two plain numbers as exact fractions (math-verify alone rounds to 6 places and "
        "pays 0.0000673 for .0000672), the rest with math-verify, as templates/environments/v1-numeric's "
        "plain_verdict and same_answer do; never int(float(x)), a tolerance, a tuple's entries as a set, a "
        "substring or the first number found in the answer"
    )
    harmless = {k: v for k, v in paid.items() if k in SYMBOLIC and k not in symbols}
    paid = {k: v for k, v in paid.items() if k not in harmless}
    if paid:
        result.fail(
            "near_misses",
            "wrong answers of the gold's own shape earn the gold reward from "
            + scorer
            + ": "
            + "; ".join(_example(name, hits, shapes.NEAR_MEANS.get(name)) for name, hits in paid.items()),
            hint,
        )
        result.step("make the reward compare the whole answer as a value; near misses must score like wrong answers")
    elif harmless:
        result.warn(
            "near_misses",
            "only symbolic near misses earn the gold reward from "
            + scorer
            + ", and no gold or prompt of the dataset carries the symbol, so a policy gains nothing by writing it: "
            + "; ".join(_example(name, hits) for name, hits in harmless.items()),
            hint,
        )
    else:
        result.passed(
            "near_misses",
            f"no near miss earned the gold ({tried} probes: 51.4 for 51, a flipped sign, 2\\pi for 2, 3.14 for "
            "\\pi, a swapped tuple, a flipped interval bracket, a root dropped)",
        )


def _number_forms(result, rejected: dict[str, list], tried: int) -> None:
    refused = sum(len(hits) for hits in rejected.values())
    cosmetic = {k: v for k, v in rejected.items() if k in shapes.COSMETIC or k in _COSMETIC_NUMBER}
    value_forms = {k: v for k, v in rejected.items() if k not in cosmetic}
    refused_values = sum(len(hits) for hits in value_forms.values())
    share = f"{refused_values} of the {tried} equivalent spellings tried ({refused_values / tried:.0%})"
    if value_forms and (set(value_forms) & REQUIRED or refused_values / tried >= REFUSED_SHARE):
        result.fail(
            "number_forms",
            f"the reward refuses {share}, the gold value written the ways a model writes it: "
            + "; ".join(_example(name, hits) for name, hits in value_forms.items()),
            "compare with math-verify (vf.MathRubric / vf.verify_boxed_math_answer), as templates/environments/"
            "classic-numeric does, not as strings",
        )
        result.step("compare answers as values (math-verify), not as strings")
    elif rejected:
        result.warn(
            "number_forms",
            f"the reward refuses {refused} of the {tried} spellings of the gold value tried: "
            + "; ".join(_example(name, hits) for name, hits in rejected.items()),
            "the numeric templates accept them (math-verify after their `readable`); a model that writes them gets 0",
        )
    else:
        result.passed("number_forms", f"every equivalent spelling of the gold value earns the gold reward ({tried})")


# number_probes' own spellings whose refusal only warns.
_COSMETIC_NUMBER = {"decimal_spelling", "thousands_separator", "latex_thousands"}


def _example(name: str, hits: list, means: str | None = None) -> str:
    rr, p = hits[0]
    shown = answer_part(p.probe.text)
    what = f" ({means})" if means else ""
    return f"{name}{what} on {len(hits)} row(s), e.g. {shown!r} for gold {rr.gold!r} (example_id {rr.row.index})"
