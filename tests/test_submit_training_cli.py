"""submit_training.py end to end: the real `prime` CLI against a loopback stub of the platform."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import assert_result, run_script
from prime_stub import PrimeStub
from trainconfig_fixtures import FLAT_CONFIGS, NATIVE_CONFIG, RUN_ID, cli_env, hub_routes, posted, submit_routes

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "submit_training"
LAUNCH = "/api/v1/training/runs"
WANDB_VALUE = "wandb-secret-value-0123456789abcdef"

needs_prime = pytest.mark.skipif(
    not (Path(sys.executable).parent / "prime").exists(), reason="the prime CLI is not installed in this venv"
)


def checks_by_id(obj, cid):
    return [c for c in obj["checks"] if c["id"] == cid]


@pytest.fixture
def native_config(tmp_path) -> Path:
    path = tmp_path / "configs" / "reverse-text.toml"
    path.parent.mkdir()
    path.write_text(NATIVE_CONFIG)
    return path


@needs_prime
def test_submit_sends_exactly_the_reviewed_config(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses.update(hub_routes("primeintellect/reverse-text"))
        stub.responses.update(submit_routes())
        env = cli_env(stub.url, tmp_path / "home", WANDB_API_KEY=WANDB_VALUE, PRIME_FRONTEND_URL="https://dash.test")
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--no-rehearse",
            "--submit",
            "--yes",
            "--forward-env",
            "WANDB_API_KEY",
            "--json",
            env=env,
            cwd=tmp_path,
        )
        obj = assert_result(r.json, TOOL, 0)
        launches = posted(stub, LAUNCH)
        hub_lookups = [q for q in stub.requests if q["path"].startswith("/api/v1/environmentshub/")]
    assert len(launches) == 1, stub.requests
    body = launches[0]["body"]
    assert body["config"] == tomllib.loads(NATIVE_CONFIG)  # byte-for-byte the reviewed file's content
    assert body["wandbApiKey"] == WANDB_VALUE  # forwarded only because of -e
    assert "hfToken" not in body
    assert hub_lookups and obj["data"]["fast_path"] is True
    assert obj["data"]["run_id"] == RUN_ID
    assert obj["data"]["dashboard_url"] == f"https://dash.test/dashboard/training/{RUN_ID}"
    assert obj["data"]["written"] is False  # the unchanged starting file is what was submitted
    record = Path(obj["data"]["run_record"])
    rec = json.loads((tmp_path / record if not record.is_absolute() else record).read_text())
    assert rec["run_id"] == RUN_ID and rec["forwarded_env"] == ["WANDB_API_KEY"]
    everything = r.stdout + r.stderr + json.dumps(rec)
    assert WANDB_VALUE not in everything and "tok-not-shown" not in everything


@needs_prime
def test_platform_422_is_a_failed_check_and_no_secret_without_e(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses.update(submit_routes(422, {"detail": "orchestrator.group_size: must divide batch_size"}))
        env = cli_env(stub.url, tmp_path / "home", WANDB_API_KEY=WANDB_VALUE)
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--no-rehearse",
            "--submit",
            "--yes",
            "--offline",
            "--json",
            env=env,
            cwd=tmp_path,
        )
        launches = posted(stub, LAUNCH)
    obj = assert_result(r.json, TOOL, 1)
    sub = checks_by_id(obj, "submit")[0]
    assert sub["status"] == "fail" and "rejected" in sub["message"] and "must divide batch_size" in sub["message"]
    assert len(launches) == 1 and "wandbApiKey" not in launches[0]["body"]  # not forwarded without -e
    assert "run_id" not in obj["data"]


@needs_prime
def test_401_is_a_login_problem_and_nothing_launches(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses["POST /api/v1/training/runs/prepare"] = (401, {"detail": "Invalid API key"})
        stub.responses[f"POST {LAUNCH}"] = (200, {"runId": "must-not-happen", "tokenValue": "x"})
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--no-rehearse",
            "--submit",
            "--yes",
            "--offline",
            "--json",
            env=cli_env(stub.url, tmp_path / "home"),
            cwd=tmp_path,
        )
        launches = posted(stub, LAUNCH)
    obj = assert_result(r.json, TOOL, 3)
    assert launches == []
    assert "login" in checks_by_id(obj, "submit")[0]["hint"]


@needs_prime
def test_environment_missing_on_hub_fails_before_submission(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses.update({"GET /api/v1/training/available-fft-models": (200, {"models": []})})
        stub.responses.update(submit_routes())
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--submit",
            "--yes",
            "--json",
            env=cli_env(stub.url, tmp_path / "home"),
            cwd=tmp_path,
        )
        launches = posted(stub, LAUNCH)
        prepared = posted(stub, LAUNCH + "/prepare")
    obj = assert_result(r.json, TOOL, 1)
    hub = checks_by_id(obj, "env-hub")[0]
    assert hub["status"] == "fail" and "not on the Environments Hub" in hub["message"]
    assert checks_by_id(obj, "submit")[0]["status"] == "skip"
    assert launches == [] and prepared == []


@needs_prime
def test_network_down_is_exit_4_not_not_found(tmp_path, native_config):
    env = cli_env("http://127.0.0.1:9", tmp_path / "home")  # nothing listens on the discard port
    r = run_script(TOOL, "--config", str(native_config), "--submit", "--yes", "--json", env=env, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 4)
    hub = checks_by_id(obj, "env-hub")[0]
    assert hub["status"] == "fail" and "not on the" not in hub["message"] and "--offline" in hub["hint"]
    assert checks_by_id(obj, "submit")[0]["status"] == "skip"


def test_submit_without_yes_never_prompts_and_sends_nothing(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses.update(submit_routes())
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--submit",
            "--offline",
            "--json",
            env=cli_env(stub.url, tmp_path / "home"),
            cwd=tmp_path,
        )
        requests = list(stub.requests)
    obj = assert_result(r.json, TOOL, 2)
    assert requests == []
    assert "--yes" in checks_by_id(obj, "confirm")[0]["hint"]


def test_prime_cli_missing_is_exit_3(tmp_path, native_config):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path / "home")}
    r = run_script(
        TOOL,
        "--config",
        str(native_config),
        "--no-rehearse",
        "--submit",
        "--yes",
        "--offline",
        "--json",
        env=env,
        cwd=tmp_path,
    )
    obj = assert_result(r.json, TOOL, 3)
    assert "prime" in obj["summary"]


@needs_prime
@pytest.mark.parametrize("state,code", [("RUNNING", 0), ("FAILED", 1)])
def test_status_reports_state_and_progress(tmp_path, state, code):
    run = {
        "id": RUN_ID,
        "userId": "u1",
        "status": state,
        "createdAt": "2026-11-22T10:00:00Z",
        "updatedAt": "2026-11-22T10:05:00Z",
        "maxSteps": 50,
        "baseModel": "Qwen/Qwen3-4B-Instruct-2507",
        "errorMessage": "OOM in trainer" if state == "FAILED" else None,
    }
    with PrimeStub() as stub:
        stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}"] = (200, {"run": run})
        stub.responses[f"GET /api/v1/rft/runs/{RUN_ID}/progress"] = (
            200,
            {"latestStep": 7, "stepsWithSamples": [5, 6, 7]},
        )
        r = run_script(TOOL, "--status", RUN_ID, "--json", env=cli_env(stub.url, tmp_path / "home"), cwd=tmp_path)
    obj = assert_result(r.json, TOOL, code)
    assert obj["data"]["status"] == state and obj["data"]["progress"]["latest_step"] == 7
    assert "step 7/50" in obj["summary"]
    if state == "FAILED":
        assert "OOM in trainer" in checks_by_id(obj, "run-status")[0]["message"]


def test_dry_run_writes_then_refuses_to_overwrite(tmp_path):
    args = (
        "--model",
        "Qwen/Qwen3-4B-Instruct-2507",
        "--env",
        "primeintellect/alphabet-sort",
        "--env-arg",
        "min_turns=3",
        "--no-rehearse",  # a Hub environment whose source is not here: nothing to rehearse
        "--max-steps",
        "20",
        "--offline",
        "--json",
    )
    r = run_script(TOOL, *args, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    out = tmp_path / "configs" / "alphabet-sort.toml"
    assert obj["data"]["config_path"] == "configs/alphabet-sort.toml" and out.is_file()
    written = tomllib.loads(out.read_text())
    assert written["max_steps"] == 20
    assert written["orchestrator"]["train"]["source"][0]["env"]["taskset"] == {
        "id": "primeintellect/alphabet-sort",
        "min_turns": 3,
    }
    out.write_text(out.read_text() + "# my edit\n")
    again = run_script(TOOL, *args[:-4], "--max-steps", "30", "--offline", "--json", cwd=tmp_path)
    assert "already exists" in assert_result(again.json, TOOL, 2)["summary"]
    assert out.read_text().endswith("# my edit\n")
    forced = run_script(TOOL, *args[:-4], "--max-steps", "30", "--offline", "--force", "--json", cwd=tmp_path)
    assert_result(forced.json, TOOL, 0)
    assert tomllib.loads(out.read_text())["max_steps"] == 30


def test_from_flat_lists_mappings_and_writes_current_shape(tmp_path):
    flat = tmp_path / "old.toml"
    flat.write_text(FLAT_CONFIGS["alphabet-sort"])
    # the quickstart's 5 turns of 512 tokens need more than the template's seq_len 2048 (tests/test_submit_stages.py)
    args = ["--no-rehearse", "--seq-len", "4096"]
    r = run_script(TOOL, "--from-flat", str(flat), "--output", "new.toml", *args, "--offline", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    mapped = {m["from"]: m for m in obj["data"]["mappings"]}
    assert mapped["rollouts_per_example"]["to"] == "orchestrator.group_size"
    assert mapped["model"]["action"] == "renamed"
    assert "+[model]" in obj["data"]["diff"] and "-model = " in obj["data"]["diff"]
    new = tomllib.loads((tmp_path / "new.toml").read_text())
    assert new["model"]["name"] == "Qwen/Qwen3-30B-A3B-Instruct-2507" and "env" not in new
    assert flat.read_text() == FLAT_CONFIGS["alphabet-sort"]  # the old file is untouched


def test_flat_config_given_as_config_fails_with_hint(tmp_path):
    flat = tmp_path / "old.toml"
    flat.write_text(FLAT_CONFIGS["lora"])
    r = run_script(TOOL, "--config", str(flat), "--offline", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 1)
    assert "--from-flat" in checks_by_id(obj, "flat-shape")[0]["hint"]


def test_bad_toml_is_bad_input(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("max_steps = [\n")
    r = run_script(TOOL, "--config", str(bad), "--offline", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 2)
    assert "not valid TOML" in obj["summary"] and "Traceback" not in r.stdout + r.stderr


def test_new_config_needs_model_and_env(tmp_path):
    r = run_script(TOOL, "--model", "m/x", "--offline", "--json", cwd=tmp_path)
    assert_result(r.json, TOOL, 2)
    r = run_script(TOOL, "--env-arg", "a=1", "--env", "o/x", "--offline", "--json", cwd=tmp_path)
    assert_result(r.json, TOOL, 2)


def test_human_output_shows_config_and_verdict(tmp_path, native_config):
    r = run_script(
        TOOL,
        "--config",
        str(native_config),
        "--no-rehearse",
        "--max-steps",
        "60",
        "--output",
        "edited.toml",
        "--offline",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r
    assert "+max_steps = 60  # short first run" in r.stdout and "submit_training: PASS" in r.stdout


# -- prime-rl's own schema (--prime-rl-dir) ------------------------------------------------------------

FAKE_RLCONFIG = """
from pydantic import BaseModel, ConfigDict

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

class Model(_Strict):
    name: str

class Orchestrator(_Strict):
    batch_size: int
    group_size: int = 1
    model_config = ConfigDict(extra="allow")

class RLConfig(_Strict):
    max_steps: int | None = None
    seq_len: int = 2048
    model: Model
    orchestrator: Orchestrator
    model_config = ConfigDict(extra="allow")
"""

FAKE_PYDANTIC_CONFIG = """
import tomllib
def cli(cls, args):
    return cls.model_validate(tomllib.load(open(args[1], "rb")))
"""


def fake_checkout(root: Path) -> Path:
    """A stand-in prime-rl checkout: same layout and entry points, a tiny RLConfig (plumbing test only)."""
    src = root / "packages" / "prime-rl-configs" / "src"
    (src / "prime_rl" / "configs").mkdir(parents=True)
    (src / "prime_rl" / "configs" / "rl.py").write_text(FAKE_RLCONFIG)
    (src / "pydantic_config.py").write_text(FAKE_PYDANTIC_CONFIG)
    return root


def test_prime_rl_dir_runs_its_schema(tmp_path, native_config):
    checkout = fake_checkout(tmp_path / "prime-rl")
    ok = run_script(
        TOOL,
        "--config",
        str(native_config),
        "--no-rehearse",
        "--offline",
        "--prime-rl-dir",
        str(checkout),
        "--prime-rl-python",
        sys.executable,
        "--json",
        cwd=tmp_path,
    )
    assert checks_by_id(assert_result(ok.json, TOOL, 0), "prime-rl-schema")[0]["status"] == "pass"
    bad = tmp_path / "bad.toml"
    bad.write_text(NATIVE_CONFIG.replace("[model]\n", "[model]\nrevision = 3\n"))
    r = run_script(
        TOOL,
        "--config",
        str(bad),
        "--offline",
        "--prime-rl-dir",
        str(checkout),
        "--prime-rl-python",
        sys.executable,
        "--json",
        cwd=tmp_path,
    )
    obj = assert_result(r.json, TOOL, 1)
    schema = [c for c in checks_by_id(obj, "prime-rl-schema") if c["status"] == "fail"]
    assert schema and "model.revision" in schema[0]["message"]


def test_prime_rl_dir_that_is_not_a_checkout_is_bad_input(tmp_path, native_config):
    r = run_script(
        TOOL, "--config", str(native_config), "--offline", "--prime-rl-dir", str(tmp_path), "--json", cwd=tmp_path
    )
    assert_result(r.json, TOOL, 2)


@pytest.mark.skipif(
    not (os.environ.get("VLAB_PRIME_RL_DIR") and os.environ.get("VLAB_PRIME_RL_PYTHON")),
    reason="set VLAB_PRIME_RL_DIR (a prime-rl checkout) and VLAB_PRIME_RL_PYTHON (Python 3.12 "
    "with its schema dependencies) to run against the real schema",
)
def test_real_prime_rl_schema(tmp_path):
    """Against the real RLConfig: an unknown key is rejected, the builder's output is accepted."""
    flat = tmp_path / "old.toml"
    flat.write_text(FLAT_CONFIGS["lora"])
    args = ("--prime-rl-dir", os.environ["VLAB_PRIME_RL_DIR"], "--prime-rl-python", os.environ["VLAB_PRIME_RL_PYTHON"])
    r = run_script(TOOL, "--from-flat", str(flat), "--output", "new.toml", "--offline", *args, "--json", cwd=tmp_path)
    obj = r.json
    schema = checks_by_id(obj, "prime-rl-schema")
    # The taskset package may be absent from the schema interpreter: that is a warning, never a pass.
    assert schema and all(c["status"] in ("pass", "warn") for c in schema), schema
    bad = tmp_path / "bad.toml"
    bad.write_text((tmp_path / "new.toml").read_text().replace("[orchestrator]\n", "[orchestrator]\nbogus_key = 1\n"))
    r = run_script(TOOL, "--config", str(bad), "--offline", *args, "--json", cwd=tmp_path)
    obj = r.json
    assert obj["exit_code"] == 1
    assert any("bogus" in c["message"] for c in obj["checks"] if c["status"] == "fail")


@needs_prime
@pytest.mark.parametrize("answer,code", [("y", 0), ("n", 2)])
def test_interactive_confirmation_on_a_terminal(tmp_path, native_config, answer, code):
    """Without --yes, a terminal user is asked; only "y" submits."""
    import pty
    import subprocess

    from conftest import SCRIPTS

    with PrimeStub() as stub:
        stub.responses.update(submit_routes())
        env = dict(os.environ, **cli_env(stub.url, tmp_path / "home"))
        master, slave = pty.openpty()
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(SCRIPTS / f"{TOOL}.py"),
                    "--config",
                    str(native_config),
                    "--no-rehearse",
                    "--submit",
                    "--offline",
                    "--json",
                ],
                stdin=slave,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=tmp_path,
            )
            os.write(master, f"{answer}\n".encode())
            out, err = proc.communicate(timeout=120)
        finally:
            os.close(master)
            os.close(slave)
        launches = posted(stub, LAUNCH)
    assert "Launch a Hosted Training run" in err
    obj = assert_result(json.loads(out), TOOL, code)
    assert len(launches) == (1 if answer == "y" else 0)
    if answer == "y":
        assert obj["data"]["run_id"] == RUN_ID
