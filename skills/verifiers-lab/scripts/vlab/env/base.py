"""The one interface every loaded environment offers, whatever its verifiers generation.

Callers (reward checks, probes, the trainer) see only this: plain dataclasses in and out
(rows, completions, scores, rollout results) and an `Environment` whose `capabilities`
say what it can do. They never ask which generation it is; `capabilities.generation` is
a label for reports, not something to branch on.

API::

    env = load_env("path/to/env.py" | "path/to/package_dir" | "owner/name" | "name", {"arg": 1})
    env.capabilities         # Capabilities(generation, multi_turn, group_rewards, tools, ...)
    env.verifiers_version    # installed verifiers version
    env.reward_functions     # [RewardFunction(name, weight, is_group)]
    env.format_hints()       # FormatHints: parser kind, XML fields, answer field, system prompt
    env.num_rows()           # rows in the dataset the trainer samples from
    rows = env.rows(n)       # [Row(index, prompt messages, answer, question)]
    scores = env.score_sync([(row, completion), ...], timeout=10, concurrency=32)
    #   completion: text or a list of chat messages; -> [Score(total, per_function, errors, seconds)]
    result = env.rollout_sync(row, generate, sampling_args)   # env's own rollout loop
    group = env.rollout_group_sync(row, generate, n)          # n rollouts scored as one group

``generate(messages, sampling_args) -> Reply | str`` (sync or async) is the one seam for
model output: the offline scripted client of test_reward and the local trainer's sampler
both plug in here. ``messages`` are plain dicts (role/content/tool_calls/...). A ``Reply``
can carry token ids and logprobs, which land in the rollout's turns as verifiers would
record them from a real inference server. If ``generate`` accepts a ``tools`` keyword it
receives the environment's tool definitions (name/description/parameters dicts).

Pairs given to ``score`` that share one ``Row`` object are scored as one group (group
reward functions see them together); a reward function that timed out once is skipped
(recorded as a timeout) for the rest of the process, so one hang costs one timeout.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from vlab.core.result import UsageError
from vlab.env.instrument import Calls
from vlab.env.types import Capabilities, FormatHints, Generate, RewardFunction, RolloutResult, Row, Score


def run(coro):
    """Run a coroutine to completion from sync code (one event loop per call)."""
    return asyncio.run(coro)


# -- the interface ---------------------------------------------------------------------------


class Environment(ABC):
    """A loaded environment; see the module docstring."""

    capabilities: Capabilities
    name: str
    spec: str
    verifiers_version: str
    env_args: dict
    reward_functions: list[RewardFunction]
    unnamed_args: list[str] = []  # env args the loader does not name (they reach only **kwargs)

    def __init__(self) -> None:
        self.calls = Calls()

    # rows
    @abstractmethod
    def num_rows(self) -> int: ...

    @abstractmethod
    def rows(self, n: int = -1, start: int = 0) -> list[Row]: ...

    def row(self, index: int) -> Row:
        rows = self.rows(1, start=index)
        if not rows:
            raise UsageError(f"example_id {index} is out of range (the dataset has {self.num_rows()} rows)")
        return rows[0]

    @abstractmethod
    def format_hints(self) -> FormatHints: ...

    # scoring
    @abstractmethod
    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        """Score completions (text or message lists) of one row as one group."""

    async def score(self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32) -> list[Score]:
        """Score (row, completion) pairs; pairs of one row are scored as one group."""
        self.calls.timeout = timeout
        groups: dict[int, list[int]] = {}
        for i, (row, _) in enumerate(items):
            groups.setdefault(id(row), []).append(i)
        out: list[Score | None] = [None] * len(items)
        sem = asyncio.Semaphore(max(1, concurrency))

        async def one(indices: list[int]) -> None:
            async with sem:
                row = items[indices[0]][0]
                scores = await self.score_group(row, [items[i][1] for i in indices])
            for i, s in zip(indices, scores):
                out[i] = s

        await asyncio.gather(*(one(ix) for ix in groups.values()))
        return out  # type: ignore[return-value]

    def score_sync(
        self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32, retry: bool = True
    ) -> list[Score]:
        """``retry``: whether a probe that ran out of time may be scored again (only test_reward's pool retries)."""
        return run(self.score(items, timeout, concurrency))

    # the environment's own checks of its data
    async def validate_rows(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        """The environment's own model-free check of each row (a v1 task's ``validate()``), as
        [{"index", "valid": True/False/None, "error"}]; None when it defines none."""
        return None

    def validate(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        return run(self.validate_rows(indices, timeout))

    # rollouts
    @abstractmethod
    async def rollout_group(
        self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        """``n`` rollouts of one row, scored as one group."""

    async def rollout(
        self, row: Row, generate: Generate, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> RolloutResult:
        return (await self.rollout_group(row, generate, 1, sampling_args, timeout))[0]

    def rollout_sync(
        self, row: Row, generate: Generate, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> RolloutResult:
        return run(self.rollout(row, generate, sampling_args, timeout))

    def rollout_group_sync(
        self, row: Row, generate: Generate, n: int, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        return run(self.rollout_group(row, generate, n, sampling_args, timeout))

    def describe(self) -> dict:
        return {
            "kind": self.capabilities.generation,
            "name": self.name,
            "verifiers_version": self.verifiers_version,
            "multiturn": self.capabilities.multi_turn,
            "max_turns": self.capabilities.max_turns,
            "reward_functions": [
                {"name": f.name, "weight": f.weight, "group": f.is_group} for f in self.reward_functions
            ],
        }
