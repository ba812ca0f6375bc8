"""v1 tasksets (``verifiers.v1``, in 0.3.1 and 0.4.x: ``__all__`` exports one ``vf.Taskset``).

Each completion is scored by the task's own ``task.score(trace)`` on a trace holding the
row's prompt and the completion as sampled assistant turns, so ``@vf.reward`` weights and
the task's hooks behave as in training. A rollout here is one model turn scored the same
way, unless the task has tools or stop conditions: then the rollout is the multi-turn loop
of ``v1_loop`` (the task's toolsets run in-process, its ``@vf.stop`` functions end it).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable
from typing import Any

from vlab.core.result import UsageError
from vlab.env import compat, v1_loop
from vlab.env.base import Environment
from vlab.env.instrument import describe_error, instrument, score_from
from vlab.env.messages import as_rollout, call_generate, completion_messages, last_user_text, message_dict
from vlab.env.types import Capabilities, FormatHints, Generate, RewardFunction, RolloutResult, Row, Score

GENERATION = "v1"
_AGENT = "test_reward"  # the agent name traces carry
_UNBOUNDED_LIMIT = 10_000  # tasks read from a taskset that never ends


class V1Environment(Environment):
    @classmethod
    def load(cls, module: Any, spec: str, env_args: dict, version: str, classify_load_error) -> V1Environment:
        """Build the taskset from an imported module; ``classify_load_error`` maps a loading
        exception to the right ToolError (see ``locate``)."""
        import verifiers.v1 as vf

        self = cls()
        self.spec, self.env_args, self.verifiers_version = spec, env_args, version
        self.name = module.__name__
        try:
            taskset_cls = compat.taskset_class(module)
        except (TypeError, ValueError, AttributeError) as err:
            raise UsageError(f"{spec}: {err}", hint="export exactly one vf.Taskset subclass in __all__") from err
        try:
            config_type = vf.taskset_config_type(self.name)
            config = config_type(**{"id": self.name, **env_args})
        except Exception as err:  # noqa: BLE001 - pydantic validation of --env-args
            raise _bad_env_args(spec, locals().get("config_type"), env_args, err) from err
        try:
            self.taskset = taskset_cls(config)
        except Exception as err:  # noqa: BLE001
            raise classify_load_error(err, f"{taskset_cls.__name__}") from err
        self._trace_parts: dict[int, tuple] = {}
        self._trace_count = 0
        self._load_tasks(None if compat.taskset_bounded(self.taskset) else _UNBOUNDED_LIMIT, classify_load_error)
        sample = self._tasks[0] if self._tasks else None
        rewards = compat.task_rewards(sample) if sample is not None else []
        self.reward_functions = [RewardFunction(name, weight) for name, weight in rewards]
        self._loop = None
        self.tool_loop_error: str | None = None  # toolsets declared but not runnable in-process
        if sample is not None:
            try:
                self._loop = v1_loop.ToolLoop(sample)
                stops = compat.task_stops(sample)
            except Exception as err:  # noqa: BLE001 - e.g. a toolset that needs a sandbox: rollouts stay single-turn
                self._loop, stops = None, []
                self.tool_loop_error = f"{type(err).__name__}: {err}"
            if self._loop is not None and not self._loop.servers and not stops:
                self._loop = None
        broken = self.tool_loop_error is not None
        self.capabilities = Capabilities(
            generation=GENERATION,
            multi_turn=self._loop is not None or broken,
            tools=bool(self._loop and self._loop.servers) or broken,
            rollout_loop=self._loop is not None,
            max_turns=compat.taskset_turn_limit(self.taskset),
        )
        return self

    def _load_tasks(self, limit: int | None, classify_load_error) -> None:
        try:
            it: Iterable = iter(self.taskset)
            self._tasks = list(itertools.islice(it, limit) if limit else it)
        except Exception as err:  # noqa: BLE001
            raise classify_load_error(err, f"{type(self.taskset).__name__}.load") from err
        for task in self._tasks:
            compat.wrap_task_hooks(task, lambda fn: instrument(fn, self.calls, "trace", False))

    # rows

    def num_rows(self) -> int:
        return len(self._tasks)

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        stop = len(self._tasks) if n is None or n < 0 else min(len(self._tasks), start + n)
        out = []
        for i in range(max(0, start), stop):
            data = self._tasks[i].data
            prompt = self._prompt_messages(data)
            try:  # plain values for the probes' answer-kind detection; a data class that cannot dump gives none
                fields = data.model_dump()
            except Exception:  # noqa: BLE001
                fields = {}
            out.append(Row(i, prompt, getattr(data, "answer", None), last_user_text(prompt), fields))
        return out

    @staticmethod
    def _prompt_messages(data: Any) -> list[dict]:
        msgs: list[dict] = []
        if data.system_prompt:
            msgs.append({"role": "system", "content": data.system_prompt})
        if isinstance(data.prompt, str):
            msgs.append({"role": "user", "content": data.prompt})
        elif data.prompt:
            msgs.extend(message_dict(m) for m in data.prompt)
        return msgs

    def format_hints(self) -> FormatHints:
        system = None
        if self._tasks:
            system = self._tasks[0].data.system_prompt
        return FormatHints(parser=None, system_prompt=system)

    # scoring

    def task(self, row: Row) -> Any:
        """The vf.Task behind a row."""
        return self._tasks[row.index]

    def trace(self, row: Row, completion: Any) -> Any:
        """A v1 Trace holding the row's prompt and ``completion`` as sampled assistant turns."""
        task = self.task(row)
        cached = self._trace_parts.get(id(task))
        if cached is None:  # the task's hash/key and prompt validation cost more than the scoring
            cached = (compat.trace_parts(task, _AGENT), compat.v1_messages(row.prompt))
            self._trace_parts[id(task)] = cached
        parts, prompt = cached
        self._trace_count += 1  # a counter id: uuid4 per trace costs more than scoring here
        completion_msgs = compat.v1_messages(completion_messages(completion))
        return compat.new_trace(f"{_AGENT}-{self._trace_count}", task, parts, prompt, completion_msgs)

    async def _score_trace(self, row: Row, trace: Any) -> Score:
        self.calls.open(trace)
        scoring_error = None
        try:
            await self.task(row).score(trace)  # each reward call carries its own timeout (see instrument)
        except Exception as err:  # noqa: BLE001 - TaskError wraps the reward's own exception
            cause = err.__cause__ or err
            scoring_error = describe_error(cause if isinstance(cause, BaseException) else err)
        finally:
            rec = self.calls.close(trace)
        per = compat.trace_rewards(trace)
        for f in self.reward_functions:
            per.setdefault(f.name, None)
        total = compat.trace_total(trace) if scoring_error is None else None
        return score_from(rec, per, total, scoring_error, compat.trace_metrics(trace))

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        # Sequential within a row (no task per trace); rows run concurrently in score().
        return [await self._score_trace(row, self.trace(row, c)) for c in completions]

    async def validate_rows(self, indices: list[int], timeout: float = 10.0) -> list[dict] | None:
        """Each task's own ``validate()`` (what vf-validate runs), when its class defines one, called as
        ``vf-validate --runtime.type subprocess`` calls it: in a fresh local runtime after the task's
        ``setup`` (``compat.validate_in_runtime``). A task that needs a container is reported as an error
        (not checked here), never as a rejection."""
        import verifiers.v1 as vf

        base = getattr(vf.Task, "validate", None)
        if not self._tasks or base is None or getattr(type(self._tasks[0]), "validate", base) is base:
            return None
        out = []
        for i in indices:
            try:
                valid = await compat.validate_in_runtime(self._tasks[i], timeout)
                out.append({"index": i, "valid": None if valid is None else bool(valid), "error": None})
            except Exception as err:  # noqa: BLE001 - the user's check, reported
                out.append({"index": i, "valid": None, "error": f"{type(err).__name__}: {err}"[:300]})
        return out

    # rollouts

    async def rollout_group(
        self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        """One model turn per rollout, or the multi-turn tool loop (``v1_loop``) of a task with
        tools or stop conditions."""
        self.calls.timeout = timeout
        if self._loop is not None:
            results = []
            for j in range(n):
                run = v1_loop.run(self, self._loop, row, generate, dict(sampling_args or {}))
                out = await asyncio.create_task(as_rollout((row.index, j), run))
                score = await self._score_trace(row, self.trace(row, out["completion"]))
                results.append(
                    RolloutResult(
                        out["completion"],
                        list(row.prompt),
                        score,
                        out["turns"],
                        out["stop_condition"],
                        None,
                        truncated=out["stop_condition"] == "vlab_turn_cap",
                        tool_errors=out["tool_errors"],
                    )
                )
            return results
        replies = [
            await asyncio.create_task(
                as_rollout(
                    (row.index, j),
                    call_generate(generate, [dict(m) for m in row.prompt], dict(sampling_args or {}), None),
                )
            )
            for j in range(n)
        ]
        results = []
        for reply in replies:
            completion = [{"role": "assistant", "content": reply.text or ""}]
            score = await self._score_trace(row, self.trace(row, completion))
            turns = [
                {
                    "prompt_ids": reply.prompt_token_ids,
                    "completion_ids": reply.completion_token_ids,
                    "completion_logprobs": reply.completion_logprobs,
                }
            ]
            results.append(RolloutResult(completion, list(row.prompt), score, turns, "single_turn", None))
        return results


def _bad_env_args(spec: str, config_type: Any, env_args: dict, err: Exception) -> UsageError:
    """--env-args the taskset's config refuses, said in its words: a key that lives deeper in the config (the
    turn limit at task.max_turns) is named with where it goes, as JSON the user can paste."""
    name = getattr(config_type, "__name__", "the taskset config")
    problems = err.errors() if hasattr(err, "errors") else []
    for problem in problems:
        loc = [str(part) for part in problem.get("loc", ())]
        if problem.get("type") != "extra_forbidden" or len(loc) != 1:
            continue
        places = _field_paths(config_type, loc[0])
        if places:
            path = places[0].split(".")
            example = json.dumps({path[0]: _nest(path[1:], env_args.get(loc[0]))})
            return UsageError(
                f"{spec}: {name} has no {loc[0]!r} at its top; it is {' or '.join(places)}",
                hint=f"pass it there: --env-args '{example}' (other keys stay at the top)",
            )
        fields = sorted(getattr(config_type, "model_fields", {}))
        return UsageError(
            f"{spec}: {name} has no field {loc[0]!r}",
            hint=f"its fields: {', '.join(fields)}" if fields else "check the taskset config's fields",
        )
    lines = str(err).splitlines()
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or name
        return UsageError(
            f"{spec}: bad --env-args for {name}: {where}: {first.get('msg', lines[0] if lines else err)}",
            hint=f"got {first.get('input')!r}" if "input" in first else "check the taskset config's fields",
        )
    return UsageError(
        f"{spec}: bad --env-args for {name}: {lines[0] if lines else err}",
        hint=" ".join(lines[1:4]) or "check the taskset config's fields",
    )


def _nest(path: list[str], value: Any) -> Any:
    return {path[0]: _nest(path[1:], value)} if path else value


def _field_paths(model: Any, name: str, prefix: str = "", depth: int = 0) -> list[str]:
    """Where a field of this name lives in a pydantic config and its nested configs (task.max_turns)."""
    found = []
    for field_name, field in (getattr(model, "model_fields", None) or {}).items():
        sub = field.annotation
        if depth and field_name == name:
            found.append(f"{prefix}{field_name}")
        if isinstance(sub, type) and hasattr(sub, "model_fields") and depth < 3:
            found += _field_paths(sub, name, f"{prefix}{field_name}.", depth + 1)
    return found
