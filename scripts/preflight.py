#!/usr/bin/env python3
"""Check that this machine is ready to build, validate and train verifiers environments."""

from __future__ import annotations

from vlab.cli import main_guard, make_parser, run
from vlab.preflight import PROFILES, run_preflight

DESCRIPTION = """\
Check this machine before building, validating or training a verifiers environment.

Profiles (--for):
  env          Python >= 3.11, verifiers (which API generations), datasets, uv, prime CLI (default)
  hosted       env + prime CLI required and logged in (`prime whoami`; skipped with --offline)
  local-train  env + torch, CUDA GPUs and their memory, transformers, peft, vLLM compatibility

The default profile imports nothing heavy and answers in under a second.
"""

EPILOG = """\
examples:
  python scripts/preflight.py
  python scripts/preflight.py --for hosted --json
  python scripts/preflight.py --for local-train --offline
"""


def build_parser():
    parser = make_parser("preflight", DESCRIPTION, EPILOG)
    parser.add_argument("--for", dest="profile", choices=PROFILES, default="env", help="what you are about to do (default: env)")
    parser.add_argument("--offline", action="store_true", help="skip every network check (login)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the prime CLI (default 20)")
    return parser


def execute(args, result):
    run_preflight(result, profile=args.profile, offline=args.offline, timeout=args.timeout)


def main(argv=None) -> int:
    return run("preflight", build_parser(), execute, argv=argv)


if __name__ == "__main__":
    main_guard(main)
