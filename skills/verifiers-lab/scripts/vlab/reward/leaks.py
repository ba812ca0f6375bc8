"""Checks on what the data gives away: a prompt that shows its own gold answer, a test split trained on.

Read from every row (no scoring):

- ``answer_leak``: a row leaks when its prompt (every message, the system prompt included) carries the
  gold *as an answer*: a ``\\boxed{...}`` or ``#### ...`` whose content is the gold (the same text once
  spaces are stripped, or the same value to math-verify), or the text of a row column that is a worked
  solution ending in the gold (MATH's ``solution`` copied into the prompt). A number that merely appears
  in the problem ("5 apples" for a gold of 5) is no evidence; neither is a boxed value the prompts of
  other rows show too without it being their gold (a worked example, a format sample). The column named
  is the shortest row field that carries the evidence and appears in the prompt, else the system prompt.
- ``test_split`` (a warning, never a fail): the data looks like a test split: a dataset file in the
  environment arguments named like one (``test.jsonl``, ``math_test.parquet``, ``test-*.parquet``, a
  ``test/`` folder), a split argument naming ``test``, or most rows' ids starting ``test/``, ``test_``
  or ``test-`` (MATH's ``test/precalculus/807.json``). ``named_test_split`` and ``ids_like_test_split`` are the
  rules inspect_dataset's ``test-split`` warning applies to the file it read and its sampled rows.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath
from typing import Any

from vlab.core.result import Result
from vlab.env import Row
from vlab.inspect.splits import canonical
from vlab.kinds.number.equivalence import same_value, without_separators
from vlab.kinds.rows import row_fields

LISTED = 20  # example ids named per source in the message (all of them in data.row_findings)
SPELLINGS = 4  # a leaked value sits beside its own gold only, in at most this many spellings
LEAK_FAIL_SHARE = 0.05  # at least this share of the rows checked leaking (and one row) is a fail
# Columns holding a worked solution: its final answer (the last number, "Answer: C") counts as the gold's
# even without \boxed or ####. Any other column counts only through \boxed{gold} / #### gold.
SOLUTION_FIELDS = (
    "solution",
    "solutions",
    "worked_solution",
    "reference_solution",
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
ID_FIELDS = ("unique_id", "id", "task_id", "problem_id", "question_id", "uid", "qid", "sample_id", "idx")
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASH = re.compile(r"####[ \t]*([^\n]+)")
_FINAL_WORD = re.compile(r"answer(?:\s+is)?\s*[:=]?\s*\(?\$?([^\s()$]+?)\$?\)?\s*\.?\s*$", re.I)
_LAST_NUMBER = re.compile(r"(-?\d[\d,]*(?:\.\d+)?|\\d?frac\{[^{}]*\}\{[^{}]*\})\s*\$?\s*\.?\s*$")
_TEST_ID = re.compile(r"test[/_-]", re.I)
_DATA_SUFFIX = re.compile(r"\.(?:jsonl?|csv|tsv|parquet|arrow|feather|txt)$", re.I)
_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst)$", re.I)
_WORD = re.compile(r"[A-Za-z]+")


# -- answer leak ---------------------------------------------------------------------------------


def _norm(text: Any) -> str:
    return " ".join(str(text).split()).lower()


def _key(text: str) -> str:
    """An answer's text for comparing: no spaces, no $ signs, no trailing period."""
    return re.sub(r"[\s$]+", "", text).rstrip(".")


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def boxed_all(text: str) -> list[tuple[str, str]]:
    """(as written, content) for every \\boxed{...} (and \\fbox{...}) in the text, nested braces kept."""
    out = []
    for m in _BOX.finditer(text):
        depth, i = 1, m.end()
        for j in range(i, min(len(text), i + 500)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                out.append((text[m.start() : j + 1], text[i:j]))
                break
    return out


def _answers(text: str) -> list[tuple[str, str]]:
    """(as written, value) for the answer-shaped values a text states: every \\boxed{} and every '#### value'."""
    found = boxed_all(text) + [(m.group(0).strip(), m.group(1)) for m in _HASH.finditer(text)]
    return [(_short(form), value) for form, value in found if value.strip()]


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _is_gold(candidate: str, gold: str) -> bool:
    """The candidate states the gold: the same text once spaces are stripped, or the same value."""
    a, b = _key(candidate), _key(gold)
    if not a or not b:
        return False
    if a == b or a.lower() == b.lower():
        return True
    if len(a) > 100 or len(b) > 100:
        return False
    try:
        return same_value(without_separators(a), without_separators(b))
    except Exception:  # noqa: BLE001 -- math-verify on odd text: no verdict, no evidence
        return False


def _final_answer(text: str) -> str | None:
    """A worked solution's final answer: its last \\boxed{}, its '####', 'Answer: X' or the number it ends on."""
    boxed = boxed_all(text)
    if boxed:
        return boxed[-1][1]
    hashes = _HASH.findall(text)
    if hashes:
        return hashes[-1]
    tail = text.rstrip()[-120:]
    for pattern in (_FINAL_WORD, _LAST_NUMBER):
        m = pattern.search(tail)
        if m:
            return m.group(1)
    return None


def _in_prompt(text: str, prompt: str) -> bool:
    """The field's text is shown in the prompt (its start and its end, for a long one)."""
    t = _norm(text)
    if len(t) <= 400:
        return t in prompt
    return t[:200] in prompt and t[-200:] in prompt


def _leak_sources(row: Row, gold: str, shared: set[str]) -> list[tuple[str, str]]:
    """(source, evidence) for each way the row's prompt shows its gold; empty when it does not."""
    messages = [(str(m.get("role") or ""), _content(m)) for m in row.prompt]
    prompt = _norm(" ".join(text for _, text in messages))
    shown = []  # (evidence, role): gold-stating answers in the prompt that other rows do not show as well
    for role, text in messages:
        for form, value in _answers(text):
            if _key(value) not in shared and _is_gold(value, gold):
                shown.append((form, role))
    fields = []  # (length, name, evidence): columns in the prompt that state the gold
    question = _norm(row.question)
    for name, value in row_fields(row).items():
        if not isinstance(value, str) or len(value.strip()) < len(gold) + 4 or not _in_prompt(value, prompt):
            continue
        if name == "prompt" and _norm(value) == question:  # a v1 task's own prompt text, no source column
            continue
        stated = [form for form, v in _answers(value) if _key(v) not in shared and _is_gold(v, gold)]
        if stated:
            fields.append((len(value), str(name), stated[-1]))
        elif str(name).lower() in SOLUTION_FIELDS and len(value.split()) >= 5:
            final = _final_answer(value)
            if final is not None and _is_gold(final, gold):
                fields.append((len(value), str(name), f"a worked solution ending in {_short(final.strip())!r}"))
    if fields:  # the most specific column: a solution copied into the question names the solution
        _, name, evidence = min(fields)
        return [(f"the {name!r} column", evidence)]
    if shown:
        evidence, role = shown[0]
        where = (
            "the system prompt" if role == "system" else "the prompt (the columns it is built from, QUESTION_COLUMN)"
        )
        return [(where, evidence)]
    return []


def _shared_answers(rows: list[Row], golds: dict[int, str | None]) -> set[str]:
    """Answers the prompts show whatever their row's gold: a value in a message several rows share word for word
    (a system prompt's "e.g. \\boxed{B}"), or boxed in as many prompts (or more) where it is not the gold as where
    it is (a worked example, a format sample), is no row's leak.

    A value shown beside more than SPELLINGS different golds is shared without asking math-verify (one value
    has only a few spellings): a few-shot prompt over 10,000 rows costs no 10,000 comparisons."""
    carriers: dict[str, list[str]] = {}  # a value the prompts show -> the golds of the rows showing it
    texts = Counter(_norm(_content(m)) for row in rows for m in {_content(m): m for m in row.prompt}.values())
    shared = set()
    for row in rows:
        for m in row.prompt:
            values = {_key(v) for _, v in _answers(_content(m))}
            if texts[_norm(_content(m))] > 1:  # a message several rows share (a system prompt's format example)
                shared |= values
            for key in values:
                carriers.setdefault(key, []).append(str(golds.get(row.index) or ""))
    for key, carried in carriers.items():
        spellings = Counter(_key(g) for g in carried)
        if len(spellings) > SPELLINGS:
            shared.add(key)
            continue
        as_gold = sum(n for g, n in spellings.items() if _is_gold(key, g))
        if len(carried) - as_gold >= as_gold:
            shared.add(key)
    return shared


def check_answer_leak(result: Result, rows: list[Row], golds: dict[int, str | None]) -> None:
    """answer_leak over the rows with a gold: fail when at least LEAK_FAIL_SHARE of them (and one) leak,
    warn on fewer; every leaking row is listed in data.row_findings."""
    checked = [r for r in rows if golds.get(r.index) not in (None, "") and str(golds[r.index]).strip()]
    if not checked:
        result.skip("answer_leak", "no row has a gold answer to look for in its prompt")
        return
    shared = _shared_answers(checked, golds)
    found: list[tuple[Row, str, str]] = []
    for row in checked:
        sources = _leak_sources(row, str(golds[row.index]), shared)
        if sources:
            found.append((row, *sources[0]))
    total = len(checked)
    if not found:
        result.passed(
            "answer_leak",
            f"no prompt shows its gold answer (as \\boxed{{}}, '####' or a worked solution) ({total} rows checked)",
        )
        return
    share = len(found) / total
    failing = share >= LEAK_FAIL_SHARE
    status = "fail" if failing else "warn"
    result.data.setdefault("row_findings", {})["answer_leak"] = [
        {"example_id": row.index, "status": status, "problem": f"{source} in the prompt shows the gold: {evidence}"}
        for row, source, evidence in found
    ]
    by_source: dict[str, list[tuple[Row, str]]] = {}
    for row, source, evidence in found:
        by_source.setdefault(source, []).append((row, evidence))
    parts = []
    for source, hits in sorted(by_source.items(), key=lambda kv: -len(kv[1])):
        ids = [str(row.index) for row, _ in hits]
        listed = ", ".join(ids[:LISTED]) + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")
        parts.append(f"from {source} on {len(ids)} row(s) (example_id {listed}; e.g. {hits[0][1]})")
    message = f"{len(found)}/{total} rows ({share:.0%}) show their gold answer in the prompt: " + "; ".join(parts)
    hint = (
        "build the prompt from the problem column only and keep the solution out of it (a reward that needs "
        "it can read it from info); every leaking row is in data.row_findings (--rows-out FILE writes them)"
    )
    if failing:
        result.fail("answer_leak", message + ": the policy can copy the answer instead of solving", hint)
        result.step("take the solution out of the prompt (answer_leak), then run test_reward again")
    else:
        result.warn("answer_leak", message + f" (under {LEAK_FAIL_SHARE:.0%} of the rows)", hint)


# -- test split ----------------------------------------------------------------------------------


def named_test_split(path: Any) -> str | None:
    """How a data file's path names the test split ('the file test.jsonl', 'the folder test/'), or None.

    The file name's last split word decides (math_test.jsonl, test-00000-of-00001.parquet, test-*.parquet;
    not contest.jsonl); a name without one (data.jsonl) is read from its folder, which must be named
    test or testing itself (data/test/0.parquet; not a test_x0/ folder)."""
    text = str(path or "").strip().replace("\\", "/")
    if not text:
        return None
    p = PurePosixPath(text)
    name = _COMPRESSED.sub("", p.name)
    if _DATA_SUFFIX.search(name):
        found = [w for w in (canonical(w) for w in _WORD.findall(_DATA_SUFFIX.sub("", name))) if w]
        if found:
            return f"the file {p.name}" if found[-1] == "test" else None
        folder = p.parent.name
    else:
        folder = p.name  # a folder, or a Hub id's name
        if "/" not in text and not text.startswith("."):
            return None  # a bare name is no folder
    return f"the folder {folder}/" if canonical(folder) == "test" else None


def ids_like_test_split(records: list[dict[str, Any]]) -> tuple[str, int, int, str] | None:
    """(column, ids starting test/ test_ test-, ids read, an example) when most ids start so, else None."""
    counts: Counter = Counter()
    hits: Counter = Counter()
    example: dict[str, str] = {}
    for rec in records:
        for name in ID_FIELDS:
            value = rec.get(name)
            if isinstance(value, str) and value.strip():
                counts[name] += 1
                if _TEST_ID.match(value.strip()):
                    hits[name] += 1
                    example.setdefault(name, value.strip())
                break
    for name, n in counts.most_common():
        if hits[name] and hits[name] * 2 > n:
            return name, hits[name], n, example[name]
    return None


def _test_split_column(records: list[dict[str, Any]]) -> str | None:
    values = [rec.get("split") for rec in records if isinstance(rec.get("split"), str)]
    hits = sum(1 for v in values if canonical(v) == "test")
    return f"the 'split' column reads test in {hits}/{len(values)} rows" if values and hits * 2 > len(values) else None


def _skipped_key(key: str) -> bool:
    """An argument meant to hold test or eval data (eval_dataset_path, test_split): a test split there is right."""
    return key.lower().startswith(("eval", "test", "val", "dev", "holdout"))


def _paths(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [p for k, v in value.items() if not _skipped_key(str(k)) for p in _paths(v)]
    return []


def env_args_evidence(env_args: dict[str, Any] | None) -> tuple[list[str], bool]:
    """What the environment arguments say of a test split, and whether any of them names data or a split."""
    out: list[str] = []
    looked = False
    for key, value in (env_args or {}).items():
        k = str(key).lower()
        if _skipped_key(k):
            continue
        if k == "split" or k.endswith("_split"):
            looked = True
            if isinstance(value, str) and canonical(value) == "test":
                out.append(f"{key}={value!r}")
        elif any(w in k for w in ("path", "file", "data", "dir")):
            for path in _paths(value):
                looked = True
                named = named_test_split(path)
                if named:
                    out.append(f"{key}: {named}")
                    break
    return out, looked


def check_test_split(result: Result, rows: list[Row], env_args: dict[str, Any] | None) -> None:
    """test_split: a warning when the data looks like a test or eval split; pass, or skip when nothing says."""
    evidence, looked = env_args_evidence(env_args)
    records = [row_fields(r) for r in rows]
    ids = ids_like_test_split(records)
    if ids:
        column, hits, n, example = ids
        evidence.append(f"{hits}/{n} {column!r} ids start like a test split's (e.g. {example!r})")
    column = _test_split_column(records)
    if column:
        evidence.append(column)
    if evidence:
        result.warn(
            "test_split",
            "the data looks like a test split (" + "; ".join(evidence) + "): training on it spoils every "
            "evaluation on the same benchmark, and its scores then say nothing",
            "train on the train split (its file, or split='train'); keep the test rows for evaluation only",
        )
        return
    if looked or any(any(isinstance(rec.get(n), str) for n in ID_FIELDS) for rec in records):
        result.passed("test_split", "no sign of a test split (dataset files and split in the env args, row ids)")
    else:
        result.skip("test_split", "nothing names the data's split (no dataset file or split in the env args, no ids)")
