"""Probes for multiple-choice answers: every option label the prompt shows, and every form of the gold's.

A model answers with a label the prompt shows. So each label of the prompt's options is
scored (``choice_label``): exactly one must earn the gold reward. None earning it while the
raw answer key does (a 0-based index "1" behind a prompt that letters its options A-D, a
letter behind numbered options, a 1-based key read as 0-based) means no answer the prompt
allows can ever be rewarded: ``choice_reachable`` fails. Several earning it means any of
them pays. Then the rewarded label is written the ways models write it, (B), B), \\text{B},
\\textbf{B} and the option's own text (``choice_form``: must earn it), and a wrong option in
the same forms (``wrong_label``: must not).
"""

from __future__ import annotations

from vlab import catalog
from vlab.kinds.base import RowKind
from vlab.kinds.choice.options import PromptOptions, as_letter
from vlab.reward.probes import EPS, Probe, RowResult, answer_part, best_gold, fill, value

LABEL = "choice_label"
FORM = "choice_form"
NEAR = "wrong_label"
LETTERS = catalog.CHOICE_LETTERS
_FORMS = {"paren": "({})", "close_paren": "{})", "text": "\\text{{{}}}", "textbf": "\\textbf{{{}}}"}


def key_labels(gold: str, options: PromptOptions) -> list[str]:
    """The prompt labels the answer key can mean (a number key next to letters: 0- or 1-based)."""
    key = gold.strip()
    out: list[str] = []
    letter = as_letter(key)
    if letter and options.style == "letter":
        out.append(next((x for x in options.labels if x.upper() == letter), letter))
    elif letter and LETTERS.index(letter) < len(options.labels):
        out.append(options.labels[LETTERS.index(letter)])
    if key.isdigit():
        k = int(key)
        if options.style == "letter":
            out += [options.label_of(k), options.label_of(k - 1)]
        else:
            out.append(key)
    texts = [t.strip() for t in options.texts]
    if key in texts:
        out.append(options.labels[texts.index(key)])
    return [x for x in dict.fromkeys(out) if x]


def label_probes(gold: str, kind: RowKind, template: str) -> list[Probe]:
    """Phase one: every option label as the answer, the key's own labels among the gold candidates."""
    options = kind.options
    if options is None:
        return []
    keys = key_labels(gold, options)
    probes = [Probe(f"{LABEL}:{label}", LABEL, fill(template, label)) for label in options.labels]
    probes += [Probe(f"gold_alt:prompt_label_{label}", "gold_alt", fill(template, label)) for label in keys]
    others = [x for x in options.labels if x not in keys]
    if others:
        probes.append(Probe("wrong:other_option", "wrong", fill(template, others[0])))
    return probes


def rewarded_labels(rr: RowResult, fn: str | None) -> list[str]:
    """The option labels that earn the row's top reward."""
    gold = best_gold(rr)
    scores = [value(p, fn) for p in rr.of(LABEL)] + ([value(gold, fn)] if gold is not None else [])
    top = max(scores, default=float("-inf"))
    return [p.probe.id.split(":", 1)[1] for p in rr.of(LABEL) if value(p, fn) >= top - EPS and value(p, fn) > 0]


def form_probes(rr: RowResult, kind: RowKind, template: str, fn: str | None) -> list[Probe]:
    """Phase two: the rewarded label in every form a model writes it, and a wrong one in the same forms."""
    options = kind.options
    rewarded = rewarded_labels(rr, fn)
    if options is None or len(rewarded) != 1:
        return []
    label = rewarded[0]
    index = options.labels.index(label)
    wrong_index = (index + 1) % len(options.labels)
    wrong = options.labels[wrong_index]
    probes = []
    for name, form in _FORMS.items():
        probes.append(Probe(f"{FORM}:{name}", FORM, fill(template, form.format(label))))
        probes.append(Probe(f"{NEAR}:wrong_{name}", NEAR, fill(template, form.format(wrong))))
    if len(label) == 1 and label.isalpha() and label.isupper():  # models write "b" for B
        probes.append(Probe(f"{FORM}:lowercase", FORM, fill(template, label.lower())))
        probes.append(Probe(f"{NEAR}:wrong_lowercase", NEAR, fill(template, wrong.lower())))
    if options.texts[index].strip().lower() != options.texts[wrong_index].strip().lower():
        probes.append(Probe(f"{FORM}:option_text", FORM, fill(template, options.texts[index])))
        probes.append(Probe(f"{NEAR}:wrong_option_text", NEAR, fill(template, options.texts[wrong_index])))
    return probes


def check_choices(result, rows: list[RowResult], kinds: dict[int, RowKind], fn: str | None) -> None:
    """choice_reachable (one option label, and the one the key names, earns the reward) and choice_forms."""
    choice_rows = [rr for rr in rows if kinds[rr.row.index].kind == "choice" and kinds[rr.row.index].options]
    if not choice_rows:
        return
    only_key, several, reached = [], [], 0
    for rr in choice_rows:
        labels = rewarded_labels(rr, fn)
        raw = [
            p
            for p in rr.of("gold") + rr.of("gold_alt")
            if not p.probe.id.startswith("gold_alt:prompt_label") and value(p, fn) > 0
        ]
        if len(labels) == 1:
            reached += 1
        elif len(labels) > 1:
            several.append((rr, labels))
        elif raw:
            only_key.append(rr)
    shown = kinds[choice_rows[0].row.index].options
    if only_key:
        rr = only_key[0]
        result.fail(
            "choice_reachable",
            f"on {len(only_key)}/{len(choice_rows)} rows the reward pays only the raw answer key (e.g. {rr.gold!r}, "
            f"example_id {rr.row.index}) and no option label the prompt shows ({', '.join(shown.labels)}): "
            "a model that answers as the prompt asks never earns it",
            "convert the answer key to the prompt's label (0-based index i -> 'ABCD'[i]; 1-based -> 'ABCD'[i-1]) "
            "when building the rows, as templates/environments/classic-multiple-choice does",
        )
        result.step("map the answer key to the label the prompt shows its options with")
    elif several:
        rr, labels = several[0]
        result.fail(
            "choice_reachable",
            f"several options earn the reward on {len(several)}/{len(choice_rows)} rows "
            f"(e.g. {', '.join(labels)} on example_id {rr.row.index}): any of them pays",
            "compare the parsed label with the one correct label, exactly",
        )
    elif reached:
        result.passed(
            "choice_reachable",
            f"exactly one of the prompt's option labels earns the reward on {reached}/{len(choice_rows)} rows",
        )
    _check_forms(result, choice_rows, fn)
    _check_partial_credit(result, choice_rows, fn)


def _check_partial_credit(result, rows: list[RowResult], fn: str | None) -> None:
    """choice_partial_credit: a wrong option earns nothing (no more than 0, or an empty answer) from the correctness function."""
    if fn is None:
        result.skip(
            "choice_partial_credit", "no reward function is known to judge correctness (the total mixes in format)"
        )
        return
    credited, tried = [], 0
    for rr in rows:
        labels = rewarded_labels(rr, fn)
        empty = [value(p, fn) for p in rr.of("malformed") if p.probe.id == "malformed:empty"]
        if len(labels) != 1 or not empty:
            continue
        tried += 1
        wrong = [p for p in rr.of(LABEL) + rr.of(NEAR) if p.probe.id.split(":", 1)[1] not in labels]
        floor = min(empty[0], 0.0) if empty[0] > float("-inf") else 0.0  # what an empty answer gets, or 0
        paid = [p for p in wrong if value(p, fn) > floor + EPS]
        if paid:
            credited.append((rr, paid[0]))
    if not tried:
        result.skip("choice_partial_credit", "no probed row has exactly one rewarded option to compare with")
    elif credited:
        rr, p = credited[0]
        result.fail(
            "choice_partial_credit",
            f"a wrong option earns {value(p, fn):.3g} from {fn!r} on {len(credited)}/{tried} rows (e.g. "
            f"{answer_part(p.probe.text)!r}, example_id {rr.row.index}): guessing any option pays",
            "pay 0 for a wrong option; a format reward belongs in its own function",
        )
    else:
        result.passed("choice_partial_credit", f"wrong options earn nothing from {fn!r} ({tried} rows)")


def _check_forms(result, rows: list[RowResult], fn: str | None) -> None:
    rejected: dict[str, list] = {}
    paid: dict[str, list] = {}
    for rr in rows:
        gold = best_gold(rr)
        labels = rewarded_labels(rr, fn)
        if gold is None or len(labels) != 1:
            continue
        top = value(gold, fn)
        for p in rr.of(FORM):
            if value(p, fn) < top - EPS:
                rejected.setdefault(p.probe.id.split(":", 1)[1], []).append((rr, p))
        for p in rr.of(NEAR):
            if value(p, fn) >= top - EPS:
                paid.setdefault(p.probe.id.split(":", 1)[1], []).append((rr, p))
    if not any(rr.of(FORM) for rr in rows):
        return
    if paid:
        result.fail(
            "choice_forms",
            "a wrong option earns the gold reward when written as "
            + "; ".join(f"{k} on {len(v)} row(s), e.g. {_shown(v[0][1])!r}" for k, v in paid.items()),
            "read one label from the answer and compare it with the correct one exactly",
        )
    elif any(k != "option_text" for k in rejected):  # stricter than the prompt: the label as asked is the gold
        tried = sum(len(rr.of(FORM)) for rr in rows)
        refused = sum(len(v) for v in rejected.values())
        result.warn(
            "choice_forms",
            f"the correct option scores below the gold reward in {refused} of {tried} other spellings ("
            + "; ".join(f"{k} on {len(v)} row(s), e.g. {_shown(v[0][1])!r}" for k, v in rejected.items())
            + "): the label written as the prompt asks earns it, so this is strictness, not a wrong payment",
            "accept B, (B), B), \\text{B} and \\textbf{B} for option B (strip brackets and \\text{}), "
            "as templates/environments/classic-multiple-choice does, if models write them",
        )
    elif rejected:
        result.warn(
            "choice_forms",
            "the text of the correct option does not earn the reward (only its label does)",
            "fine when the prompt asks for the letter; accept the option's text too if models answer with it",
        )
    else:
        result.passed(
            "choice_forms", "the correct option earns the reward as (B), B), \\text{B}, \\textbf{B} and its text"
        )


def _shown(p) -> str:
    return answer_part(p.probe.text)
