"""Ctrl-C from the first line of every script: exit 130, one line on stderr, one JSON object with --json.

The interrupt is delivered deterministically while the script's own imports run (the
moment a real Ctrl-C gave a bare traceback and no JSON): ``KeyboardInterrupt`` is raised by
the import of ``vlab.core.cli``, the first import after the dependency guard.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, SKILL_ROOT

SCRIPTS = sorted(p.stem for p in (SKILL_ROOT / "scripts").glob("*.py"))

WRAPPER = """
import builtins, runpy, sys
real = builtins.__import__
fired = []
def fake(name, *a, **k):
    if name == "vlab.core.cli" and not fired:
        fired.append(1)
        raise KeyboardInterrupt
    return real(name, *a, **k)
builtins.__import__ = fake
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize("json_flag", [True, False], ids=["json", "human"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_interrupt_during_imports(script, json_flag):
    path = str(SKILL_ROOT / "scripts" / f"{script}.py")
    argv = [sys.executable, "-c", WRAPPER, path, *(["--json"] if json_flag else [])]
    t0 = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(SKILL_ROOT / "scripts")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 130, proc
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "interrupted" in proc.stderr
    if json_flag:
        obj = json.loads(proc.stdout)
        assert obj["status"] == "interrupted" and obj["exit_code"] == 130
    else:
        assert proc.stdout == ""


SIGTERM_WRAPPER = WRAPPER.replace("raise KeyboardInterrupt", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")


@pytest.mark.parametrize("script", SCRIPTS)
def test_sigterm_during_imports(script):
    """A real SIGTERM while the script's imports run (after the guard): exit 143, one line, one JSON object."""
    path = str(SKILL_ROOT / "scripts" / f"{script}.py")
    argv = [sys.executable, "-c", SIGTERM_WRAPPER, path, "--json"]
    env = {**os.environ, "PYTHONPATH": str(SKILL_ROOT / "scripts")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 143, proc
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.strip().endswith(": terminated (SIGTERM)")
    obj = json.loads(proc.stdout)
    assert obj["status"] == "interrupted" and obj["exit_code"] == 143


def test_sigterm_inside_a_tool_keeps_the_partial_result(capsys):
    from argparse import ArgumentParser

    from vlab.core import cli

    def execute(args, result):
        result.passed("first", "done before the signal")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)  # the handler raises here
        result.passed("second", "never reached")

    parser = ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--strict", action="store_true")
    from vlab.core import guard  # installs the SIGTERM handler, as every script's first import

    # ...in a fresh process: in this one an earlier test may have loaded a classic environment, whose
    # verifiers installs its own SIGTERM handler (exit(143) without our result)
    saved = signal.signal(signal.SIGTERM, guard._on_sigterm)
    t0 = time.monotonic()
    try:
        assert cli.run("demo", parser, execute, argv=["--json"]) == 143
    finally:
        signal.signal(signal.SIGTERM, saved)
    assert time.monotonic() - t0 < 30  # a bound on the 60 s sleep, generous for a loaded machine
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert obj["exit_code"] == 143 and obj["summary"] == "terminated (SIGTERM)"
    assert [c["id"] for c in obj["checks"]] == ["first"]  # the partial result
    assert err.strip() == "demo: terminated (SIGTERM)"


# -- Ctrl-C in the middle of a run: scoring in the worker, asyncio in the parent ---------------

import json as _json  # noqa: E402
from pathlib import Path  # noqa: E402

import env_fixtures as fx  # noqa: E402


def _marking_reward(mark: Path, is_async: bool, indent: str = "    ") -> str:
    """A reward that says it started (a line in ``mark``), then takes its time."""
    body = [f"open({str(mark)!r}, 'a').write('scoring\\n')"]
    body += ["await asyncio.sleep(3)" if is_async else "time.sleep(3)", "return 1.0"]
    return "\n".join(indent + line for line in body)


def _interrupt_when_scoring(
    argv: list[str], mark: Path, cwd: Path, sig: int = signal.SIGINT
) -> tuple[subprocess.CompletedProcess, float]:
    """Start the script, wait until the user's reward runs, send SIGINT as a terminal's Ctrl-C would (or ``sig``)."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        # a terminal's process gets Ctrl-C; a suite started in the background (`cmd &` without job control)
        # hands its children SIGINT ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 240
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    assert mark.exists(), "the reward never ran"
    time.sleep(0.5)  # inside the awaits of the scoring call
    t0 = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), time.monotonic() - t0


def _clean_interrupt(run: subprocess.CompletedProcess, tool: str, seconds: float) -> None:
    assert run.returncode == 130, run
    assert "Traceback" not in run.stderr and "Exception" not in run.stderr, run.stderr
    assert run.stderr.strip().splitlines()[-1] == f"{tool}: interrupted", run.stderr
    obj = _json.loads(run.stdout)
    assert obj["status"] == "interrupted" and obj["exit_code"] == 130
    assert seconds < 20, f"took {seconds:.1f} s to stop"


@pytest.mark.slow
@pytest.mark.classic
@pytest.mark.parametrize("is_async", [True, False], ids=["async", "sync"])
def test_interrupt_while_test_reward_scores(tmp_path, is_async):
    mark = tmp_path / "scoring.txt"
    funcs = "import asyncio, time\n\n" + f"{'async ' if is_async else ''}def slow(completion, answer) -> float:\n"
    funcs += _marking_reward(mark, is_async) + "\n"
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    env = fx.classic_env(tmp_path, "slow_env", funcs, "vf.Rubric(funcs=[slow])")
    argv = [sys.executable, str(SKILL_ROOT / "scripts" / "test_reward.py"), str(env)]
    argv += ["--env-args", _json.dumps({"dataset_path": str(data)}), "--timeout", "30", "--json"]
    run, seconds = _interrupt_when_scoring(argv, mark, tmp_path)
    _clean_interrupt(run, "test_reward", seconds)
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


@pytest.mark.slow
@pytest.mark.v1
def test_interrupt_while_test_reward_scores_v1(tmp_path):
    mark = tmp_path / "scoring.txt"
    task = fx.V1_CORRECT + "\n    @vf.reward(weight=0.5)\n    async def slow(self, trace: vf.Trace) -> float:\n"
    task += "        import asyncio\n" + _marking_reward(mark, True, indent="        ") + "\n"
    env = fx.v1_env(tmp_path, "slow_v1", task)
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    argv = [sys.executable, str(SKILL_ROOT / "scripts" / "test_reward.py"), str(env)]
    argv += ["--env-args", _json.dumps({"dataset_path": str(data)}), "--timeout", "30", "--json"]
    run, seconds = _interrupt_when_scoring(argv, mark, tmp_path)
    _clean_interrupt(run, "test_reward", seconds)


@pytest.mark.slow
@pytest.mark.classic
def test_interrupt_while_local_train_scores(tmp_path):
    mark = tmp_path / "scoring.txt"
    funcs = "import asyncio\n\nasync def slow(completion, answer) -> float:\n" + _marking_reward(mark, True) + "\n"
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    env = fx.classic_env(tmp_path, "slow_env", funcs, "vf.Rubric(funcs=[slow])")
    argv = [sys.executable, str(SKILL_ROOT / "scripts" / "local_train.py"), "--env", str(env)]
    argv += ["--env-args", _json.dumps({"dataset_path": str(data)}), "--model", "tiny-random"]
    argv += ["--max-steps", "50", "--output-dir", str(tmp_path / "out"), "--json"]
    run, seconds = _interrupt_when_scoring(argv, mark, tmp_path)
    _clean_interrupt(run, "local_train", seconds)


@pytest.mark.slow
@pytest.mark.classic
def test_sigterm_while_test_reward_scores(tmp_path):
    """SIGTERM (issue 27) as Ctrl-C: exit 143, one line, the partial result (the load check), the worker gone."""
    mark = tmp_path / "scoring.txt"
    pids = tmp_path / "pid.txt"
    funcs = "import os, time\n\ndef slow(completion, answer) -> float:\n"
    funcs += f"    open({str(pids)!r}, 'w').write(str(os.getpid()))\n" + _marking_reward(mark, False) + "\n"
    data = fx.write_dataset(tmp_path, fx.ROWS[:2])
    env = fx.classic_env(tmp_path, "slow_env", funcs, "vf.Rubric(funcs=[slow])")
    argv = [sys.executable, str(SKILL_ROOT / "scripts" / "test_reward.py"), str(env)]
    argv += ["--env-args", _json.dumps({"dataset_path": str(data)}), "--timeout", "30", "--json"]
    run, seconds = _interrupt_when_scoring(argv, mark, tmp_path, signal.SIGTERM)
    assert run.returncode == 143, run
    assert "Traceback" not in run.stderr and run.stderr.strip().splitlines()[-1] == "test_reward: terminated (SIGTERM)"
    obj = _json.loads(run.stdout)
    assert obj["status"] == "interrupted" and obj["exit_code"] == 143
    assert any(c["id"] == "load" and c["status"] == "pass" for c in obj["checks"])  # what was done so far
    assert seconds < 20, f"took {seconds:.1f} s to stop"
    worker = int(pids.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{worker}").exists():
        time.sleep(0.2)
    assert not Path(f"/proc/{worker}").exists(), "the worker outlived the terminated run"
