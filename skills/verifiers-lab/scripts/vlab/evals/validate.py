"""vf-validate output (verifiers 0.4): model-free checks, not rollouts.

``read_validate_rows`` reads its per-task rows (``ValidateRow``), ``analyse_validate`` counts their outcomes
(gold: the reference answer must pass; noop: an untouched task must not), ``judge_validate``
turns them into verdicts. With no model rollouts there is no verdict on training.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from vlab.core.invocation import command
from vlab.core.result import Result, UsageError
from vlab.evals import chunks
from vlab.evals.fields import MISSING_MS, msgspec
from vlab.evals.read import ReadStats
from vlab.evals.source import V1_TRACES, V1_VALIDATE, EvalSource, detect_shape, eval_command
from vlab.evals.stats import round_figure

if msgspec is not None:  # built in C: a file of 200,000 tasks makes 600,000 of these

    class ValidateOutcome(msgspec.Struct, frozen=True, gc=False):
        """One vf-validate check of a task (gold: the reference answer; noop: the untouched task)."""

        reason: str  # passed / invalid / error / unchecked ...
        rewards: tuple[tuple[str, float], ...]  # numeric per-function rewards (read for noop only)

    class ValidateRow(msgspec.Struct, frozen=True, gc=False):
        """One task of a vf-validate results.jsonl."""

        index: Any
        gold: ValidateOutcome | None
        noop: ValidateOutcome | None

else:  # pragma: no cover - exercised where msgspec is absent

    class ValidateOutcome(NamedTuple):
        reason: str
        rewards: tuple[tuple[str, float], ...]

    class ValidateRow(NamedTuple):
        index: Any
        gold: ValidateOutcome | None
        noop: ValidateOutcome | None


def _validate_outcome(row: dict, mode: str) -> ValidateOutcome | None:
    """The ``mode`` check of a row: its own object, or the row itself when the row is that check alone."""
    sub = row.get(mode) if isinstance(row.get(mode), dict) else (row if row.get("mode") == mode else None)
    if sub is None:
        return None
    rewards = ()
    if mode == "noop":  # only the untouched task's rewards are judged
        rewards = tuple(
            (fn, float(score)) for fn, score in (sub.get("rewards") or {}).items() if isinstance(score, (int, float))
        )
    return ValidateOutcome(str(sub.get("reason")), rewards)


def _decoded_outcome(row: Any, sub: Any, mode: str) -> ValidateOutcome | None:
    """``_validate_outcome`` of a decoded ``_Line`` (``sub``: its ``mode`` check, a ``_Check`` when an object)."""
    if type(sub) is not _Check:
        if row.mode != mode:
            return None
        sub = row
    rewards = sub.rewards
    # typed as numbers (msgspec makes an integer a float, as float() does; any other value sends the chunk to json)
    return ValidateOutcome(str(sub.reason), tuple(rewards.items()) if mode == "noop" and rewards else ())


if msgspec is not None:
    # the fields the reader needs (gc=False: decoded JSON makes no cycles); a check that is not an object sends its
    # chunk to json
    class _Check(msgspec.Struct, gc=False):
        reason: Any = None
        rewards: dict[str, float] | None = None

    class _Line(_Check, gc=False):
        index: Any = None
        mode: Any = MISSING_MS
        task_key: Any = MISSING_MS
        gold: _Check | None | msgspec.UnsetType = MISSING_MS
        noop: _Check | None | msgspec.UnsetType = MISSING_MS
        task: Any = MISSING_MS
        traces: Any = None

else:  # pragma: no cover - exercised where msgspec is absent

    class _Check:
        pass


def _is_validate_line(row: Any) -> bool:
    """``source.detect_shape`` of a decoded ``_Line`` is v1-validate."""
    if isinstance(row.traces, list) and row.task is not MISSING_MS:
        return False
    return row.task_key is not MISSING_MS and not (row.gold is row.noop is row.mode is MISSING_MS)


def read_validate_rows(source: EvalSource, stats: ReadStats | None = None) -> Iterator[ValidateRow]:
    """The per-task rows of a vf-validate results.jsonl (one per task), a chunk of lines decoded at a time (msgspec;
    a chunk it rejects, and every line without msgspec, by json)."""
    stats = stats if stats is not None else ReadStats()
    decoder = msgspec.json.Decoder(_Line) if msgspec is not None else None
    for chunk in chunks.line_chunks(source.path, stats):
        rows = None
        if decoder is not None:
            try:
                rows = chunk.decode(decoder)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
                rows = None
        if rows is not None and len(rows) == chunk.count:  # no blank line
            for row in rows:
                if _is_validate_line(row):
                    yield ValidateRow(
                        row.index, _decoded_outcome(row, row.gold, "gold"), _decoded_outcome(row, row.noop, "noop")
                    )
                else:
                    stats.other_shape_rows += 1
            continue
        for lineno, raw in chunk.numbered(stats):
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                stats.note_malformed(lineno)
                continue
            if not isinstance(obj, dict) or detect_shape(obj) != V1_VALIDATE:
                stats.other_shape_rows += 1
                continue
            yield ValidateRow(obj.get("index"), _validate_outcome(obj, "gold"), _validate_outcome(obj, "noop"))


@dataclass(frozen=True)
class ValidateAnalysis:
    """vf-validate rows: gold (reference answer scores) and noop (an untouched task must not pass)."""

    source: EvalSource
    tasks: int
    gold: tuple[tuple[str, int], ...]  # (reason, tasks)
    noop: tuple[tuple[str, int], ...]
    noop_reward_means: tuple[tuple[str, float | None], ...]  # per reward function
    passing_untouched: tuple[Any, ...]  # indices of tasks an untouched answer passes

    def gold_count(self, reason: str) -> int:
        return dict(self.gold).get(reason, 0)

    def to_data(self) -> dict[str, Any]:
        return {
            "shape": self.source.shape,
            "shape_description": self.source.description,
            "file": str(self.source.path),
            "tasks": self.tasks,
            "gold": dict(self.gold),
            "noop": dict(self.noop),
            "noop_reward_means": dict(self.noop_reward_means),
            "metadata": self.source.metadata.to_data(),
        }


def analyse_validate(source: EvalSource, rows: Iterable[ValidateRow]) -> ValidateAnalysis:
    gold: Counter = Counter()
    noop: Counter = Counter()
    noop_rewards: dict[str, list[float]] = {}
    passing_untouched = []
    tasks = 0
    for row in rows:
        tasks += 1
        if row.gold is not None:
            gold[row.gold.reason] += 1
        if row.noop is not None:
            noop[row.noop.reason] += 1
            for fn, score in row.noop.rewards:
                noop_rewards.setdefault(fn, []).append(score)
            if row.noop.reason == "invalid":
                passing_untouched.append(row.index)
    if not tasks:
        raise UsageError(f"{source.path}: no vf-validate rows", hint="re-run vf-validate")
    return ValidateAnalysis(
        source=source,
        tasks=tasks,
        gold=tuple(gold.items()),
        noop=tuple(noop.items()),
        noop_reward_means=tuple((k, round_figure(sum(v) / len(v))) for k, v in noop_rewards.items()),
        passing_untouched=tuple(passing_untouched),
    )


def judge_validate(v: ValidateAnalysis, result: Result) -> None:
    """vf-validate verdicts: an untouched task must not pass, the gold answer must; and no
    model rollouts means no verdict on training."""
    source = v.source
    result.passed("input", f"{source.shape}: {source.description}; {v.tasks} tasks from {source.path}")
    if v.passing_untouched:
        result.fail(
            "noop",
            f"{len(v.passing_untouched)} task(s) reach full reward untouched (no answer given): "
            f"the reward is hackable (tasks {list(v.passing_untouched[:10])})",
            "make the reward require an actual answer",
        )
    elif v.noop:
        result.passed("noop", f"untouched tasks score below 1.0 ({dict(v.noop)})")
    if v.gold_count("invalid") or v.gold_count("error"):
        result.fail(
            "gold",
            f"the reference answer does not pass in {v.gold_count('invalid')} task(s) and errors in "
            f"{v.gold_count('error')}: the reward or the gold answer is wrong",
            "fix Task.validate or the reward",
        )
    elif v.gold_count("unchecked"):
        result.warn(
            "gold",
            f"gold answer unchecked for {v.gold_count('unchecked')} task(s): the taskset defines no Task.validate",
            "add a validate() hook so vf-validate can check the reward against the answer",
        )
    result.fail(
        "rollouts",
        "vf-validate output holds model-free checks, not model rollouts: it cannot say whether "
        "training would learn anything",
        f"run an eval with several rollouts per task and check it: {eval_command(V1_TRACES)}, "
        f"then {command('check_reward_distribution')} --results outputs/<run>",
    )
