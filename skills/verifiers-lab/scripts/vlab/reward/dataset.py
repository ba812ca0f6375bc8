"""Checks over the whole dataset, not a sample: can every row's gold be reached, and is every row answerable?

``check_rows`` reads every row (no scoring): empty golds, the same prompt with different
golds (no answer can be right on both; program rows are a warning: two reference programs are
two correct solutions, the task only counts twice); a kind's own row checks are its unit's.
``check_reachable`` scores the gold of every row (or the ``--num-examples`` rows), in the
format that earned the reward on the probed rows, in batches until the time budget is
spent: the count probed is reported, and every row whose gold does not reach the top
reward is listed (a few as examples). A dataset whose golds are unreachable on 1% of rows
fails here, where 5 probed rows would have passed.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from vlab.core.result import Result
from vlab.env import Row
from vlab.kinds.base import RowKind
from vlab.kinds.number.equivalence import exact, same_value
from vlab.reward import probes as rp

MIN_COVERED = 1000  # the budget should reach this many rows (or the whole set); fewer is reported
BATCH = 64
SHOWN = 5


def check_rows(result: Result, rows: list[Row], golds: dict[int, str | None], kinds: dict[int, RowKind]) -> None:
    """empty_golds and duplicate_prompts over every row (a kind's own row checks are its unit's)."""
    empty = [r for r in rows if golds.get(r.index) is None]
    if empty and len(empty) < len(rows):
        ids = ", ".join(str(r.index) for r in empty[:SHOWN])
        result.fail(
            "empty_golds",
            f"{len(empty)}/{len(rows)} rows have an empty gold answer (example_id {ids}): every reply scores 0 there",
            "drop those rows or fill in their answers",
        )
    elif rows and not empty:
        result.passed("empty_golds", f"all {len(rows)} rows have a gold answer")
    seen: dict[str, Row] = {}
    conflicts, solutions = [], []
    for row in rows:
        key = " ".join(str(m.get("content") or "") for m in row.prompt).strip()
        first = seen.setdefault(key, row)
        if first is not row and not _same_gold(golds.get(first.index), golds.get(row.index)):
            # two right programs of one task are two solutions, not a conflict
            programs = all(kinds.get(r.index) is not None and _programs(kinds[r.index]) for r in (first, row))
            (solutions if programs else conflicts).append((first, row))
    if conflicts:
        a, b = conflicts[0]
        result.fail(
            "duplicate_prompts",
            f"{len(conflicts)} prompts appear again with a different gold (e.g. example_id {a.index} gold "
            f"{golds.get(a.index)!r} and example_id {b.index} gold {golds.get(b.index)!r}): no answer is right on both",
            "de-duplicate the dataset, keeping the row with the right answer",
        )
    elif solutions:
        pairs = ", ".join(f"{a.index} and {b.index}" for a, b in solutions[:SHOWN])
        more = f" and {len(solutions) - SHOWN} more" if len(solutions) > SHOWN else ""
        result.data.setdefault("row_findings", {})["duplicate_prompts"] = [
            {"example_id": b.index, "status": "warn", "problem": f"the prompt of example_id {a.index} again"}
            for a, b in solutions
        ]
        result.warn(
            "duplicate_prompts",
            f"{len(solutions)} code prompts appear again with another reference program (example_id {pairs}{more}): "
            "two correct solutions of one task, which then counts twice in training",
            "keep both if the task should weigh double; else drop the repeats (every pair is in data.row_findings)",
        )
    elif rows:
        result.passed("duplicate_prompts", f"no prompt repeats with a different gold ({len(rows)} rows)")


def _programs(kind: RowKind) -> bool:
    from vlab import kinds

    return kinds.unit(kind.kind).runs_programs


def _norm_gold(gold: str | None) -> str:
    return " ".join(str(gold).split()).lower() if gold is not None else ""


def _same_gold(a: str | None, b: str | None) -> bool:
    """The same answer: the same text, or the same value by math-verify (30 and 30.0)."""
    if _norm_gold(a) == _norm_gold(b):
        return True
    return a is not None and b is not None and exact(a) is not None and exact(b) is not None and same_value(a, b)


@dataclass
class Reach:
    probed: int
    total: int
    seconds: float
    unreachable: list[tuple[Row, str, float | None]]  # row, gold, best score
    stopped_early: bool


def reach_probes(row: Row, gold: str, kind: RowKind, template: str) -> list[rp.Probe]:
    """The texts that must earn the top reward on a row: the kind's (every option label the prompt shows, one of
    which must; a code row's reference program), else the gold in the format that worked."""
    from vlab import kinds

    own = kinds.unit(kind.kind).reach_probes(row, gold, kind, template)
    return own if own is not None else [rp.Probe("gold:reach", "gold", rp.fill(template, gold))]


def check_reachable(
    result: Result,
    env,
    rows: list[Row],
    golds: dict[int, str | None],
    kinds: dict[int, RowKind],
    templates: list[str],
    top: float,
    fn: str | None,
    budget: float,
    timeout: float,
    concurrency: int,
) -> Reach:
    """Score each row's gold until the budget is spent; rows below ``top`` are tried in every other format."""
    t0 = time.perf_counter()
    todo = [r for r in rows if golds.get(r.index) is not None]
    unreachable: list[tuple[Row, str, float | None]] = []
    probed = 0
    for start in range(0, len(todo), BATCH):
        if time.perf_counter() - t0 > budget:
            break
        batch = todo[start : start + BATCH]
        missed = _missed(env, batch, golds, kinds, templates[:1], top, fn, timeout, concurrency)
        if missed and len(templates) > 1:
            again = _missed(env, [m[0] for m in missed], golds, kinds, templates[1:], top, fn, timeout, concurrency)
            missed = [m for m in missed if m[0].index in {a[0].index for a in again}]
        unreachable += missed
        probed += len(batch)
    seconds = time.perf_counter() - t0
    reach = Reach(probed, len(todo), seconds, unreachable, probed < len(todo))
    where = f"{probed} of {len(todo)} rows with a gold answer in {seconds:.1f} s"

    def entry(r: Row, g: str, s: float | None) -> dict:
        kind = kinds.get(r.index)
        return {"example_id": r.index, "gold": g, "best": s} | ({"setup": kind.setup} if kind and kind.setup else {})

    result.data["reachability"] = {
        "rows_probed": probed,
        "rows_with_gold": len(todo),
        "seconds": round(seconds, 2),
        "budget_seconds": budget,
        "format": templates[0] if templates else None,  # the format every gold is scored in first
        "unreachable": len(unreachable),
        "examples": [entry(r, g, s) for r, g, s in unreachable[:SHOWN]],
        "all_unreachable": [entry(r, g, s) for r, g, s in unreachable],
    }
    if unreachable:
        ids = "; ".join(
            f"example_id {r.index} gold {g!r} (best {rp_fmt(s)}{_setup_note(kinds.get(r.index))})"
            for r, g, s in unreachable[:SHOWN]
        )
        with_setup = sum(1 for r, _, _ in unreachable if _setup_note(kinds.get(r.index)))
        if with_setup and len(unreachable) > SHOWN:
            ids += f"; {with_setup} of the {len(unreachable)} rows run setup code before their tests"
        result.fail(
            "gold_reachable",
            f"the gold answer does not earn the top reward ({rp_fmt(top)}) on {len(unreachable)} of the {where}: {ids}",
            "look at those rows' answers: written in a form the reward never accepts, or wrong; "
            "fix the data or the comparison",
        )
        result.step(f"fix the {len(unreachable)} rows whose gold cannot earn the reward (data.reachability)")
    elif reach.stopped_early and probed < min(MIN_COVERED, len(todo)):
        result.warn(
            "gold_reachable",
            f"every gold probed earns the top reward, but the time budget covered only {where}",
            "raise --reach-seconds to cover the whole set (a slow reward is also worth a look: see speed)",
        )
    else:
        result.passed("gold_reachable", f"the gold answer earns the top reward on all {where}")
    return reach


def _missed(env, rows, golds, kinds, templates, top, fn, timeout, concurrency) -> list[tuple[Row, str, float | None]]:
    items, owners = [], []
    for row in rows:
        for template in templates:
            for probe in reach_probes(row, golds[row.index], kinds[row.index], template):
                items.append((row, probe.text))
                owners.append(row.index)
    scores = env.score_sync(items, timeout, concurrency)
    best: dict[int, float | None] = {}
    for index, score in zip(owners, scores):
        v = score.total if fn is None else score.per_function.get(fn)
        if isinstance(v, (int, float)) and (best.get(index) is None or v > best[index]):
            best[index] = float(v)
        best.setdefault(index, None)
    return [
        (row, golds[row.index], best.get(row.index))
        for row in rows
        if best.get(row.index) is None or best[row.index] < top - rp.EPS
    ]


def _setup_note(kind: RowKind | None) -> str:
    return kind.setup_note() if kind is not None and kind.kind == "code" else ""


def rp_fmt(v: float | None) -> str:
    return "none" if v is None else f"{v:.4g}"


def reach_from_probes(
    result: Result,
    env,
    opts,
    scope: list,
    golds: dict[int, str | None],
    kinds: dict[int, RowKind],
    rows: list[rp.RowResult],
    built: list[rp.RowProbes],
    fn: str | None,
    code_rows_at_once: int,
) -> None:
    """gold_reachable from the probed rows: the best-earning formats first (fenced code first on a code
    environment), the top reward they reached, then ``check_reachable`` over ``scope``. ``opts``: test_reward's
    request (reach_seconds, timeout, concurrency)."""
    established = [(rr, b) for rr, b in zip(rows, built) if rp.gold_established(rr)]
    if not established:
        result.skip("gold_reachable", "no probed row has a gold answer that beats wrong answers to compare with")
        return
    if opts.reach_seconds == 0:
        result.skip("gold_reachable", "skipped with --reach-seconds 0")
        return
    top = max(rp.value(rp.best_gold(rr), fn) for rr, _ in established)
    ranked = Counter(rp.best_format(rr, b) for rr, b in established)
    formats = [t for t, _ in ranked.most_common()]
    formats += [t for b in built for t in b.formats.values() if t not in formats]
    from vlab import kinds as units

    used = [units.unit(name) for name in {k.kind for k in kinds.values()}]
    for preferred in {u.preferred_format for u in used if u.preferred_format in formats}:  # the format its prompts ask
        formats.insert(0, formats.pop(formats.index(preferred)))
    programs = any(u.runs_programs for u in used)
    rows_at_once = min(opts.concurrency, 2 * code_rows_at_once) if programs else opts.concurrency
    check_reachable(result, env, scope, golds, kinds, formats, top, fn, opts.reach_seconds, opts.timeout, rows_at_once)
