"""Classic environments (verifiers <= 0.3.x: ``load_environment(**kwargs) -> vf.Environment``).

Scoring goes through verifiers' own Rubric (``score_rollout`` / ``score_group`` on states
built by the environment's ``init_state``), so argument injection, parsers, group functions
and weights behave exactly as in training. Multi-turn and tool environments run through
their own rollout loop with an in-process client whose model is a ``generate`` callable;
text completions of such an environment are scored by driving that loop with a client that
answers with the text every turn, recorded conversations (message lists) as they are.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
from typing import Any

from vlab.core.result import ToolError
from vlab.env import compat
from vlab.env.base import Environment
from vlab.env.instrument import instrument, score_from
from vlab.env.messages import as_rollout, call_generate, completion_messages, last_user_text, message_dict, text_of
from vlab.env.types import (
    Capabilities,
    FormatHints,
    Generate,
    Reply,
    RewardFunction,
    RolloutResult,
    Row,
    Score,
)

GENERATION = "classic"
_MODEL = "test_reward"  # the model name the in-process client reports


class ClassicEnvironment(Environment):
    @classmethod
    def load(cls, module: Any, spec: str, env_args: dict, version: str, classify_load_error) -> ClassicEnvironment:
        """Build the environment from an imported module; ``classify_load_error`` maps a loading
        exception to the right ToolError (see ``locate``)."""
        self = cls()
        self.spec, self.env_args, self.verifiers_version = spec, env_args, version
        self.name = module.__name__
        if threading.current_thread() is not threading.main_thread():  # verifiers installs signal handlers
            raise ToolError("classic environments must be loaded from the main thread")
        try:
            params = inspect.signature(module.load_environment).parameters
            self.unnamed_args = [k for k in env_args if k not in params]  # only reach it through **kwargs
        except (TypeError, ValueError):
            self.unnamed_args = []
        try:
            env = module.load_environment(**env_args)
        except Exception as err:  # noqa: BLE001 - classified into a clear reason + exit code
            raise classify_load_error(err, f"{self.name}.load_environment") from err
        import verifiers as vf

        if not isinstance(env, vf.Environment):
            raise ToolError(f"{self.name}.load_environment returned {type(env).__name__}, not a vf.Environment")
        compat.set_identity(env, spec, env_args)
        self.env = env
        self.tool_errors: list[str] = []  # tool calls that raised (ToolEnv answers the model with the error)
        compat.wrap_tools(env, self._recording_tool)
        multi_turn = not isinstance(env, vf.SingleTurnEnv)
        compat.replace_reward_functions(
            env.rubric, lambda func, group: instrument(func, self.calls, "states" if group else "state", group)
        )
        self.reward_functions = [
            RewardFunction(getattr(f, "__name__", repr(f)), w, group)
            for f, w, group in compat.reward_functions(env.rubric)
        ]
        try:
            self._dataset = compat.dataset(env)
        except Exception as err:  # noqa: BLE001
            raise classify_load_error(err, f"{self.name} dataset") from err
        self._raw: dict[int, Any] = {}
        self.has_group = compat.has_group_rewards(env.rubric)
        self.capabilities = Capabilities(
            generation=GENERATION,
            multi_turn=multi_turn,
            group_rewards=self.has_group,
            tools=compat.has_tools(env),
            rollout_loop=True,
            silent_reward_errors=True,
            max_turns=compat.turn_limit(env) if multi_turn else None,
        )
        return self

    def _recording_tool(self, name: str, fn):
        """``fn`` that records an exception raised by its own code (not by a missing argument)."""
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None

        @functools.wraps(fn)
        async def tool(*args, **kwargs):
            try:
                out = fn(*args, **kwargs)
                return await out if inspect.isawaitable(out) else out
            except Exception as err:
                try:
                    if signature is not None:
                        signature.bind(*args, **kwargs)
                    self.tool_errors.append(f"{name}({_short(kwargs)}) raised {type(err).__name__}: {err}")
                except TypeError:  # missing or unknown arguments: the call never reached the tool's code
                    pass
                raise

        return tool

    # rows

    def num_rows(self) -> int:
        return len(self._dataset)

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        total = len(self._dataset)
        stop = total if n is None or n < 0 else min(total, start + n)
        out = []
        for i in range(max(0, start), stop):
            raw = self._dataset[i]
            self._raw[i] = raw
            prompt = raw.get("prompt")
            prompt_msgs = (
                [{"role": "user", "content": prompt}]
                if isinstance(prompt, str)
                else [message_dict(m) for m in prompt or []]
            )
            out.append(
                Row(
                    i,
                    prompt_msgs,
                    raw.get("answer"),
                    last_user_text(prompt_msgs) or str(raw.get("question", "")),
                    dict(raw),
                )
            )
        return out

    def _raw_row(self, row: Row) -> dict:
        """The dataset row behind a Row (verifiers deep-copies it into each state)."""
        raw = self._raw.get(row.index)
        if raw is None:
            raw = self._raw[row.index] = self._dataset[row.index]
        return raw

    def format_hints(self) -> FormatHints:
        import verifiers as vf

        parser = self.env.parser
        hints = FormatHints(parser=type(parser).__name__, system_prompt=self.env.system_prompt)
        if isinstance(parser, vf.XMLParser):
            hints.xml_fields = parser.get_fields()
            hints.answer_field = parser.answer_field
            hints.think = "think" in hints.xml_fields
            if hints.xml_fields and hasattr(parser, "format"):
                try:
                    hints.parser_template = parser.format(**{f: "{" + f + "}" for f in hints.xml_fields})
                except Exception:  # noqa: BLE001 - a parser that cannot render: probes use plain tags
                    hints.parser_template = None
        if isinstance(parser, vf.ThinkParser):
            hints.think = True
        if hints.system_prompt is None and self.num_rows():
            first = self.rows(1)[0].prompt
            hints.system_prompt = next((text_of(m.get("content")) for m in first if m.get("role") == "system"), None)
        return hints

    # scoring

    @staticmethod
    def _client(generate: Generate | None):
        if generate is None:
            return compat.scripted_client(None)

        async def respond(messages, sampling_args, tools) -> Reply:
            return await call_generate(generate, messages, sampling_args, tools)

        return compat.scripted_client(respond)

    async def _state(self, row: Row, completion: Any, client) -> Any:
        state = await compat.init_state(self.env, self._raw_row(row), client, _MODEL)
        compat.set_completion(state, completion_messages(completion))
        return state

    async def _score_states(self, states: list[Any]) -> list[Score]:
        for s in states:
            self.calls.open(s)
        try:
            if self.has_group:
                await self.env.rubric.score_group(states)
            elif len(states) == 1:
                await self.env.rubric.score_rollout(states[0])
            else:
                await asyncio.gather(*(self.env.rubric.score_rollout(s) for s in states))
        finally:
            records = [self.calls.close(s) for s in states]
        out = []
        for s, rec in zip(states, records):
            total, metrics = compat.state_scores(s)
            out.append(score_from(rec, {f.name: metrics.get(f.name) for f in self.reward_functions}, total))
        return out

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        """Score completions of one row as a group.

        Text completions of a multi-turn or tool environment go through the env's own
        rollout loop with a scripted client that replies with the text every turn; recorded
        conversations (message lists) are scored as they are.
        """
        client = self._client(None)
        states = []
        for c in completions:
            if self.capabilities.multi_turn and isinstance(c, str):
                scripted = self._client(lambda messages, sampling_args, _text=c: Reply(text=_text))
                states.append(await compat.rollout(self.env, self._raw_row(row), scripted, _MODEL, {}))
            else:
                states.append(await self._state(row, c, client))
        return await self._score_states(states)

    # rollouts

    async def rollout_group(
        self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None, timeout: float = 10.0
    ) -> list[RolloutResult]:
        self.calls.timeout = timeout
        client = self._client(generate)
        raw = self._raw_row(row)
        seen = len(self.tool_errors)
        states = await asyncio.gather(
            *(
                as_rollout((row.index, j), compat.rollout(self.env, raw, client, _MODEL, dict(sampling_args or {})))
                for j in range(n)
            )
        )
        scores = await self._score_states(list(states))
        results = []
        for state, score in zip(states, scores):
            view = compat.state_view(state)
            results.append(
                RolloutResult(
                    completion=view.completion,
                    prompt=view.prompt,
                    score=score,
                    turns=view.turns,
                    stop_condition=view.stop_condition,
                    error=view.error,
                    truncated=view.truncated,
                    tool_errors=self.tool_errors[seen:],
                )
            )
        return results


def _short(arguments: dict) -> str:
    text = json.dumps(arguments, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
