"""test_reward's health checks on every scoring: finite values, exceptions (also those the classic
Rubric swallowed), hanging and slow reward functions."""

from __future__ import annotations

import math
import re
import statistics
from typing import TYPE_CHECKING

from vlab.catalog import JUDGE_ERROR_METRIC
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
# The same failures in the words of a wrapper that re-raises them as RuntimeError (the classic JudgeRubric:
# "Judge model API error ... Error code: 500", "Judge model timeout", "... rate limit exceeded"), and of
# test_reward's judge proxy (judge_server: "the judge endpoint answered HTTP 503 / did not answer / is unreachable").
_SERVICE_WORDS = re.compile(
    r"Error code: (5\d\d|429)\b|Connection error|Request timed out|Judge model timeout|rate limit exceeded|"
    r"the judge endpoint (answered HTTP 5\d\d|did not answer|is unreachable)",
    re.I,
)


def service_failure(kind: str, message: str) -> bool:
    """The call failed in the service (network, timeout, HTTP 5xx, rate limit), not in the reward's logic."""
    return kind in _NETWORK_ERRORS or bool(_SERVICE_WORDS.search(message or ""))


def training_effect(env) -> str:
    """What a reward that raises does to a rollout during training, for this environment's generation: the
    classic Rubric scores it 0.0 (a judge template's judge_error metric says so); a v1 rollout errors."""
    if env.capabilities.silent_reward_errors:
        if JUDGE_ERROR_METRIC in {f.name for f in env.reward_functions}:
            return f"the classic Rubric scores the rollout 0.0 (its {JUDGE_ERROR_METRIC} metric is 1.0)"
        return "the classic Rubric scores the rollout 0.0 without a word"
    return "the v1 rollout errors (its trace is marked failed), never a silent 0.0"


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
        hidden = " (the classic Rubric scored these 0.0)" if env.capabilities.silent_reward_errors else ""
        effect = training_effect(env)
        if all(service_failure(e.type, e.message) for errs in errors.values() for e in errs):
            # a judge or remote verifier that failed or cannot be reached: an external failure, not the reward's logic
            result.fail(
                "exceptions",
                "reward functions could not reach their service:\n" + "\n".join(msgs),
                "check the network, the endpoint and its API key, then retry (a judge test_reward proxies is given "
                f"up after half of --timeout: raise it for a slow judge); while the service fails, {effect}",
                exit_code=EXIT_EXTERNAL,
            )
        else:
            result.fail(
                "exceptions",
                "reward functions raised" + hidden + ":\n" + "\n".join(msgs),
                f"fix the exception; during training {effect}",
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
