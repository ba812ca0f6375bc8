"""The prime CLI misbehaving or answering the unexpected: each outcome keeps its own exit code (issue 14, point 9).

A `prime` that hangs is a timeout (exit 4, naming the command, the limit and --timeout), never
"install prime" (exit 3, only when it is missing); the hung command and what it started are
stopped. `--status` never reports a run it could not read: an id the platform does not know is
bad input (exit 2), an answer without a status is a platform failure (exit 4). `--submit`
without `--yes` off a terminal is a usage error (exit 2) before any lookup or login check.
The real prime 0.18 runs against the loopback stub where the platform's answer matters; a
fake `prime` first on PATH plays the CLI's own failures.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import assert_result, run_script
from prime_stub import PrimeStub
from trainconfig_fixtures import NATIVE_CONFIG, RUN_ID, cli_env, hub_routes, submit_routes

TOOL = "submit_training"

needs_prime = pytest.mark.skipif(
    not (Path(sys.executable).parent / "prime").exists(), reason="the prime CLI is not installed in this venv"
)

# A stand-in for the CLI: FAKE_PRIME_MODE says how it misbehaves; `hang` also starts a child that
# would outlive it, and both write their pid so the test can see they were stopped.
FAKE_PRIME = textwrap.dedent(
    """\
    #!{python}
    import os, subprocess, sys, time
    mode = os.environ["FAKE_PRIME_MODE"]
    pids = os.environ.get("FAKE_PRIME_PIDS")
    if sys.argv[1:] == ["--version"] and mode != "hang-version":
        print("Prime CLI version: 0.18.0"); sys.exit(0)
    if mode.startswith("hang"):
        child = subprocess.Popen(["sleep", "60"])
        if pids:
            with open(pids, "a") as f:
                f.write(f"{{os.getpid()}}\\n{{child.pid}}\\n")
        time.sleep(60)
    if mode == "no-status":
        print('{{"run": {{"id": "x", "name": "y"}}}}'); sys.exit(0)
    if mode == "not-json":
        print("done"); sys.exit(0)
    print("unexpected", sys.argv); sys.exit(2)
    """
)


@pytest.fixture
def fake_prime(tmp_path):
    bindir = tmp_path / "fake-bin"
    bindir.mkdir()
    exe = bindir / "prime"
    exe.write_text(FAKE_PRIME.format(python=sys.executable))
    exe.chmod(0o755)
    pids = tmp_path / "pids.txt"

    def env(mode: str) -> dict[str, str]:
        return {
            "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "FAKE_PRIME_MODE": mode,
            "FAKE_PRIME_PIDS": str(pids),
            "HOME": str(tmp_path / "home"),
        }

    env.pids = pids  # type: ignore[attr-defined]
    return env


def _all_stopped(pids_file: Path) -> None:
    """Every process the hung `prime` started is gone (none left holding a pipe or a CPU)."""
    pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
    assert pids, "the fake prime never ran"
    deadline = time.monotonic() + 5
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":  # exited, not yet reaped by init
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"process {pid} started by the hung prime is still running")


def check(obj: dict, cid: str) -> dict:
    return next(c for c in obj["checks"] if c["id"] == cid)


@pytest.fixture
def native_config(tmp_path) -> Path:
    path = tmp_path / "configs" / "reverse-text.toml"
    path.parent.mkdir()
    path.write_text(NATIVE_CONFIG)
    return path


# -- a hanging CLI is a timeout ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hang-version", "hang"])
def test_preflight_hanging_prime_is_a_timeout_not_a_missing_cli(fake_prime, mode):
    t0 = time.monotonic()
    r = run_script("preflight", "--for", "hosted", "--timeout", "1", "--json", env=fake_prime(mode))
    assert time.monotonic() - t0 < 20
    obj = assert_result(r.json, "preflight", 4)
    assert r.returncode == 4
    failed = check(obj, "prime-cli" if mode == "hang-version" else "prime-auth")
    assert failed["status"] == "fail" and "timed out" in failed["message"]
    assert "`prime --version`" in failed["message"] if mode == "hang-version" else "`prime whoami`" in failed["message"]
    assert "--timeout" in failed["hint"] and "install" not in failed["hint"]
    assert "1 s" in failed["message"]
    _all_stopped(fake_prime.pids)


def test_submit_status_with_hanging_prime_is_a_timeout(fake_prime, tmp_path):
    t0 = time.monotonic()
    r = run_script(TOOL, "--status", RUN_ID, "--timeout", "1", "--json", env=fake_prime("hang"), cwd=tmp_path)
    assert time.monotonic() - t0 < 20
    obj = assert_result(r.json, TOOL, 4)
    status = check(obj, "run-status")
    assert "prime train get" in status["message"] and "within 1 s" in status["message"]
    assert "--timeout" in status["hint"] and "install" not in status["hint"]
    assert "status" not in obj["data"]  # no state was made up
    _all_stopped(fake_prime.pids)


def test_submit_lookups_with_hanging_prime_say_timeout_not_missing(fake_prime, tmp_path, native_config):
    r = run_script(
        TOOL, "--config", str(native_config), "--timeout", "1", "--json", env=fake_prime("hang"), cwd=tmp_path
    )
    obj = assert_result(r.json, TOOL, 4)
    hub = check(obj, "env-hub")
    assert hub["status"] == "fail" and "did not answer within 1 s" in hub["message"]
    assert "not on the" not in hub["message"]  # a hang says nothing about whether the environment exists
    _all_stopped(fake_prime.pids)


def test_submit_that_times_out_says_the_run_may_exist(fake_prime, tmp_path, native_config):
    r = run_script(
        TOOL,
        *(
            "--config",
            str(native_config),
            "--no-rehearse",
            "--offline",
            "--submit",
            "--yes",
            "--submit-timeout",
            "1",
            "--json",
        ),
        env=fake_prime("hang"),
        cwd=tmp_path,
    )
    obj = assert_result(r.json, TOOL, 4)
    sub = check(obj, "submit")
    assert "(timeout)" in sub["message"] and "prime train list" in sub["hint"] and "--submit-timeout" in sub["hint"]
    _all_stopped(fake_prime.pids)


def test_missing_prime_is_still_exit_3(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    r = run_script(TOOL, "--status", RUN_ID, "--json", env={"PATH": str(bindir)}, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 3)
    assert "not installed" in obj["summary"]


# -- --status never reports a run it could not read --------------------------------------------


@needs_prime
@pytest.mark.parametrize(
    "answer,code,words",
    [
        ((404, {"detail": "Run not found"}), 2, "no run garbage on the platform"),
        ((422, {"detail": "invalid run id"}), 2, "no run garbage on the platform"),
        ((500, {"detail": "boom"}), 4, "could not get run garbage"),
        ((401, {"detail": "Invalid API key"}), 3, "could not get run garbage"),
    ],
    ids=["404", "422", "500", "401"],
)
def test_status_of_an_unknown_run(tmp_path, answer, code, words):
    with PrimeStub() as stub:
        stub.responses["GET /api/v1/rft/runs/garbage"] = answer
        r = run_script(TOOL, "--status", "garbage", "--json", env=cli_env(stub.url, tmp_path / "home"), cwd=tmp_path)
    obj = assert_result(r.json, TOOL, code)
    assert r.returncode == code
    status = check(obj, "run-status")
    assert status["status"] == "fail" and words in status["message"] and status["hint"]
    assert "\n" not in obj["summary"] and words in obj["summary"]
    assert "status" not in obj["data"]


@pytest.mark.parametrize("mode", ["no-status", "not-json"])
def test_status_answer_without_a_status_is_never_a_pass(fake_prime, tmp_path, mode):
    r = run_script(TOOL, "--status", RUN_ID, "--json", env=fake_prime(mode), cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 4)
    assert "answered without a run status" in check(obj, "run-status")["message"]
    assert "status" not in obj["data"]


def test_status_that_is_not_a_run_id_is_usage(tmp_path):
    r = run_script(TOOL, "--status", "../etc/passwd", "--json", cwd=tmp_path)
    assert_result(r.json, TOOL, 2)


# -- --submit without --yes: a usage error first ------------------------------------------------


@needs_prime
@pytest.mark.parametrize("offline", [False, True], ids=["online", "offline"])
def test_submit_without_yes_is_usage_before_login(tmp_path, native_config, offline):
    with PrimeStub() as stub:
        stub.responses.update(submit_routes())
        env = cli_env(stub.url, tmp_path / "home", PRIME_API_KEY="")  # not logged in
        args = ["--config", str(native_config), "--submit", "--json"] + (["--offline"] if offline else [])
        r = run_script(TOOL, *args, env=env, cwd=tmp_path)
        requests = list(stub.requests)
    obj = assert_result(r.json, TOOL, 2)
    assert requests == []  # no lookup, no login check, no launch
    confirm = check(obj, "confirm")
    assert "--yes" in confirm["message"] and "--submit --yes" in confirm["hint"]
    assert [c["id"] for c in obj["checks"]] == ["confirm"]


@needs_prime
def test_submit_with_yes_not_logged_in_is_exit_3(tmp_path, native_config):
    with PrimeStub() as stub:
        stub.responses.update(hub_routes("primeintellect/reverse-text"))
        stub.responses["POST /api/v1/training/runs/prepare"] = (401, {"detail": "Invalid API key"})
        env = cli_env(stub.url, tmp_path / "home", PRIME_API_KEY="")
        r = run_script(
            TOOL,
            "--config",
            str(native_config),
            "--no-rehearse",
            "--offline",
            "--submit",
            "--yes",
            "--json",
            env=env,
            cwd=tmp_path,
        )
        launches = [q for q in stub.requests if q["method"] == "POST" and q["path"] == "/api/v1/training/runs"]
    assert_result(r.json, TOOL, 3)
    assert launches == []


# -- no secret leaves through submit_training ---------------------------------------------------

PLANTED = {
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",  # W&B keys are 40 hex characters
    "HF_TOKEN": "hf_plantedTokenValue0123456789abcdef",
    "PRIME_API_KEY": "pit_plantedPrimeKey0123456789abcdef",
}


def _no_planted_secret(*texts: str) -> None:
    for name, value in PLANTED.items():
        for text in texts:
            assert value not in text, f"{name}'s value leaked"


def _written(folder: Path) -> list[str]:
    return [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and "home" not in p.parts]


@needs_prime
@pytest.mark.parametrize("json_flag", [True, False], ids=["json", "human"])
def test_submit_training_never_prints_or_writes_a_secret(tmp_path, json_flag):
    work = tmp_path / "work"
    work.mkdir()
    forward = ["--forward-env", "WANDB_API_KEY", "--forward-env", "HF_TOKEN"]
    with PrimeStub() as stub:
        stub.responses.update(hub_routes("primeintellect/reverse-text"))
        stub.responses.update(submit_routes())
        env = cli_env(stub.url, tmp_path / "home", **PLANTED)
        new = ["--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "primeintellect/reverse-text", "--no-rehearse"]
        new += ["--wandb-project", "p", "--output", "configs/run.toml", *forward]
        dry = run_script(TOOL, *new, *(["--json"] if json_flag else []), env=env, cwd=work)
        sub = run_script(
            TOOL,
            *("--config", "configs/run.toml", "--no-rehearse", "--submit", "--yes", *forward),
            *(["--json"] if json_flag else []),
            env=env,
            cwd=work,
        )
        launched = [q for q in stub.requests if q["method"] == "POST" and q["path"] == "/api/v1/training/runs"]
    assert dry.returncode == 0 and sub.returncode == 0, (dry, sub)
    if json_flag:
        assert "config_text" in dry.json["data"] and sub.json["data"]["run_id"] == RUN_ID
    # forwarded by name, so the platform got the values; nothing on our side shows them
    assert launched and launched[0]["body"]["wandbApiKey"] == PLANTED["WANDB_API_KEY"]
    files = _written(work)
    assert any("[monitors.wandb]" in f or "wandb" in f for f in files) and any(RUN_ID in f for f in files)
    _no_planted_secret(dry.stdout, dry.stderr, sub.stdout, sub.stderr, *files)


def test_secret_typed_into_a_flag_is_masked_and_fails_the_config(tmp_path):
    """A key pasted into --env-arg (or any flag): the JSON never shows it, and the failed config is not written
    (a config is written only when every check passed), so no file can hold it either."""
    r = run_script(
        TOOL,
        *("--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "primeintellect/reverse-text", "--offline"),
        *("--env-arg", f'judge_api_key="{PLANTED["PRIME_API_KEY"]}"', "--output", "configs/run.toml", "--json"),
        env={"HOME": str(tmp_path / "home")},
        cwd=tmp_path,
    )
    _no_planted_secret(r.stdout, r.stderr, *_written(tmp_path))
    obj = assert_result(r.json, TOOL, 1)
    assert check(obj, "no-secrets")["status"] == "fail"
    assert not (tmp_path / "configs" / "run.toml").exists()
    assert "not written" in obj["summary"]
