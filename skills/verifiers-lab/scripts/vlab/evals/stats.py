"""Statistics over numpy columns, as frozen records: a distribution (``describe``), the weights
behind a total reward (``infer_weights``), GRPO group statistics and pass@k (``group_stats``).

Every figure is rounded by ``round_figure`` (4 decimals; None for a non-finite one), so the
JSON the tool writes is stable. ``to_data()`` on each record gives its JSON form.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
HIST_BINS = 10
EPS = 1e-9  # rewards closer than this are equal (zero variance, zero advantage)


def round_figure(x: float | None, nd: int = 4) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), nd)


@dataclass(frozen=True)
class Quantiles:
    """The QUANTILES of some values (p0 = min, p100 = max)."""

    p0: float | None
    p10: float | None
    p25: float | None
    p50: float | None
    p75: float | None
    p90: float | None
    p100: float | None

    @classmethod
    def of(cls, values: np.ndarray, overwrite: bool = False) -> Quantiles:
        """``overwrite``: the values may be reordered in place (no copy)."""
        return cls(*(round_figure(x) for x in np.quantile(values, QUANTILES, overwrite_input=overwrite)))

    def to_data(self) -> dict[str, float | None]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Histogram:
    edges: tuple[float | None, ...]
    counts: tuple[int, ...]

    def to_data(self) -> dict[str, list]:
        return {"edges": list(self.edges), "counts": list(self.counts)}


@dataclass(frozen=True)
class Distribution:
    """Mean, spread, quantiles and a histogram of the finite values of a column (count 0: none)."""

    count: int
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    quantiles: Quantiles | None = None
    histogram: Histogram | None = None
    binary: bool = False  # every value is 0 or 1
    distinct_values: int | str = 0  # ">=1000" beyond that
    share_nonzero: float | None = None

    def to_data(self) -> dict[str, Any]:
        if not self.count:
            return {"count": 0}
        return {
            "count": self.count,
            "mean": self.mean,
            "std": self.std,
            "min": self.min,
            "max": self.max,
            "quantiles": None if self.quantiles is None else self.quantiles.to_data(),  # None: none in a sample
            "histogram": None if self.histogram is None else self.histogram.to_data(),
            "binary": self.binary,
            "distinct_values": self.distinct_values,
            "share_nonzero": self.share_nonzero,
        }


def describe(values: np.ndarray, owned: bool = False, value_range: tuple[float, float] | None = None) -> Distribution:
    """mean, std, quantiles and a histogram of the finite values. ``owned``: ``values`` is a copy made for
    this call, which the quantiles may reorder in place (no second copy of the column). ``value_range``: the
    histogram's range when ``values`` are a sample of a column whose range is known."""
    finite = np.isfinite(values)
    every = bool(finite.all())
    v = values if every else values[finite]  # no copy when every value is finite
    del finite
    if v.size == 0:
        return Distribution(count=0)
    lo, hi = value_range if value_range is not None else (float(v.min()), float(v.max()))
    spread = hi > lo
    counts, edges = np.histogram(v, bins=HIST_BINS if spread else 1, range=(lo, hi) if spread else (lo - 0.5, lo + 0.5))
    uniq = np.unique(v[:200_000]) if v.size > 200_000 else np.unique(v)
    mean, std = round_figure(v.mean()), round_figure(v.std())
    binary = bool(np.all((v == 0) | (v == 1)))
    share_nonzero = round_figure(float(np.mean(v != 0)))
    # last: with a copy of our own (or the filtered copy) the partition reorders it in place
    quantiles = Quantiles.of(v, overwrite=owned or not every)
    return Distribution(
        count=int(v.size),
        mean=mean,
        std=std,
        min=round_figure(lo),
        max=round_figure(hi),
        quantiles=quantiles,
        histogram=Histogram(tuple(round_figure(e) for e in edges), tuple(int(c) for c in counts)),
        binary=binary,
        distinct_values=int(uniq.size) if uniq.size < 1000 else ">=1000",
        share_nonzero=share_nonzero,
    )


def infer_weights(fn: dict[str, np.ndarray], reward: np.ndarray) -> tuple[dict[str, float | None], bool]:
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
    null = vt[int(np.sum(s > tol)) :]
    out = {}
    for i, n in enumerate(names):
        identifiable = null.shape[0] == 0 or float(np.max(np.abs(null[:, i]))) < 1e-8
        out[n] = round_figure(w[i]) if identifiable else None
    return out, True


# -- GRPO groups -------------------------------------------------------------------


KFigures = tuple[tuple[int, float | None], ...]  # (k, figure) for k = 1, 2, 4, ... or per group size


def k_data(pairs: KFigures) -> dict[str, float | None]:
    """A (k, figure) sequence in its JSON form: {"k": figure}."""
    return {str(k): v for k, v in pairs}


@dataclass(frozen=True)
class RolloutsPerExample:
    min: int
    max: int
    most_common: int


@dataclass(frozen=True)
class GroupSignal:
    """What GRPO can learn from the groups of two or more rollouts."""

    zero_variance_share: float | None  # groups whose rewards are all equal ...
    all_fail_share: float | None  # ... none solved
    all_pass_share: float | None  # ... all solved
    constant_other_share: float | None  # ... equal otherwise
    mean_within_group_std: float | None
    nonzero_advantage_share: float | None  # rollouts whose reward differs from their group's mean
    pass_at_k: KFigures  # unbiased pass@k, k = 1, 2, 4, ...
    pass_all_k: KFigures  # pass^k: all k solved

    def to_data(self) -> dict[str, Any]:
        return {
            "zero_variance_share": self.zero_variance_share,
            "all_fail_share": self.all_fail_share,
            "all_pass_share": self.all_pass_share,
            "constant_other_share": self.constant_other_share,
            "mean_within_group_std": self.mean_within_group_std,
            "nonzero_advantage_share": self.nonzero_advantage_share,
            "pass_at_k": k_data(self.pass_at_k),
            "pass_all_k": k_data(self.pass_all_k),
        }


@dataclass(frozen=True)
class Groups:
    """Rollouts grouped by example (only those with a finite reward); ``groups`` counts the
    examples with two or more, which alone carry signal."""

    groups: int
    examples: int = 0
    rollouts_per_example: RolloutsPerExample | None = None  # None: no rollout has a finite reward
    signal: GroupSignal | None = None  # None: no example has two rollouts

    def to_data(self) -> dict[str, Any]:
        if self.rollouts_per_example is None:
            return {"groups": self.groups}
        out = {
            "examples": self.examples,
            "rollouts_per_example": dataclasses.asdict(self.rollouts_per_example),
            "groups": self.groups,
        }
        if self.signal is not None:
            out.update(self.signal.to_data())
        return out


def group_stats(group: np.ndarray, reward: np.ndarray, solved: np.ndarray) -> tuple[Groups, np.ndarray | None]:
    """The groups' statistics, and each example's pass rate (None when no reward is finite)."""
    ok = np.isfinite(reward)
    g, r, s = (group, reward, solved) if ok.all() else (group[ok], reward[ok], solved[ok])  # no copies if all finite
    del ok
    if g.size == 0:
        return Groups(groups=0), None
    ng = int(g.max()) + 1
    # Per slice of the rows, so the working arrays are a slice's, not the file's. The float sums add the rows in
    # file order into one array (np.add.at, unbuffered), exactly as one np.bincount over every row would.
    size = np.zeros(ng, dtype=np.int64)
    total, sq, passes = np.zeros(ng), np.zeros(ng), np.zeros(ng)
    for sl in _slices(g.size):
        size += np.bincount(g[sl], minlength=ng)
        np.add.at(total, g[sl], r[sl])
        passes += np.bincount(g[sl][s[sl]], minlength=ng)  # whole counts: exact in any order
    present = size > 0
    mean = np.divide(total, size, out=np.zeros(ng), where=present)
    del total
    for sl in _slices(g.size):
        np.add.at(sq, g[sl], _deviation(r[sl], mean, g[sl], square=True))
    std = np.sqrt(np.divide(sq, size, out=np.zeros(ng), where=present))
    del sq
    multi = size >= 2
    per_example = RolloutsPerExample(
        min=int(size[present].min()),
        max=int(size[present].max()),
        most_common=_most_common(size[present]),
    )
    pass_rate = np.divide(passes, size, out=np.zeros(ng), where=present)[present]
    signal = None
    if multi.any():
        zero = multi & (std <= EPS)
        all_pass = zero & (passes >= size)
        all_fail = zero & (passes <= 0)
        in_multi = nonzero_adv = 0
        for sl in _slices(g.size):
            counted = multi[g[sl]]
            in_multi += int(counted.sum())
            nonzero_adv += int(((_deviation(r[sl], mean, g[sl], square=False) > EPS) & counted).sum())
        at, all_k = pass_at_k(size[multi], passes[multi].astype(int))
        signal = GroupSignal(
            zero_variance_share=round_figure(zero.sum() / multi.sum()),
            all_fail_share=round_figure(all_fail.sum() / multi.sum()),
            all_pass_share=round_figure(all_pass.sum() / multi.sum()),
            constant_other_share=round_figure((zero & ~all_pass & ~all_fail).sum() / multi.sum()),
            mean_within_group_std=round_figure(std[multi].mean()),
            nonzero_advantage_share=round_figure(nonzero_adv / in_multi),  # as the mean of a boolean array
            pass_at_k=at,
            pass_all_k=all_k,
        )
    groups = Groups(
        groups=int(multi.sum()), examples=int(present.sum()), rollouts_per_example=per_example, signal=signal
    )
    return groups, pass_rate


ROW_SLICE = 1 << 20


def _slices(n: int) -> list[slice]:
    return [slice(i, i + ROW_SLICE) for i in range(0, n, ROW_SLICE)]


def _most_common(values: np.ndarray) -> int:
    """The most common value; of several, the first seen (as Counter.most_common(1) picks)."""
    counts = np.bincount(values)  # group sizes: small whole numbers
    top = np.flatnonzero(counts == counts.max())
    return int(top[0] if top.size == 1 else min(top, key=lambda v: int(np.argmax(values == v))))


def _deviation(r: np.ndarray, mean: np.ndarray, g: np.ndarray, *, square: bool) -> np.ndarray:
    """(r - mean[g]) squared or absolute, in one new array (the same figures as the plain expression)."""
    d = mean[g]
    np.subtract(r, d, out=d)
    return np.multiply(d, d, out=d) if square else np.abs(d, out=d)


def pass_at_k(n: np.ndarray, c: np.ndarray) -> tuple[KFigures, KFigures]:
    """Unbiased pass@k = 1 - C(n-c,k)/C(n,k) and pass^k = C(c,k)/C(n,k), k = powers of 2 up to
    the smallest group (as verifiers computes them), averaged over groups."""
    kmax = int(n.min())
    # the distinct (n, c) pairs in (n, c) order, through one integer key (no stacked copies of every group)
    base = int(c.max()) + 1
    keys, counts = np.unique(n.astype(np.int64) * base + c, return_counts=True)
    pairs = np.stack([keys // base, keys % base])
    at, allk = [], []
    k = 1
    while k <= kmax:
        s_at = s_all = 0.0
        for (ni, ci), m in zip(pairs.T.tolist(), counts.tolist()):
            nk = math.comb(ni, k)
            s_at += m * (1.0 if ni - ci < k else 1.0 - math.comb(ni - ci, k) / nk)
            s_all += m * math.comb(ci, k) / nk
        at.append((k, round_figure(s_at / n.size)))
        allk.append((k, round_figure(s_all / n.size)))
        k *= 2
    return tuple(at), tuple(allk)
