"""Checks on what the prompt shows: a model can only earn the reward if the prompt carries what it needs.

Read from every row (no scoring): a passage or body the row carries (``context``, ``passage``, ``body``...)
appears in the prompt (``prompt_columns``). A kind's own prompt checks (the options of a multiple-choice row,
the function a code row's tests call) are its unit's (``vlab.kinds``), reported the same way (``report_rows``).

For labels (``prompt_task``, warnings: a heuristic): the words every prompt shows (the instructions, read as the
words at least ``TEMPLATE_SHARE`` of the rows' prompts share) say what is classified beyond the label names and the
answer format ("Classify the text. The allowed labels are: none, against, favor" does not: the model is left to
guess that this is the stance towards climate change); and an example answer the prompt shows ("for example
\\boxed{none}") is no real label of the data, whose class it would pull answers towards.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from vlab.core.result import Result
from vlab.env import Row
from vlab.inspect.taskwords import task_words
from vlab.kinds.rows import CONTEXT_FIELDS, QUESTION_FIELDS, row_fields

LISTED = 50  # example ids named per finding in the message (all of them in data.row_findings)
COLUMNS_HINT = (
    "build the prompt from every column the question needs (inspect_dataset --prompt-column "
    "A --prompt-column B; the templates join a list of columns)"
)


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _prompt_fields(row: Row) -> list[tuple[str, str]]:
    """The texts the row carries that its prompt must show: the question column and a passage or body,
    by name whatever its case (SVAMP's 'Body' and 'Question')."""
    fields = {str(k).lower(): (k, v) for k, v in row_fields(row).items()}
    out = []
    for name in QUESTION_FIELDS + CONTEXT_FIELDS:
        if name in fields and isinstance(fields[name][1], str) and len(fields[name][1].strip()) >= 20:
            out.append(fields[name])
    return out


def check_prompt_columns(result: Result, rows: list[Row]) -> None:
    """prompt_columns over the given rows: no question, passage or body the rows carry is missing from their
    prompt; every row found is listed (``data.row_findings``, and ``--rows-out``)."""
    dropped = []
    for row in rows:
        prompt_text = _norm(" ".join(str(m.get("content") or "") for m in row.prompt))
        for name, text in _prompt_fields(row):
            if _norm(text)[:200] not in prompt_text:
                why = f"the row's {name!r} text is not in the prompt"
                dropped.append((row, "fail", "a choice or column missing from the prompt", why))
    if rows:
        report_rows(
            result,
            "prompt_columns",
            dropped,
            len(rows),
            "no question, passage or body the rows carry is missing from their prompt",
            COLUMNS_HINT,
        )


def report_rows(result: Result, cid: str, bad: list, total: int, ok: str, hint: str) -> None:
    """One check over the rows: fail when a row fails, warn when rows only warn; every row is named (the
    ids in the message up to LISTED, all of them with their reasons in data.row_findings). ``bad``: (row, status,
    group, why): the rows a finding is on are grouped by what it is."""
    if not bad:
        result.passed(cid, f"{ok} ({total} rows)")
        return
    result.data.setdefault("row_findings", {})[cid] = [
        {"example_id": row.index, "status": status, "problem": why} for row, status, _, why in bad
    ]
    failing = [b for b in bad if b[1] == "fail"]
    shown = failing or bad
    by_what: dict[str, list[int]] = {}
    for row, _, group, _ in shown:
        by_what.setdefault(group, []).append(row.index)
    rows_hit = len({row.index for row, *_ in shown})
    parts = []
    for what, ids in by_what.items():
        ids = list(dict.fromkeys(ids))
        listed = ", ".join(str(i) for i in ids[:LISTED]) + (
            f" and {len(ids) - LISTED} more" if len(ids) > LISTED else ""
        )
        example = next(why for _, _, group, why in shown if group == what)
        parts.append(f"{what} on {len(ids)} row(s) (example_id {listed}; e.g. {example})")
    if failing:
        result.fail(cid, f"{rows_hit}/{total} rows cannot be answered as the reward expects: " + "; ".join(parts), hint)
        result.step(hint)
    else:
        result.warn(
            cid,
            f"{rows_hit}/{total} rows have a quirk that leaves the gold answerable: " + "; ".join(parts),
            "fix the data where you can; every row is in data.row_findings (--rows-out FILE writes them)",
        )


# -- prompt_task: the task stated, no real label as the example ------------------------------------------------

TEMPLATE_SHARE = 0.9  # a word in at least this share of the prompts is the instructions'
TASK_ROWS = 200  # prompts read for the instructions' words
# The words of instructions that say nothing of what is classified: the label set and the answer format.
GENERIC = frozenset(
    """a an the of to in on at by for from with as and or but not no is are be been was were it its this that these
    those which what who whom whose there their them they you your yours we our us i me my he she his her him
    classify classification classifier categorise categorize categorisation categorization label labels labeled
    labelled allowed possible valid following given input text texts sentence sentences passage statement document
    content item example examples e g eg such instance answer answers final exactly one only single inside box boxed
    put give provide output respond response reply return think briefly brief step steps then first choose select pick
    category categories class classes format formatted option options below above list listed write word words
    assign predict determine decide please must should use using after before end reason reasoning explain
    explanation short concise correct appropriate best most each every any all among following either neither nor
    into than so if else can may might will would could do does did have has had into onto about one two three
    task""".split()
)
_EXAMPLE = re.compile(
    r"(?:for example|for instance|e\.g\.?|such as|example:)\s*[,:]?\s*"
    r"(?:\\boxed\{(?P<box>[^{}]{1,60})\}|\"(?P<dq>[^\"\n]{1,60})\"|'(?P<sq>[^'\n]{1,60})'"
    r"|(?P<word>[A-Za-z][\w-]{0,30}))",
    re.I,
)
_TOKEN = re.compile(r"[a-z][a-z'-]+")


def _norm_label(text: Any) -> str:
    return " ".join(str(text).split()).strip(" .,;:!?\"'`*()[]").casefold()


def _instructions(row: Row) -> str:
    """The row's prompt less its own data (the text to classify, a passage): what the environment adds."""
    text = " ".join(str(m.get("content") or "") for m in row.prompt)
    for name, value in sorted(row_fields(row).items(), key=lambda kv: -len(str(kv[1]))):
        if isinstance(value, str) and len(value.strip()) >= 8 and not re.search(r"system|instruction", str(name), re.I):
            text = text.replace(value.strip(), " ")
    return text


def _template_text(rows: list[Row]) -> tuple[list[str], str]:
    """(the words at least TEMPLATE_SHARE of the prompts share once each row's own data is taken out, in the first
    prompt's order; the first prompt's instructions)."""
    texts = [_instructions(r) for r in rows[:TASK_ROWS]]
    counts = Counter(w for text in texts for w in set(_TOKEN.findall(text.lower())))
    need = TEMPLATE_SHARE * len(texts)
    first = texts[0] if texts else ""
    return [w for w in dict.fromkeys(_TOKEN.findall(first.lower())) if counts[w] >= need], first


def check_prompt_task(
    result: Result, rows: list[Row], golds: dict[int, str | None], env_args: dict[str, Any] | None = None
) -> None:
    """prompt_task over label rows (see the module's docstring): warn when the instructions state no task beyond the
    labels and the format, or show a real label as the example answer; pass naming the task words found."""
    if len(rows) < 5:
        return  # the instructions are the words the prompts share: too few prompts to tell them from a text's
    labels = Counter(_norm_label(golds[r.index]) for r in rows if golds.get(r.index) not in (None, ""))
    label_words = {w for label in labels for w in _TOKEN.findall(label)}
    shared, first = _template_text(rows)
    task = [w for w in shared if w not in GENERIC and w not in label_words and len(w) > 2]
    problems, hints = [], []
    if not task:
        data = _data_words(env_args)
        problems.append(
            "the prompt states no task beyond the label set and the answer format (its instructions are "
            f"{' '.join(shared[:24])!r}): the model is left to guess what the labels are about"
        )
        hints.append(
            "say in the prompt what is classified (the classification templates' TASK line)"
            + (f", in the data's own words: {', '.join(data)}" if data else "")
        )
    example = _EXAMPLE.search(first)
    if example:
        shown = next(v for v in example.groupdict().values() if v)
        n = labels.get(_norm_label(shown), 0)
        in_template = all(w in shared for w in _TOKEN.findall(shown.lower()))
        if n and in_template:
            total = sum(labels.values())
            problems.append(
                f"its example answer {example.group(0).strip()!r} is a real label, the gold of {n}/{total} rows "
                f"({n / total:.0%}): a model may copy it, and learns that class first"
            )
            hints.append("show the answer format without a real label (\\boxed{} alone, or a placeholder)")
    if problems:
        result.warn("prompt_task", "; ".join(problems), "; ".join(hints))
    else:
        result.passed("prompt_task", f"the prompt says what is classified: {' '.join(task[:8])!r}")


def _data_words(env_args: dict[str, Any] | None) -> list[str]:
    """The task words of the data the arguments name (a file's or a Hub dataset's name)."""
    words: list[str] = []
    for key, value in (env_args or {}).items():
        if isinstance(value, str) and any(k in str(key).lower() for k in ("path", "file", "data", "name")):
            config = env_args.get("dataset_config") if isinstance(env_args.get("dataset_config"), str) else None
            words += task_words(value, config)
    return list(dict.fromkeys(words))[:6]
