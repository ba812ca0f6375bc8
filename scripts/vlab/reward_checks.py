"""test_reward's checks: load, probe, score through verifiers, judge, report.

Split from ``reward_probes`` (which builds probe texts and reads user files).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

from . import reward_probes as rp
from .envload import LoadedEnv, Score, load_env
from .result import EXIT_EXTERNAL, Result, UsageError

FUNC_PREVIEW = 3  # functions named in one message
_NETWORK_ERRORS = {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ConnectionError",
                   "ReadTimeout", "TimeoutException", "InternalServerError", "RateLimitError"}


@dataclass
class Options:
    num_examples: int = 5
    gold_template: str | None = None
    preset: str | None = None
    completions: str | None = None
    custom: str | None = None
    timeout: float = 10.0
    slow: float = 1.0
    margin: float = 0.3
    concurrency: int = 32
    min_agreement: float = 0.9
    correct_threshold: float = 0.5
    skip_probes: bool = False


def run_test_reward(result: Result, spec: str, env_args: dict, opts: Options) -> LoadedEnv:
    t0 = time.perf_counter()
    env = load_env(spec, env_args)
    n_rows = env.num_rows()
    names = ", ".join(f"{f.name}(w={f.weight:g}{', group' if f.is_group else ''})" for f in env.reward_functions)
    result.passed("load", f"{env.kind} environment {env.name!r} on verifiers {env.verifiers_version}: {n_rows} rows; functions: {names or 'none'}")
    result.data["environment"] = env.describe() | {"rows": n_rows, "load_seconds": round(time.perf_counter() - t0, 3)}
    if env.unnamed_args:
        result.warn("env_args", f"load_environment does not name {', '.join(env.unnamed_args)}; they only reach **kwargs and may be ignored",
                    "check the spelling of --env-args keys against load_environment's parameters")
    if not env.reward_functions:
        result.fail("reward_functions", "the environment has no reward functions", "add reward functions to the rubric (classic) or @vf.reward methods (v1)")
        return env
    if n_rows == 0:
        raise UsageError("the environment's dataset is empty", hint="check the dataset path in --env-args")
    all_scores: list[Score] = []
    if not opts.skip_probes:
        all_scores += _probe_checks(result, env, opts)
    if opts.custom:
        all_scores += _custom_checks(result, env, opts)
    if opts.completions:
        all_scores += _completion_checks(result, env, opts)
    _health_checks(result, env, all_scores, opts)
    return env


# -- probes ----------------------------------------------------------------------------


def _probe_checks(result: Result, env: LoadedEnv, opts: Options) -> list[Score]:
    n = env.num_rows() if opts.num_examples < 0 else min(opts.num_examples, env.num_rows())
    hints = env.format_hints()
    built = [rp.build_probes(row, hints, opts.gold_template, opts.preset) for row in env.rows(n)]
    skipped = sum(1 for b in built if b is None)
    built = [b for b in built if b is not None]
    if skipped:
        result.warn("gold_answers", f"{skipped} of {n} rows have no gold answer; probes need one", "pass a --custom file for rows without an answer column")
    if not built:
        result.skip("probes", "no row has a gold answer to build probes from")
        return []
    items = [(b.row, p.text) for b in built for p in b.probes]
    t = time.perf_counter()
    scores = env.score_sync(items, opts.timeout, opts.concurrency)
    elapsed = time.perf_counter() - t
    again = env.score_sync(items, opts.timeout, opts.concurrency)
    rows: list[rp.RowResult] = []
    k = 0
    for b in built:
        rows.append(rp.RowResult(b.row, b.gold, [rp.ProbeScore(p, scores[k + i]) for i, p in enumerate(b.probes)]))
        k += len(b.probes)
    result.data["probes"] = {
        "rows": len(built), "probes": len(items), "seconds": round(elapsed, 3),
        "probes_per_second": round(len(items) / elapsed, 1) if elapsed > 0 else None,
        "formats": [{"source": s, "template": t} for s, t in rp.gold_templates(hints, opts.gold_template)],
        "by_probe": rp.summarize_probe_kinds(rows, env.reward_functions),
        "example": _example(rows[0]),
    }
    fn = rp.correctness_function(env.reward_functions)
    result.data["probes"]["correctness_function"] = fn
    _gold_check(result, rows, fn, opts)
    _margin_check(result, rows, fn, opts)
    _varies_check(result, rows, env)
    _format_check(result, rows)
    _prompt_format_check(result, rows, rp.prompt_stated_probe_ids(hints), fn)
    _hack_check(result, rows, fn)
    if opts.preset == "gsm8k":
        _equivalent_check(result, rows, fn)
    _determinism_check(result, scores, again)
    return scores + again


def _example(rr: rp.RowResult) -> dict:
    return {
        "example_id": rr.row.index, "gold": rr.gold, "question": rr.row.question[:300],
        "probes": [{"probe": p.probe.id, "text": _clip(p.probe.text, 160), "total": p.score.total,
                    "functions": p.score.per_function} for p in rr.scored],
    }


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n // 2] + " … " + text[-n // 2:]


def _gold_check(result: Result, rows: list[rp.RowResult], fn: str | None, opts: Options) -> None:
    bad = [rr for rr in rows if not rp.gold_established(rr)]
    if bad and all(p.score.total is None for rr in bad for p in rr.of("gold") + rr.of("gold_alt")):
        result.fail("gold_reward", f"scoring failed for every gold probe on {len(bad)}/{len(rows)} rows (see the exceptions check)",
                    "fix the exception first; the gold probes could not be scored")
        return
    if bad and all(not math.isfinite(g.score.total) for rr in bad if (g := rp.best_gold(rr)) is not None):
        result.fail("gold_reward", f"the total reward of the gold probes is not a finite number on {len(bad)}/{len(rows)} rows "
                    "(a function returns NaN or inf: see the finite check)", "return finite floats from every reward function")
        return
    if bad:
        rr = bad[0]
        result.fail(
            "gold_reward",
            f"no gold probe reached the top reward on {len(bad)}/{len(rows)} rows (e.g. example_id {rr.row.index}, "
            f"gold {rr.gold!r}: best gold total {_fmt(rp.best_gold(rr).score.total if rp.best_gold(rr) else None)}, "
            f"same as a wrong or empty answer)",
            "state the expected format with --gold-template \"...{answer}...\" or a --custom case; "
            "if the format is right, the reward never matches: check the parser and the answer comparison",
        )
        result.step("check that the reward's parser extracts the answer from a correct completion (try --gold-template)")
        return
    sources = {}
    for rr in rows:
        g = rp.best_gold(rr)
        sources[g.probe.id] = sources.get(g.probe.id, 0) + 1
    top = max(sources, key=sources.get)
    result.passed("gold_reward", f"a correctly formatted gold answer earns the top reward on every row (best format: {top})")


def _margin_check(result: Result, rows: list[rp.RowResult], fn: str | None, opts: Options) -> None:
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
            f"{fn}: gold scores {_fmt(g)} but {p.probe.id} scores {_fmt(rp.value(p, fn))} (example_id {rr.row.index}); "
            f"the gap {_fmt(gap)} is below the margin {opts.margin:g}",
            f"make {fn} return a clearly lower value for wrong, empty and whitespace answers",
        )
        result.step(f"fix {fn}: a wrong or empty answer must score well below a correct one")
    else:
        result.passed("correctness_margin", f"{fn}: gold beats wrong and malformed answers by at least {_fmt(gap)}")


def _varies_check(result: Result, rows: list[rp.RowResult], env: LoadedEnv) -> None:
    totals = {round(p.score.total, 9) for rr in rows for p in rr.scored if isinstance(p.score.total, float | int)}
    if len(totals) <= 1:
        result.fail("rewards_vary", f"every probe got the same total reward ({_fmt(next(iter(totals), None))})",
                    "a constant reward teaches nothing: check that the reward reads the completion")
        result.step("make the reward depend on the completion (it returned one value for every probe)")
        return
    constant = []
    for f in env.reward_functions:
        if f.weight == 0:
            continue
        vals = {round(v, 9) for rr in rows for p in rr.scored if isinstance(v := p.score.per_function.get(f.name), (int, float)) and math.isfinite(v)}
        if len(vals) <= 1:
            constant.append(f.name)
    if constant:
        result.warn("rewards_vary", f"these functions returned one value for every probe: {', '.join(constant[:FUNC_PREVIEW])}",
                    "a function that never changes adds no signal; check it reads the completion")
    else:
        result.passed("rewards_vary", f"rewards vary across probes ({len(totals)} distinct totals)")


def _format_check(result: Result, rows: list[rp.RowResult]) -> None:
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
        result.warn("format_enforced", "an answer without the expected tags earns the full reward on every row",
                    "if the format matters (parsers in training expect it), add a format reward or parse strictly")
    else:
        result.passed("format_enforced", f"an answer without the expected tags earns less than the formatted gold on {tried - loose}/{tried} rows")


def _prompt_format_check(result: Result, rows: list[rp.RowResult], stated: dict[str, str], fn: str | None) -> None:
    """A model that answers exactly as the system prompt asks must be able to earn the correctness reward.

    The parser's own format can score 1 while the prompt asks for another one (say \\boxed{} vs <answer>
    tags): then every real rollout scores 0 and training learns nothing. Compared on the correctness
    function (the total where none is known), so a small format-shaping difference is not a finding.
    """
    if not stated:
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
        return
    formats = " or ".join(sorted(set(stated.values())))
    scored_by = f"the correctness function {fn!r}" if fn else "the total reward"
    if not missed:
        result.passed("prompt_format", f"an answer in the format the system prompt asks for ({formats}) earns the top "
                      f"score from {scored_by}")
        return
    rr, asked, best = example
    message = (f"the system prompt asks for {formats}, but an answer written that way gets {_fmt(value(asked))} from "
               f"{scored_by} against {_fmt(value(best))} for {best.probe.id} on {missed}/{tried} rows (e.g. example_id "
               f"{rr.row.index}): a model that follows the prompt will not get the reward")
    hint = "make the system prompt and the reward's parser ask for the same format"
    if missed == tried:
        result.fail("prompt_format", message, hint)
        result.step("align the system prompt with the parser (or the parser with the prompt), then re-run test_reward")
    else:
        result.warn("prompt_format", message, hint)


def _hack_check(result: Result, rows: list[rp.RowResult], fn: str | None) -> None:
    hacked: dict[str, list] = {}
    baseline = [rr for rr in rows if rp.gold_established(rr)]
    if not baseline:
        result.skip("reward_hacking", "no row has a gold probe that beats wrong answers, so there is no gold reward to compare to")
        return
    for rr in baseline:
        gold = rp.best_gold(rr)
        for p in rr.of("hack"):
            if p.score.total is not None and p.score.total >= gold.score.total - rp.EPS:
                hacked.setdefault(p.probe.id, []).append((rr, p, gold))
    if not hacked:
        result.passed("reward_hacking", f"no hacking probe earned the gold reward ({sum(len(rr.of('hack')) for rr in baseline)} tried)")
        return
    parts = []
    for pid, hits in hacked.items():
        rr, p, gold = hits[0]
        culprits = [f for f, v in p.score.per_function.items()
                    if isinstance(v, (int, float)) and isinstance(gold.score.per_function.get(f), (int, float))
                    and v >= gold.score.per_function[f] - rp.EPS and v > 0]
        parts.append(f"{pid} on {len(hits)}/{len(baseline)} rows (full credit from {', '.join(culprits[:FUNC_PREVIEW]) or 'the total'}; "
                     f"e.g. {_clip(p.probe.text, 80)!r})")
    result.fail("reward_hacking", "hacking probes earned the gold reward: " + "; ".join(parts),
                "compare the parsed final answer exactly (not a substring or any number in the text) and take one answer per completion")
    if fn:
        result.step(f"fix {fn}: parse exactly one final answer and compare it for equality; never search the whole text")


def _equivalent_check(result: Result, rows: list[rp.RowResult], fn: str | None) -> None:
    rejected = {}
    for rr in rows:
        gold = rp.best_gold(rr)
        if gold is None:
            continue
        for p in rr.of("equivalent"):
            if rp.value(p, fn) < rp.value(gold, fn) - rp.EPS:
                rejected[p.probe.id] = rejected.get(p.probe.id, 0) + 1
    if rejected:
        result.warn("gsm8k_equivalents", "equivalent spellings of the gold number are scored lower: "
                    + ", ".join(f"{k} ({v} rows)" for k, v in rejected.items()),
                    "normalise numbers before comparing (strip $ , and trailing '.', compare as floats)")
    else:
        result.passed("gsm8k_equivalents", "equivalent spellings of the gold number ($, 1,234, 12.00, trailing '.') score as gold")


def _determinism_check(result: Result, first: list[Score], second: list[Score]) -> None:
    diffs = []
    for a, b in zip(first, second):
        for name in set(a.per_function) | set(b.per_function):
            va, vb = a.per_function.get(name), b.per_function.get(name)
            if not _same(va, vb):
                diffs.append(name)
        if not _same(a.total, b.total):
            diffs.append("total")
    if diffs:
        names = sorted(set(diffs) - {"total"}) or ["total"]
        result.fail("deterministic", f"scoring the same completions twice gave different rewards ({', '.join(names[:FUNC_PREVIEW])})",
                    "remove randomness or hidden state from the reward (a judge needs temperature 0)")
    else:
        result.passed("deterministic", f"a second scoring of {len(first)} completions gave identical rewards")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-9
    return a == b


# -- health: finite, exceptions, speed -------------------------------------------------------


def _health_checks(result: Result, env: LoadedEnv, scores: list[Score], opts: Options) -> None:
    if not scores:
        return
    nonfinite: dict[str, int] = {}
    errors: dict[str, list] = {}
    timed_out: set[str] = set()
    seconds: dict[str, list[float]] = {}
    scoring_errors = []
    for s in scores:
        for name, v in s.per_function.items():
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)):
                nonfinite[name] = nonfinite.get(name, 0) + 1
        if s.total is not None and not math.isfinite(s.total):
            nonfinite["total"] = nonfinite.get("total", 0) + 1
        for name, err in s.errors.items():
            if name in s.timed_out:
                timed_out.add(name)
            else:
                errors.setdefault(name, []).append(err)
        for name, sec in s.seconds.items():
            seconds.setdefault(name, []).append(sec)
        if s.scoring_error is not None:
            scoring_errors.append(s.scoring_error)
    if nonfinite:
        result.fail("finite", "rewards that are not finite numbers (NaN/inf): " + ", ".join(f"{k} ({v}x)" for k, v in nonfinite.items()),
                    "guard divisions and empty lists; a NaN reward poisons the advantage of the whole group")
        result.step("return a finite float from every reward function (NaN found)")
    else:
        result.passed("finite", f"all {len(scores)} scorings returned finite rewards")
    if errors:
        msgs = []
        for name, errs in errors.items():
            e = errs[0]
            msgs.append(f"{name} raised {e.type}: {e.message} ({len(errs)}x)\n{e.traceback}")
        hidden = " (the classic Rubric scored these 0.0 without a word)" if env.kind == "classic" else ""
        kinds = {e.type for errs in errors.values() for e in errs}
        if kinds <= _NETWORK_ERRORS:  # a judge or remote verifier that cannot be reached: not the reward's logic
            result.fail("exceptions", "reward functions could not reach their service:\n" + "\n".join(msgs),
                        "check the network and the judge endpoint/API key, then re-run", exit_code=EXIT_EXTERNAL)
        else:
            result.fail("exceptions", "reward functions raised" + hidden + ":\n" + "\n".join(msgs),
                        "fix the exception; during training it silently becomes a 0.0 reward")
        result.step(f"fix the exception in {', '.join(list(errors)[:FUNC_PREVIEW])}")
    elif scoring_errors:
        e = scoring_errors[0]
        result.fail("exceptions", f"scoring raised {e.type}: {e.message}\n{e.traceback}", "fix the exception in the task's scoring")
    else:
        result.passed("exceptions", "no reward function raised")
    timing = {name: {"calls": len(v), "mean_ms": round(statistics.fmean(v) * 1000, 3), "max_ms": round(max(v) * 1000, 3)}
              for name, v in seconds.items()}
    result.data["timing"] = timing
    if timed_out:
        result.fail("speed", f"stopped after {opts.timeout:g} s (hanging): {', '.join(sorted(timed_out))}",
                    "a reward that hangs stalls the whole training step; add timeouts to network or subprocess calls")
        result.step(f"make {', '.join(sorted(timed_out))} return promptly (it hung past --timeout)")
        return
    slow = {n: t for n, t in timing.items() if t["max_ms"] / 1000 > opts.slow}
    if slow:
        result.warn("speed", "slow reward functions: " + ", ".join(f"{n} (max {t['max_ms']:.0f} ms)" for n, t in slow.items()),
                    f"calls slower than {opts.slow:g} s add up to minutes per step at training batch sizes")
    else:
        worst = max(timing.items(), key=lambda kv: kv[1]["max_ms"], default=(None, {"max_ms": 0}))
        result.passed("speed", f"every call returned within {opts.slow:g} s (slowest: {worst[0]} at {worst[1]['max_ms']:.1f} ms)")


# -- user files ------------------------------------------------------------------------------


def _custom_checks(result: Result, env: LoadedEnv, opts: Options) -> list[Score]:
    objs = rp.read_jsonl(opts.custom, "--custom")
    finder = rp.RowFinder(env)
    cases = []
    for n, obj in enumerate(objs, 1):
        row = finder.find(obj, opts.custom, n)
        completion = rp.completion_of(obj, opts.custom, n)
        lo, hi = rp.expected_range(obj, opts.custom, n)
        function = obj.get("function")
        if function is not None and function not in {f.name for f in env.reward_functions}:
            raise UsageError(f"{opts.custom}: line {n}: unknown function {function!r}",
                             hint="known: " + ", ".join(f.name for f in env.reward_functions))
        cases.append((n, row, completion, lo, hi, function, obj.get("name")))
    scores = env.score_sync([(c[1], c[2]) for c in cases], opts.timeout, opts.concurrency)
    misses = []
    table = []
    for (n, row, completion, lo, hi, function, name), s in zip(cases, scores):
        got = s.total if function is None else s.per_function.get(function)
        ok = isinstance(got, (int, float)) and lo <= got <= hi
        table.append({"line": n, "name": name, "example_id": row.index, "function": function or "total", "got": got,
                      "expected": [lo + rp.EPS, hi - rp.EPS], "ok": ok})
        if not ok:
            misses.append(f"line {n}{f' ({name})' if name else ''}: {function or 'total'} = {_fmt(got)}, expected {_range(lo, hi)}")
    result.data["custom"] = table
    if misses:
        result.fail("custom_cases", f"{len(misses)}/{len(cases)} custom cases got an unexpected reward: " + "; ".join(misses[:5]),
                    "compare the reward function's logic with the cases you wrote")
        result.step("fix the reward (or the case) for the custom cases that missed")
    else:
        result.passed("custom_cases", f"all {len(cases)} custom cases got the expected reward")
    return scores


def _completion_checks(result: Result, env: LoadedEnv, opts: Options) -> list[Score]:
    objs = rp.read_jsonl(opts.completions, "--completions")
    finder = rp.RowFinder(env)
    entries = []
    for n, obj in enumerate(objs, 1):
        row = finder.find(obj, opts.completions, n)
        label = obj.get("is_correct")
        if label is not None and not isinstance(label, bool):
            raise UsageError(f"{opts.completions}: line {n}: is_correct must be true or false")
        entries.append((n, row, rp.completion_of(obj, opts.completions, n), label))
    scores = env.score_sync([(e[1], e[2]) for e in entries], opts.timeout, opts.concurrency)
    totals = [s.total for s in scores if isinstance(s.total, (int, float)) and math.isfinite(s.total)]
    fn = rp.correctness_function(env.reward_functions)
    dist = {"n": len(scores)}
    if totals:
        dist |= {"mean": round(statistics.fmean(totals), 4), "std": round(statistics.pstdev(totals), 4),
                 "min": min(totals), "max": max(totals),
                 "histogram": _histogram(totals), "distinct": len({round(t, 9) for t in totals})}
    dist["functions"] = {
        f.name: round(statistics.fmean(vals), 4) if (vals := [v for s in scores if isinstance(v := s.per_function.get(f.name), (int, float)) and math.isfinite(v)]) else None
        for f in env.reward_functions
    }
    result.data["completions"] = dist
    if totals and len({round(t, 9) for t in totals}) == 1:
        result.warn("completion_rewards", f"all {len(totals)} real completions got the same reward {_fmt(totals[0])}",
                    "a constant reward gives no learning signal (GRPO advantages are all zero)")
    else:
        result.passed("completion_rewards", f"{len(scores)} real completions scored: mean {_fmt(dist.get('mean'))}, "
                                            f"range {_fmt(dist.get('min'))}..{_fmt(dist.get('max'))}")
    labelled = [(e, s) for e, s in zip(entries, scores) if e[3] is not None]
    if not labelled:
        return scores
    top = max((s.per_function.get(fn) if fn else s.total) or 0.0 for s in scores) if scores else 1.0
    threshold = opts.correct_threshold * (top if top and top > 0 else 1.0)
    disagree = []
    for (n, row, completion, label), s in labelled:
        v = s.per_function.get(fn) if fn else s.total
        says = isinstance(v, (int, float)) and math.isfinite(v) and v >= threshold and v > 0
        if says != label:
            text = completion if isinstance(completion, str) else (completion[-1].get("content") or "")
            disagree.append({"line": n, "example_id": row.index, "label": label, "reward": v, "total": s.total,
                             "completion": _clip(str(text), 200)})
    agreement = 1 - len(disagree) / len(labelled)
    result.data["label_agreement"] = {"labelled": len(labelled), "agreement": round(agreement, 4), "function": fn or "total",
                                      "threshold": threshold, "disagreeing": disagree[:20]}
    msg = f"reward agrees with the human label on {agreement:.0%} of {len(labelled)} labelled completions ({fn or 'total'} >= {threshold:g} counts as correct)"
    if agreement < opts.min_agreement:
        fp = sum(1 for d in disagree if not d["label"])
        result.fail("label_agreement", msg + f"; {fp} rewarded but wrong, {len(disagree) - fp} correct but not rewarded",
                    "the disagreeing rows are listed above (data.label_agreement.disagreeing with --json)")
        result.step("look at the completions where reward and label disagree (they show what the parser misses or accepts)")
    else:
        result.passed("label_agreement", msg)
    return scores


def _histogram(values: list[float], bins: int = 10) -> list[dict]:
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return [{"from": lo, "to": hi, "count": len(values)}]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return [{"from": round(lo + i * width, 4), "to": round(lo + (i + 1) * width, 4), "count": c} for i, c in enumerate(counts)]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _range(lo: float, hi: float) -> str:
    lo, hi = lo + rp.EPS, hi - rp.EPS
    return _fmt(lo) if abs(hi - lo) < 1e-9 else f"[{_fmt(lo)}, {_fmt(hi)}]"
