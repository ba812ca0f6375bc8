#!/usr/bin/env python3
"""Prove a reward function right before any model sees it: probe it through verifiers' own scoring."""

from __future__ import annotations

import json

from vlab.cli import main_guard, make_parser, run
from vlab.result import UsageError

DESCRIPTION = """\
Load a verifiers environment (classic load_environment on verifiers <= 0.3.x, or a v1
taskset) and score probe completions through verifiers' own scoring code, so what it
says is what the trainer will see.

For --num-examples rows it builds probes from the row's answer and the environment's
expected format (parser, system prompt, \\boxed{}, ####, --gold-template): gold, gold in
alternative formats, wrong, malformed (empty/whitespace/no tags) and reward-hacking
probes (many candidate values, every number in the question, gold in the wrong tag,
a long rambling text, repeated tags). Each probe is scored by every reward function and
by the weighted total. Checks: gold earns the top reward; gold beats wrong/malformed by
--margin on the correctness function; rewards vary; no hacking probe earns the gold
reward; scoring is deterministic; values are finite; no function raised (even when the
classic Rubric swallowed it); no function hangs or is slow.

--completions FILE  JSON Lines of real completions: example_id (row index) or the row's
                    question/prompt text, completion (text or messages), optional
                    is_correct label. Reports the reward distribution and the agreement
                    with the labels, showing the disagreeing rows.
--custom FILE       JSON Lines cases: example_id or question, completion, expected (a
                    number or [min, max]) or min/max, optional function (default: total).
"""

EPILOG = """\
examples:
  python scripts/test_reward.py demo/environments/arith_classic/arith_classic.py --env-args '{"dataset_path": ".demo-out/arith.jsonl"}'
  python scripts/test_reward.py environments/my_env/ --num-examples 20 --json
  python scripts/test_reward.py my-env --gold-template "Answer: {answer}" --preset gsm8k
  python scripts/test_reward.py my_env.py --completions real.jsonl --custom cases.jsonl
"""


def build_parser():
    parser = make_parser("test_reward", DESCRIPTION, EPILOG)
    # nargs="?" so that an unknown option is reported before a missing environment
    parser.add_argument("env", nargs="?", help="environment: a module file, a package folder, or an installed id (owner/name or name)")
    parser.add_argument("--env-args", default="{}", metavar="JSON", help="keyword arguments for load_environment / the taskset config")
    parser.add_argument("--num-examples", "-n", type=int, default=5, metavar="N", help="rows to probe (default 5; -1: all)")
    parser.add_argument("--gold-template", metavar="TEXT", help='the expected format of a correct completion, e.g. "Answer: {answer}"')
    parser.add_argument("--preset", choices=["gsm8k"], help="extra built-in cases (gsm8k: equivalent spellings of the gold number)")
    parser.add_argument("--completions", metavar="FILE", help="JSON Lines of real completions to score (optional is_correct labels)")
    parser.add_argument("--custom", metavar="FILE", help="JSON Lines of your own cases with expected rewards")
    parser.add_argument("--no-probes", action="store_true", help="skip the synthetic probes (score only --completions/--custom)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a reward call counts as hanging and is stopped (default 10)")
    parser.add_argument("--slow", type=float, default=1.0, help="warn when one reward call takes longer than this many seconds (default 1)")
    parser.add_argument("--margin", type=float, default=0.3, help="how much gold must beat wrong/malformed on the correctness function (default 0.3)")
    parser.add_argument("--min-agreement", type=float, default=0.9, help="least reward/label agreement for --completions (default 0.9)")
    parser.add_argument("--concurrency", type=int, default=32, help="rows scored concurrently (default 32)")
    return parser


def execute(args, result):
    from vlab.reward_checks import Options, run_test_reward

    if not args.env:
        raise UsageError("no environment given", hint="pass a module file, a package folder or an installed env id; see --help")
    try:
        env_args = json.loads(args.env_args)
    except json.JSONDecodeError as err:
        raise UsageError(f"--env-args is not valid JSON: {err.msg}", hint="""e.g. --env-args '{"num_examples": 10}'""") from err
    if not isinstance(env_args, dict):
        raise UsageError("--env-args must be a JSON object")
    if args.num_examples == 0 or args.num_examples < -1:
        raise UsageError("--num-examples must be a positive number or -1 (all rows)")
    if args.timeout <= 0 or args.concurrency < 1:
        raise UsageError("--timeout must be positive and --concurrency at least 1")
    if args.no_probes and not (args.completions or args.custom):
        raise UsageError("--no-probes leaves nothing to score", hint="add --completions FILE or --custom FILE")
    opts = Options(num_examples=args.num_examples, gold_template=args.gold_template, preset=args.preset,
                   completions=args.completions, custom=args.custom, timeout=args.timeout, slow=args.slow,
                   margin=args.margin, concurrency=args.concurrency, min_agreement=args.min_agreement,
                   skip_probes=args.no_probes)
    run_test_reward(result, args.env, env_args, opts)


def render(result, console):
    """Tables before the checks: mean reward per probe and function, then disagreeing labelled rows."""
    env = result.data.get("environment") or {}
    names = [f["name"] for f in env.get("reward_functions", [])]
    timing = result.data.get("timing") or {}
    fmt = lambda v: "-" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v))  # noqa: E731
    tables = []
    probes = result.data.get("probes")
    if probes:
        rows = [[p["probe"], p["total"], *(p["functions"].get(n) for n in names)] for p in probes["by_probe"]]
        rows.append(["mean call ms", None, *((timing.get(n) or {}).get("mean_ms") for n in names)])
        tables.append((f"mean reward per probe over {probes['rows']} rows ({probes['probes_per_second']} probes/s)",
                       ["probe", "total", *names], rows))
    agreement = result.data.get("label_agreement") or {}
    if agreement.get("disagreeing"):
        rows = [[d["line"], d["example_id"], d["label"], d["reward"], d["completion"]] for d in agreement["disagreeing"]]
        tables.append((f"reward vs label: {len(agreement['disagreeing'])} disagreeing rows (first 20)",
                       ["line", "example_id", "is_correct", agreement["function"], "completion"], rows))
    for title, header, rows in tables:
        if console is None:
            print(title)
            print("  ".join(header))
            for r in rows:
                print("  ".join(fmt(v) for v in r))
            continue
        from rich.markup import escape
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for h in header:
            table.add_column(escape(str(h)), justify="left" if h in ("probe", "completion") else "right")
        for r in rows:
            table.add_row(*(escape(fmt(v)) for v in r))
        console.print(table)


def main(argv=None) -> int:
    return run("test_reward", build_parser(), execute, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
