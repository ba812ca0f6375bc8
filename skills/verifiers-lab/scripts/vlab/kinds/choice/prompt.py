"""What a multiple-choice row's prompt and answer key must get right, read from every row without scoring:
the prompt lists the options, each choice the row carries appears under the label the answer key counts it with
(not re-lettered or reordered), options that carry their own label are not labelled again ("A) A) 21")
(``choice_prompt``); and the gold names one of the options (``gold_in_choices``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vlab import catalog
from vlab.kinds.base import RowKind
from vlab.kinds.choice.options import LETTERS, as_letter
from vlab.kinds.choice.probes import key_labels

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row

SHOWN = 5
CHECK = "choice_prompt"
OK = "the prompt shows every option under the answer key's label"
HINT = (
    "list every choice in the prompt, in the answer key's order, labelled once "
    "(templates/environments/classic-multiple-choice does)"
)
# A finding's group, for the report (the words before its first example): key phrase -> what it is.
_GROUPS = (
    ("repeated inside its option", "a label repeated inside its option"),
    ("carries another label", "an option carrying another label"),
    ("makes the gold's label ambiguous", "an option whose own label makes the gold ambiguous"),
    ("cannot be told apart", "the gold's text under two labels"),
    ("(not the gold)", "two options with the same text (not the gold)"),
    ("re-lettered or reordered", "re-lettered or reordered options"),
    ("is not in the prompt", "a choice or column missing from the prompt"),
    ("lists no options", "no options in the prompt"),
)


def group_of(why: str) -> str:
    return next((name for key, name in _GROUPS if key in why), why)


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


_OWN = {
    "letter": re.compile(r"^\s*(?:\(\s*([A-J])\s*\)|([A-J])(?:\)|[.:](?=\s)))"),
    "index": re.compile(r"^\s*(?:\(\s*(\d{1,2})\s*\)|(\d{1,2})(?:\)|[.:](?=\s)))"),
}


def _own_label(text: str, style: str) -> str | None:
    """The label an option's text starts with, of the options' own style ('A) 59', 'A)59', '(B) 6' ->
    'A', 'A', 'B'), or None: '2.5 kg' and 'I think' start with no label."""
    m = _OWN["letter" if style == "letter" else "index"].match(text)
    return (m.group(1) or m.group(2)) if m else None


def choice_problems(row: Row, kind: RowKind, gold: str | None = None) -> list[tuple[str, str]]:
    """What is wrong with a multiple-choice row's prompt: (status, what) pairs, status fail or warn.

    Fails only what makes the gold unanswerable or ambiguous: no options, a choice missing or shown under
    another label than the key counts it with, the gold's text under two labels, an option whose own label
    names another option than the one it is shown as. A label repeated inside its own option ('A) A) 59')
    and two options with the same text other than the gold's are data quirks: warnings."""
    options, choices = kind.options, kind.choices
    out: list[tuple[str, str]] = []
    if options is None:
        out.append(
            (
                "fail",
                "the prompt lists no options"
                + (f" although the row carries {len(choices)} choices" if choices else " but the answer key names one"),
            )
        )
        return out
    keys = key_labels(gold, options) if gold is not None else []
    for label, text in zip(options.labels, options.texts):
        own = _own_label(text, options.style)
        if own is None:
            continue
        if own.upper() == label.upper():
            out.append(("warn", f"a label repeated inside its option ({label}) {text!r}): still answerable as {label}"))
        elif label in keys or any(own.upper() == k.upper() for k in keys):
            out.append(
                ("fail", f"option {label} reads {text!r}: its own label {own!r} makes the gold's label ambiguous")
            )
        else:
            out.append(("warn", f"option {label} reads {text!r}: it carries another label ({own!r}) inside"))
    texts = [_norm(t) for t in options.texts]
    for i, text in enumerate(texts):
        twins = [options.labels[j] for j, t in enumerate(texts) if t == text]
        if len(twins) < 2 or options.labels[i] != twins[0]:
            continue
        if keys and all(k in twins for k in keys):
            out.append(
                (
                    "fail",
                    f"options {' and '.join(twins)} have the same text {options.texts[i]!r}, the gold's: "
                    "the gold cannot be told apart",
                )
            )
        else:
            out.append(
                ("warn", f"options {' and '.join(twins)} have the same text {options.texts[i]!r} (not the gold)")
            )
    if choices:
        wanted = catalog.option_texts(choices)
        shown = [_norm(t) for t in catalog.option_texts(list(options.texts))]
        for i, text in enumerate(wanted):
            if i < len(shown) and shown[i] == _norm(text):
                continue  # shown under the label the key counts it with
            if _norm(text) not in shown:
                out.append(("fail", f"choice {text!r} is not in the prompt"))
                break
            at = shown.index(_norm(text))
            key_label = LETTERS[i] if options.style == "letter" else str(i + (options.style == "index1"))
            out.append(
                (
                    "fail",
                    f"choice {text!r} is shown as {options.labels[at]!r} but the answer key counts it as {key_label!r} "
                    "(re-lettered or reordered options)",
                )
            )
            break
    return out


def check_gold_in_choices(
    result: Result, rows: list[Row], golds: dict[int, str | None], kinds: dict[int, RowKind]
) -> None:
    """gold_in_choices: on every multiple-choice row the gold names one of the options."""
    outside = []
    choice_rows = 0
    for row in rows:
        kind, gold = kinds.get(row.index), golds.get(row.index)
        if kind is None or kind.kind != "choice" or gold is None:
            continue
        n = len(kind.options.labels) if kind.options else len(kind.choices or [])
        if not n:
            continue
        choice_rows += 1
        if not _names_option(gold, n, kind):
            outside.append(row)
    if outside:
        ids = ", ".join(f"{r.index} ({golds[r.index]!r})" for r in outside[:SHOWN])
        result.fail(
            "gold_in_choices",
            f"on {len(outside)}/{choice_rows} rows the gold names none of the options (example_id {ids})",
            "fix the answer key: a letter or index within the options, or the text of one of them",
        )
    elif choice_rows:
        result.passed("gold_in_choices", f"the gold names one of the options on all {choice_rows} multiple-choice rows")


def _names_option(gold: str, n: int, kind: RowKind) -> bool:
    key = gold.strip()
    letter = as_letter(key)
    if letter:
        return "ABCDEFGHIJ".index(letter) < n
    if key.isdigit():
        return int(key) <= n  # 0-based up to n-1, 1-based up to n
    texts = [t.strip() for t in (kind.options.texts if kind.options else ())] + [c.strip() for c in kind.choices or []]
    return key in texts
