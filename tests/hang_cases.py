"""The hang cases of issue 52, shared by tests/faults/test_hang_verdicts.py and bench/bench_hang_verdicts.py.

Each case is a small environment whose second reward function ``bad`` never returns, in one way: it blocks
(sleeps) where our own bound cannot interrupt it (a sync function that ignores SIGALRM, ``time.sleep`` inside
``async def`` in either generation, the event loop held), or it spins on the CPU (in a sync function, which
SIGALRM stops, and in an async one, which only the parent can stop). ``SLOW_BUT_FINISHING`` spends
CPU time under the bound and returns: never a hang, however loaded the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import env_fixtures as fx

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent / "skills" / "verifiers-lab" / "scripts"


@dataclass(frozen=True)
class Case:
    generation: str  # classic | v1
    is_async: bool
    body: str  # the body of bad (one indent level inside its def)
    check: str | None  # the check that names the hang (None: no hang)


CASES = {
    "sync_sleep_ignoring_alarm": Case(
        "classic",
        False,
        "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(600)",
        "worker_timeout",
    ),
    "async_blocking_sleep": Case("classic", True, "import time\ntime.sleep(600)", "worker_timeout"),
    "v1_blocking_sleep": Case("v1", True, "import time\ntime.sleep(600)", "worker_timeout"),
    "cpu_loop": Case("classic", False, "while True:\n    pass", "speed"),
    "async_cpu_loop": Case("classic", True, "while True:\n    pass", "worker_timeout"),
}
HANGS = list(CASES)
SLOW_BUT_FINISHING = "slow_but_finishing"


def slow_body(cpu_seconds: float, flag: Path) -> str:
    """bad's first call spends ``cpu_seconds`` of CPU time (process time, so a busy machine stretches its wall time,
    never its work), every later call returns at once."""
    return (
        "import os, time\n"
        f"if not os.path.exists({str(flag)!r}):\n"
        f"    open({str(flag)!r}, 'w').close()\n"
        "    start = time.process_time()\n"
        f"    while time.process_time() - start < {cpu_seconds!r}:\n"
        "        pass\n"
        "return 0.0"
    )


def _indent(body: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in body.splitlines())


def build(folder: Path, name: str, body: str | None = None) -> tuple[Path, Path]:
    """(environment file, dataset) for case ``name`` (``body`` replaces its bad's body)."""
    case = CASES.get(name) or Case("classic", False, "", None)
    body = body if body is not None else case.body
    data = fx.write_dataset(folder, fx.ROWS[:1])
    if case.generation == "v1":
        task = fx.V1_CORRECT + "\n    @vf.reward(weight=0.1)\n    async def bad(self, trace: vf.Trace) -> float:\n"
        return fx.v1_env(folder, f"hang_{name}", task + _indent(body, 8)), data
    funcs = fx.EXACT + f"\n\n{'async ' if case.is_async else ''}def bad(completion, answer) -> float:\n"
    funcs += _indent(body, 4)
    rubric = "vf.Rubric(funcs=[exact_match, bad], weights=[1.0, 0.1], parser=parser)"
    return fx.classic_env(folder, f"hang_{name}", funcs, rubric), data


def run_test_reward(
    env: Path, data: Path, timeout: float, python: str | None = None, scripts: Path = SCRIPTS
) -> tuple[dict, float, str]:
    """test_reward on the environment as a user runs it (--json): (its JSON, wall seconds, stderr's tail);
    ``scripts``: another checkout's scripts folder (a benchmark's baseline)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [python or sys.executable, str(scripts / "test_reward.py"), str(env)]
        + ["--env-args", json.dumps({"dataset_path": str(data)}), "--num-examples", "1"]
        + ["--timeout", f"{timeout:g}", "--json"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "VLAB_DEBUG"} | {"PYTHONDONTWRITEBYTECODE": "1"},
        timeout=590,  # below the 600 s the hanging rewards sleep: an unstopped hang still ends
    )
    seconds = time.monotonic() - t0
    return json.loads(proc.stdout), seconds, proc.stderr[-2000:]


def named(obj: dict, check: str) -> str | None:
    """The message of ``check`` when it fails naming bad, else None."""
    for c in obj.get("checks", []):
        if c["id"] == check and c["status"] == "fail" and "bad" in c["message"]:
            return c["message"]
    return None


def start_hog(seconds: float = 600, per_core: int = 1) -> subprocess.Popen:
    """A CPU hog on every core (tests/cpu_hog.py, ``per_core`` spinners a core), bounded in time should its caller
    die."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    argv = [sys.executable, str(HERE / "cpu_hog.py"), "--seconds", str(seconds), "--cores", str(per_core * cores)]
    return subprocess.Popen(argv)


def stop_hog(hog: subprocess.Popen) -> None:
    hog.terminate()  # it kills its spinning children
    hog.wait()
