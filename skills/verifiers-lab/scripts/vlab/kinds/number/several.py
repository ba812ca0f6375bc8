"""Several answers and units: a numeric row whose gold is several answers that must all be given (OlympiadBench's
is_multiple_answer: '1, 3', '(1,8,19), (2,7,13)'), and a row whose answer has a unit (km/h).

The numeric templates hold them per row (``answers``: the several answers, [] for one; ``unit``) and read them
with the code of ``equivalence.template_answers``: the reply's last run of boxes split at its commas, paired with
the gold answers in any order, each as often as the gold gives it; a unit after the value is dropped. Every probe
here is confirmed by that code first (equal for a spelling, different for a wrong answer).

Checks:
  several_answers  the answers in another order earn the gold's reward (they are a set of solutions); one answer
                   dropped, one added, one changed, a repeated value dropped, or two answers written as an
                   interval never do; the answers in separate boxes, or without spaces, should (a warning)
  answer_unit      the gold with its unit written after it earns the gold's reward (a warning: the unit is optional)
  several_prompt   rows with several answers, or a unit, whose prompt does not say how to write them (a warning)
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from vlab.kinds.number.equivalence import same_value, template_answers
from vlab.kinds.rows import row_fields
from vlab.reward.probes import EPS, Probe, RowResult, answer_part, best_gold, fill, value
from vlab.reward.wrongs import wrong_value

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row

FORM, NEAR, UNIT = "several_form", "several_near", "unit_form"
REQUIRED = {"reordered"}  # refusing these fails: the answers are a set of solutions
NEAR_MEANS = {
    "dropped_answer": "one answer dropped earns it",
    "added_answer": "one answer more earns it",
    "changed_answer": "one answer changed earns it",
    "dropped_repeat": "a repeated value given once earns it",
    "as_interval": "the two answers written as an interval earn it",
}
SHOWN = 3
_BOX = "\\boxed{{answer}}"
_SAYS_SEVERAL = re.compile(
    r"several answers|multiple answers|all (?:of )?(?:them|the answers|answers|solutions|values)|separated by commas"
    r"|comma[- ]separated",
    re.I,
)


def several_answers(row: Row, gold: str | None = None) -> list[str]:
    """The row's several answers as the numeric templates hold them (``answers``, two or more, whose joined text is
    the row's answer), else []."""
    found = row_fields(row).get("answers")
    if not isinstance(found, (list, tuple)) or len(found) < 2 or not all(isinstance(a, str) for a in found):
        return []
    answer = gold if gold is not None else row.answer
    return list(found) if isinstance(answer, str) and ", ".join(found) == answer.strip() else []


def row_unit(row: Row) -> str | None:
    """The row's unit (the numeric templates' ``unit``), else None."""
    unit = row_fields(row).get("unit")
    return unit.strip() or None if isinstance(unit, str) else None


def _same(given: str, gold: str) -> float:
    fast = template_answers().quick_verdict(given, gold)
    return fast if fast is not None else float(same_value(given, gold))


def pays(text: str, answers: list[str], unit: str | None = None) -> bool:
    """The numeric templates' verdict on the answers a box text gives (split at its commas, the unit dropped)."""
    code = template_answers()
    given = [code.without_unit(part, unit) for part in code.split_answers(text)]
    return code.pair_up(given, answers, _same) == 1.0


def several_probes(answers: list[str], template: str, unit: str | None = None) -> list[Probe]:
    """Spellings (several_form) and wrong answers (several_near) of several answers, in ``template``."""
    joined = ", ".join(answers)
    forms = []
    if list(reversed(answers)) != answers:
        forms.append(("reordered", fill(template, ", ".join(reversed(answers)))))
    if _BOX in template:
        forms.append(("separate_boxes", template.replace(_BOX, ", ".join("\\boxed{" + a + "}" for a in answers))))
    forms.append(("no_spaces", fill(template, ",".join(answers))))
    near = [("dropped_answer", answers[:-1]), ("added_answer", [*answers, _extra(answers)])]
    near.append(("changed_answer", [*answers[:-1], wrong_value(answers[-1])]))
    repeated = [a for a, n in Counter(answers).items() if n > 1]
    if repeated:
        dropped = list(answers)
        dropped.remove(repeated[0])
        near.append(("dropped_repeat", dropped))
    out = [Probe(f"several:{name}", FORM, text) for name, text in forms if _read_back(text, answers, unit)]
    for name, wrong in near:
        if wrong and not pays(", ".join(wrong), answers, unit):
            out.append(Probe(f"several:{name}", NEAR, fill(template, ", ".join(wrong))))
    if len(answers) == 2 and not pays(f"[{joined}]", answers, unit):
        out.append(Probe("several:as_interval", NEAR, fill(template, f"[{joined}]")))
    return out


def _read_back(text: str, answers: list[str], unit: str | None) -> bool:
    """A spelling the templates pay: its last run of boxes (or, unboxed, its text) gives the answers."""
    boxes = template_answers().boxed_run(text)
    return pays(", ".join(boxes) if boxes else answer_part(text, 10**6), answers, unit)


def _extra(answers: list[str]) -> str:
    return next((str(k) for k in range(7, 100) if all(not same_value(a, str(k)) for a in answers)), "99")


def unit_probes(gold: str, template: str, unit: str) -> list[Probe]:
    """The gold with its unit written after it, inside the box and after it (unit_form)."""
    out = []
    if re.search(r"[A-Za-z]", unit):
        out.append(("unit_inside", fill(template, f"{gold} \\text{{ {unit.strip('$')}}}")))
    if _BOX in template:
        out.append(("unit_after", fill(template.replace(_BOX, f"{_BOX} {unit}"), gold)))
    return [Probe(f"unit:{name}", UNIT, text) for name, text in out]


def extra_rows(scope: list, sample: list, kinds: dict, golds: dict, limit: int) -> list:
    """The first row with several answers, the first whose answers repeat a value (a repeat dropped is probed there)
    and the first with one answer and a unit, where the sample has none."""
    taken, extra = {r.index for r in sample}, []
    numeric = [r for r in scope if kinds[r.index].kind == "number" and golds.get(r.index) is not None]
    ids = {r.index for r in numeric}
    one_unit = lambda r: row_unit(r) and not several_answers(r, golds[r.index])  # noqa: E731 - its unit probes
    repeats = lambda r: len(set(found := several_answers(r, golds[r.index]))) < len(found)  # noqa: E731
    for wanted in (lambda r: several_answers(r, golds[r.index]), repeats, one_unit):
        if len(extra) >= limit or any(wanted(r) for r in sample if r.index in ids):
            continue
        found = next((r for r in numeric if r.index not in taken and wanted(r)), None)
        if found is not None:
            extra.append(found)
            taken.add(found.index)
    return extra


def check_several(result: Result, rows: list[RowResult], fn: str | None, established) -> None:
    """several_answers and answer_unit on the rows whose gold beats wrong answers."""
    base = [rr for rr in rows if established(rr)]
    paid, refused, tried = [], [], 0
    units_refused, units_tried = [], 0
    for rr in base:
        gold = value(best_gold(rr), fn)
        for p in rr.of(NEAR):
            tried += 1
            if value(p, fn) >= gold - EPS:
                paid.append((rr, p))
        for p in rr.of(FORM):
            tried += 1
            if value(p, fn) < gold - EPS:
                refused.append((rr, p))
        for p in rr.of(UNIT):
            units_tried += 1
            if value(p, fn) < gold - EPS:
                units_refused.append((rr, p))
    if tried:
        _several_verdict(result, paid, refused, tried)
    if units_tried:
        if units_refused:
            result.warn(
                "answer_unit",
                f"{len(units_refused)} of {units_tried} golds written with their unit earn less than the gold "
                f"({_shown(units_refused)}): a model writing the unit, as it may, is refused",
                "drop the row's unit after the value before comparing (the numeric templates' without_unit)",
            )
        else:
            result.passed("answer_unit", f"the gold with its unit after it earns the gold's reward ({units_tried})")


def _several_verdict(result: Result, paid: list, refused: list, tried: int) -> None:
    required = [(rr, p) for rr, p in refused if p.probe.id.split(":", 1)[1] in REQUIRED]
    if paid or required:
        parts = []
        for name in dict.fromkeys(p.probe.id.split(":", 1)[1] for _, p in paid):
            hits = [(rr, p) for rr, p in paid if p.probe.id.endswith(f":{name}")]
            parts.append(f"{name} ({NEAR_MEANS.get(name, 'paid')}) on {len(hits)} row(s), {_shown(hits)}")
        if required:
            parts.append(f"the answers in another order are refused on {len(required)} row(s), {_shown(required)}")
        result.fail(
            "several_answers",
            "several answers are judged wrongly: " + "; ".join(parts),
            "split the boxed answer at its top-level commas and pair each answer with one gold answer, in any order, "
            "each gold answer once (templates/environments/v1-numeric's pair_up); never as a set, a substring or "
            "one math expression (math-verify reads '1,3' as an interval)",
        )
    elif refused:
        names = sorted({p.probe.id.split(":", 1)[1] for _, p in refused})
        result.warn(
            "several_answers",
            f"{len(refused)} spellings of several answers earn less than the gold ({', '.join(names)}; "
            f"{_shown(refused)}): a model that writes them so is refused",
            "read the reply's last run of boxes together (\\boxed{1}, \\boxed{3}) and ignore spacing",
        )
    else:
        result.passed(
            "several_answers",
            f"several answers are judged as a set of solutions ({tried} probes: reordered, separate boxes paid; one "
            "dropped, added or changed, a repeated value dropped, an interval refused)",
        )


def _shown(hits: list) -> str:
    return "; ".join(
        f"e.g. {answer_part(p.probe.text, 50)!r} for gold {rr.gold!r} (example_id {rr.row.index})" for rr, p in hits[:1]
    )


def check_prompts(result: Result, scope: list, kinds: dict, golds: dict) -> None:
    """several_prompt: rows with several answers or a unit say in their prompt how to write them."""
    several = [r for r in scope if kinds[r.index].kind == "number" and several_answers(r, golds.get(r.index))]
    units = [r for r in scope if kinds[r.index].kind == "number" and row_unit(r)]
    if not several and not units:
        return
    text = lambda r: "\n".join(str(m.get("content") or "") for m in r.prompt) or r.question  # noqa: E731
    silent = [r for r in several if not _SAYS_SEVERAL.search(text(r))]
    unnamed = [r for r in units if row_unit(r).strip("$").strip() not in text(r)]
    if silent or unnamed:
        said = []
        if silent:
            said.append(
                f"{len(silent)} of {len(several)} rows with several answers never say how to give them "
                f"(e.g. example_id {silent[0].index}, gold {golds.get(silent[0].index)!r})"
            )
        if unnamed:
            said.append(
                f"{len(unnamed)} of {len(units)} rows with a unit never name it "
                f"(e.g. example_id {unnamed[0].index}, unit {row_unit(unnamed[0])!r})"
            )
        result.warn(
            "several_prompt",
            "; ".join(said) + ": a model answering another way is refused",
            "say it in the prompt: 'give all of them in one \\boxed{}, separated by commas'; 'the answer is in km/h' "
            "(the numeric templates do, from MULTIPLE_COLUMN and UNIT_COLUMN)",
        )
    else:
        result.passed(
            "several_prompt",
            f"every row with several answers ({len(several)}) or a unit ({len(units)}) says in its prompt how to "
            "write them",
        )
