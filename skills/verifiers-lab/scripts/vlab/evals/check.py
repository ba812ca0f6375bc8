"""The whole check behind check_reward_distribution: locate, read, analyse, judge, recommend.

``check_reward_distribution(request, result)`` fills ``result`` (checks, JSON data, summary,
next steps) and returns the typed report (``Analysis`` or ``ValidateAnalysis``) for the
human rendering (``render.render_report``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vlab.core.console import log
from vlab.core.result import Result
from vlab.evals.analysis import Analysis, analyse
from vlab.evals.answers import judge_answers, read_answers
from vlab.evals.batches import no_cycle_collection
from vlab.evals.columns import collect_beside
from vlab.evals.read import ReadStats
from vlab.evals.recommend import recommend
from vlab.evals.sampling import DEFAULT_ROW_BUDGET
from vlab.evals.source import V1_VALIDATE, EvalSource, locate
from vlab.evals.tally import TallySpec
from vlab.evals.verdicts import Thresholds, judge, judge_input

if TYPE_CHECKING:
    from vlab.evals.validate import ValidateAnalysis


@dataclass(frozen=True)
class CheckRequest:
    results: str | None = None  # a results file or run folder; None: the newest run found
    search_dirs: tuple[str, ...] | None = None  # where to look for it (None: ./outputs, ./environments/*/outputs)
    thresholds: Thresholds = Thresholds()
    plot: str | None = None  # draw the reward and pass-rate histograms here (needs matplotlib)
    force: bool = False  # replace an existing plot file
    row_budget: int = DEFAULT_ROW_BUDGET  # rollouts held in memory; beyond, the groups of a sample (``sampling``)

    def __post_init__(self) -> None:
        self.thresholds.validate()  # bad thresholds are a UsageError (exit 2) before anything is read


def check_reward_distribution(request: CheckRequest, result: Result) -> Analysis | ValidateAnalysis:
    """Read, analyse, judge and recommend; fill ``result``; draw the plot asked for. Raises
    UsageError (exit 2) for bad thresholds, missing or unreadable results."""
    source = locate(request.results, request.search_dirs)
    log(f"reading {source.path} ({source.shape})")
    report = _check(source, request.thresholds, result, request.row_budget)
    if request.plot:
        from vlab.diagnose.plots import draw_eval

        rates = getattr(report, "example_pass_rates", None)  # the analysis' own (none for vf-validate output)
        draw_eval(result, source, request.plot, request.force, None if rates is None else rates.tolist())
    return report


def _check(source: EvalSource, th: Thresholds, result: Result, row_budget: int) -> Analysis | ValidateAnalysis:
    stats = ReadStats()
    if source.shape == V1_VALIDATE:
        from vlab.evals.validate import analyse_validate, judge_validate, read_validate_rows  # that shape's alone

        with no_cycle_collection():
            validation = analyse_validate(source, read_validate_rows(source, stats))
        judge_validate(validation, result)
        result.data = validation.to_data()
        result.summary = "vf-validate output: no model rollouts to judge"
        return validation
    spec = TallySpec(pass_threshold=th.pass_threshold, near_empty_chars=th.near_empty_chars)
    # the answers pass reads the file's first rows again: in a reading process while the others read a large file
    with no_cycle_collection():
        cols, answers = collect_beside(source, functools.partial(read_answers, source), stats, spec, row_budget)
    analysis = analyse(source, cols, stats)
    judge_input(analysis, th, result)
    blocking = judge(analysis, th, result)
    judge_answers(answers, analysis.solve_rate, th, result)
    recs = recommend(analysis, th)
    result.data = {
        **analysis.to_data(),
        "recommendations": [rec.to_data() for rec in recs],
        "thresholds": th.to_data(),
        "blocking_verdicts": blocking,
        "answers": answers.to_data() if answers else None,
    }
    result.summary = (
        ("not worth starting training yet: " + ", ".join(blocking)) if blocking else "worth starting training"
    )
    for rec in recs:
        result.step(rec.step_text())
    return analysis
