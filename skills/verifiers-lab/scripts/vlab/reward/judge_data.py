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


def check_answer_lists(result: Result, by_row: dict, margin: float) -> None:
    """judge_answer_lists: an answer the row lists as wrong earns less than the gold (fail otherwise: the
    judge is never told it is wrong); one it lists as right earns about what the gold earns (a warning
    otherwise: stricter than the data, the judge is not shown the list)."""
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
                paid.append(f"row {r}: {s.value:g} >= gold {gold:g}")
            if pid == "listed_correct" and s.value < gold - margin:
                refused.append(f"row {r}: {s.value:g} vs gold {gold:g}")
    if not tried:
        return
    if paid:
        result.fail(
            "judge_answer_lists",
            f"an answer the data lists as wrong earned the gold's reward ({paid[0]}; {len(paid)} rows): the judge "
            "is not shown the row's incorrect answers",
            "show the judge the row's incorrect answers (the judge templates' INCORRECT_ANSWERS_COLUMN; new_env "
            "--incorrect-answers-column)",
        )
    elif refused:
        result.warn(
            "judge_answer_lists",
            f"an answer the data lists as right earned less than the gold ({refused[0]}; {len(refused)} rows): "
            "the judge is not shown the row's other correct answers, so it is stricter than the data",
            "show the judge the row's correct answers (CORRECT_ANSWERS_COLUMN; new_env --correct-answers-column)",
        )
    else:
        result.passed(
            "judge_answer_lists",
            f"answers the data lists as wrong earn less than the gold, those it lists as right about as much "
            f"({tried} probes)",
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
