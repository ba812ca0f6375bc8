"""inspect_dataset on MATH answers (issue 33): golds in forms the format detector does not match but the numeric
templates score correctly (complex numbers 6 - 5i, base-n 52_8) are reported as read, never as rows to normalise;
only golds math-verify cannot read back (unbalanced braces, an empty \\text{}) get the normalise hint."""

from __future__ import annotations

import json

import pytest
from conftest import assert_result, run_script

from vlab.inspect.formats import detect_answer_format
from vlab.kinds.number.values import well_formed_math

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once


def good(i: int) -> str:
    """A MATH gold the math format matches: integers, fractions, roots, tuples, polynomials (all distinct)."""
    forms = [str(i + 3), f"\\frac{{{i}}}{{{i + 7}}}", f"{i}\\sqrt{{5}}", f"\\left( {i}, \\frac{{\\pi}}{{2}} \\right)"]
    return forms[i % 4] if i % 8 != 7 else f"x^2+{i}x+10"


OTHER_FORMS = {41: "6 - 5i", 43: "52_8", 45: "-3 + 4i"}  # row -> gold math-verify reads as written
BROKEN = {42: "\\frac{1}{", 44: "\\text{}"}  # row -> gold no reply can write back


def math_rows(golds: dict[int, str], n: int = 60) -> list[dict]:
    rows = []
    for i in range(n):
        answer = golds.get(i, good(i))
        rows.append(
            {
                "problem": f"Problem {i}: find the value.",
                "solution": f"Working. Hence the answer is {answer}.",
                "answer": answer,
                "subject": "Algebra",
                "level": 1 + i % 5,
            }
        )
    return rows


def inspect_json(tmp_path, rows: list[dict]) -> dict:
    path = tmp_path / "math.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = run_script("inspect_dataset", str(path), "--json")
    assert "Traceback" not in r.stderr, r
    return assert_result(r.json, "inspect_dataset", 0)


def checks(obj: dict) -> dict[str, dict]:
    return {c["id"]: c for c in obj["checks"]}


def test_other_forms_are_read_and_only_broken_golds_are_listed(tmp_path):
    obj = inspect_json(tmp_path, math_rows(OTHER_FORMS | BROKEN))
    fmt = obj["data"]["answer_format"]
    assert fmt["type"] == "math" and sorted(fmt["non_matching_rows"]) == sorted([*OTHER_FORMS, *BROKEN])
    assert sorted(m["row"] for m in fmt["read_as_written"]) == sorted(OTHER_FORMS)
    assert sorted(fmt["not_read"]) == sorted(BROKEN)
    by_id = checks(obj)
    warning = by_id["answer-format"]
    assert warning["status"] == "warn" and "normalise" in warning["hint"]
    listed = warning["message"].split("not matching: rows ")[1]
    assert all(str(row) in listed for row in BROKEN)
    assert not any(str(row) in listed for row in OTHER_FORMS)  # 6 - 5i and 52_8 are never to be normalised
    accepted = by_id["answer-forms"]
    assert accepted["status"] == "pass" and "6 - 5i" in accepted["message"] and "52_8" in accepted["message"]
    assert "normalise" not in accepted["message"]


def test_other_forms_alone_raise_no_warning(tmp_path):
    obj = inspect_json(tmp_path, math_rows(OTHER_FORMS))
    by_id = checks(obj)
    assert by_id["answer-format"]["status"] == "pass", by_id["answer-format"]
    assert "answer-forms" in by_id["answer-format"]["message"]
    assert by_id["answer-forms"]["status"] == "pass" and "-3 + 4i" in by_id["answer-forms"]["message"]
    assert not [c for c in obj["checks"] if c["status"] == "warn" and c["id"].startswith("answer")]


def test_broken_golds_alone_are_listed_as_before(tmp_path):
    obj = inspect_json(tmp_path, math_rows(BROKEN))
    by_id = checks(obj)
    assert by_id["answer-format"]["status"] == "warn" and "rows 42, 44" in by_id["answer-format"]["message"]
    assert "answer-forms" not in by_id


@pytest.mark.parametrize(
    "value, ok",
    [
        ("\\frac{1}{2}", True),
        ("\\{1, 2\\}", True),
        ("\\left\\{ 1 \\right\\}", True),
        ("\\text{Evelyn}", True),
        ("\\frac{1}{", False),
        ("x}", False),
        ("\\text{}", False),
        ("{ }", False),
        (3, True),
    ],
)
def test_well_formed_math(value, ok):
    assert well_formed_math(value) is ok


def test_a_broken_latex_gold_does_not_match_the_math_format():
    rows = [{"answer": good(i)} for i in range(24)] + [{"answer": "\\frac{1}{"}]
    fmt = detect_answer_format(rows, "answer")
    assert fmt["type"] == "math" and [m["row"] for m in fmt["non_matching"]] == [24]
    assert fmt["non_matching_rows"] == [24]
