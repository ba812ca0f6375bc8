"""Probes and checks for short answers with aliases, built from the row's own aliases and the other rows'.

Every probe is confirmed first by the short-answer templates' own comparison (``compare.matches``): an alias and a
spelling of the gold match the row's aliases, another row's alias matches none of them, so a verdict never rests
on a probe that is itself wrong.

Checks:
  aliases          every other alias of the row, written as the gold was, earns the gold's reward (a reward that reads
                   the first alias only, or compares with the list's text, fails)
  alias_forms      the gold in another case, with an article added or dropped, with punctuation: QA exact match
                   ignores these; a reward that refuses them is stricter than the task (a warning, with the share)
  other_aliases    another row's alias never earns the gold's reward
  aliases_reachable  every alias of every row (in --reach-seconds) earns the top reward through the environment
The core's probes cover the rest (another row's gold, "not X", "X5", a box listing several candidates); the box
listing this row's gold with other rows' aliases, and "X or Y", are hacks here (``reward_hacking``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from vlab.kinds.lists import held_as
from vlab.kinds.number.values import looks_like_math, parse_number
from vlab.kinds.rows import row_fields
from vlab.kinds.short_answer.compare import aliases_of, matches, normalise
from vlab.reward.probes import EPS, Probe, RowResult, answer_part, best_gold, fill, value

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row

ALIAS, FORM, OTHER = "alias", "alias_form", "alias_other"
MAX_ALIASES = 8  # other aliases probed per row
SHOWN = 3
BATCH = 256  # aliases scored at once by aliases_reachable
_ARTICLE = ("the ", "a ", "an ")


def row_aliases(row: Row, fields: dict | None = None, numbers: bool = False) -> list[str]:
    """The row's aliases, each once: its ``aliases`` field (the short-answer templates'), else its answer when the
    environment holds it as a list of texts; [] for a row that carries no list of aliases. A list of numbers or
    math alone (OlympiadBench's ['$1,3$']) is the number unit's, unless ``numbers`` (the data's lists are aliases)."""
    fields = row_fields(row) if fields is None else fields
    listed = fields.get("aliases")
    if isinstance(listed, (list, tuple)) and listed and all(isinstance(a, str) for a in listed):
        return aliases_of(list(listed))
    if isinstance(row.answer, (list, tuple, dict)) or (isinstance(row.answer, str) and held_as(row.answer)):
        found = aliases_of(row.answer)
        mathy = all(parse_number(a) is not None or looks_like_math(a) for a in found)
        return [] if mathy and not numbers else found
    return []


def held_as_text(row: Row) -> bool:
    """The environment holds the row's answer as a list's text ("['a', 'b']"): what its reward compares with."""
    return isinstance(row.answer, str) and held_as(row.answer) == "lists written as text"


def spellings(gold: str, aliases: list[str]) -> list[tuple[str, str]]:
    """The gold written the other ways QA exact match treats as the same answer (each confirmed by ``matches``)."""
    out = [("upper_case", gold.upper()), ("lower_case", gold.lower()), ("title_case", gold.title())]
    lowered = gold.lower()
    article = next((a for a in _ARTICLE if lowered.startswith(a)), None)
    out.append(("without_article", gold[len(article) :]) if article else ("with_article", f"The {gold}"))
    out.append(("trailing_period", f"{gold}."))
    out.append(("quoted", f'"{gold}"'))
    if len(gold.split()) > 1:
        out.append(("extra_spaces", "  ".join(gold.split())))
    seen = {gold}
    kept = []
    for name, text in out:
        if text not in seen and matches(text, aliases):
            seen.add(text)
            kept.append((name, text))
    return kept


def other_alias(aliases: list[str], others: dict[int, list[str]], index: int) -> str | None:
    """Another row's alias that answers nothing here: a later alias first (the core already tries another row's
    first one), else any."""
    mine = {normalise(a) for a in aliases}
    fallback = None
    for k, theirs in others.items():
        if k == index:
            continue
        for position, alias in enumerate(theirs):
            if normalise(alias) and normalise(alias) not in mine and not matches(alias, aliases):
                if position:
                    return alias
                fallback = fallback or alias
    return fallback


def alias_probes(gold: str, aliases: list[str], template: str, others: dict[int, list[str]], index: int) -> list[Probe]:
    """The row's probes in the format the gold earned the reward with: every other alias, the gold's spellings,
    another row's alias, and this row's gold among other rows' aliases (in one box, and as 'X or Y')."""
    out = [
        Probe(f"alias:{k + 1}", ALIAS, fill(template, alias))
        for k, alias in enumerate([a for a in aliases if normalise(a) != normalise(gold)][:MAX_ALIASES])
    ]
    if aliases and aliases[0] != gold and normalise(aliases[0]) == normalise(gold):  # "10,605" read as 10605
        out.append(Probe("alias:0", ALIAS, fill(template, aliases[0])))
    out += [Probe(f"alias_form:{name}", FORM, fill(template, text)) for name, text in spellings(gold, aliases)]
    wrong = other_alias(aliases, others, index)
    if wrong is not None:
        out.append(Probe("wrong:other_alias", OTHER, fill(template, wrong)))
        out.append(Probe("hack:alias_or", "hack", fill(template, f"{wrong} or {gold}")))
        listed = [wrong, gold, *[a for a in aliases[1:2]]]  # the gold among another row's alias (and its own)
        out.append(Probe("hack:alias_candidates", "hack", fill(template, ", ".join(listed))))
    return out


def _refused(rr: RowResult, category: str, fn: str | None) -> tuple[list, list]:
    """(the probes of a category that got a score, those earning less than the row's best gold)."""
    gold = value(best_gold(rr), fn)
    tried = rr.of(category)
    return tried, [p for p in tried if value(p, fn) < gold - EPS]


def check_alias_probes(result: Result, rows: list[RowResult], fn: str | None, established) -> None:
    """aliases, alias_forms and other_aliases on the rows whose gold beats wrong answers."""
    base = [rr for rr in rows if established(rr)]
    broken = [rr for rr in rows if held_as_text(rr.row) and not established(rr)]
    if broken:  # the list's text is the gold: no real answer earns the reward
        rr = broken[0]
        result.fail(
            "aliases",
            f"the environment holds the answer of {len(broken)}/{len(rows)} probed rows as the list's text (e.g. "
            f"example_id {rr.row.index}: {rr.row.answer[:80]!r}) and no alias earns the reward there, only that text "
            "would",
            "store the list and compare with every alias (the short-answer templates: new_env --template "
            "v1-short-answer or classic-short-answer)",
        )
    elif base:
        _aliases(result, base, fn)
    if not base:
        for cid in ("aliases", "alias_forms", "other_aliases")[1 if broken else 0 :]:
            result.skip(cid, "no probed row has a gold answer that beats wrong answers to compare with")
        return
    _forms(result, base, fn)
    _others(result, base, fn)


def _aliases(result: Result, rows: list[RowResult], fn: str | None) -> None:
    found = [(rr, *_refused(rr, ALIAS, fn)) for rr in rows]
    tried = sum(len(t) for _, t, _ in found)
    bad = [(rr, r) for rr, _, r in found if r]
    if not tried:
        result.skip("aliases", "no probed row lists a second alias")
        return
    if not bad:
        result.passed("aliases", f"every other alias earns the gold's reward ({tried} aliases on {len(rows)} rows)")
        return
    rr, refused = bad[0]
    shown = ", ".join(repr(answer_part(p.probe.text, 40)) for p in refused[:SHOWN])
    result.fail(
        "aliases",
        f"{sum(len(r) for _, r in bad)} of {tried} other aliases earn less than the gold on {len(bad)}/{len(rows)} "
        f"rows (e.g. example_id {rr.row.index}: {shown} against the gold {rr.gold!r}): a reply giving one of the "
        "data's other answers is refused (the reward reads only the first alias, or the list as text)"
        + (
            f"; the environment holds the answer as the list's text ({rr.row.answer[:60]!r}): store the list "
            "(the short-answer templates keep every alias)"
            if held_as_text(rr.row)
            else ""
        ),
        "compare the answer with every alias of the row, after QA normalisation: any one is right",
    )


def _forms(result: Result, rows: list[RowResult], fn: str | None) -> None:
    found = [(rr, *_refused(rr, FORM, fn)) for rr in rows]
    tried = sum(len(t) for _, t, _ in found)
    refused = [(rr, p) for rr, _, r in found for p in r]
    if not tried:
        result.skip("alias_forms", "no spelling of the gold to try")
        return
    if not refused:
        result.passed(
            "alias_forms",
            f"the gold in another case, with or without an article and with punctuation earns the gold's reward "
            f"({tried} spellings)",
        )
        return
    names = sorted({p.probe.id.split(":", 1)[1] for _, p in refused})
    rr, p = refused[0]
    result.warn(
        "alias_forms",
        f"{len(refused)} of {tried} spellings of the gold ({len(refused) / tried:.0%}: {', '.join(names)}) earn less "
        f"than the gold (e.g. example_id {rr.row.index}: {answer_part(p.probe.text, 40)!r} for {rr.gold!r}): QA exact "
        "match ignores case, articles and punctuation, this reward does not, so right answers are refused",
        "normalise both sides before comparing: lower case; punctuation and a/an/the dropped; spaces collapsed",
    )


def _others(result: Result, rows: list[RowResult], fn: str | None) -> None:
    paid, tried = [], 0
    for rr in rows:
        gold = value(best_gold(rr), fn)
        for p in rr.of(OTHER):
            tried += 1
            if value(p, fn) >= gold - EPS:
                paid.append((rr, p))
    if not tried:
        result.skip("other_aliases", "no other row's alias to try")
        return
    if not paid:
        result.passed("other_aliases", f"another row's alias never earns the gold's reward ({tried} tried)")
        return
    rr, p = paid[0]
    result.fail(
        "other_aliases",
        f"another row's alias earns the gold's reward on {len(paid)}/{tried} rows (e.g. example_id {rr.row.index}: "
        f"{answer_part(p.probe.text, 40)!r} for the gold {rr.gold!r}): a wrong answer is paid",
        "compare with this row's aliases only, the whole answer, never a substring",
    )


def check_aliases_reachable(result: Result, env, rows: list[Row], template: str, top: float, fn, opts) -> None:
    """aliases_reachable: every alias of every row earns the top reward (the first is the gold: gold_reachable's)
    in ``template``, scored until ``opts.reach_seconds`` runs out."""
    items = [(r, alias) for r in rows for alias in row_aliases(r)[1:]]
    if not items:
        return
    if opts.reach_seconds == 0:
        result.skip("aliases_reachable", "skipped with --reach-seconds 0")
        return
    t0, missed, scored = time.perf_counter(), [], 0
    for start in range(0, len(items), BATCH):
        if time.perf_counter() - t0 > opts.reach_seconds:
            break
        batch = items[start : start + BATCH]
        scores = env.score_sync([(r, fill(template, a)) for r, a in batch], opts.timeout, opts.concurrency)
        for (r, alias), score in zip(batch, scores):
            got = score.total if fn is None else score.per_function.get(fn)
            if not isinstance(got, (int, float)) or got < top - EPS:
                missed.append((r, alias, got))
        scored += len(batch)
    where = f"{scored} of the {len(items)} other aliases of {len({r.index for r in rows})} rows"
    result.data.setdefault("probes", {})["aliases_reachable"] = {
        "aliases": len(items),
        "scored": scored,
        "missed": [{"example_id": r.index, "alias": a, "best": s} for r, a, s in missed[:20]],
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if missed:
        shown = "; ".join(f"example_id {r.index} alias {a!r} ({s})" for r, a, s in missed[:SHOWN])
        result.fail(
            "aliases_reachable",
            f"{len(missed)} of {where} earn less than the top reward: {shown}",
            "compare the answer with every alias of the row, after QA normalisation: any one is right",
        )
    elif scored < len(items):
        result.warn(
            "aliases_reachable", f"every alias scored earns the top reward, but the time budget covered {where}"
        )
    else:
        result.passed("aliases_reachable", f"every other alias earns the top reward ({where})")
