#!/usr/bin/env python3
"""Read eval results and say whether training on this environment, with this model, is worth starting."""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
# before numpy's import: its OpenBLAS starts a thread a core (0.08 s of CPU, a tenth of reading 200,000 text rows);
# the reader and the analysis do no linear algebra. A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.evals.check import CheckRequest, check_reward_distribution
from vlab.evals.render import render
from vlab.evals.sampling import DEFAULT_ROW_BUDGET
from vlab.evals.verdicts import Thresholds

DESCRIPTION = """\
Will this environment teach the model anything? GRPO-style training learns only from groups
of rollouts whose rewards differ. This reads eval results (any size, in flat memory) and reports:
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
    g = parser.add_argument_group("verdict thresholds")
    kinds = {
        "int1": numbers.integer(1),
        "int0": numbers.integer(0),
        "real": numbers.real(),
        "share": numbers.share(),
        "float": float,
    }
    for name, default, kind, text in Thresholds.options():
        g.add_argument("--" + name.replace("_", "-"), type=kinds[kind], default=default, help=text)
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the reward histograms and the pass-rate histogram (needs matplotlib)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --plot file")
    parser.add_argument(
        "--max-rollouts-in-memory",
        metavar="N",
        type=numbers.integer(1),
        default=DEFAULT_ROW_BUDGET,
        help="rollouts held in memory (default %(default)s, about 60 bytes each); beyond, the group figures come "
        "from a sample of whole examples, while counts, shares and the verdicts one row can prove (an empty completion paid) stay exact",
    )
    return parser


def request(args) -> CheckRequest:
    thresholds = Thresholds(**{name: getattr(args, name) for name, *_ in Thresholds.options()})
    search_dirs = tuple(args.search_dir) if args.search_dir else None
    return CheckRequest(
        results=args.results,
        search_dirs=search_dirs,
        thresholds=thresholds,
        plot=args.plot,
        force=args.force,
        row_budget=args.max_rollouts_in_memory,
    )


def main(argv=None) -> int:
    return run_request(
        "check_reward_distribution", build_parser(), request, check_reward_distribution, render, argv=argv
    )


if __name__ == "__main__":
    main_guard(main)
