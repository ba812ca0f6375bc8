"""The child process that runs the user's environment code (loading, scoring, rollouts).

Started by ``vlab.env.remote`` as ``python -m vlab.env.worker READ_FD WRITE_FD [BEACON]`` with its
stdout and stderr sent to a capture file, so nothing the user's code prints reaches the
parent's stdout. It talks to the parent over two pipes with pickled tuples:

  parent -> worker   ("load", spec, env_args) | ("rows", rid, n, start) | ("hints", rid)
                     ("score", rid, groups, timeout, concurrency, skipped, retry)
                     ("rollout", rid, row, n, sampling_args, timeout) | ("reply", call_id, Reply|error)
  worker -> parent   ("ok", rid, value) | ("error", rid, kind, message, hint, exit_code)
                     ("started", rid, group_index) | ("group", rid, group_index, scores)
                     ("generate", None, [(call_id, messages, sampling_args, tools, rollout_key), ...])

A reader thread receives; every request runs as a task on the main thread's event loop
(so SIGALRM timeouts of synchronous reward functions still work). Whatever the user's
code does to this process (exit, crash, hang), the parent notices and reports it.

The process the parent starts (a session leader and child subreaper) forks at once: the child is the
worker; the leader only waits for it (``supervise``) and then ends every process the user's code left
behind, even when that code took the worker down with ``os._exit`` or a crash, and exits as it did.
"""

from __future__ import annotations

import asyncio
import itertools
import mmap
import os
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection

from vlab.core.result import ToolError
from vlab.env.evidence import descendants
from vlab.env.instrument import BEACON_BYTES
from vlab.env.types import ROLLOUT_KEY


class Worker:
    def __init__(self, inbox: Connection, outbox: Connection, beacon: str | None = None) -> None:
        self.beacon = beacon
        self.inbox = inbox
        self.outbox = outbox
        self.env = None
        self.loop = asyncio.new_event_loop()
        self.lock = threading.Lock()
        self.waiting: dict[int, asyncio.Future] = {}
        self.ids = itertools.count()
        self.pending: list[tuple] = []
        self.flushing = False

    def send(self, *msg) -> None:
        with self.lock:
            self.outbox.send(msg)

    def reader(self) -> None:
        try:
            while True:
                msg = self.inbox.recv()
                self.loop.call_soon_threadsafe(self.dispatch, msg)
        except (EOFError, OSError):
            # The parent is gone (or closed the pipe): end now, even if user code blocks the loop.
            sys.stdout.flush()
            end_process_group()
            os._exit(0)

    def dispatch(self, msg: tuple) -> None:
        op = msg[0]
        if op == "reply":
            fut = self.waiting.pop(msg[1], None)
            if fut is not None and not fut.done():
                fut.set_result(msg[2])
            return
        if op == "stop":
            self.loop.stop()
            return
        self.loop.create_task(self.handle(msg))

    async def handle(self, msg: tuple) -> None:
        op, rid = msg[0], msg[1]
        try:
            if op == "load":
                from vlab.env.locate import load_env

                self.env = load_env(msg[2], msg[3])
                self.show_running()
                value = self.metadata()
            elif op == "rows":
                value = self.env.rows(msg[2], start=msg[3])
            elif op == "hints":
                value = self.env.format_hints()
            elif op == "score":
                value = await self.score(rid, *msg[2:])
            elif op == "validate":
                value = await self.env.validate_rows(msg[2], msg[3])
            elif op == "rollout":
                value = await self.env.rollout_group(msg[2], self.generate, msg[3], msg[4], msg[5])
            else:
                raise ValueError(f"unknown request {op!r}")
        except ToolError as err:
            self.send("error", rid, type(err).__name__, err.message, err.hint, err.exit_code)
            return
        except Exception as err:  # noqa: BLE001 - the user's error, reported to the parent
            tb = "".join(traceback.format_exception(err)[-3:])
            self.send("error", rid, "Exception", f"{type(err).__name__}: {err}", tb[-1500:], 1)
            return
        self.send("ok", rid, value)

    def show_running(self) -> None:
        """Share the names of the running reward functions with the parent (a page of the beacon file),
        so a hang or an exit it has to report names the function."""
        if not self.beacon:
            return
        try:
            with open(self.beacon, "r+b") as f:
                self.env.calls.beacon = mmap.mmap(f.fileno(), BEACON_BYTES)
        except (OSError, ValueError):
            return
        self.env.calls.show()  # the pid on the page before any call: the parent can look at it
        self.env.calls.listen_for_stops()

    def metadata(self) -> dict:
        env = self.env
        return {
            "capabilities": env.capabilities,
            "name": env.name,
            "spec": env.spec,
            "verifiers_version": env.verifiers_version,
            "env_args": env.env_args,
            "reward_functions": env.reward_functions,
            "unnamed_args": list(env.unnamed_args),
            "num_rows": env.num_rows(),
            "hints": env.format_hints(),
        }

    async def score(
        self, rid: int, groups: list, timeout: float, concurrency: int, skipped: dict | None = None, retry=False
    ) -> None:
        """Score each group (row, completions), sending each group's scores as it finishes. ``skipped``: the
        functions that stopped an earlier worker (not called); ``retry``: call the ones the machine starved again."""
        self.env.calls.timeout = timeout
        self.env.calls.skipped = dict(skipped or {})
        if retry:
            self.env.calls.forget_starved()
        sem = asyncio.Semaphore(max(1, concurrency))

        async def one(gi: int, row, completions) -> None:
            async with sem:
                self.send("started", rid, gi)
                scores = await self.env.score_group(row, completions)
            self.send("group", rid, gi, scores)

        await asyncio.gather(*(one(gi, row, comps) for gi, row, comps in groups))
        return None

    async def generate(self, messages, sampling_args=None, tools=None):
        """Ask the parent for a model turn; calls made together travel in one message (one sampler batch)."""
        call_id = next(self.ids)
        fut = self.loop.create_future()
        self.waiting[call_id] = fut
        self.pending.append((call_id, messages, sampling_args, tools, ROLLOUT_KEY.get()))
        if not self.flushing:
            self.flushing = True
            self.loop.create_task(self.flush())
        out = await fut
        if isinstance(out, BaseException):
            raise out
        return out

    async def flush(self) -> None:
        seen = -1
        while seen != len(self.pending):  # let every runnable rollout reach its generate() call
            seen = len(self.pending)
            for _ in range(3):
                await asyncio.sleep(0)
        batch, self.pending, self.flushing = self.pending, [], False
        self.send("generate", None, batch)

    def run(self) -> None:
        threading.Thread(target=self.reader, daemon=True).start()
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()


def become_subreaper() -> None:
    """Orphaned descendants (a double-forked daemon, a process that calls setsid) are re-parented to
    this worker instead of init, so ``descendants`` still finds them when the worker ends (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def kill_tree(root: int) -> None:
    """SIGKILL every descendant of ``root`` (stopped first, so none forks a replacement while we go)."""
    for _ in range(3):  # a process forking in a loop: what it forked in between is caught next round
        pids = descendants(root)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    continue


def end_process_group() -> None:
    """Kill the processes the user's code started in this worker's session (the parent starts the
    worker as a session leader), and every descendant that left it (setsid, a double-forked daemon:
    the worker is their subreaper). os._exit skips atexit, so a forked pool (verifiers 0.3's MathRubric
    keeps a ProcessPoolExecutor) would otherwise wait forever on a pipe it holds both ends of."""
    me = os.getpid()
    if os.getpgrp() != me:
        return  # not started by vlab.env.remote: its group is not ours to end
    kill_tree(me)
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return
    for pid in pids:
        if pid == me:
            continue
        try:
            if os.getpgid(pid) == me:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def memory_limit_mib() -> int:
    """The worker's memory cap (``VLAB_WORKER_MEMORY_MB``, default half the machine's memory): a reward
    that allocates without bound fails with MemoryError there, and the machine never swaps to death."""
    try:
        given = int(os.environ.get("VLAB_WORKER_MEMORY_MB", "-1"))
    except ValueError:
        given = -1
    if given >= 0:  # 0: no limit (a reward that runs a model on the GPU may need its address space)
        return given
    try:
        return max(1024, (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 21)
    except (ValueError, OSError, AttributeError):
        return 0


def death_reason(code: int) -> tuple[str, str]:
    """(kind, reason) of a worker that ended with ``code`` (a negative one: the signal that killed it)."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        why = f"the environment's process was killed by {name}"
        if name in ("SIGKILL", "SIGABRT", "SIGSEGV", "SIGBUS") and memory_limit_mib():
            why += f" (if it ran out of memory: the worker's limit is {memory_limit_mib()} MiB, VLAB_WORKER_MEMORY_MB)"
        return "crash", why
    return "exit", f"the environment's code ended the process (exit code {code}: sys.exit, os._exit or atexit)"


def limit_memory() -> None:
    """Cap the data this process and what it starts may map (RLIMIT_DATA: heap and anonymous memory),
    so a reward that allocates without bound gets a MemoryError (reported naming the limit) instead of
    swapping the machine to death. The parent passes the limit in VLAB_WORKER_MEMORY_MB."""
    try:
        import resource

        mib = int(os.environ.get("VLAB_WORKER_MEMORY_MB", "0"))
        if mib > 0:
            soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
            cap = mib << 20
            if hard != resource.RLIM_INFINITY:
                cap = min(cap, hard)
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass


def supervise(child: int, fds: tuple[int, ...]) -> None:
    """The session leader's part: wait for the worker (``child``), then end everything it left behind, and
    exit as it did. The user's code cannot take this process down with it (os._exit, a crash, the memory
    cap's SIGKILL end the worker only), so a daemon it started (setsid, a double fork), re-parented to this
    subreaper, never outlives the worker, and never holds the worker's pipe open after it."""
    for fd in fds:  # the parent must see the pipe close when the worker ends
        try:
            os.close(fd)
        except OSError:
            pass
    status = 0
    while True:
        try:
            status = os.waitpid(child, 0)[1]
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    end_process_group()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: die of the same one, so the parent names it
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(-code, signal.SIG_DFL)  # SIGKILL and SIGSTOP refuse a handler: they need none
        except (ImportError, OSError, ValueError):
            pass
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def main() -> None:
    limit_memory()
    become_subreaper()
    fds = (int(sys.argv[1]), int(sys.argv[2]))
    if os.getpgrp() == os.getpid():  # started by vlab.env.remote as a session leader: it supervises
        child = os.fork()
        if child:
            supervise(child, fds)
    inbox, outbox = Connection(int(sys.argv[1])), Connection(int(sys.argv[2]))
    code = 0
    try:
        Worker(inbox, outbox, sys.argv[3] if len(sys.argv) > 3 else None).run()
    except SystemExit as err:  # the user's code called sys.exit: end now, as the parent expects
        code = err.code if isinstance(err.code, int) else 1
    # os._exit, not the interpreter's shutdown: with torch and datasets loaded it took seconds,
    # and the parent hears of the exit only when the process is gone.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    end_process_group()
    os._exit(code)


if __name__ == "__main__":
    main()
