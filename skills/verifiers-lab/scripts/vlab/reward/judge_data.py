"""Judge-scored data: the checks the exact-answer modes make on their data, made for a judge
(``judge_data``), and the probes from the row's own answer lists (``judge_answer_lists``).

A row's answer lists (answers that count as right besides the reference, answers that count as wrong) are
read from the row's fields (the judge templates' ``correct_answers`` / ``incorrect_answers``) or, for an
environment that keeps them elsewhere, from the row's record in the data file --env-args names
(``data_file``), by the column names inspect_dataset recognises (``inspect.roles``). Lists are parsed by
the judge templates' own ``answer_list`` (a list, a JSON list, ';' or '|' separated text).

``judge_data`` fails (exit 1) when the data cannot make a sound judge reward: a reference that is empty,
a reference that is one of its row's wrong answers (the reference taken from the wrong-answer column),
a prompt that takes a handful of values over many rows (built from a category column, not the question).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

from vlab.core.result import Result
from vlab.core.templatecode import run_template_definitions
from vlab.env.types import Row
from vlab.inspect.roles import CORRECT_LIST_NAMES, INCORRECT_LIST_NAMES, normalise
from vlab.kinds.rows import row_fields
from vlab.reward import probes as rp
from vlab.reward.judge_server import overlap

JUDGE_TEMPLATE = ("v1-judge", "v1_judge.py")
FEW_PROMPTS_ROWS = 10  # the distinct-prompt check needs at least this many rows
FEW_PROMPTS_SHARE = 0.2  # ... and fails when the distinct prompts are at most this share of them
LISTED = ("listed_correct", "listed_incorrect")


@cache
def _answer_list():
    return run_template_definitions(*JUDGE_TEMPLATE, ("answer_list",), {"json": json})["answer_list"]


def answer_list(value: Any) -> list[str]:
    return _answer_list()(value)


def row_lists(row: Row, record: dict[str, Any] | None = None) -> tuple[list[str], list[str], str | None]:
    """(right answers besides the reference, wrong answers, the wrong answers' column) of a row."""
    found: dict[str, tuple[list[str], str]] = {}
    for source in (row_fields(row), record or {}):
        for key, value in source.items():
            name = normalise(str(key))
            for role, names in (("right", CORRECT_LIST_NAMES), ("wrong", INCORRECT_LIST_NAMES)):
                if role not in found and name in names and value not in (None, "", [], {}):
                    items = answer_list(value) if not isinstance(value, dict) else []
                    if items:
                        found[role] = (items, str(key))
    right, _ = found.get("right", ([], None))
    wrong, column = found.get("wrong", ([], None))
    return right, wrong, column


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()).strip(" .") == " ".join(b.lower().split()).strip(" .")


def list_probes(gold: str, right: list[str], wrong: list[str]) -> list[tuple[str, str]]:
    """An answer the data lists as right (not the reference itself) and the one it lists as wrong that is
    closest to the reference."""
    out = []
    other = next((a for a in right if not _same(a, gold)), None)
    if other:
        out.append(("listed_correct", other))
    # the wrong answer closest to the reference: a judge never shown the wrong answers pays it first
    bad = max((a for a in wrong if not _same(a, gold)), key=lambda a: overlap(gold, a), default=None)
    if bad:
        out.append(("listed_incorrect", bad))
    return out


def _squash(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .")


def lists_shown(rows: list[Row], records: dict[int, dict[str, Any]], prompts: list[str]) -> dict[int, dict[str, Any]]:
    """Row index -> which of its answer lists the judge prompt sent for its gold leaves out: {"right": column or
    None, "wrong": column or None}, for the rows whose judge prompt was seen (the one that holds its reference)."""
    squashed = [_squash(p) for p in prompts]
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        gold = rp.gold_value(row.answer)
        if not gold or not squashed:
            continue
        mine = [p for p in squashed if _squash(gold) in p]
        if not mine:
            continue
        right, wrong, wrong_column = row_lists(row, records.get(row.index))
        right_column = _list_column(row, records.get(row.index), CORRECT_LIST_NAMES)
        others = [a for a in right if not _same(a, gold)]
        found: dict[str, Any] = {}
        if others and not any(_squash(a) in p for a in others for p in mine):
            found["right"] = right_column or "the correct answers"
        if wrong and not any(_squash(a) in p for a in wrong for p in mine):
            found["wrong"] = wrong_column or "the incorrect answers"
        out[row.index] = found
    return out


def _list_column(row: Row, record: dict[str, Any] | None, names: list[str]) -> str | None:
    for source in (row_fields(row), record or {}):
        for key, value in source.items():
            if normalise(str(key)) in names and value not in (None, "", [], {}):
                return str(key)
    return None


def check_answer_lists(
    result: Result, by_row: dict, margin: float, shown: dict[int, dict[str, Any]] | None = None
) -> None:
    """judge_answer_lists: a judge prompt that leaves out a list of right or wrong answers the data has fails
    (``shown``: what the judge prompts sent for the golds left out, ``lists_shown``), and so does what follows from
    it: an answer the row lists as wrong earning the gold's reward, or one it lists as right earning less (the
    rows whose other right answers score lower are named)."""
    paid, refused, tried = [], [], 0
    for r, p in by_row.items():
        gold = p["gold"].value
        if gold is None:
            continue
        for pid in LISTED:
            s = p.get(pid)
            if s is None or s.value is None:
                continue
            tried += 1
            if pid == "listed_incorrect" and s.value >= gold:
                paid.append((r, f"row {r}: {s.value:g} >= gold {gold:g}"))
            if pid == "listed_correct" and s.value < gold - margin:
                refused.append((r, f"row {r}: {s.value:g} vs gold {gold:g}"))
    missing: dict[str, list[tuple[int, str]]] = {}
    for r, found in (shown or {}).items():
        for which, column in found.items():
            missing.setdefault(which, []).append((r, column))
    if not tried and not missing:
        return
    problems, steps = [], []
    for which, flag, constant in (
        ("right", "--correct-answers-column", "CORRECT_ANSWERS_COLUMN"),
        ("wrong", "--incorrect-answers-column", "INCORRECT_ANSWERS_COLUMN"),
    ):
        rows = missing.get(which)
        if rows:
            column = rows[0][1]
            problems.append(
                f"the judge prompt leaves out the row's list of {'right' if which == 'right' else 'wrong'} answers "
                f"({column!r}) on {len(rows)} of {len(shown or {})} rows seen (example_id "
                f"{', '.join(str(r) for r, _ in rows[:10])})"
            )
            steps.append(f"show the judge the row's {column!r} list ({constant}; new_env {flag})")
    if paid:
        problems.append(
            f"an answer the data lists as wrong earned the gold's reward ({paid[0][1]}; {len(paid)} rows): the judge "
            "is not shown the row's incorrect answers"
        )
        if not missing.get("wrong"):
            steps.append(
                "show the judge the row's incorrect answers (INCORRECT_ANSWERS_COLUMN; new_env --incorrect-answers-column)"
            )
    if refused:
        problems.append(
            f"an answer the data lists as right earns less than the gold on {len(refused)} rows (example_id "
            f"{', '.join(str(r) for r, _ in refused[:10])}; {refused[0][1]}): the policy is paid less for the "
            "data's other right answers than for the reference's wording"
        )
        if not missing.get("right"):
            steps.append(
                "show the judge the row's correct answers (CORRECT_ANSWERS_COLUMN; new_env --correct-answers-column)"
            )
    if problems:
        result.fail("judge_answer_lists", "; ".join(problems), "; ".join(dict.fromkeys(steps)))
        for step in dict.fromkeys(steps):
            result.step(step)
        return
    result.passed(
        "judge_answer_lists",
        f"the judge prompt shows the row's answer lists, answers the data lists as wrong earn less than the gold, "
        f"those it lists as right about as much ({tried} probes)",
    )


def check_judge_data(result: Result, rows: list[Row], records: dict[int, dict[str, Any]]) -> None:
    """judge_data: every reference present, none of them one of its row's wrong answers, and prompts that
    vary with the rows (a prompt built from a category column takes a handful of values)."""
    if not rows:
        return
    problems: list[str] = []
    steps: list[str] = []
    golds = {r.index: rp.gold_value(r.answer) for r in rows}
    empty = [i for i, g in golds.items() if not (g and str(g).strip())]
    if empty:
        problems.append(f"{len(empty)} of {len(rows)} rows have no reference answer (example_id {empty[0]})")
        steps.append("drop the rows without a reference, or fill them: the judge grades against nothing there")
    wrong_refs, column = [], None
    for r in rows:
        _, wrong, col = row_lists(r, records.get(r.index))
        items = answer_list(str(golds.get(r.index) or ""))  # a reference that is a whole list: each of its items
        if wrong and items and all(any(_same(i, w) for w in wrong) for i in items):
            wrong_refs.append(r.index)
            column = column or col
    if wrong_refs:
        problems.append(
            f"the reference of {len(wrong_refs)} of {len(rows)} rows is one of that row's incorrect answers "
            f"({column!r}; example_id {wrong_refs[0]}): the reference is taken from the wrong-answer column"
        )
        steps.append("map ANSWER_COLUMN to the column of right answers (new_env --answer-column)")
    prompts = Counter(rp.user_text(r).strip() for r in rows)
    if len(rows) >= FEW_PROMPTS_ROWS and len(prompts) <= max(2, FEW_PROMPTS_SHARE * len(rows)):
        (top, n), distinct_golds = prompts.most_common(1)[0], len({str(g) for g in golds.values()})
        if distinct_golds > len(prompts):
            problems.append(
                f"the prompt takes only {len(prompts)} distinct texts over {len(rows)} rows ({top[:60]!r} on {n}) "
                f"while the references take {distinct_golds}: it is built from a category column, not the question"
            )
            steps.append("map QUESTION_COLUMN to the column holding each row's question (new_env --question-column)")
    if problems:
        result.fail("judge_data", "; ".join(problems), steps[0])
        for step in steps:
            result.step(step)
        return
    result.passed(
        "judge_data",
        f"{len(rows)} rows: every reference present and none of them a listed wrong answer; {len(prompts)} "
        "distinct prompts",
    )
