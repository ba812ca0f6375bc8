"""Every threshold diagnose_run uses, in one documented table.

Fractions of the reward range are relative to the range the reward moves in (``[0, 1]``
unless ``--reward-range`` says otherwise or the run leaves it). Windows are the first and
the last ``window_frac`` of the steps (at least ``window_min`` steps, at most ``window_max``).
``references/training-guide.md`` prints this table; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Threshold:
    name: str
    value: float
    meaning: str


TABLE: tuple[Threshold, ...] = (
    # windows and statistics
    Threshold("min_steps", 5, "fewer steps than this: too early to judge trends (the checks are skipped)"),
    Threshold("window_frac", 0.1, "first/last window: this share of the steps"),
    Threshold("window_min", 3, "... but at least this many steps"),
    Threshold("window_max", 200, "... and at most this many steps"),
    Threshold("z", 1.96, "two-sided 95% interval for slopes and window means"),
    # reward level
    Threshold("flat_low", 0.05, "reward flat near zero: last-window mean below this share of the range ..."),
    Threshold("min_rise", 0.05, "... and no rise of this share of the range within the 95% interval"),
    Threshold("saturated", 0.9, "too easy: first-window mean above this share of the range"),
    Threshold("converged", 0.95, "learned: last-window mean above this share of the range after rising"),
    # instability
    Threshold("collapse_rise", 0.1, "rise then collapse: the smoothed reward first rose this share of the range ..."),
    Threshold("collapse_drop", 0.5, "... then lost this share of that rise ..."),
    Threshold("collapse_steps", 3, "... for at least this many steps, beyond 3 standard errors"),
    Threshold("swing_ratio", 2.0, "swings: mean squared deviation from the running median, in group-noise units ..."),
    Threshold("swing_count", 3, "... and at least this many steps beyond 3 noise standard errors ..."),
    Threshold("swing_share", 0.05, "... and at least this share of the steps (noise alone: under 0.3%)"),
    # zero-advantage groups
    Threshold("zero_adv_high", 0.5, "zero-advantage share (groups all pass or all fail): warn above this"),
    Threshold("zero_adv_fail", 0.8, "... fail above this"),
    Threshold("rise_share", 0.2, "a share (zero-advantage, truncation) rising this much from first to last window"),
    # length and truncation
    Threshold("truncation_high", 0.5, "truncated share above this while the reward is not rising: warn"),
    Threshold("truncation_fail", 0.3, "truncated share rising to above this: fail"),
    Threshold(
        "turn_limit_high",
        0.1,
        "share of rollouts that ran out of turns (cut by the turn limit mid tool use or mid game): warn above",
    ),
    Threshold("turn_limit_fail", 0.5, "... fail above (most rollouts ran out of turns)"),
    Threshold("length_explode", 2.0, "completion length: last/first window median ratio above this"),
    Threshold("length_collapse", 0.5, "completion length: last/first window median ratio below this"),
    # entropy and gradients
    Threshold("entropy_collapse", 0.3, "entropy: last/first window ratio below this while the reward does not rise"),
    Threshold("entropy_sudden", 0.5, "entropy: one step losing this share of its level"),
    Threshold("grad_spike", 10.0, "gradient norm above this many times the median of its previous 10 logged values"),
    Threshold("grad_spikes_fail", 3, "this many gradient-norm spikes: fail (fewer: warn)"),
    # errors and throughput
    Threshold("errors_warn", 0.05, "share of rollouts with an environment error: warn above"),
    Threshold("errors_fail", 0.2, "... fail above"),
    Threshold("judge_errors_warn", 0.02, "share of rollouts whose judge gave no verdict (judge_error): warn above"),
    Threshold("judge_errors_fail", 0.1, "... fail above (those rollouts' zeros are not the policy's)"),
    Threshold("throughput_drop", 0.5, "tokens/s: last/first window median ratio below this"),
    # eval
    Threshold("eval_min_points", 3, "eval reward needs this many evaluations to compare with train reward"),
    Threshold("eval_gap", 0.1, "train reward rose this share of the range while eval reward did not rise"),
    # stop conditions
    Threshold("baseline_steps", 5, "baseline: the mean reward of this many first steps"),
    Threshold("stop_by_frac", 0.25, "no-rise stop: judged at this share of max_steps (between 10 and 50 steps)"),
    Threshold("stop_below_frac", 0.1, "below-baseline stop: this share of max_steps in a row (between 5 and 20)"),
    Threshold("stop_smooth", 5, "stop conditions on the reward use its mean over this many last steps"),
)

T: dict[str, float] = {t.name: t.value for t in TABLE}


def markdown_table() -> str:
    """The table as Markdown, as references/training-guide.md prints it."""
    lines = ["| threshold | value | meaning |", "|---|---|---|"]
    for t in TABLE:
        value = int(t.value) if float(t.value).is_integer() else t.value
        lines.append(f"| `{t.name}` | {value} | {t.meaning} |")
    return "\n".join(lines)
