#!/usr/bin/env python3
"""Read eval results and say whether training on this environment, with this model, is worth starting."""

from __future__ import annotations

import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.evals.check import CheckRequest, check_reward_distribution
from vlab.evals.render import render
from vlab.evals.verdicts import Thresholds

DESCRIPTION = """\
Will this environment teach the model anything? GRPO-style training learns only from groups
of rollouts whose rewards differ. This reads eval results (streaming, any size) and reports:
counts (rollouts, examples, rollouts per example, errors, truncation, empty completions,
duplicates), reward statistics and a histogram per reward function and metric, which function
looks like correctness and which like format/shaping, pass@k, group signal (zero-variance
groups split into all-fail / all-pass, share of rollouts with a non-zero advantage), verdicts,
and prime-rl settings to use (current keys, older names in brackets).

Reads every shape verifiers writes and says which it found:
  classic-vf-eval        verifiers 0.3.x vf-eval -s: results.jsonl + metadata.json
  classic-vf-eval-2025   2025 vf-eval rows (id/example_id, flattened metrics, generation_ms)
  v1-traces              verifiers 0.4 vf-eval traces.jsonl (episodes with traces)
  v1-validate            verifiers 0.4 vf-validate results (model-free checks only)
  plain-jsonl            JSON Lines of {example_id, reward, ...}

Exit 0: training is worth starting. Exit 1: a verdict blocks it. Exit 2: unreadable input.
"""

EPILOG = """\
examples:
  %(prog)s                       # newest run under ./outputs
  %(prog)s --results outputs/evals/my-env--my-model/1a2b3c4d
  %(prog)s --results traces.jsonl --json
  %(prog)s --results results.jsonl --min-signal 0.3 --too-easy 0.8
"""


def build_parser():
    parser = make_parser("check_reward_distribution", DESCRIPTION, EPILOG)
    parser.add_argument("--results", metavar="PATH", help="results file or eval run folder (default: newest run found)")
    parser.add_argument(
        "--search-dir",
        metavar="DIR",
        action="append",
        help="where to look for the newest run (repeatable; default ./outputs and ./environments/*/outputs)",
    )
    t = Thresholds()
    g = parser.add_argument_group("verdict thresholds")
    g.add_argument(
        "--min-rollouts",
        type=numbers.integer(1),
        default=t.min_rollouts,
        help=f"fewer is too few samples ({t.min_rollouts})",
    )
    g.add_argument(
        "--min-examples",
        type=numbers.integer(1),
        default=t.min_examples,
        help=f"fewer is too few samples ({t.min_examples})",
    )
    g.add_argument(
        "--pass-threshold",
        type=numbers.real(),
        default=t.pass_threshold,
        help=f"score at or above which a rollout counts as solved ({t.pass_threshold}, as verifiers)",
    )
    g.add_argument(
        "--failed-share",
        type=numbers.share(),
        default=t.failed_share,
        help=f"share of errored/empty rollouts meaning generation failed ({t.failed_share})",
    )
    g.add_argument(
        "--too-easy", type=numbers.share(), default=t.too_easy, help=f"solve rate that is too easy ({t.too_easy})"
    )
    g.add_argument(
        "--min-signal",
        type=numbers.share(),
        default=t.min_signal,
        help=f"least share of rollouts with a non-zero GRPO advantage ({t.min_signal})",
    )
    g.add_argument(
        "--near-empty-chars",
        type=numbers.integer(0),
        default=t.near_empty_chars,
        help=f"completions this short count as near-empty ({t.near_empty_chars})",
    )
    g.add_argument(
        "--max-truncated",
        type=numbers.share(),
        default=t.max_truncated,
        help=f"share of truncated rollouts above which training is blocked until max tokens are raised ({t.max_truncated})",
    )
    g.add_argument(
        "--warn-truncated",
        type=float,
        default=t.warn_truncated,
        help=f"share of truncated rollouts that warns ({t.warn_truncated})",
    )
    g.add_argument(
        "--max-turn-limited",
        type=numbers.share(),
        default=t.max_turn_limited,
        help="share of rollouts ended by the turn limit before they were over (mid tool use, a game cut short) above which training is blocked "
        f"({t.max_turn_limited})",
    )
    g.add_argument(
        "--warn-turn-limited",
        type=numbers.share(),
        default=t.warn_turn_limited,
        help=f"share of rollouts ended by the turn limit that warns ({t.warn_turn_limited})",
    )
    g.add_argument(
        "--group-gain",
        type=float,
        default=t.group_gain,
        help="the group size recommended is the smallest whose doubling adds less than this share of groups "
        f"with differing rewards ({t.group_gain})",
    )
    g.add_argument(
        "--max-malformed",
        type=numbers.share(),
        default=t.max_malformed,
        help=f"share of malformed lines tolerated before the file counts as unreadable ({t.max_malformed})",
    )
    g.add_argument(
        "--max-bad-rewards",
        type=numbers.share(),
        default=t.max_bad_rewards,
        help="share of rows without a numeric reward tolerated before the file counts as unreadable "
        f"({t.max_bad_rewards})",
    )
    g.add_argument(
        "--same-answer-groups",
        type=numbers.share(),
        default=t.same_answer_groups,
        help=f"share of groups whose rollouts all give the same answer that warns ({t.same_answer_groups})",
    )
    g.add_argument(
        "--majority-margin",
        type=numbers.share(),
        default=t.majority_margin,
        help="a solve rate this close to the majority class's share warns that a constant answer would "
        f"score the same ({t.majority_margin})",
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the reward histograms and the pass-rate histogram (needs matplotlib)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --plot file")
    return parser


def request(args) -> CheckRequest:
    thresholds = Thresholds(
        min_rollouts=args.min_rollouts,
        min_examples=args.min_examples,
        pass_threshold=args.pass_threshold,
        failed_share=args.failed_share,
        too_easy=args.too_easy,
        min_signal=args.min_signal,
        near_empty_chars=args.near_empty_chars,
        max_truncated=args.max_truncated,
        warn_truncated=args.warn_truncated,
        max_turn_limited=args.max_turn_limited,
        warn_turn_limited=args.warn_turn_limited,
        group_gain=args.group_gain,
        max_malformed=args.max_malformed,
        max_bad_rewards=args.max_bad_rewards,
        same_answer_groups=args.same_answer_groups,
        majority_margin=args.majority_margin,
    )
    search_dirs = tuple(args.search_dir) if args.search_dir else None
    return CheckRequest(
        results=args.results, search_dirs=search_dirs, thresholds=thresholds, plot=args.plot, force=args.force
    )


def main(argv=None) -> int:
    return run_request(
        "check_reward_distribution", build_parser(), request, check_reward_distribution, render, argv=argv
    )


if __name__ == "__main__":
    main_guard(main)
