"""Look at what is installed without importing it (importing torch or verifiers costs seconds)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vlab.core.result import ExternalError, PrerequisiteError


def package_version(dist: str) -> str | None:
    """Installed version of a distribution, or None."""
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def package_dir(module: str) -> Path | None:
    """Folder of an importable top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def version_tuple(version: str) -> tuple[int, ...]:
    """'0.3.1.dev2' -> (0, 3, 1); good enough to compare release numbers."""
    parts = []
    for piece in version.split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def requirement_of(dist: str, dependency: str) -> str | None:
    """The requirement string ``dist`` declares on ``dependency`` (e.g. 'torch==2.14.0'), or None."""
    try:
        reqs = md.requires(dist) or []
    except md.PackageNotFoundError:
        return None
    for req in reqs:
        name = re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0]
        if name.lower().replace("_", "-") == dependency.lower().replace("_", "-") and "extra ==" not in req:
            return req
    return None


@dataclass
class VerifiersInfo:
    version: str | None
    classic: bool  # `import verifiers as vf` gives load_environment/SingleTurnEnv
    v1: bool  # `import verifiers.v1` gives tasksets

    @property
    def generations(self) -> list[str]:
        return [g for g, ok in (("classic", self.classic), ("v1", self.v1)) if ok]


def verifiers_info() -> VerifiersInfo:
    """Which verifiers API generations are importable, decided from files on disk."""
    version = package_version("verifiers")
    root = package_dir("verifiers")
    if version is None or root is None:
        return VerifiersInfo(version, False, False)
    has_v1 = (root / "v1").is_dir()
    # 0.3.x keeps the classic API in verifiers.legacy; earlier releases at the root.
    classic = version_tuple(version) < (0, 4) and ((root / "legacy").is_dir() or (root / "envs").is_dir())
    return VerifiersInfo(version, classic, has_v1)


def which(command: str) -> str | None:
    return shutil.which(command)


@dataclass
class CommandOutput:
    returncode: int
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        return (self.stdout or "") + (self.stderr or "")


def load_scale() -> float:
    """How many times longer than on an idle machine a call may take now: the 1-minute load average per core,
    at least 1. run_command's bound on external commands is multiplied by it, so a CLI slow only because other
    work shares the cores is not called hanging (a verdict must not change with the machine's load).
    test_reward's bounds on user code do not stretch by it: they are on the call's own time, from the kernel's
    evidence (``vlab.env.evidence``), and use it only for how long a starved call may wait, and where the kernel
    keeps no scheduler statistics."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return 1.0
    return max(1.0, load / max(1, os.cpu_count() or 1))


def run_command(
    argv: list[str],
    timeout: float,
    env: dict[str, str] | None = None,
    input: str | None = None,
    cwd: str | Path | None = None,
) -> CommandOutput:
    """Run an external command with a bounded timeout; never inherits our stdin.

    Raises PrerequisiteError when the command does not exist and ExternalError on timeout (the
    command and everything it started are killed: it runs in its own process group). ``timeout`` is the
    bound on an idle machine, stretched by ``load_scale()``: a CLI that starts slowly on a busy machine is
    not a CLI that hangs.
    """
    scale = load_scale()
    bound = timeout * scale
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as err:
        raise PrerequisiteError(f"`{argv[0]}` is not installed or not on PATH") from err
    except PermissionError as err:
        raise PrerequisiteError(f"`{argv[0]}` is on PATH but cannot be run ({err.strerror})") from err
    try:
        stdout, stderr = proc.communicate(input, timeout=bound)
    except subprocess.TimeoutExpired as err:
        _kill_group(proc)
        stretched = f", {bound:.0f} s at this machine's load" if scale > 1 else ""
        raise ExternalError(
            f"`{' '.join(argv[:3])}` did not answer within {timeout:g} s{stretched} (timed out; it was stopped)"
        ) from err
    except BaseException:  # Ctrl-C: the command does not outlive us
        _kill_group(proc)
        raise
    return CommandOutput(proc.returncode, stdout or "", stderr or "")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    try:
        proc.communicate(timeout=5)  # reap it; its pipes close with the group
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass
