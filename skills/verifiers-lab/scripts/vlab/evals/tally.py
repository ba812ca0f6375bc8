"""The figures counted over every rollout, also when the groups are read from a sample.

Beyond ``Columns``' row budget only a sample of whole examples stays in memory (``sampling``); the
rows it drops are first added here, so that the counts, the shares that block training and the rare
events one row proves (an empty completion paid, a score never above zero) stay exact over the whole
file. ``RowTally.add(...)`` takes one slice of the columns at a time; tallies add up (``merge``).
With no sample the whole file is one slice, so each figure is the one ``analysis`` always computed.

``Moments`` keeps one column's count, mean, spread, range and its zero / non-binary counts (only
kept when the file is sampled: a sampled distribution takes these from here, its quantiles and
histogram from the sample).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from vlab import catalog

REWARD = ""  # the total reward's key among the candidates for "solved" (function names are never empty)


@dataclass(frozen=True)
class TallySpec:
    """What a tally needs to know before the rows arrive: the analysis' own thresholds."""

    pass_threshold: float = 0.5
    near_empty_chars: int = 3


@dataclass
class Moments:
    """A column's finite values: count, mean and sum of squared deviations (merged as Chan et al.), range,
    and how many are non-zero and neither 0 nor 1."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf
    nonzero: int = 0
    nonbinary: int = 0

    def add(self, values: np.ndarray) -> None:
        v = values[np.isfinite(values)]
        if not v.size:
            return
        part = Moments(
            count=int(v.size),
            mean=float(v.mean()),
            min=float(v.min()),
            max=float(v.max()),
            nonzero=int(np.count_nonzero(v)),
            nonbinary=int(np.count_nonzero((v != 0) & (v != 1))),
        )
        part.m2 = float(np.square(v - part.mean).sum())
        self.merge(part)

    def merge(self, o: Moments) -> None:
        if not o.count:
            return
        n = self.count + o.count
        delta = o.mean - self.mean
        self.m2 += o.m2 + delta * delta * self.count * o.count / n
        self.mean += delta * o.count / n
        self.count = n
        self.min, self.max = min(self.min, o.min), max(self.max, o.max)
        self.nonzero += o.nonzero
        self.nonbinary += o.nonbinary

    @property
    def std(self) -> float:
        return math.sqrt(self.m2 / self.count) if self.count else math.nan


@dataclass
class RowTally:
    """Counts and sums over every rollout added. ``solved*`` are kept for every candidate correctness
    column (each score column, and ``REWARD``): which one is correctness is decided after the last row."""

    rows: int = 0
    errored: int = 0
    truncated: int = 0
    turn_limited: int = 0
    turn_limited_with_tools: int = 0
    turn_limited_or_errored: int = 0
    empty: int = 0
    near_empty: int = 0
    length_known: int = 0
    judge_flagged: int = 0  # a judge_error metric set on a rollout that did not error
    finite: int = 0  # rollouts with a finite reward
    failed: int = 0  # errored or empty
    healthy: int = 0  # finite reward, neither errored nor empty
    healthy_sum: float = 0.0
    empty_finite: int = 0
    empty_finite_sum: float = 0.0
    empty_paid: int = 0  # empty, with a reward above zero
    solved: dict[str, int] = field(default_factory=dict)  # solved, with a finite reward
    empty_solved: dict[str, int] = field(default_factory=dict)
    near_empty_solved: dict[str, int] = field(default_factory=dict)
    moments: dict[str, Moments] | None = None  # per column (REWARD: the reward); None: not kept

    def add(
        self,
        spec: TallySpec,
        reward: np.ndarray,
        errored: np.ndarray,
        stops: np.ndarray,
        chars: np.ndarray,
        tools: np.ndarray,
        scores: dict[str, np.ndarray],
    ) -> None:
        """One slice of the columns: reward (float64), errored (bool), stops (1 truncated, 2 turn limit),
        completion characters (-1 unknown), tool calls, every score and metric column (float64; a score column
        and a metric of one name: the score)."""
        self.rows += int(reward.size)
        turn_limited = stops == 2
        self.errored += int(errored.sum())
        self.truncated += int((stops == 1).sum())
        self.turn_limited += int(turn_limited.sum())
        self.turn_limited_with_tools += int((turn_limited & (tools > 0)).sum())
        self.turn_limited_or_errored += int((turn_limited | errored).sum())
        empty = (chars == 0) & (tools == 0)
        near_empty = (chars > 0) & (chars <= spec.near_empty_chars) & (tools == 0)
        self.empty += int(empty.sum())
        self.near_empty += int(near_empty.sum())
        self.length_known += int((chars >= 0).sum())
        judge_flag = scores.get(catalog.JUDGE_ERROR_METRIC)
        if judge_flag is not None:
            self.judge_flagged += int(((judge_flag > 0) & ~errored).sum())
        valid = np.isfinite(reward)
        failed = errored | empty
        healthy = valid & ~failed
        self.finite += int(valid.sum())
        self.failed += int(failed.sum())
        self.healthy += int(healthy.sum())
        self.healthy_sum += float(reward[healthy].sum())
        empty_valid = empty & valid
        self.empty_finite += int(empty_valid.sum())
        self.empty_finite_sum += float(reward[empty_valid].sum())
        self.empty_paid += int((empty_valid & (np.nan_to_num(reward) > 0)).sum())
        for name, hit in _candidates(spec, reward, scores):
            self.solved[name] = self.solved.get(name, 0) + int((hit & valid).sum())
            self.empty_solved[name] = self.empty_solved.get(name, 0) + int((empty & hit).sum())
            self.near_empty_solved[name] = self.near_empty_solved.get(name, 0) + int((near_empty & hit).sum())
        if self.moments is not None:
            for name, values in ((REWARD, reward), *scores.items()):
                self.moments.setdefault(name, Moments()).add(values)

    def merge(self, o: RowTally) -> None:
        for f in dataclasses.fields(self):
            mine, theirs = getattr(self, f.name), getattr(o, f.name)
            if f.name == "moments":
                if theirs:
                    self.moments = {} if mine is None else mine
                    for name, m in theirs.items():
                        self.moments.setdefault(name, Moments()).merge(m)
            elif isinstance(mine, dict):
                for name, n in theirs.items():
                    mine[name] = mine.get(name, 0) + n
            else:
                setattr(self, f.name, mine + theirs)


def solved(values: np.ndarray, threshold: float, reward: bool, copy: bool = True) -> np.ndarray:
    """The rows a column solves: at or above ``threshold``; a missing reward never solves, a missing score is 0."""
    return np.nan_to_num(values, copy=copy, nan=-math.inf if reward else 0.0) >= threshold


def _candidates(spec: TallySpec, reward: np.ndarray, scores: dict[str, np.ndarray]):
    """(name, solved) for the reward and every score column, by the rule ``analysis`` applies to the one it picks."""
    yield REWARD, solved(reward, spec.pass_threshold, reward=True)
    for name, values in scores.items():
        yield name, solved(values, spec.pass_threshold, reward=False)
