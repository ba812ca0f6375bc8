#!/usr/bin/env python3
"""Create a verifiers environment package from one of the pack's templates."""

from __future__ import annotations

from vlab.cli import main_guard, make_parser, run
from vlab.scaffold import ScaffoldRequest, scaffold_environment

DESCRIPTION = """\
Create an environment package (module, pyproject.toml, README.md) from a template, under
--path/<name>/. Never replaces anything: an existing folder is refused (exit 2).

Templates (--template):
  classic-numeric          numbers, GSM8K '#### N' answers      verifiers 0.3.x
  classic-multiple-choice  question + choices + letter/index     verifiers 0.3.x
  classic-classification   text + label                          verifiers 0.3.x
  classic-multiturn-tool   numbers, with a calculator tool       verifiers 0.3.x
  v1-numeric               numbers, as a v1 taskset              verifiers >= 0.4
  v1-multiple-choice       multiple choice, as a v1 taskset      verifiers >= 0.4

Column mapping: pass the output of `inspect_dataset --json` with --from-inspect (its
recommended template and detected columns are used), or name the columns with flags
(flags win). Without either, the template's default columns are kept (a warning).
"""

EPILOG = """\
examples:
  python scripts/inspect_dataset.py data/train.jsonl --json > inspect.json
  python scripts/new_env.py my-math --from-inspect inspect.json --path environments
  python scripts/new_env.py my-quiz --template v1-multiple-choice --question-column stem --choices-column options --answer-column key
  python scripts/new_env.py --list
"""

# Which flag sets which role.
ROLE_FLAGS = {"prompt": "question_column", "answer": "answer_column", "choices": "choices_column"}


def build_parser():
    parser = make_parser("new_env", DESCRIPTION, EPILOG)
    parser.add_argument("name", nargs="?", help="environment name: lower-case words joined by - or _ (e.g. gsm8k-boxed)")
    parser.add_argument("--template", help="template to copy (default: the one --from-inspect recommends)")
    parser.add_argument("--from-inspect", metavar="FILE", help="inspect_dataset --json output ('-' reads stdin)")
    parser.add_argument("--api", choices=("classic", "v1"),
                        help="with --from-inspect and no --template: which API generation's template to take "
                             "(default: classic when the installed verifiers has it, else v1)")
    parser.add_argument("--question-column", "--prompt-column", dest="question_column", metavar="COLUMN",
                        help="column with the question / text to classify")
    parser.add_argument("--answer-column", "--label-column", dest="answer_column", metavar="COLUMN",
                        help="column with the reference answer / label / correct choice")
    parser.add_argument("--choices-column", metavar="COLUMN", help="column with the list of choices (multiple choice)")
    parser.add_argument("--path", default="environments", help="folder to create the package in (default: environments)")
    parser.add_argument("--list", action="store_true", help="list the templates and exit")
    return parser


def execute(args, result):
    columns = {role: getattr(args, dest) for role, dest in ROLE_FLAGS.items() if getattr(args, dest)}
    scaffold_environment(result, ScaffoldRequest(
        name=args.name, template=args.template, from_inspect=args.from_inspect, api=args.api,
        columns=columns, path=args.path, list_only=args.list,
    ))


def main(argv=None) -> int:
    return run("new_env", build_parser(), execute, argv=argv)


if __name__ == "__main__":
    main_guard(main)
