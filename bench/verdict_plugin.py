"""pytest plugin: log every test_reward verdict the tests draw, for the regression table in bench/RESULTS.md.

Each call of ``run_test_reward`` in a test appends one JSON line to $VERDICT_LOG: the test, the
environment, the exit code, the failed and warned checks. Usage (from the repository root):
  PYTHONPATH=bench VERDICT_LOG=after.jsonl .venv/vf031/bin/python -m pytest -p verdict_plugin \
      tests/test_reward_kinds.py tests/test_test_reward.py tests/test_reward_verdicts.py
then ``python bench/verdict_table.py before.jsonl after.jsonl``.
"""

import json
import os

import pytest


@pytest.fixture(autouse=True)
def _record_verdicts(monkeypatch, request):
    import vlab.reward.checks as checks

    original = checks.run_test_reward

    def logged(opts, result):
        try:
            return original(opts, result)
        finally:
            record = {
                "test": request.node.nodeid,
                "env": os.path.basename(str(opts.env).rstrip("/")),
                "exit": result.exit_code(),
                "fail": sorted(c.id for c in result.checks if c.status == "fail"),
                "warn": sorted(c.id for c in result.checks if c.status == "warn"),
            }
            with open(os.environ.get("VERDICT_LOG", "verdicts.jsonl"), "a") as f:
                f.write(json.dumps(record) + "\n")

    monkeypatch.setattr(checks, "run_test_reward", logged)
    if getattr(request.module, "run_test_reward", None) is original:
        monkeypatch.setattr(request.module, "run_test_reward", logged)
    yield
