"""Instrumented reward functions: exceptions, NaN, wrong types and hangs, captured per rollout.

Each reward function is wrapped keeping its signature, so verifiers' own argument injection
still decides what it receives. The wrapper records, per scoring context (a classic state or
a v1 trace), the exceptions verifiers would swallow, the value's type errors it would hit,
each call's time, and stops calls that run past the timeout (a timer on the event loop for async
functions, SIGALRM on the main thread for sync ones). The timeout bounds a call's own time, not the
machine's (``vlab.env.evidence``): a call that waits is stopped at the timeout as given, a CPU-bound
one when it has had that much time on a CPU; one the machine starved (its wall time reached the
timeout x ``evidence.stretch()`` first) is stopped as ``starved``. A function that timed out once is
skipped (recorded as a timeout) for the rest of the process, so one hang costs one timeout; a retry
(``Calls.forget_starved``) calls a starved one again, never a hung one. A function that took a whole
worker down (an exit, a crash, a hang past the parent's bound) is never called in the fresh worker that
scores the rest (``Calls.skipped``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlab.env import evidence
from vlab.env.types import FunctionError, Score


class RewardTimeout(Exception):
    """A reward function ran past the timeout and was stopped; ``starved``: only because the machine gave it too
    little CPU (``vlab.env.evidence``), so a retry may call it again."""

    def __init__(self, message: str, starved: bool = False) -> None:
        super().__init__(message)
        self.starved = starved


class NotCalled(Exception):
    """A reward function that ended or killed an earlier worker: not called again (its error, never a score)."""


_OWN_FILE = str(Path(__file__).resolve())
BEACON_BYTES = 4096
# the signals the worker's parent sends to stop a call that holds the event loop (``Calls.listen_for_stops``): two
# real-time signals, which reward code and its libraries leave alone (SIGUSR1/2 where there are none)
_RT = getattr(signal, "SIGRTMIN", None)
STOP_HANG = _RT + 7 if _RT is not None else getattr(signal, "SIGUSR1", None)
STOP_STARVED = _RT + 8 if _RT is not None else getattr(signal, "SIGUSR2", None)
_CALL_CODE: set = set()  # the code of the wrapper around each reward call (``_in_call``)


def _in_call(frame) -> bool:
    """Whether ``frame`` runs inside an instrumented reward call."""
    while frame is not None:
        if frame.f_code in _CALL_CODE:
            return True
        frame = frame.f_back
    return False


def read_beacon(data: bytes) -> list[str]:
    """The names of the functions that were running, from a beacon page (see ``Calls``)."""
    return read_beacon_state(data)[2]


def read_beacon_state(data: bytes) -> tuple[int | None, evidence.Mark | None, list[str]]:
    """A beacon page: the worker's pid, the mark of its last call start or end, the running functions' names."""
    head, _, names = data.split(b"\0", 1)[0].decode("utf-8", "replace").partition("\n")
    try:
        pid, wall, cpu, delay = head.split(" ")
        mark = evidence.Mark(float(wall), *(None if v == "None" else float(v) for v in (cpu, delay)))
        return int(pid), mark, [n for n in names.split("\n") if n]
    except ValueError:  # not written yet
        return None, None, []


def describe_error(err: BaseException) -> FunctionError:
    frames = traceback.extract_tb(err.__traceback__)
    # Drop our own wrapper frames: the user wants their function's lines.
    frames = [f for f in frames if str(Path(f.filename).resolve()) != _OWN_FILE] or frames
    tb = "".join(traceback.format_list(frames[-3:])).rstrip()
    message = str(err)[:500]
    if isinstance(err, MemoryError):
        message = f"out of memory: over the worker's memory limit ({memory_limit()}) {message}".rstrip()
    return FunctionError(type(err).__name__, message, tb)


def memory_limit() -> str:
    """The data-size limit of this process, as the worker set it (``vlab.env.worker.limit_memory``)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
    except (ImportError, ValueError, OSError):
        return "no limit set"
    return "no limit set" if soft == resource.RLIM_INFINITY else f"{soft >> 20} MiB, VLAB_WORKER_MEMORY_MB"


class Calls:
    """What happened inside each instrumented function, per scoring context (state/trace)."""

    def __init__(self) -> None:
        self.by_ctx: dict[int, dict[str, Any]] = {}
        self.hung: set[str] = set()  # timed out on the evidence of their own time: never called again here
        self.starved: set[str] = set()  # timed out only because the machine starved them: a retry calls them
        self.out_of_memory: set[str] = set()
        self.timeout: float = 10.0  # each call's bound, in its own time (``vlab.env.evidence``)
        # name -> (kind, reason): functions that stopped an earlier worker (exit, crash, hang, starved): never
        # called here; a "hang" or "timeout" (starved) one is recorded as a timeout, the others as NotCalled.
        self.skipped: dict[str, tuple[str, str]] = {}
        # The functions running now, also written to ``beacon`` (a shared memory page the worker's parent reads
        # to bound a call the event loop cannot stop, and when it has to kill or bury the worker: the report
        # names the function), after a line with this process's pid and the mark of the last call start or end.
        self.running: dict[str, int] = {}
        self.beacon: Any = None
        self.active: evidence.Mark | None = None  # the last call start or end (with a beacon only)

    def enter(self, name: str) -> None:
        self.running[name] = self.running.get(name, 0) + 1
        self.show()

    def leave(self, name: str) -> None:
        left = self.running.get(name, 0) - 1
        if left > 0:
            self.running[name] = left
        else:
            self.running.pop(name, None)
        self.show()

    def show(self) -> None:
        if self.beacon is not None:
            m = self.active = evidence.mark()
            head = f"{os.getpid()} {m.wall!r} {m.cpu!r} {m.delay!r}\n"
            data = (head + "\n".join(self.running)).encode("utf-8", "replace")[: BEACON_BYTES - 1]
            self.beacon[: len(data) + 1] = data + b"\0"

    def listen_for_stops(self) -> None:
        """Let the worker's parent stop a call that holds the event loop (a blocking sleep in ``async def``, a sync
        one that ignores SIGALRM, a CPU loop): ``STOP_HANG`` or ``STOP_STARVED`` raises a RewardTimeout in the
        running call (never outside one), so the worker lives on without it and no fresh worker is needed."""

        def on_stop(signum, frame):
            if not _in_call(frame):  # between calls: nothing of the reward's to stop (the parent kills, if stuck)
                return
            kind = "starved" if signum == STOP_STARVED else "hang"
            held = evidence.held(self.active) if self.active else evidence.Held(0.0, 0.0, None)
            raise RewardTimeout(
                stopped(self.timeout, held, kind) + "; it held the worker, its own bound could not stop it",
                starved=kind == "starved",
            )

        for sig in (STOP_HANG, STOP_STARVED):
            try:
                signal.signal(sig, on_stop)
            except (TypeError, ValueError, OSError):  # no such signal here, or not the main thread: the parent kills
                return

    def forget_starved(self) -> None:
        """A retry: the functions the machine starved earlier are called again (a hung one never is)."""
        self.starved.clear()

    def open(self, ctx: Any) -> None:
        self.by_ctx[id(ctx)] = {"errors": {}, "seconds": {}, "values": {}, "timed_out": [], "starved": []}

    def close(self, ctx: Any) -> dict[str, Any]:
        empty = {"errors": {}, "seconds": {}, "values": {}, "timed_out": [], "starved": []}
        return self.by_ctx.pop(id(ctx), empty)

    def record(self, ctxs: list[Any], name: str, seconds: float, err: BaseException | None, value: Any = None) -> None:
        for ctx in ctxs:
            slot = self.by_ctx.get(id(ctx))
            if slot is None:
                continue
            slot["seconds"][name] = slot["seconds"].get(name, 0.0) + seconds
            if err is not None:
                slot["errors"][name] = describe_error(err)
                if isinstance(err, RewardTimeout):
                    slot["timed_out"].append(name)
                    if err.starved:
                        slot["starved"].append(name)
            else:
                slot["values"][name] = value


def score_from(
    calls: dict, per_function: dict[str, float | None], total: float | None, scoring_error=None, metrics=None
) -> Score:
    """A Score from verifiers' numbers plus what the instrumented calls recorded."""
    return Score(
        metrics=dict(metrics or {}),
        total=total,
        per_function=per_function,
        errors=calls["errors"],
        seconds=calls["seconds"],
        timed_out=calls["timed_out"],
        starved=calls.get("starved", []),
        scoring_error=scoring_error,
    )


def stopped(bound: float, held: evidence.Held, kind: str) -> str:
    """Why a call was stopped, with the evidence: waited, ran on a CPU, or was starved by the machine."""
    if kind == "starved":
        return (
            f"did not return within {bound:g} s of its own time: the machine gave it {held.describe()} "
            "(starved, not hung: scored again alone)"
        )
    return f"did not return within {bound:g} s ({held.describe()})"


@contextlib.contextmanager
def alarm(seconds: float, since: evidence.Mark | None = None):
    """Interrupt synchronous code running on the main thread once it has had ``seconds`` of its own time since
    ``since`` (SIGALRM at the bound, then again while the machine's other work held it up)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return
    since = since or evidence.mark()

    def on_alarm(signum, frame):
        held = evidence.held(since)
        kind = evidence.verdict(held, seconds)
        if kind is None:
            signal.setitimer(signal.ITIMER_REAL, evidence.next_look(held, seconds))
            return
        raise RewardTimeout(stopped(seconds, held, kind), starved=kind == "starved")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Watch:
    """The bound of one awaited call: at the bound (and again while the machine held it up) it looks at the
    call's evidence on the event loop and, when due, expires ``bound`` (our own asyncio timeout, no deadline)."""

    def __init__(self, seconds: float, since: evidence.Mark, bound: asyncio.Timeout) -> None:
        self.seconds, self.since, self.bound = seconds, since, bound
        self.kind: str | None = None
        self.held: evidence.Held | None = None
        self.loop = asyncio.get_running_loop()
        self.handle = self.loop.call_later(max(0.0, seconds - (time.monotonic() - since.wall)), self.look)

    def look(self) -> None:
        held = evidence.held(self.since)
        kind = evidence.verdict(held, self.seconds)
        if kind is None:
            self.handle = self.loop.call_later(evidence.next_look(held, self.seconds), self.look)
            return
        self.kind, self.held = kind, held
        self.bound.reschedule(self.loop.time())

    def timeout(self) -> RewardTimeout:
        held = self.held or evidence.held(self.since)
        return RewardTimeout(stopped(self.seconds, held, self.kind or "hang"), starved=self.kind == "starved")


async def _bounded(awaitable, seconds: float, since: evidence.Mark) -> Any:
    """Await under our own bound: its expiry is a RewardTimeout; a TimeoutError the reward raises itself (its own
    judge or tool time limit) passes as the reward's error."""
    watch = None
    try:
        async with asyncio.timeout(None) as bound:  # asyncio.timeout, not wait_for: no extra task per call
            watch = _Watch(seconds, since, bound)
            try:
                return await awaitable
            finally:
                watch.handle.cancel()
    except TimeoutError:
        if watch is not None and bound.expired():
            raise watch.timeout() from None
        raise


def instrument(func: Callable, calls: Calls, ctx_param: str, group: bool) -> Callable:
    """Wrap a reward function: same name, same injected arguments, plus the scoring context.

    The wrapper's signature is the function's own plus ``ctx_param`` (``state``/``states``
    for classic, ``trace`` for v1), so verifiers injects exactly what the function asked for
    and we learn which rollout the call belongs to. Exceptions are recorded and re-raised,
    so verifiers reacts as it would in training (classic: 0.0; v1: the scoring fails).
    """
    if getattr(func, "_vlab_instrumented", False):
        return func
    name = getattr(func, "__name__", repr(func))
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params)
    has_ctx = ctx_param in sig.parameters
    if not takes_kwargs and not has_ctx:
        extra = inspect.Parameter(ctx_param, inspect.Parameter.KEYWORD_ONLY, default=None)
        wrapper_sig = sig.replace(parameters=[*params, extra])
    else:
        wrapper_sig = sig
    is_coroutine = inspect.iscoroutinefunction(func)

    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        calls.enter(name)
        try:
            value = await run(*args, **kwargs)
        except SystemExit:
            raise  # the process is ending: the beacon keeps the name for the parent's report
        except BaseException:
            calls.leave(name)
            raise
        calls.leave(name)
        return value

    async def run(*args, **kwargs):
        ctx = kwargs.get(ctx_param)
        if not has_ctx and not takes_kwargs:
            kwargs.pop(ctx_param, None)
        ctxs = list(ctx) if group and isinstance(ctx, list) else [ctx]
        if name in calls.skipped:
            kind, reason = calls.skipped[name]
            what = RewardTimeout if kind in ("hang", "timeout") else NotCalled
            err = what(f"not called: it stopped an earlier worker ({reason})")
            if kind == "timeout":  # starved there: a retry calls it again
                err.starved = True
            calls.record(ctxs, name, 0.0, err)
            raise err
        if name in calls.hung:
            err = RewardTimeout(f"skipped: it did not return within {calls.timeout:g} s on an earlier call")
            calls.record(ctxs, name, 0.0, err)
            raise err
        if name in calls.starved:
            err = RewardTimeout("skipped: the machine starved it on an earlier call (scored again alone)", True)
            calls.record(ctxs, name, 0.0, err)
            raise err
        if name in calls.out_of_memory:  # calling it again would only press on the machine's memory again
            err = MemoryError(f"skipped: it ran out of memory on an earlier call ({memory_limit()})")
            calls.record(ctxs, name, 0.0, err)
            raise err
        start = time.perf_counter()
        seconds = calls.timeout
        since = evidence.mark()
        try:  # only our own expired bound is a RewardTimeout (a hang or starved); any TimeoutError is the reward's
            if is_coroutine:
                value = await _bounded(func(*args, **kwargs), seconds, since)
            else:
                with alarm(seconds, since):
                    value = func(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await _bounded(value, seconds, evidence.mark())
            check_value(value, group)
        except RewardTimeout as timeout:
            (calls.starved if timeout.starved else calls.hung).add(name)
            calls.record(ctxs, name, time.perf_counter() - start, timeout)
            raise timeout from None
        except Exception as err:
            if isinstance(err, MemoryError):
                calls.out_of_memory.add(name)
            calls.record(ctxs, name, time.perf_counter() - start, err)
            raise
        calls.record(ctxs, name, time.perf_counter() - start, None, value)
        return value

    _CALL_CODE.add(run.__code__)
    wrapper.__signature__ = wrapper_sig  # type: ignore[attr-defined]
    wrapper._vlab_instrumented = True  # type: ignore[attr-defined]
    return wrapper


def check_value(value: Any, group: bool) -> None:
    """Raise the error verifiers would hit converting the value (it would swallow it as 0.0)."""
    if group:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"group reward function returned {type(value).__name__}, expected a list of floats")
        for v in value:
            float(v)
        return
    if isinstance(value, dict):  # v1 keyed scores
        for v in value.values():
            float(v)
        return
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"returned {value!r}, not a number")
    float(value)
