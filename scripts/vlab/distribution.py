"""Will training on these eval results teach the model anything?

``collect()`` streams rollouts (from ``vlab.evalfiles``) into compact columns, ``analyse()``
turns them into figures (counts, reward statistics per function, GRPO group signal, pass@k,
per-example pass rates), ``judge()`` turns figures into verdicts with explained thresholds,
and ``recommend()`` into prime-rl settings named by their current keys (older names in
brackets). GRPO learns only from groups whose rewards differ, so group signal decides.
"""

from __future__ import annotations

import math
import os
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from . import evalfiles
from .evalfiles import EvalSource, ReadStats, Rollout
from .result import Result, UsageError

QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
HIST_BINS = 10
GROUP_SIZES = (4, 8, 16, 32)  # orchestrator.group_size candidates
DEFAULT_BATCH = 128  # prime-rl orchestrator.batch_size default
_EPS = 1e-9

# Name hints: which function looks like correctness, which like format or shaping, which is a metric.
_CORRECT_HINTS = ("correct", "accura", "exact", "match", "answer", "solve", "pass", "success", "equal", "judge",
                  "score")
_FORMAT_HINTS = ("format", "xml", "tag", "think", "parse", "style", "structure", "boxed", "syntax")
_METRIC_HINTS = ("num_", "turns", "calls", "chars", "tokens", "length", "time", "latency", "count", "steps")


@dataclass
class Thresholds:
    min_rollouts: int = 32
    min_examples: int = 8
    pass_threshold: float = 0.5
    failed_share: float = 0.5
    warn_failed_share: float = 0.05
    too_easy: float = 0.9
    min_signal: float = 0.2
    near_empty_chars: int = 3
    max_truncated: float = 0.1
    max_malformed: float = 0.05
    max_bad_rewards: float = 0.05

    def validate(self) -> None:
        for name in ("failed_share", "warn_failed_share", "too_easy", "min_signal", "max_truncated", "max_malformed",
                     "max_bad_rewards"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"--{name.replace('_', '-')} must be between 0 and 1 (got {value})")
        if self.min_rollouts < 1 or self.min_examples < 1 or self.near_empty_chars < 0:
            raise UsageError("--min-rollouts and --min-examples must be >= 1, --near-empty-chars >= 0")


# -- collection --------------------------------------------------------------------


class Columns:
    """Rollouts as compact columns: ~38 bytes a rollout plus 8 per reward function."""

    def __init__(self) -> None:
        self.example_codes: dict[Any, int] = {}
        # Fast-path batches of integer ids store the ids themselves (no per-row interning).
        self.raw_int_examples = True
        self.prompt_codes: dict[int, int] = {}
        self.example = array("q")
        self.prompt = array("i")
        self.reward = array("d")
        self.errored = array("b")
        self.truncated = array("b")
        self.chars = array("i")
        self.tool_calls = array("i")
        self.row_key = array("q")
        self.fn_cols: dict[str, array] = {}
        self.metric_cols: dict[str, array] = {}
        self.weights: dict[str, float] = {}
        self.weights_changed: set[str] = set()
        self.reward_issues: Counter = Counter()
        self.issue_lines: dict[str, list[int]] = {}
        self.error_kinds: Counter = Counter()
        self.missing_example = 0
        self.n = 0

    def _stop_raw_int_examples(self) -> None:
        """Switch from raw integer ids to interned codes (a file mixing id types)."""
        if self.raw_int_examples:
            self.raw_int_examples = False
            codes = self.example_codes
            self.example = array("q", [codes.setdefault(e, len(codes)) for e in self.example])

    def example_group_codes(self) -> np.ndarray:
        """Dense group codes 0..k-1 for the example column."""
        ex = np.frombuffer(self.example, dtype=np.int64) if len(self.example) else np.zeros(0, dtype=np.int64)
        if self.raw_int_examples and ex.size:
            return np.unique(ex, return_inverse=True)[1].astype(np.int64)
        return ex

    def add(self, r: Rollout) -> None:
        self._stop_raw_int_examples()
        n = self.n
        ex = r.example
        if ex is None:  # no id: this row is its own group
            self.missing_example += 1
            ex = ("row", n)
        code = self.example_codes.get(ex)
        if code is None:
            code = self.example_codes[ex] = len(self.example_codes)
        self.example.append(code)
        if r.prompt_key is not None:
            pc = self.prompt_codes.get(r.prompt_key)
            if pc is None:
                pc = self.prompt_codes[r.prompt_key] = len(self.prompt_codes)
            self.prompt.append(pc)
        else:
            self.prompt.append(-1)
        if r.reward is None:
            self.reward.append(math.nan)
            if r.error is None:  # an errored rollout without a reward is a generation failure
                self.reward_issues[r.reward_issue] += 1
                lines = self.issue_lines.setdefault(r.reward_issue, [])
                if len(lines) < 5:
                    lines.append(r.line)
        else:
            self.reward.append(r.reward)
        if r.error is not None:
            self.errored.append(1)
            if len(self.error_kinds) < 50 or r.error.split(":")[0] in self.error_kinds:
                self.error_kinds[r.error.split(":")[0]] += 1
        else:
            self.errored.append(0)
        self.truncated.append(1 if r.truncated else 0)
        self.chars.append(-1 if r.completion_chars is None else r.completion_chars)
        self.tool_calls.append(r.tool_calls)
        self.row_key.append(r.row_key or 0)
        _append_named(self.fn_cols, r.scores, n)
        if r.metrics or self.metric_cols:
            _append_named(self.metric_cols, r.metrics, n)
        if r.weights:
            for name, w in r.weights.items():
                old = self.weights.setdefault(name, w)
                if old != w:
                    self.weights_changed.add(name)
        self.n = n + 1


    def add_batch(self, b: evalfiles.ClassicBatch) -> None:
        """Columns of a fast-path batch; the same result as add() row by row."""
        m = len(b.reward)
        n0 = self.n
        if None in b.example:
            example = [("row", n0 + i) if e is None else e for i, e in enumerate(b.example)]
            self.missing_example += sum(1 for e in b.example if e is None)
        else:
            example = b.example
        if self.raw_int_examples and evalfiles._only(example, int):
            self.example.extend(example)  # integer ids are kept as they are and coded once at the end
        else:
            self._stop_raw_int_examples()
            codes = self.example_codes
            setdefault = codes.setdefault
            self.example.extend([setdefault(e, len(codes)) for e in example])
        if b.prompt_key is None:
            self.prompt.extend(array("i", [-1]) * m)
        else:
            pcodes = self.prompt_codes
            psd = pcodes.setdefault
            self.prompt.extend([-1 if k is None else psd(k, len(pcodes)) for k in b.prompt_key])
        if b.issues:
            self.reward.extend([math.nan if v is None else v for v in b.reward])
            for i, issue in b.issues:
                if b.error[i] is None:
                    self.reward_issues[issue] += 1
                    lines = self.issue_lines.setdefault(issue, [])
                    if len(lines) < 5:
                        lines.append(b.first_line + i)
        else:
            self.reward.extend(b.reward)
        self.errored.extend([e is not None for e in b.error])
        for e in b.error:
            if e is not None:
                kind = e.split(":")[0]
                if len(self.error_kinds) < 50 or kind in self.error_kinds:
                    self.error_kinds[kind] += 1
        self.truncated.extend(b.truncated)
        self.chars.extend([-1 if c is None else c for c in b.chars])
        self.tool_calls.extend(b.tool_calls)
        self.row_key.extend(b.row_key)
        cols = self.fn_cols
        for name, col in cols.items():
            values = b.scores.get(name)
            col.extend(values if values is not None else array("d", [math.nan]) * m)
        for name, values in b.scores.items():
            if name not in cols:
                col = array("d", [math.nan]) * n0
                col.extend(values)
                cols[name] = col
        if self.metric_cols:
            for col in self.metric_cols.values():
                col.extend(array("d", [math.nan]) * m)
        self.n = n0 + m


    def merge(self, part: "Columns", line_offset: int) -> None:
        """Append the columns of the next part of the file (collected in another process)."""
        n0 = self.n
        if self.raw_int_examples and part.raw_int_examples:
            self.example.extend(part.example)
        else:
            self._stop_raw_int_examples()
            part._stop_raw_int_examples()
            remap = array("q", [0]) * len(part.example_codes)
            codes = self.example_codes
            for key, code in part.example_codes.items():
                if isinstance(key, tuple) and key[:1] == ("row",):  # rows without an id stay unique
                    key = ("row", key[1] + n0)
                remap[code] = codes.setdefault(key, len(codes))
            self.example.extend(array("q", [remap[c] for c in part.example]))
        premap = {code: self.prompt_codes.setdefault(key, len(self.prompt_codes))
                  for key, code in part.prompt_codes.items()}
        self.prompt.extend(array("i", [premap[c] if c >= 0 else -1 for c in part.prompt]) if premap else part.prompt)
        for name in ("reward", "errored", "truncated", "chars", "tool_calls", "row_key"):
            getattr(self, name).extend(getattr(part, name))
        m = part.n
        for name, col in self.fn_cols.items():
            col.extend(part.fn_cols.get(name, array("d", [math.nan]) * m))
        for name, col in part.fn_cols.items():
            if name not in self.fn_cols:
                self.fn_cols[name] = array("d", [math.nan]) * n0 + col
        self.reward_issues.update(part.reward_issues)
        for issue, lines in part.issue_lines.items():
            mine = self.issue_lines.setdefault(issue, [])
            mine.extend(n + line_offset for n in lines[: 5 - len(mine)])
        self.error_kinds.update(part.error_kinds)
        self.missing_example += part.missing_example
        self.n = n0 + m


def _append_named(cols: dict[str, array], values: dict[str, float], n: int) -> None:
    for name, col in cols.items():
        col.append(values.get(name, math.nan))
    if len(values) > len(cols) or any(name not in cols for name in values):
        for name, value in values.items():
            if name not in cols:
                col = array("d", [math.nan]) * n
                col.append(value)
                cols[name] = col


# Files this large are read by several processes at once (one byte range each).
PARALLEL_MIN_BYTES = 64 << 20


def _collect_range(source: EvalSource, byte_range: tuple[int, int] | None,
                   chunk_bytes: int = 1 << 22) -> tuple[Columns, ReadStats]:
    cols, stats = Columns(), ReadStats()
    for item in evalfiles.iter_classic_batches(source, stats, chunk_bytes, byte_range):
        if isinstance(item, list):
            for r in item:
                cols.add(r)
        else:
            cols.add_batch(item)
    return cols, stats


def _collect_parallel(source: EvalSource, stats: ReadStats, workers: int) -> Columns | None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ranges = evalfiles.split_ranges(source.path, workers)
    if len(ranges) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    cols, merged = Columns(), ReadStats()
    try:
        with ProcessPoolExecutor(len(ranges), mp_context=multiprocessing.get_context("fork")) as pool:
            # parts arrive in file order; each is merged and dropped at once to bound memory
            for part_cols, part_stats in pool.map(_collect_range, [source] * len(ranges), ranges):
                offset = merged.lines
                cols.merge(part_cols, offset)
                merged.merge(part_stats, offset)
                del part_cols
    except (OSError, RuntimeError):  # no processes on this system: read serially
        return None
    stats.merge(merged, 0)
    return cols


def collect(source: EvalSource, stats: ReadStats | None = None, rollouts: Iterable[Rollout] | None = None,
            workers: int | None = None) -> Columns:
    """Columns of every rollout. Classic shapes take the fast column path (in parallel for
    large files: ``workers`` processes, default one per CPU up to 4)."""
    cols = Columns()
    add = cols.add
    stats = stats if stats is not None else ReadStats()
    if rollouts is None and evalfiles.msgspec is not None and source.shape in (
            evalfiles.CLASSIC, evalfiles.CLASSIC_2025, evalfiles.PLAIN):
        if workers is None:
            big = source.path.stat().st_size >= PARALLEL_MIN_BYTES
            workers = min(4, os.cpu_count() or 1) if big else 1
        if workers > 1:
            parallel = _collect_parallel(source, stats, workers)
            if parallel is not None:
                return parallel
        part_cols, part_stats = _collect_range(source, None)
        stats.merge(part_stats, 0)
        return part_cols
    for r in rollouts if rollouts is not None else evalfiles.iter_rollouts(source, stats):
        add(r)
    return cols


# -- analysis ----------------------------------------------------------------------


def _np(a: array, dtype) -> np.ndarray:
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype=dtype)


def _r(x: float | None, nd: int = 4) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), nd)


def describe(values: np.ndarray) -> dict[str, Any]:
    """mean, std, quantiles and a histogram of the finite values."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return {"count": 0}
    lo, hi = float(v.min()), float(v.max())
    spread = hi > lo
    counts, edges = np.histogram(v, bins=HIST_BINS if spread else 1, range=(lo, hi) if spread else (lo - 0.5, lo + 0.5))
    qs = np.quantile(v, QUANTILES)
    uniq = np.unique(v[: 200_000]) if v.size > 200_000 else np.unique(v)
    binary = bool(np.all((v == 0) | (v == 1)))
    return {
        "count": int(v.size),
        "mean": _r(v.mean()),
        "std": _r(v.std()),
        "min": _r(lo),
        "max": _r(hi),
        "quantiles": {f"p{int(q * 100)}": _r(x) for q, x in zip(QUANTILES, qs)},
        "histogram": {"edges": [_r(e) for e in edges], "counts": [int(c) for c in counts]},
        "binary": binary,
        "distinct_values": int(uniq.size) if uniq.size < 1000 else ">=1000",
        "share_nonzero": _r(float(np.mean(v != 0))),
    }


def _infer_weights(fn: dict[str, np.ndarray], reward: np.ndarray) -> tuple[dict[str, float | None], bool]:
    """Least-squares weights of reward = sum(w * score), with the ones the data cannot
    separate (constant or collinear columns) reported as None. Returns (weights, exact)."""
    names = list(fn)
    if not names:
        return {}, False
    # 200,000 rows determine a handful of weights; never copy every row
    X = np.column_stack([fn[n][:200_000] for n in names])
    y = reward[:200_000]
    ok = np.isfinite(y) & np.all(np.isfinite(X), axis=1)
    X, y = X[ok], y[ok]
    if y.size == 0:
        return {n: None for n in names}, False
    w, _, rank, sv = np.linalg.lstsq(X, y, rcond=None)
    exact = bool(np.max(np.abs(X @ w - y)) < 1e-6)
    if not exact:
        return {n: None for n in names}, False
    # A weight is identifiable when its axis has no component in X's null space.
    # via the small Gram matrix (k x k), never the n x n factor of X
    _, s, vt = np.linalg.svd(X.T @ X)
    tol = max(X.shape) * (s[0] if s.size else 0) * 1e-12
    null = vt[int(np.sum(s > tol)):]
    out = {}
    for i, n in enumerate(names):
        identifiable = null.shape[0] == 0 or float(np.max(np.abs(null[:, i]))) < 1e-8
        out[n] = _r(w[i]) if identifiable else None
    return out, True


def _kind(name: str, stats: dict, weight: float | None, role: str) -> str:
    low = name.lower()
    if role == "metric" or (weight is not None and abs(weight) < 1e-9):
        return "metric"
    if stats.get("count", 0) and ((stats["max"] or 0) > 1 + 1e-9 or (stats["min"] or 0) < -1e-9):
        if weight is None:
            return "metric"  # counts and timings live outside [0, 1]
    if any(h in low for h in _FORMAT_HINTS):
        return "format"
    if weight is None and any(h in low for h in _METRIC_HINTS) and not any(h in low for h in _CORRECT_HINTS):
        return "metric"
    if stats.get("binary") and (weight is None or abs(weight - 1) < 1e-9 or any(h in low for h in _CORRECT_HINTS)):
        return "correctness"
    if any(h in low for h in _CORRECT_HINTS) and stats.get("count", 0) and (stats["max"] or 0) <= 1:
        return "correctness"
    return "shaping"


def _pick_correctness(functions: dict[str, dict]) -> str | None:
    cands = [n for n, f in functions.items() if f["kind"] == "correctness"]
    if not cands:
        return None
    def rank(n: str):
        f = functions[n]
        hint = any(h in n.lower() for h in _CORRECT_HINTS)
        return (hint, f["binary"], f.get("weight") or 0)
    return max(cands, key=rank)


def _group_stats(group: np.ndarray, reward: np.ndarray, solved: np.ndarray) -> dict[str, Any]:
    ok = np.isfinite(reward)
    g, r, s = group[ok], reward[ok], solved[ok]
    if g.size == 0:
        return {"groups": 0}
    ng = int(g.max()) + 1
    size = np.bincount(g, minlength=ng)
    present = size > 0
    total = np.bincount(g, weights=r, minlength=ng)
    mean = np.divide(total, size, out=np.zeros(ng), where=present)
    sq = np.bincount(g, weights=(r - mean[g]) ** 2, minlength=ng)
    std = np.sqrt(np.divide(sq, size, out=np.zeros(ng), where=present))
    passes = np.bincount(g, weights=s.astype(float), minlength=ng)
    multi = size >= 2
    sizes = Counter(size[present].tolist())
    out: dict[str, Any] = {
        "examples": int(present.sum()),
        "rollouts_per_example": {"min": int(size[present].min()), "max": int(size[present].max()),
                                 "most_common": int(sizes.most_common(1)[0][0])},
        "groups": int(multi.sum()),
    }
    pass_rate = np.divide(passes, size, out=np.zeros(ng), where=present)[present]
    out["pass_rate_per_example"] = pass_rate
    if not multi.any():
        return out
    zero = multi & (std <= _EPS)
    all_pass = zero & (passes >= size)
    all_fail = zero & (passes <= 0)
    nonzero_adv = np.abs(r - mean[g]) > _EPS
    in_multi = multi[g]
    out.update(
        zero_variance_share=_r(zero.sum() / multi.sum()),
        all_fail_share=_r(all_fail.sum() / multi.sum()),
        all_pass_share=_r(all_pass.sum() / multi.sum()),
        constant_other_share=_r((zero & ~all_pass & ~all_fail).sum() / multi.sum()),
        mean_within_group_std=_r(std[multi].mean()),
        nonzero_advantage_share=_r(nonzero_adv[in_multi].mean()),
    )
    out["pass_at_k"], out["pass_all_k"] = _pass_at_k(size[multi], passes[multi].astype(int))
    return out


def _pass_at_k(n: np.ndarray, c: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    """Unbiased pass@k = 1 - C(n-c,k)/C(n,k) and pass^k = C(c,k)/C(n,k), k = powers of 2 up to
    the smallest group (as verifiers computes them), averaged over groups."""
    kmax = int(n.min())
    pairs, counts = np.unique(np.stack([n, c]), axis=1, return_counts=True)
    at, allk = {}, {}
    k = 1
    while k <= kmax:
        s_at = s_all = 0.0
        for (ni, ci), m in zip(pairs.T.tolist(), counts.tolist()):
            nk = math.comb(ni, k)
            s_at += m * (1.0 if ni - ci < k else 1.0 - math.comb(ni - ci, k) / nk)
            s_all += m * math.comb(ci, k) / nk
        at[str(k)], allk[str(k)] = _r(s_at / n.size), _r(s_all / n.size)
        k *= 2
    return at, allk


@dataclass
class Analysis:
    source: EvalSource
    stats: ReadStats
    data: dict[str, Any] = field(default_factory=dict)
    pass_rates: np.ndarray | None = None


def analyse(source: EvalSource, cols: Columns, stats: ReadStats, th: Thresholds) -> Analysis:
    n = cols.n
    reward = _np(cols.reward, np.float64)
    example = cols.example_group_codes()
    prompt = _np(cols.prompt, np.int32)
    errored = _np(cols.errored, np.int8).astype(bool)
    truncated = _np(cols.truncated, np.int8).astype(bool)
    chars = _np(cols.chars, np.int32)
    tools = _np(cols.tool_calls, np.int32)
    a = Analysis(source, stats)
    d = a.data
    d["shape"] = source.shape
    d["shape_description"] = source.description
    d["rollout_identity"] = source.has_rollout_identity
    d["file"] = str(source.path)
    d["found_by"] = source.found_by
    if source.other_runs:
        d["other_runs_found"] = source.other_runs
    d["metadata"] = dict(source.metadata)
    if source.metadata_error:
        d["metadata_error"] = source.metadata_error

    # Grouping: ids must identify prompts; 2025 writers numbered ids wrongly.
    group = example
    grouping = "example_id"
    if source.shape == evalfiles.V1_TRACES:
        grouping = "task key"
    if n and (prompt >= 0).all() and len(cols.prompt_codes) > 0:
        pairs = np.unique(np.stack([example, prompt.astype(np.int64)]), axis=1)
        prompts_per_id = np.bincount(pairs[0])
        if prompts_per_id.max() > 1:
            group = prompt
            grouping = "prompt (ids do not identify prompts: %d ids carry several prompts)" % int(
                (prompts_per_id > 1).sum())
    if cols.missing_example:
        grouping = f"none for {cols.missing_example} rows without an example id (each its own group)"
    d["grouping"] = grouping

    # Counts.
    empty = (chars == 0) & (tools == 0)
    near_empty = (chars > 0) & (chars <= th.near_empty_chars) & (tools == 0)
    row_keys = _np(cols.row_key, np.int64)
    duplicates = int(n - np.unique(row_keys).size) if n else 0
    counts = {
        "lines": stats.lines,
        "rollouts": n,
        "examples": int(np.unique(group).size) if n else 0,
        "errored": int(errored.sum()),
        "truncated": int(truncated.sum()),
        "empty_completions": int(empty.sum()),
        "near_empty_completions": int(near_empty.sum()),
        "completion_length_known": int((chars >= 0).sum()),
        "duplicate_rows": duplicates,
        "malformed_lines": stats.malformed,
        "blank_lines": stats.blank,
        "reward_issues": dict(cols.reward_issues),
    }
    if stats.malformed_lines:
        counts["malformed_line_numbers"] = stats.malformed_lines
    if stats.truncated_last_line:
        counts["truncated_last_line"] = True
    if stats.other_shape_rows:
        counts["other_shape_rows"] = stats.other_shape_rows
    if source.shape == evalfiles.V1_TRACES:
        counts["episodes"] = stats.episodes
    if cols.error_kinds:
        counts["error_kinds"] = dict(cols.error_kinds.most_common(5))
    d["counts"] = counts

    # Functions: per reward function and metric, with weight and kind.
    fn = {name: _np(col, np.float64) for name, col in cols.fn_cols.items()}
    metric_cols = {name: _np(col, np.float64) for name, col in cols.metric_cols.items()}
    if cols.weights:
        weights: dict[str, float | None] = dict(cols.weights)
        weights_source = "written in the file"
    else:
        weights, exact = _infer_weights(fn, reward)
        weights_source = "inferred (reward = sum of weight x score, exact fit)" if exact else "unknown"
    functions: dict[str, dict] = {}
    for name, values in fn.items():
        st = describe(values)
        role = "reward" if cols.weights else "reward or metric"
        w = weights.get(name)
        functions[name] = {**st, "weight": w, "kind": _kind(name, st, w, role), "role": role}
    for name, values in metric_cols.items():
        st = describe(values)
        functions[name] = {**st, "weight": None, "kind": "metric", "role": "metric"}
    correct = _pick_correctness(functions)
    d["functions"] = functions
    d["weights_source"] = weights_source
    d["correctness_function"] = correct

    # Reward and solved.
    d["reward"] = describe(reward)
    if correct is not None:
        solved = np.nan_to_num(fn[correct], nan=0.0) >= th.pass_threshold
        d["solved_by"] = f"{correct} >= {th.pass_threshold}"
    else:
        solved = np.nan_to_num(reward, nan=-math.inf) >= th.pass_threshold
        d["solved_by"] = f"reward >= {th.pass_threshold}"
    valid = np.isfinite(reward)
    d["solve_rate"] = _r(float(solved[valid].mean())) if valid.any() else None
    failed = errored | empty
    d["generation_failed_share"] = _r(float(failed.mean())) if n else None
    healthy = valid & ~failed
    d["reward_without_failed"] = {"mean": _r(float(reward[healthy].mean())) if healthy.any() else None,
                                  "rollouts": int(healthy.sum())}
    d["empty_completion_reward"] = {
        "empty_with_positive_reward": int((empty & valid & (np.nan_to_num(reward) > 0)).sum()),
        "empty_solved": int((empty & solved).sum()),
        "near_empty_solved": int((near_empty & solved).sum()),
        "mean_reward_empty": _r(float(reward[empty & valid].mean())) if (empty & valid).any() else None,
    }

    # Group signal.
    gs = _group_stats(group, reward, solved)
    a.pass_rates = gs.pop("pass_rate_per_example", None)
    d["groups"] = gs
    if a.pass_rates is not None and a.pass_rates.size:
        pr = a.pass_rates
        d["pass_rate_per_example"] = {
            "quantiles": {f"p{int(q * 100)}": _r(x) for q, x in zip(QUANTILES, np.quantile(pr, QUANTILES))},
            "never_solved": int((pr <= 0).sum()),
            "always_solved": int((pr >= 1).sum()),
            "mixed": int(((pr > 0) & (pr < 1)).sum()),
        }

    # Data against metadata.
    meta = source.metadata
    disagree = []
    rpe = gs.get("rollouts_per_example", {}).get("most_common")
    if "rollouts_per_example" in meta and rpe is not None and meta["rollouts_per_example"] != rpe:
        disagree.append(f"rollouts per example: metadata says {meta['rollouts_per_example']}, data has {rpe}")
    if "num_examples" in meta and meta["num_examples"] != counts["examples"] and meta["num_examples"] not in (-1, None):
        disagree.append(f"examples: metadata says {meta['num_examples']}, data has {counts['examples']}")
    if isinstance(meta.get("avg_reward"), (int, float)) and d["reward"].get("mean") is not None:
        if abs(meta["avg_reward"] - d["reward"]["mean"]) > 1e-3:
            disagree.append(f"mean reward: metadata says {meta['avg_reward']:.4g}, data has {d['reward']['mean']:.4g}")
    d["metadata_disagreements"] = disagree
    return a


# -- verdicts ----------------------------------------------------------------------


def judge_input(a: Analysis, th: Thresholds, result: Result) -> None:
    """Bad input: too many malformed lines or unusable rewards end the run with exit 2."""
    d, c = a.data, a.data["counts"]
    rows = c["rollouts"] + c["malformed_lines"]
    if c["rollouts"] == 0:
        raise UsageError(f"{a.source.path}: no readable rollouts ({c['malformed_lines']} malformed lines)",
                         hint="each line must be one JSON object with a reward")
    share = c["malformed_lines"] / rows if rows else 0.0
    where = f" (lines {', '.join(map(str, c.get('malformed_line_numbers', [])))})" if c["malformed_lines"] else ""
    if share > th.max_malformed:
        raise UsageError(
            f"{a.source.path}: {c['malformed_lines']} of {rows} lines are not valid JSON objects{where}",
            hint=f"more than {th.max_malformed:.0%} malformed: the file is damaged or not eval results",
        )
    bad_input = sum(v for k, v in c["reward_issues"].items() if k in ("missing", "string", "not-a-number"))
    if bad_input / c["rollouts"] > th.max_bad_rewards:
        kinds = ", ".join(f"{v} {k}" for k, v in c["reward_issues"].items())
        raise UsageError(
            f"{a.source.path}: rewards unusable in {bad_input} of {c['rollouts']} rows ({kinds})",
            hint="each row needs a numeric `reward`; string or missing rewards mean this file was not "
                 "written by vf-eval or was edited",
        )
    notes = []
    if c["malformed_lines"]:
        notes.append(f"skipped {c['malformed_lines']} malformed line(s){where}")
    if c.get("truncated_last_line"):
        notes.append("the last line has no newline (file still being written, or the run was killed)")
    if bad_input:
        notes.append(f"skipped {bad_input} row(s) without a numeric reward")
    if c.get("other_shape_rows"):
        notes.append(f"skipped {c['other_shape_rows']} row(s) of another shape")
    msg = f"{d['shape']}: {d['shape_description']}; {c['rollouts']} rollouts from {a.source.path}"
    if notes:
        result.warn("input", msg + "; " + "; ".join(notes), hint="check how the file was written; re-run the eval")
    else:
        result.passed("input", msg)
    if d.get("metadata_error"):
        result.warn("metadata", d["metadata_error"], hint="the figures come from the rows; metadata was ignored")
    elif d["metadata_disagreements"]:
        result.warn("metadata", "data and metadata disagree: " + "; ".join(d["metadata_disagreements"]),
                    hint="the figures here come from the rows themselves; trust them over metadata")


def judge(a: Analysis, th: Thresholds, result: Result) -> list[str]:
    """Add every verdict to ``result``; return the ids of blocking ones."""
    d, c, g = a.data, a.data["counts"], a.data["groups"]
    n = c["rollouts"]
    blocking: list[str] = []

    def fail(id_, msg, hint):
        result.fail(id_, msg, hint)
        blocking.append(id_)

    # Too few samples.
    if n < th.min_rollouts or c["examples"] < th.min_examples:
        fail("samples", f"too few samples to judge: {n} rollouts over {c['examples']} examples "
             f"(need >= {th.min_rollouts} rollouts and >= {th.min_examples} examples)",
             f"re-run the eval larger, e.g. `vf-eval ENV -n {max(th.min_examples, 50)} -r 4 -s` "
             "(thresholds: --min-rollouts, --min-examples)")
    else:
        result.passed("samples", f"{n} rollouts over {c['examples']} examples")

    # Generation failed (errors, empty completions) rather than a reward problem.
    failed_share = d["generation_failed_share"] or 0.0
    generation_failed = failed_share >= th.failed_share
    if generation_failed:
        fail("generation", f"generation failed, not a reward problem: {failed_share:.0%} of rollouts errored "
             f"({c['errored']}) or have empty completions ({c['empty_completions']})"
             + (f"; errors: {', '.join(c['error_kinds'])}" if c.get("error_kinds") else ""),
             "fix the model endpoint / sampling first (API key, base URL, model name, max tokens); "
             "then re-run the eval - rewards of empty completions say nothing about the environment")
    elif failed_share > th.warn_failed_share:
        result.warn("generation", f"{failed_share:.0%} of rollouts errored ({c['errored']}) or are empty "
                    f"({c['empty_completions']})", "look at the failed rows' `error` before training")
    else:
        result.passed("generation", f"{c['errored']} errored, {c['empty_completions']} empty completions")

    # NaN / null rewards: the reward function itself is broken.
    broken = sum(v for k, v in c["reward_issues"].items() if k in ("nan", "null"))
    if broken:
        msg = f"reward is NaN or null in {broken} rollout(s) that did not error"
        if broken / n > th.max_bad_rewards:
            fail("reward-values", msg, "a reward function returns NaN/None: fix it (training would crash or "
                                       "learn nothing from those rollouts)")
        else:
            result.warn("reward-values", msg, "a reward function sometimes returns NaN/None: guard it")

    # Truncation.
    if n and c["truncated"] / n > th.max_truncated:
        result.warn("truncation", f"{c['truncated'] / n:.0%} of rollouts were truncated",
                    "raise [orchestrator.train.sampling] max_completion_tokens ([sampling] max_tokens)")

    # Duplicates.
    if c["duplicate_rows"]:
        if a.source.has_rollout_identity:
            result.warn("duplicates", f"{c['duplicate_rows']} duplicated row(s) (same rollout written twice, "
                        "e.g. a resumed run)", "de-duplicate the file; the figures count each copy")
        else:
            result.passed("duplicates", f"{c['duplicate_rows']} identical row(s): this shape has no per-rollout "
                          "field, so identical rollouts cannot be told from copies")
    rstats = d["reward"]
    if generation_failed or not rstats.get("count"):
        why = ("generation failed, so these rewards do not measure the environment" if generation_failed
               else "no rollout has a finite reward")
        for id_ in ("reward-positive", "difficulty", "empty-reward", "correctness", "group-signal"):
            result.skip(id_, f"not judged: {why}", "fix that first and re-run the eval")
        return blocking

    # Reward never above zero.
    if rstats.get("count", 0) and (rstats["max"] or 0) <= 0:
        fail("reward-positive", f"reward never above zero in {rstats['count']} scored rollouts: "
             "the task is too hard for this model, or the reward is broken",
             "score a known-good answer (python scripts/test_reward.py) to tell which; "
             "if the reward works, use an easier subset or a stronger model")
    else:
        result.passed("reward-positive", f"reward above zero in {rstats.get('share_nonzero', 0):.0%} of rollouts")

    # Too easy.
    solve = d["solve_rate"]
    if solve is not None and solve >= th.too_easy:
        fail("difficulty", f"reward at or near maximum: {solve:.0%} of rollouts solved ({d['solved_by']}): "
             "too easy, little left to learn",
             "use harder examples or a smaller model (threshold: --too-easy)")
    elif solve is not None:
        result.passed("difficulty", f"{solve:.0%} of rollouts solved ({d['solved_by']})")

    # High reward earned by empty or near-empty completions.
    e = d["empty_completion_reward"]
    if e["empty_with_positive_reward"] or e["empty_solved"]:
        fail("empty-reward", f"{e['empty_with_positive_reward']} empty completion(s) earn a positive reward "
             f"(mean {e['mean_reward_empty']}), {e['empty_solved']} count as solved: the reward is broken or "
             "hackable", "make every reward function return 0 for an empty answer; check which one pays")
    elif e["near_empty_solved"]:
        result.warn("empty-reward", f"{e['near_empty_solved']} near-empty completion(s) (<= {th.near_empty_chars} "
                    "characters) count as solved", "fine for one-token answers (a letter, a label); otherwise the "
                    "reward is hackable (threshold: --near-empty-chars)")
    elif c["completion_length_known"]:
        result.passed("empty-reward", "no empty completion earns a reward")
    else:
        result.skip("empty-reward", "completions are not in this file", "")

    # Correctness never achieved although a format bonus makes the total look healthy.
    correct = d["correctness_function"]
    fns = d["functions"]
    if correct is not None:
        cf = fns[correct]
        others = [k for k, f in fns.items() if k != correct and f["kind"] in ("format", "shaping")]
        if (cf.get("max") or 0) <= 0 and (rstats.get("max") or 0) > 0:
            fail("correctness", f"correctness ({correct}) is never achieved, although the total reward averages "
                 f"{rstats['mean']} from {', '.join(others) or 'other functions'}: the model learns only the bonus",
                 "lower the format weight or drop it, make the task easier, or use a stronger model")
        else:
            result.passed("correctness", f"{correct} looks like correctness (mean {cf['mean']}); "
                          + (f"format/shaping: {', '.join(others)}" if others else "no other reward functions"))
    elif fns:
        result.warn("correctness", "no reward function looks like correctness (binary, weight 1)",
                    "name the correctness reward clearly (e.g. correct_answer) or check the weights")
    else:
        result.skip("correctness", "the file has only a total reward, no per-function scores", "")

    # Group signal.
    if g.get("groups", 0) == 0:
        result.warn("group-signal", "one rollout per example: group signal cannot be measured "
                    "(GRPO learns only from groups whose rewards differ)",
                    "re-run the eval with -r 4 or more (vf-eval ENV -n 50 -r 4 -s)")
    else:
        share = g["nonzero_advantage_share"]
        msg = (f"{share:.0%} of rollouts carry a non-zero GRPO advantage; {g['zero_variance_share']:.0%} of groups "
               f"have zero reward variance ({g['all_fail_share']:.0%} all-fail, {g['all_pass_share']:.0%} all-pass); "
               f"mean within-group std {g['mean_within_group_std']}")
        if share < th.min_signal:
            fail("group-signal", "too little group signal: " + msg,
                 "most steps would train on nothing: change difficulty or model, raise orchestrator.group_size, "
                 "and set orchestrator.train.filter_zero_advantages = true (threshold: --min-signal)")
        elif share < 2 * th.min_signal:
            result.warn("group-signal", msg, "expect slow learning; see the recommendations")
        else:
            result.passed("group-signal", msg)

    return blocking


# -- recommendations ---------------------------------------------------------------


def value_text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items() if not isinstance(v, dict))
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _expected_mixed(pass_rates: np.ndarray, group_size: int) -> float:
    p = np.clip(pass_rates, 0.0, 1.0)
    return float(np.mean(1.0 - p ** group_size - (1.0 - p) ** group_size))


def recommend(a: Analysis, th: Thresholds) -> list[dict[str, Any]]:
    """prime-rl settings: current key, value, older name, and why."""
    d, g, c = a.data, a.data["groups"], a.data["counts"]
    recs: list[dict[str, Any]] = []
    if (d["generation_failed_share"] or 0) >= th.failed_share:
        return recs
    pr = a.pass_rates
    solve = d["solve_rate"] or 0.0
    group_size = None
    if g.get("groups", 0) and pr is not None and pr.size:
        expected = {gsz: _expected_mixed(pr, gsz) for gsz in GROUP_SIZES}
        shares = {str(k): _r(v) for k, v in expected.items()}
        good = [gsz for gsz in GROUP_SIZES if expected[gsz] >= 0.5]
        best = max(GROUP_SIZES, key=lambda s: (expected[s], -s))
        if expected[best] < 0.25:  # examples are all-pass or all-fail: no group size creates signal
            recs.append({"key": "orchestrator.group_size", "older": "rollouts_per_example", "value": "no size helps",
                         "why": f"per-example pass rates are all near 0 or 1, so even {GROUP_SIZES[-1]} rollouts give "
                                f"{expected[best]:.0%} groups with differing rewards: change difficulty or model",
                         "expected_mixed_share": shares})
        else:
            group_size = good[0] if good else best
            recs.append({"key": "orchestrator.group_size", "older": "rollouts_per_example", "value": group_size,
                         "why": "expected share of groups with differing rewards, from the per-example pass rates: "
                                + ", ".join(f"{k}: {v:.0%}" for k, v in expected.items()),
                         "expected_mixed_share": shares})
    elif 0 < solve < 1:
        # One rollout per example: estimate from the overall solve rate (homogeneous difficulty assumed).
        expected = {gsz: 1 - solve ** gsz - (1 - solve) ** gsz for gsz in GROUP_SIZES}
        good = [gsz for gsz in GROUP_SIZES if expected[gsz] >= 0.5]
        group_size = good[0] if good else GROUP_SIZES[-1]
        recs.append({"key": "orchestrator.group_size", "older": "rollouts_per_example", "value": group_size,
                     "why": f"estimated from the overall solve rate {solve:.0%} assuming equal difficulty (one "
                            "rollout per example: re-run with -r 4 to measure it per example)"})
    if group_size:
        batch = int(math.ceil(DEFAULT_BATCH / group_size) * group_size)
        recs.append({"key": "orchestrator.batch_size", "older": "batch_size", "value": batch,
                     "why": f"rollouts per step; must be divisible by group_size ({batch // group_size} examples "
                            "per step)"})
    zero = g.get("zero_variance_share")
    if zero is not None and zero >= 0.2:
        recs.append({"key": "orchestrator.train.filter_zero_advantages", "value": True,
                     "older": "[buffer] online_difficulty_filtering",
                     "why": f"{zero:.0%} of groups have zero reward variance and would train on nothing"})
    if pr is not None and pr.size and g.get("groups", 0):
        never, always = int((pr <= 0).sum()), int((pr >= 1).sum())
        mixed = pr.size - never - always
        if (never or always) and mixed:
            recs.append({
                # Key path from prime-rl's RLConfig (vlab/trainconfig/prime_rl_keys.py); the
                # thresholds are the observed pass-rate boundaries of the pools.
                "key": "[[orchestrator.train.source]] curriculum.sampler.pools (difficulty_pool)",
                "older": "[buffer] easy_threshold / hard_threshold",
                "value": {"hard_threshold": 0.0, "easy_threshold": 1.0,
                          "hard_share": _r(never / pr.size), "easy_share": _r(always / pr.size),
                          "pass_rate_quantiles": d.get("pass_rate_per_example", {}).get("quantiles")},
                "why": f"{never} example(s) never solved (pass rate 0) and {always} always solved (pass rate 1) "
                       f"out of {pr.size}: pool them apart and sample mostly the {mixed} mixed ones",
            })
    n = c["rollouts"]
    if n and c["truncated"] / n > th.max_truncated:
        current = d["metadata"].get("max_tokens")
        recs.append({"key": "[orchestrator.train.sampling] max_completion_tokens", "older": "[sampling] max_tokens",
                     "value": (int(current) * 2 if isinstance(current, (int, float)) and current else "raise it"),
                     "why": f"{c['truncated'] / n:.0%} of rollouts were truncated"
                            + (f" at max_tokens={current}" if current else "")})
    if d["reward"].get("count"):
        if (d["reward"].get("max") or 0) <= 0 or solve < 0.05:
            recs.append({"key": "task difficulty / model", "value": "easier tasks or a stronger model",
                         "older": None, "why": f"solve rate {solve:.0%}: almost no group has a success to learn from"})
        elif solve >= th.too_easy:
            recs.append({"key": "task difficulty / model", "value": "harder tasks or a smaller model",
                         "older": None, "why": f"solve rate {solve:.0%}: almost every group is all-pass"})
        elif pr is not None and pr.size and g.get("groups", 0) and not ((pr > 0) & (pr < 1)).any():
            recs.append({"key": "task difficulty / model", "value": "mix in examples this model sometimes solves",
                         "older": None, "why": "every example is always or never solved: no group has signal"})
    return recs


# -- vf-validate -------------------------------------------------------------------


def analyse_validate(source: EvalSource, rows: list[dict], result: Result) -> dict[str, Any]:
    """vf-validate rows: gold (reference answer scores) and noop (an untouched task must not pass)."""
    if not rows:
        raise UsageError(f"{source.path}: no vf-validate rows", hint="re-run vf-validate")
    gold = Counter(); noop = Counter(); noop_rewards: dict[str, list[float]] = {}
    passing_untouched = []
    for row in rows:
        for name, counter in (("gold", gold), ("noop", noop)):
            sub = row.get(name) if isinstance(row.get(name), dict) else (row if row.get("mode") == name else None)
            if sub is None:
                continue
            counter[str(sub.get("reason"))] += 1
            if name == "noop":
                for fn, score in (sub.get("rewards") or {}).items():
                    if isinstance(score, (int, float)):
                        noop_rewards.setdefault(fn, []).append(float(score))
                if sub.get("reason") == "invalid":
                    passing_untouched.append(row.get("index"))
    data = {
        "shape": source.shape, "shape_description": source.description, "file": str(source.path),
        "tasks": len(rows), "gold": dict(gold), "noop": dict(noop),
        "noop_reward_means": {k: _r(sum(v) / len(v)) for k, v in noop_rewards.items()},
        "metadata": dict(source.metadata),
    }
    result.passed("input", f"{source.shape}: {source.description}; {len(rows)} tasks from {source.path}")
    if passing_untouched:
        result.fail("noop", f"{len(passing_untouched)} task(s) reach full reward untouched (no answer given): "
                    f"the reward is hackable (tasks {passing_untouched[:10]})",
                    "make the reward require an actual answer")
    elif noop:
        result.passed("noop", f"untouched tasks score below 1.0 ({dict(noop)})")
    if gold.get("invalid") or gold.get("error"):
        result.fail("gold", f"the reference answer does not pass in {gold.get('invalid', 0)} task(s) and errors in "
                    f"{gold.get('error', 0)}: the reward or the gold answer is wrong",
                    "fix Task.validate or the reward")
    elif gold.get("unchecked"):
        result.warn("gold", f"gold answer unchecked for {gold['unchecked']} task(s): the taskset defines no "
                    "Task.validate", "add a validate() hook so vf-validate can check the reward against the answer")
    result.fail("rollouts", "vf-validate output holds model-free checks, not model rollouts: it cannot say whether "
                "training would learn anything",
                "run an eval with several rollouts per task and check it: vf-eval TASKSET -n 50 -r 4, "
                "then check_reward_distribution.py --results outputs/<run>")
    return data


# -- the whole check ---------------------------------------------------------------


def check_results(source: EvalSource, th: Thresholds, result: Result) -> None:
    """Read, analyse, judge and recommend; fill ``result`` (checks, data, summary, next steps)."""
    stats = ReadStats()
    if source.shape == evalfiles.V1_VALIDATE:
        result.data = analyse_validate(source, evalfiles.read_validate_rows(source, stats), result)
        result.summary = "vf-validate output: no model rollouts to judge"
        return
    analysis = analyse(source, collect(source, stats), stats, th)
    judge_input(analysis, th, result)
    blocking = judge(analysis, th, result)
    recs = recommend(analysis, th)
    analysis.data["recommendations"] = recs
    analysis.data["thresholds"] = vars(th)
    analysis.data["blocking_verdicts"] = blocking
    result.data = analysis.data
    result.summary = ("not worth starting training yet: " + ", ".join(blocking)) if blocking \
        else "worth starting training"
    for rec in recs:
        older = f" [was: {rec['older']}]" if rec.get("older") else ""
        result.step(f"{rec['key']}{older} = {value_text(rec['value'])}: {rec['why']}")


# -- human report ------------------------------------------------------------------


def histogram_lines(hist: dict, width: int = 30) -> list[str]:
    """A terminal histogram: one bar per bin."""
    counts, edges = hist["counts"], hist["edges"]
    top = max(counts) or 1
    lines = []
    for i, count in enumerate(counts):
        bar = "█" * int(round(width * count / top))
        lines.append(f"  [{edges[i]:>7.3g}, {edges[i + 1]:>7.3g}{']' if i == len(counts) - 1 else ')'} "
                     f"{bar:<{width}} {count}")
    return lines


def render(result: Result, con) -> None:
    d = result.data
    out: list[str] = []
    if "counts" not in d:  # vf-validate or an early stop
        if d.get("tasks"):
            out.append(f"{d['shape']}: {d['tasks']} tasks; gold {d['gold']}; noop {d['noop']}")
        _emit(con, out)
        return
    c, r, g = d["counts"], d["reward"], d["groups"]
    meta = d.get("metadata", {})
    out.append(f"{d['shape']} ({d['shape_description']})")
    out.append(f"file: {d['file']}" + (f"  [newest of {d.get('other_runs_found', 0) + 1} runs found]"
                                       if d.get("found_by") == "search" else ""))
    if meta.get("env") or meta.get("model"):
        out.append(f"env: {meta.get('env', '?')}  model: {meta.get('model', '?')}")
    rpe = g.get("rollouts_per_example", {})
    out.append(f"rollouts {c['rollouts']}  examples {c['examples']}  rollouts/example "
               f"{rpe.get('min')}-{rpe.get('max')} (metadata: {meta.get('rollouts_per_example', '-')})  "
               f"grouped by {d['grouping']}")
    out.append(f"errored {c['errored']}  truncated {c['truncated']}  empty {c['empty_completions']}  "
               f"{'duplicates' if d.get('rollout_identity') else 'identical rows'} {c['duplicate_rows']}  "
               f"malformed lines {c['malformed_lines']}")
    if r.get("count"):
        q = r["quantiles"]
        out.append(f"reward: mean {r['mean']}  std {r['std']}  p10 {q['p10']}  p50 {q['p50']}  p90 {q['p90']}  "
                   f"min {r['min']}  max {r['max']}  solved {d['solve_rate']} ({d['solved_by']})")
        out.extend(histogram_lines(r["histogram"]))
    for name, f in d["functions"].items():
        if f.get("count"):
            w = f["weight"]
            out.append(f"  {name:<28} {f['kind']:<11} weight {('?' if w is None else w)!s:<6} mean {f['mean']}  "
                       f"std {f['std']}  {'binary' if f['binary'] else 'continuous'}")
    if g.get("groups"):
        out.append(f"group signal: non-zero advantage {g['nonzero_advantage_share']}  zero-variance groups "
                   f"{g['zero_variance_share']} (all-fail {g['all_fail_share']}, all-pass {g['all_pass_share']})  "
                   f"within-group std {g['mean_within_group_std']}  pass@k {g.get('pass_at_k')}")
    _emit(con, out)


def _emit(con, lines: list[str]) -> None:
    if con is None:
        for line in lines:
            print(line)
        return
    from rich.markup import escape

    for line in lines:
        con.print(escape(line))
