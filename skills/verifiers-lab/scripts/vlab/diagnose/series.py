"""One normalised series of training steps, whatever wrote the metrics.

Each source names its metrics its own way; ``ALIASES`` maps every canonical field to the
keys local_train, prime-rl (current and 2025 names), Hosted Training and W&B exports use.
``from_rows`` merges rows by step (prime-rl's trainer and orchestrator append separate rows
for one step to the same ``metrics.jsonl``), keeps the last value of each key per step, and
records every non-finite value (NaN, inf, or the strings W&B and JSON writers use for them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlab.catalog import JUDGE_ERROR_METRIC

# A prime-rl agent name in the orchestrator's `train/agg/<subset>/<agent>/<metric>/<stat>` keys.
_AGENT = r"[^/]+"

# canonical field -> candidate keys, best first; a string is an exact key, re.Pattern a pattern.
ALIASES: dict[str, list[str | re.Pattern]] = {
    "reward_mean": [
        "reward_mean",  # local_train
        re.compile(rf"^train/agg/all/{_AGENT}/reward/mean$"),  # prime-rl (2026)
        "reward/all/mean",  # prime-rl (2025), older Hosted Training
        "reward/mean",
        "train/reward",
    ],
    "reward_std": ["reward_std", "reward/all/std", "reward/std"],
    "reward_p10": [re.compile(rf"^train/agg/all/{_AGENT}/reward/p10$")],
    "reward_p90": [re.compile(rf"^train/agg/all/{_AGENT}/reward/p90$")],
    "reward_min": [re.compile(rf"^train/agg/all/{_AGENT}/reward/min$"), "reward/all/min"],
    "reward_max": [re.compile(rf"^train/agg/all/{_AGENT}/reward/max$"), "reward/all/max"],
    "zero_adv_frac": ["zero_adv_group_frac"],
    "solved_none": [re.compile(rf"^train/agg/all/{_AGENT}/solved_none$"), "solve_none/all", "solved_none_frac"],
    "solved_all": [re.compile(rf"^train/agg/all/{_AGENT}/solved_all$"), "solve_all/all", "solved_all_frac"],
    "truncated_frac": [
        "truncated_frac",
        re.compile(rf"^train/agg/all/{_AGENT}/is_truncated/mean$"),
        "is_truncated/all/mean",
    ],
    "turn_limited_frac": ["turn_limited_frac"],  # local_train: rollouts the turn limit ended before they were over
    # prime-rl's orchestrator (src/prime_rl/orchestrator/metrics.py, TraceMetrics.stop_conditions) logs each
    # trace stop condition's share as train/agg/<subset>/<agent>/stop_condition/<name>, only for the names seen
    # that step. v1 0.4.0: the agent's max_turns refuses the next turn ("max_turns", verifiers/v1/session.py
    # RolloutLimits); a task's own turn stop is its @vf.stop's name; classic envs (prime-rl <= 0.8.0 legacy
    # blocks) record max_turns_reached, also after a single-turn reply (hence num_turns_max). Summed in _derive.
    "stop_max_turns": [re.compile(rf"^train/agg/all/{_AGENT}/stop_condition/max_turns$")],
    "stop_turn_other": [re.compile(rf"^train/agg/all/{_AGENT}/stop_condition/(?!max_turns$)[^/]*turn[^/]*$")],
    "num_turns_max": [re.compile(rf"^train/agg/all/{_AGENT}/num_turns/max$")],
    "num_turns_min": [re.compile(rf"^train/agg/all/{_AGENT}/num_turns/min$")],
    "completion_len": [
        "completion_len_mean",
        re.compile(rf"^train/agg/all/{_AGENT}/num_output_tokens/mean$"),
        "train/agg/all/num_output_tokens/mean",
        "seq_len/all/mean",
    ],
    "entropy": ["entropy", "entropy/all/mean", "entropy/mean"],
    "grad_norm": ["grad_norm", "optim/grad_norm"],
    "loss": ["loss", "loss/mean", "loss/all/mean"],
    "lr": ["lr", "optim/lr"],
    "kl": ["kl", "mismatch_kl/all/mean", "mismatch_kl/mean"],
    "error_frac": [
        re.compile(rf"^train/agg/all/{_AGENT}/has_error/mean$"),
        "train/agg/all/has_error/mean",
        "error/all/mean",
    ],
    "errors": ["errors"],
    # the judge templates' judge_error metric (vlab.catalog.JUDGE_ERROR_METRIC): rollouts whose judge failed
    "judge_error_frac": [
        "judge_error_frac",  # local_train
        f"metrics/{JUDGE_ERROR_METRIC}/mean",  # local_train's per-metric mean
        re.compile(
            rf"^train/agg/all/{_AGENT}/metrics/{JUDGE_ERROR_METRIC}/mean$"
        ),  # prime-rl: every rollout, errored too
        re.compile(rf"^train/[^/]+/all/{_AGENT}/metrics/{JUDGE_ERROR_METRIC}/mean$"),  # prime-rl, per environment
        re.compile(rf"^train/agg/effective/{_AGENT}/metrics/{JUDGE_ERROR_METRIC}/mean$"),
    ],
    "rollouts": ["num_rollouts", "progress/rollouts"],
    "tokens_per_s": ["gen_tokens_per_s", "perf/throughput"],
    "step_time": ["time/step"],
    "gen_s": ["gen_s"],
    "train_s": ["train_s"],
    "off_policy": ["off_policy/mean", "off_policy_level/all/mean"],
    "eval_reward": [
        "eval/reward_mean",
        re.compile(rf"^eval/[^/]+/effective/{_AGENT}/reward/mean$"),
        re.compile(rf"^eval/[^/]+/all/{_AGENT}/reward/mean$"),
        re.compile(r"^eval/[^/]+/avg@\d+$"),
    ],
}

# Fields whose non-finite values are a failure signature of their own.
WATCHED_FINITE = ("reward_mean", "loss", "grad_norm", "entropy", "kl")

STEP_KEYS = ("step", "_step", "Step", "trainer/step", "global_step")
_NONFINITE_TEXT = {"nan", "-nan", "inf", "-inf", "infinity", "-infinity", "+inf"}


@dataclass
class Series:
    """Columns of floats (NaN where a step has no value) indexed by ``steps``."""

    source: str  # local-train | prime-rl | hosted | wandb | hosted-export
    where: str  # the path or run id it was read from
    steps: np.ndarray
    cols: dict[str, np.ndarray] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # canonical field -> the key it was read from
    nonfinite: dict[str, list[int]] = field(default_factory=dict)  # field -> steps with NaN/inf
    info: dict[str, Any] = field(default_factory=dict)  # run facts: group_size, batch_size, max_steps, status

    def __len__(self) -> int:
        return int(self.steps.size)

    def has(self, name: str) -> bool:
        col = self.cols.get(name)
        return col is not None and bool(np.isfinite(col).any())

    def col(self, name: str) -> np.ndarray:
        return self.cols.get(name, np.full(self.steps.size, np.nan))

    def last_step(self) -> int | None:
        return int(self.steps[-1]) if self.steps.size else None

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "where": self.where,
            "steps": len(self),
            "first_step": int(self.steps[0]) if self.steps.size else None,
            "last_step": self.last_step(),
            "fields": {name: self.keys.get(name, "(derived)") for name in sorted(self.cols) if self.has(name)},
            "info": self.info,
        }


def resolve_keys(all_keys: Iterable[str]) -> dict[str, str]:
    """canonical field -> the first key present, in ALIASES order (patterns: the alphabetically first match)."""
    keys = set(all_keys)
    out: dict[str, str] = {}
    for name, candidates in ALIASES.items():
        for cand in candidates:
            if isinstance(cand, str):
                if cand in keys:
                    out[name] = cand
                    break
            else:
                hits = sorted(k for k in keys if cand.match(k))
                if hits:
                    # prefer the single-agent default name prime-rl uses
                    out[name] = next((h for h in hits if "/agent/" in h), hits[0])
                    break
    return out


def as_float(value: Any) -> float | None:
    """A metric value as a float; None when missing or not a number. NaN/inf (and their strings) stay non-finite."""
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _NONFINITE_TEXT:
            return math.nan if "nan" in text else (-math.inf if text.startswith("-") else math.inf)
        try:
            return float(text)
        except ValueError:
            return None
    return None


def step_of(row: dict) -> int | None:
    for key in STEP_KEYS:
        v = row.get(key)
        if v is not None:
            f = as_float(v)
            if f is not None and math.isfinite(f):
                return int(f)
    return None


def from_rows(rows: list[dict], source: str, where: str, info: dict | None = None) -> Series:
    """Merge rows into one series: one entry per step, the last value of each key winning."""
    rows = [r for r in rows if isinstance(r, dict)]
    stepped = [(s, r) for r in rows if (s := step_of(r)) is not None]
    if not stepped:  # no step column: the row order is the step
        stepped = [(i + 1, r) for i, r in enumerate(rows)]
    all_keys: set[str] = set()
    for _, r in stepped:
        all_keys.update(r.keys())
    keymap = resolve_keys(all_keys)
    unique = sorted({s for s, _ in stepped})
    n = len(unique)
    monotone = len(unique) == len(stepped) and all(stepped[i][0] < stepped[i + 1][0] for i in range(n - 1))
    index = None if monotone else {s: i for i, s in enumerate(unique)}
    pairs = list(keymap.items())
    raw: dict[str, list] = {name: [None] * n for name, _ in pairs}
    for pos, (s, r) in enumerate(stepped):
        i = pos if index is None else index[s]
        for name, key in pairs:
            v = r.get(key)
            if v is not None:
                raw[name][i] = v
    series = Series(source, where, np.asarray(unique, dtype=np.int64), keys=dict(keymap), info=dict(info or {}))
    for name, values in raw.items():
        col = _column(values)
        series.cols[name] = col
        # non-finite = a value that was there and is NaN/inf; None (missing) is not one
        bad = [
            i for i in np.flatnonzero(~np.isfinite(col)) if values[i] is not None and as_float(values[i]) is not None
        ]
        if bad:
            series.nonfinite[name] = [int(series.steps[i]) for i in bad]
    _derive(series)
    return series


def _sample_lines(data: bytes, chunk: int = 1 << 18) -> list[bytes]:
    """Whole lines from the start, the end and 8 evenly spread places of the file (to learn its keys)."""
    n = len(data)
    if n <= 12 * chunk:
        return data.split(b"\n")
    out: list[bytes] = []
    for start in [0, *np.linspace(chunk, n - 2 * chunk, 8).astype(int).tolist(), n - chunk]:
        part = data[start : start + chunk].split(b"\n")
        out += part[1:-1] if start else part[:-1]  # drop the cut lines at both ends
    return out


def from_jsonl_bytes(data: bytes, source: str, where: str, info: dict | None = None) -> Series | None:
    """The fast path for large JSON Lines files: learn the keys from a sample of lines, then let msgspec
    decode only those keys into typed rows (unknown keys are skipped in C). None when the file needs the
    tolerant path (NaN literals, strings where numbers belong, a broken or blank line, no step key)."""
    try:
        import msgspec
    except ImportError:
        return None
    if not data or b"\n\n" in data or b"\r" in data or not hasattr(msgspec.json.Decoder, "decode_lines"):
        return None
    try:
        sample = msgspec.json.decode(b"[" + b",".join(x for x in _sample_lines(data) if x.strip()) + b"]")
    except msgspec.DecodeError:
        return None
    keys: set[str] = set()
    for row in sample:
        if isinstance(row, dict):
            keys.update(row.keys())
    at = data.find(b'"eval/')  # eval rows are rare: make sure the sample has one
    if at >= 0 and not any(k.startswith("eval/") for k in keys):
        line = data[data.rfind(b"\n", 0, at) + 1 : (data.find(b"\n", at) + 1 or len(data) + 1) - 1]
        try:
            keys.update(msgspec.json.decode(line).keys())
        except (msgspec.DecodeError, AttributeError):
            return None
    step_key = next((k for k in STEP_KEYS if k in keys), None)
    if step_key is None:
        return None
    keymap = resolve_keys(keys)
    names = list(keymap)
    fields = [("f_step", float | None, None)] + [(f"f{i}", float | None, None) for i in range(len(names))]
    rename = {"f_step": step_key, **{f"f{i}": keymap[name] for i, name in enumerate(names)}}
    Row = msgspec.defstruct("Row", fields, rename=rename, gc=False)
    import gc
    from operator import attrgetter

    enabled = gc.isenabled()
    gc.disable()  # 100,000s of small objects: the collector would walk them again and again
    try:
        rows = msgspec.json.Decoder(Row).decode_lines(data)  # no copy of the file
        table = np.array(list(map(attrgetter("f_step", *(f"f{i}" for i in range(len(names)))), rows)), dtype=float)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    finally:
        if enabled:
            gc.enable()
    table = table.reshape(len(rows), len(names) + 1)
    ok = np.isfinite(table[:, 0])
    steps_all = table[ok, 0].astype(np.int64)
    unique, inverse = np.unique(steps_all, return_inverse=True)
    series = Series(source, where, unique, keys=dict(keymap), info=dict(info or {}))
    for i, name in enumerate(names):
        col = table[ok, i + 1]
        out = np.full(unique.size, np.nan)
        has = ~np.isnan(col)
        out[inverse[has]] = col[has]  # repeated steps: the later row wins
        series.cols[name] = out
    _derive(series)
    return series


def _column(values: list) -> np.ndarray:
    try:
        return np.array(values, dtype=float)  # None -> nan; fast path for plain numbers
    except (TypeError, ValueError):
        return np.array([math.nan if (f := as_float(v)) is None else f for v in values], dtype=float)


def _derive(s: Series) -> None:
    """Fields computed from others when the source has no direct key."""
    if not s.has("turn_limited_frac") and (s.has("stop_max_turns") or s.has("stop_turn_other")):
        _turn_stops(s)
    if not s.has("zero_adv_frac") and s.has("solved_none") and s.has("solved_all"):
        s.cols["zero_adv_frac"] = s.col("solved_none") + s.col("solved_all")
        s.keys["zero_adv_frac"] = f"{s.keys['solved_none']} + {s.keys['solved_all']}"
    if s.has("zero_adv_frac") and s.has("solved_all"):  # groups without signal the model does not solve every time
        s.cols["zero_adv_unsolved"] = np.clip(s.col("zero_adv_frac") - s.col("solved_all"), 0.0, 1.0)
        s.keys["zero_adv_unsolved"] = f"{s.keys['zero_adv_frac']} - {s.keys['solved_all']}"
    if not s.has("error_frac") and s.has("errors") and s.has("rollouts"):
        with np.errstate(divide="ignore", invalid="ignore"):
            s.cols["error_frac"] = s.col("errors") / s.col("rollouts")
        s.keys["error_frac"] = "errors / num_rollouts"
    if not s.has("step_time") and s.has("gen_s"):
        s.cols["step_time"] = s.col("gen_s") + np.nan_to_num(s.col("train_s"))
        s.keys["step_time"] = "gen_s + train_s"
    if not s.has("reward_std") and s.has("reward_p10") and s.has("reward_p90"):
        # normal approximation; the noise model takes the larger of this and a Bernoulli bound
        s.cols["reward_std"] = (s.col("reward_p90") - s.col("reward_p10")) / 2.563
        s.keys["reward_std"] = "(p90 - p10) / 2.563"


def _turn_stops(s: Series) -> None:
    """prime-rl's turn-limit stop shares as ``turn_limited_frac``: a step that logged rewards but not a
    stop name had none of it (0); a classic ``max_turns_reached`` at steps whose rollouts all took one
    turn is a single-turn environment's normal stop, and on every rollout with the same number of turns
    a conversation of fixed length (as check_reward_distribution reads it): neither is a turn limit."""
    parts, keys = [], []
    for name in ("stop_max_turns", "stop_turn_other"):
        if not s.has(name):
            continue
        col = np.nan_to_num(s.col(name).astype(float), nan=0.0)
        key = s.keys[name]
        if key.endswith("max_turns_reached") and s.has("num_turns_max"):
            most, least = s.col("num_turns_max"), s.col("num_turns_min")
            fixed = (col >= 0.999) & (least == most)  # every rollout ran the same turns to the limit: fixed length
            col = np.where((most > 1) & ~fixed, col, 0.0)
        parts.append(col)
        keys.append(key)
    total = np.sum(parts, axis=0)
    if s.has("reward_mean"):
        total = np.where(np.isfinite(s.col("reward_mean")), total, np.nan)
    s.cols["turn_limited_frac"] = np.clip(total, 0.0, 1.0)
    s.keys["turn_limited_frac"] = " + ".join(keys)
