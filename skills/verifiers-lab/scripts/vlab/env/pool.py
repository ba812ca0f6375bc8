"""Scoring on several cores: a RemoteEnvironment and, for large CPU-bound batches, sibling workers.

A worker scores in one process, so a CPU-bound reward (math-verify) uses one core however many rows
are scored at once. ``ScoringPool`` wraps the environment test_reward loaded: a call with at least
Once ``MIN_ITEMS`` completions have been scored, a call with at least ``MIN_ROWS`` rows starts up to
``cores - 1`` (at most ``MAX_WORKERS - 1``) more workers on the same environment, once, and splits
its rows between them (the pass over every row, in batches, gets there); smaller calls (and every
call on one core) go to the first worker alone, so state_leak and the probe phases see one process. A sibling that does not load is left out, never an error; what the
siblings met (exits, crashes, hangs, printed output) is folded into the first worker's record
(``incidents``, ``user_output``) when the pool closes.

A probe that ran out of time only because the machine starved it (``Score.starved``: its wall time reached
the stretched bound before its own time reached the bound, ``vlab.env.evidence``) is scored again before it
becomes a verdict (``_retry_timeouts``): first alone, with the function's earlier timeout forgotten; if it
returns now, the machine was busy, and every other probe the machine starved in that call is scored again too;
if it times out alone as well, the hang is the reward's, and that function is not retried again. A probe that
timed out on the evidence of its own time (it waited, or had its bound on a CPU) is a hang at once, never
retried. What was retried, recovered and waited for is in ``retries``.

The pool is an ``Environment`` in its own right: every part of the interface is handed to the first
worker by name (no attribute pass-through), and whether it may spread at all is the constructor's
``spread`` argument, decided by the caller before the pool exists (code rewards start a process per
program already: one worker).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from vlab.env.base import Environment, run
from vlab.env.remote import LoadFailed, RemoteEnvironment
from vlab.env.types import FormatHints, Generate, RolloutResult, Row, Score

MIN_ITEMS = 1500  # completions scored before siblings pay for their load time (a few seconds each)
MIN_ROWS = 16  # rows in one call worth splitting
MAX_WORKERS = 4
MAX_RETRY_ROUNDS = 3  # scoring calls whose timeouts are retried: a reward that hangs for real costs a few bounds


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ScoringPool(Environment):
    def __init__(self, env: RemoteEnvironment, spread: bool = True, workers: int | None = None) -> None:
        self.env = env
        self.spread = spread  # False: one worker (code rewards start their own processes)
        self.workers = max(1, min(workers or usable_cores(), MAX_WORKERS))
        self.siblings: list[RemoteEnvironment] | None = None  # None: not started yet
        self.scored = 0
        # probes scored again after a timeout, those that then returned, the seconds it took, and the functions
        # whose hang a retry confirmed (not retried again) or cleared (the machine was busy)
        self.retries = {"rounds": 0, "probes": 0, "recovered": 0, "seconds": 0.0}
        self.hangs: set[str] = set()
        self.recovered: set[str] = set()
        self.calls = env.calls
        self.capabilities, self.name, self.spec = env.capabilities, env.name, env.spec
        self.verifiers_version, self.env_args = env.verifiers_version, env.env_args
        self.reward_functions, self.unnamed_args = env.reward_functions, env.unnamed_args

    # -- the first worker's, by name ------------------------------------------------------

    @property
    def incidents(self) -> list[dict]:
        return self.env.incidents

    def user_output(self) -> dict | None:
        return self.env.user_output()

    def num_rows(self) -> int:
        return self.env.num_rows()

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        return self.env.rows(n, start)

    def format_hints(self) -> FormatHints:
        return self.env.format_hints()

    def validate(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        return self.env.validate(indices, timeout)

    async def validate_rows(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        return await self.env.validate_rows(indices, timeout)

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        return await self.env.score_group(row, completions)

    async def score(self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32) -> list[Score]:
        return await self.env.score(items, timeout, concurrency)

    async def rollout_group(
        self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        return await self.env.rollout_group(row, generate, n, sampling_args, timeout)

    def describe(self) -> dict:
        return self.env.describe()

    # -- spreading ------------------------------------------------------------------------

    def _started(self) -> list[RemoteEnvironment]:
        if self.siblings is None:
            self.siblings = []
            for _ in range(self.workers - 1):
                try:
                    self.siblings.append(self.env.sibling())
                except LoadFailed:
                    break
        return [self.env, *self.siblings]

    def score_sync(
        self, items: list[tuple[Row, object]], timeout: float = 10.0, concurrency: int = 32, retry: bool = True
    ) -> list[Score]:
        """``retry=False``: probes already scored alone within a longer bound (the slow code probes), whose
        timeout is the verdict they exist to reach; a retry would only double its cost."""
        out = self._score_spread(items, timeout, concurrency)
        if retry:
            out = self._retry_timeouts(items, out, timeout, concurrency)
        return self._rescore_buried(items, out, timeout, concurrency)

    def _rescore_buried(self, items: list, out: list[Score], timeout: float, concurrency: int) -> list[Score]:
        """The probes a worker's death took down with it (an exit, a crash, a confirmed hang), scored once more
        in a fresh worker that never calls the function that stopped it: the other functions' scores count."""
        stopped = set(self.env.skipped)
        buried = [
            i
            for i, s in enumerate(out)
            if s.scoring_error is not None
            and s.scoring_error.type.startswith("Worker")
            and set(s.timed_out or [n for n, v in s.per_function.items() if v is None]) & stopped
        ]
        if buried:
            for i, s in zip(buried, run(self.env.score([items[i] for i in buried], timeout, concurrency))):
                out[i] = s
        return out

    def _retry_timeouts(self, items: list, out: list[Score], timeout: float, concurrency: int) -> list[Score]:
        """Score the probes the machine starved again (see the module's docstring); the rest stand."""
        self.hangs |= {name for s in out for name in s.timed_out if name not in s.starved}  # their own time: hung
        timed = [i for i, s in enumerate(out) if set(s.starved) - self.hangs]
        if not timed or self.retries["rounds"] >= MAX_RETRY_ROUNDS:
            return out
        self.retries["rounds"] += 1
        t0 = time.perf_counter()
        names = {name for i in timed for name in out[i].starved} - self.hangs
        first, rest = timed[0], timed[1:]
        retried = set(out[first].starved) - self.hangs
        [out[first]] = run(self.env.score([items[first]], timeout, 1, retry=True))
        tried = [first]
        if retried & set(out[first].timed_out):  # alone too: the reward's own hang
            self.hangs |= retried & set(out[first].timed_out)
        elif rest:  # the machine was busy: the others again
            for i, s in zip(rest, run(self.env.score([items[i] for i in rest], timeout, concurrency, retry=True))):
                out[i] = s
            tried += rest
        still = {name for i in tried for name in out[i].timed_out} & names
        self.recovered |= names - still - self.hangs
        self.retries["probes"] += len(tried)
        self.retries["recovered"] += sum(1 for i in tried if not set(out[i].timed_out) & names)
        self.retries["seconds"] = round(self.retries["seconds"] + time.perf_counter() - t0, 1)
        return out

    def _score_spread(self, items: list[tuple[Row, object]], timeout: float, concurrency: int) -> list[Score]:
        self.scored += len(items)
        if not self.spread or self.workers < 2 or self.scored < MIN_ITEMS or len({id(r) for r, _ in items}) < MIN_ROWS:
            return self.env.score_sync(items, timeout, concurrency)
        envs = self._started()
        if len(envs) < 2:
            return self.env.score_sync(items, timeout, concurrency)
        rows: dict[int, int] = {}  # row object -> its worker, round robin by row (a row's group stays together)
        shares: list[list[int]] = [[] for _ in envs]
        for i, (row, _) in enumerate(items):
            shares[rows.setdefault(id(row), len(rows) % len(envs))].append(i)

        async def all_of() -> list[list[Score]]:
            return await asyncio.gather(
                *(e.score([items[i] for i in share], timeout, concurrency) for e, share in zip(envs, shares))
            )

        out: list[Score | None] = [None] * len(items)
        for share, scores in zip(shares, run(all_of())):
            for i, s in zip(share, scores):
                out[i] = s
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the siblings; their incidents and output join the first worker's."""
        for sibling in self.siblings or []:
            sibling.close()
            self.env.absorb(sibling)
        self.siblings = []
