"""The human report of check_reward_distribution: the figures above the verdict table.

``render_report(report, con)`` prints an ``Analysis`` (or a ``ValidateAnalysis``) on a rich
console, or as plain text when ``con`` is None (rich missing). Verdicts and next steps are
printed by ``vlab.core.console.render_human`` from the result itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlab.evals.analysis import Analysis
from vlab.evals.stats import Histogram, k_data

if TYPE_CHECKING:
    from vlab.evals.validate import ValidateAnalysis


def histogram_lines(hist: Histogram, width: int = 30) -> list[str]:
    """A terminal histogram: one bar per bin."""
    counts, edges = hist.counts, hist.edges
    top = max(counts) or 1
    lines = []
    for i, count in enumerate(counts):
        bar = "█" * int(round(width * count / top))
        lines.append(
            f"  [{edges[i]:>7.3g}, {edges[i + 1]:>7.3g}{']' if i == len(counts) - 1 else ')'} {bar:<{width}} {count}"
        )
    return lines


def report_lines(a: Analysis) -> list[str]:
    """The figures of an analysis as text lines."""
    c, r, g = a.counts, a.reward, a.groups
    source, meta = a.source, a.source.metadata
    out = [f"{source.shape} ({source.description})"]
    out.append(
        f"file: {source.path}"
        + (f"  [newest of {source.other_runs + 1} runs found]" if source.found_by == "search" else "")
    )
    if meta.env or meta.model:
        out.append(f"env: {'?' if meta.env is None else meta.env}  model: {'?' if meta.model is None else meta.model}")
    rpe = g.rollouts_per_example
    rpe_min, rpe_max = (None, None) if rpe is None else (rpe.min, rpe.max)
    rpe_meta = "-" if meta.rollouts_per_example is None else meta.rollouts_per_example
    out.append(
        f"rollouts {c.rollouts}  examples {c.examples}  rollouts/example "
        f"{rpe_min}-{rpe_max} (metadata: {rpe_meta})  "
        f"grouped by {a.grouping}"
    )
    if a.sample is not None:
        sm = a.sample
        out.append(
            f"sampled: more rollouts than --max-rollouts-in-memory {sm.row_budget}; groups, quantiles and "
            f"histograms from {sm.rollouts_kept} rollouts of {sm.examples_kept} examples (1/{1 << sm.shift} of them"
            + (", then cut" if sm.cut else "")
            + "); counts, shares and means over every rollout"
        )
    out.append(
        f"errored {c.errored}  truncated {c.truncated}  out of turns {c.turn_limited}  empty {c.empty_completions}  "
        f"{'duplicates' if source.rollout_identity else 'identical rows'} {c.duplicate_rows}  "
        f"malformed lines {c.malformed_lines}"
    )
    if r.count and r.quantiles is not None:
        q = r.quantiles
        out.append(
            f"reward: mean {r.mean}  std {r.std}  p10 {q.p10}  p50 {q.p50}  p90 {q.p90}  "
            f"min {r.min}  max {r.max}  solved {a.solve_rate} ({a.solved_by})"
        )
        out.extend(histogram_lines(r.histogram))
    for f in a.functions:
        st = f.stats
        if st.count:
            w = f.weight
            out.append(
                f"  {f.name:<28} {f.kind:<11} weight {('?' if w is None else w)!s:<6} mean {st.mean}  "
                f"std {st.std}  {'binary' if st.binary else 'continuous'}"
            )
    s = g.signal
    if s is not None:
        out.append(
            f"group signal: non-zero advantage {s.nonzero_advantage_share}  zero-variance groups "
            f"{s.zero_variance_share} (all-fail {s.all_fail_share}, all-pass {s.all_pass_share})  "
            f"within-group std {s.mean_within_group_std}  pass@k {k_data(s.pass_at_k)}"
        )
    return out


def render_report(report: Analysis | ValidateAnalysis | None, con) -> None:
    """Print the figures of ``report`` (nothing when the check stopped before it had any)."""
    if isinstance(report, Analysis):
        lines = report_lines(report)
    elif report is not None:  # a ValidateAnalysis (vf-validate output)
        lines = [f"{report.source.shape}: {report.tasks} tasks; gold {dict(report.gold)}; noop {dict(report.noop)}"]
    else:
        lines = []
    if con is None:
        for line in lines:
            print(line)
        return
    from rich.markup import escape

    for line in lines:
        con.print(escape(line))


def render(result, con, request, report: Analysis | ValidateAnalysis | None) -> None:
    """The run_request renderer: the typed report that the check returned."""
    render_report(report, con)
