"""The failure-signature checks, one function each; every threshold comes from vlab.diagnose.thresholds."""

from __future__ import annotations

import math

import numpy as np

from vlab.diagnose.finding import Context, Finding, fmt, reward_noise_se, rnd, trailing_run, vanished
from vlab.diagnose.series import WATCHED_FINITE
from vlab.diagnose.stats import Trend, centered_median, rolling_mean, trailing_median, trend, window, window_size
from vlab.diagnose.thresholds import T


def check_nonfinite(ctx: Context) -> list[Finding]:
    bad = {k: v for k, v in ctx.s.nonfinite.items() if k in WATCHED_FINITE and v}
    gone = vanished(ctx.s)
    if gone and not bad:
        first = min(v[0] for v in gone.values())
        return [
            Finding(
                "non-finite",
                "fail",
                "metrics stopped being logged while the run went on: "
                + "; ".join(f"{k} from step {v[0]}" for k, v in gone.items())
                + " (prime-rl drops NaN/inf values from its metrics: look for 'Dropping' warnings in the logs)",
                {"first_step": first, "missing": gone},
                steps=[first],
                rank=0,
            )
        ]
    if not bad:
        return []
    first = min(v[0] for v in bad.values())
    parts = [f"{k} at {len(v)} step(s) from step {v[0]}" for k, v in bad.items()]
    return [
        Finding(
            "non-finite",
            "fail",
            "non-finite values (NaN/inf): " + "; ".join(parts),
            {"first_step": first, "fields": {k: v[:20] for k, v in bad.items()}},
            steps=[first],
            rank=0,
        )
    ]


def check_reward_level(ctx: Context) -> list[Finding]:
    s = ctx.s
    r = s.col("reward_mean")
    first, last = window(s.steps, r, "first"), window(s.steps, r, "last")
    tr = trend(s.steps, r)
    if first is None or last is None:
        return []
    ev = {"first_window": first.to_dict(), "last_window": last.to_dict(), "range": [ctx.lo, ctx.hi]}
    if tr:
        ev["trend"] = tr.to_dict()
    out = []
    never = bool(np.nanmax(r) <= ctx.lo) if np.isfinite(r).any() else False
    span_steps = max(1, int(s.steps[-1] - s.steps[0]))
    max_rise = (tr.ci95[1] * span_steps / 100) if tr else 0.0
    if ctx.frac(last.mean) < T["flat_low"] and max_rise < T["min_rise"] * ctx.span:
        why = (
            f"the reward was {fmt(ctx.lo)} on every step ({len(s)} steps): the reward never fired"
            if never
            else f"reward flat near zero: last-window mean {fmt(last.mean)} ± {fmt(last.se)} "
            f"(steps {last.steps[0]}-{last.steps[1]})"
        )
        out.append(
            Finding(
                "reward-flat-low",
                "fail",
                why + (f"; trend {tr.text()}" if tr else ""),
                {**ev, "never_nonzero": never},
                steps=[int(s.steps[0]), int(s.steps[-1])],
                rank=30,
            )
        )
    if ctx.frac(first.mean) > T["saturated"]:
        out.append(
            Finding(
                "reward-saturated",
                "fail",
                f"reward saturated from the start: first-window mean {fmt(first.mean)} of at most {fmt(ctx.hi)} "
                "(too easy: little left to learn)",
                ev,
                steps=[first.steps[0]],
                rank=35,
            )
        )
    elif ctx.frac(last.mean) > T["converged"] and ctx.frac(first.mean) < T["saturated"]:
        reached = int(s.steps[np.argmax(rolling_mean(r, 3) >= ctx.lo + T["converged"] * ctx.span)])
        out.append(
            Finding(
                "converged",
                "pass",
                f"learned: the reward rose from {fmt(first.mean)} to {fmt(last.mean)} and stays near the top "
                f"from about step {reached}; further steps teach little",
                ev,
                steps=[reached],
                rank=90,
            )
        )
    elif tr is not None and tr.rising:
        out.append(
            Finding(
                "reward-rising",
                "pass",
                f"reward rising: {fmt(first.mean)} -> {fmt(last.mean)}, {tr.text()}",
                ev,
                steps=[],
                rank=95,
            )
        )
    return out


def check_collapse(ctx: Context) -> list[Finding]:
    s = ctx.s
    r = s.col("reward_mean")
    n = int(np.isfinite(r).sum())
    if n < T["min_steps"] + 3:
        return []
    k = max(3, window_size(n) // 2)
    smooth = rolling_mean(r, k)
    if not np.isfinite(smooth).any():
        return []
    start = float(np.nanmean(r[: max(1, k)]))
    peak_i = int(np.nanargmax(smooth))
    peak = float(smooth[peak_i])
    rise = peak - start
    after = smooth[peak_i + 1 :]
    if rise < T["collapse_rise"] * ctx.span or after.size == 0:
        return []
    se = float(np.nanmean(reward_noise_se(ctx))) / math.sqrt(k)
    if rise < 3 * se:  # a rise the noise explains is no rise
        return []
    dropped = (peak - after) > max(T["collapse_drop"] * rise, 3 * se)
    run = trailing_run(dropped)  # a collapse lasts: it holds to the last step
    if run < T["collapse_steps"]:
        return []
    first_bad = peak_i + 1 + int(dropped.size - run)
    end = float(np.nanmean(r[-k:]))
    return [
        Finding(
            "reward-collapse",
            "fail",
            f"rise then collapse: the reward (mean of {k} steps) rose {fmt(start)} -> {fmt(peak)} by step "
            f"{int(s.steps[peak_i])}, then fell to {fmt(end)} (lower for {run} steps; noise s.e. {fmt(se)})",
            {
                "start": start,
                "peak": peak,
                "peak_step": int(s.steps[peak_i]),
                "end": end,
                "smoothing_steps": k,
                "steps_below": run,
                "noise_se": se,
            },
            steps=[int(s.steps[peak_i]), int(s.steps[min(first_bad, len(s) - 1)])],
            rank=10,
        )
    ]


def check_swings(ctx: Context) -> list[Finding]:
    s = ctx.s
    r = s.col("reward_mean")
    ok = np.isfinite(r)
    if ok.sum() < max(T["min_steps"], 8):
        return []
    rr, steps = r[ok], s.steps[ok]
    se = reward_noise_se(ctx)[ok]
    resid = rr - centered_median(rr, 2)
    z = resid / (se * 1.2)  # the running median's own error: ~1.2x a point's at 5 points
    ratio = float(np.mean(z**2))
    big = np.flatnonzero(np.abs(z) > 3)
    if ratio < T["swing_ratio"] or big.size < max(T["swing_count"], T["swing_share"] * rr.size):
        return []
    return [
        Finding(
            "reward-unstable",
            "fail",
            f"reward swings beyond the group noise: mean squared deviation {ratio:.1f}x what the noise explains, "
            f"{big.size} steps beyond 3 standard errors (first at step {int(steps[big[0]])})",
            {"noise_ratio": round(ratio, 2), "swing_steps": [int(x) for x in steps[big][:20]]},
            steps=[int(x) for x in steps[big][:20]],
            rank=12,
        )
    ]


def _share_check(ctx: Context, name: str, fid: str, what: str, high: float, fail: float, rank: int) -> list[Finding]:
    s = ctx.s
    v = s.col(name)
    first, last = window(s.steps, v, "first"), window(s.steps, v, "last")
    if first is None or last is None:
        return []
    tr = trend(s.steps, v)
    ev = {"first_window": first.to_dict(), "last_window": last.to_dict(), "key": s.keys.get(name)}
    if tr:
        ev["trend"] = tr.to_dict()
    rising = tr is not None and tr.rising and last.mean - first.mean >= T["rise_share"]
    if rising and last.mean >= fail:
        status, how = "fail", "rising"
    elif last.mean >= fail:
        status, how = "fail", "high"
    elif rising or last.mean >= high:
        status, how = "warn", "rising" if rising else "high"
    else:
        return []
    return [
        Finding(
            fid,
            status,
            f"{what} {how}: {fmt(first.mean)} (steps {first.steps[0]}-{first.steps[1]}) -> {fmt(last.mean)} "
            f"(steps {last.steps[0]}-{last.steps[1]})" + (f", {tr.text()}" if tr else ""),
            {**ev, "how": how},
            steps=[last.steps[0]],
            rank=rank,
        )
    ]


def check_zero_advantage(ctx: Context) -> list[Finding]:
    """Groups whose rollouts all scored the same teach nothing. Where the source says how many of them all pass
    (prime-rl's solved_all, local_train's solved_all_frac), those are the task learned, not a lost signal: the
    thresholds then apply to the groups without signal that the model does not solve every time."""
    what = "share of groups with zero advantage (all pass or all fail)"
    out = _share_check(ctx, "zero_adv_frac", "zero-advantage", what, T["zero_adv_high"], T["zero_adv_fail"], 40)
    s = ctx.s
    if not out or not s.has("zero_adv_unsolved"):
        return out
    unsolved_what = "share of groups with zero advantage that the model does not solve every time"
    unsolved = _share_check(
        ctx, "zero_adv_unsolved", "zero-advantage", unsolved_what, T["zero_adv_high"], T["zero_adv_fail"], 40
    )
    if unsolved:
        return unsolved
    f = out[0]
    solved = window(s.steps, s.col("solved_all"), "last")
    f.status = "pass"
    f.evidence["solved_all_last_window"] = solved.to_dict() if solved else None
    f.message += (
        f" (of which {fmt(solved.mean)} all pass: groups the model solves every time, the task learned, not a lost"
        " signal)"
        if solved
        else " (the groups all pass)"
    )
    return out


def check_truncation(ctx: Context, reward_rising: bool) -> list[Finding]:
    """Rising to above truncation_fail: fail. Above truncation_high: warn, or pass while the reward rises."""
    out = _share_check(
        ctx, "truncated_frac", "truncation", "truncated share", T["truncation_high"], T["truncation_fail"], 45
    )
    keep = []
    for f in out:
        last = f.evidence["last_window"]["mean"]
        if f.evidence["how"] == "high":
            if last < T["truncation_high"]:
                continue  # between the two thresholds and not rising: nothing to say
            f.status = "pass" if reward_rising else "warn"
            if reward_rising:
                f.message += " (the reward still rises: truncation is not blocking learning)"
        keep.append(f)
    return keep


def check_turn_limit(ctx: Context) -> list[Finding]:
    """Rollouts the environment's turn limit ended before they were over (mid tool use, a game cut short)."""
    out = _share_check(
        ctx,
        "turn_limited_frac",
        "turn-limit",
        "ran out of turns: share of rollouts ended by the turn limit mid tool use or mid game",
        T["turn_limit_high"],
        T["turn_limit_fail"],
        46,
    )
    return out


def check_length(ctx: Context) -> list[Finding]:
    s = ctx.s
    v = s.col("completion_len")
    first, last = window(s.steps, v, "first"), window(s.steps, v, "last")
    tr = trend(s.steps, v)
    if first is None or last is None or first.median <= 0 or tr is None:
        return []
    ratio = last.median / first.median
    ev = {
        "first_window": first.to_dict(),
        "last_window": last.to_dict(),
        "ratio": round(ratio, 3),
        "trend": tr.to_dict(),
    }
    if ratio > T["length_explode"] and tr.rising:
        fid, what = "length-explode", "exploding"
    elif ratio < T["length_collapse"] and tr.falling:
        fid, what = "length-collapse", "collapsing"
    else:
        return []
    return [
        Finding(
            fid,
            "fail",
            f"completion length {what}: median {fmt(first.median)} -> {fmt(last.median)} tokens ({ratio:.2f}x), "
            + tr.text(),
            ev,
            steps=[last.steps[0]],
            rank=50,
        )
    ]


def check_entropy(ctx: Context, reward_tr: Trend | None) -> list[Finding]:
    s = ctx.s
    e = s.col("entropy")
    first, last = window(s.steps, e, "first"), window(s.steps, e, "last")
    if first is None or last is None or first.mean <= 0:
        return []
    ok = np.flatnonzero(np.isfinite(e))
    ee = e[ok]
    drops = (ee[:-1] - ee[1:]) / np.where(ee[:-1] > 0, ee[:-1], np.nan)
    sudden = np.flatnonzero(drops >= T["entropy_sudden"])
    ratio = last.mean / first.mean
    # Did the fall pay? Learning sharpens the policy: the reward rises as the entropy falls, then holds its gain
    # (a converged run's reward is flat after the drop, at its new level); a collapse does not pay.
    since = int(s.steps[ok[sudden[0] + 1]]) if sudden.size else last.steps[0]
    after = trend(s.steps[s.steps >= since], s.col("reward_mean")[s.steps >= since])
    held = _held_gain(ctx, since, after)
    rewarded = (
        (after is not None and after.rising)
        or (reward_tr is not None and reward_tr.rising and not sudden.size)
        or held is not None
    )
    at_top = ctx.frac(float(np.nanmean(s.col("reward_mean")[-3:]))) > T["converged"] if len(s) else False
    ev = {"first_window": first.to_dict(), "last_window": last.to_dict(), "ratio": round(ratio, 3)}
    if sudden.size:
        ev["sudden_drops"] = [
            {"step": int(s.steps[ok[i + 1]]), "from": rnd(ee[i]), "to": rnd(ee[i + 1])} for i in sudden[:5]
        ]
    if held is not None:
        ev["reward_held"] = held
    if (ratio < T["entropy_collapse"] or sudden.size) and not rewarded and not at_top:
        where = f"; fell {100 * drops[sudden[0]]:.0f}% in one step at step {since}" if sudden.size else ""
        return [
            Finding(
                "entropy-collapse",
                "fail",
                f"entropy collapse: {fmt(first.mean)} -> {fmt(last.mean)} ({ratio:.2f}x){where}, "
                "and the reward did not rise after it",
                ev,
                steps=[since],
                rank=15,
            )
        ]
    if sudden.size:
        return [
            Finding(
                "entropy-collapse",
                "warn",
                f"entropy fell {100 * drops[sudden[0]]:.0f}% in one step at step {since} (the reward rose: "
                "fast learning, but a learning rate this aggressive risks collapse)",
                ev,
                steps=[since],
                rank=60,
            )
        ]
    return []


def _held_gain(ctx: Context, since: int, after: Trend | None) -> dict | None:
    """The reward's gain that the steps from ``since`` on kept: their mean above the first window's by at least
    ``min_rise`` of the range and by more than their 95% intervals, and not falling (a converged run's entropy
    falls as its reward rises to a level it then holds). None: no gain held."""
    s = ctx.s
    reward = s.col("reward_mean")
    first = window(s.steps, reward, "first")
    kept = window(s.steps[s.steps >= since], reward[s.steps >= since], "first", size=int((s.steps >= since).sum()))
    if first is None or kept is None or kept.points < 3 or (after is not None and after.falling):
        return None
    spread = T["z"] * math.hypot(np.nan_to_num(first.se), np.nan_to_num(kept.se))
    gain = kept.mean - first.mean
    if ctx.frac(ctx.lo + gain) < T["min_rise"] or gain <= spread:
        return None
    return {"from_step": since, "before": rnd(first.mean), "after": rnd(kept.mean), "gain": rnd(gain)}


def check_grad_spikes(ctx: Context) -> list[Finding]:
    s = ctx.s
    g = s.col("grad_norm")
    if int(np.isfinite(g).sum()) < T["min_steps"]:
        return []
    med = trailing_median(g, 10)
    with np.errstate(invalid="ignore"):
        spike = np.isfinite(g) & np.isfinite(med) & (g > T["grad_spike"] * med) & (med > 0)
    idx = np.flatnonzero(spike)
    if not idx.size:
        return []
    status = "fail" if idx.size >= T["grad_spikes_fail"] else "warn"
    return [
        Finding(
            "grad-spikes",
            status,
            f"{idx.size} gradient-norm spike(s) above {T['grad_spike']:g}x the running median, first at step "
            f"{int(s.steps[idx[0]])} ({fmt(g[idx[0]])} vs median {fmt(med[idx[0]])})",
            {"spikes": [{"step": int(s.steps[i]), "grad_norm": rnd(g[i]), "median": rnd(med[i])} for i in idx[:20]]},
            steps=[int(s.steps[i]) for i in idx[:20]],
            rank=20,
        )
    ]


def check_errors(ctx: Context) -> list[Finding]:
    return _share_check(
        ctx, "error_frac", "rollout-errors", "share of rollouts with errors", T["errors_warn"], T["errors_fail"], 5
    )


def check_judge_errors(ctx: Context) -> list[Finding]:
    """A judge template's judge_error metric: rollouts whose judge refused or gave no verdict score 0 (classic)
    or error (v1). Counted apart from the policy's zero rewards: over the run, and the worst step."""
    s = ctx.s
    v = s.col("judge_error_frac")
    ok = np.isfinite(v)
    if not ok.any():
        return []
    share, worst = float(np.mean(v[ok])), int(np.argmax(np.where(ok, v, -1.0)))
    if share <= T["judge_errors_warn"]:
        return []
    return [
        Finding(
            "judge-errors",
            "fail" if share > T["judge_errors_fail"] else "warn",
            f"the judge failed on {share:.0%} of rollouts (no verdict or a refusal; worst step "
            f"{int(s.steps[worst])}: {v[worst]:.0%}): the zeros are not the policy's",
            {
                "mean": rnd(share),
                "worst_step": int(s.steps[worst]),
                "worst": rnd(v[worst]),
                "key": s.keys.get("judge_error_frac"),
            },
            steps=[int(s.steps[worst])],
            rank=4,
        )
    ]


def check_throughput(ctx: Context) -> list[Finding]:
    s = ctx.s
    for name, inverse in (("tokens_per_s", False), ("step_time", True)):
        v = s.col(name)
        first, last = window(s.steps, v, "first"), window(s.steps, v, "last")
        if first is None or last is None or first.median <= 0 or last.median <= 0:
            continue
        ratio = first.median / last.median if inverse else last.median / first.median
        if ratio < T["throughput_drop"]:
            what = "step time" if inverse else "tokens/s"
            return [
                Finding(
                    "throughput-drop",
                    "warn",
                    f"throughput fell to {ratio:.2f}x: {what} median {fmt(first.median)} -> {fmt(last.median)}",
                    {"first_window": first.to_dict(), "last_window": last.to_dict(), "key": s.keys.get(name)},
                    steps=[last.steps[0]],
                    rank=70,
                )
            ]
        return []
    return []


def check_eval(ctx: Context) -> list[Finding]:
    s = ctx.s
    ev_col = s.col("eval_reward")
    ok = np.isfinite(ev_col)
    if ok.sum() < T["eval_min_points"]:
        return []
    steps, vals = s.steps[ok], ev_col[ok]
    r = s.col("reward_mean")
    first_t, last_t = window(s.steps, r, "first"), window(s.steps, r, "last")
    tr = trend(steps, vals)
    if first_t is None or last_t is None or tr is None:
        return []
    train_gain = last_t.mean - first_t.mean
    eval_gain = float(vals[-1] - vals[0])
    best = int(np.argmax(vals))
    ev = {
        "eval_steps": [int(x) for x in steps[:50]],
        "eval_values": [rnd(x) for x in vals[:50]],
        "train_gain": rnd(train_gain),
        "eval_gain": rnd(eval_gain),
        "eval_trend": tr.to_dict(),
        "best_eval_step": int(steps[best]),
    }
    if train_gain >= T["eval_gap"] * ctx.span and not tr.rising:
        status = "fail" if tr.falling else "warn"
        return [
            Finding(
                "eval-divergence",
                status,
                f"train reward rose {fmt(train_gain)} but eval reward did not ({fmt(vals[0])} -> {fmt(vals[-1])}, "
                f"{tr.text()}); best eval at step {int(steps[best])}",
                ev,
                steps=[int(steps[best])],
                rank=55,
            )
        ]
    return []
