"""Instrumented reward functions: exceptions, NaN, wrong types and hangs, captured per rollout.

Each reward function is wrapped keeping its signature, so verifiers' own argument injection
still decides what it receives. The wrapper records, per scoring context (a classic state or
a v1 trace), the exceptions verifiers would swallow, the value's type errors it would hit,
each call's time, and stops calls that run past the timeout (``asyncio.timeout`` for async
functions, SIGALRM on the main thread for sync ones). A function that timed out once is
skipped (recorded as a timeout) for the rest of the process, so one hang costs one timeout; a retry
(``Calls.forget_hangs``) calls it again. A function that took a whole worker down (an exit, a crash, a
hang past the parent's bound) is never called in the fresh worker that scores the rest (``Calls.skipped``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import signal
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlab.core.installed import load_scale
from vlab.env.types import FunctionError, Score


class RewardTimeout(Exception):
    """A reward function ran past the timeout and was stopped."""


class NotCalled(Exception):
    """A reward function that ended or killed an earlier worker: not called again (its error, never a score)."""


_OWN_FILE = str(Path(__file__).resolve())
BEACON_BYTES = 4096


def read_beacon(data: bytes) -> list[str]:
    """The names of the functions that were running, from a beacon page (see ``Calls``)."""
    return [n for n in data.split(b"\0", 1)[0].decode("utf-8", "replace").split("\n") if n]


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
        self.hung: set[str] = set()
        self.out_of_memory: set[str] = set()
        self.timeout: float = 10.0  # on an idle machine: each call's bound is this times load_scale() then
        self.scale_seen: float = 1.0  # the largest load_scale() a bound used
        # name -> (kind, reason): functions that stopped an earlier worker (exit, crash, hang): never called
        # here; a "timeout" one is recorded as a timeout, the others as NotCalled (set per scoring call).
        self.skipped: dict[str, tuple[str, str]] = {}
        # The functions running now, also written to ``beacon`` (a shared memory page the worker's
        # parent reads when it has to kill or bury the worker: the report names the function).
        self.running: dict[str, int] = {}
        self.beacon: Any = None

    def enter(self, name: str) -> None:
        self.running[name] = self.running.get(name, 0) + 1
        self._show()

    def leave(self, name: str) -> None:
        left = self.running.get(name, 0) - 1
        if left > 0:
            self.running[name] = left
        else:
            self.running.pop(name, None)
        self._show()

    def _show(self) -> None:
        if self.beacon is not None:
            data = "\n".join(self.running).encode("utf-8", "replace")[: BEACON_BYTES - 1]
            self.beacon[: len(data) + 1] = data + b"\0"

    def forget_hangs(self) -> None:
        """A retry: the functions that timed out earlier are called again (a busy machine, not a hang?)."""
        self.hung.clear()

    def open(self, ctx: Any) -> None:
        self.by_ctx[id(ctx)] = {"errors": {}, "seconds": {}, "values": {}, "timed_out": []}

    def close(self, ctx: Any) -> dict[str, Any]:
        return self.by_ctx.pop(id(ctx), {"errors": {}, "seconds": {}, "values": {}, "timed_out": []})

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
        scoring_error=scoring_error,
    )


@contextlib.contextmanager
def alarm(seconds: float):
    """Interrupt synchronous code running on the main thread after ``seconds`` (SIGALRM)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def on_alarm(signum, frame):
        raise RewardTimeout(f"did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
            what = RewardTimeout if kind == "timeout" else NotCalled
            err = what(f"not called: it stopped an earlier worker ({reason})")
            calls.record(ctxs, name, 0.0, err)
            raise err
        if name in calls.hung:
            err = RewardTimeout(f"skipped: it did not return within {calls.timeout:g} s on an earlier call")
            calls.record(ctxs, name, 0.0, err)
            raise err
        if name in calls.out_of_memory:  # calling it again would only press on the machine's memory again
            err = MemoryError(f"skipped: it ran out of memory on an earlier call ({memory_limit()})")
            calls.record(ctxs, name, 0.0, err)
            raise err
        start = time.perf_counter()
        scale = load_scale()
        calls.scale_seen = max(calls.scale_seen, scale)
        seconds = calls.timeout * scale
        bound = None  # our asyncio time limit: a TimeoutError the reward raises itself (its own judge or tool
        # time limit) is the reward's error, not a hang, so only an expired bound of ours counts as one
        try:
            # asyncio.timeout, not wait_for: it needs no extra task per call
            if is_coroutine:
                bound = asyncio.timeout(seconds)
                async with bound:
                    value = await func(*args, **kwargs)
            else:
                with alarm(seconds):
                    value = func(*args, **kwargs)
                if inspect.isawaitable(value):
                    bound = asyncio.timeout(seconds)
                    async with bound:
                        value = await value
            check_value(value, group)
        except (TimeoutError, RewardTimeout) as err:
            if not isinstance(err, RewardTimeout) and not (bound is not None and bound.expired()):
                calls.record(ctxs, name, time.perf_counter() - start, err)
                raise
            timeout = err if isinstance(err, RewardTimeout) else RewardTimeout(f"did not return within {seconds:.3g} s")
            calls.hung.add(name)
            calls.record(ctxs, name, time.perf_counter() - start, timeout)
            raise timeout from None
        except Exception as err:
            if isinstance(err, MemoryError):
                calls.out_of_memory.add(name)
            calls.record(ctxs, name, time.perf_counter() - start, err)
            raise
        calls.record(ctxs, name, time.perf_counter() - start, None, value)
        return value

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
