"""Checks on what the prompt shows: a model can only earn the reward if the prompt carries what it needs.

Read from every row (no scoring): for multiple choice, the prompt lists the options, each
choice the row carries appears under the label the answer key counts it with (not
re-lettered or reordered), and options that carry their own label are not labelled again
("A) A) 21"); for code, the prompt names the function the tests call (the entry point column's, else
the call in the asserts: ``catalog.entry_point``, the templates' rule) and asks for no keyword or builtin
("The function must be named `assert`"), and a row whose tests call no function found is listed; for
every row, a passage or body the row carries (``context``, ``passage``, ``body``...) appears in the prompt.
"""

from __future__ import annotations

import keyword
import re

from vlab import catalog
from vlab.core.result import Result
from vlab.env import Row
from vlab.reward.choices import key_labels
from vlab.reward.kinds import CONTEXT_FIELDS, QUESTION_FIELDS, RowKind, row_fields

LETTERS = catalog.CHOICE_LETTERS
LISTED = 50  # example ids named per finding in the message (all of them in data.row_findings)


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


_NAMED = re.compile(r"\bnamed\s+`([^`\s]+)`")


def code_problems(row: Row, kind: RowKind) -> list[tuple[str, str]] | None:
    """What is wrong with a code row's prompt: (status, what) pairs; None where nothing is checked (stdin/stdout
    tests, no tests and no function). Fails a prompt that asks for a keyword or builtin as the function
    ("must be named `assert`") or never names the function the tests call; warns where the tests call no
    function that could be found (the asserts call only builtins, or names they define)."""
    calls = catalog.call_tests(kind.tests) if kind.tests is not None else None
    if calls is None and not (kind.tests is None and kind.entry_point):
        return None
    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(_NAMED.findall(row.question)):
        if name != kind.entry_point and catalog.bad_entry_name(name):
            what = (
                "a Python keyword"
                if keyword.iskeyword(name)
                else "not a name"
                if not name.isidentifier()
                else "a builtin"
            )
            out.append(("fail", f"the prompt asks for a function named {name!r}, {what}, not what the tests call"))
    if kind.entry_point and (kind.entry_from != "reference" or kind.tests is None):
        if not re.search(rf"\b{re.escape(kind.entry_point)}\b", row.question):
            out.append(("fail", f"the prompt never names {kind.entry_point!r}, the function the tests call"))
    else:
        guess = f" (the reference defines {kind.entry_point!r})" if kind.entry_point else ""
        out.append(
            ("warn", f"no function name found in the tests: their asserts call only builtins or their own names{guess}")
        )
    return out


def _prompt_fields(row: Row) -> list[tuple[str, str]]:
    """The texts the row carries that its prompt must show: the question column and a passage or body,
    by name whatever its case (SVAMP's 'Body' and 'Question')."""
    fields = {str(k).lower(): (k, v) for k, v in row_fields(row).items()}
    out = []
    for name in QUESTION_FIELDS + CONTEXT_FIELDS:
        if name in fields and isinstance(fields[name][1], str) and len(fields[name][1].strip()) >= 20:
            out.append(fields[name])
    return out


def check_prompts(
    result: Result, rows: list[Row], kinds: dict[int, RowKind], golds: dict[int, str | None] | None = None
) -> None:
    """choice_prompt, code_prompt and prompt_columns over the given rows; every row found is listed
    (``data.row_findings``, and ``--rows-out``)."""
    bad_choice, bad_code, dropped = [], [], []
    choice_rows = code_rows = 0
    for row in rows:
        kind = kinds.get(row.index)
        if kind is None:
            continue
        if kind.kind == "choice":
            choice_rows += 1
            for status, why in choice_problems(row, kind, (golds or {}).get(row.index)):
                bad_choice.append((row, status, why))
        found = code_problems(row, kind) if kind.kind == "code" else None
        if found is not None:
            code_rows += 1
            bad_code += [(row, status, why) for status, why in found]
        prompt_text = _norm(" ".join(str(m.get("content") or "") for m in row.prompt))
        for name, text in _prompt_fields(row):
            if _norm(text)[:200] not in prompt_text:
                dropped.append((row, "fail", f"the row's {name!r} text is not in the prompt"))
    if choice_rows:
        _report(
            result,
            "choice_prompt",
            bad_choice,
            choice_rows,
            "the prompt shows every option under the answer key's label",
        )
    if code_rows:
        _report(result, "code_prompt", bad_code, code_rows, "the prompt names the function the tests call")
    if rows:
        _report(
            result,
            "prompt_columns",
            dropped,
            len(rows),
            "no question, passage or body the rows carry is missing from their prompt",
        )


_HINTS = {
    "choice_prompt": "list every choice in the prompt, in the answer key's order, labelled once "
    "(templates/environments/classic-multiple-choice does)",
    "code_prompt": "say the function's name (and signature) in the prompt; the code templates add the name the "
    "tests call (never a keyword or builtin); for rows whose tests call no function found, add an entry point column",
    "prompt_columns": "build the prompt from every column the question needs (inspect_dataset --prompt-column "
    "A --prompt-column B; the templates join a list of columns)",
}


def _report(result: Result, cid: str, bad: list, total: int, ok: str) -> None:
    """One check over the rows: fail when a row fails, warn when rows only warn; every row is named (the
    ids in the message up to LISTED, all of them with their reasons in data.row_findings)."""
    if not bad:
        result.passed(cid, f"{ok} ({total} rows)")
        return
    result.data.setdefault("row_findings", {})[cid] = [
        {"example_id": row.index, "status": status, "problem": why} for row, status, why in bad
    ]
    failing = [b for b in bad if b[1] == "fail"]
    shown = failing or bad
    by_what: dict[str, list[int]] = {}
    for row, _, why in shown:
        by_what.setdefault(_kind_of(why), []).append(row.index)
    rows_hit = len({row.index for row, _, _ in shown})
    parts = []
    for what, ids in by_what.items():
        ids = list(dict.fromkeys(ids))
        listed = ", ".join(str(i) for i in ids[:LISTED]) + (
            f" and {len(ids) - LISTED} more" if len(ids) > LISTED else ""
        )
        example = next(why for row, _, why in shown if _kind_of(why) == what)
        parts.append(f"{what} on {len(ids)} row(s) (example_id {listed}; e.g. {example})")
    if failing:
        result.fail(
            cid, f"{rows_hit}/{total} rows cannot be answered as the reward expects: " + "; ".join(parts), _HINTS[cid]
        )
        result.step(_HINTS[cid])
    else:
        result.warn(
            cid,
            f"{rows_hit}/{total} rows have a quirk that leaves the gold answerable: " + "; ".join(parts),
            "fix the data where you can; every row is in data.row_findings (--rows-out FILE writes them)",
        )


def _kind_of(why: str) -> str:
    """The finding's kind, for grouping rows: the words before its first example."""
    for key, name in (
        ("repeated inside its option", "a label repeated inside its option"),
        ("carries another label", "an option carrying another label"),
        ("makes the gold's label ambiguous", "an option whose own label makes the gold ambiguous"),
        ("cannot be told apart", "the gold's text under two labels"),
        ("(not the gold)", "two options with the same text (not the gold)"),
        ("re-lettered or reordered", "re-lettered or reordered options"),
        ("is not in the prompt", "a choice or column missing from the prompt"),
        ("lists no options", "no options in the prompt"),
        ("never names", "the tested function never named"),
        ("asks for a function named", "a keyword or builtin asked for as the function"),
        ("no function name found", "no function name found in the tests"),
    ):
        if key in why:
            return name
    return why
