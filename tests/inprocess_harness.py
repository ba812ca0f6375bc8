"""Yesterday's code harness, kept to test against: the candidate's code and the tests ran in ONE child
process (``inprocess_harness_child.py``, the previous template harness verbatim), which wrote the verdict
to a private channel. The candidate can reach that verdict (frames, gc), and redefine the helpers and
patch the standard library the tests use: test_reward must fail an environment built on it, and the
benchmark compares the new harness with it."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import weakref
from pathlib import Path

TIMEOUT_SECONDS = 5.0
CHANNEL_FD = 3
MEMORY_MB = 1024
PARALLEL = 2 * (os.cpu_count() or 1)
HARNESS = Path(__file__).with_name("inprocess_harness_child.py")
_slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def run_tests(program: str, spec: dict, timeout: float = TIMEOUT_SECONDS, memory_mb: int = MEMORY_MB) -> dict:
    """{"passed": bool, "reason": str}: the program against the tests, in a limited child process."""
    if not program.strip():
        return {"passed": False, "reason": "no code"}
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(PARALLEL)
    async with _slots[loop]:
        return await _run_once(program, spec, timeout, memory_mb)


async def _run_once(program: str, spec: dict, timeout: float, memory_mb: int) -> dict:
    nonce = secrets.token_hex(16)
    job = {"nonce": nonce, "program": program, "spec": spec}
    job["limits"] = {"memory_mb": memory_mb, "cpu_seconds": int(timeout) + 1}
    scratch = tempfile.mkdtemp(prefix="code-run-")
    env = {"PATH": os.defpath, "LANG": "C.UTF-8", "HOME": scratch, "TMPDIR": scratch}
    read_end, write_end = os.pipe()
    timed_out = False
    try:
        try:
            # the channel as fd 3 in the child, as in a fresh scorer: the parent's number depends on how many
            # files this process holds (hundreds inside a full test run), and the frame-walk forgery looks at
            # fds under 256 only
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                str(HARNESS),
                str(CHANNEL_FD),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=scratch,
                env=env,
                pass_fds=(write_end, CHANNEL_FD),
                preexec_fn=lambda: os.dup2(write_end, CHANNEL_FD),
                start_new_session=True,
            )
        finally:
            os.close(write_end)
        try:
            await asyncio.wait_for(proc.communicate(json.dumps(job).encode()), timeout)
        except TimeoutError:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the program's own children too
            except (ProcessLookupError, PermissionError):
                pass
            await proc.wait()
        raw = _drain(read_end)
    finally:
        os.close(read_end)
        shutil.rmtree(scratch, ignore_errors=True)
    if timed_out:
        return {"passed": False, "reason": f"did not finish within {timeout:g} s"}
    records = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append(None)
    if len(records) != 1 or not isinstance(records[0], dict) or records[0].get("nonce") != nonce:
        return {"passed": False, "reason": "no verdict from the test harness (the program ended it or wrote to it)"}
    return {"passed": records[0].get("passed") is True, "reason": str(records[0].get("reason", ""))}


def _drain(fd: int) -> bytes:
    """What the harness wrote to the channel, without waiting on a writer that is still alive."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
