"""Verdicts: pure functions of an ``Analysis`` and the ``Thresholds``.

``judge_input`` decides whether the file is readable at all (exit 2 when not), ``judge`` adds
every verdict with its explained threshold and returns the blocking ones. The prime-rl
settings recommended from the same figures are in ``recommend``. GRPO learns only from groups
whose rewards differ, so group signal decides. (vf-validate output: ``validate``.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from vlab import catalog
from vlab.core.invocation import command
from vlab.core.result import Result, UsageError
from vlab.evals.analysis import Analysis
from vlab.evals.source import eval_command, max_tokens_flag


def _option(default: Any, kind: str, help: str) -> Any:
    """A threshold that is also a command-line option of check_reward_distribution (see Thresholds.options)."""
    return dataclasses.field(default=default, metadata={"kind": kind, "help": help})


@dataclass(frozen=True)
class Thresholds:
    """The numbers every verdict and recommendation is judged by: their one home.

    SKILL.md (step 6) quotes max_truncated, warn_truncated, max_turn_limited and group_gain; tests/test_check_reward_distribution.py
    checks the quotes against these defaults; the evaluation guide quotes same_answer_groups and majority_margin
    (tests/test_class_labels.py checks those).

    max_truncated: more than this share of truncated rollouts blocks training (their rewards measure the token
    budget, not the task); warn_truncated: more than this warns. max_turn_limited: more than this share of
    rollouts ended by the environment's turn limit before they were over (still calling tools, a multi-turn
    game cut short) blocks training ("ran out of
    turns": their rewards measure the turn limit); warn_turn_limited: more than this warns. group_gain: a group size is recommended when
    doubling it would add fewer than this share of groups whose rewards differ (the table's own figures).
    same_answer_groups: from this share of groups whose rollouts all give the same answer, say so;
    majority_margin: a solve rate this close to the majority class's share warns that a constant answer
    would score the same (vlab.evals.answers).
    """

    min_rollouts: int = _option(32, "int1", "fewer is too few samples ({default})")
    min_examples: int = _option(8, "int1", "fewer is too few samples ({default})")
    pass_threshold: float = _option(
        0.5, "real", "score at or above which a rollout counts as solved ({default}, as verifiers)"
    )
    failed_share: float = _option(0.5, "share", "share of errored/empty rollouts meaning generation failed ({default})")
    warn_failed_share: float = 0.05  # not an option
    too_easy: float = _option(0.9, "share", "solve rate that is too easy ({default})")
    min_signal: float = _option(0.2, "share", "least share of rollouts with a non-zero GRPO advantage ({default})")
    near_empty_chars: int = _option(3, "int0", "completions this short count as near-empty ({default})")
    max_truncated: float = _option(
        0.1,
        "share",
        "share of truncated rollouts above which training is blocked until max tokens are raised ({default})",
    )
    warn_truncated: float = _option(0.05, "float", "share of truncated rollouts that warns ({default})")
    max_turn_limited: float = _option(
        0.5,
        "share",
        "share of rollouts ended by the turn limit before they were over (mid tool use, a game cut short) "
        "above which training is blocked ({default})",
    )
    warn_turn_limited: float = _option(0.1, "share", "share of rollouts ended by the turn limit that warns ({default})")
    group_gain: float = _option(
        0.05,
        "float",
        "the group size recommended is the smallest whose doubling adds less than this share of groups "
        "with differing rewards ({default})",
    )
    max_malformed: float = _option(
        0.05, "share", "share of malformed lines tolerated before the file counts as unreadable ({default})"
    )
    max_bad_rewards: float = _option(
        0.05,
        "share",
        "share of rows without a numeric reward tolerated before the file counts as unreadable ({default})",
    )
    same_answer_groups: float = _option(
        0.8, "share", "share of groups whose rollouts all give the same answer that warns ({default})"
    )
    majority_margin: float = _option(
        0.05,
        "share",
        "a solve rate this close to the majority class's share warns that a constant answer would "
        "score the same ({default})",
    )

    @classmethod
    def options(cls) -> list[tuple[str, Any, str, str]]:
        """(field name, default, kind, help) of every threshold given as a command-line option
        (``--field-name``): kind is int1 / int0 (integers from 1 / 0), real, share (0..1) or float."""
        return [
            (f.name, f.default, f.metadata["kind"], f.metadata["help"].format(default=f.default))
            for f in dataclasses.fields(cls)
            if "kind" in f.metadata
        ]

    def validate(self) -> None:
        for name in (
            "failed_share",
            "warn_failed_share",
            "too_easy",
            "min_signal",
            "max_truncated",
            "warn_truncated",
            "max_turn_limited",
            "warn_turn_limited",
            "group_gain",
            "max_malformed",
            "max_bad_rewards",
            "same_answer_groups",
            "majority_margin",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"--{name.replace('_', '-')} must be between 0 and 1 (got {value})")
        if self.warn_truncated > self.max_truncated:
            raise UsageError("--warn-truncated must not be above --max-truncated")
        if self.warn_turn_limited > self.max_turn_limited:
            raise UsageError("--warn-turn-limited must not be above --max-turn-limited")
        if self.min_rollouts < 1 or self.min_examples < 1 or self.near_empty_chars < 0:
            raise UsageError("--min-rollouts and --min-examples must be >= 1, --near-empty-chars >= 0")

    def to_data(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- verdicts ----------------------------------------------------------------------


def judge_input(a: Analysis, th: Thresholds, result: Result) -> None:
    """Bad input: too many malformed lines or unusable rewards end the run with exit 2."""
    c, path = a.counts, a.source.path
    rows = c.rollouts + c.malformed_lines
    if c.rollouts == 0:
        raise UsageError(
            f"{path}: no readable rollouts ({c.malformed_lines} malformed lines)",
            hint="each line must be one JSON object with a reward",
        )
    share = c.malformed_lines / rows if rows else 0.0
    where = f" (lines {', '.join(map(str, c.malformed_line_numbers))})" if c.malformed_lines else ""
    if share > th.max_malformed:
        raise UsageError(
            f"{path}: {c.malformed_lines} of {rows} lines are not valid JSON objects{where}",
            hint=f"more than {th.max_malformed:.0%} malformed: the file is damaged or not eval results",
        )
    bad_input = c.reward_issue_count("missing", "string", "not-a-number")
    if bad_input / c.rollouts > th.max_bad_rewards:
        kinds = ", ".join(f"{v} {k}" for k, v in c.reward_issues)
        raise UsageError(
            f"{path}: rewards unusable in {bad_input} of {c.rollouts} rows ({kinds})",
            hint="each row needs a numeric `reward`; string or missing rewards mean this file was not "
            "written by vf-eval or was edited",
        )
    notes = []
    if c.malformed_lines:
        notes.append(f"skipped {c.malformed_lines} malformed line(s){where}")
    if c.truncated_last_line:
        notes.append("the last line has no newline (file still being written, or the run was killed)")
    if bad_input:
        notes.append(f"skipped {bad_input} row(s) without a numeric reward")
    if c.other_shape_rows:
        notes.append(f"skipped {c.other_shape_rows} row(s) of another shape")
    msg = f"{a.source.shape}: {a.source.description}; {c.rollouts} rollouts from {path}"
    if notes:
        result.warn("input", msg + "; " + "; ".join(notes), hint="check how the file was written; re-run the eval")
    else:
        result.passed("input", msg)
    if a.source.metadata_error:
        result.warn("metadata", a.source.metadata_error, hint="the figures come from the rows; metadata was ignored")
    elif a.metadata_disagreements:
        result.warn(
            "metadata",
            "data and metadata disagree: " + "; ".join(a.metadata_disagreements),
            hint="the figures here come from the rows themselves; trust them over metadata",
        )


def judge(a: Analysis, th: Thresholds, result: Result) -> list[str]:
    """Add every verdict to ``result``; return the ids of blocking ones."""
    c = a.counts
    n = c.rollouts
    blocking: list[str] = []

    def fail(id_, msg, hint):
        result.fail(id_, msg, hint)
        blocking.append(id_)

    # Too few samples.
    if n < th.min_rollouts or c.examples < th.min_examples:
        fail(
            "samples",
            f"too few samples to judge: {n} rollouts over {c.examples} examples "
            f"(need >= {th.min_rollouts} rollouts and >= {th.min_examples} examples)",
            f"re-run the eval larger, e.g. `{eval_command(a.source.shape, max(th.min_examples, 50))}` "
            "(thresholds: --min-rollouts, --min-examples)",
        )
    else:
        result.passed("samples", f"{n} rollouts over {c.examples} examples")

    # The judge failed (no verdict, a refusal): a reward-side failure, neither a zero reward nor a generation one.
    judged = c.judge_errors + c.judge_refusals
    if judged:
        share = judged / n if n else 0.0
        (fail if share >= th.failed_share else result.warn)(
            "judge",
            f"{judged} rollouts ({share:.0%}) failed in the judge: {c.judge_refusals} refusals, "
            f"{c.judge_errors} replies without a verdict (counted apart from zero rewards"
            + (
                f"; {c.judge_scored_zero} of them scored 0 with {catalog.JUDGE_ERROR_METRIC} set)"
                if c.judge_scored_zero
                else ")"
            ),
            "read those rows' `error`; check the judge model, prompt and verdict format with "
            "test_reward --judge stub, then against the real judge (--judge-base-url)",
        )

    # Generation failed (errors, empty completions) rather than a reward problem.
    errored_in_judge = judged - c.judge_scored_zero  # those are in generation_failed_share's errored count
    failed_share = max(0.0, (a.generation_failed_share or 0.0) - (errored_in_judge / n if n else 0.0))
    generation_failed = failed_share >= th.failed_share
    if generation_failed:
        fail(
            "generation",
            f"generation failed, not a reward problem: {failed_share:.0%} of rollouts errored "
            f"({c.errored}) or have empty completions ({c.empty_completions})"
            + (f"; errors: {', '.join(kind for kind, _ in c.error_kinds)}" if c.error_kinds else ""),
            "fix the model endpoint / sampling first (API key, base URL, model name, max tokens); "
            "then re-run the eval - rewards of empty completions say nothing about the environment",
        )
    elif failed_share > th.warn_failed_share:
        result.warn(
            "generation",
            f"{failed_share:.0%} of rollouts errored ({c.errored}) or are empty ({c.empty_completions})",
            "look at the failed rows' `error` before training",
        )
    else:
        result.passed("generation", f"{c.errored} errored, {c.empty_completions} empty completions")

    # NaN / null rewards: the reward function itself is broken.
    broken = c.reward_issue_count("nan", "null")
    if broken:
        msg = f"reward is NaN or null in {broken} rollout(s) that did not error"
        if broken / n > th.max_bad_rewards:
            fail(
                "reward-values",
                msg,
                "a reward function returns NaN/None: fix it (training would crash or "
                "learn nothing from those rollouts)",
            )
        else:
            result.warn("reward-values", msg, "a reward function sometimes returns NaN/None: guard it")

    # Truncation: a truncated rollout scores its token budget, not the task.
    truncated = c.truncated / n if n else 0.0
    if truncated > th.max_truncated:
        fail(
            "truncation",
            f"{truncated:.0%} of rollouts were truncated (more than {th.max_truncated:.0%}): their rewards measure "
            "the token budget, not the task",
            "raise the max tokens and re-run the eval before training: [orchestrator.train.sampling] "
            f"max_completion_tokens ([sampling] max_tokens), `{eval_command(a.source.shape)} "
            f"{max_tokens_flag(a.source.shape)} N` (threshold: --max-truncated)",
        )
    elif truncated > th.warn_truncated:
        result.warn(
            "truncation",
            f"{truncated:.0%} of rollouts were truncated",
            "raise [orchestrator.train.sampling] max_completion_tokens ([sampling] max_tokens)",
        )
    elif n:
        result.passed("truncation", f"{c.truncated} of {n} rollouts truncated")

    # The turn limit: a rollout it ended before it was over (mid tool use, a game cut short) scores the limit.
    turned = c.turn_limited / n if n else 0.0
    if turned > th.max_turn_limited:
        fail(
            "turn-limit",
            f"ran out of turns: {turned:.0%} of rollouts were ended by the environment's turn limit before they were "
            f"over (still calling tools, or a multi-turn game cut at its limit; more than {th.max_turn_limited:.0%}); "
            "their rewards measure the turn limit, not the task",
            "raise max_turns (classic vf.ToolEnv/MultiTurnEnv, the task's turn-limit stop, v1 agent max_turns) if the "
            "model needs more turns, or fix the tool or prompt that keeps it going; re-run the eval (threshold: --max-turn-limited)",
        )
    elif turned > th.warn_turn_limited:
        result.warn(
            "turn-limit",
            f"{turned:.0%} of rollouts ran out of turns (ended by the turn limit before they were over)",
            "look at those rollouts: a tool that never satisfies the model, or too few turns",
        )
    elif c.turn_limited:
        result.passed("turn-limit", f"{c.turn_limited} of {n} rollouts ran out of turns")
    elif c.fixed_length:
        result.passed(
            "turn-limit",
            f"every rollout ({c.fixed_length}) ran to the turn limit without a tool call: read as a conversation of "
            "fixed length, not as rollouts cut short (a game that no rollout finished shows in its rewards)",
        )

    # Duplicates.
    if c.duplicate_rows:
        if a.source.rollout_identity:
            result.warn(
                "duplicates",
                f"{'about ' if a.sample else ''}{c.duplicate_rows} duplicated row(s) (same rollout written twice, "
                "e.g. a resumed run)",
                "de-duplicate the file; the figures count each copy",
            )
        else:
            result.passed(
                "duplicates",
                f"{'about ' if a.sample else ''}{c.duplicate_rows} identical row(s): this shape has no per-rollout "
                "field, so identical rollouts cannot be told from copies",
            )
    r = a.reward
    if generation_failed or not r.count:
        why = (
            "generation failed, so these rewards do not measure the environment"
            if generation_failed
            else "no rollout has a finite reward"
        )
        for id_ in ("reward-positive", "difficulty", "empty-reward", "correctness", "group-signal"):
            result.skip(id_, f"not judged: {why}", "fix that first and re-run the eval")
        return blocking

    # Reward never above zero.
    if r.count and (r.max or 0) <= 0:
        fail(
            "reward-positive",
            f"reward never above zero in {r.count} scored rollouts: "
            + (
                f"{c.turn_limited} of them ran out of turns (see turn-limit)"
                if c.turn_limited > n * th.max_turn_limited
                else "the task is too hard for this model, or the reward is broken"
            ),
            f"score a known-good answer ({command('test_reward')}) to tell which; "
            "if the reward works, use an easier subset or a stronger model",
        )
    else:
        result.passed("reward-positive", f"reward above zero in {r.share_nonzero or 0:.0%} of rollouts")

    # Too easy.
    solve = a.solve_rate
    if solve is not None and solve >= th.too_easy:
        fail(
            "difficulty",
            f"reward at or near maximum: {solve:.0%} of rollouts solved ({a.solved_by}): "
            "too easy, little left to learn",
            "use harder examples or a smaller model (threshold: --too-easy)",
        )
    elif solve is not None:
        result.passed("difficulty", f"{solve:.0%} of rollouts solved ({a.solved_by})")

    # High reward earned by empty or near-empty completions.
    e = a.empty_completion_reward
    if e.empty_with_positive_reward or e.empty_solved:
        fail(
            "empty-reward",
            f"{e.empty_with_positive_reward} empty completion(s) earn a positive reward "
            f"(mean {e.mean_reward_empty}), {e.empty_solved} count as solved: the reward is broken or "
            "hackable",
            "make every reward function return 0 for an empty answer; check which one pays",
        )
    elif e.near_empty_solved:
        result.warn(
            "empty-reward",
            f"{e.near_empty_solved} near-empty completion(s) (<= {th.near_empty_chars} characters) count as solved",
            "fine for one-token answers (a letter, a label); otherwise the "
            "reward is hackable (threshold: --near-empty-chars)",
        )
    elif c.completion_length_known:
        result.passed("empty-reward", "no empty completion earns a reward")
    else:
        result.skip("empty-reward", "completions are not in this file", "")

    # Correctness never achieved although a format bonus makes the total look healthy.
    correct = a.correctness_function
    if correct is not None:
        cf = a.function(correct).stats
        others = [f.name for f in a.functions if f.name != correct and f.kind in ("format", "shaping")]
        if (cf.max or 0) <= 0 and (r.max or 0) > 0:
            fail(
                "correctness",
                f"correctness ({correct}) is never achieved, although the total reward averages "
                f"{r.mean} from {', '.join(others) or 'other functions'}: the model learns only the bonus",
                "lower the format weight or drop it, make the task easier, or use a stronger model",
            )
        else:
            result.passed(
                "correctness",
                f"{correct} looks like correctness (mean {cf.mean}); "
                + (f"format/shaping: {', '.join(others)}" if others else "no other reward functions"),
            )
    elif a.functions:
        result.warn(
            "correctness",
            "no reward function looks like correctness (binary, weight 1)",
            "name the correctness reward clearly (e.g. correct_answer) or check the weights",
        )
    else:
        result.skip("correctness", "the file has only a total reward, no per-function scores", "")

    # Group signal.
    s = a.groups.signal
    if s is None:
        result.warn(
            "group-signal",
            "one rollout per example: group signal cannot be measured "
            "(GRPO learns only from groups whose rewards differ)",
            f"re-run the eval with -r 4 or more (`{eval_command(a.source.shape)}`)",
        )
    else:
        share = s.nonzero_advantage_share
        msg = (
            f"{share:.0%} of rollouts carry a non-zero GRPO advantage; {s.zero_variance_share:.0%} of groups "
            f"have zero reward variance ({s.all_fail_share:.0%} all-fail, {s.all_pass_share:.0%} all-pass); "
            f"mean within-group std {s.mean_within_group_std}"
        )
        if share < th.min_signal:
            fail(
                "group-signal",
                "too little group signal: " + msg,
                "most steps would train on nothing: change difficulty or model, raise orchestrator.group_size, "
                "and set orchestrator.train.filter_zero_advantages = true (threshold: --min-signal)",
            )
        elif share < 2 * th.min_signal:
            result.warn("group-signal", msg, "expect slow learning; see the recommendations")
        else:
            result.passed("group-signal", msg)

    return blocking
