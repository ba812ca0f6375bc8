"""Why a reference program fails its row: the program templates' own judge (``v1_program_harness.py``, the
harness the environment runs) run here on the row's tests, for the test it fails and why ("test 3 of 40: time
limit exceeded (2.31 s of CPU time; the limit is 2 s)")."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache

from vlab.core.paths import templates_dir
from vlab.kinds.base import RowKind

HARNESS = ("v1-program", "v1_program_harness.py")
MODULE = "vlab_program_harness"


@cache
def harness():
    """The program templates' harness, loaded once from the pack's templates (its children start from that file)."""
    path = templates_dir() / "environments" / HARNESS[0] / HARNESS[1]
    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    spec.loader.exec_module(module)
    return module


def reference_failure(reference: str, kind: RowKind, default_limit: float = 2.0) -> str | None:
    """The first test the reference fails on the row and why; None when it passes (or there is none)."""
    if not reference.strip():
        return None
    spec = dict(kind.tests.get("spec") or {"mode": "io", "cases": kind.tests["cases"]})
    spec["checker"] = None if spec.get("checker") == "custom" else spec.get("checker")
    limit = float(spec.get("time_limit") or min(default_limit, 2.0))
    try:
        verdict = harness().score(reference, spec, limit, int(spec.get("memory_mb") or 1024))
    except Exception as err:  # noqa: BLE001 - the pack's judge could not run here: say so, never crash the report
        return f"(the pack's judge could not run it: {type(err).__name__}: {err})"
    return verdict["reason"] or None
