"""test_reward on answers held as lists (#49): the short-answer and numeric templates pass with no new warning;
each defect the issue found (the first alias only, case, a substring, any listed candidate, the list's text as the
gold; several answers as a set, in order only, read through brackets, in one box only, a prompt that says nothing)
fails, or warns, with its own check. v1 on 0.4.0, the templates also classic on 0.3.1."""

from __future__ import annotations

from pathlib import Path

import answer_list_fixtures as fx
import pytest
from conftest import SKILL_ROOT

from vlab.core.result import Result
from vlab.kinds.number.equivalence import template_answers
from vlab.kinds.short_answer.compare import aliases_of
from vlab.reward.checks import TestRewardRequest, run_test_reward

TEMPLATES = SKILL_ROOT / "templates" / "environments"
ALIAS_CHECKS = ("aliases", "alias_forms", "other_aliases", "aliases_reachable")
SEVERAL_CHECKS = ("several_answers", "answer_unit", "several_prompt")


def run(env: Path, data: Path, **opts) -> Result:
    result = Result("test_reward")
    opts.setdefault("reach_seconds", 20)
    run_test_reward(TestRewardRequest(env=str(env), env_args={"dataset_path": str(data)}, **opts), result)
    return result


def status(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def message(result: Result, cid: str) -> str:
    return next(c.message for c in result.checks if c.id == cid)


def not_passed(result: Result) -> list[tuple[str, str, str]]:
    """The checks that neither passed nor skipped; speed aside (a loaded machine's first math-verify call)."""
    return [(c.id, c.status, c.message) for c in result.checks if c.status not in ("pass", "skip") and c.id != "speed"]


def _template(tmp_path: Path, name: str, **columns) -> Path:
    """The template, its column constants set as new_env would."""
    module = name.replace("-", "_")
    env = tmp_path / module
    env.mkdir()
    text = (TEMPLATES / name / f"{module}.py").read_text()
    for constant, value in columns.items():
        text = text.replace(f'{constant} = "', f'{constant} = "{value}"  # was "', 1)
    (env / f"{module}.py").write_text(text)
    return env


# -- short answers with aliases ------------------------------------------------------------------------------------


def _short_answer_passes(tmp_path: Path, template: str) -> None:
    result = run(_template(tmp_path, template), fx.write_qa(tmp_path))
    assert result.exit_code() == 0 and not not_passed(result), not_passed(result)
    assert result.data["kinds"]["rows"] == {"short_answer": len(fx.QA)}  # "2017" and "one" are no numbers here
    assert all(status(result)[c] == "pass" for c in ALIAS_CHECKS), status(result)
    assert not {"near_misses", "number_forms"} & set(status(result))
    probes = {p["probe"] for p in result.data["probes"]["by_probe"]}
    assert {"alias:1", "alias_form:upper_case", "wrong:other_alias", "hack:alias_candidates"} <= probes
    assert result.data["probes"]["aliases_reachable"]["scored"] == sum(len(aliases_of(a)) - 1 for _, a in fx.QA)


@pytest.mark.v1
def test_the_v1_short_answer_template_passes_every_alias_check(tmp_path):
    _short_answer_passes(tmp_path, "v1-short-answer")


@pytest.mark.classic
def test_the_classic_short_answer_template_passes_every_alias_check(tmp_path):
    _short_answer_passes(tmp_path, "classic-short-answer")


@pytest.mark.v1
def test_a_users_exact_match_over_an_answer_list_passes_without_numeric_checks(tmp_path):
    rows = tmp_path / "nq.jsonl"
    rows.write_text(fx.write_qa(tmp_path).read_text().replace('{"question": "what grade', '{"skip": "', 1))
    rows.write_text("".join(line + "\n" for line in rows.read_text().splitlines() if '"skip"' not in line))
    result = run(fx.write_qa_env(tmp_path, "exact", answer_list=True), rows)
    assert result.exit_code() == 0, not_passed(result)
    assert set(result.data["kinds"]["rows"]) == {"short_answer"} and status(result)["aliases"] == "pass"


@pytest.mark.v1
@pytest.mark.parametrize(
    "compare, check, verdict, shown",
    [
        ("first_alias_only", "aliases", "fail", "reads only the first alias"),
        ("case_sensitive", "alias_forms", "warn", "upper_case"),
        ("substring", "reward_hacking", "fail", "hack:gold_in_longer"),
        ("any_listed", "reward_hacking", "fail", "hack:alias_or"),
    ],
)
def test_an_alias_defect_fails_or_warns_with_its_check(tmp_path, compare, check, verdict, shown):
    result = run(fx.write_qa_env(tmp_path, compare), fx.write_qa(tmp_path))
    assert status(result)[check] == verdict, not_passed(result)
    assert shown in message(result, check)
    assert result.exit_code() == (1 if verdict == "fail" else 0), not_passed(result)


@pytest.mark.v1
def test_the_classification_template_on_alias_lists_fails_the_gold(tmp_path):
    """The issue's road: the classification template stores the Python list's text as the gold."""
    env = _template(tmp_path, "v1-classification", TEXT_COLUMN="question", LABEL_COLUMN="answer")
    result = run(env, fx.write_qa(tmp_path))
    assert result.exit_code() == 1
    assert status(result)["gold_reward"] == "fail" and status(result)["aliases"] == "fail", not_passed(result)
    assert "the list's text" in message(result, "aliases")


# -- several answers and units -------------------------------------------------------------------------------------


def _several_passes(tmp_path: Path, template: str) -> None:
    env = _template(tmp_path, template, ANSWER_COLUMN="final_answer")
    result = run(env, fx.write_olympiad(tmp_path))
    assert result.exit_code() == 0 and not not_passed(result), not_passed(result)
    assert all(status(result)[c] == "pass" for c in SEVERAL_CHECKS), status(result)
    probes = {p["probe"] for p in result.data["probes"]["by_probe"]}
    assert {"several:reordered", "several:dropped_repeat", "several:as_interval", "unit:unit_after"} <= probes


@pytest.mark.v1
def test_the_v1_numeric_template_passes_several_answers_and_units(tmp_path):
    _several_passes(tmp_path, "v1-numeric")


@pytest.mark.classic
def test_the_classic_numeric_template_passes_several_answers_and_units(tmp_path):
    _several_passes(tmp_path, "classic-numeric")


@pytest.mark.v1
@pytest.mark.parametrize(
    "compare, verdict, shown",
    [
        ("as_set", "fail", "dropped_repeat"),
        ("ordered", "fail", "another order are refused"),
        ("brackets_ignored", "fail", "as_interval"),
        ("last_box_only", "warn", "separate_boxes"),
    ],
)
def test_a_several_answers_defect_fails_or_warns_with_its_check(tmp_path, compare, verdict, shown):
    data = fx.write_several_rows(tmp_path, template_answers().reference_of)
    result = run(fx.write_several_env(tmp_path, compare), data)
    assert status(result)["several_answers"] == verdict, not_passed(result)
    assert shown in message(result, "several_answers")
    assert status(result)["several_prompt"] == "warn"  # its prompt never says how to give several answers
    assert "never name it" in message(result, "several_prompt")  # nor the unit
