"""diagnose_run --run RUN_ID: the real prime CLI against the loopback stub of the platform.

The stub answers the routes the CLI calls (prime_cli/api/rl.py: GET /rft/runs/{id} -> {"run": ...},
GET /rft/runs/{id}/metrics -> {"metrics": [...]}) with the shapes the CLI reads: the run record in
the API's camelCase (RLRun's aliases), the metric records as prime-rl's platform monitor posts them
(the orchestrator's metrics dict with its step).
"""

from __future__ import annotations

import sys
from pathlib import Path

import diagnose_fixtures as F
import pytest
from conftest import assert_result, run_script
from prime_stub import PrimeStub
from trainconfig_fixtures import cli_env

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "diagnose_run"
RUN_ID = "runcollapse01"

needs_prime = pytest.mark.skipif(
    not (Path(sys.executable).parent / "prime").exists(), reason="the prime CLI is not installed in this venv"
)


def routes(stub, kind: str = "collapse", status: str = "RUNNING") -> None:
    stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}/metrics"] = (200, {"metrics": F.hosted_records(F.simulate(kind))})
    stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}"] = (200, {"run": F.hosted_run(RUN_ID, status)})


@needs_prime
def test_hosted_run_is_diagnosed_through_the_cli(tmp_path):
    with PrimeStub() as stub:
        routes(stub)
        r = run_script(TOOL, "--run", RUN_ID, "--json", env=cli_env(stub.url, tmp_path / "home"), cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 1)
    assert obj["data"]["run"]["source"] == "hosted" and RUN_ID in obj["data"]["run"]["found"]
    assert {c["id"] for c in obj["checks"] if c["status"] == "fail"} >= {"reward-collapse"}
    lr = next(d for d in obj["data"]["deltas"] if d["key"] == "trainer.optim.lr")
    assert lr["old"] == 1e-6 and lr["new"] < 1e-6 and lr["old_from"] == "run config"  # learningRate of the record
    assert any(f["id"] == "collapse" for f in obj["data"]["stops_fired"])
    paths = [q["path"].split("?")[0] for q in stub.requests]
    assert f"/api/v1/rft/runs/{RUN_ID}" in paths and f"/api/v1/rft/runs/{RUN_ID}/metrics" in paths
    assert all(q["method"] == "GET" for q in stub.requests)  # reading never changes the run


@needs_prime
def test_hosted_watch_stops_when_the_run_is_over(tmp_path):
    with PrimeStub() as stub:
        routes(stub, kind="healthy", status="COMPLETED")
        r = run_script(
            TOOL,
            "--run",
            RUN_ID,
            "--watch",
            "--interval",
            "0.1",
            "--json",
            env=cli_env(stub.url, tmp_path / "home"),
            cwd=tmp_path,
        )
    obj = assert_result(r.json, TOOL, 0)
    assert obj["data"]["watch"]["stopped_because"] == "the run finished"


@needs_prime
@pytest.mark.parametrize(
    "status,body,code",
    [
        (500, {"detail": "Internal Server Error"}, 4),
        (401, {"detail": "Invalid API key"}, 3),
        (404, {"detail": "Run not found"}, 2),
    ],
)
def test_platform_failures_map_to_exit_codes(tmp_path, status, body, code):
    with PrimeStub() as stub:
        stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}"] = (status, body)
        r = run_script(TOOL, "--run", RUN_ID, "--json", env=cli_env(stub.url, tmp_path / "home"), cwd=tmp_path)
    obj = assert_result(r.json, TOOL, code)
    assert "Traceback" not in r.stdout + r.stderr and obj["next_steps"]


@needs_prime
def test_metrics_failure_after_the_run_record_is_exit_4(tmp_path):
    with PrimeStub() as stub:
        stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}"] = (200, {"run": F.hosted_run(RUN_ID)})
        stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}/metrics"] = (502, {"detail": "Bad Gateway"})
        r = run_script(TOOL, "--run", RUN_ID, "--json", env=cli_env(stub.url, tmp_path / "home"), cwd=tmp_path)
    assert_result(r.json, TOOL, 4)


@needs_prime
def test_no_api_key_is_exit_3(tmp_path):
    with PrimeStub() as stub:
        routes(stub)
        env = cli_env(stub.url, tmp_path / "home", PRIME_API_KEY="")
        r = run_script(TOOL, "--run", RUN_ID, "--json", env=env, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 3)
    assert "prime login" in " ".join(obj["next_steps"])


def test_prime_cli_missing_is_exit_3(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    r = run_script(TOOL, "--run", RUN_ID, "--json", env={"PATH": str(empty), "HOME": str(tmp_path)}, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 3)
    assert "prime" in obj["summary"]
