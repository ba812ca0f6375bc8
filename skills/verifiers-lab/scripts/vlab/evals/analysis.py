"""Will training on these eval results teach the model anything? The figures that say so.

``analyse(source, columns, stats, ...)`` turns the columns of every rollout (``columns``) into a
frozen ``Analysis``: counts, reward statistics per function (with its weight and kind), the
solve rate, GRPO group signal and pass@k, per-example pass rates, and where the data and the
run's metadata disagree (vf-validate output: ``validate``). Verdicts and recommendations
are drawn from these in ``verdicts``; ``to_data()`` is the JSON form.

Which reward function is the correctness one is decided here, in one place:
``function_kind`` (correctness / format / shaping / metric) and ``correctness_function``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlab import catalog
from vlab.evals.coded import as_numpy
from vlab.evals.columns import Columns
from vlab.evals.read import ReadStats
from vlab.evals.sampling import Sample
from vlab.evals.source import V1_TRACES, EvalSource
from vlab.evals.stats import (
    Distribution,
    Groups,
    Quantiles,
    describe,
    group_stats,
    infer_weights,
    round_figure,
)
from vlab.evals.tally import REWARD, RowTally, solved

WEIGHT_FIT_ROWS = 200_000  # as many rows as infer_weights reads

# -- the figures ---------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionStats:
    """One reward function or metric: its distribution, weight (None: unknown) and kind."""

    name: str
    stats: Distribution
    weight: float | None
    kind: str  # correctness | format | shaping | metric
    role: str  # reward | metric | "reward or metric" (classic files do not say)

    def to_data(self) -> dict[str, Any]:
        return {**self.stats.to_data(), "weight": self.weight, "kind": self.kind, "role": self.role}


@dataclass(frozen=True)
class Counts:
    """What the file holds: rollouts, examples, failures, and what the reader skipped."""

    lines: int
    rollouts: int
    examples: int
    errored: int
    truncated: int
    empty_completions: int
    near_empty_completions: int
    completion_length_known: int
    duplicate_rows: int
    malformed_lines: int
    blank_lines: int
    reward_issues: tuple[tuple[str, int], ...]  # (missing | null | nan | string | not-a-number, rows)
    malformed_line_numbers: tuple[int, ...] = ()  # the first ten
    truncated_last_line: bool = False
    other_shape_rows: int = 0
    episodes: int | None = None  # v1 traces only
    error_kinds: tuple[tuple[str, int], ...] = ()  # the five most common
    judge_errors: int = 0  # errored rollouts whose judge gave no verdict (counted apart from zero rewards)
    judge_refusals: int = 0  # ... whose judge refused
    judge_scored_zero: int = 0  # of judge_errors: not errored, scored 0 with the judge_error metric set (classic)
    turn_limited: int = 0  # ended by the environment's turn limit before it was over
    # every rollout ran to the turn limit without a tool call: a conversation of fixed length (a game that
    # no rollout finished shows in its rewards); those are not counted in turn_limited
    fixed_length: int = 0

    def reward_issue_count(self, *kinds: str) -> int:
        return sum(n for kind, n in self.reward_issues if kind in kinds)

    def to_data(self) -> dict[str, Any]:
        out = {
            "lines": self.lines,
            "rollouts": self.rollouts,
            "examples": self.examples,
            "errored": self.errored,
            "truncated": self.truncated,
            "turn_limited": self.turn_limited,
            "fixed_length": self.fixed_length,
            "empty_completions": self.empty_completions,
            "near_empty_completions": self.near_empty_completions,
            "completion_length_known": self.completion_length_known,
            "duplicate_rows": self.duplicate_rows,
            "malformed_lines": self.malformed_lines,
            "blank_lines": self.blank_lines,
            "reward_issues": dict(self.reward_issues),
        }
        if self.malformed_line_numbers:
            out["malformed_line_numbers"] = list(self.malformed_line_numbers)
        if self.truncated_last_line:
            out["truncated_last_line"] = True
        if self.other_shape_rows:
            out["other_shape_rows"] = self.other_shape_rows
        if self.episodes is not None:
            out["episodes"] = self.episodes
        if self.error_kinds:
            out["error_kinds"] = dict(self.error_kinds)
        if self.judge_errors or self.judge_refusals:
            out["judge_failures"] = {"no_verdict": self.judge_errors, "refusals": self.judge_refusals}
            if self.judge_scored_zero:
                out["judge_failures"]["scored_zero"] = self.judge_scored_zero
        return out


@dataclass(frozen=True)
class RewardWithoutFailed:
    mean: float | None  # mean reward of rollouts that neither errored nor came back empty
    rollouts: int


@dataclass(frozen=True)
class EmptyCompletionReward:
    empty_with_positive_reward: int
    empty_solved: int
    near_empty_solved: int
    mean_reward_empty: float | None


@dataclass(frozen=True)
class PassRates:
    """Per-example pass rates: their quantiles and how many examples are never, always, sometimes solved."""

    quantiles: Quantiles
    never_solved: int
    always_solved: int
    mixed: int

    def to_data(self) -> dict[str, Any]:
        return {
            "quantiles": self.quantiles.to_data(),
            "never_solved": self.never_solved,
            "always_solved": self.always_solved,
            "mixed": self.mixed,
        }


@dataclass(frozen=True)
class Analysis:
    """Everything the verdicts, recommendations and the report need about one eval run."""

    source: EvalSource
    grouping: str  # what groups rollouts: example_id, task key, prompt (ids wrong), none
    counts: Counts
    functions: tuple[FunctionStats, ...]
    weights_source: str
    correctness_function: str | None
    reward: Distribution
    solved_by: str  # "<function or reward> >= <pass threshold>"
    solve_rate: float | None
    generation_failed_share: float | None  # errored or empty
    reward_without_failed: RewardWithoutFailed
    empty_completion_reward: EmptyCompletionReward
    groups: Groups
    pass_rate_per_example: PassRates | None
    metadata_disagreements: tuple[str, ...]
    # each example's pass rate (read-only; None when no reward is finite), for the group-size estimate
    example_pass_rates: np.ndarray | None = field(default=None, compare=False, repr=False)
    sample: Sample | None = None  # the group figures come from a sample of the examples (``sampling``)

    def function(self, name: str) -> FunctionStats:
        return next(f for f in self.functions if f.name == name)

    def to_data(self) -> dict[str, Any]:
        """The figures as the tool's JSON ``data`` (before verdicts and recommendations)."""
        s = self.source
        d: dict[str, Any] = {
            "shape": s.shape,
            "shape_description": s.description,
            "rollout_identity": s.rollout_identity,
            "file": str(s.path),
            "found_by": s.found_by,
        }
        if s.other_runs:
            d["other_runs_found"] = s.other_runs
        d["metadata"] = s.metadata.to_data()
        if s.metadata_error:
            d["metadata_error"] = s.metadata_error
        d["grouping"] = self.grouping
        d["counts"] = self.counts.to_data()
        d["functions"] = {f.name: f.to_data() for f in self.functions}
        d["weights_source"] = self.weights_source
        d["correctness_function"] = self.correctness_function
        d["reward"] = self.reward.to_data()
        d["solved_by"] = self.solved_by
        d["solve_rate"] = self.solve_rate
        d["generation_failed_share"] = self.generation_failed_share
        d["reward_without_failed"] = dataclasses.asdict(self.reward_without_failed)
        d["empty_completion_reward"] = dataclasses.asdict(self.empty_completion_reward)
        d["groups"] = self.groups.to_data()
        if self.pass_rate_per_example is not None:
            d["pass_rate_per_example"] = self.pass_rate_per_example.to_data()
        d["metadata_disagreements"] = list(self.metadata_disagreements)
        if self.sample is not None:
            d["sample"] = self.sample.to_data()
        return d


def _grouping(source: EvalSource, cols: Columns, example: np.ndarray, prompt: np.ndarray) -> tuple[np.ndarray, str]:
    """The group codes and how they were chosen: ids must identify prompts; 2025 writers numbered ids wrongly."""
    group = example
    grouping = "task key" if source.shape == V1_TRACES else "example_id"
    if cols.n and (prompt >= 0).all() and len(cols.prompt_codes) > 0:
        # distinct (id, prompt) pairs as one integer each (codes are small: no overflow): a 1-D unique, ~10x
        # faster than np.unique(axis=1) over the stacked pair
        width = int(prompt.max()) + 1
        pairs = np.unique(example.astype(np.int64) * width + prompt)
        prompts_per_id = np.bincount(pairs // width)
        if prompts_per_id.max() > 1:
            group = prompt
            grouping = (
                f"prompt (ids do not identify prompts: {int((prompts_per_id > 1).sum())} ids carry several prompts)"
            )
    if cols.missing_example:
        grouping = f"none for {cols.missing_example} rows without an example id (each its own group)"
    return group, grouping


def _functions(cols: Columns, reward: np.ndarray, tally: RowTally) -> tuple[tuple[FunctionStats, ...], str]:
    """Per reward function and metric, with weight and kind; and where the weights came from.
    One column is decoded at a time (the weight fit reads the first WEIGHT_FIT_ROWS rows)."""
    if cols.weights:
        weights: dict[str, float | None] = dict(cols.weights)
        weights_source = "written in the file"
    else:
        head = {name: col.head(WEIGHT_FIT_ROWS) for name, col in cols.fn_cols.items()}
        weights, exact = infer_weights(head, reward[:WEIGHT_FIT_ROWS])
        weights_source = "inferred (reward = sum of weight x score, exact fit)" if exact else "unknown"
    role = "reward" if cols.weights else "reward or metric"
    seen = [
        (name, _distribution(col.decode(), tally, name), weights.get(name), role) for name, col in cols.fn_cols.items()
    ]
    seen += [(name, _distribution(col.decode(), tally, name), None, "metric") for name, col in cols.metric_cols.items()]
    kinds = catalog.function_kinds([function_facts(name, st, w, r) for name, st, w, r in seen])
    functions = {name: FunctionStats(name, st, w, kinds[name], r) for name, st, w, r in seen}
    return tuple(functions.values()), weights_source


def function_facts(name: str, stats: Distribution, weight: float | None, role: str) -> catalog.FunctionFacts:
    """What the catalog's correctness rule needs to know of one function, from its observed scores."""
    return catalog.FunctionFacts(name, weight, catalog.Scores(stats.count, stats.min, stats.max, stats.binary), role)


def analyse(source: EvalSource, cols: Columns, stats: ReadStats) -> Analysis:
    """The figures of every rollout. A rollout is solved when the correctness function (else the reward) reaches
    the pass threshold of ``cols.spec``; completions of at most its ``near_empty_chars`` are near-empty. Beyond
    the columns' row budget, the group figures come from the sample of examples they hold (``sampling``), the
    counts and shares from the tally of every row (``tally``)."""
    tally = cols.finish()
    spec = cols.spec
    n = cols.n
    reward = as_numpy(cols.reward, np.float64)
    example = cols.example_group_codes()
    prompt = as_numpy(cols.prompt, np.int32)
    group, grouping = _grouping(source, cols, example, prompt)
    del example, prompt
    row_keys = as_numpy(cols.row_key, np.int64)
    row_keys.sort()  # in place, the column's last use: duplicates are equal neighbours (no sorted copy)
    duplicates = int(n - 1 - np.count_nonzero(row_keys[1:] != row_keys[:-1])) if n else 0
    del row_keys
    examples = int(np.count_nonzero(np.bincount(group))) if n else 0
    sample = cols.sample(examples)
    fixed_length, turn_limited = 0, tally.turn_limited
    if turn_limited and not tally.turn_limited_with_tools and tally.turn_limited_or_errored == tally.rows:
        fixed_length, turn_limited = turn_limited, 0
    counts = Counts(
        lines=stats.lines,
        rollouts=tally.rows,
        # a sampled file's: rollouts read x examples per rollout held (groups of one size make it exact); so the
        # duplicates (a copy shares its original's example, so both are held or neither)
        examples=round(tally.rows * examples / n) if sample is not None and n else examples,
        errored=tally.errored,
        truncated=tally.truncated,
        turn_limited=turn_limited,
        fixed_length=fixed_length,
        empty_completions=tally.empty,
        near_empty_completions=tally.near_empty,
        completion_length_known=tally.length_known,
        duplicate_rows=round(duplicates * tally.rows / n) if sample is not None and n else duplicates,
        malformed_lines=stats.malformed,
        blank_lines=stats.blank,
        reward_issues=tuple(cols.reward_issues.items()),
        malformed_line_numbers=tuple(stats.malformed_lines),
        truncated_last_line=stats.truncated_last_line,
        other_shape_rows=stats.other_shape_rows,
        episodes=stats.episodes if source.shape == V1_TRACES else None,
        error_kinds=tuple(cols.error_kinds.most_common(5)),
        # A judge template's judge_error metric on a rollout that did not error: the classic Rubric scored the
        # judge's failure 0.0. Counted with the judge failures read from error text (an errored one is there).
        judge_errors=cols.judge_errors.get("error", 0) + tally.judge_flagged,
        judge_scored_zero=tally.judge_flagged,
        judge_refusals=cols.judge_errors.get("refusal", 0),
    )

    functions, weights_source = _functions(cols, reward, tally)
    correct = catalog.correctness_function([function_facts(f.name, f.stats, f.weight, f.role) for f in functions])

    reward_stats = _distribution(reward, tally, REWARD, owned=False)
    if correct is not None:
        hits = solved(cols.fn_cols[correct].decode(), spec.pass_threshold, reward=False, copy=False)
    else:
        hits = solved(reward, spec.pass_threshold, reward=True)
    solved_by = f"{correct or 'reward'} >= {spec.pass_threshold}"
    candidate = correct if correct is not None else REWARD

    groups, pass_rates = group_stats(group, reward, hits)
    per_example = None
    if pass_rates is not None:
        pass_rates.setflags(write=False)
    if pass_rates is not None and pass_rates.size:
        per_example = PassRates(
            quantiles=Quantiles.of(pass_rates),
            never_solved=int((pass_rates <= 0).sum()),
            always_solved=int((pass_rates >= 1).sum()),
            mixed=int(((pass_rates > 0) & (pass_rates < 1)).sum()),
        )

    return Analysis(
        source=source,
        grouping=grouping,
        counts=counts,
        functions=functions,
        weights_source=weights_source,
        correctness_function=correct,
        reward=reward_stats,
        solved_by=solved_by,
        solve_rate=round_figure(tally.solved.get(candidate, 0) / tally.finite) if tally.finite else None,
        generation_failed_share=round_figure(tally.failed / tally.rows) if tally.rows else None,
        reward_without_failed=RewardWithoutFailed(
            mean=round_figure(tally.healthy_sum / tally.healthy) if tally.healthy else None, rollouts=tally.healthy
        ),
        empty_completion_reward=EmptyCompletionReward(
            empty_with_positive_reward=tally.empty_paid,
            empty_solved=tally.empty_solved.get(candidate, 0),
            near_empty_solved=tally.near_empty_solved.get(candidate, 0),
            mean_reward_empty=round_figure(tally.empty_finite_sum / tally.empty_finite) if tally.empty_finite else None,
        ),
        groups=groups,
        pass_rate_per_example=per_example,
        metadata_disagreements=_disagreements(source, groups, counts, reward_stats, sample),
        example_pass_rates=pass_rates,
        sample=sample,
    )


def _distribution(values: np.ndarray, tally: RowTally, name: str, owned: bool = True) -> Distribution:
    """A column's distribution; of a sampled file, with the figures of every row (``tally.Moments``) in place of
    the sample's, its histogram drawn over their range."""
    m = tally.moments.get(name) if tally.moments is not None else None
    if m is None:
        return describe(values, owned=owned)
    if not m.count:
        return Distribution(count=0)
    seen = describe(values, owned=owned, value_range=(m.min, m.max))
    return dataclasses.replace(
        seen,
        count=m.count,
        mean=round_figure(m.mean),
        std=round_figure(m.std),
        min=round_figure(m.min),
        max=round_figure(m.max),
        binary=m.nonbinary == 0,
        share_nonzero=round_figure(m.nonzero / m.count),
    )


def _disagreements(
    source: EvalSource, groups: Groups, counts: Counts, reward: Distribution, sample: Sample | None
) -> tuple[str, ...]:
    """Where the run's metadata and the rows disagree (the rows win). Of a sampled file the examples are an
    estimate, and when rows were cut the groups are partial: those are not compared."""
    meta = source.metadata
    disagree = []
    rpe = groups.rollouts_per_example.most_common if groups.rollouts_per_example is not None else None
    partial = sample is not None and sample.cut
    if meta.rollouts_per_example is not None and rpe is not None and meta.rollouts_per_example != rpe and not partial:
        disagree.append(f"rollouts per example: metadata says {meta.rollouts_per_example}, data has {rpe}")
    if (
        sample is None
        and meta.num_examples is not None
        and meta.num_examples != counts.examples
        and meta.num_examples not in (-1, None)
    ):
        disagree.append(f"examples: metadata says {meta.num_examples}, data has {counts.examples}")
    if isinstance(meta.avg_reward, (int, float)) and reward.mean is not None:
        if abs(meta.avg_reward - reward.mean) > 1e-3:
            disagree.append(f"mean reward: metadata says {meta.avg_reward:.4g}, data has {reward.mean:.4g}")
    return tuple(disagree)
