"""Answers held as lists (#49): inspect reads what a list holds (aliases, one answer to unwrap, several answers
with a flag and a unit) and never sends short aliases to a judge; new_env keeps the list (the short-answer
templates) and maps the flag and unit columns (the numeric templates); the templates' own comparison, run as the
pack runs it, pays every alias and several answers in any order, and refuses what the issue found paid."""

from __future__ import annotations

import json

import answer_list_fixtures as fx
import pytest

from vlab.inspect import analyse, read_sample
from vlab.kinds.lists import answer_list, held_as, list_column
from vlab.kinds.number.equivalence import template_answers
from vlab.kinds.number.several import pays
from vlab.kinds.short_answer.compare import matches, normalise

pytestmark = pytest.mark.once


# -- reading a list ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell, expected, how",
    [
        (["14 December 1972 UTC", "December 1972"], ["14 December 1972 UTC", "December 1972"], "lists"),
        ('["Bobby Scott", "Bob Russell"]', ["Bobby Scott", "Bob Russell"], "lists written as text"),
        ("['one', 'one season']", ["one", "one season"], "lists written as text"),  # the Python list's text
        (
            {"value": "Canberra", "aliases": ["Canberra", "Canberra, ACT"]},
            ["Canberra", "Canberra", "Canberra, ACT"],
            "records of answers",
        ),  # TriviaQA
        (
            {"text": ["Denver Broncos", "Broncos"], "answer_start": [177, 249]},
            ["Denver Broncos", "Broncos"],
            "records of answers",
        ),  # SQuAD
        ("[0, 3)", ["[0, 3)"], None),  # an interval, never a list
        ("[1, 3]", ["[1, 3]"], None),  # a closed interval of numbers: a list of texts only is a list
        ("Paris", ["Paris"], None),
        (["16,3,1,1"], ["16,3,1,1"], "lists"),  # repeats are kept
    ],
)
def test_a_cell_holds_its_answers_as_the_templates_read_them(cell, expected, how):
    assert answer_list(cell) == expected
    assert held_as(cell) == how


def test_a_list_column_is_aliases_several_answers_or_one_answer_to_unwrap():
    aliases = list_column([a for _, a in fx.QA])
    assert aliases.shape == "aliases" and aliases.several_rows == 8 and aliases.values[0] == fx.QA[0][1]
    one = list_column([a for _, a, _, _ in fx.OLYMPIAD], [m for _, _, m, _ in fx.OLYMPIAD], "is_multiple_answer")
    assert one.shape == "one_element" and one.values[0] == "$1,3$" and one.flagged_rows == 5
    several = list_column([["1", "3"], ["2"], ["-2", "0", "2"]])
    assert several.shape == "several" and several.values == ["1, 3", "2", "-2, 0, 2"]
    assert list_column(["Paris", "Rome", "[0, 3)"]) is None


# -- inspect ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("as_text", [False, True], ids=["json-lists", "lists-as-text-csv"])
def test_inspect_reads_alias_lists_as_short_answers_never_a_judge(tmp_path, as_text):
    data = analyse(read_sample(str(fx.write_qa(tmp_path, "nq.csv" if as_text else "nq.jsonl", as_text))))
    fmt, rec = data["answer_format"], data["recommendation"]
    assert fmt["type"] == "answer_aliases" and fmt["match_share"] == 1.0
    assert fmt["answer_list"]["shape"] == "aliases"
    assert fmt["answer_list"]["held_as"] == ("lists written as text" if as_text else "lists")
    assert rec["templates"] == {"classic": "classic-short-answer", "v1": "v1-short-answer"}
    assert rec["reward_strategy"].startswith("exact match after QA normalisation")
    assert "new_env" in rec["snippets"]["v1"]  # the template reads the lists: no snippet that reads their text


def test_inspect_reads_arrow_lists_and_sends_long_listed_answers_to_a_judge(tmp_path):
    from datasets import Dataset

    path = tmp_path / "nq.parquet"
    Dataset.from_list([{"question": q, "answer": a} for q, a in fx.QA]).to_parquet(str(path))
    fmt = analyse(read_sample(str(path)))["answer_format"]
    assert fmt["type"] == "answer_aliases" and fmt["answer_list"]["held_as"] == "lists"
    long = [["The moon landing of Apollo 17 happened in the middle of December of the year 1972, UTC time."]] * 12
    rows = tmp_path / "long.jsonl"
    rows.write_text("".join(json.dumps({"question": f"q{i}", "answer": a * 2}) + "\n" for i, a in enumerate(long)))
    assert analyse(read_sample(str(rows)))["answer_format"]["type"] == "long_text"


def test_inspect_unwraps_one_element_lists_and_reads_the_several_answers_flag_and_the_unit(tmp_path):
    data = analyse(read_sample(str(fx.write_olympiad(tmp_path))))
    fmt, roles, rec = data["answer_format"], data["roles"], data["recommendation"]
    assert roles["answer"]["column"] == "final_answer"
    assert roles["multiple"]["column"] == "is_multiple_answer" and roles["unit"]["column"] == "unit"
    assert fmt["type"] in ("math", "number") and rec["template"] == "v1-numeric"
    assert fmt["answer_list"] == {
        "held_as": "lists",
        "shape": "one_element",
        "rows": 10,
        "several_rows": 0,
        "why": fmt["answer_list"]["why"],
        "flag_column": "is_multiple_answer",
        "flagged_rows": 5,
    }
    assert rec["column_mapping"]["multiple"] == "is_multiple_answer" and rec["column_mapping"]["unit"] == "unit"


def test_a_flag_or_unit_column_beside_text_answers_is_no_role(tmp_path):
    rows = tmp_path / "qa.jsonl"
    rows.write_text("".join(json.dumps({"question": q, "answer": a[0], "unit": "chapter"}) + "\n" for q, a in fx.QA))
    data = analyse(read_sample(str(rows)))
    assert data["roles"]["unit"] is None and data["answer_format"]["type"] == "short_text"


# -- new_env ------------------------------------------------------------------------------------------------------


def _new_env(tmp_path, data_file, *extra):
    from conftest import run_script

    report = tmp_path / "inspect.json"
    report.write_text(run_script("inspect_dataset", str(data_file), "--json").stdout)
    out = run_script(
        "new_env", "my-env", "--from-inspect", str(report), "--path", str(tmp_path / "envs"), "--json", *extra
    )
    return json.loads(out.stdout), (tmp_path / "envs" / "my_env" / "my_env.py").read_text()


def test_new_env_keeps_alias_lists_and_never_lists_the_answers_in_the_prompt(tmp_path):
    result, module = _new_env(tmp_path, fx.write_qa(tmp_path))
    assert result["data"]["template"] == "v1-short-answer" and result["status"] == "pass"
    assert 'ANSWER_COLUMN = "answer"' in module and "aliases: list[str]" in module
    assert "December 1972" not in module  # the module holds no row's answer (the prompt lists none)


def test_new_env_maps_the_several_answers_flag_and_the_unit_into_the_numeric_template(tmp_path):
    result, module = _new_env(tmp_path, fx.write_olympiad(tmp_path))
    assert result["data"]["template"] == "v1-numeric"
    assert result["data"]["columns"]["MULTIPLE_COLUMN"] == "is_multiple_answer"
    assert result["data"]["columns"]["UNIT_COLUMN"] == "unit" and 'ANSWER_COLUMN = "final_answer"' in module
    _, other = _new_env(tmp_path / "plain", _numbers(tmp_path))
    assert "MULTIPLE_COLUMN = None" in other and "UNIT_COLUMN = None" in other  # the data has neither


def _numbers(tmp_path):
    (tmp_path / "plain").mkdir(exist_ok=True)
    path = tmp_path / "plain" / "numbers.jsonl"
    path.write_text(
        "".join(json.dumps({"question": f"What is {i} + {i}?", "answer": str(2 * i)}) + "\n" for i in range(12))
    )
    return path


# -- the templates' comparison, as test_reward runs it -------------------------------------------------------------


@pytest.mark.parametrize(
    "given, paid",
    [
        ("December 1972", True),  # the second alias
        ("december 1972.", True),
        ("\\text{14 December 1972 UTC}", True),
        ("1972", False),
        ("not December 1972", False),
        ("December 19725", False),
        ("December 1972, 14 December 1972 UTC", False),  # a box listing candidates
        ("", False),
    ],
)
def test_the_short_answer_comparison_pays_any_alias_after_qa_normalisation(given, paid):
    assert matches(given, fx.QA[0][1]) is paid


def test_qa_normalisation_keeps_a_decimal_point_and_compares_what_it_would_empty_as_written():
    assert normalise("The U.S. Navy's  A-Team!") == "us navys ateam"
    assert normalise("3.5") == "3.5" and not matches("35", ["3.5"])
    assert matches("a+", ["A+"]) and not matches(".", ["A+"]) and not matches("the", ["A+"])


@pytest.mark.parametrize(
    "given, gold, paid",
    [
        ("3, 1", "1,3", True),  # reordered: a set of solutions
        ("1, 3, 3", "1,3", False),
        ("1", "1,3", False),
        ("[1, 3]", "1,3", False),  # two answers written as an interval
        ("(1, 3)", "1,3", False),
        ("1, 16, 1, 3", "16,3,1,1", True),
        ("16, 3, 1", "16,3,1,1", False),  # a repeated value dropped
        ("(3,4), (1,2)", "(1,2),(3,4)", True),
        ("(2,1), (4,3)", "(1,2),(3,4)", False),  # a tuple keeps its order
        ("84, 69", "$69$,$84$", True),
        ("2, 0, -2", "$-2,0,2$", True),
    ],
)
def test_several_answers_are_paired_in_any_order_each_as_often_as_the_gold_gives_it(given, gold, paid):
    code = template_answers()
    _, answers = code.reference_of([gold], True)
    assert pays(given, answers) is paid


def test_the_reply_gives_several_answers_in_one_box_or_several_in_a_row_and_a_unit_is_optional():
    code = template_answers()
    assert code.boxed_run("So \\boxed{1}, \\boxed{3}.") == ["1", "3"]
    assert code.boxed_run("\\boxed{2} and \\boxed{5}") == ["2", "5"]
    assert code.boxed_run("First \\boxed{7}. Wait, it is wrong: \\boxed{1, 3}") == ["1, 3"]
    assert code.boxed_run("<think>\\boxed{1}") == []
    assert code.without_unit("45 \\text{ minutes}", "minute") == "45"
    assert code.without_unit("\\frac{600}{7} km/h", "km/h") == "\\frac{600}{7}"
    assert code.without_unit("45", "minute") == "45" and code.without_unit("4.2\\%", "%") == "4.2\\%"
    assert code.reference_of(["$69$,$84$"], True) == ("69, 84", ["69", "84"])
    assert code.reference_of(["$\\frac{1}{2}$"], False) == ("\\frac{1}{2}", [])
    assert code.reference_of("['1,3']", None) == ("1,3", [])  # a one-element list's text, unwrapped
    said = code.answer_instructions(["1", "3"], "km/h")
    assert "several answers" in said and "separated by commas" in said and "km/h" in said


def test_inspect_reads_squad_and_triviaqa_records_of_answers_as_aliases(tmp_path):
    squad = tmp_path / "squad.jsonl"
    squad.write_text(
        "".join(
            json.dumps(
                {"title": "t", "context": f"passage {i}", "question": q, "answers": {"text": a, "answer_start": [0]}}
            )
            + "\n"
            for i, (q, a) in enumerate(fx.QA)
        )
    )
    data = analyse(read_sample(str(squad)))
    assert data["roles"]["answer"]["column"] == "answers" and data["roles"]["prompt"]["columns"] == [
        "context",
        "question",
    ]
    assert data["answer_format"]["type"] == "answer_aliases"
    assert data["answer_format"]["answer_list"]["held_as"] == "records of answers"
    trivia = tmp_path / "trivia.jsonl"
    trivia.write_text(
        "".join(json.dumps({"question": q, "answer": {"value": a[0], "aliases": a}}) + "\n" for q, a in fx.QA)
    )
    assert analyse(read_sample(str(trivia)))["answer_format"]["type"] == "answer_aliases"
