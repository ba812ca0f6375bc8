#!/usr/bin/env python3
"""Prove a reward function right before any model sees it: probe it through verifiers' own scoring."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.reward.render import render

DESCRIPTION = """\
Load a verifiers environment (classic load_environment on verifiers <= 0.3.x, or a v1
taskset) and score probe completions through verifiers' own scoring code, so what it
says is what the trainer will see.

On the first 5 rows (--num-examples N: N rows) it builds probes from the row's answer and
the environment's expected format (parser, system prompt, \\boxed{}, ####, --gold-template):
gold, gold in alternative formats, wrong, malformed (empty/whitespace/no tags) and
reward-hacking probes (many candidate values, every number in the question, gold in the
wrong tag, a long rambling text, the prompt echoed back, repeated tags). Hack probes put the
gold where a sound parser does not read it. The rule: a sound parser reads ONE answer, the
last (the last \\boxed{}, the last line, a tag on text) or, for tags, the first (verifiers
0.3's XMLParser on chat messages); so in repeated tags the gold sits between two wrong answers
(only a reward that takes any of several answers is paid), and for \\boxed{} formats the gold
is also written in the first of two boxes (a reward reading the first box is paid).
Then probes for the row's answer kind: numbers (51 for 51.0, \\frac{1}{2} and .5 for 0.5
must earn the reward; 51.4 for 51, a flipped sign, a dropped digit must not; 2\\pi for 2
must not where the dataset's golds or prompts carry pi, and only warns elsewhere; a comma
in a list, tuple or interval such as -2,1 is never a thousands separator), multiple choice
(every option label the prompt shows, exactly one of which must pay; (B), B), b, \\text{B},
\\textbf{B} and the option's text), code (the reference program raw and fenced, a syntax
error, an infinite loop, sys.exit(0), os._exit(0), SystemExit, atexit, an always-equal
object, an int subclass, patched builtins, reading the test source). Each probe is scored by every reward function
and by the weighted total. Checks: gold earns the top reward; gold beats wrong/malformed by
--margin on the correctness function; rewards vary; the gold written in the format the prompt
asks for earns the top reward (a format sentence it cannot read is a warning: state it with
--gold-template); no hacking probe or near miss earns the gold reward; no wrong option earns
partial credit, lower-case letters count; scoring is deterministic; one completion scores the
same before and after another row is scored (state_leak); values are finite; no function
raised (even when the classic Rubric swallowed it); no function hangs or is slow. The
data's most common golds and a refusal it counts as right, given to every row of the whole
data, must not be paid where the gold differs (a share worth learning warns); a skewed
majority class warns with its share and the number of classes (constant_answer). A scoreboard of the mean reward per probe family (gold, wrong, each hack,
near misses, malformed, equivalent forms), families close to the gold marked, heads the
report (data.scoreboard in --json).

Then the whole dataset (every row; --num-examples N: the first N): no empty gold, no prompt
repeated with a different gold, every multiple-choice gold names an option, every prompt
shows what the reward needs (the options under the answer key's labels, labelled once;
the function the tests call; the question and a passage the row carries; two options with
the same text or a label repeated inside an option are named row by row, failing only where
they make the gold ambiguous; --rows-out FILE lists them all), no prompt shows its gold in any
form (answer_leak), a classification prompt says what is classified (prompt_task), the data is no
test or dev split and is the file the arguments name (test_split, data_split), and the gold of
every row earns the top reward, scored until --reach-seconds runs out (the count probed is reported).

--completions FILE  JSON Lines of real completions: example_id (row index) or the row's
                    question/prompt text, completion (text or messages), optional
                    is_correct label. Reports the reward distribution and the agreement
                    with the labels, showing the disagreeing rows.
--custom FILE       JSON Lines cases: example_id or question, completion, expected (a
                    number or [min, max]) or min/max, optional function (default: total).

A multi-turn or tool environment is also driven through its own rollout loop by scripted
conversations with real tool calls (the gold after a tool call, tool echo, paid calls, bad
arguments, the turn limit, file/code execution, leaks, a slow call). With --seq-len N the
rollout's token budget is checked on them (token_budget): the prompt with its tool
definitions and the longest tool output as measured, --max-tokens per model turn; it fails
when N cannot hold one tool call and an answer, warns when it cannot hold the turn limit's
worth of turns (the environment's own max_turns, else the turns the scripts saw it allow).

A judge-scored reward (the environment takes judge_base_url, judge_api_key_var and
judge_model, as the *-judge templates do): --judge stub probes it offline against a
deterministic weak judge on 127.0.0.1 that obeys instructions it finds outside the
prompt's fences; --judge-base-url URL against a real judge, the key read from
--judge-api-key-var NAME (never written). Instead of the probes above: injection probes
(an order to award full marks, a closed fence with a fake verdict, a claim to be the
reference, padding with the reference's words) and shortcuts (the question copied,
empty, rambling) must earn less than the gold, the gold reworded must still earn; with
the stub, judge replies in the forms real models give (JSON, "Score: 7/10", a bare yes,
prose, refusals) must parse, and one without a verdict must raise, never score 0 or 1;
the judge's calls and tokens per scored rollout and per training step are reported.
"""

EPILOG = """\
examples:
  %(prog)s environments/my_env/my_env.py --env-args '{"dataset_path": "data/train.jsonl"}'
  %(prog)s environments/my_env/ --num-examples 20 --json
  %(prog)s my-env --gold-template "Answer: {answer}" --preset gsm8k
  %(prog)s my_env.py --completions real.jsonl --custom cases.jsonl
  %(prog)s environments/my_judge/ --judge stub --judge-batch-size 512 --judge-price-in 0.4 --judge-price-out 1.6
"""


def build_parser():
    parser = make_parser("test_reward", DESCRIPTION, EPILOG)
    # nargs="?" so that an unknown option is reported before a missing environment
    parser.add_argument(
        "env", nargs="?", help="environment: a module file, a package folder, or an installed id (owner/name or name)"
    )
    parser.add_argument(
        "--env-args", default="{}", metavar="JSON", help="keyword arguments for load_environment / the taskset config"
    )
    parser.add_argument(
        "--num-examples",
        "-n",
        type=numbers.integer(1, also=(-1,)),
        default=None,
        metavar="N",
        help="rows to probe in full and to check (default: 5 probed, every row checked; -1: all rows)",
    )
    parser.add_argument(
        "--reach-seconds",
        type=numbers.real(0),
        default=60.0,
        metavar="S",
        help="time budget for scoring the gold of every row (default 60; 0 skips that pass)",
    )
    parser.add_argument(
        "--gold-template", metavar="TEXT", help='the expected format of a correct completion, e.g. "Answer: {answer}"'
    )
    parser.add_argument(
        "--preset", choices=["gsm8k"], help="extra built-in cases (gsm8k: equivalent spellings of the gold number)"
    )
    parser.add_argument(
        "--completions", metavar="FILE", help="JSON Lines of real completions to score (optional is_correct labels)"
    )
    parser.add_argument("--custom", metavar="FILE", help="JSON Lines of your own cases with expected rewards")
    parser.add_argument(
        "--no-probes", action="store_true", help="skip the synthetic probes (score only --completions/--custom)"
    )
    parser.add_argument(
        "--timeout",
        type=numbers.seconds(),
        default=10.0,
        help="seconds before a reward call counts as hanging and is stopped, on an idle machine (default 10); "
        "stretched by the load average per core, so other work on the machine never makes a reward 'hang' "
        "(data.machine_load says by how much)",
    )
    parser.add_argument(
        "--load-timeout",
        type=numbers.seconds(),
        default=None,
        help="seconds the environment may take to import and load before it is stopped (worker_timeout, exit 1; "
        "default 900: loading may download a dataset)",
    )
    parser.add_argument(
        "--slow",
        type=numbers.seconds(),
        default=1.0,
        help="warn when one reward call takes longer than this many seconds (default 1)",
    )
    parser.add_argument(
        "--margin",
        type=numbers.real(0),
        default=0.3,
        help="how much gold must beat wrong/malformed on the correctness function (default 0.3)",
    )
    parser.add_argument(
        "--min-agreement",
        type=numbers.share(),
        default=0.9,
        help="least reward/label agreement for --completions (default 0.9)",
    )
    parser.add_argument(
        "--rows-out",
        metavar="FILE",
        help="write every row a dataset or prompt check names (duplicate options, doubled labels, missing "
        "columns, unreachable golds) to FILE as JSON Lines",
    )
    parser.add_argument("--force", action="store_true", help="replace the --rows-out file when it exists")
    parser.add_argument(
        "--concurrency", type=numbers.integer(1, 1024), default=32, help="rows scored concurrently (default 32)"
    )
    budget = parser.add_argument_group("multi-turn and tool environments: the token budget of a rollout")
    budget.add_argument(
        "--seq-len",
        type=numbers.integer(1, 10**8),
        metavar="N",
        help="the training sequence length (model.seq_len): check that a rollout of the environment's turn limit, "
        "its prompt, model turns and tool outputs measured on the scripted conversations, fits (token_budget)",
    )
    budget.add_argument(
        "--max-tokens",
        type=numbers.integer(1, 10**7),
        metavar="N",
        help="the most tokens one model turn may take (sampling.max_tokens; default 256, local_train's)",
    )
    budget.add_argument(
        "--tokenizer",
        metavar="NAME_OR_FOLDER",
        help="count tokens with this tokenizer (offline, from a folder or the Hugging Face cache); "
        "without it, or when it is not available offline, an estimate of 3 characters per token",
    )
    judge = parser.add_argument_group(
        "judge-scored rewards (the environment takes judge_base_url, judge_api_key_var, judge_model)"
    )
    judge.add_argument(
        "--judge",
        choices=["stub"],
        help="probe the judge offline against the pack's deterministic stub judge on 127.0.0.1",
    )
    judge.add_argument("--judge-base-url", metavar="URL", help="probe against this OpenAI-compatible judge endpoint")
    judge.add_argument(
        "--judge-api-key-var",
        metavar="NAME",
        help="the NAME of the environment variable holding the judge's key (default OPENAI_API_KEY); never the key",
    )
    judge.add_argument("--judge-model", metavar="MODEL", help="the judge model (default: the environment's)")
    judge.add_argument(
        "--judge-batch-size",
        type=numbers.integer(1, 10**7),
        metavar="N",
        help="rollouts per training step, for the projected judge cost per step (default: the --batch-size of "
        "SKILL.md's submit_training command, 128)",
    )
    judge.add_argument("--judge-price-in", type=numbers.real(0), metavar="USD", help="USD per million prompt tokens")
    judge.add_argument(
        "--judge-price-out", type=numbers.real(0), metavar="USD", help="USD per million completion tokens"
    )
    return parser


# vlab.reward.checks is imported when used, so that --help stays fast.
def request(args):
    from vlab.reward.request import JudgeSettings, TestRewardRequest

    return TestRewardRequest(
        judge=JudgeSettings(
            judge=args.judge,
            base_url=args.judge_base_url,
            api_key_var=args.judge_api_key_var,
            model=args.judge_model,
            **({"batch_size": args.judge_batch_size} if args.judge_batch_size else {}),
            price_in=args.judge_price_in,
            price_out=args.judge_price_out,
        ),
        env=args.env,
        env_args=args.env_args,
        num_examples=args.num_examples,
        gold_template=args.gold_template,
        preset=args.preset,
        completions=args.completions,
        custom=args.custom,
        timeout=args.timeout,
        slow=args.slow,
        margin=args.margin,
        concurrency=args.concurrency,
        min_agreement=args.min_agreement,
        skip_probes=args.no_probes,
        reach_seconds=args.reach_seconds,
        load_timeout=args.load_timeout,
        rows_out=args.rows_out,
        force=args.force,
        seq_len=args.seq_len,
        max_tokens=args.max_tokens,
        tokenizer=args.tokenizer,
    )


def run_checks(request, result):
    from vlab.reward.checks import run_test_reward
    from vlab.reward.data_file import check_data_files

    # A bad line in a JSON Lines file --env-args names: FILE:LINE, exit 2, before the worker loads it.
    check_data_files(request.env_args, request.env)
    run_test_reward(request, result)


def main(argv=None) -> int:
    return run_request("test_reward", build_parser(), request, run_checks, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
