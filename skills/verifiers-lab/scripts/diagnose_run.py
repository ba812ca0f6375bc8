#!/usr/bin/env python3
"""Read a training run, name its failure signatures, give config deltas and stop conditions; watch or plot it."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.diagnose import DiagnoseRequest, diagnose
from vlab.diagnose.render import render

DESCRIPTION = """\
Is the run learning, unstable, stuck because every group scores the same, truncating? Reads a
training run's own metrics into one series of steps and checks it for the failure signatures
(each with its evidence: steps, window means with standard errors, slopes with 95% intervals):
reward flat near zero, saturated, rise then collapse, swings beyond the group noise, zero-
advantage share high or rising, truncation rising, completion length exploding or collapsing,
entropy collapse, gradient-norm spikes, non-finite values, environment errors, throughput drops,
eval reward diverging from train reward. Thresholds: one table (references/training-guide.md).

For each finding: config deltas in the config's own keys (prime-rl / Hosted Training, or
local_train's), old -> new, with the reason and the evidence; --config CFG --write NEW.toml writes
them into a copy (comments kept, never over a file without --force) validated with the schema
submit_training uses. Stop conditions for the rest of the run or the next one, as text and JSON
(data.stop_conditions); --watch polls the run and stops the first time one fires.

--run takes (and says which it found):
  local_train's --output-dir (logs/metrics.jsonl) or the metrics.jsonl itself
  a prime-rl run folder ({output_dir}/{run.name}: metrics.jsonl + configs/rl.json), or its output_dir
  a W&B history export (.json / .jsonl / .csv), or a saved `prime train metrics RUN_ID` answer
  a Hosted Training run id (read with `prime train get` and `prime train metrics`)
"""

EPILOG = """\
examples:
  %(prog)s --run outputs/local-train
  %(prog)s --run outputs/local-train --config my.toml --write my-next.toml --plot run.png
  %(prog)s --run RUN_ID --json > diag.json
  %(prog)s --run RUN_ID --watch --stops diag.json --interval 60
  %(prog)s --run wandb-history.csv --reward-range 0 1

what the exit codes mean here:
  0  no failure signature (warnings allowed); with --watch: the run finished, or a "done" stop fired
  1  a failure signature was found; with --watch: a "fail" stop condition fired (stop the run);
     or the --write config failed validation
  2  bad input: no such run folder/file, no steps, an existing --write/--plot file without --force
  3  the prime CLI is missing, not logged in or its key was rejected; --plot without matplotlib
  4  the platform or the network failed
"""


def build_parser():
    p = make_parser("diagnose_run", DESCRIPTION, EPILOG)
    p.add_argument("--run", metavar="PATH|RUN_ID", help="the run: a folder, a metrics file or a run id (required)")
    p.add_argument(
        "--source",
        choices=("auto", "local", "prime-rl", "wandb", "hosted"),
        default="auto",
        help="what --run is (default: detected)",
    )
    p.add_argument("--config", metavar="CFG", help="the run's config TOML (current values; the base --write edits)")
    p.add_argument("--write", metavar="NEW.toml", help="write the config with the deltas applied (needs --config)")
    p.add_argument(
        "--target", choices=("hosted", "prime-rl"), help="schema that validates --write (default: from the run)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing --write or --plot file")
    p.add_argument("--plot", metavar="FILE", help="draw the run (.png, .svg, .pdf, or .html); needs matplotlib")
    p.add_argument(
        "--reward-range", nargs=2, type=numbers.real(), metavar=("LO", "HI"), help="the reward's range (default 0 1)"
    )
    p.add_argument(
        "--max-steps", type=numbers.integer(1), help="the run's planned steps (stop conditions scale with it)"
    )
    w = p.add_argument_group("watching")
    w.add_argument("--watch", action="store_true", help="poll the run until a stop condition fires")
    w.add_argument("--stops", metavar="FILE.json", help="stop conditions to apply (a list, or a --json result)")
    w.add_argument("--interval", type=numbers.seconds(), default=30.0, help="seconds between polls (default 30)")
    w.add_argument("--max-polls", type=numbers.integer(1), help="stop watching after this many polls")
    w.add_argument(
        "--idle-timeout",
        type=numbers.seconds(),
        default=1800.0,
        help="stop watching after this many seconds without a new step",
    )
    p.add_argument("--timeout", type=numbers.seconds(), default=60.0, help="seconds per prime CLI call (default 60)")
    return p


def request(args) -> DiagnoseRequest:
    return DiagnoseRequest(
        run=args.run,
        kind=args.source,
        config=args.config,
        write=args.write,
        force=args.force,
        target=args.target,
        plot=args.plot,
        reward_range=tuple(args.reward_range) if args.reward_range else None,
        max_steps=args.max_steps,
        watch=args.watch,
        interval=args.interval,
        max_polls=args.max_polls,
        idle_timeout=args.idle_timeout,
        stops=args.stops,
        timeout=args.timeout,
    )


def main(argv=None) -> int:
    return run_request("diagnose_run", build_parser(), request, diagnose, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
