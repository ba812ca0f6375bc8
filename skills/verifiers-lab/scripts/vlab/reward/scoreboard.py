"""The one-screen scoreboard and the probe that looks across rows: state leaking between rows.

``families`` is the mean reward per probe family (gold, wrong, each hack, near misses, malformed, equivalent
forms), with every family whose mean comes close to the gold's marked: the human report draws it as a table
and ``--json`` carries it as ``data.scoreboard``. ``state_leak_check`` scores one completion on a row, then
the row it is right for, then the first row again: a reward whose score changed keeps state between rows.
(One constant answer given to every row is ``reward.shortcuts``.)
"""

from __future__ import annotations

import math
import statistics

from vlab.core.result import Result
from vlab.kinds.number.equivalence import same_value
from vlab.reward import probes as rp

CLOSE = 0.1  # a family within this share of the gold-wrong gap (or of the gold) is "close to the gold"
# Families that should score like the gold (the others like a wrong answer).
GOLD_LIKE = {"gold", "equivalent forms"}


def _family(probe: rp.Probe) -> str | None:
    if probe.category == "hack":
        return probe.id
    return {
        "wrong": "wrong",
        "malformed": "malformed",
        "near_miss": "near misses",
        "wrong_label": "near misses",
        "number_form": "equivalent forms",
        "choice_form": "equivalent forms",
        "equivalent": "equivalent forms",
    }.get(probe.category)


def _mean(values: list[float]) -> float | None:
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return round(statistics.fmean(values), 4) if values else None


def families(rows: list[rp.RowResult], fn: str | None) -> dict:
    """Mean total and correctness reward per probe family; ``close_to_gold`` marks families near the gold."""
    groups: dict[str, list[rp.ProbeScore]] = {}
    for rr in rows:
        gold = rp.best_gold(rr)
        if gold is not None:
            groups.setdefault("gold", []).append(gold)
        for ps in rr.scored:
            name = _family(ps.probe)
            if name:
                groups.setdefault(name, []).append(ps)
    pick = (lambda ps: ps.score.per_function.get(fn)) if fn else (lambda ps: ps.score.total)  # noqa: E731
    means = {
        name: (_mean([ps.score.total for ps in items]), _mean([pick(ps) for ps in items]), len(items))
        for name, items in groups.items()
    }
    gold = means.get("gold", (None, None, 0))[1]
    wrong = means.get("wrong", (None, None, 0))[1]
    gap = (gold - wrong) if gold is not None and wrong is not None else gold
    out = []
    for name, (total, judged, n) in means.items():
        close = bool(gold is not None and judged is not None and gap and judged >= gold - CLOSE * abs(gap))
        out.append(
            {
                "family": name,
                "n": n,
                "total": total,
                "correctness": judged,
                "close_to_gold": close,
                "should_be": "gold" if name in GOLD_LIKE else "low",
            }
        )
    order = ["gold", "equivalent forms", "wrong", "near misses", "malformed"]
    out.sort(key=lambda e: (order.index(e["family"]) if e["family"] in order else len(order), e["family"]))
    return {"function": fn, "families": out}


def _pair(env, golds, rows):
    """Two rows with different golds, the rows right after the probed ones first (no probe has touched them,
    even under --num-examples), then the probed rows."""
    probed = {rr.row.index for rr in rows}
    after = [r for r in env.rows(max(probed) + 4) if r.index not in probed]
    golds = dict(golds) | {r.index: rp.gold_value(r.answer, r.question) for r in after if r.index not in golds}
    candidates = after + [rr.row for rr in rows]
    candidates = [r for r in candidates if golds.get(r.index) is not None]
    for b in candidates:  # b, whose gold the completion states, untouched by the probes where one is
        for a in candidates:
            if a.index != b.index and not _same(golds[a.index], golds[b.index]):
                return a, b, golds[b.index]
    return None


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower() or same_value(a, b)


def _gold_paid(rr: rp.RowResult) -> bool:
    best = rp.best_gold(rr)
    return best is not None and math.isfinite(best.score.total) and best.score.total > rp.EPS


def state_leak_check(result: Result, env, opts, golds, rows, built, fn) -> None:
    """state_leak: one completion scored on row A, then on row B (where it is right), then on A again. It needs a
    format the gold earns a reward in, not a gold that beats wrong answers: a reward that pays any answer it has
    seen on another row pays another row's gold too, and is still named here."""
    established = [(rr, b) for rr, b in zip(rows, built) if _gold_paid(rr)]
    pair = _pair(env, golds, rows)
    if not established or pair is None:
        why = "no probed row has a gold that earns a reward" if not established else "no two rows differ in gold"
        result.skip("state_leak", why)
        return
    a, b, gold_b = pair
    text = rp.fill(rp.best_format(*established[0]), gold_b)
    before, on_b, after = (env.score_sync([item], opts.timeout, 1)[0] for item in ((a, text), (b, text), (a, text)))
    changed = sorted(
        name
        for name in set(before.per_function) | set(after.per_function)
        if not _equal(before.per_function.get(name), after.per_function.get(name))
    )
    if changed or not _equal(before.total, after.total):
        result.fail(
            "state_leak",
            f"the same completion scored on example_id {a.index} got {_fmt(before.total)} before and "
            f"{_fmt(after.total)} after example_id {b.index} was scored ({', '.join(changed) or 'total'}): "
            "the reward keeps state between rows",
            "keep no module-level or instance state in reward functions (caches keyed on the completion alone, "
            "lists of answers seen); compute each score from its own row",
        )
    else:
        result.passed(
            "state_leak",
            f"a completion scored on example_id {a.index} before and after example_id {b.index} got the same reward",
        )


def _equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-9
    return a == b


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) else str(v)
