#!/usr/bin/env python3
"""Check that this machine is ready to build, validate and train verifiers environments."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.preflight.checks import PROFILES, PreflightRequest, run_preflight

DESCRIPTION = """\
Check this machine before building, validating or training a verifiers environment.

Profiles (--for):
  env          Python >= 3.11, verifiers (which API generations), datasets, uv, prime CLI (default)
  hosted       env + prime CLI required and logged in (`prime whoami`; skipped with --offline);
               with --env, a classic environment fails (Hosted Training runs v1 tasksets only)
  local-train  env + torch, CUDA GPUs and their memory, transformers, peft, vLLM compatibility

The default profile imports nothing heavy and answers in under a second.
"""

EPILOG = """\
examples:
  %(prog)s
  %(prog)s --for hosted --json
  %(prog)s --for hosted --env environments/my_env --json
  %(prog)s --for local-train --offline
"""


def build_parser():
    parser = make_parser("preflight", DESCRIPTION, EPILOG)
    parser.add_argument(
        "--for", dest="profile", choices=PROFILES, default="env", help="what you are about to do (default: env)"
    )
    parser.add_argument("--offline", action="store_true", help="skip every network check (login)")
    parser.add_argument(
        "--env",
        metavar="ENV",
        help="also report this environment's generation (v1 or classic): a module file, a package folder, an "
        "installed name or a Hub id owner/name; with --for hosted a classic one fails (Hosted Training runs v1 only)",
    )
    parser.add_argument(
        "--timeout", type=numbers.seconds(), default=20.0, help="seconds to wait for the prime CLI (default 20)"
    )
    return parser


def request(args) -> PreflightRequest:
    return PreflightRequest(profile=args.profile, offline=args.offline, timeout=args.timeout, env=args.env)


def main(argv=None) -> int:
    return run_request("preflight", build_parser(), request, run_preflight, argv=argv)


if __name__ == "__main__":
    main_guard(main)
