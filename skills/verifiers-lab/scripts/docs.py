#!/usr/bin/env python3
"""Print one of the pack's documents (SKILL.md, a reference), wherever the pack was installed."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.docs import DocsRequest, show_docs
from vlab.docs.render import render

DESCRIPTION = """\
Print one of the pack's documents: SKILL.md (the workflow) or a reference from references/.
Hints and next steps name references by the names this command takes; it finds them in a
clone, in the skill folder, and in a pip install (where they ship inside the package).

Without NAME: list the documents, each with when to read it.
With --json: one result object; data.text holds the document.
"""

EPILOG = """\
examples:
  %(prog)s
  %(prog)s SKILL
  %(prog)s evaluation-guide
  %(prog)s training-guide --json
"""


def build_parser():
    parser = make_parser("docs", DESCRIPTION, EPILOG)
    parser.add_argument("name", nargs="?", help="the document: SKILL or a reference's name (default: list them)")
    return parser


def request(args) -> DocsRequest:
    return DocsRequest(name=args.name)


def main(argv=None) -> int:
    return run_request("docs", build_parser(), request, show_docs, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
