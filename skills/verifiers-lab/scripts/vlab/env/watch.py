"""The parent's bounds on a scoring worker that owes it an answer (``vlab.env.remote``), on the worker's own time.

The worker's own bounds (``vlab.env.instrument``) stop every call they can reach; the parent steps in where they
cannot: a call that holds the worker's event loop (``time.sleep`` in ``async def``, a CPU loop there, sync code
that ignores SIGALRM). The worker's beacon page says which reward functions run, its pid, and the mark of the last
call start or end; from the kernel's evidence (``vlab.env.evidence``) the parent knows the worker's own time since:

- a reward call with ``--timeout`` plus ``CALL_GRACE`` of its own time since the last call started or ended is
  told to stop (a signal that raises a RewardTimeout inside the call, ``Calls.listen_for_stops``): the worker
  lives on, the environment is not loaded again, and the stop is an incident (``stopped``) naming the functions;
- a worker that sends nothing for the allowance of its own time is killed, as is one whose call ignored the stop;
- either one whose wall time reached ``evidence.stretch()`` times its bound first was starved by the machine.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from vlab.env import evidence
from vlab.env.instrument import STOP_HANG, STOP_STARVED, read_beacon_state

CALL_GRACE = 1.0  # own seconds past --timeout before the parent stops a call the worker's bound did not stop
STOP_GRACE = 1.0  # own seconds a worker told to stop a call has to do so before the allowance decides
LOOK = 0.5  # seconds between the parent's looks at a worker that owes it an answer


class Watch:
    """One scoring message's worker: call ``heard`` on each message, ``due`` after each ``LOOK`` without one."""

    def __init__(self, beacon: Path, allowance: float, timeout: float, interrupted: dict) -> None:
        """``interrupted``: name -> (kind, reason) of the functions running when a call was stopped, filled here."""
        self.beacon, self.allowance, self.timeout, self.interrupted = beacon, allowance, timeout, interrupted
        self.since = self._worker_mark()  # the last message: the worker owes the next within the allowance
        self.stop: dict | None = None  # the call the worker was told to stop, until it is seen to end
        self.told: evidence.Mark | None = None  # the beacon's mark when it was told: told once a call
        self.stopped: list[dict] = []  # incidents: calls stopped inside the worker, which lived on

    def heard(self) -> None:
        """A message came: the worker moved on."""
        self._settle(moved=True)
        self.since = self._worker_mark()

    def due(self) -> tuple[bool, str] | None:
        """None while the worker is within its bounds, else (starved, reason): it must be killed."""
        if self._settle(moved=False):
            return None
        if self.stop is not None:  # not stopped yet: the call may ignore the signal, or run outside our code
            if evidence.verdict(evidence.held(self.stop["mark"], self.stop["pid"]), STOP_GRACE) is not None:
                self.stop = None  # no more waiting on it: the allowance decides
            return None
        pid, active, running = self._beacon()
        looks = []
        if running and active and active != self.told:
            looks.append(
                (active, self.timeout + CALL_GRACE, f"a reward function did not return within {self.timeout:g} s")
            )
        looks.append((self.since, self.allowance, f"the environment did not answer within {self.allowance:g} s"))
        for mark, bound, what in looks:
            if time.monotonic() - mark.wall < bound:  # its own time is at most its wall time: not due yet
                continue
            held = evidence.held(mark, pid) if pid else evidence.Held(time.monotonic() - mark.wall, 0.0, None)
            kind = evidence.verdict(held, bound)
            if kind is None:
                continue
            starved = kind == "starved"
            if starved:
                reason = f"{what} of its own time: the machine gave it {held.describe()} (starved, not hung)"
            else:
                reason = f"{what} ({held.describe()})"
            if mark is active and pid and _tell_to_stop(pid, starved):
                self.told = active
                self.stop = {"pid": pid, "active": active, "mark": evidence.thread_mark(pid), "running": running}
                self.stop |= {"starved": starved, "reason": reason}
                return None
            return starved, reason + "; stopped"
        return None

    def _settle(self, moved: bool) -> bool:
        """Whether the call told to stop has ended (a message came, or the beacon moved on): an incident."""
        if self.stop is None or not (moved or self._beacon()[1] != self.stop["active"]):
            return False
        stop, self.stop = self.stop, None
        reason = stop["reason"] + "; interrupted"
        self.stopped.append(
            {"kind": "timeout", "reason": reason, "during": "scoring", "functions": stop["running"]}
            | {"starved": stop["starved"]}
        )
        for name in stop["running"]:
            self.interrupted.setdefault(name, ("timeout" if stop["starved"] else "hang", reason))
        return True

    def _beacon(self) -> tuple[int | None, evidence.Mark | None, list[str]]:
        try:
            return read_beacon_state(self.beacon.read_bytes())
        except OSError:
            return None, None, []

    def _worker_mark(self) -> evidence.Mark:
        pid = self._beacon()[0]
        return evidence.thread_mark(pid) if pid else evidence.Mark(time.monotonic())


def _tell_to_stop(pid: int, starved: bool) -> bool:
    sig = STOP_STARVED if starved else STOP_HANG
    if sig is None:
        return False
    try:
        os.kill(pid, sig)
    except OSError:
        return False
    return True
