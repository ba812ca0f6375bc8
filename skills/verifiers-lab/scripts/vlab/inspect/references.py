"""How long a reply must be: the data's reference solutions, worked solutions and long answers, in tokens.

A completion budget (``max_completion_tokens``, ``sampling.max_tokens``) shorter than the typical reference cuts the
policy off before its answer: an olympiad problem whose worked solution runs to 1,750 characters, or a whole program,
does not fit in 512 tokens, and every cut rollout scores 0. Each row's reference is the longest of its answer (when it
is text, not a list) and its solution-like columns (``SOLUTION_FIELDS``; a list of solutions counts its
median-length one). Tokens are estimated at ``CHARS_PER_TOKEN`` characters a token (erring towards more).

``completion_budget``: the references' median and 75th percentile, and the budget a reply needs: ``MARGIN`` times
the 75th percentile (the reasoning around a program or a solution, written out), rounded up to ``ROUND`` tokens. Read
by inspect_dataset (``data.references``), submit_training (``completion-budget``, on the rehearsed rows and the data
file its arguments name) and local_train (on the data file its environment arguments name): each warns when the
configured budget is below it.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

# Columns holding a worked solution or a reference program (reward.leaks reads the same names: a solution in the
# prompt gives the answer away).
SOLUTION_FIELDS = (
    "solution",
    "solutions",
    "worked_solution",
    "reference_solution",
    "canonical_solution",
    "gold_solution",
    "code",
    "rationale",
    "explanation",
    "reasoning",
    "chain_of_thought",
    "cot",
    "steps",
    "answer",
    "full_answer",
    "generation",
)
CHARS_PER_TOKEN = 3.0  # as reward.budget's estimate: BPE gives ~4 on prose, fewer on code and math
MARGIN = 1.5  # a reply writes the reference and the reasoning around it
ROUND = 256
MIN_REFERENCE_TOKENS = 64  # references shorter than this (a number, a label) say nothing of the reply's length
MAX_RECORDS = 500  # records read for the figures


@dataclass(frozen=True)
class CompletionBudget:
    """The references' lengths in tokens and the completion budget a reply needs."""

    rows: int  # rows with a reference long enough to measure
    median_tokens: int
    p75_tokens: int
    median_chars: int
    needed: int
    source: str  # which columns the references were read from

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "median_tokens": self.median_tokens,
            "p75_tokens": self.p75_tokens,
            "median_chars": self.median_chars,
            "needed_completion_tokens": self.needed,
            "from": self.source,
            "chars_per_token": CHARS_PER_TOKEN,
        }


def budget_verdict(refs: dict[str, Any], configured: int) -> tuple[bool, str]:
    """(does ``configured`` cut the typical reply, the sentence each tool's check prints) for the figures of
    ``CompletionBudget.to_dict``."""
    needed = refs["needed_completion_tokens"]
    return configured < needed, (
        f"the data's references ({refs['from']}) run to a median of {refs['median_tokens']} tokens and "
        f"{refs['p75_tokens']} at the 75th percentile ({refs['rows']} rows): a reply that writes one out with its "
        f"reasoning needs about {needed}"
    )


def _text(value: Any) -> str | None:
    """A field's reference text: a string, or a list's (or a dict's solution list's) median-length string."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("solution", "solutions", "code", "text"):
            if key in value:
                return _text(value[key])
        return None
    if isinstance(value, (list, tuple)):
        items = sorted((v for v in value if isinstance(v, str) and v.strip()), key=len)
        return items[len(items) // 2] if items else None
    return None


def reference_text(record: dict[str, Any], answer: Any = None) -> tuple[str, str] | None:
    """(the row's longest reference text, its column) of a record's solution-like fields and its answer."""
    found = []
    fields = {str(k).lower(): (str(k), v) for k, v in record.items()}
    for name in SOLUTION_FIELDS:
        if name in fields:
            text = _text(fields[name][1])
            if text and text.strip():
                found.append((len(text), text, fields[name][0]))
    if isinstance(answer, str) and answer.strip():
        found.append((len(answer), answer, "the answer"))
    if not found:
        return None
    _, text, column = max(found)
    return text, column


def completion_budget(records: list[dict[str, Any]], answers: list[Any] | None = None) -> CompletionBudget | None:
    """The figures over the records' references (``answers``: each record's gold as the environment holds it);
    None when fewer than a fifth of them (or 3) carry one of ``MIN_REFERENCE_TOKENS`` tokens or more."""
    records = records[:MAX_RECORDS]
    answers = (answers or [None] * len(records))[: len(records)]
    texts: list[tuple[int, str]] = []
    columns: dict[str, int] = {}
    for record, answer in zip(records, answers):
        found = reference_text(record, answer)
        if found is None:
            continue
        text, column = found
        if len(text) / CHARS_PER_TOKEN >= MIN_REFERENCE_TOKENS:
            texts.append((len(text), column))
            columns[column] = columns.get(column, 0) + 1
    if len(texts) < max(3, len(records) // 5):
        return None
    chars = sorted(n for n, _ in texts)
    p75 = chars[min(len(chars) - 1, math.ceil(0.75 * len(chars)) - 1)]
    median = statistics.median(chars)
    tokens = lambda n: math.ceil(n / CHARS_PER_TOKEN)  # noqa: E731
    needed = ROUND * math.ceil(MARGIN * tokens(p75) / ROUND)
    source = ", ".join(repr(c) if c != "the answer" else c for c, _ in sorted(columns.items(), key=lambda kv: -kv[1]))
    return CompletionBudget(len(texts), tokens(median), tokens(p75), int(median), needed, source)
