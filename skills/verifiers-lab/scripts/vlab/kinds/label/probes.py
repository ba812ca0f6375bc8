"""Class labels: the label space a classification environment offers, and probes with its real labels.

A row is a label row when its prompt lists the allowed labels ("The allowed labels are: anger,
joy, ..."; "the label (a, b, c)"; "one of: a, b or c"), when it carries them (a ``labels`` field),
or when the environment says it classifies and its golds take a few values. That is the data's
kind: a gold of "2" in a label environment is a label, never a number (no 2.0 / 2\\pi probes).

Checks (``label_*``):
  label_golds   every gold is one of the labels the row's prompt offers (a digit gold next to named
                labels can never be earned by a model that answers as asked); fails naming rows
  label_prompt  the prompt offers every label (a model cannot guess the label space): as a list, or at least
                by name; a failure names the labels the prompts leave out
  (label_map    the golds name the class ids as every label map the data carries does: ``reward.label_map``)
  label_others  every other real label earns less than the gold, and no more than a made-up wrong
                answer from the correctness function (partial credit for any allowed label pays a
                model that always answers the majority class)
  label_forms   the gold in another case earns the gold reward; \\text{gold} and "gold." should too
  label_hacks   the gold then a wrong label, and every label at once, earn less than the gold;
                a wrong label then the gold should earn it (the last answer counts)
  label_validate  the taskset's own validate() on the checked rows: what it rejects
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from vlab.core.result import Result
from vlab.env import Row
from vlab.kinds.base import RowKind
from vlab.kinds.rows import row_fields
from vlab.reward.probes import EPS, MADE_UP_WRONGS, Probe, RowResult, best_gold, fill, value

OTHER, FORM, HACK = "label_other", "label_form", "label_hack"
REQUIRED_FORMS = {"upper", "lower", "title"}  # a reward that rejects these fails label_forms (the others warn)
MAX_OTHERS = 20  # other labels probed per row
MAX_LABELS = 50
SHOWN = 3
_LIST_PATTERNS = [
    re.compile(
        r"\b(?:labels?|categor(?:y|ies)|classes|class names|emotions|sentiments)\b[^.\n:]{0,30}?\b(?:are|is)\s*:?\s*"
        r"(?P<l>[^\n]+)",
        re.I,
    ),
    re.compile(r"\b(?:labels?|categor(?:y|ies)|classes)\s*:\s*(?P<l>[^\n]+)", re.I),
    re.compile(r"\b(?:labels?|categor(?:y|ies)|class)\s*\((?P<l>[^)\n]+)\)", re.I),
    re.compile(r"\bone of\s*:?\s*(?P<l>[^\n]+)", re.I),
]
_CLASSIFY = re.compile(r"\b(?:classif\w*|labels?|categor\w+)\b", re.I)
_FIELDS = ("labels", "label_names", "classes", "allowed_labels")


def norm(label: object) -> str:
    return " ".join(str(label).split()).casefold()


def offered_labels(text: str) -> list[str] | None:
    """The labels a prompt lists, in order, or None."""
    for pattern in _LIST_PATTERNS:
        for m in pattern.finditer(text):
            head = re.split(r"(?<=[\w\"'`)])[.;](?:\s|$)|\n", m.group("l"))[0]
            items = [i.strip().strip("\"'`*").strip() for i in re.split(r"\s*(?:,|\||\bor\b|\band\b)\s*", head)]
            items = [i for i in items if i]
            if 2 <= len(items) <= MAX_LABELS and all(len(i) <= 40 and len(i.split()) <= 4 for i in items):
                return items
    return None


def _field_labels(row: Row) -> list[str] | None:
    fields = row_fields(row)
    for name in _FIELDS:
        value = fields.get(name)
        if isinstance(value, (list, tuple)) and len(value) >= 2 and all(isinstance(v, (str, int)) for v in value):
            return [str(v) for v in value]
    return None


@dataclass(frozen=True)
class LabelSpace:
    """The environment's labels, and per row what its prompt offers (None: the prompt lists none)."""

    labels: tuple[str, ...]
    offered: dict[int, tuple[str, ...] | None]
    source: str  # prompt | row field | golds


def label_space(scope: list[Row], golds: dict[int, str | None], kinds: dict[int, RowKind]) -> LabelSpace | None:
    """The label space when the rows are label rows (multiple choice and code rows never are)."""
    rows = [r for r in scope if kinds[r.index].kind in ("number", "text") and golds.get(r.index) is not None]
    if not rows:
        return None
    prompts = {r.index: "\n".join(str(m.get("content") or "") for m in r.prompt) for r in rows}
    offered = {r.index: offered_labels(prompts[r.index]) for r in rows}
    carried = {r.index: _field_labels(r) for r in rows}
    listed = [r for r in rows if offered[r.index]]
    # A label space is one list every prompt offers; lists that change from row to row are part of the question.
    shared = Counter(tuple(norm(x) for x in offered[r.index]) for r in listed).most_common(1)
    if listed and shared[0][1] * 2 >= len(rows):
        source = "prompt"
        labels = _union(offered[r.index] for r in listed)
    elif any(carried.values()):
        source = "row field"
        labels = _union(v for v in carried.values() if v)
    else:
        distinct = {norm(golds[r.index]) for r in rows}
        says = sum(1 for r in rows if _CLASSIFY.search(prompts[r.index])) * 2 >= len(rows)
        if not (says and len(rows) >= 10 and 2 <= len(distinct) <= 20 and len(distinct) * 2 <= len(rows)):
            return None
        source = "golds"
        labels = _union([[golds[r.index] for r in rows]])
    return LabelSpace(tuple(labels), {i: tuple(v) if v else None for i, v in offered.items()}, source)


def _union(lists) -> list[str]:
    out: dict[str, str] = {}
    for labels in lists:
        for label in labels:
            out.setdefault(norm(label), str(label).strip())
    return list(out.values())


def label_kind() -> RowKind:
    return RowKind("label")


# -- the label space, over the whole scope (no scoring) -------------------------------------


def check_label_space(result: Result, scope: list[Row], golds: dict[int, str | None], space: LabelSpace) -> None:
    """label_golds and label_prompt."""
    rows = [r for r in scope if r.index in space.offered]
    listed = [r for r in rows if space.offered[r.index]]
    outside = [
        (r, golds[r.index], space.offered[r.index])
        for r in listed
        if norm(golds[r.index]) not in {norm(x) for x in space.offered[r.index]}
    ]
    if outside:
        ids = ", ".join(str(r.index) for r, _, _ in outside[:10]) + (" ..." if len(outside) > 10 else "")
        r, gold, offered = outside[0]
        result.fail(
            "label_golds",
            f"{len(outside)}/{len(listed)} golds are not one of the labels the prompt offers, so no reply given as "
            f"asked can earn the reward: example_id {r.index} has gold {gold!r}, the prompt offers "
            f"{', '.join(offered)} (rows {ids})",
            "make each gold one of the offered labels: name integer class ids (the classification templates' "
            "LABEL_NAMES, filled in by new_env from inspect_dataset's mapping.txt / --label-names), or offer "
            "the labels the golds use",
        )
    elif listed:
        result.passed("label_golds", f"every gold is one of the labels its prompt offers ({len(listed)} rows)")
    _check_prompt_lists(result, rows, golds, space)


def _check_prompt_lists(result: Result, rows: list[Row], golds: dict[int, str | None], space: LabelSpace) -> None:
    """label_prompt: every prompt offers every label (the space's and every gold's), as a list or at least by
    name; a failure names the labels the prompts leave out."""
    codes = not any(str(x).strip().isdigit() for x in space.labels)  # digit golds next to names: label_golds' case
    vocab = _union([space.labels, [g for r in rows if (g := golds[r.index]) and not (codes and g.strip().isdigit())]])
    unlisted, short, left, named = [], [], {}, Counter()
    for r in rows:
        offered = space.offered[r.index]
        if offered:
            have = {norm(x) for x in offered}
        else:
            text = "\n".join(str(m.get("content") or "") for m in r.prompt) or r.question
            have = {norm(x) for x in vocab if re.search(rf"(?<!\w){re.escape(str(x).strip())}(?!\w)", text, re.I)}
        missing = [x for x in vocab if norm(x) not in have]
        if missing:
            (short if offered else unlisted).append(r)
            for x in missing:
                left.setdefault(bool(offered), Counter())[x] += 1
            if not offered:
                named.update(x for x in vocab if norm(x) in have)
    problems = []
    if unlisted:
        gone = list(left[False])
        told = f"they name {_listed(named)} but leave out {_listed(gone)}" if named else f"none names {_listed(gone)}"
        problems.append(
            f"{len(unlisted)}/{len(rows)} prompts do not list the allowed labels ({told}): a model can only guess "
            f"the label space (rows {_ids(unlisted)})"
        )
    if short:
        gone = list(left[True])
        golds_of = sum(1 for r in rows if norm(golds[r.index] or "") in {norm(x) for x in gone})
        problems.append(
            f"{len(short)}/{len(rows)} prompts list labels but leave out {_listed(gone)}"
            + (f" (the gold of {golds_of} rows)" if golds_of else "")
            + f", so a model is never offered {'it' if len(gone) == 1 else 'them'} (rows {_ids(short)})"
        )
    if problems:
        result.fail(
            "label_prompt",
            "; ".join(problems),
            f"list every label ({_listed(vocab)}) in the prompt or system prompt, as the classification templates "
            "do (their labels argument, else LABEL_NAMES, else every label in the rows)",
        )
    elif rows:
        result.passed("label_prompt", f"every prompt offers every label ({len(rows)} rows)")


def _listed(labels) -> str:
    labels = list(labels)
    return ", ".join(repr(x) for x in labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")


def _ids(rows: list[Row]) -> str:
    return ", ".join(str(r.index) for r in rows[:10]) + (" ..." if len(rows) > 10 else "")


# -- probes with the real labels (phase two, in the format the gold earned the reward with) --


def label_probes(gold: str, space: LabelSpace, template: str) -> list[Probe]:
    others = [x for x in space.labels if norm(x) != norm(gold)][:MAX_OTHERS]
    out = [Probe(f"{OTHER}:{x}", OTHER, fill(template, x)) for x in others]
    forms = {"upper": gold.upper(), "lower": gold.lower(), "title": gold.title(), "trailing_period": f"{gold}."}
    if "\\boxed" in template:
        forms["latex_text"] = f"\\text{{{gold}}}"
    clash = {norm(x) for x in others}
    out += [
        Probe(f"{FORM}:{name}", FORM, fill(template, text))
        for name, text in forms.items()
        if text != gold and norm(text) not in clash
    ]
    if others:
        wrong = others[0]
        first = fill(template, gold).rstrip()
        out.append(Probe(f"{HACK}:gold_then_wrong", HACK, first + "\nOn reflection:\n" + fill(template, wrong)))
        out.append(
            Probe(f"{HACK}:wrong_then_gold", "label_correction", fill(template, wrong) + "\nOn reflection:\n" + first)
        )
        out.append(Probe(f"{HACK}:all_labels", HACK, fill(template, ", ".join(space.labels))))
    return out


def check_label_probes(result: Result, rows: list[RowResult], fn: str | None, established) -> None:
    """label_others, label_forms and label_hacks on the rows whose gold beats wrong answers."""
    paid_other, partial, rejected, hacks, corrections = [], [], {}, [], []
    tried = 0
    for rr in rows:
        gold = best_gold(rr)
        if gold is None or not established(rr):
            continue
        top = value(gold, fn)
        wrong = [value(p, fn) for p in rr.of("wrong") if p.probe.id in MADE_UP_WRONGS]  # not another row's label
        floor = max(wrong) if wrong else float("-inf")
        for p in rr.of(OTHER):
            tried += 1
            got = value(p, fn)
            if got >= top - EPS:
                paid_other.append((rr, p, got))
            elif got > floor + EPS:
                partial.append((rr, p, got))
        for p in rr.of(FORM):
            tried += 1
            if value(p, fn) < top - EPS:
                rejected.setdefault(p.probe.id.split(":", 1)[1], []).append((rr, p, value(p, fn)))
        for p in rr.of(HACK):
            tried += 1
            if value(p, fn) >= top - EPS:
                hacks.append((rr, p, value(p, fn)))
        for p in rr.of("label_correction"):
            if value(p, fn) < top - EPS:
                corrections.append((rr, p, value(p, fn)))
    if not tried:
        return
    scorer = f"{fn!r}" if fn else "the total reward"
    if paid_other or partial:
        what = "earns the gold reward" if paid_other else "earns more than a made-up wrong answer (partial credit)"
        result.fail(
            "label_others",
            f"another real label {what} from {scorer}: " + _examples(paid_other or partial),
            "score 1 only for the gold label and the same as any wrong answer for every other label; reward "
            "answering with an allowed label, if at all, in a separate metric (weight 0), as the templates do",
        )
    else:
        result.passed("label_others", "every other real label earns less than the gold, and no partial credit")
    required = {k: v for k, v in rejected.items() if k in REQUIRED_FORMS}
    cosmetic = {k: v for k, v in rejected.items() if k not in REQUIRED_FORMS}
    if required:
        result.fail(
            "label_forms",
            "the gold label in another case earns less than the gold: "
            + "; ".join(f"{k}: {_examples(v)}" for k, v in required.items()),
            "compare labels ignoring case and surrounding spaces (str.casefold), as the classification templates do",
        )
    elif cosmetic:
        result.warn(
            "label_forms",
            "the gold label written another way a model writes it earns less than the gold: "
            + "; ".join(f"{k}: {_examples(v)}" for k, v in cosmetic.items()),
            "strip \\text{} and punctuation around the label before comparing (the classification templates do)",
        )
    else:
        result.passed("label_forms", "the gold label in any case, in \\text{} or with a trailing period earns the gold")
    if hacks:
        result.fail(
            "label_hacks",
            "a reply naming several labels earns the gold reward: "
            + _examples(hacks)
            + (
                " (the reward reads the first answer, not the last)"
                if any("then_wrong" in p.probe.id for _, p, _ in hacks)
                else ""
            ),
            "read only the last \\boxed{} (or last answer) and compare it whole with the gold label",
        )
    else:
        result.passed("label_hacks", "the gold then a wrong label, and every label at once, earn less than the gold")
    if corrections and not hacks:
        result.warn(
            "label_last_answer",
            "a reply that names a wrong label, then the gold, earns less than the gold: " + _examples(corrections),
            "read the last answer of the reply: a model that corrects itself should be scored on its correction",
        )


def _examples(hits: list) -> str:
    rr, p, got = hits[0]
    shown = p.probe.text.strip().replace("\n", " ")[-70:]
    return f"{p.probe.id.split(':', 1)[1]} on {len(hits)} probe(s), e.g. {shown!r} scored {got:g} for gold {rr.gold!r} (example_id {rr.row.index})"
