"""Whether a call that ran past its bound was held up by the machine: evidence from Linux's scheduler statistics.

A call's wall time is its own time plus the time its process tree waited on a run queue for a CPU that other
work held (``/proc/<pid>/task/<tid>/schedstat``: CPU time, run-queue delay). Its own time (``Held.own``: wall
less that delay, and never less than its CPU time spread over the usable cores) is what a bound measures, so:

- a call that sleeps or waits uses no CPU and waits on no run queue: its own time is its wall time, and it is a
  hang at the bound as given, however loaded the machine;
- a CPU-bound call is bounded by the CPU it got: beside a hog on every core it is stopped later in wall time, at
  the same amount of work, so a CPU loop is still named and a slow but finishing reward is not;
- a call that got so little CPU that its wall time reached ``bound x stretch()`` before its own time reached the
  bound was ``starved``: the machine, not the reward; it is scored again alone (``vlab.env.pool``).

Without scheduler statistics (not Linux, or a kernel without them) the bound is stretched by the load average
per core, as before (``core.installed.load_scale``).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from vlab.core.installed import load_scale

# A starved call's wall time may reach this many bounds, or LOAD_STRETCH times the load average per core if more:
# a CPU-bound call needs about the load per core times its bound, and the 1-minute average lags a load that just rose
MIN_STRETCH = 6.0
LOAD_STRETCH = 3.0
FRESH = 0.2  # seconds a mark's reading of the run-queue delay may be old (one file read per call at most this often)
MIN_STEP = 0.05  # the shortest wait between two looks at a call not yet due
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Mark:
    """Where a call (or a wait) started: the monotonic clock, and its thread's CPU time and run-queue delay
    then (seconds; None where the kernel keeps no scheduler statistics)."""

    wall: float
    cpu: float | None = None
    delay: float | None = None


@dataclass(frozen=True)
class Held:
    """What a process tree did since a mark: wall seconds, CPU seconds, seconds waiting for a CPU (None: unknown)."""

    wall: float
    cpu: float
    delay: float | None
    cores: int = 1

    @property
    def own(self) -> float:
        """The call's own time: what its wall time would have been on an idle machine (see the module)."""
        spread = self.cpu / max(1, self.cores)  # a tree that used this much CPU needed this long even alone
        if self.delay is None:
            return max(self.wall / load_scale(), spread)
        return max(self.wall - self.delay, spread, 0.0)

    def describe(self) -> str:
        """How it spent its wall time, for a report: '0.0 s of CPU in 15 s', 'waited 4.1 s for a CPU'."""
        text = f"{self.cpu:.1f} s of CPU in {self.wall:.1f} s"
        if self.delay is not None and self.delay >= 0.05:
            text += f", {self.delay:.1f} s waiting for a CPU"
        return text


def _schedstat(path: str) -> tuple[float, float] | None:
    try:
        with open(path, "rb") as f:
            cpu, delay = f.read().split()[:2]
        return int(cpu) / 1e9, int(delay) / 1e9
    except (OSError, ValueError):
        return None


_last: list = [float("-inf"), None]  # (when, (cpu, delay)) of this thread's last reading


def mark() -> Mark:
    """Now, for the calling thread: its scheduler statistics read at most ``FRESH`` s ago (an older reading only
    counts more of the time before the mark as waiting, a lenient error of at most ``FRESH``)."""
    now = time.monotonic()
    if now - _last[0] > FRESH:
        _last[:] = [now, _schedstat("/proc/thread-self/schedstat")]
    times = _last[1]
    return Mark(now, *(times or (None, None)))


def thread_mark(pid: int) -> Mark:
    """Now, for the main thread of process ``pid`` (the parent's view of its worker)."""
    times = _schedstat(f"/proc/{pid}/task/{pid}/schedstat")
    return Mark(time.monotonic(), *(times or (None, None)))


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (by parent links in /proc), children first."""
    parents: dict[int, int] = {}
    try:
        names = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                parents[int(name)] = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: list[int] = []
    frontier = [root]
    while frontier:
        below = [pid for pid, ppid in parents.items() if ppid in frontier and pid not in found]
        found += below
        frontier = below
    return found


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def held(since: Mark, pid: int | None = None) -> Held:
    """What process ``pid`` (default this one) and everything below it did since ``since``, a mark of its main
    thread: that thread's CPU time and delay exactly, every other thread's (the process's own, its children's)
    counted in the share of its life that falls after the mark (most are started by the call: all of it). The
    kernel adds a wait to the delay only when it ends, so while more threads are runnable than there are cores,
    a thread runnable now (state R; never the caller, which runs) may be waiting still: the part of its time since
    the mark (or its birth) that is neither CPU nor counted delay is counted as waiting too."""
    pid = pid or os.getpid()
    me = (os.getpid(), threading.get_native_id())
    queued = _runnable() > _usable_cores()
    now = time.monotonic()
    wall = max(0.0, now - since.wall)
    try:
        boot_now = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):
        boot_now = None
    cpu, delay, known = 0.0, 0.0, since.delay is not None
    for proc in [pid, *descendants(pid)]:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{proc}/task")]
        except (OSError, ValueError):
            continue
        for tid in tids:
            times = _schedstat(f"/proc/{proc}/task/{tid}/schedstat")
            state, age = _state_and_age(proc, tid, boot_now)
            if proc == pid and tid == pid:
                if times is None or since.delay is None or since.cpu is None:
                    cpu += _proc_cpu(pid) * _share(wall, age)
                    known = False
                    continue
                used, waited, span = max(0.0, times[0] - since.cpu), max(0.0, times[1] - since.delay), wall
            elif times is None:
                known = False
                continue
            elif age is not None and age <= wall:  # started after the mark: all of its life is in it
                used, waited, span = times[0], times[1], age
            else:
                share = _share(wall, age)
                used, waited, span = times[0] * share, times[1] * share, 0.0
            if state == b"R" and queued and (proc, tid) != me:
                waited = max(waited, span - used)
            cpu += used
            delay += waited
    return Held(wall, cpu, delay if known else None, _usable_cores())


def _runnable() -> int:
    """How many threads the machine has runnable now (running or waiting for a CPU), from /proc/loadavg."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return 0


def _state_and_age(proc: int, tid: int, boot_now: float | None) -> tuple[bytes | None, float | None]:
    """A thread's state letter (R: running or waiting for a CPU) and age in seconds (None: unknown)."""
    try:
        with open(f"/proc/{proc}/task/{tid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / _TICK
    except (OSError, ValueError, IndexError):
        return None, None
    return fields[0], (boot_now - started if boot_now is not None else None)


def _share(wall: float, age: float | None) -> float:
    """The share of a life of ``age`` seconds that falls in the last ``wall`` seconds (1 when unknown)."""
    return 1.0 if age is None or age <= wall else wall / age


def _proc_cpu(pid: int) -> float:
    """A process's CPU time from /proc/<pid>/stat (no scheduler statistics)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return 0.0


def stretch() -> float:
    """How many bounds of wall time a starved call may take before it is stopped as starved (see the module)."""
    return max(MIN_STRETCH, LOAD_STRETCH * load_scale())


def verdict(h: Held, bound: float, most: float | None = None) -> str | None:
    """'hang': the call had ``bound`` seconds of its own time; 'starved': its wall time reached ``most`` (default
    ``bound x stretch()``) first; None: neither yet."""
    if h.own >= bound:
        return "hang"
    if h.wall >= (most if most is not None else bound * stretch()):
        return "starved"
    return None


def next_look(h: Held, bound: float, most: float | None = None) -> float:
    """Seconds until the call can next be due: its own time grows at most as fast as its wall time."""
    most = most if most is not None else bound * stretch()
    return max(MIN_STEP, min(bound - h.own, most - h.wall))
