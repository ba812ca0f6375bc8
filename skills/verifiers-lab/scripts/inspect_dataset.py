#!/usr/bin/env python3
"""Know a dataset before writing an environment for it: columns, roles, answer format, the template that fits."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.inspect import DEFAULT_SAMPLE, InspectRequest, inspect_dataset
from vlab.inspect.analysis import SNIPPETS
from vlab.inspect.render import render

DESCRIPTION = """\
Read a dataset (first rows only) and say, with evidence, which column is the prompt,
which is the answer, what format the answer has, and which environment template,
parser and reward strategy fit. The recommended template is the v1 taskset one unless
only verifiers 0.3.x (the classic API) is installed. Prints ready code for a v1 taskset
(verifiers 0.4.0) and a classic `load_environment` (verifiers 0.3.1) with the column
mapping filled in.

Sources: a .jsonl/.json/.csv/.tsv/.parquet/.arrow file (the text formats also gzip-compressed,
.jsonl.gz), a folder of them, a folder written by datasets' save_to_disk, or a Hugging Face
dataset id (owner/name) with --config/--split.

Answer kinds: numbers and math, multiple choice (letter, 0-based or 1-based index, or the
option's text; options as a list or one column each), code with tests (a tests column plus
an entry point or reference solution), labels, short and long text. A prompt can span
columns (a body or passage before the question): data.roles.prompt.columns, in order.
A folder of split files (train/validation/val/dev/test in the names, any extension) is read one
split at a time (--split, default train); the loader names only that split's files.
Class labels stored as integers are named from --label-names, --label-map, a ClassLabel
feature or a label map file beside the data (mapping.txt, labels.txt, label_names.json);
data.answer_format carries the names, the label distribution and the majority class's share.
Only the first --sample rows are read: cost does not grow with the file's size.
Hub access honours HF_HUB_OFFLINE / HF_DATASETS_OFFLINE (cache only) and HF_ENDPOINT.

Exit 1 when no prompt or no answer column can be identified with confidence.
"""

EPILOG = """\
examples:
  %(prog)s data/train.jsonl
  %(prog)s openai/gsm8k --config main --split test --json
  %(prog)s mmlu.parquet --answer-column target --snippet v1
  %(prog)s svamp.jsonl.gz --prompt-column Body --prompt-column Question --json
"""


def build_parser():
    parser = make_parser("inspect_dataset", DESCRIPTION, EPILOG)
    # Optional for argparse so an unknown option is named before a missing source.
    parser.add_argument("source", nargs="?", help="file, folder or Hugging Face dataset id")
    parser.add_argument("--config", help="hub dataset config (required when it has several)")
    parser.add_argument(
        "--split", help="split (hub, save_to_disk DatasetDict, or a folder's file names); default train"
    )
    parser.add_argument(
        "--sample",
        type=numbers.integer(1),
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"rows to read from the start (default {DEFAULT_SAMPLE})",
    )
    parser.add_argument(
        "--timeout",
        type=numbers.seconds(),
        default=30.0,
        help="deadline in seconds for each hub step: lookup, configs, splits, first rows (default 30)",
    )
    parser.add_argument(
        "--prompt-column",
        action="append",
        metavar="COLUMN",
        help="use this column as the prompt (skip detection); repeat it for a prompt over several columns, "
        "joined in the order given (e.g. --prompt-column Body --prompt-column Question)",
    )
    parser.add_argument("--answer-column", help="use this column as the answer (skip detection)")
    parser.add_argument(
        "--label-names",
        metavar="A,B,C",
        help="names of integer class labels 0, 1, 2, ... in order (default: a mapping.txt / labels.txt / "
        "label_names.json beside the data, or the ClassLabel feature)",
    )
    parser.add_argument(
        "--label-map", metavar="FILE", help="a label map file: '0<TAB>name' lines (any common separator) or JSON"
    )
    parser.add_argument(
        "--snippet",
        choices=SNIPPETS,
        default="none",
        help="also print the ready environment code for this API generation (human output)",
    )
    return parser


def request(args) -> InspectRequest:
    return InspectRequest(
        source=args.source,
        config=args.config,
        split=args.split,
        sample=args.sample,
        timeout=args.timeout,
        prompt_column=tuple(args.prompt_column) if args.prompt_column else None,
        answer_column=args.answer_column,
        snippet=args.snippet,
        label_names=args.label_names,
        label_map=args.label_map,
    )


def main(argv=None) -> int:
    return run_request("inspect_dataset", build_parser(), request, inspect_dataset, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
