"""test_reward on the user's own files: --custom cases with expected rewards, --completions of real
replies with their reward distribution and agreement with human labels; reading those files (JSON Lines,
gzip too) and finding each line's dataset row."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlab.core.files import open_binary
from vlab.core.result import Result, UsageError
from vlab.env import Row, Score
from vlab.reward import probes as rp
from vlab.reward.verdicts import clip, fmt

if TYPE_CHECKING:
    from vlab.reward.request import TestRewardRequest


def custom_checks(result: Result, env, opts: TestRewardRequest) -> list[Score]:
    objs = read_jsonl(opts.custom, "--custom")
    finder = RowFinder(env)
    cases = []
    for n, obj in enumerate(objs, 1):
        row = finder.find(obj, opts.custom, n)
        completion = completion_of(obj, opts.custom, n)
        lo, hi = expected_range(obj, opts.custom, n)
        function = obj.get("function")
        if function is not None and function not in {f.name for f in env.reward_functions}:
            raise UsageError(
                f"{opts.custom}: line {n}: unknown function {function!r}",
                hint="known: " + ", ".join(f.name for f in env.reward_functions),
            )
        cases.append((n, row, completion, lo, hi, function, obj.get("name")))
    scores = env.score_sync([(c[1], c[2]) for c in cases], opts.timeout, opts.concurrency)
    misses = []
    table = []
    for (n, row, _completion, lo, hi, function, name), s in zip(cases, scores):
        got = s.total if function is None else s.per_function.get(function)
        ok = isinstance(got, (int, float)) and lo <= got <= hi
        table.append(
            {
                "line": n,
                "name": name,
                "example_id": row.index,
                "function": function or "total",
                "got": got,
                "expected": [lo + rp.EPS, hi - rp.EPS],
                "ok": ok,
            }
        )
        if not ok:
            misses.append(
                f"line {n}{f' ({name})' if name else ''}: {function or 'total'} = {fmt(got)}, expected {_range(lo, hi)}"
            )
    result.data["custom"] = table
    if misses:
        result.fail(
            "custom_cases",
            f"{len(misses)}/{len(cases)} custom cases got an unexpected reward: " + "; ".join(misses[:5]),
            "compare the reward function's logic with the cases you wrote",
        )
        result.step("fix the reward (or the case) for the custom cases that missed")
    else:
        result.passed("custom_cases", f"all {len(cases)} custom cases got the expected reward")
    return scores


def completion_checks(result: Result, env, opts: TestRewardRequest) -> list[Score]:
    objs = read_jsonl(opts.completions, "--completions")
    finder = RowFinder(env)
    entries = []
    for n, obj in enumerate(objs, 1):
        row = finder.find(obj, opts.completions, n)
        label = obj.get("is_correct")
        if label is not None and not isinstance(label, bool):
            raise UsageError(f"{opts.completions}: line {n}: is_correct must be true or false")
        entries.append((n, row, completion_of(obj, opts.completions, n), label))
    scores = env.score_sync([(e[1], e[2]) for e in entries], opts.timeout, opts.concurrency)
    totals = [s.total for s in scores if isinstance(s.total, (int, float)) and math.isfinite(s.total)]
    fn = rp.correctness_function(env.reward_functions)
    dist = {"n": len(scores)}
    if totals:
        dist |= {
            "mean": round(statistics.fmean(totals), 4),
            "std": round(statistics.pstdev(totals), 4),
            "min": min(totals),
            "max": max(totals),
            "histogram": _histogram(totals),
            "distinct": len({round(t, 9) for t in totals}),
        }
    dist["functions"] = {
        f.name: round(statistics.fmean(vals), 4)
        if (
            vals := [
                v for s in scores if isinstance(v := s.per_function.get(f.name), (int, float)) and math.isfinite(v)
            ]
        )
        else None
        for f in env.reward_functions
    }
    result.data["completions"] = dist
    if totals and len({round(t, 9) for t in totals}) == 1:
        result.warn(
            "completion_rewards",
            f"all {len(totals)} real completions got the same reward {fmt(totals[0])}",
            "a constant reward gives no learning signal (GRPO advantages are all zero)",
        )
    else:
        result.passed(
            "completion_rewards",
            f"{len(scores)} real completions scored: mean {fmt(dist.get('mean'))}, "
            f"range {fmt(dist.get('min'))}..{fmt(dist.get('max'))}",
        )
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
            disagree.append(
                {
                    "line": n,
                    "example_id": row.index,
                    "label": label,
                    "reward": v,
                    "total": s.total,
                    "completion": clip(str(text), 200),
                }
            )
    agreement = 1 - len(disagree) / len(labelled)
    result.data["label_agreement"] = {
        "labelled": len(labelled),
        "agreement": round(agreement, 4),
        "function": fn or "total",
        "threshold": threshold,
        "disagreeing": disagree[:20],
    }
    msg = f"reward agrees with the human label on {agreement:.0%} of {len(labelled)} labelled completions ({fn or 'total'} >= {threshold:g} counts as correct)"
    if agreement < opts.min_agreement:
        fp = sum(1 for d in disagree if not d["label"])
        result.fail(
            "label_agreement",
            msg + f"; {fp} rewarded but wrong, {len(disagree) - fp} correct but not rewarded",
            "the disagreeing rows are listed above (data.label_agreement.disagreeing with --json)",
        )
        result.step(
            "look at the completions where reward and label disagree (they show what the parser misses or accepts)"
        )
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
    return [
        {"from": round(lo + i * width, 4), "to": round(lo + (i + 1) * width, 4), "count": c}
        for i, c in enumerate(counts)
    ]


def _range(lo: float, hi: float) -> str:
    lo, hi = lo + rp.EPS, hi - rp.EPS
    return fmt(lo) if abs(hi - lo) < 1e-9 else f"[{fmt(lo)}, {fmt(hi)}]"


# -- user files ------------------------------------------------------------------------


def read_jsonl(path: str, what: str) -> list[dict]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} file not found: {path}")
    rows = []
    try:
        with open_binary(p) as f:  # gzip-compressed files too
            data = f.read()
    except (OSError, EOFError) as err:
        raise UsageError(f"cannot read {what} file {path}: {getattr(err, 'strerror', None) or err}") from None
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise UsageError(
                f"{path}:{n}: not UTF-8 (byte {err.start} of the line)", hint="re-save it as UTF-8"
            ) from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except RecursionError:
            raise UsageError(f"{path}:{n}: JSON nested too deeply to read") from None
        except json.JSONDecodeError as err:
            raise UsageError(
                f"{path}:{n}: not valid JSON ({err.msg})", hint=f"{what} files hold one JSON object per line"
            ) from err
        if not isinstance(obj, dict):
            raise UsageError(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
        rows.append(obj)
    if not rows:
        raise UsageError(f"{what} file is empty: {path}")
    return rows


def completion_of(obj: dict, path: str, n: int) -> Any:
    completion = obj.get("completion")
    if completion is None:
        raise UsageError(f"{path}: line {n} has no 'completion' (text or a list of messages)")
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and all(isinstance(m, dict) and "role" in m for m in completion):
        return completion
    raise UsageError(f"{path}: line {n}: 'completion' must be text or a list of chat messages")


class RowFinder:
    """Find a dataset row by example_id or by its question/prompt text."""

    def __init__(self, env) -> None:
        self.env = env
        self._by_text: dict[str, int] | None = None

    def find(self, obj: dict, path: str, n: int) -> Row:
        for key in ("example_id", "id", "row"):
            if key in obj and obj[key] is not None:
                idx = obj[key]
                if not isinstance(idx, int) or isinstance(idx, bool):
                    raise UsageError(f"{path}: line {n}: {key} must be an integer row index")
                if not 0 <= idx < self.env.num_rows():
                    raise UsageError(
                        f"{path}: line {n}: {key} {idx} is out of range (dataset has {self.env.num_rows()} rows)"
                    )
                return self.env.row(idx)
        text = obj.get("question") or obj.get("prompt")
        if isinstance(text, list):
            text = next(
                (m.get("content") for m in reversed(text) if isinstance(m, dict) and m.get("role") == "user"), None
            )
        if not isinstance(text, str):
            raise UsageError(f"{path}: line {n} needs example_id or the row's question/prompt text")
        if self._by_text is None:
            self._by_text = {r.question.strip(): r.index for r in self.env.rows(-1)}
        idx = self._by_text.get(text.strip())
        if idx is None:
            raise UsageError(f"{path}: line {n}: no dataset row has this question: {text[:80]!r}")
        return self.env.row(idx)


def expected_range(obj: dict, path: str, n: int) -> tuple[float, float]:
    exp = obj.get("expected", obj.get("expected_reward"))
    lo, hi = obj.get("min"), obj.get("max")
    if isinstance(exp, (int, float)) and not isinstance(exp, bool):
        return float(exp) - rp.EPS, float(exp) + rp.EPS
    if isinstance(exp, list) and len(exp) == 2 and all(isinstance(v, (int, float)) for v in exp):
        return float(exp[0]) - rp.EPS, float(exp[1]) + rp.EPS
    if isinstance(lo, (int, float)) or isinstance(hi, (int, float)):
        return (float(lo) if lo is not None else -math.inf) - rp.EPS, (
            float(hi) if hi is not None else math.inf
        ) + rp.EPS
    raise UsageError(f"{path}: line {n}: give 'expected' (a number or [min, max]) or 'min'/'max'")
