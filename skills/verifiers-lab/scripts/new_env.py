#!/usr/bin/env python3
"""Create a verifiers environment package from one of the pack's templates."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.catalog import CLASSIC_FOR
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.scaffold.create import ScaffoldRequest, scaffold_environment

DESCRIPTION = """\
Create an environment package (module, pyproject.toml, README.md) from a template, under
--path/<name>/. An existing folder is refused (exit 2) unless --force: then the template's files are
written again and everything else in it (data/, files you added) stays. A name already taken by your
own environment (its folder, or `pip install -e` of it) is "already exists", never a shadowed module.

Templates (--template; --from-inspect takes the one for the dataset's answer kind, v1 unless
--api classic or the installed verifiers is 0.3.x):
  v1-numeric               numbers and math answers, as a v1 taskset              verifiers >= 0.4
  v1-multiple-choice       multiple choice, as a v1 taskset                       verifiers >= 0.4
  v1-classification        text + label, as a v1 taskset                          verifiers >= 0.4
  v1-short-answer          short answers or lists of aliases, as a v1 taskset     verifiers >= 0.4
  v1-multiturn-tool        numbers, with a calculator tool (vf.Toolset), as a v1 taskset  verifiers >= 0.4
  v1-code                  code run against the row's tests, as a v1 taskset      verifiers >= 0.4
  v1-program               whole programs on standard input, judged test by test as contest judges do, as a v1 taskset  verifiers >= 0.4
  v1-judge                 free text scored by an LLM judge against the reference, as a v1 taskset  verifiers >= 0.4
  classic-numeric          numbers and math answers (math-verify), GSM8K '#### N'   verifiers 0.3.x
  classic-multiple-choice  question + choices + letter/index/text                 verifiers 0.3.x
  classic-classification   text + label                                           verifiers 0.3.x
  classic-short-answer     short answers or lists of aliases (any one is right)   verifiers 0.3.x
  classic-multiturn-tool   numbers, with a calculator tool                        verifiers 0.3.x
  classic-code             code run against the row's tests                       verifiers 0.3.x
  classic-program          whole programs on standard input, judged test by test as contest judges do  verifiers 0.3.x
  classic-judge            free text scored by an LLM judge against the reference  verifiers 0.3.x
v1 tasksets are what current prime-rl and Hosted Training run; classic is for CLASSIC_FOR.

Column mapping: pass the output of `inspect_dataset --json` with --from-inspect (its
recommended template and detected columns are used), or name the columns with flags
(flags win). Without either, the template's default columns are kept (a warning).
--question-column may be repeated: the columns are joined in order (a body and a question);
so may --choices-column (one column per choice, in order). The numeric templates also read a
column flagging several answers (--multiple-answer-column) and the answer's unit (--unit-column).
""".replace("CLASSIC_FOR", CLASSIC_FOR)

EPILOG = """\
examples:
  %(inspect_dataset)s data/train.jsonl --json > inspect.json
  %(prog)s my-math --from-inspect inspect.json --path environments
  %(prog)s my-math --from-inspect inspect.json --template v1-multiturn-tool   # inspect's calculator suggestion
  %(prog)s my-math --from-inspect inspect.json --force   # write it again: data/ and your own files stay
  %(prog)s my-quiz --template v1-multiple-choice --question-column stem --choices-column options --answer-column key
  %(prog)s my-words --template v1-numeric --question-column Body --question-column Question --answer-column Answer
  %(prog)s my-code --template v1-code --question-column prompt --tests-column test --entry-point-column entry_point
  %(prog)s --list
"""

# Which flag sets which role.
ROLE_FLAGS = {
    "prompt": "question_column",
    "answer": "answer_column",
    "choices": "choices_column",
    "tests": "tests_column",
    "entry_point": "entry_point_column",
    "criteria": "criteria_column",
    "setup": "setup_column",
    "answers_correct": "correct_answers_column",
    "answers_incorrect": "incorrect_answers_column",
    "multiple": "multiple_answer_column",
    "unit": "unit_column",
}


def build_parser():
    parser = make_parser("new_env", DESCRIPTION, EPILOG)
    parser.add_argument(
        "name", nargs="?", help="environment name: lower-case words joined by - or _ (e.g. gsm8k-boxed)"
    )
    parser.add_argument("--template", help="template to copy (default: the one --from-inspect recommends)")
    parser.add_argument("--from-inspect", metavar="FILE", help="inspect_dataset --json output ('-' reads stdin)")
    parser.add_argument(
        "--api",
        choices=("classic", "v1"),
        help="with --from-inspect and no --template: which API generation's template to take "
        "(default: v1; classic when the installed verifiers is 0.3.x)",
    )
    parser.add_argument(
        "--question-column",
        "--prompt-column",
        dest="question_column",
        action="append",
        metavar="COLUMN",
        help="column with the question / text to classify; repeat it to join several columns in order",
    )
    parser.add_argument(
        "--answer-column",
        "--label-column",
        dest="answer_column",
        metavar="COLUMN",
        help="column with the reference answer / label / correct choice / reference solution (code)",
    )
    parser.add_argument(
        "--choices-column",
        action="append",
        metavar="COLUMN",
        help="column with the list of choices (multiple choice); repeat it for one column per choice, in order",
    )
    parser.add_argument("--tests-column", metavar="COLUMN", help="column with the tests (code)")
    parser.add_argument(
        "--entry-point-column", metavar="COLUMN", help="column with the function name the tests call (code)"
    )
    parser.add_argument(
        "--setup-column",
        metavar="COLUMN",
        help="column with code the tests need run first (code templates: MBPP's test_setup_code)",
    )
    parser.add_argument(
        "--criteria-column",
        metavar="COLUMN",
        help="column with each row's rubric criteria for the judge (judge templates: the rubric-criteria variant)",
    )
    parser.add_argument(
        "--correct-answers-column",
        metavar="COLUMN",
        help="column listing other answers the judge must count as right (judge templates; a list, or ';'/'|' text)",
    )
    parser.add_argument(
        "--incorrect-answers-column",
        metavar="COLUMN",
        help="column listing answers the judge must count as wrong (judge templates; a list, or ';'/'|' text)",
    )
    parser.add_argument(
        "--multiple-answer-column",
        metavar="COLUMN",
        help="column flagging rows with several answers that must all be given (numeric templates: "
        "OlympiadBench's is_multiple_answer)",
    )
    parser.add_argument(
        "--unit-column", metavar="COLUMN", help="column with the answer's unit (numeric templates: said in the prompt)"
    )
    parser.add_argument(
        "--path", default="environments", help="folder to create the package in (default: environments)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write an existing package's template files again (module, pyproject.toml, README.md); "
        "data/ and the files you added stay",
    )
    parser.add_argument("--list", action="store_true", help="list the templates and exit")
    return parser


def request(args) -> ScaffoldRequest:
    return ScaffoldRequest(
        name=args.name,
        template=args.template,
        from_inspect=args.from_inspect,
        api=args.api,
        columns={role: getattr(args, dest) for role, dest in ROLE_FLAGS.items() if getattr(args, dest)},
        path=args.path,
        list_only=args.list,
        force=args.force,
    )


def main(argv=None) -> int:
    return run_request("new_env", build_parser(), request, scaffold_environment, argv=argv)


if __name__ == "__main__":
    main_guard(main)
