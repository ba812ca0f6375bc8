"""preflight: each outcome simulated with a fake `prime` first on PATH, packages present or absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, SCRIPTS, SKILL_ROOT, VERIFIERS, assert_result, run_script
from prime_stub import WHOAMI_OK, PrimeStub, prime_env

SECRET = "pit_live_abcdefghijklmnopqrstuvwxyz0123"

# What prime 0.18 prints for each outcome (from prime_cli's own messages).
FAKE_PRIME = textwrap.dedent(
    """\
    #!{python}
    import os, sys
    mode = os.environ.get("FAKE_PRIME_MODE", "ok")
    if sys.argv[1:] == ["--version"]:
        print("Prime CLI version: 0.18.0"); sys.exit(0)
    if sys.argv[1:2] == ["whoami"]:
        if mode == "ok":
            print("Account: dev (key " + os.environ.get("PRIME_API_KEY", "") + ")"); sys.exit(0)
        if mode == "no-key":
            print("Error: No API key configured. Use command 'prime login' to configure your API key."); sys.exit(1)
        if mode == "rejected":
            print("Error: API key unauthorized. Please check that your API key has the correct permissions, "
                  "generate a new one at https://app.primeintellect.ai/dashboard/tokens or run 'prime login' "
                  "to configure a new API key."); sys.exit(1)
        if mode == "offline":
            print("Error: Request failed: ConnectError at GET https://api.primeintellect.ai/api/v1/user/whoami: "
                  "[Errno -3] Temporary failure in name resolution"); sys.exit(1)
        if mode == "hang":
            import time; time.sleep(30)
    print("unexpected", sys.argv); sys.exit(2)
    """
)


@pytest.fixture
def fake_prime(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "prime"
    exe.write_text(FAKE_PRIME.format(python=sys.executable))
    exe.chmod(0o755)

    def env(mode: str) -> dict[str, str]:
        return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "FAKE_PRIME_MODE": mode, "PRIME_API_KEY": SECRET}

    return env


def check(obj: dict, check_id: str) -> dict:
    return next(c for c in obj["checks"] if c["id"] == check_id)


@pytest.mark.parametrize(
    "mode, code, state",
    [
        ("ok", 0, "logged_in"),
        ("no-key", 3, "no_api_key"),
        ("rejected", 3, "key_rejected"),
        ("offline", 4, "unreachable"),
    ],
)
def test_hosted_login_outcomes(fake_prime, mode, code, state):
    r = run_script("preflight", "--for", "hosted", "--json", env=fake_prime(mode))
    obj = assert_result(r.json, "preflight")
    assert r.returncode == code == obj["exit_code"], r
    assert obj["data"]["auth"] == state
    assert obj["data"]["prime_version"] == "0.18.0"
    auth = check(obj, "prime-auth")
    assert auth["status"] == ("pass" if code == 0 else "fail")
    if code:
        assert auth["hint"]
    assert SECRET not in r.stdout + r.stderr


def test_hosted_login_timeout_is_external_failure(fake_prime):
    r = run_script("preflight", "--for", "hosted", "--json", "--timeout", "1", env=fake_prime("hang"))
    assert r.returncode == 4 and r.json["data"]["auth"] == "timeout"


def test_offline_skips_login(fake_prime):
    r = run_script("preflight", "--for", "hosted", "--offline", "--json", env=fake_prime("offline"))
    assert r.returncode == 0, r
    assert check(r.json, "prime-auth")["status"] == "skip"


def test_hosted_without_prime_cli_is_missing_prerequisite(tmp_path):
    # a PATH with only the Python interpreter: no prime anywhere
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    r = run_script("preflight", "--for", "hosted", "--json", env={"PATH": str(bindir)})
    obj = assert_result(r.json, "preflight", 3)
    assert check(obj, "prime-cli")["status"] == "fail"
    # from a clone: the hosted extra's requirement, as pyproject.toml declares it, never the pack's extra by name
    assert "pip install 'prime>=0.13'" in check(obj, "prime-cli")["hint"]
    assert "verifiers-lab[" not in check(obj, "prime-cli")["hint"]
    # the default profile only warns: pushing is later
    r = run_script("preflight", "--json", env={"PATH": str(bindir)})
    assert check(r.json, "prime-cli")["status"] == "warn"


def test_env_profile_with_packages_present():
    r = run_script("preflight", "--json", "--offline")
    obj = assert_result(r.json, "preflight")
    assert obj["data"]["verifiers"]["version"] == VERIFIERS.version
    assert set(obj["data"]["verifiers"]["generations"]) == set(VERIFIERS.generations)
    assert check(obj, "verifiers")["status"] == "pass"
    assert check(obj, "datasets")["status"] == "pass"
    assert r.returncode == (0 if obj["status"] == "pass" else 1)
    if VERIFIERS.version.startswith("0.4"):
        assert check(obj, "verifiers-classic")["status"] == "warn"


def test_packages_absent_in_bare_venv(tmp_path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    r = run_script("preflight", "--json", python=str(venv / "bin" / "python"), env={"PATH": str(venv / "bin")})
    obj = assert_result(r.json, "preflight", 3)  # rich is absent too: the plain fallback still works
    assert check(obj, "verifiers")["status"] == "fail" and "pip install" in check(obj, "verifiers")["hint"]
    assert check(obj, "datasets")["status"] == "fail"
    human = run_script("preflight", python=str(venv / "bin" / "python"), env={"PATH": str(venv / "bin")})
    assert human.returncode == 3 and "verifiers is not installed" in human.stdout


def test_default_profile_imports_nothing_heavy():
    code = (
        f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); sys.argv=['preflight','--json','--offline'];"
        "import preflight; import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()): preflight.main()\n"
        "heavy = [m for m in ('torch', 'vllm', 'verifiers', 'transformers', 'datasets') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_local_train_profile_reports_torch_and_gpus():
    r = run_script("preflight", "--for", "local-train", "--offline", "--json")
    obj = assert_result(r.json, "preflight")
    assert check(obj, "torch")["status"] == "pass"
    assert isinstance(obj["data"]["gpus"], list)
    assert check(obj, "gpu")["status"] in ("pass", "warn")
    assert check(obj, "vllm")["status"] in ("pass", "warn", "fail")


@pytest.mark.skipif(shutil.which("prime") is None, reason="prime CLI not installed")
def test_real_prime_cli_against_loopback_stub(tmp_path):
    """The classifier against what the real prime CLI prints, served by a stub API on 127.0.0.1."""
    with PrimeStub() as stub:
        stub.responses["GET /api/v1/user/whoami"] = (200, WHOAMI_OK)
        r = run_script("preflight", "--for", "hosted", "--json", env=prime_env(tmp_path, stub.url, SECRET))
        assert r.returncode == 0, r
        assert stub.requests and stub.requests[-1]["authorization"] == f"Bearer {SECRET}"
        stub.responses["GET /api/v1/user/whoami"] = (401, {"detail": "Unauthorized"})
        r = run_script("preflight", "--for", "hosted", "--json", env=prime_env(tmp_path, stub.url, SECRET))
        assert (r.returncode, r.json["data"]["auth"]) == (3, "key_rejected"), r
        assert SECRET not in r.stdout + r.stderr
        r = run_script("preflight", "--for", "hosted", "--json", env=prime_env(tmp_path, stub.url, ""))
        assert (r.returncode, r.json["data"]["auth"]) == (3, "no_api_key"), r
    # the stub is gone: nothing listens on that port now
    r = run_script("preflight", "--for", "hosted", "--json", env=prime_env(tmp_path, stub.url, SECRET))
    assert (r.returncode, r.json["data"]["auth"]) == (4, "unreachable"), r


def test_a_skill_folder_installed_by_npx_is_told_to_install_prime_not_the_packs_extra(tmp_path):
    """Issue 38: `npx skills add` copies the skill folder only (no pyproject.toml, no pip package): the hint
    named `verifiers-lab[hosted]`, a package that user never installed."""
    skill = tmp_path / ".agents" / "skills" / "verifiers-lab"
    shutil.copytree(SKILL_ROOT, skill, ignore=shutil.ignore_patterns("__pycache__"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    proc = subprocess.run(
        [sys.executable, str(skill / "scripts" / "preflight.py"), "--for", "hosted", "--json"],
        env={**os.environ, "PATH": str(bindir), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    obj = assert_result(json.loads(proc.stdout), "preflight", 3)
    hint = check(obj, "prime-cli")["hint"]
    assert "verifiers-lab[" not in hint and "install prime" in hint and "prime login" in hint, hint
