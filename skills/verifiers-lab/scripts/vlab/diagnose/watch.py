"""--watch: poll a running run (a local metrics file or a hosted run id) until a stop condition fires.

A rich progress line on a terminal (stderr), one log line per new step otherwise. Ends when a
stop condition fires (verdict ``fail``: exit 1; ``done``: exit 0), when the run finishes (a hosted
run's terminal status, or the planned max_steps), after ``--max-polls`` polls, or after
``--idle-timeout`` seconds without a new step. Ctrl-C ends it cleanly (exit 130) with what was seen.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from vlab.core.console import log
from vlab.core.result import Result, UsageError
from vlab.diagnose import stops as st
from vlab.diagnose.analysis import analyse, read_series
from vlab.diagnose.request import DiagnoseRequest
from vlab.diagnose.series import Series
from vlab.diagnose.sources import Located
from vlab.diagnose.thresholds import T


class _Display:
    def __init__(self, total: int | None):
        self.bar = None
        if sys.stderr.isatty():
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self.bar = Progress(
                    TextColumn("[bold]watch"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("{task.fields[info]}"),
                    TimeElapsedColumn(),
                    console=Console(file=sys.stderr),
                )
                self.task = self.bar.add_task("watch", total=total, completed=0, info="")
                self.bar.start()
            except ImportError:
                self.bar = None
        self.last = None

    def update(self, s: Series, note: str) -> None:
        step = s.last_step()
        r = s.col("reward_mean")
        reward = f"reward {r[-1]:.3f}" if len(s) and r.size and r[-1] == r[-1] else "reward -"
        info = f"step {step} {reward} {note}".strip()
        if self.bar is not None:
            self.bar.update(self.task, completed=step or 0, info=info)
        elif step != self.last:
            log(f"watch: {info}")
        self.last = step

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def watch(found: Located, request: DiagnoseRequest, result: Result, stops: list[st.Stop] | None):
    if request.interval <= 0:
        raise UsageError("--interval must be > 0 seconds")
    polls, last_len, last_change = 0, -1, time.monotonic()
    state: dict[str, Any] = {"polls": 0, "stopped_because": None, "fired": None}
    result.data["watch"] = state
    s: Series | None = None
    display = None
    try:
        while True:
            polls += 1
            s = read_series(found, request)
            if display is None:
                total = request.max_steps or s.info.get("max_steps")
                display = _Display(total if isinstance(total, int) else None)
            if len(s) != last_len:
                last_len, last_change = len(s), time.monotonic()
            if stops is None and len(s) >= T["baseline_steps"]:
                d = analyse(s, request)
                stops = d.stops
                state["stop_conditions"] = [x.to_dict() for x in stops]
            fired = st.evaluate(stops, s) if stops else []
            state.update(polls=polls, last_step=s.last_step(), steps=len(s))
            display.update(s, f"({len(stops or [])} stop conditions)")
            if fired:
                state["fired"], state["stopped_because"] = fired[0], f"stop condition {fired[0]['id']}"
                break
            if _finished(s, request):
                state["stopped_because"] = "the run finished"
                break
            if request.max_polls and polls >= request.max_polls:
                state["stopped_because"] = f"{polls} polls (--max-polls)"
                break
            if time.monotonic() - last_change > request.idle_timeout:
                state["stopped_because"] = f"no new step for {request.idle_timeout:g} s"
                break
            time.sleep(request.interval)
    finally:
        if display is not None:
            display.close()
    if s is None or len(s) == 0:
        raise UsageError(f"{found.path or request.run} logged no step while watched", hint="check the run is training")
    d = analyse(s, request, stops)
    fired = state["fired"]
    if fired is not None:
        text = f"stop condition {fired['id']} fired at step {fired['step']}: {fired['text']}"
        if fired["verdict"] == "fail":
            result.fail("stop-condition", text, "stop the run; apply the deltas below and start the next run")
        else:
            result.passed("stop-condition", text + " (learned: stopping is safe)")
    else:
        result.passed("stop-condition", f"no stop condition fired; stopped watching: {state['stopped_because']}")
    return d


def _finished(s: Series, request: DiagnoseRequest) -> bool:
    status = str(s.info.get("status", "")).upper()
    if s.source == "hosted" and status:
        from vlab.diagnose.hosted import TERMINAL

        return status in TERMINAL
    planned = request.max_steps or s.info.get("max_steps")
    return isinstance(planned, int) and len(s) > 0 and s.last_step() >= planned
