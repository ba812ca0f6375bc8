#!/usr/bin/env python3
"""Create a verifiers environment package from one of the pack's templates."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from vlab.cli import main_guard, make_parser, run
from vlab.probe import verifiers_info
from vlab.result import UsageError
from vlab.scaffold import (
    FITTING_FORMATS,
    ROLE_CONSTANTS,
    Mapping,
    constants_in,
    create_package,
    generation,
    mapping_from_inspect,
    read_inspect,
    templates,
    validate_name,
)

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
FLAG_NAMES = {"prompt": "--question-column", "answer": "--answer-column", "choices": "--choices-column"}


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


def choose_template(args, mapping: Mapping | None, result) -> str:
    available = templates()
    if args.template:
        if args.template not in available:
            raise UsageError(f"unknown template {args.template!r}", hint="one of: " + ", ".join(available))
        if mapping and mapping.recommended and args.template not in mapping.recommended.values():
            wanted = mapping.recommended.get(generation(args.template))
            result.warn("template", f"using {args.template}; inspect_dataset recommended "
                        f"{wanted or 'no template'} for this dataset",
                        hint="check the answer format fits this template's reward, or take the recommended one")
        else:
            result.passed("template", f"template {args.template} (chosen with --template)")
        return args.template
    if mapping is None:
        raise UsageError("no template: pass --template, or --from-inspect with inspect_dataset --json output",
                         hint="python scripts/new_env.py --list")
    info = verifiers_info()
    api = args.api or ("classic" if info.classic or not info.v1 else "v1")
    chosen = mapping.recommended.get(api)
    if not chosen:
        others = {k: v for k, v in mapping.recommended.items() if v}
        raise UsageError(
            f"inspect_dataset recommends no {api} template for this dataset (answer format: {mapping.answer_format})",
            hint=(f"take --api {next(iter(others))} ({next(iter(others.values()))}), or " if others else "")
            + "write the environment from inspect_dataset's snippet (--snippet classic|v1), "
              "or force one with --template",
        )
    result.passed("template", f"template {chosen} (inspect_dataset's recommendation for the {api} API)")
    return chosen


def resolve_columns(args, template: str, mapping: Mapping, result) -> None:
    """Flags override inspect_dataset; roles still unknown keep the template's default (with a warning)."""
    for role, constant in ROLE_CONSTANTS.get(template, {}).items():
        flag_value = getattr(args, ROLE_FLAGS[role])
        if flag_value:
            mapping.columns[role], mapping.sources[role] = flag_value, FLAG_NAMES[role]
        if role in mapping.columns:
            result.passed(f"column-{role}", f"{constant} = {mapping.columns[role]!r} (from {mapping.sources[role]})")
        elif role == "choices" and mapping.inspect_status is not None:
            raise UsageError(f"template {template} needs a column with the list of choices, and none is known",
                             hint="pass --choices-column COLUMN (a list of strings per row)")
        else:
            result.warn(f"column-{role}", f"{constant} keeps the template's default; no {role} column was given",
                        hint=f"pass {FLAG_NAMES[role]} COLUMN, or --from-inspect")
    unused = [FLAG_NAMES[r] for r, dest in ROLE_FLAGS.items()
              if getattr(args, dest) and r not in ROLE_CONSTANTS.get(template, {})]
    if unused:
        raise UsageError(f"template {template} has no {', '.join(unused)} role", hint="drop the flag, or pick another template")


def check_fit(template: str, mapping: Mapping, result) -> None:
    if mapping.inspect_status and mapping.inspect_status != "pass":
        result.warn("inspect", f"the inspect_dataset run passed in reported status '{mapping.inspect_status}'",
                    hint="read its failed checks before trusting the column mapping")
    if mapping.answer_format:
        fits = FITTING_FORMATS.get(template, set())
        if mapping.answer_format in fits:
            result.passed("answer-format", f"answer format '{mapping.answer_format}' fits {template}'s reward")
        else:
            result.warn("answer-format", f"answer format '{mapping.answer_format}' is not one {template}'s reward "
                        f"reads (it reads: {', '.join(sorted(fits))})",
                        hint="edit the reward in the new module, then prove it with test_reward.py")
    if mapping.prompt_kind == "messages":
        result.warn("prompt-kind", "the prompt column holds chat messages; the templates read plain text",
                    hint="map the messages to text in the module's row conversion, or use a text column")


def execute(args, result):
    if args.list:
        for name in templates():
            result.passed(f"template-{name}", f"{name} ({generation(name)} API)")
        result.data["templates"] = templates()
        result.summary = f"{len(templates())} templates"
        return
    if not args.name:
        raise UsageError("missing the environment name", hint="python scripts/new_env.py NAME --template TEMPLATE")
    names = validate_name(args.name)
    result.passed("name", f"env id {names.dist!r}, module {names.module!r}")
    mapping = mapping_from_inspect(read_inspect(args.from_inspect)) if args.from_inspect else None
    template = choose_template(args, mapping, result)
    mapping = mapping or Mapping()
    resolve_columns(args, template, mapping, result)
    check_fit(template, mapping, result)

    folder, files = create_package(template, names, mapping, Path(args.path))
    written = constants_in((folder / f"{names.module}.py").read_text(encoding="utf-8"), template)
    result.passed("created", f"{folder}/ ({', '.join(p.name for p in files)})")
    gen = generation(template)
    info = verifiers_info()
    if gen == "classic" and not info.classic:
        result.warn("verifiers", f"{template} is classic code; the installed verifiers {info.version} has no classic API",
                    hint='test it in an environment with pip install "verifiers==0.3.1"')
    if gen == "v1" and not info.v1:
        result.warn("verifiers", f"{template} is a v1 taskset; the installed verifiers {info.version} has no verifiers.v1",
                    hint='pip install "verifiers>=0.4"')
    result.data.update({
        "package": str(folder), "module": names.module, "env_id": names.dist, "template": template,
        "api": gen, "columns": written, "files": [str(p) for p in files],
        "dataset_defaults": mapping.dataset or None,
    })
    result.summary = f"created {folder}/ from {template} ({gen} API)"
    env_args = "" if mapping.dataset else " --env-args " + shlex.quote(json.dumps({"dataset_path": mapping.local_path or "YOUR_DATA.jsonl"}))
    result.step(f"python scripts/test_reward.py {folder}/{env_args}")
    result.step(f"edit {folder}/README.md (task, dataset, reward) and {folder}/pyproject.toml (description, tags)")
    result.step(f"pip install -e {folder}   # then evaluate it: see references/evaluation-guide.md")


def main(argv=None) -> int:
    return run("new_env", build_parser(), execute, argv=argv)


if __name__ == "__main__":
    main_guard(main)
