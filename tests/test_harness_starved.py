"""The code templates' harness on a busy machine: a program that computes is bounded by its CPU time, never by a
wall clock the load eats (MBPP task 123, amicable_numbers_sum(9999), 2.8 CPU-s of a 5 s limit, was refused under
load at the 7.5 s wall bound); one that sleeps or blocks is still stopped at the wall bound as given."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SKILL_ROOT

pytestmark = [pytest.mark.once, pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")]

HOGS = 4 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@pytest.fixture(scope="module")
def harness():
    path = SKILL_ROOT / "templates" / "environments" / "v1-code" / "v1_code_harness.py"
    spec = importlib.util.spec_from_file_location("v1_code_harness_starved", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def busy():
    """Four spinning processes a core, each in a session of its own (the kernel's autogroups share the CPU by
    session, so one hog session would leave the program half a core): the program gets about a fifth of a core."""
    spin = "import time\nend = time.time() + 120\nwhile time.time() < end:\n    pass\n"
    hogs = [
        subprocess.Popen([sys.executable, "-c", spin], start_new_session=True, stdout=subprocess.DEVNULL)
        for _ in range(HOGS)
    ]
    time.sleep(1.0)
    yield
    for hog in hogs:
        hog.kill()
        hog.wait(timeout=10)


# About 0.8 CPU-s on this machine when idle, all of it in the program's own process: inside a 2 s CPU limit (2.5x
# room), but past its 3 s wall bound at a fifth of a core.
COMPUTES = "def busy(n):\n    total = 0\n    for i in range(n):\n        total += i * i % 7\n    return total\n"
SPEC = {"mode": "call", "tests": "assert busy(15_000_000) == 29999998"}


def test_a_program_that_computes_is_bounded_by_its_cpu_time_on_a_busy_machine(harness, busy):
    got = harness.score(COMPUTES, SPEC, 2.0, 512)
    assert got["passed"] is True, got


def test_a_program_that_sleeps_is_stopped_at_the_wall_bound_on_a_busy_machine(harness, busy):
    start = time.monotonic()
    got = harness.score("import time\ndef busy(n):\n    time.sleep(60)\n", SPEC, 2.0, 512)
    waited = time.monotonic() - start
    assert got["passed"] is False and "did not finish within 2 s" in got["reason"], got
    assert waited < 30, waited  # the 3 s bound, plus the busy machine's start-up of the child


def test_a_program_that_computes_forever_is_stopped_by_its_cpu_limit_within_the_wall_cap(harness, busy):
    """RLIMIT_CPU ends it once it has had its second of CPU; on a machine so busy that a slice gave it under
    CPU_SHARE of a core (a make test run beside these hogs once did), the wall cap does, at the latest."""
    start = time.monotonic()
    got = harness.score("def busy(n):\n    while True:\n        pass\n", SPEC, 1.0, 512)
    waited = time.monotonic() - start
    assert got["passed"] is False, got
    assert "CPU time" in got["reason"] or "did not finish within 1 s" in got["reason"], got
    assert waited < harness.WALL_CAP * 1.0 + 15, waited  # the cap, plus the busy machine's start-up of the child
