"""Rollouts from a verifiers environment (classic or v1), through `vlab.env`.

Rewards always come from the environment's own rubric / task scoring.

- Environments with their own rollout loop (`capabilities.rollout_loop`: classic
  ones, single- and multi-turn, tools): the environment's own rollout loop runs every rollout of the step concurrently against an in-process
  client whose model is our sampler; concurrent requests are gathered into one
  sampler batch. Each turn's prompt ids, completion ids and sampling logprobs come
  back through the rollout's trajectory, as verifiers records them from a real
  inference server; the rubric scores each group as a group.
- The others (v1 tasksets): every prompt of the step is rendered and sampled in one
  batch, then each group is scored by the task's own scoring (`Environment.score`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any

from vlab.core.result import ToolError
from vlab.env import Environment, Reply, Score, finite
from vlab.env.remote import RemoteEnvironment
from vlab.env.types import ROLLOUT_KEY
from vlab.train.rollout import ChatPolicy, Rollout, Turn


def rollout_seed(seed: int, key: tuple, turn: int) -> int:
    """The sampling seed of one model turn of one rollout: a function of the step's seed, the rollout
    (row index, number in its group) and the turn, never of the calls that share its sampler batch."""
    digest = hashlib.blake2b(repr((seed, key, turn)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class BatchingGenerate:
    """An async `generate(messages, sampling_args)` that batches concurrent calls into one sampler call.

    Which calls share a batch depends on timing (how soon each rollout reaches its generate call, in
    the environment's process too), so every call is sampled with its own seed (`rollout_seed`): the
    rollout it belongs to (`ROLLOUT_KEY`, set by the environment's rollout_group) and its turn. A
    call with no key (an environment outside vlab.env) is keyed by its messages and how many equal
    calls came before it in this step.
    """

    def __init__(self, policy: ChatPolicy, seed: int | None = None):
        self.policy = policy
        self.seed = seed
        self.pending: list[tuple[list[dict], list | None, int | None, asyncio.Future]] = []
        self.flushing = False
        self.calls = 0
        self.turns: dict[tuple, int] = {}

    def _call_seed(self, messages, tools) -> int | None:
        if self.seed is None:
            return None
        key = ROLLOUT_KEY.get()
        if key is None:
            text = json.dumps([messages, tools], sort_keys=True, default=str)
            key = ("messages", hashlib.blake2b(text.encode(), digest_size=16).hexdigest())
        turn = self.turns.get(key, 0)
        self.turns[key] = turn + 1
        return rollout_seed(self.seed, key, turn)

    async def __call__(self, messages, sampling_args=None, tools=None):
        fut = asyncio.get_running_loop().create_future()
        self.pending.append((messages, tools, self._call_seed(messages, tools), fut))
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        return await fut

    async def _flush(self) -> None:
        # Let every runnable rollout reach its generate() call before sampling.
        seen = -1
        while seen != len(self.pending):
            seen = len(self.pending)
            for _ in range(3):
                await asyncio.sleep(0)
        batch, self.pending, self.flushing = self.pending, [], False
        try:
            self.calls += 1
            seeds = None if self.seed is None else [s for _, _, s, _ in batch]
            samples = self.policy.complete_batch(
                [m for m, _, _, _ in batch], seeds=seeds, tools=[t for _, t, _, _ in batch]
            )
        except BaseException as err:  # noqa: BLE001 - hand the error to every waiting rollout
            for *_, fut in batch:
                if not fut.done():
                    fut.set_exception(err)
            return
        for (_, tools, _, fut), s in zip(batch, samples):
            if not fut.done():
                text, calls = split_tool_calls(s.text) if tools else (s.text, None)
                fut.set_result(
                    Reply(
                        text=text,
                        tool_calls=calls,
                        prompt_token_ids=s.prompt_ids,
                        completion_token_ids=s.completion_ids,
                        completion_logprobs=s.logprobs,
                        finish_reason="tool_calls" if calls else s.finish_reason,
                    )
                )


_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def split_tool_calls(text: str) -> tuple[str, list[dict] | None]:
    """Hermes/Qwen-style `<tool_call>{"name":..., "arguments":...}</tool_call>` blocks -> tool calls."""
    calls = []
    for i, m in enumerate(_TOOL_CALL.finditer(text)):
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", {})
            calls.append(
                {
                    "id": f"call_{i}",
                    "name": obj["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                }
            )
    if not calls:
        return text, None
    return _TOOL_CALL.sub("", text).strip(), calls


class VerifiersSource:
    """A `RolloutSource` over a loaded verifiers environment."""

    def __init__(self, env: Environment, env_id: str, reward_timeout: float = 30.0):
        self.env = env
        self.env_id = env_id
        self.num_examples = env.num_rows()
        if self.num_examples == 0:
            raise ToolError(
                f"environment {env_id} has an empty dataset", hint="check its --env-args (dataset path, size)"
            )
        self.reward_timeout = reward_timeout
        # Envs with their own rollout loop (state setup, stop conditions, num_turns) run it even
        # for one turn; otherwise a rollout is one model turn then scoring, which the batched
        # path does identically with one sampler call for the whole step.
        self.use_rollout_loop = env.capabilities.rollout_loop or env.capabilities.multi_turn
        self._rows: dict[int, Any] = {}

    @classmethod
    def load(cls, spec: str, env_args: dict | None = None) -> VerifiersSource:
        """The environment's code runs in a child process (``vlab.env.remote``)."""
        return cls(RemoteEnvironment(spec, env_args or {}), spec)

    def _check_incidents(self) -> None:
        """A worker that exited, crashed or hung ends training with exit 1, never a silent pass."""
        incidents = getattr(self.env, "incidents", [])
        if incidents:
            first = incidents[0]
            where = f" in {', '.join(first['functions'])}" if first.get("functions") else ""
            raise ToolError(
                f"{first['reason']} while {first['during']}{where}",
                hint="a reward function or loader must return a value promptly, never exit or crash the process",
            )

    def describe(self) -> dict:
        return {**self.env.describe(), "num_examples": self.num_examples}

    def row(self, i: int):
        if i not in self._rows:
            self._rows[i] = self.env.row(i)
        return self._rows[i]

    def run_groups(
        self, example_ids: list[int], group_size: int, policy: ChatPolicy, seed: int, eval: bool = False
    ) -> list[Rollout]:
        rows = [self.row(i) for i in example_ids]
        if self.use_rollout_loop:
            out = asyncio.run(self._rollout_loop(rows, group_size, policy, seed))
        else:
            out = self._batched_single_turn(rows, group_size, policy, seed)
        self._check_incidents()
        return out

    def _batched_single_turn(self, rows, group_size, policy, seed) -> list[Rollout]:
        convs = [row.prompt for row in rows for _ in range(group_size)]
        samples = policy.complete_batch(convs, seed=seed)
        items = [(row, s.text) for row, s in zip([r for r in rows for _ in range(group_size)], samples)]
        scores = self.env.score_sync(items, timeout=self.reward_timeout)
        out = []
        for (row, _), s, score in zip(items, samples, scores):
            out.append(
                self._rollout(
                    row,
                    [{"role": "assistant", "content": s.text}],
                    score,
                    [Turn(s.prompt_ids, s.completion_ids, s.logprobs)],
                    s.finish_reason == "length",
                    "single_turn",
                    None,
                )
            )
        return out

    async def _rollout_loop(self, rows, group_size, policy, seed) -> list[Rollout]:
        gen = BatchingGenerate(policy, seed)
        groups = await asyncio.gather(
            *(self.env.rollout_group(row, gen, group_size, {}, timeout=self.reward_timeout) for row in rows)
        )
        out = []
        for row, group in zip(rows, groups):
            for res in group:
                turns = [
                    Turn(t["prompt_ids"], t["completion_ids"], t["completion_logprobs"])
                    for t in res.turns
                    if t.get("completion_ids") is not None
                ]
                truncated = res.truncated or res.stop_condition in ("length", "prompt_too_long")
                out.append(
                    self._rollout(row, res.completion, res.score, turns, truncated, res.stop_condition, res.error)
                )
        return out

    @staticmethod
    def _rollout(row, completion, score: Score, turns, truncated, stop, error) -> Rollout:
        errors = [f"{name}: {e.type}: {e.message}" for name, e in (score.errors or {}).items()]
        if score.scoring_error is not None:
            errors.append(f"scoring: {score.scoring_error.type}: {score.scoring_error.message}")
        if error:
            errors.append(f"rollout: {error}")
        for name, v in [*score.per_function.items(), ("the weighted total", score.total)]:
            if isinstance(v, (int, float)) and not finite(v):
                raise ToolError(
                    f"reward {name} returned {v} on example_id {row.index}; training on it would corrupt the model",
                    hint="make the reward function return a finite number for every completion",
                )
        metrics = {k: float(v) for k, v in {**score.metrics, **score.per_function}.items() if finite(v)}
        reward = float(score.total) if finite(score.total) else 0.0
        return Rollout(
            example_id=row.index,
            prompt=row.prompt,
            completion=completion,
            reward=reward,
            metrics=metrics,
            turns=turns,
            answer=row.answer,
            info=None,
            error="; ".join(errors) or None,
            is_truncated=truncated,
            stop_condition=stop,
        )
