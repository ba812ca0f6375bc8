#!/usr/bin/env python3
"""The documented `test_reward` command; its code is in probe_reward.py (a test_*.py module is taken for a test)."""

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.dont_write_bytecode = True  # probe_reward imports the pack: nothing written into the skill folder
    runpy.run_path(str(Path(__file__).with_name("probe_reward.py")), run_name="__main__")
