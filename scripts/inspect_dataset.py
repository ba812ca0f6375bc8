#!/usr/bin/env python3
"""Know a dataset before writing an environment for it: columns, roles, answer format, the template that fits."""

from __future__ import annotations

from vlab.cli import main_guard, make_parser, run
from vlab.result import UsageError
from vlab.dataset import DEFAULT_SAMPLE, inspect_dataset
from vlab.dataset.render import render_report

DESCRIPTION = """\
Read a dataset (first rows only) and say, with evidence, which column is the prompt,
which is the answer, what format the answer has, and which environment template,
parser and reward strategy fit. Prints ready code for a classic `load_environment`
(verifiers 0.3.1) and a v1 taskset (verifiers 0.4.0) with the column mapping filled in.

Sources: a .jsonl/.json/.csv/.tsv/.parquet/.arrow file, a folder of them, a folder written
by datasets' save_to_disk, or a Hugging Face dataset id (owner/name) with --config/--split.
Only the first --sample rows are read: cost does not grow with the file's size.
Hub access honours HF_HUB_OFFLINE / HF_DATASETS_OFFLINE (cache only) and HF_ENDPOINT.

Exit 1 when no prompt or no answer column can be identified with confidence.
"""

EPILOG = """\
examples:
  python scripts/inspect_dataset.py data/train.jsonl
  python scripts/inspect_dataset.py openai/gsm8k --config main --split test --json
  python scripts/inspect_dataset.py mmlu.parquet --answer-column target --snippet v1
"""


def build_parser():
    parser = make_parser("inspect_dataset", DESCRIPTION, EPILOG)
    # Optional for argparse so an unknown option is named before a missing source.
    parser.add_argument("source", nargs="?", help="file, folder or Hugging Face dataset id")
    parser.add_argument("--config", help="hub dataset config (required when it has several)")
    parser.add_argument("--split", help="split (hub, save_to_disk DatasetDict, or a folder's file names); default train")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, metavar="N",
                        help=f"rows to read from the start (default {DEFAULT_SAMPLE})")
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds for each hub step: lookup, configs, splits, first rows (default 30)")
    parser.add_argument("--prompt-column", help="use this column as the prompt (skip detection)")
    parser.add_argument("--answer-column", help="use this column as the answer (skip detection)")
    parser.add_argument("--snippet", choices=("classic", "v1", "none"), default="none",
                        help="also print the ready environment code for this API generation (human output)")
    return parser


def main(argv=None) -> int:
    chosen = {"snippet": "none"}

    def execute(args, result):
        chosen["snippet"] = args.snippet
        if not args.source:
            raise UsageError("no dataset given", hint="pass a file, a folder or a hub id: inspect_dataset data.jsonl")
        inspect_dataset(result, args.source, n=args.sample, split=args.split, config=args.config,
                        timeout=args.timeout, prompt_column=args.prompt_column, answer_column=args.answer_column)

    def render(result, console):
        render_report(result.data, console, snippet=chosen["snippet"])

    return run("inspect_dataset", build_parser(), execute, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
