#!/usr/bin/env python3
"""Read eval results and say whether training on this environment, with this model, is worth starting."""

from __future__ import annotations

from vlab.cli import log, main_guard, make_parser, run
from vlab.distribution import Thresholds, check_results, render
from vlab.evalfiles import locate

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
  python scripts/check_reward_distribution.py                       # newest run under ./outputs
  python scripts/check_reward_distribution.py --results outputs/evals/my-env--my-model/1a2b3c4d
  python scripts/check_reward_distribution.py --results traces.jsonl --json
  python scripts/check_reward_distribution.py --results results.jsonl --min-signal 0.3 --too-easy 0.8
"""


def build_parser():
    parser = make_parser("check_reward_distribution", DESCRIPTION, EPILOG)
    parser.add_argument("--results", metavar="PATH", help="results file or eval run folder (default: newest run found)")
    parser.add_argument("--search-dir", metavar="DIR", action="append",
                        help="where to look for the newest run (repeatable; default ./outputs and "
                             "./environments/*/outputs)")
    t = Thresholds()
    g = parser.add_argument_group("verdict thresholds")
    g.add_argument("--min-rollouts", type=int, default=t.min_rollouts,
                   help=f"fewer is too few samples ({t.min_rollouts})")
    g.add_argument("--min-examples", type=int, default=t.min_examples,
                   help=f"fewer is too few samples ({t.min_examples})")
    g.add_argument("--pass-threshold", type=float, default=t.pass_threshold,
                   help=f"score at or above which a rollout counts as solved ({t.pass_threshold}, as verifiers)")
    g.add_argument("--failed-share", type=float, default=t.failed_share,
                   help=f"share of errored/empty rollouts meaning generation failed ({t.failed_share})")
    g.add_argument("--too-easy", type=float, default=t.too_easy, help=f"solve rate that is too easy ({t.too_easy})")
    g.add_argument("--min-signal", type=float, default=t.min_signal,
                   help=f"least share of rollouts with a non-zero GRPO advantage ({t.min_signal})")
    g.add_argument("--near-empty-chars", type=int, default=t.near_empty_chars,
                   help=f"completions this short count as near-empty ({t.near_empty_chars})")
    g.add_argument("--max-truncated", type=float, default=t.max_truncated,
                   help=f"share of truncated rollouts that asks for more tokens ({t.max_truncated})")
    g.add_argument("--max-malformed", type=float, default=t.max_malformed,
                   help=f"share of malformed lines tolerated before the file counts as unreadable ({t.max_malformed})")
    return parser


def execute(args, result):
    th = Thresholds(
        min_rollouts=args.min_rollouts, min_examples=args.min_examples, pass_threshold=args.pass_threshold,
        failed_share=args.failed_share, too_easy=args.too_easy, min_signal=args.min_signal,
        near_empty_chars=args.near_empty_chars, max_truncated=args.max_truncated, max_malformed=args.max_malformed,
    )
    th.validate()
    source = locate(args.results, args.search_dir)
    log(f"reading {source.path} ({source.shape})")
    check_results(source, th, result)


def main(argv=None) -> int:
    return run("check_reward_distribution", build_parser(), execute, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
