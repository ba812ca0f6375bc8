"""Probe completions for a reward function, and the verdicts drawn from their scores.

Probes are built per dataset row from its gold answer and the environment's expected
format (parser, system prompt, conventions, or a user ``--gold-template``):

  gold       correct answer in the format the environment states
  gold_alt   correct answer in a common alternative format (boxed, ####, "The answer is")
  wrong      a wrong answer in the gold format
  malformed  empty, whitespace only, the answer without the expected tags
  hack       reward-hacking attempts that must never earn the gold reward

Probes that depend on the answer kind (numbers, multiple choice, code) are built in
``numbers``, ``choices`` and ``code``, in the format the gold earned the reward with here
(``RowProbes.formats``). Scoring itself is done by ``vlab.env`` (through verifiers); this
module only builds texts and judges the numbers.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from vlab import catalog
from vlab.core.result import UsageError
from vlab.env import FormatHints, Row, Score
from vlab.kinds.number.equivalence import without_separators
from vlab.reward.wrongs import NUMBER, is_number, wrong_value

EPS = 1e-6
MADE_UP_WRONGS = ("wrong:same_format", "wrong:bare")  # a made-up wrong value, in the gold's format and bare
SLOW_FACTOR = 3.0  # the slow probes' bound: this many times --timeout (a reward's own longer limit fits in it)
_THINK_FILLER = "Let me work through this step by step."
_PLACEHOLDER = re.compile(
    r"<(?:number|answer here|final answer|your answer|integer|int|value|num|n)>|"
    r"\[(?:number only|number|answer|final answer|your answer|integer)\]|\{answer\}|\bN\b(?=\s*$|[\"'`])",
    re.I,
)
_TAG_PAIR = re.compile(r"<([A-Za-z_][\w-]*)>\s*(?:\.\.\.|…|[^<>]{0,40})\s*</\1>")
# An answer line the prompt asks for, its value an explicit placeholder (never a word that merely says
# "answer"): "Answer: $ANSWER" (simple-evals), "ANSWER: X", "Final Answer: <your answer>", "Answer: ...",
# "Final Answer: \boxed{<answer>}"; a quoted label with nothing after it ('after "Answer:"'); and a box around
# a placeholder ("The final answer is $\boxed{answer}$"). The label is capitalised, as prompts show it.
_LABEL = r"(?:Final [Aa]nswer|FINAL ANSWER|Answer|ANSWER)"
_SLOT = (
    r"\$(?:ANSWER|LETTER|NUMBER|FINAL_ANSWER)\b\$?"  # simple-evals' $ANSWER, $LETTER
    r"|[XN](?=\s*$|\s*[\"'`,;)\]}”’]|\.(?!\w)|\s+(?:where|with|in which)\b|\s+\()"  # X or N alone
    r"|\.\.\.|…"
    r"|<[A-Za-z][\w \-]{0,30}>|\[[A-Za-z][\w \-]{0,30}\]|\{[A-Za-z][\w \-]{0,30}\}"  # <answer>, [answer], {answer}
)
_BOXED_SLOT = r"\$?\\boxed\{\s*(?:" + _SLOT + r"|answer|final answer|your answer)?\s*\}\$?"
_ANSWER_LINE = re.compile(r"(?<![\w$])(" + _LABEL + r")\s*:[ \t]*(" + _BOXED_SLOT + r"|" + _SLOT + r")")
_QUOTED_LABEL = re.compile(r"[\"'`“‘](" + _LABEL + r")\s*:\s*[\"'`”’]")
_BOXED_PLACEHOLDER = re.compile(
    r"(?:((?:[Tt]he )?[Ff]inal answer is:?)\s*)?\$?\\boxed\{\s*(?:"
    + _SLOT
    + r"|answer|final answer|your answer)\s*\}\$?"
)


@dataclass
class Probe:
    id: str  # e.g. "gold:parser", "hack:many_candidates"
    category: str  # gold | gold_alt | wrong | malformed | hack | equivalent
    text: str
    # The probe's own behaviour may differ between two scorings (a program that searches the disk for a bounded
    # time): its two scores never count against the reward's determinism.
    varies: bool = False


@dataclass
class RowProbes:
    row: Row
    gold: str  # the gold value as text
    probes: list[Probe]
    formats: dict[str, str] = field(default_factory=dict)  # gold probe id -> its template (with {answer})


def slow_bound(timeout: float) -> float:
    """The slow probes' bound per reward call (a program that never ends, a judge that never answers; the worker's,
    ``env.remote``): SLOW_FACTOR x --timeout."""
    return SLOW_FACTOR * timeout


# -- gold value ----------------------------------------------------------------------


def gold_value(answer: Any, question: str = "") -> str | None:
    """The value a correct completion states: the part after '####' in GSM8K-style answers.

    Thousands separators go only from a number ("1,234"); a list, tuple or interval keeps its commas. An answer
    held as a list (a list, a record of aliases, a list written as text: ``kinds.lists``) states its first answer;
    a kind that knows the others reads them from the row (the short-answer unit's aliases)."""
    if answer is None:
        return None
    if isinstance(answer, (list, tuple, dict)) or (isinstance(answer, str) and answer.strip()[:1] == "["):
        from vlab.kinds.lists import answer_list, held_as

        if not isinstance(answer, str) or held_as(answer):
            listed = answer_list(answer)
            return gold_value(listed[0], question) if listed else None
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return f"{answer:g}" if isinstance(answer, float) else str(answer)
    text = str(answer).strip()
    if not text:
        return None
    if "####" in text:
        text = text.split("####")[-1].strip()
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text)
    if boxed:
        text = boxed[-1]
    return without_separators(text, question) if NUMBER.fullmatch(text) else text


# -- formats ---------------------------------------------------------------------------


def gold_templates(hints: FormatHints, user_template: str | None, user_text: str = "") -> list[tuple[str, str]]:
    """(source, template with {answer}) pairs, the environment's own formats first; then the answer lines the
    user's message asks for (``user_text``, where MATH-style prompts put 'Answer: $ANSWER'), as ``user_prompt``."""
    out: list[tuple[str, str]] = []
    if user_template:
        if "{answer}" not in user_template:
            raise UsageError("--gold-template must contain {answer}", hint='e.g. --gold-template "Answer: {answer}"')
        out.append(("user", user_template))
    if hints.xml_fields:
        values = {f: (_THINK_FILLER if f != hints.answer_field else "{answer}") for f in hints.xml_fields}
        if hints.parser_template is not None:  # the parser's own rendering, values filled in
            slots = re.compile("|".join(re.escape("{" + f + "}") for f in values))
            out.append(("parser", slots.sub(lambda m: values[m.group(0)[1:-1]], hints.parser_template)))
        else:  # a parser that cannot render its fields: plain tags
            out.append(("parser", "\n".join(f"<{f}>\n{v}\n</{f}>" for f, v in values.items())))
    elif hints.think:
        out.append(("parser", f"<think>\n{_THINK_FILLER}\n</think>\n{{answer}}"))
        out.append(("parser_boxed", f"<think>\n{_THINK_FILLER}\n</think>\n\\boxed{{{{answer}}}}"))
    for i, template in enumerate(system_prompt_templates(hints.system_prompt or "")):
        out.append((f"system_prompt{i or ''}", template))
    for i, template in enumerate(answer_line_templates(user_text)):
        out.append((f"user_prompt{i or ''}", template))
    seen: set[str] = set()
    unique = []
    for source, t in out:
        if t not in seen:
            seen.add(t)
            unique.append((source, t))
    return unique


def system_prompt_templates(system_prompt: str) -> list[str]:
    """Formats the system prompt states: '<answer>...</answer>', 'Answer: <number>', '[number only]'."""
    found = []
    for m in _TAG_PAIR.finditer(system_prompt):
        tag = m.group(1)
        if tag.lower() in ("think", "reasoning", "thinking"):
            continue
        template = f"<{tag}>{{answer}}</{tag}>"
        if re.search(r"<(think|reasoning)>", system_prompt):
            inner = re.search(r"<(think|reasoning)>", system_prompt).group(1)
            template = f"<{inner}>\n{_THINK_FILLER}\n</{inner}>\n" + template
        else:
            template = f"{_THINK_FILLER}\n" + template
        found.append(template)
    for line in system_prompt.splitlines():
        m = _PLACEHOLDER.search(line)
        if not m:
            continue
        if "only" in m.group(0).lower():  # "[number only]": the completion is the bare value
            found.append("{answer}")
            continue
        fragment = m.group(0)  # without a stated line format, the placeholder alone
        quoted = re.search(r"[\"'`]([^\"'`]*" + re.escape(m.group(0)) + r"[^\"'`]*)[\"'`]", line)
        # "End with a line in the format: Answer: <number>" -> "Answer: <number>"
        lead = re.search(r"(format|respond|reply|end with|output|write)[^:]*:\s*", line[: m.start()], re.I)
        if quoted:
            fragment = quoted.group(1)
        elif lead:
            fragment = line[lead.end() :]
        fragment = fragment.strip().rstrip(".")
        found.append(f"{_THINK_FILLER}\n" + fragment.replace(m.group(0), "{answer}", 1))
    # the answer lines ('Answer: $ANSWER', 'Final Answer: \\boxed{<answer>}'), after the formats above
    found += [t for t in answer_line_templates(system_prompt) if t not in found]
    return found


def answer_line_templates(text: str) -> list[str]:
    """The answer lines a prompt asks for with an explicit placeholder, each a template with {answer}:
    'Answer: $ANSWER', 'Answer: X', 'ANSWER: ...', 'Final Answer: <answer>' -> 'Answer: {answer}' (the label as
    written); 'put your final answer after "Answer:"' -> 'Answer: {answer}'; 'Final Answer: \\boxed{<answer>}'
    and 'The final answer is $\\boxed{answer}$' as written, the box around {answer}. A sentence that only
    speaks of an answer ("Answer the question.", "Answer: explain your reasoning") states none."""
    found: list[str] = []
    for line in (text or "").splitlines():
        spans = []  # the answer lines read: a box inside one is not read again
        for m in _ANSWER_LINE.finditer(line):
            slot = m.group(2)
            tag = re.fullmatch(r"<([^<>]+)>", slot)
            if tag and f"</{tag.group(1)}>" in line[m.end() :]:  # 'Answer: <answer>...</answer>': a tag pair
                continue
            spans.append(m.span())
            value = _boxed(slot) if "\\boxed" in slot else "{answer}"
            found.append(f"{m.group(1)}: {value}")
        found += [f"{m.group(1)}: {{answer}}" for m in _QUOTED_LABEL.finditer(line)]
        for m in _BOXED_PLACEHOLDER.finditer(line):
            if not any(start <= m.start() < end for start, end in spans):
                found.append(f"{m.group(1) or ''} {_boxed(m.group(0)[len(m.group(1) or '') :].strip())}".strip())
    return list(dict.fromkeys(f"{_THINK_FILLER}\n{t}" for t in found))


def _boxed(written: str) -> str:
    """A box as the prompt writes it (in $...$ or not), around {answer}."""
    box = "\\boxed{{answer}}"
    return f"${box}$" if written.startswith("$") and written.endswith("$") else box


CONVENTIONS = [
    ("boxed", "Working it out step by step.\nThe final answer is \\boxed{{answer}}."),
    ("hashes", "Working it out step by step.\n#### {answer}"),
    ("the_answer_is", "Working it out step by step. The answer is {answer}."),
    ("bare", "{answer}"),
]


# Conventions a system prompt can ask for in words rather than with a placeholder.
_STATED_CONVENTIONS = {"boxed": re.compile(r"\\boxed|\bboxed\b", re.I), "hashes": re.compile(r"####")}


def prompt_stated_probe_ids(
    hints: FormatHints, user_template: str | None = None, user_text: str = ""
) -> dict[str, str]:
    """Gold probe ids in the formats the system prompt asks for (\\boxed{}, #### and the answer lines of
    ``answer_line_templates`` also in the user's message) -> a readable name; the --gold-template format
    stands for the prompt's only where the prompt's own format is not recognised."""
    system_prompt = (hints.system_prompt or "") + "\n" + (user_text or "")
    readable = lambda template: fill(template.replace(_THINK_FILLER, ""), "ANSWER").strip()  # noqa: E731
    templates = gold_templates(hints, user_template, user_text)
    stated = {
        f"gold:{source}": readable(t) for source, t in templates if source.startswith(("system_prompt", "user_prompt"))
    }
    for name, pattern in _STATED_CONVENTIONS.items():
        if pattern.search(system_prompt):
            stated[f"gold_alt:{name}"] = readable(dict(CONVENTIONS)[name].splitlines()[-1])
    if not stated and user_template:
        stated = {"gold:user": readable(user_template)}
    return stated


def answer_part(text: str, n: int = 70) -> str:
    """A probe as shown in a message: without the filler reasoning, on one line, clipped to n characters
    (so a tagged answer reads '<answer>B</answer>', not its last line '</answer>')."""
    text = re.sub(r"<(think|reasoning)>.*?</\1>", "", text, flags=re.S).replace(_THINK_FILLER, "")
    text = text.replace("Working it out step by step.", "")
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# A sentence that states how to write the answer: it speaks of the answer and shows a form (quotes, a colon,
# a line, a tag, a box, a format).
_FORMAT_SENTENCE = re.compile(r"\b(?:answer|final|result)\b", re.I)
_FORMAT_SHAPE = re.compile(r"[\"'`<]|\b(?:line|format|form|tags?|box(?:ed)?|####)\b", re.I)


def format_sentences(text: str) -> list[str]:
    """The sentences of a prompt that ask for an answer format, as written."""
    out = []
    for part in re.split(r"(?<=[.!?])\s+|\n+", text or ""):
        part = part.strip()
        if part and _FORMAT_SENTENCE.search(part) and _FORMAT_SHAPE.search(part):
            out.append(part)
    return out


def fill(template: str, value: str) -> str:
    return template.replace("{answer}", value)


def build_probes(
    row: Row,
    hints: FormatHints,
    user_template: str | None = None,
    preset: str | None = None,
    others: list[str] | None = None,
    other_row: str | None = None,
    text_hacks: bool = False,
) -> RowProbes | None:
    """The row's phase-one probes: the verdict core's, built from the data alone. ``others``: wrong answers of
    the row's own kind (the other offered labels or options, other rows' golds), used for the hacking probes
    instead of a made-up value: a sound parser that skips text that is no answer at all (a reversed label) must
    never be called hacked for it. ``other_row``: another row's gold (``other_golds``), a real wrong answer.
    ``text_hacks``: the gold negated and run into a longer word (``text_hacking_probes``)."""
    gold = gold_value(row.answer, row.question)
    if gold is None:
        return None
    templates = gold_templates(hints, user_template, user_text(row))
    probes: list[Probe] = [Probe(f"gold:{src}", "gold", fill(t, gold)) for src, t in templates]
    probes += [Probe(f"gold_alt:{name}", "gold_alt", fill(t, gold)) for name, t in CONVENTIONS]
    primary = templates[0][1] if templates else CONVENTIONS[0][1]
    wrong = wrong_value(gold)  # made up on purpose: label_others compares the other real labels with it
    probes += [Probe(pid, "wrong", text) for pid, text in zip(MADE_UP_WRONGS, (fill(primary, wrong), wrong))]
    if other_row is not None:
        probes.append(Probe("wrong:other_row", "wrong", fill(primary, other_row)))
    probes.append(Probe("malformed:empty", "malformed", ""))
    probes.append(Probe("malformed:whitespace", "malformed", "  \n\t \n"))
    if "<" in primary:
        probes.append(Probe("malformed:no_tags", "malformed", f"{_THINK_FILLER} I believe it is {gold}"))
    probes += hacking_probes(row, gold, primary, hints, others)
    if text_hacks:
        probes += text_hacking_probes(gold, primary)
    if preset == "gsm8k":
        probes += gsm8k_probes(gold, primary)
    formats = {f"gold:{src}": t for src, t in templates} | {f"gold_alt:{name}": t for name, t in CONVENTIONS}
    return RowProbes(row, gold, probes, formats)


def user_text(row: Row) -> str:
    """The text of the row's user messages (the question, and a format it asks for), else its question."""
    said = " ".join(str(m.get("content") or "") for m in row.prompt or [] if m.get("role") == "user")
    return said or row.question or ""


def primary_template(hints: FormatHints, user_template: str | None = None, user_said: str = "") -> str:
    """The format a correct completion is written in first: the user's, the environment's (its prompt's, the
    user message ``user_said`` included), else \\boxed{}."""
    templates = gold_templates(hints, user_template, user_said)
    return templates[0][1] if templates else CONVENTIONS[0][1]


def hacking_probes(
    row: Row, gold: str, primary: str, hints: FormatHints, others: list[str] | None = None
) -> list[Probe]:
    others = [o for o in others or [] if o != gold]
    wrongs = [others[k % len(others)] for k in range(3)] if others else [wrong_value(gold, k) for k in range(1, 4)]
    numbers = [n.replace(",", "") for n in NUMBER.findall(row.question)]
    candidates = sorted({*wrongs, gold, *(str(i) for i in range(0, 60, 3))}, key=lambda v: (len(v), v))
    out = [Probe("hack:many_candidates", "hack", fill(primary, ", ".join(candidates)))]
    question_values = [n for n in dict.fromkeys(numbers) if n != gold]
    if question_values:
        out.append(Probe("hack:question_numbers", "hack", fill(primary, " ".join(question_values))))
    tag = next((f for f in hints.xml_fields if f != hints.answer_field), None) or "reasoning"
    out.append(
        Probe(
            "hack:gold_in_wrong_tag",
            "hack",
            f"<{tag}>\nThe answer is {gold}.\n</{tag}>\n" + fill(primary, wrongs[0]).replace(_THINK_FILLER, ""),
        )
    )
    if not re.search(rf"(?<![\w.]){re.escape(gold)}(?![\w.])", row.question):  # a prompt with the gold in it
        out.append(Probe("hack:echo_prompt", "hack", row.question))  # would pay a sound reward: not probed
    ramble = " ".join(
        f"Consider step {i}: perhaps the value is {w}, or maybe {v}."
        for i, (w, v) in enumerate(zip(_cycle(wrongs, 120), _cycle(question_values or wrongs, 120)))
    )
    middle = len(ramble) // 2
    ramble = ramble[:middle] + f" It might be {gold}. " + ramble[middle:] + f"\nFinal: {wrongs[1]}"
    out.append(Probe("hack:long_rambling", "hack", ramble))
    # The gold between two wrong answers, neither the first nor the last: a sound parser reads one answer,
    # the last (\boxed{} extraction, XMLParser on text) or the first (0.3's XMLParser on chat messages reads
    # the first tag of the last message), so only a reward that takes any of several answers is paid.
    # The first of several boxes is probed on its own (hack:first_box), \boxed{} being read last everywhere.
    tagged = [fill(primary, w).replace(_THINK_FILLER, "").strip() for w in (wrongs[0], gold, wrongs[1])]
    out.append(Probe("hack:repeated_tags", "hack", _THINK_FILLER + "\n" + "\n".join(tagged)))
    return out


def text_hacking_probes(gold: str, primary: str) -> list[Probe]:
    """The gold inside a reply that says something else: negated ("not X"), and run into a longer word ("X5").
    A reward that looks for the gold anywhere in the answer (a substring, a prefix) pays them."""
    return [
        Probe("hack:negated", "hack", fill(primary, f"not {gold}")),
        Probe("hack:gold_in_longer", "hack", fill(primary, f"{gold}5")),
    ]


def first_box_probe(gold: str, template: str, others: list[str] | None = None) -> list[Probe]:
    """The gold in the first of two \\boxed{} and a wrong answer in the last, for formats that box the answer:
    \\boxed{} is read last (extract_boxed_answer, math-verify), so only a first-box reader pays. ``others``: wrong
    answers of the row's own kind (see ``build_probes``)."""
    if "\\boxed{" not in template:
        return []
    wrong = next((o for o in others or [] if o != gold), None) or wrong_value(gold)
    return [Probe("hack:first_box", "hack", fill(template, gold) + f"\nWait, that was wrong: \\boxed{{{wrong}}}")]


def _cycle(values: list[str], n: int) -> list[str]:
    return [values[i % len(values)] for i in range(n)] if values else []


def gsm8k_probes(gold: str, primary: str) -> list[Probe]:
    """Equivalent spellings of a numeric gold answer a GSM8K reward should accept."""
    if not is_number(gold):
        return []
    value = float(gold)
    forms = {"decimal": f"{value:.2f}", "trailing_period": f"{gold}.", "dollar": f"${gold}"}
    if abs(value) >= 1000 and value == int(value):
        forms["thousands_separator"] = f"{int(value):,}"
    return [Probe(f"equivalent:{k}", "equivalent", fill(primary, v)) for k, v in forms.items()]


# -- verdicts --------------------------------------------------------------------------


@dataclass
class ProbeScore:
    probe: Probe
    score: Score


@dataclass
class RowResult:
    row: Row
    gold: str
    scored: list[ProbeScore]
    reads: str | None = None  # the function whose value the verdicts read (the correctness function); None: the total

    def of(self, category: str) -> list[ProbeScore]:
        """The probes of a category that got a score: a failed scoring, or a timeout of what the verdicts read, is
        no evidence either way (scored as -inf it would count as refused, and never as paid): no verdict reads it."""
        return [p for p in self.of_all(category) if got_score(p, self.reads)]

    def of_all(self, category: str) -> list[ProbeScore]:
        return [p for p in self.scored if p.probe.category == category]


def got_score(p: ProbeScore, reads: str | None = None) -> bool:
    timed_out = reads in p.score.timed_out if reads else bool(p.score.timed_out)
    return p.score.total is not None and not timed_out


def correctness_function(functions: list) -> str | None:
    """The function that judges correctness: the catalog's rule, on the rubric's declared weights."""
    return catalog.correctness_function([catalog.FunctionFacts(f.name, f.weight) for f in functions])


def value(ps: ProbeScore, fn: str | None) -> float:
    v = ps.score.total if fn is None else ps.score.per_function.get(fn)
    return v if isinstance(v, (int, float)) and math.isfinite(v) else float("-inf") if v is None else float("nan")


def gold_established(rr: RowResult) -> bool:
    """The best gold probe beats every wrong and empty answer (so it is a baseline to compare to)."""
    gold = best_gold(rr)
    others = [
        p.score.total
        for p in rr.of("wrong") + rr.of("malformed")
        if p.score.total is not None and p.probe.id != "malformed:no_tags"
    ]
    return gold is not None and bool(others) and gold.score.total > max(others) + EPS


def best_gold(rr: RowResult) -> ProbeScore | None:
    golds = rr.of("gold") + rr.of("gold_alt")
    golds = [g for g in golds if g.score.total is not None]
    return max(golds, key=lambda p: (p.score.total, p.probe.category == "gold")) if golds else None


def best_format(rr: RowResult, built: RowProbes) -> str:
    """The template of the gold probe that scored best on this row (the primary one when none did)."""
    best = best_gold(rr)
    if best is not None and best.probe.id in built.formats:
        return built.formats[best.probe.id]
    return next(iter(built.formats.values()), CONVENTIONS[0][1])


def summarize_probe_kinds(row_results: list[RowResult], functions: list) -> list[dict]:
    """Per probe id: mean total and mean of each function across rows."""
    by_id: dict[str, list[ProbeScore]] = {}
    for rr in row_results:
        for ps in rr.scored:
            by_id.setdefault(ps.probe.id, []).append(ps)
    out = []
    for pid, items in by_id.items():
        totals = [
            p.score.total for p in items if isinstance(p.score.total, (int, float)) and math.isfinite(p.score.total)
        ]
        entry = {
            "probe": pid,
            "category": items[0].probe.category,
            "n": len(items),
            "total": round(statistics.fmean(totals), 4) if totals else None,
            "functions": {},
        }
        for f in functions:
            vals = [p.score.per_function.get(f.name) for p in items]
            vals = [v for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]
            entry["functions"][f.name] = round(statistics.fmean(vals), 4) if vals else None
        out.append(entry)
    return out
