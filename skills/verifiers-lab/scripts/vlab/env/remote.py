"""An ``Environment`` whose user code runs in a child process (``vlab.env.worker``).

The parent keeps stdout and the exit code. The worker's stdout and stderr go to a capture
file, read back masked and truncated (``user_output``). A worker that exits (sys.exit,
os._exit, atexit), is killed, crashes or stops answering becomes an ``incident`` and a
failed score with its reason, never a silent pass. Time limits are enforced here too, on the
worker's own time (``vlab.env.watch``): a reward call that holds the worker is stopped inside it,
and a worker that ignores that, or sends nothing for its allowance, is killed. The incident names
the reward functions that were running (the worker's beacon page); after a death a fresh worker
(the environment loaded again, at most ``MAX_REVIVALS`` times) scores the rest without ever calling
those functions again (``skipped``), so one bad function costs one load and one bound, and every
other function and check still gets its scores. A death that names no function is not revived:
the rows not yet scored fail at once with the first incident. A retry (``score(..., retry=True)``)
calls a function the machine starved once more, alone; a hung one never. Rows are sent in one
message per scoring call and scores come back one message per group (a small per-call cost).
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from vlab.core import secrets
from vlab.core.result import ExternalError, PrerequisiteError, ToolError, UsageError
from vlab.env.base import Environment
from vlab.env.instrument import BEACON_BYTES, read_beacon
from vlab.env.messages import call_generate
from vlab.env.types import ROLLOUT_KEY, FormatHints, FunctionError, Generate, RolloutResult, Row, Score
from vlab.env.watch import LOOK, Watch
from vlab.env.worker import death_reason, kill_tree, memory_limit_mib

GRACE = 5.0  # seconds added to each allowance (process and pipe overhead)
MAX_REVIVALS = 3  # fresh workers after deaths that named their function (never called again there)
# The load time limit (test_reward --load-timeout; local_train uses this default): loading may
# download a dataset, so it is generous; an import or load_environment that blocks forever is
# stopped at this limit and reported as worker_timeout (exit 1), never waited on.
LOAD_LIMIT = 900.0
EXCERPT = 2000  # characters of the user's output kept (head and tail)


_ERRORS = {"UsageError": UsageError, "PrerequisiteError": PrerequisiteError, "ExternalError": ExternalError}
_SCRIPTS = str(Path(__file__).resolve().parents[2])


class WorkerDied(Exception):
    """The worker process ended or was stopped; ``kind`` is exit | crash | timeout."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _poster(loop: asyncio.AbstractEventLoop, box: asyncio.Queue):
    """A reader-thread handler that hands a message to a coroutine waiting on ``box``."""

    def post(msg: tuple) -> None:
        try:
            loop.call_soon_threadsafe(box.put_nowait, msg)
        except RuntimeError:  # the loop is closed (Ctrl-C ended the run): nobody waits for it
            pass

    return post


class LoadFailed(ToolError):
    """The worker exited, crashed or ran past the load time limit while loading the environment:
    the incident and what the environment printed come with it, for the caller's checks."""

    def __init__(self, message: str, hint: str, incidents: list[dict], output: dict | None) -> None:
        super().__init__(message, hint=hint)
        self.incidents = incidents
        self.output = output


class RemoteEnvironment(Environment):
    def __init__(
        self,
        spec: str,
        env_args: dict | None = None,
        load_timeout: float = LOAD_LIMIT,
        *,
        python: str | None = None,
        cwd: str | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        """``python``, ``cwd``, ``environ``: another interpreter (a throwaway venv), working folder and
        extra environment variables for the worker (the hosted rehearsal); default: this process's."""
        super().__init__()
        self.spec = spec
        self._python, self._cwd, self._environ = python or sys.executable, cwd, dict(environ or {})
        self._args = dict(env_args or {})
        self.load_timeout = load_timeout
        self.incidents: list[dict] = []
        # name -> (kind, reason): functions that stopped a worker, never called by a fresh one (a retry may call a hung one)
        self.skipped: dict[str, tuple[str, str]] = {}
        self.revivals = 0
        self._interrupted: dict[str, tuple[str, str]] = {}  # running when a call was stopped inside the worker
        self._output: list[tuple[int, str]] = []  # (bytes written, excerpt) per finished worker
        self._handlers: dict[int, Any] = {}
        self._next = 0
        self._lock = threading.Lock()
        self._generate: Generate | None = None
        self._generating = 0
        self.proc: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="vlab-worker-")
        try:
            meta = self._start("loading the environment")
        except BaseException as err:
            if not isinstance(err, ToolError):  # Ctrl-C or an internal error: stop the worker now
                self._kill("exit", "stopped")
            self.close()  # no worker or temporary folder outlives a failed load
            if isinstance(err, ToolError) and self.incidents:
                raise LoadFailed(err.message, err.hint, self.incidents, self.user_output()) from None
            raise
        self.capabilities = meta["capabilities"]
        self.name = meta["name"]
        self.verifiers_version = meta["verifiers_version"]
        self.env_args = meta["env_args"]
        self.reward_functions = meta["reward_functions"]
        self.unnamed_args = meta["unnamed_args"]
        self._num_rows = meta["num_rows"]
        self._hints = meta["hints"]

    # -- the process --------------------------------------------------------------------

    def _start(self, during: str) -> dict:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._capture = Path(self._dir.name) / f"output{len(self._output)}.txt"
        self._beacon = Path(self._dir.name) / f"beacon{len(self._output)}"
        self._beacon.write_bytes(b"\0" * BEACON_BYTES)
        env = {**os.environ, "PYTHONPATH": _SCRIPTS + os.pathsep + os.environ.get("PYTHONPATH", "")}
        env["VLAB_WORKER_MEMORY_MB"] = str(memory_limit_mib())
        env.update(self._environ)
        with open(self._capture, "wb") as out:
            self.proc = subprocess.Popen(
                [self._python, "-m", "vlab.env.worker", str(to_child_r), str(from_child_w), str(self._beacon)],
                cwd=self._cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=(to_child_r, from_child_w),
                env=env,
                start_new_session=True,  # Ctrl-C reaches the parent, which stops the worker
            )
        os.close(to_child_r)
        os.close(from_child_w)
        self._to = Connection(to_child_w, readable=False)
        self._from = Connection(from_child_r, writable=False)
        self._killed: tuple[str, str] | None = None
        self._starved = False  # the last kill for time was the machine's doing (starved), not the reward's
        self._reader = threading.Thread(target=self._read, args=(self.proc, self._from), daemon=True)
        self._reader.start()
        return self._request_sync(("load", self.spec, self._args), self.load_timeout, during)

    def _read(self, proc: subprocess.Popen, conn: Connection) -> None:
        try:
            while True:
                msg = conn.recv()
                if msg[0] == "generate":
                    self._on_generate(msg)
                    continue
                handler = self._handlers.get(msg[1])
                if handler is not None:
                    handler(msg)
        except (EOFError, OSError):
            pass
        except Exception as err:  # noqa: BLE001 - an unreadable message ends this worker
            self._kill("crash", f"sent an unreadable message ({type(err).__name__})")
        code = proc.wait()
        kind, reason = self._killed or death_reason(code)
        try:
            running = read_beacon(self._beacon.read_bytes())
        except OSError:
            running = []
        self._finish_output()
        for handler in list(self._handlers.values()):
            handler(("dead", None, kind, reason, running))

    def _kill(self, kind: str, reason: str) -> None:
        if self._killed is None:
            self._killed = (kind, reason)
        if self.proc is not None and self.proc.poll() is None:
            kill_tree(self.proc.pid)  # the worker is their subreaper: all of them are still below it
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()

    def _finish_output(self) -> None:
        try:
            size = self._capture.stat().st_size
            with open(self._capture, "rb") as f:
                head = f.read(EXCERPT // 2)
                if size > EXCERPT:
                    f.seek(size - EXCERPT // 2)
                    tail = f.read()
                    text = head.decode("utf-8", "replace") + f"\n[... {size - EXCERPT} bytes left out ...]\n"
                    text += tail.decode("utf-8", "replace")
                else:
                    text = head.decode("utf-8", "replace")
            self._capture.unlink()
        except OSError:
            return
        if size:
            self._output.append((size, secrets.redact(text)))

    def sibling(self) -> RemoteEnvironment:
        """A second worker on the same environment, arguments, interpreter and folder (vlab.env.pool)."""
        return RemoteEnvironment(
            self.spec, self._args, self.load_timeout, python=self._python, cwd=self._cwd, environ=self._environ
        )

    def absorb(self, other: RemoteEnvironment) -> None:
        """Take a closed sibling's incidents and captured output into this worker's record."""
        self.incidents += other.incidents
        self._output += other.output_excerpts()

    def output_excerpts(self) -> list[tuple[int, str]]:
        """(bytes written, excerpt) per finished worker process, as ``user_output`` sums them."""
        return list(self._output)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self._to.send(("stop", None))
                self.proc.wait(timeout=10)  # a loaded machine can take seconds to stop it
            except (OSError, subprocess.TimeoutExpired):
                self._kill("exit", "stopped")
        if self.proc is not None:
            self.proc.wait()
            try:  # whatever the user's code started in the worker's session outlives it otherwise
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self._reader.join(timeout=10)
        self._dir.cleanup()

    def __del__(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()

    def user_output(self) -> dict | None:
        """What the environment's code printed (masked, head and tail), or None."""
        if not self._output:
            return None
        return {"bytes": sum(n for n, _ in self._output), "excerpt": "\n".join(t for _, t in self._output)[-EXCERPT:]}

    # -- requests -----------------------------------------------------------------------

    def _rid(self) -> int:
        with self._lock:
            self._next += 1
            return self._next

    def _alive(self, during: str) -> None:
        if self.proc is None or self.proc.poll() is not None:
            if self.incidents:  # revived only without the functions it named (``skipped``): no second death
                last = self.incidents[-1]
                if self.revivals >= MAX_REVIVALS or not last.get("functions"):
                    first = self.incidents[0]
                    raise ToolError(f"not run: the environment's process stopped earlier ({first['reason']})")
                self.revivals += 1
            self._start(during)

    def _stopped_by(self, kind: str, reason: str, running: list[str], starved: bool = False) -> None:
        """A worker's death: its running functions are never called again (a starved one by a retry: "timeout")."""
        if kind == "timeout" and not starved:
            kind = "hang"
        for name in running or []:
            self.skipped.setdefault(name, (kind, reason))

    def _request_sync(self, msg: tuple, limit: float, during: str) -> Any:
        rid = self._rid()
        box: queue.Queue = queue.Queue()
        self._handlers[rid] = box.put
        try:
            self._to.send((msg[0], rid, *msg[1:]))
            try:
                reply = box.get(timeout=limit)
            except queue.Empty:
                self._kill("timeout", f"did not answer within {limit:g} s")
                reply = box.get()
        except OSError:
            reply = box.get(timeout=10)
        finally:
            self._handlers.pop(rid, None)
        return self._value(reply, during)

    def _value(self, reply: tuple, during: str) -> Any:
        if reply[0] == "ok":
            return reply[2]
        if reply[0] == "error":
            _, _, kind, message, hint, code = reply
            raise _ERRORS.get(kind, ToolError)(message, hint=hint, exit_code=code)
        _, _, kind, reason, *running = reply
        self.incidents.append(
            {"kind": kind, "reason": reason, "during": during, "functions": running[0] if running else []}
        )
        raise ToolError(f"{reason} while {during}", hint="a reward or loader must return, not exit or crash")

    # -- the interface ------------------------------------------------------------------

    def num_rows(self) -> int:
        return self._num_rows

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        self._alive("reading rows")
        return self._request_sync(("rows", n, start), self.load_timeout, "reading rows")

    def format_hints(self) -> FormatHints:
        return self._hints

    def validate(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        self._alive("validating rows")
        limit = timeout * max(1, len(indices)) + self.load_timeout
        return self._request_sync(("validate", list(indices), timeout), limit, "validating rows")

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        return await self.score([(row, c) for c in completions])

    def _failed(self, kind: str, reason: str, running: list[str] | None = None, starved: bool = False) -> Score:
        names = [f.name for f in self.reward_functions]
        timed_out = (running or names) if kind == "timeout" else []
        return Score(
            total=None,
            per_function=dict.fromkeys(names),
            timed_out=timed_out,
            starved=timed_out if starved else [],
            scoring_error=FunctionError(f"Worker{kind.capitalize()}", reason, ""),
        )

    async def score(
        self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32, retry: bool = False
    ) -> list[Score]:
        """``retry``: call again the functions the machine starved (in a worker or stopping one); one that returns is
        cleared. A function that hung on the evidence of its own time is never called again."""
        skipped = {n: v for n, v in self.skipped.items() if not (retry and v[0] == "timeout")}
        index: dict[int, int] = {}
        groups: list[tuple[Row, list[int]]] = []
        for i, (row, _) in enumerate(items):
            if id(row) not in index:
                index[id(row)] = len(groups)
                groups.append((row, []))
            groups[index[id(row)]][1].append(i)
        out: list[Score | None] = [None] * len(items)
        pending = list(range(len(groups)))
        allowance = timeout * max(1, len(self.reward_functions)) + GRACE
        loop = asyncio.get_running_loop()
        while pending:
            try:
                self._alive("scoring")
            except ToolError as err:  # stopped earlier: its functions are not called again
                first = self.incidents[0] if self.incidents else {"kind": "exit"}
                for gi in pending:
                    for i in groups[gi][1]:
                        out[i] = self._failed(first["kind"], err.message, first.get("functions"), first.get("starved"))
                break
            rid = self._rid()
            box: asyncio.Queue = asyncio.Queue()
            self._handlers[rid] = _poster(loop, box)
            payload = [(gi, groups[gi][0], [items[i][1] for i in groups[gi][1]]) for gi in pending]
            started: list[int] = []
            try:
                self._to.send(("score", rid, payload, timeout, concurrency, skipped, retry))
            except OSError:
                pass
            try:
                pending = await self._collect(box, groups, pending, started, out, allowance, timeout)
            finally:  # also when cancelled (Ctrl-C): no handler is left pointing at a closed loop
                self._handlers.pop(rid, None)
        for name, stopped in self._interrupted.items():  # the one that took the stop: never called by a fresh worker
            if any(s is not None and name in s.timed_out for s in out):
                self.skipped.setdefault(name, stopped)
        self._interrupted.clear()
        if retry:  # a function that returned this time was slow, not hung: the next calls call it again
            for name in [n for n, v in self.skipped.items() if v[0] == "timeout"]:
                if all(s is not None and name not in s.timed_out for s in out):
                    del self.skipped[name]
        return out  # type: ignore[return-value]

    async def _collect(
        self,
        box: asyncio.Queue,
        groups: list[tuple[Row, list[int]]],
        pending: list[int],
        started: list[int],
        out: list[Score | None],
        allowance: float,
        timeout: float,
    ) -> list[int]:
        """Scores of one scoring message as they come; returns the groups still to score."""
        watch = Watch(self._beacon, allowance, timeout, self._interrupted)
        while True:
            try:
                msg = await asyncio.wait_for(box.get(), LOOK)
            except TimeoutError:
                msg = None
            overdue = watch.due() if msg is None else watch.heard()
            self.incidents += watch.stopped  # calls stopped inside the worker, which lived on
            watch.stopped.clear()
            if msg is None:
                if overdue is None:
                    continue
                self._starved, reason = overdue
                self._kill("timeout", reason)
                msg = await box.get()
            if msg[0] == "started":
                started.append(msg[2])
            elif msg[0] == "group":
                for i, s in zip(groups[msg[2]][1], msg[3]):
                    out[i] = s
            elif msg[0] == "ok":
                return []
            elif msg[0] == "error":
                for gi in pending:
                    for i in groups[gi][1]:
                        if out[i] is None:
                            out[i] = self._failed("error", msg[3])
                return []
            else:  # dead
                kind, reason, running = msg[2], msg[3], msg[4]
                starved = kind == "timeout" and self._starved
                self.incidents.append(
                    {"kind": kind, "reason": reason, "during": "scoring", "functions": running, "starved": starved}
                )
                self._stopped_by(kind, reason, running, starved)
                undone = [gi for gi in pending if out[groups[gi][1][0]] is None]
                blamed = [gi for gi in started if gi in undone] or undone[:1]
                for gi in blamed:
                    for i in groups[gi][1]:
                        out[i] = self._failed(kind, reason, running, starved)
                return [gi for gi in undone if gi not in blamed]

    # rollouts: the worker calls back for every model turn
    def _on_generate(self, msg: tuple) -> None:
        handler = self._handlers.get(("generate",))
        if handler is not None:
            handler(msg)

    async def rollout_group(
        self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        self._alive("running a rollout")
        loop = asyncio.get_running_loop()
        rid = self._rid()
        box: asyncio.Queue = asyncio.Queue()
        self._handlers[rid] = _poster(loop, box)
        tasks: set[asyncio.Task] = set()

        def on_generate(msg):
            if msg[0] != "generate":  # ("dead", ...) reaches every handler: the rollout's own one reports it
                return
            try:
                loop.call_soon_threadsafe(self._serve_generate, msg, generate, tasks)
            except RuntimeError:  # the loop is closed (Ctrl-C): the rollout is over
                pass

        self._handlers[("generate",)] = on_generate
        allowance = timeout * max(1, len(self.reward_functions)) + GRACE
        self._to.send(("rollout", rid, row, n, sampling_args or {}, timeout))
        try:
            while True:
                # not stretched by the load (unlike scoring): a tool's finite but unbounded work (a huge power)
                # finishes inside a stretched bound and would pass as prompt
                try:
                    msg = await asyncio.wait_for(box.get(), allowance)
                except TimeoutError:
                    if self._generating:
                        continue
                    self._kill("timeout", f"the environment did not answer within {allowance:g} s; stopped")
                    msg = await box.get()
                if msg[0] == "dead":
                    self.incidents.append(
                        {"kind": msg[2], "reason": msg[3], "during": "a rollout", "functions": msg[4]}
                    )
                    self._stopped_by(msg[2], msg[3], msg[4])  # a rollout's bound is not the load's: a hang
                    score = self._failed(msg[2], msg[3], msg[4])
                    return [RolloutResult([], row.prompt, score, [], None, msg[3]) for _ in range(n)]
                return self._value(msg, "running a rollout")
        finally:
            self._handlers.pop(rid, None)

    def _serve_generate(self, msg: tuple, generate: Generate, tasks: set) -> None:
        """Serve one message of generate calls; started in one tick, they make one sampler batch."""

        async def serve(call_id, messages, sampling_args, tools, key=None):
            ROLLOUT_KEY.set(key)  # this task's own context: the trainer seeds the rollout's sample from it
            try:
                reply = await call_generate(generate, messages, sampling_args or {}, tools)
            except Exception as err:  # noqa: BLE001 - handed to the environment's rollout
                reply = RuntimeError(f"generate failed: {type(err).__name__}: {err}")
            finally:
                self._generating -= 1
            try:
                self._to.send(("reply", call_id, reply))
            except OSError:
                pass

        for call in msg[2]:
            self._generating += 1
            task = asyncio.get_running_loop().create_task(serve(*call))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
