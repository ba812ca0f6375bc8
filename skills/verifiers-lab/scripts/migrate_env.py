#!/usr/bin/env python3
"""Migrate a classic verifiers environment (0.3.x) to a v1 taskset package (>= 0.4), with proof."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.migrate import MigrateRequest, migrate_environment
from vlab.migrate.render import render

DESCRIPTION = """\
Convert a classic environment (verifiers 0.3.x: a module with load_environment() returning a
SingleTurnEnv or ToolEnv) into a v1 taskset package (verifiers >= 0.4), then prove it.

Two pythons: run this script with the one that has verifiers 0.3.x (it loads the classic
environment); the v1 side runs in a second python with verifiers >= 0.4: --v1-python, else
$VLAB_V1_PYTHON, else .venv/vf040/bin/python, .venv-v1/bin/python or .venv/v1/bin/python in the
current folder or above the pack. None found: exit 3 with the command that creates one.

What becomes what: load_environment's parameters -> the fields of <Name>Config (a TasksetConfig;
`system_prompt` and `id` are renamed classic_system_prompt, classic_id); the rows it builds ->
<Name>Data (prompt, system_prompt, answer, info, other columns); each reward function -> an async
@vf.reward(weight=w) method of <Name>Task (weight 0: @vf.metric); the parser -> plain parsing
with the same results; ToolEnv tools -> a vf.Toolset. The classic module's code is carried over
unchanged (dataset mapping, helpers, reward functions), so behaviour is identical, bugs included:
migration never repairs a reward.

Proof: the probe completions of test_reward (gold, gold in other formats, wrong, malformed,
hacking) for the first --rows rows are scored through the classic environment and the new
taskset; every row's prompt and answer, every total and every function's score must be equal,
else exit 1 listing the differences.

Not convertible (exit 1, each with a to-do, nothing written): MultiTurnEnv subclasses
(env_response, setup_state, is_completed), reward functions that read `state` or score groups,
classic APIs without a plain equivalent (JudgeRubric, RubricGroup, SandboxEnv, ...), tools
defined inside load_environment. --partial writes the package anyway, marked TODO, unproven.

Output: --path/<name>/ (default: next to the classic package folder; name <module>_v1) with the
module, pyproject.toml and README.md (the mapping table). Never replaces anything without --force.
"""

EPILOG = """\
examples:
  %(prog)s environments/my_env --env-args '{"dataset_path": "data/train.jsonl"}'
  %(prog)s environments/my_env/my_env.py --name my-env-v1 --path environments --v1-python .venv-v1/bin/python
  %(prog)s environments/my_env --json > migration.json
"""


def build_parser():
    parser = make_parser("migrate_env", DESCRIPTION, EPILOG)
    parser.add_argument("env", nargs="?", help="the classic environment: its module file or package folder")
    parser.add_argument(
        "--env-args", default="{}", metavar="JSON", help="load_environment arguments for the proof (a JSON object)"
    )
    parser.add_argument("--name", help="the new package's name (default: <classic module>_v1)")
    parser.add_argument("--path", help="folder to write the package folder into (default: next to the classic one)")
    parser.add_argument("--v1-python", metavar="PATH", help="a python with verifiers >= 0.4 for the v1 side")
    parser.add_argument(
        "--rows", type=numbers.integer(1), default=6, help="rows whose probes are compared (default: 6)"
    )
    parser.add_argument(
        "--timeout",
        type=numbers.seconds(),
        default=600.0,
        help="seconds the v1 side may take to load and score (default: 600)",
    )
    parser.add_argument("--force", action="store_true", help="replace the files of an existing package folder")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="write the package even when parts cannot be migrated (TODO-marked, unproven, still exit 1)",
    )
    return parser


def request(args) -> MigrateRequest:
    return MigrateRequest(
        env=args.env,
        env_args=args.env_args,
        name=args.name,
        path=args.path,
        v1_python=args.v1_python,
        rows=args.rows,
        force=args.force,
        partial=args.partial,
        timeout=args.timeout,
    )


def main(argv=None) -> int:
    return run_request("migrate_env", build_parser(), request, migrate_environment, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
