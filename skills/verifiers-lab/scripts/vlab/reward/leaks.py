"""``answer_leak``: a prompt that shows its row's gold answer, in any form the data or the row's kind knows it in.

Read from every row (no scoring). The forms of a row's gold: the gold as stored, each item of an answer list
(NQ-open's aliases), the gold without its LaTeX wrapping (``$...$``, ``\\text{}``, ``\\dfrac``), and every form the
row's answer kind knows (``KindUnit.gold_forms``: an alias, a normalised spelling, a test's expected output). The
prompt is every message the policy is shown (system, few-shot, user). A row leaks when its prompt

- carries a **solution column** of the data: the text of a row field named like a worked solution
  (``solution``, ``rationale``, ``explanation``...) of five words or more, or any field stating the gold as
  ``\\boxed{}`` / ``####`` (MATH's ``solution`` copied into the prompt);
- **states a form as the answer**: ``\\boxed{X}``, ``#### X``, ``the answer is X``, ``Answer: X`` (the same text
  once spaces are stripped, or the same value to math-verify);
- has a **hint or solution section** (``Hint:``, ``Solution:``, ``Explanation:``...) that states a form, or a text
  form that the question before it does not;
- shows a **long form verbatim** (four words or more, or 25 characters: a judge's reference, a program, a test's
  expected output), or a short one in what the prompt adds to the row's own data (the prompt minus its question,
  passage and other columns: "(The answer is Paris.)" appended).

Never a leak: a form the prompts show as often beside other golds as beside this one (a label list, a format
example "e.g. \\boxed{B}", a worked example every prompt shares, a number in an instruction); a gold that is one of
the row's own options (a list field the prompt shows, the gold among other items); a number in the problem itself.
The result names the rows, where the gold was found and in which form; at least ``LEAK_FAIL_SHARE`` of the rows
checked (and one) is a failure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vlab.core.result import Result
from vlab.env import Row
from vlab.inspect.references import SOLUTION_FIELDS
from vlab.inspect.roles import CORRECT_LIST_NAMES, normalise
from vlab.kinds.rows import row_fields
from vlab.reward import answer_text as at

LISTED = 20  # example ids named per source in the message (all of them in data.row_findings)
SPELLINGS = 4  # a leaked value sits beside its own gold only, in at most this many spellings
LEAK_FAIL_SHARE = 0.05  # at least this share of the rows checked leaking (and one row) is a fail
LONG_WORDS, LONG_CHARS = 4, 25  # a form this long is never in a prompt by chance: found anywhere, it leaks
MAX_CARRIER_ROWS = 2000  # rows a candidate form is looked for in, to tell a row's leak from a shared text
# a section the prompt adds that gives the answer away: its heading up to the next blank line (or the end)
_SECTION = re.compile(
    r"(?:^|\n|[(\[]|(?<=[.!?])\s)\s*(?P<h>hints?|solutions?|worked solution|explanation|rationale|reasoning|"
    r"reference answer|answer key)\s*[:\-]\s*(?P<b>.+?)(?=\n\s*\n|$)",
    re.I | re.S,
)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")


@dataclass(frozen=True)
class Form:
    """One form of a row's gold: its text and what it is ("the gold", "an alias of the gold", a kind's form)."""

    text: str
    what: str


@dataclass(frozen=True)
class Leak:
    """Where a row's prompt shows its gold (``source``), how (``how``), in which form, and the evidence."""

    source: str
    how: str
    form: str
    evidence: str


FormsOf = Callable[[Row, str], list[Any]]  # the kind's forms of a row's gold: texts, or (text, what it is)


def _long(form: str) -> bool:
    return len(form.split()) >= LONG_WORDS or len(form) >= LONG_CHARS


# -- the forms of a row's gold -------------------------------------------------------------------------


def core_forms(row: Row, gold: str) -> list[Form]:
    """The gold as stored, the items of an answer list, and the gold without its LaTeX wrapping."""
    out = [Form(gold, "the gold")]
    if isinstance(row.answer, (list, tuple)):
        out += [Form(str(a), "an alias of the gold (an item of its answer list)") for a in row.answer]
    plain = _LATEX_TEXT.sub(r"\1", gold.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")).strip("$ ")
    if plain != gold:
        out.append(Form(plain, "the gold without its LaTeX"))
    return out


def _forms(row: Row, gold: str, forms_of: FormsOf | None) -> list[Form]:
    out = core_forms(row, gold)
    for item in (forms_of(row, gold) if forms_of else None) or []:
        text, what = item if isinstance(item, tuple) else (item, "a form of the gold its answer kind knows")
        if isinstance(text, str) and text.strip():
            out.append(Form(text, str(what)))
    seen, unique = set(), []
    for f in out:
        k = at.norm(f.text)
        if k and k not in seen:
            seen.add(k)
            unique.append(f)
    return unique


def kind_forms(ctx) -> FormsOf:
    """The forms the row's answer kind knows, through its unit's ``gold_forms`` hook (``ctx``: a KindContext)."""
    from vlab import kinds

    def forms_of(row: Row, gold: str) -> list[Any]:
        kind = ctx.kinds.get(row.index) if ctx is not None else None
        if kind is None:
            return []
        try:
            return list(kinds.unit(kind.kind).gold_forms(row, gold, kind, ctx) or [])
        except KeyError:
            return []

    return forms_of


# -- one row ----------------------------------------------------------------------------------------------


@dataclass
class _Prompt:
    """A row's prompt as the rules read it."""

    messages: list[tuple[str, str]]  # (role, text) of every message
    whole: str  # every message, normalised
    own: str  # the messages no other row shows word for word, normalised
    added: str  # ``own`` less the row's own data (question, passage, options...): what the prompt adds
    options: set[str]  # the row's own options shown in the prompt (a gold among them is no leak)


def _prompt(row: Row, shared_texts: set[str]) -> _Prompt:
    messages = [(str(m.get("role") or ""), at.content(m)) for m in row.prompt]
    whole = at.norm(" ".join(text for _, text in messages))
    own = at.norm(" ".join(text for _, text in messages if at.norm(text) not in shared_texts))
    added = own
    options: set[str] = set()
    fields = row_fields(row)
    for name, value in sorted(fields.items(), key=lambda kv: -len(str(kv[1]))):
        key = normalise(str(name))
        if isinstance(value, str) and len(value.strip()) >= 16 and not _gold_field(key):
            t = at.norm(value)
            if t in added:
                added = added.replace(t, " ")
        elif isinstance(value, (list, tuple)) and len(value) >= 2 and not _answer_list(key):
            items = [at.norm(v) for v in value if isinstance(v, (str, int, float))]
            if sum(1 for i in items if i and i in whole) >= 2:  # a list the prompt shows: options, labels
                options |= set(items)
    return _Prompt(messages, whole, own, " ".join(added.split()), options)


def _gold_field(key: str) -> bool:
    """A field holding the answer (the gold, a solution, a list of right answers): never the row's own text."""
    return key in {normalise(f) for f in SOLUTION_FIELDS} or key in CORRECT_LIST_NAMES or "answer" in key


def _answer_list(key: str) -> bool:
    """A list field of right answers (aliases), not options: the gold in it is the answer, not one choice of many."""
    return (
        key in CORRECT_LIST_NAMES
        or key in ("answer", "goldanswer", "target", "targets")
        or (key in {normalise(f) for f in SOLUTION_FIELDS})
    )


def _solution_columns(row: Row, gold: str, p: _Prompt, shared: set[str]) -> Leak | None:
    """A row column in the prompt that is a worked solution, or that states the gold as \\boxed{} / ####;
    the most specific (shortest) one is named."""
    fields = []  # (length, name, evidence)
    question = at.norm(row.question)
    for name, value in row_fields(row).items():
        if not isinstance(value, str) or len(value.strip()) < len(gold) + 4 or not at.in_prompt(value, p.whole):
            continue
        if name == "prompt" and at.norm(value) == question:  # a v1 task's own prompt text, no source column
            continue
        stated = [form for form, v in at.answers(value) if at.key(v) not in shared and at.is_gold(v, gold)]
        boxed = [f for f in stated if f.startswith(("\\boxed", "\\fbox", "####"))]
        if boxed:
            fields.append((len(value), str(name), boxed[-1]))
        elif str(name).lower() in SOLUTION_FIELDS and len(value.split()) >= 5 and at.norm(value) != at.norm(gold):
            final = at.final_answer(value)
            if final is not None and at.is_gold(final, gold):
                fields.append((len(value), str(name), f"a worked solution ending in {at.short(final.strip())!r}"))
            else:
                fields.append((len(value), str(name), f"its text ({at.short(value, 60)!r})"))
    if not fields:
        return None
    _, name, evidence = min(fields)
    return Leak(f"the {name!r} column", "a solution column of the data", "the gold", evidence)


def _where(role: str) -> str:
    return "the system prompt" if role == "system" else "the prompt (the columns it is built from, QUESTION_COLUMN)"


def _stated(p: _Prompt, forms: list[Form], shared: set[str]) -> Leak | None:
    """A form stated as the answer: \\boxed{}, ####, 'the answer is', 'Answer:'."""
    for role, text in p.messages:
        for written, value in at.answers(text):
            if at.key(value) in shared or at.norm(value) in p.options:
                continue
            for f in forms:
                if at.is_gold(value, f.text):
                    return Leak(_where(role), "stated as the answer", f.what, written)
    return None


def _sections(p: _Prompt, forms: list[Form], shared_texts: set[str], shared: set[str]) -> Leak | None:
    """A hint or solution section the prompt adds that states a form, or shows a text form its question lacks."""
    for role, text in p.messages:
        if at.norm(text) in shared_texts:
            continue
        for m in _SECTION.finditer(text):
            body, before = m.group("b"), at.norm(text[: m.start()])
            final = at.final_answer(body)
            for f in forms:
                form = at.norm(f.text)
                if final is not None and at.key(final) not in shared and at.is_gold(final, f.text):
                    hit = True
                else:
                    hit = (
                        not at.numeric(f.text)
                        and form not in p.options
                        and at.word_in(form, at.norm(body))
                        and not at.word_in(form, before)
                    )
                if hit:
                    heading = m.group("h").strip().capitalize()
                    return Leak(_where(role), f"in a {heading!r} section", f.what, at.short(m.group(0).strip()))
    return None


def _verbatim(p: _Prompt, forms: list[Form]) -> list[tuple[Form, str]]:
    """(form, 'verbatim' | 'added') for the forms the prompt shows, the longest first (the most specific names the
    leak: an alias 'City of Paris' over the gold 'Paris' inside it): a long one anywhere the row's own messages are,
    a short one in what the prompt adds to the row's data."""
    out = []
    forms = sorted(forms, key=lambda f: -len(f.text))
    for f in forms:
        form = at.norm(f.text)
        if form in p.options or len(at.key(form)) < 1:
            continue
        if _long(form) and at.word_in(form, p.own):
            out.append((f, "verbatim"))
        elif at.word_in(form, p.added):
            out.append((f, "added"))
    return out


# -- every row -----------------------------------------------------------------------------------------


def _shared_texts(rows: list[Row]) -> set[str]:
    """Messages several rows show word for word (a system prompt, shared few-shot examples)."""
    texts = Counter(at.norm(t) for row in rows for t in {at.content(m) for m in row.prompt})
    return {t for t, n in texts.items() if n > 1}


def _shared_answers(rows: list[Row], golds: dict[int, str | None], shared_texts: set[str]) -> set[str]:
    """Answers the prompts show whatever their row's gold: a value in a message several rows share word for word
    (a system prompt's "e.g. \\boxed{B}"), or stated in as many prompts (or more) where it is not the gold as where
    it is (a worked example, a format sample), is no row's leak.

    A value shown beside more than SPELLINGS different golds is shared without asking math-verify (one value
    has only a few spellings): a few-shot prompt over 10,000 rows costs no 10,000 comparisons."""
    carriers: dict[str, list[str]] = {}  # a value the prompts show -> the golds of the rows showing it
    shared = set()
    for row in rows:
        for m in row.prompt:
            text = at.content(m)
            values = {at.key(v) for _, v in at.answers(text)}
            if at.norm(text) in shared_texts:
                shared |= values
            for key in values:
                carriers.setdefault(key, []).append(str(golds.get(row.index) or ""))
    for key, carried in carriers.items():
        spellings = Counter(at.key(g) for g in carried)
        if len(spellings) > SPELLINGS:
            shared.add(key)
            continue
        as_gold = sum(n for g, n in spellings.items() if at.is_gold(key, g))
        if len(carried) - as_gold >= as_gold:
            shared.add(key)
    return shared


def _carried_elsewhere(
    form: str, where: str, prompts: list[_Prompt], owners: dict[str, set[int]], sample: list[int]
) -> bool:
    """The form shows in at least as many prompts of rows whose gold it is not as of rows whose gold it is (a
    label list, an instruction's word, an option every row shows): no row's leak."""
    mine = others = 0
    for k in sample:
        text = prompts[k].own if where == "verbatim" else prompts[k].added
        if at.word_in(form, text):
            if k in owners.get(form, ()):
                mine += 1
            else:
                others += 1
    return others >= max(1, mine)


def find_leaks(rows: list[Row], golds: dict[int, str | None], forms_of: FormsOf | None = None) -> dict[int, Leak]:
    """Row index -> how its prompt shows its gold, for the rows that do (see the module's docstring)."""
    checked = [r for r in rows if golds.get(r.index) not in (None, "") and str(golds[r.index]).strip()]
    shared_texts = _shared_texts(checked)
    shared = _shared_answers(checked, golds, shared_texts)
    prompts = [_prompt(r, shared_texts) for r in checked]
    forms = [_forms(r, str(golds[r.index]), forms_of) for r in checked]
    owners: dict[str, set[int]] = {}
    for k, fs in enumerate(forms):
        for f in fs:
            owners.setdefault(at.norm(f.text), set()).add(k)
    step = max(1, len(checked) // MAX_CARRIER_ROWS)
    sample = list(range(0, len(checked), step))
    verdicts: dict[tuple[str, str], bool] = {}  # (form, where) -> shared with other rows
    found: dict[int, Leak] = {}
    for k, row in enumerate(checked):
        gold, p = str(golds[row.index]), prompts[k]
        leak = (
            _solution_columns(row, gold, p, shared)
            or _stated(p, forms[k], shared)
            or _sections(p, forms[k], shared_texts, shared)
        )
        if leak is None:
            for f, where in _verbatim(p, forms[k]):
                key = (at.norm(f.text), where)
                if key not in verdicts:
                    verdicts[key] = _carried_elsewhere(key[0], where, prompts, owners, sorted({*sample, k}))
                if not verdicts[key]:
                    how = "shown verbatim" if where == "verbatim" else "added to the row's own text"
                    leak = Leak(_where("user"), how, f.what, repr(at.short(f.text)))
                    break
        if leak is not None:
            found[row.index] = leak
    return found


def check_answer_leak(
    result: Result, rows: list[Row], golds: dict[int, str | None], forms_of: FormsOf | None = None
) -> dict[int, Leak]:
    """answer_leak over the rows with a gold: fail when at least LEAK_FAIL_SHARE of them (and one) leak,
    warn on fewer; every leaking row is listed in data.row_findings. Returns the leaks by row index."""
    checked = [r for r in rows if golds.get(r.index) not in (None, "") and str(golds[r.index]).strip()]
    if not checked:
        result.skip("answer_leak", "no row has a gold answer to look for in its prompt")
        return {}
    found = find_leaks(checked, golds, forms_of)
    total = len(checked)
    if not found:
        result.passed(
            "answer_leak",
            "no prompt shows its gold answer in any form checked (the gold, its aliases and its kind's forms; stated "
            "as the answer, in a hint or solution section, a solution column, or verbatim) "
            f"({total} rows checked)",
        )
        return found
    share = len(found) / total
    failing = share >= LEAK_FAIL_SHARE
    status = "fail" if failing else "warn"
    by_row = {r.index: r for r in checked}
    result.data.setdefault("row_findings", {})["answer_leak"] = [
        {
            "example_id": i,
            "status": status,
            "problem": f"{leak.source} in the prompt shows the gold ({leak.form}, {leak.how}): {leak.evidence}",
        }
        for i, leak in found.items()
    ]
    by_source: dict[tuple[str, str, str], list[tuple[Row, Leak]]] = {}
    for i, leak in found.items():
        by_source.setdefault((leak.source, leak.how, leak.form), []).append((by_row[i], leak))
    parts = []
    for (source, how, form), hits in sorted(by_source.items(), key=lambda kv: -len(kv[1])):
        ids = [str(row.index) for row, _ in hits]
        listed = ", ".join(ids[:LISTED]) + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")
        parts.append(
            f"from {source} on {len(ids)} row(s), {form} {how} (example_id {listed}; e.g. {hits[0][1].evidence})"
        )
    message = f"{len(found)}/{total} rows ({share:.0%}) show their gold answer in the prompt: " + "; ".join(parts)
    hint = _hint({how for _, how, _ in by_source}, {form for _, _, form in by_source})
    if failing:
        result.fail("answer_leak", message + ": the policy can copy the answer instead of solving", hint)
        result.step("take the answer out of the prompt (answer_leak names where it is), then run test_reward again")
    else:
        result.warn("answer_leak", message + f" (under {LEAK_FAIL_SHARE:.0%} of the rows)", hint)
    return found


def _hint(hows: set[str], forms: set[str]) -> str:
    fixes = []
    if "a solution column of the data" in hows:
        fixes.append(
            "build the prompt from the problem column only and keep the solution out of it (a reward that needs "
            "it can read it from info)"
        )
    if (
        any(h.startswith("in a ") for h in hows)
        or "stated as the answer" in hows
        or "added to the row's own text" in hows
    ):
        fixes.append("remove what the prompt adds after the question (the hint, solution or 'the answer is' text)")
    if "shown verbatim" in hows:
        fixes.append(
            "keep the reference, its aliases and hidden tests' expected outputs out of the policy's prompt (a judge "
            "or a reward reads them from the row's data, never from the prompt)"
        )
    return "; ".join(fixes or ["keep the answer out of the prompt"]) + (
        "; every leaking row is in data.row_findings (--rows-out FILE writes them)"
    )
