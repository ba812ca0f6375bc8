"""The multi-turn rollout of a v1 task, run in-process: its tools, its stop conditions, its reward.

verifiers 0.4 rolls a v1 task out through a harness program (a PEP 723 script that ``uv``
installs, so not offline) talking to an interception server, with each ``vf.Toolset``
launched as its own MCP server process. This loop keeps the parts that decide what a
rollout is worth and drops the transport: before each model turn the task's ``@vf.stop``
functions run on the trace (as the interception server checks them), the model turn comes
from ``generate`` with the toolsets' tool definitions, each tool call runs the toolset's
own function through an in-process MCP server (argument validation included), and a reply
without tool calls ends the rollout, as the chat harness does. The trace is then scored by
``task.score``.

A tool that raises is answered as verifiers answers it (``Error executing tool ...``) and
recorded in ``RolloutResult.tool_errors``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from vlab.env import compat
from vlab.env.messages import call_generate
from vlab.env.types import Generate, Reply

SAFETY_TURNS = 200  # a rollout whose task never stops ends here ("vlab_turn_cap")


class ToolLoop:
    """Tools and stop conditions of one v1 task class, reused by every rollout of its tasks."""

    def __init__(self, task: Any) -> None:
        self.servers = compat.task_tool_servers(task)
        self.defs: list[dict] | None = None
        self.dispatch: dict[str, tuple[Any, str]] = {}

    async def definitions(self) -> list[dict]:
        if self.defs is None:
            self.defs, self.dispatch = await compat.tool_definitions(self.servers)
        return self.defs

    async def call(self, name: str, raw_arguments: Any, errors: list[str]) -> str:
        """The tool message's text for one call, as verifiers' chat harness words failures."""
        try:
            arguments = json.loads(raw_arguments or "{}") if isinstance(raw_arguments, str) else raw_arguments
        except json.JSONDecodeError as err:
            return f"error: invalid JSON in tool arguments ({err}); resend the call with valid JSON"
        if not isinstance(arguments, dict):
            return f"error: tool arguments must be a JSON object, got {type(arguments).__name__}; resend as an object"
        if name not in self.dispatch:
            return f"error: unknown tool {name!r}"
        server, tool = self.dispatch[name]
        try:
            return await compat.call_tool(server, tool, arguments)
        except Exception as err:  # noqa: BLE001 - the model reads the error, the rollout goes on
            cause = err.__cause__ or err
            if not _argument_error(cause):
                errors.append(f"{name}({_short(arguments)}) raised {type(cause).__name__}: {cause}")
            return str(err) if str(err).startswith("Error executing tool") else f"Error executing tool {name}: {err}"


def _argument_error(err: BaseException) -> bool:
    """Missing or ill-typed arguments, rejected by the MCP server before the tool's own code runs."""
    return type(err).__name__ == "ValidationError"


def _short(arguments: dict) -> str:
    text = json.dumps(arguments)
    return text if len(text) <= 80 else text[:77] + "..."


async def stopped(task: Any, trace: Any) -> str | None:
    """The name of the first ``@vf.stop`` that fires on the trace, or None."""
    for fn in compat.task_stops(task):
        out = fn(trace)
        if inspect.isawaitable(out):
            out = await out
        if out:
            return fn.__name__
    return None


def assistant_message(reply: Reply) -> dict:
    msg: dict = {"role": "assistant", "content": reply.text or ""}
    if reply.tool_calls:
        msg["tool_calls"] = [
            {
                "id": str(c.get("id") or f"call_{i}"),
                "name": c["name"],
                "arguments": c["arguments"] if isinstance(c.get("arguments"), str) else json.dumps(c.get("arguments")),
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    return msg


async def run(env: Any, loop: ToolLoop, row: Any, generate: Generate, sampling_args: dict) -> dict:
    """One rollout: {completion, turns, stop_condition, tool_errors, trace}."""
    task = env.task(row)
    defs = await loop.definitions()
    completion: list[dict] = []
    turns: list[dict] = []
    errors: list[str] = []
    stop = None
    while True:
        trace = env.trace(row, completion)
        stop = await stopped(task, trace)
        if stop is not None:
            break
        if len(turns) >= SAFETY_TURNS:
            stop = "vlab_turn_cap"
            break
        messages = [dict(m) for m in row.prompt] + [dict(m) for m in completion]
        reply = await call_generate(generate, messages, dict(sampling_args), defs or None)
        turns.append(
            {
                "prompt_ids": reply.prompt_token_ids,
                "completion_ids": reply.completion_token_ids,
                "completion_logprobs": reply.completion_logprobs,
            }
        )
        msg = assistant_message(reply)
        completion.append(msg)
        if not msg.get("tool_calls"):
            stop = "length" if reply.finish_reason == "length" else "no_tool_calls"
            break
        for call in msg["tool_calls"]:
            text = await loop.call(call["name"], call["arguments"], errors)
            completion.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    return {"completion": completion, "turns": turns, "stop_condition": stop, "tool_errors": errors}
