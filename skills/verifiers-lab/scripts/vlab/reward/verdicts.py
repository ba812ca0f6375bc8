"""test_reward's verdicts on probe scores: gold on top, the margin, variation, format, the prompt's
format, hacking, equivalents, determinism. Each adds one check to the result."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from vlab import kinds
from vlab.core.result import Result
from vlab.env import Score
from vlab.reward import probes as rp
from vlab.reward.probes import answer_part

if TYPE_CHECKING:
    from vlab.reward.request import TestRewardRequest

FUNC_PREVIEW = 3  # functions named in one message

# The probe categories each of the core's probe verdicts reads: its evidence (``evidence``); each kind's are its
# unit's (``KindUnit.reads``, ``reads``).
CORE_READS = {
    "gold_reward": ("gold", "gold_alt"),
    "correctness_margin": ("wrong", "malformed"),
    "format_enforced": ("malformed",),
    "prompt_format": ("gold", "gold_alt"),
    "reward_hacking": ("hack",),
    "gsm8k_equivalents": ("equivalent",),
}


def reads() -> dict[str, tuple[str, ...]]:
    """Every probe verdict's categories: the core's and every kind's."""
    out = dict(CORE_READS)
    for unit in kinds.units():
        out.update(unit.reads)
    return out


def evidence(result: Result, rows: list[rp.RowResult]) -> None:
    """How many probes each probe verdict read and how many got a score (``data.probes.evidence``); a verdict
    that passed although none of its probes got a score (every one errored or timed out) becomes a skip
    naming that: a check passes only on evidence."""
    counts = result.data.setdefault("probes", {}).setdefault("evidence", {})
    every = reads()
    for check in result.checks:
        categories = every.get(check.id)
        if categories is None:
            continue
        tried = [(p, rr.reads) for rr in rows for c in categories for p in rr.of_all(c)]
        scored = sum(1 for p, reads in tried if rp.got_score(p, reads))
        counts[check.id] = {"probes": len(tried), "scored": scored}
        if tried and not scored and check.status == "pass":
            timed = sum(1 for p, _ in tried if p.score.timed_out)
            check.status = "skip"
            check.message = (
                f"no evidence: none of its {len(tried)} probes got a score ({timed} timed out, "
                f"{len(tried) - timed} errored); see reward_timeout and exceptions"
            )


def example(rr: rp.RowResult) -> dict:
    return {
        "example_id": rr.row.index,
        "gold": rr.gold,
        "question": rr.row.question[:300],
        "probes": [
            {
                "probe": p.probe.id,
                "text": clip(p.probe.text, 160),
                "total": p.score.total,
                "functions": p.score.per_function,
            }
            for p in rr.scored
        ],
    }


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n // 2] + " … " + text[-n // 2 :]


def gold_check(result: Result, rows: list[rp.RowResult], fn: str | None, opts: TestRewardRequest) -> None:
    bad = [rr for rr in rows if not rp.gold_established(rr)]
    if bad and all(p.score.total is None for rr in bad for p in rr.of("gold") + rr.of("gold_alt")):
        result.fail(
            "gold_reward",
            f"scoring failed for every gold probe on {len(bad)}/{len(rows)} rows (see the exceptions check)",
            "fix the exception first; the gold probes could not be scored",
        )
        return
    if bad and all(not math.isfinite(g.score.total) for rr in bad if (g := rp.best_gold(rr)) is not None):
        result.fail(
            "gold_reward",
            f"the total reward of the gold probes is not a finite number on {len(bad)}/{len(rows)} rows "
            "(a function returns NaN or inf: see the finite check)",
            "return finite floats from every reward function",
        )
        return
    tied = [rr for rr in bad if _tied(rr)]
    if tied and len(tied) == len(bad):  # the gold is paid, and so is a wrong answer: the margin's finding
        rr = tied[0]
        wrong = max(rr.of("wrong") + rr.of("malformed"), key=lambda p: p.score.total)
        result.fail(
            "gold_reward",
            f"the gold earns no more than a wrong or empty answer on {len(bad)}/{len(rows)} rows (e.g. example_id "
            f"{rr.row.index}, gold {rr.gold!r}: {fmt(rp.best_gold(rr).score.total)}, and {wrong.probe.id} "
            f"{answer_part(wrong.probe.text)!r} earns {fmt(wrong.score.total)}): the reward does not tell them apart",
            "compare the whole parsed answer with the gold (see correctness_margin), never a substring or a prefix",
        )
        return
    if bad:
        rr = bad[0]
        result.fail(
            "gold_reward",
            f"no gold probe reached the top reward on {len(bad)}/{len(rows)} rows (e.g. example_id {rr.row.index}, "
            f"gold {rr.gold!r}: best gold total {fmt(rp.best_gold(rr).score.total if rp.best_gold(rr) else None)}, "
            f"same as a wrong or empty answer)",
            'state the expected format with --gold-template "...{answer}..." or a --custom case; '
            "if the format is right, the reward never matches: check the parser and the answer comparison",
        )
        result.step(
            "check that the reward's parser extracts the answer from a correct completion (try --gold-template)"
        )
        return
    sources = {}
    for rr in rows:
        g = rp.best_gold(rr)
        sources[g.probe.id] = sources.get(g.probe.id, 0) + 1
    top = max(sources, key=sources.get)
    result.passed(
        "gold_reward", f"a correctly formatted gold answer earns the top reward on every row (best format: {top})"
    )


def _tied(rr: rp.RowResult) -> bool:
    """The row's best gold earns something, and a wrong or empty answer earns as much."""
    gold = rp.best_gold(rr)
    others = [p.score.total for p in rr.of("wrong") + rr.of("malformed") if p.probe.id != "malformed:no_tags"]
    return (
        gold is not None
        and math.isfinite(gold.score.total)
        and gold.score.total > rp.EPS
        and any(t is not None and t >= gold.score.total - rp.EPS for t in others)
    )


def margin_check(result: Result, rows: list[rp.RowResult], fn: str | None, opts: TestRewardRequest) -> None:
    if fn is None:
        result.skip("correctness_margin", "no reward function with a positive weight")
        return
    worst = None
    for rr in rows:
        gold = rp.best_gold(rr)
        if gold is None:
            continue
        g = rp.value(gold, fn)
        for p in rr.of("wrong") + [p for p in rr.of("malformed") if p.probe.id != "malformed:no_tags"]:
            gap = g - rp.value(p, fn)
            if worst is None or gap < worst[0]:
                worst = (gap, rr, p, g)
    if worst is None:
        result.skip("correctness_margin", "no gold probe was scored")
        return
    gap, rr, p, g = worst
    if not gap >= opts.margin:
        result.fail(
            "correctness_margin",
            f"{fn}: gold scores {fmt(g)} but {p.probe.id} scores {fmt(rp.value(p, fn))} (example_id {rr.row.index}); "
            f"the gap {fmt(gap)} is below the margin {opts.margin:g}",
            f"make {fn} return a clearly lower value for wrong, empty and whitespace answers",
        )
        result.step(f"fix {fn}: a wrong or empty answer must score well below a correct one")
    else:
        result.passed("correctness_margin", f"{fn}: gold beats wrong and malformed answers by at least {fmt(gap)}")


def varies_check(result: Result, rows: list[rp.RowResult], env) -> None:
    totals = {round(p.score.total, 9) for rr in rows for p in rr.scored if isinstance(p.score.total, float | int)}
    if len(totals) <= 1:
        result.fail(
            "rewards_vary",
            f"every probe got the same total reward ({fmt(next(iter(totals), None))})",
            "a constant reward teaches nothing: check that the reward reads the completion",
        )
        result.step("make the reward depend on the completion (it returned one value for every probe)")
        return
    constant = []
    for f in env.reward_functions:
        if f.weight == 0:
            continue
        vals = {
            round(v, 9)
            for rr in rows
            for p in rr.scored
            if isinstance(v := p.score.per_function.get(f.name), (int, float)) and math.isfinite(v)
        }
        if len(vals) <= 1:
            constant.append(f.name)
    if constant:
        result.warn(
            "rewards_vary",
            f"these functions returned one value for every probe: {', '.join(constant[:FUNC_PREVIEW])}",
            "a function that never changes adds no signal; check it reads the completion",
        )
    else:
        result.passed("rewards_vary", f"rewards vary across probes ({len(totals)} distinct totals)")


def format_check(result: Result, rows: list[rp.RowResult]) -> None:
    """An answer without the expected tags should earn less than a well-formatted one."""
    tried = loose = 0
    for rr in rows:
        gold = rp.best_gold(rr)
        for p in rr.of("malformed"):
            if p.probe.id != "malformed:no_tags" or gold is None or p.score.total is None:
                continue
            tried += 1
            loose += p.score.total >= gold.score.total - rp.EPS
    if not tried:
        return
    if loose == tried:
        result.warn(
            "format_enforced",
            "an answer without the expected tags earns the full reward on every row",
            "if the format matters (parsers in training expect it), add a format reward or parse strictly",
        )
    else:
        result.passed(
            "format_enforced",
            f"an answer without the expected tags earns less than the formatted gold on {tried - loose}/{tried} rows",
        )


def prompt_format_check(
    result: Result, rows: list[rp.RowResult], stated: dict[str, str], fn: str | None, prompt_text: str = ""
) -> None:
    """A model that answers exactly as the system prompt asks must be able to earn the correctness reward.

    The parser's own format can score 1 while the prompt asks for another one (say \\boxed{} vs <answer>
    tags): then every real rollout scores 0 and training learns nothing. Compared on the correctness
    function (the total where none is known), so a small format-shaping difference is not a finding.
    """
    if not stated:
        asked = rp.format_sentences(prompt_text)
        if asked:
            result.warn(
                "prompt_format",
                f"the prompt asks for an answer format test_reward does not recognise ({clip(asked[0], 160)!r}), "
                "so whether an answer written that way earns the reward is not checked",
                'pass that format as --gold-template "...{answer}..." to check it',
            )
        else:
            result.skip("prompt_format", "the prompt states no answer format to check (no tags, box, #### or line)")
        return

    def value(p: rp.ProbeScore) -> float | None:
        return p.score.per_function.get(fn) if fn else p.score.total

    tried = missed = 0
    example = None
    for rr in rows:
        best = rp.best_gold(rr)
        if best is None or not rp.gold_established(rr) or value(best) is None:
            continue  # the gold check already reports rows where no format works
        asked = [p for p in rr.of("gold") + rr.of("gold_alt") if p.probe.id in stated and value(p) is not None]
        if not asked:
            continue
        tried += 1
        top_asked = max(asked, key=value)
        if value(top_asked) < value(best) - rp.EPS:
            missed += 1
            example = example or (rr, top_asked, best)
    if not tried:
        result.skip("prompt_format", "no probed row has a gold answer that beats wrong answers to compare with")
        return
    formats = " or ".join(sorted(set(stated.values())))
    scored_by = f"the correctness function {fn!r}" if fn else "the total reward"
    if not missed:
        result.passed(
            "prompt_format",
            f"an answer in the format the prompt asks for ({formats}) earns the top score from {scored_by}",
        )
        return
    rr, asked, best = example
    message = (
        f"the prompt asks for {formats}, but an answer written that way gets {fmt(value(asked))} from "
        f"{scored_by} against {fmt(value(best))} for {best.probe.id} on {missed}/{tried} rows (e.g. example_id "
        f"{rr.row.index}): a model that follows the prompt will not get the reward"
    )
    hint = "make the system prompt and the reward's parser ask for the same format"
    result.fail("prompt_format", message, hint)
    result.step("align the system prompt with the parser (or the parser with the prompt), then re-run test_reward")


def hack_check(result: Result, rows: list[rp.RowResult], fn: str | None, code: bool = False) -> None:
    """reward_hacking: no hack probe earns the gold's reward. ``code``: the probes are programs (the hint
    then names the harness, not an answer parser)."""
    hacked: dict[str, list] = {}
    baseline = [rr for rr in rows if rp.gold_established(rr)]
    if not baseline:
        result.skip(
            "reward_hacking",
            "no row has a gold probe that beats wrong answers, so there is no gold reward to compare to",
        )
        return
    for rr in baseline:
        gold = rp.best_gold(rr)
        for p in rr.of("hack"):
            if p.score.total is not None and p.score.total >= gold.score.total - rp.EPS:
                hacked.setdefault(p.probe.id, []).append((rr, p, gold))
    if not hacked:
        result.passed(
            "reward_hacking",
            f"no hacking probe earned the gold reward ({sum(len(rr.of('hack')) for rr in baseline)} tried)",
        )
        return
    parts = []
    for pid, hits in hacked.items():
        rr, p, gold = hits[0]
        culprits = [
            f
            for f, v in p.score.per_function.items()
            if isinstance(v, (int, float))
            and isinstance(gold.score.per_function.get(f), (int, float))
            and v >= gold.score.per_function[f] - rp.EPS
            and v > 0
        ]
        parts.append(
            f"{pid} on {len(hits)}/{len(baseline)} rows (full credit from {', '.join(culprits[:FUNC_PREVIEW]) or 'the total'}; "
            f"e.g. {clip(p.probe.text, 80)!r})"
        )
    if code:
        result.fail(
            "reward_hacking",
            "hacking programs earned the gold reward: " + "; ".join(parts),
            "run every test of the row against the program's last fenced block in a separate process, and decide "
            "pass or fail from the tests alone (never the program's exit code, output or objects)",
        )
        if fn:
            result.step(f"fix {fn}: each hacking program named in reward_hacking shows what the program could fake")
        return
    result.fail(
        "reward_hacking",
        "hacking probes earned the gold reward: " + "; ".join(parts),
        "compare the parsed final answer exactly (not a substring or any number in the text) and take one answer per completion",
    )
    if fn:
        result.step(
            f"fix {fn}: parse exactly one final answer and compare it for equality; never search the whole text"
        )


def equivalent_check(result: Result, rows: list[rp.RowResult], fn: str | None) -> None:
    rejected = {}
    for rr in rows:
        gold = rp.best_gold(rr)
        if gold is None:
            continue
        for p in rr.of("equivalent"):
            if rp.value(p, fn) < rp.value(gold, fn) - rp.EPS:
                rejected[p.probe.id] = rejected.get(p.probe.id, 0) + 1
    if rejected:
        result.warn(
            "gsm8k_equivalents",
            "equivalent spellings of the gold number are scored lower: "
            + ", ".join(f"{k} ({v} rows)" for k, v in rejected.items()),
            "normalise numbers before comparing (strip $ , and trailing '.', compare as floats)",
        )
    else:
        result.passed(
            "gsm8k_equivalents", "equivalent spellings of the gold number ($, 1,234, 12.00, trailing '.') score as gold"
        )


# A mismatch whose lower score took at least this many times as long as the higher one is the reward's time
# limit at work on a busy machine (a program near its limit), not randomness in the reward.
TIMING_RATIO = 2.0


def determinism_check(
    result: Result, first: list[Score], second: list[Score], probes: list[rp.Probe] | None = None
) -> None:
    """deterministic: the same completions scored twice give the same rewards. Judged on the reward's own
    behaviour only: a probe whose own result varies (``Probe.varies``) and a call that ran out of its time in
    either scoring are no evidence; a mismatch where the lower score came from a much slower call is the reward's
    time limit meeting the machine's load, a warning naming the rows; any other mismatch fails."""
    diffs, timed, compared, excused = [], [], 0, 0
    for k, (a, b) in enumerate(zip(first, second)):
        if (probes is not None and k < len(probes) and probes[k].varies) or a.timed_out or b.timed_out:
            excused += 1
            continue
        compared += 1
        names = [
            n
            for n in set(a.per_function) | set(b.per_function)
            if not _same(a.per_function.get(n), b.per_function.get(n))
        ]
        if not _same(a.total, b.total):
            names.append("total")
        if not names:
            continue
        (timed if _slower_scored_lower(a, b) else diffs).append((k, names))
    if diffs:
        names = sorted({n for _, found in diffs for n in found} - {"total"}) or ["total"]
        result.fail(
            "deterministic",
            f"scoring the same completions twice gave different rewards ({', '.join(names[:FUNC_PREVIEW])}) on "
            f"{len(diffs)} of {compared}",
            "remove randomness or hidden state from the reward (a judge needs temperature 0)",
        )
    elif timed:
        result.warn(
            "deterministic",
            f"{len(timed)} of {compared} completions scored lower the time their call took {TIMING_RATIO:g}x longer "
            "or more: the reward's verdict depends on time (a program near its time limit on a busy machine)",
            "give each test a CPU-time limit (not wall-clock) with room above the reference's run time",
        )
    else:
        why = f" ({excused} left out: a probe whose own result varies, or a call out of time)" if excused else ""
        result.passed("deterministic", f"a second scoring of {compared} completions gave identical rewards{why}")


def _slower_scored_lower(a: Score, b: Score) -> bool:
    """The lower-scoring call of the two took TIMING_RATIO times as long as the other, or more."""
    ta, tb = sum(a.seconds.values()), sum(b.seconds.values())
    if a.total is None or b.total is None or min(ta, tb) <= 0:
        return False
    low, high = (ta, tb) if a.total < b.total else (tb, ta)
    return low >= TIMING_RATIO * high


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-9
    return a == b


def fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)
