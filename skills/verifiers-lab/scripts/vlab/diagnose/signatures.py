"""Failure signatures: every check over the normalised series, the order of causes, ``detect``.

Every finding names the steps it refers to, the values it saw (window means with their
standard errors) and, where a trend matters, the least-squares slope with its 95% interval.
All thresholds come from ``vlab.diagnose.thresholds``. Order matters: a finding with a
lower ``rank`` is the likelier cause, and later findings that follow from it say so.
"""

from __future__ import annotations

import numpy as np

from vlab.diagnose.checks import (
    check_collapse,
    check_entropy,
    check_errors,
    check_eval,
    check_grad_spikes,
    check_judge_errors,
    check_length,
    check_nonfinite,
    check_reward_level,
    check_swings,
    check_throughput,
    check_truncation,
    check_turn_limit,
    check_zero_advantage,
)
from vlab.diagnose.finding import Context, Finding, reward_noise_se, reward_range, vanished
from vlab.diagnose.series import Series
from vlab.diagnose.stats import trend
from vlab.diagnose.thresholds import T

__all__ = ["Context", "Finding", "detect", "reward_noise_se", "reward_range", "vanished", "EXPLAINS"]

# -- all of them ---------------------------------------------------------------------------------

# finding id -> ids it explains (a consequence is reported, but its deltas give way)
EXPLAINS = {
    "non-finite": {"reward-flat-low", "reward-collapse", "reward-unstable", "zero-advantage", "entropy-collapse"},
    "rollout-errors": {"reward-flat-low", "zero-advantage"},
    "judge-errors": {"reward-flat-low", "zero-advantage", "rollout-errors"},
    "reward-collapse": {"reward-flat-low", "zero-advantage", "entropy-collapse", "reward-unstable"},
    "reward-unstable": {"zero-advantage"},
    "entropy-collapse": {"reward-flat-low", "zero-advantage", "truncation", "length-collapse", "length-explode"},
    "grad-spikes": {"reward-unstable"},
    "reward-flat-low": {"zero-advantage", "truncation"},
    "reward-saturated": {"zero-advantage"},
    "converged": {"zero-advantage"},
}


def detect(s: Series, reward_range_given: tuple[float, float] | None = None) -> tuple[list[Finding], Context]:
    lo, hi = reward_range(s, reward_range_given)
    ctx = Context(s, lo, hi)
    findings = check_nonfinite(ctx)
    if int(np.isfinite(s.col("reward_mean")).sum()) < T["min_steps"]:
        return findings, ctx
    reward_tr = trend(s.steps, s.col("reward_mean"))
    findings += check_errors(ctx)
    findings += check_judge_errors(ctx)
    findings += check_collapse(ctx)
    if not any(f.id == "reward-collapse" for f in findings):
        findings += check_swings(ctx)
    findings += check_entropy(ctx, reward_tr)
    findings += check_grad_spikes(ctx)
    findings += check_reward_level(ctx)
    findings += check_zero_advantage(ctx)
    findings += check_truncation(ctx, reward_tr is not None and reward_tr.rising)
    findings += check_turn_limit(ctx)
    findings += check_length(ctx)
    findings += check_eval(ctx)
    findings += check_throughput(ctx)
    findings.sort(key=lambda f: f.rank)
    if any(f.id == "converged" for f in findings):
        for f in findings:
            if f.id == "zero-advantage":  # groups all pass because the task is learned
                f.status, f.follows = "pass", "converged"
                f.message += " (the groups all pass because the task is learned)"
    active = [f for f in findings if f.status in ("fail", "warn") or f.id == "converged"]
    for f in findings:
        for cause in active:
            if cause is not f and cause.rank < f.rank and f.id in EXPLAINS.get(cause.id, ()):
                f.follows = cause.id
                break
    return findings, ctx
