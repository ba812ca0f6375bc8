"""Answers held as lists: how a cell holds its answers (a JSON or Arrow list, a list written as text, a record of
aliases such as TriviaQA's {"value", "aliases"}) and what the list means for the column as a whole.

The rule that reads a cell is the templates' own ``answer_list`` (its home is the v1-short-answer template; the
numeric and short-answer templates carry the same code, tests/test_templates.py checks it), run from the template's
source, so inspect reads a list as the environment will. A column is a list column when most of its values are held
as lists; it is then one of three shapes (``ListColumn.shape``):

- ``one_element``: every list holds one answer, unwrapped (OlympiadBench's ``final_answer``); a flag column may still
  say a row's one text holds several answers (``is_multiple_answer``: the numeric templates' MULTIPLE_COLUMN);
- ``several``: lists of numbers or math with several items: answers that must all be given (a list of solutions);
- ``aliases``: lists of short texts: any one is right (Natural Questions, TriviaQA, WebQuestions, SQuAD).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from vlab.core.templatecode import run_template_definitions

ALIAS_TEMPLATE = ("v1-short-answer", "v1_short_answer.py")
LIST_RULE = ("_ANSWER_KEYS", "answer_list")  # the definitions read from the template
PLAIN = 0.9  # the share of values held as lists (and of items read as numbers) that says what the column is


@cache
def _rule():
    return run_template_definitions(*ALIAS_TEMPLATE, LIST_RULE, {"ast": ast, "json": json})["answer_list"]


def answer_list(raw: Any) -> list[str]:
    """Every answer a cell holds, as text (the templates' ``answer_list``): a list, a list written as text (of
    texts only: '[0, 3)' stays an interval), a record of aliases, or one value; [] for none."""
    return _rule()(raw)


def held_as(value: Any) -> str | None:
    """How a cell holds a list of answers: "lists", "lists written as text", "records of answers"; None for a
    plain value (a text that is no list of texts, a number)."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, (int, float, str))):
        return "lists"
    if isinstance(value, dict):
        return "records of answers" if answer_list(value) else None
    if isinstance(value, str) and re.fullmatch(r"\s*\[.*\]\s*", value, re.S):
        text = value.strip()
        if answer_list(text) != [text]:  # it parsed as a list of texts
            return "lists written as text"
    return None


@dataclass
class ListColumn:
    """What a list column holds: how (``held_as``), its shape (``one_element``, ``several``, ``aliases``), how many
    rows hold a list and how many of them more than one answer, the flag column read and the rows it flags."""

    held_as: str
    shape: str
    rows: int
    several_rows: int
    why: str
    flag_column: str | None = None
    flagged_rows: int = 0
    values: list[Any] = field(default_factory=list, repr=False)  # the values the formats' tests then read

    def to_dict(self) -> dict[str, Any]:
        out = {"held_as": self.held_as, "shape": self.shape, "rows": self.rows, "several_rows": self.several_rows}
        out["why"] = self.why
        if self.flag_column:
            out |= {"flag_column": self.flag_column, "flagged_rows": self.flagged_rows}
        return out


def truthy(value: Any) -> bool:
    """A flag cell (True, "true", "yes", 1) as a bool."""
    if isinstance(value, str):
        return value.strip().casefold() in ("true", "yes", "y", "1")
    return bool(value)


def list_column(values: list[Any], flags: list[Any] | None = None, flag_column: str | None = None) -> ListColumn | None:
    """The column's lists, or None when fewer than PLAIN of its present values are held as lists. ``flags``: each
    row's value of a several-answers flag column (``flag_column``), when the data has one."""
    present = [v for v in values if v is not None and not (isinstance(v, str) and not v.strip())]
    how = [held_as(v) for v in present]
    listed = [h for h in how if h]
    if not present or len(listed) < PLAIN * len(present):
        return None
    kind = max(set(listed), key=listed.count)
    items = [answer_list(v) if v is not None else None for v in values]
    several = sum(1 for i in items if i and len(i) > 1)
    flagged = sum(1 for f in flags or [] if f is not None and truthy(f))
    found = ListColumn(kind, "one_element", len(listed), several, "", flag_column if flags else None, flagged)
    if not several:
        found.values = [i[0] if i else None for i in items]
        found.why = "every list holds one answer: unwrapped"
        if flagged:
            found.why += f"; {flagged} rows are flagged by {flag_column!r} as holding several answers in one text"
        return found
    from vlab.kinds.number.values import looks_like_math, parse_number

    every = [x for i in items if i for x in i]
    mathy = sum(1 for x in every if parse_number(x) is not None or looks_like_math(x))
    if mathy >= PLAIN * len(every):
        found.shape = "several"
        found.values = [", ".join(i) if i else None for i in items]
        found.why = (
            f"{several} rows list several numbers or math answers: answers that must all be given (a list of "
            "solutions), in any order"
        )
        return found
    found.shape = "aliases"
    found.values = [i if i else None for i in items]
    found.why = f"{several} rows list several short answers: aliases, any one of them is right"
    return found
