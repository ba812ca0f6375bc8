"""Competition-math answers (issue 33): probes derived from each gold's own shape.

The numeric templates pass on MATH-shaped rows of every shape with no new warning; rewards with the
defects users write into a math reward each fail the check that names the defect: a numeric
tolerance (absolute or relative), a tuple compared as a set, interval brackets ignored, a
normalised-string comparison that refuses the spellings a model writes.
"""

from __future__ import annotations

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT
from math_fixtures import golds_of, math_rows
from test_reward_kinds import message, run, status

from vlab.core.result import Result
from vlab.kinds.number import shapes
from vlab.kinds.number.equivalence import same_value

TEMPLATES = SKILL_ROOT / "templates" / "environments"


def not_passed(result: Result) -> list[tuple[str, str, str]]:
    return [(c.id, c.status, c.message) for c in result.checks if c.status not in ("pass", "skip")]


def template_rows(**kw) -> list[dict]:
    """MATH rows as the numeric templates read them: the problem in `question`, the gold in `answer`."""
    return [{**r, "question": r["problem"]} for r in math_rows(**kw)]


# -- the probes themselves ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "gold, near, form",
    [
        (r"\pi", "decimal_approximation", None),
        (r"\frac{14}{3}", "decimal_approximation", "slash_fraction"),
        (r"2\sqrt{3}", "decimal_approximation", "sqrt_call"),
        (r"\left( 3, \frac{\pi}{2} \right)", "swapped_order", "left_right"),
        ("[-2,7]", "flipped_bracket", "spacing"),
        (r"(-\infty, 3)", "swapped_ends", None),
        (r"\{1, 2, 3\}", "dropped_element", "reordered"),
        ("-3, 5", "added_element", "reordered"),
        (r"\pm 4", "one_sign", None),
        (".0000672", "last_digit", None),
        ("1000", "off_by_one", "thin_space"),
        ("90^\\circ", None, "degrees_sign"),
        (r"10\%", None, "without_percent"),
    ],
)
def test_each_shape_gets_its_probes_and_every_probe_is_what_it_claims(gold, near, form):
    forms, nears = shapes.shape_probes(gold)
    if near:
        assert near in [n for n, _ in nears], nears
    if form:
        assert form in [n for n, _ in forms], forms
    assert all(same_value(gold, text) for _, text in forms)
    assert not any(same_value(gold, text) for _, text in nears)


def test_no_decimal_approximation_where_the_prompt_asks_for_a_decimal():
    assert "decimal_approximation" in [n for n, _ in shapes.shape_probes(r"\sqrt{2}")[1]]
    asked = shapes.shape_probes(r"\sqrt{2}", "Express your answer as a decimal to the nearest hundredth.")[1]
    assert "decimal_approximation" not in [n for n, _ in asked]


def test_the_probed_rows_cover_every_answer_shape_of_the_data():
    from vlab.env import Row
    from vlab.kinds.base import RowKind

    golds = ["1", "2", "3", "4", "5", "6", "(1, 2)", "[0, 3)", r"\{1, 2\}", r"\pi", "7"]
    rows = [Row(index=i, question=f"q{i}", answer=g, prompt=[], fields={}) for i, g in enumerate(golds)]
    kinds = {r.index: RowKind("number") for r in rows}
    extra = shapes.shape_rows(rows, rows[:5], {r.index: r.answer for r in rows}, kinds, 8)
    assert [r.answer for r in extra] == ["(1, 2)", "[0, 3)", r"\{1, 2\}", r"\pi"]


# -- the templates: every shape, no failure and no new warning ------------------------------------

SHAPE_CHECKS = ("number_forms", "near_misses", "gold_reachable", "reward_hacking")
LOAD_DEPENDENT = {"speed"}  # how fast the reward ran on this machine, not what it pays


def warnings(result: Result) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in result.checks if c.status == "warn" and c.id not in LOAD_DEPENDENT]


@pytest.mark.classic
def test_the_classic_numeric_template_passes_on_every_math_shape(tmp_path):
    result = run(TEMPLATES / "classic-numeric", fx.write_rows(tmp_path, template_rows()))
    assert result.exit_code() == 0, not_passed(result)
    assert all(status(result)[c] == "pass" for c in SHAPE_CHECKS), not_passed(result)
    assert not warnings(result)
    assert result.data["probes"]["rows"] > 5  # the rows of the shapes the first five lack were probed too


@pytest.mark.v1
def test_the_v1_numeric_template_passes_on_every_math_shape(tmp_path):
    result = run(TEMPLATES / "v1-numeric", fx.write_rows(tmp_path, template_rows()))
    assert result.exit_code() == 0, not_passed(result)
    assert all(status(result)[c] == "pass" for c in SHAPE_CHECKS), not_passed(result)
    assert not warnings(result)


# -- defects users write into a math reward --------------------------------------------------------

# A numeric comparison through math-verify's parse (sympy), else the texts: what users write to "be lenient".
_VALUE = """
def _value(text):
    from math_verify import parse
    try:
        return complex(parse('\\\\boxed{' + text + '}')[0].evalf())
    except Exception:
        return None


def _math_verify(given, gold):
    from math_verify import parse, verify
    try:
        return verify(parse('\\\\boxed{' + gold + '}'), parse('\\\\boxed{' + given + '}'))
    except Exception:
        return False
"""

MATH_DEFECTS = {
    # |given - gold| < 0.05: 3.14 earns \pi
    "abs_tolerance": _VALUE
    + """
def correct(completion, answer, parser):
    given = parser.parse_answer(completion) or ''
    a, b = _value(given), _value(answer)
    if a is not None and b is not None:
        return 1.0 if abs(a - b) < 0.05 else 0.0
    return 1.0 if _math_verify(given, answer) else 0.0
""",
    # within 1% of the gold: 3.14 earns \pi, 1001 earns 1000
    "relative_tolerance": _VALUE
    + """
def correct(completion, answer, parser):
    given = parser.parse_answer(completion) or ''
    a, b = _value(given), _value(answer)
    if a is not None and b is not None:
        return 1.0 if abs(a - b) <= 0.01 * abs(b) else 0.0
    return 1.0 if _math_verify(given, answer) else 0.0
""",
    # a tuple's entries compared as a set: (\frac{\pi}{2}, 3) earns (3, \frac{\pi}{2})
    "tuple_as_set": _VALUE
    + """
def _entries(text):
    t = text.replace('\\\\left', '').replace('\\\\right', '').strip()
    if t[:1] == '(' and t[-1:] == ')':
        return sorted(p.strip() for p in t[1:-1].split(','))
    return None


def correct(completion, answer, parser):
    given = parser.parse_answer(completion) or ''
    a, b = _entries(given), _entries(answer)
    if a is not None and b is not None and len(b) > 1:
        return 1.0 if a == b else 0.0
    return 1.0 if _math_verify(given, answer) else 0.0
""",
    # open and closed ends not told apart: (-2, 7] earns [-2,7]
    "interval_brackets": _VALUE
    + """
def _open(text):
    return text.replace('[', '(').replace(']', ')')


def correct(completion, answer, parser):
    given = parser.parse_answer(completion) or ''
    return 1.0 if _math_verify(_open(given), _open(answer)) else 0.0
""",
    # a normalised string comparison: 14/3 for \\frac{14}{3}, 0.5 for \\frac12, 2*sqrt(3) earn nothing
    "normalised_string": """
def _norm(text):
    t = text.replace('\\\\left', '').replace('\\\\right', '').replace('\\\\dfrac', '\\\\frac').replace('$', '')
    return ''.join(t.split()).lower()


def correct(completion, answer, parser):
    return 1.0 if _norm(parser.parse_answer(completion) or '') == _norm(answer) else 0.0
""",
}


@pytest.mark.classic
@pytest.mark.parametrize(
    "defect, check, named",
    [
        ("abs_tolerance", "near_misses", "decimal_approximation"),
        ("relative_tolerance", "near_misses", "decimal_approximation"),
        ("tuple_as_set", "near_misses", "swapped_order"),
        ("interval_brackets", "near_misses", "flipped_bracket"),
        ("normalised_string", "number_forms", "slash_fraction"),
    ],
)
def test_a_math_reward_defect_fails_the_check_that_names_it(tmp_path, defect, check, named):
    path = fx.write_env(tmp_path, defect, MATH_DEFECTS[defect], None)
    result = run(path, fx.write_rows(tmp_path, template_rows()))
    assert status(result)[check] == "fail", not_passed(result)
    assert named in message(result, check)
    assert result.exit_code() == 1


@pytest.mark.classic
def test_a_relative_tolerance_pays_the_next_integer_on_large_golds(tmp_path):
    path = fx.write_env(tmp_path, "relative_tolerance", MATH_DEFECTS["relative_tolerance"], None)
    rows = [{"question": f"How many ways are there? ({i})", "answer": str(120 + 7 * i)} for i in range(6)]
    result = run(path, fx.write_rows(tmp_path, rows))
    assert status(result)["near_misses"] == "fail"
    assert "off_by_one" in message(result, "near_misses") and "relative tolerance" in message(result, "near_misses")


@pytest.mark.classic
def test_the_refused_share_is_named(tmp_path):
    path = fx.write_env(tmp_path, "normalised_string", MATH_DEFECTS["normalised_string"], None)
    rows = [{"question": f"Compute the value {i}.", "answer": g} for i, g in enumerate(golds_of("fraction") * 2)]
    result = run(path, fx.write_rows(tmp_path, rows))
    assert status(result)["number_forms"] == "fail"
    assert "equivalent spellings tried (" in message(result, "number_forms")


# -- verifiers' own MathRubric: math-verify as it is -----------------------------------------------

MATH_RUBRIC_ENV = """
import verifiers as vf
from datasets import load_dataset


def load_environment(dataset_path="data.jsonl"):
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    rubric = vf.MathRubric()
    return vf.SingleTurnEnv(dataset=dataset, system_prompt="Answer inside \\\\boxed{}.", parser=rubric.parser, rubric=rubric)
"""


@pytest.mark.classic
def test_math_rubric_pays_a_small_numbers_next_last_digit_and_only_warns_on_cosmetic_spellings(tmp_path):
    """math-verify rounds to 6 places: 0.0000673 earns .0000672 (a wrong answer paid: fail). Its refusals of
    90° or 2\\,220 are strictness, not a wrong payment: warnings."""
    env = tmp_path / "rubric_env.py"
    env.write_text(MATH_RUBRIC_ENV)
    small = [
        {"question": f"Compute the probability {i}.", "answer": g} for i, g in enumerate([".0000672", "0.0000315"])
    ]
    result = run(env, fx.write_rows(tmp_path, small + [{"question": "Find the angle in degrees.", "answer": "90"}]))
    assert status(result)["near_misses"] == "fail" and "last_digit" in message(result, "near_misses")
    assert status(result)["number_forms"] == "warn" and "degrees_sign" in message(result, "number_forms")
