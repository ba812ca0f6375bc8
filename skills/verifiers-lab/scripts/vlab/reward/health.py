"""test_reward's health checks on every scoring: finite values, exceptions (also those the classic
Rubric swallowed), hanging and slow reward functions."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

from vlab.core.result import EXIT_EXTERNAL, Result
from vlab.env import Score
from vlab.reward.verdicts import FUNC_PREVIEW

if TYPE_CHECKING:
    from vlab.reward.request import TestRewardRequest

_NETWORK_ERRORS = {
    "APIConnectionError",
    "APITimeoutError",
    "ConnectError",
    "ConnectTimeout",
    "ConnectionError",
    "ReadTimeout",
    "TimeoutException",
    "InternalServerError",
    "RateLimitError",
}


def health_checks(result: Result, env, scores: list[Score], opts: TestRewardRequest) -> None:
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
        result.fail(
            "finite",
            "rewards that are not finite numbers (NaN/inf): " + ", ".join(f"{k} ({v}x)" for k, v in nonfinite.items()),
            "guard divisions and empty lists; a NaN reward poisons the advantage of the whole group",
        )
        result.step("return a finite float from every reward function (NaN found)")
    else:
        result.passed("finite", f"all {len(scores)} scorings returned finite rewards")
    if errors:
        msgs = []
        for name, errs in errors.items():
            e = errs[0]
            msgs.append(f"{name} raised {e.type}: {e.message} ({len(errs)}x)\n{e.traceback}")
        hidden = (
            " (the classic Rubric scored these 0.0 without a word)" if env.capabilities.silent_reward_errors else ""
        )
        kinds = {e.type for errs in errors.values() for e in errs}
        if kinds <= _NETWORK_ERRORS:  # a judge or remote verifier that cannot be reached: not the reward's logic
            result.fail(
                "exceptions",
                "reward functions could not reach their service:\n" + "\n".join(msgs),
                "check the network and the judge endpoint/API key, then re-run",
                exit_code=EXIT_EXTERNAL,
            )
        else:
            result.fail(
                "exceptions",
                "reward functions raised" + hidden + ":\n" + "\n".join(msgs),
                "fix the exception; during training it silently becomes a 0.0 reward",
            )
        result.step(f"fix the exception in {', '.join(list(errors)[:FUNC_PREVIEW])}")
    elif scoring_errors:
        e = scoring_errors[0]
        result.fail(
            "exceptions",
            f"scoring raised {e.type}: {e.message}\n{e.traceback}",
            "fix the exception in the task's scoring",
        )
    else:
        result.passed("exceptions", "no reward function raised")
    timing = {
        name: {"calls": len(v), "mean_ms": round(statistics.fmean(v) * 1000, 3), "max_ms": round(max(v) * 1000, 3)}
        for name, v in seconds.items()
    }
    result.data["timing"] = timing
    if timed_out:
        result.fail(
            "speed",
            f"stopped after {opts.timeout:g} s (hanging): {', '.join(sorted(timed_out))}",
            "a reward that hangs stalls the whole training step; add timeouts to network or subprocess calls",
        )
        result.step(f"make {', '.join(sorted(timed_out))} return promptly (it hung past --timeout)")
        return
    slow = {n: t for n, t in timing.items() if t["max_ms"] / 1000 > opts.slow}
    if slow:
        result.warn(
            "speed",
            "slow reward functions: " + ", ".join(f"{n} (max {t['max_ms']:.0f} ms)" for n, t in slow.items()),
            f"calls slower than {opts.slow:g} s add up to minutes per step at training batch sizes",
        )
    else:
        worst = max(timing.items(), key=lambda kv: kv[1]["max_ms"], default=(None, {"max_ms": 0}))
        result.passed(
            "speed", f"every call returned within {opts.slow:g} s (slowest: {worst[0]} at {worst[1]['max_ms']:.1f} ms)"
        )
