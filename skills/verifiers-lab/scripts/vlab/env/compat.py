"""Every use of a private or undocumented verifiers API, in one place.

verifiers' public surface (``import verifiers as vf`` / ``import verifiers.v1 as vf``: the
environment and taskset classes, ``Rubric(funcs, weights, parser)``, ``score_rollout`` /
``score_group``, ``Task.score``, parsers, ``vf.taskset_config_type``) is used directly by
``classic.py`` and ``v1.py``. Anything else (underscore names, submodules such as
``verifiers.types`` or ``verifiers.v1.utils.loaders``, the layout of a rollout ``State``,
a client's subclass protocol, how a ``Trace`` is assembled) is reached only through the
functions here. Each function names the private APIs it touches in ``PRIVATE_APIS``, and
``tests/test_env_compat.py`` exercises each one against the installed verifiers, so a
verifiers release that changes one fails there, by name, before it fails a user.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from vlab.env.messages import message_dict
from vlab.env.types import Reply

CLASSIC = "classic"
V1 = "v1"

# private API -> the verifiers generation it belongs to; every entry has a test in
# tests/test_env_compat.py.
PRIVATE_APIS: dict[str, str] = {}


def _uses(generation: str, *apis: str):
    for api in apis:
        PRIVATE_APIS[api] = generation
    return lambda fn: fn


# -- classic (verifiers <= 0.3.x) -------------------------------------------------------------


@_uses(CLASSIC, "Rubric._get_reward_funcs", "Rubric._get_reward_weights", "Rubric._is_group_func")
def reward_functions(rubric: Any) -> list[tuple[Callable, float, bool]]:
    """(function, weight, is_group) for every reward function of a rubric (RubricGroups flattened)."""
    return [
        (f, float(w), bool(rubric._is_group_func(f)))
        for f, w in zip(rubric._get_reward_funcs(), rubric._get_reward_weights())
    ]


@_uses(CLASSIC, "Rubric.funcs", "RubricGroup.rubrics", "Rubric._is_group_func")
def replace_reward_functions(rubric: Any, wrap: Callable[[Callable, bool], Callable]) -> None:
    """Replace each reward function ``f`` of a rubric and its sub-rubrics by ``wrap(f, is_group)``."""
    for sub in getattr(rubric, "rubrics", None) or []:
        replace_reward_functions(sub, wrap)
    for i, func in enumerate(rubric.funcs):
        rubric.funcs[i] = wrap(func, bool(rubric._is_group_func(func)))


@_uses(CLASSIC, "Rubric.has_group_rewards")
def has_group_rewards(rubric: Any) -> bool:
    return bool(rubric.has_group_rewards)


@_uses(CLASSIC, "Environment.dataset_source")
def dataset(env: Any) -> Any:
    """The dataset a trainer samples from: the training set, else the eval set."""
    if env.dataset is not None or env.dataset_source is not None:
        return env.get_dataset()
    return env.get_eval_dataset()


@_uses(CLASSIC, "Environment.env_id", "Environment.env_args")
def set_identity(env: Any, spec: str, env_args: dict) -> None:
    """Record the id and args the environment was loaded with (as vf.load_environment does)."""
    env.env_id = getattr(env, "env_id", None) or spec
    env.env_args = getattr(env, "env_args", None) or env_args


@_uses(CLASSIC, "Environment.tool_defs")
def has_tools(env: Any) -> bool:
    return bool(getattr(env, "tool_defs", None))


@_uses(CLASSIC, "MultiTurnEnv.max_turns")
def turn_limit(env: Any) -> int | None:
    """A classic multi-turn environment's turn limit (``max_turns``, set by ``MultiTurnEnv(max_turns=...)``
    and checked by its ``max_turns_reached`` stop); None for no limit (-1, 0) or a single-turn env."""
    import verifiers as vf

    value = getattr(env, "max_turns", None)
    if isinstance(env, vf.SingleTurnEnv) or not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    return value


@_uses(CLASSIC, "Environment.init_state")
async def init_state(env: Any, row: dict, client: Any, model: str) -> Any:
    """A fresh rollout state for a dataset row (verifiers deep-copies the row)."""
    return await env.init_state(row, client, model, {})


@_uses(CLASSIC, "verifiers.utils.message_utils.normalize_messages")
def set_completion(state: Any, messages: list[dict]) -> None:
    from verifiers.utils.message_utils import normalize_messages

    state["completion"] = normalize_messages(messages, field_name="completion")


@_uses(CLASSIC, "Environment.rollout")
async def rollout(env: Any, row: dict, client: Any, model: str, sampling_args: dict) -> Any:
    """Run the environment's own rollout loop for one dataset row; returns the final state."""
    return await env.rollout(row, client, model, sampling_args)


@dataclass
class StateView:
    """What a finished classic rollout state holds, as plain data."""

    completion: list[dict]
    prompt: list[dict]
    turns: list[dict]  # per model turn: prompt_ids, completion_ids, completion_logprobs (or None)
    stop_condition: str | None
    error: str | None
    truncated: bool


@_uses(CLASSIC, "State['reward'] / State['metrics']")
def state_scores(state: Any) -> tuple[Any, dict]:
    """(total reward, {function name: value}) written into a state by the rubric."""
    return state.get("reward"), dict(state.get("metrics") or {})


@_uses(CLASSIC, "State['trajectory'][i]['tokens']", "State rollout fields")
def state_view(state: Any) -> StateView:
    turns = []
    for step in state.get("trajectory") or []:
        tokens = step.get("tokens")
        turns.append(
            {
                "prompt_ids": list(tokens["prompt_ids"]) if tokens else None,
                "completion_ids": list(tokens["completion_ids"]) if tokens else None,
                "completion_logprobs": list(tokens["completion_logprobs"]) if tokens else None,
            }
        )
    err = state.get("error")
    return StateView(
        completion=[message_dict(m) for m in state.get("completion") or []],
        prompt=[message_dict(m) for m in state.get("prompt") or []],
        turns=turns,
        stop_condition=state.get("stop_condition"),
        error=f"{type(err).__name__}: {err}" if err is not None else None,
        truncated=bool(state.get("is_truncated")),
    )


@_uses(CLASSIC, "vf.State(input=...)", "verifiers.types.RolloutTiming")
def scoring_state(row: dict, completion: list[dict]) -> Any:
    """The lowest offline scoring path (no environment, no client): a bare state holding a
    dataset row and a completion (message dicts) that ``rubric.score_rollout`` accepts."""
    import verifiers as vf
    from verifiers.types import RolloutTiming

    state = vf.State(input=dict(row))
    set_completion(state, completion)
    state["trajectory"] = []
    state["timing"] = RolloutTiming()
    return state


Respond = Callable[[list[dict], dict, "list[dict] | None"], Awaitable[Reply]]


@_uses(
    CLASSIC,
    "verifiers.clients.Client (subclass protocol)",
    "verifiers.types.Response/ResponseMessage/ResponseTokens/ToolCall",
)
def scripted_client(respond: Respond | None) -> Any:
    """A client whose 'model' is a Python callable (no network).

    ``respond(messages, sampling_args, tools) -> Reply`` gets plain message and tool dicts;
    None makes a client that only scores (asking it for a reply raises).
    """
    from verifiers.clients import Client
    from verifiers.types import Response, ResponseMessage, ResponseTokens, ToolCall

    class ScriptedClient(Client):
        def setup_client(self, config):
            return None

        async def to_native_tool(self, tool):
            return message_dict(tool)

        async def to_native_prompt(self, messages):
            return [message_dict(m) for m in messages], {}

        async def get_native_response(self, prompt, model, sampling_args, tools=None, **kwargs):
            if respond is None:
                raise RuntimeError("this client only scores; it has no generate() callable")
            return await respond(prompt, dict(sampling_args or {}), tools)

        async def raise_from_native_response(self, response):
            return None

        async def from_native_response(self, reply: Reply):
            tokens = None
            if reply.completion_token_ids is not None:
                prompt_ids = list(reply.prompt_token_ids or [])
                completion_ids = list(reply.completion_token_ids)
                tokens = ResponseTokens(
                    prompt_ids=prompt_ids,
                    prompt_mask=[0] * len(prompt_ids),
                    completion_ids=completion_ids,
                    completion_mask=[1] * len(completion_ids),
                    completion_logprobs=list(reply.completion_logprobs or [0.0] * len(completion_ids)),
                )
            tool_calls = [
                ToolCall(
                    id=str(c.get("id") or f"call_{i}"),
                    name=c["name"],
                    arguments=c["arguments"]
                    if isinstance(c.get("arguments"), str)
                    else json.dumps(c.get("arguments") or {}),
                )
                for i, c in enumerate(reply.tool_calls or [])
            ] or None
            return Response(
                id="scripted",
                created=int(time.time()),
                model="test_reward",
                message=ResponseMessage(
                    content=reply.text,
                    tool_calls=tool_calls,
                    finish_reason="tool_calls" if tool_calls else reply.finish_reason,
                    is_truncated=reply.finish_reason == "length",
                    tokens=tokens,
                ),
            )

        async def close(self):
            return None

    return ScriptedClient(None)


@_uses(CLASSIC, "ToolEnv.tool_map")
def wrap_tools(env: Any, wrap: Callable[[str, Callable], Callable]) -> None:
    """Make a classic ToolEnv call ``wrap(name, f)`` instead of each tool ``f`` (no-op without tools)."""
    tool_map = getattr(env, "tool_map", None)
    if isinstance(tool_map, dict):
        for name, fn in list(tool_map.items()):
            tool_map[name] = wrap(name, fn)


# -- v1 tasksets (verifiers.v1) ------------------------------------------------------------


@_uses(V1, "verifiers.v1.utils.loaders._plugin_class", "verifiers.v1.utils.loaders.Taskset")
def taskset_class(module: Any) -> type:
    """The one vf.Taskset subclass a module exports in ``__all__`` (TypeError/ValueError if not)."""
    from verifiers.v1.utils import loaders

    return loaders._plugin_class(module, loaders.Taskset, "taskset")


@_uses(V1, "Taskset.bounded / Taskset.INFINITE")
def taskset_bounded(taskset: Any) -> bool:
    """Whether iterating the taskset ends (0.3.1 has no ``.bounded``, only ``INFINITE``)."""
    return bool(getattr(taskset, "bounded", not getattr(taskset, "INFINITE", False)))


@_uses(V1, "Taskset.config.task")
def taskset_turn_limit(taskset: Any) -> int | None:
    """A v1 taskset's turn limit as its task config declares it (``task.max_turns``, the field the pack's
    tool template and its ``@vf.stop`` read); None when the task config has none. A run's own limit,
    the agent's ``max_turns`` (``[env.agent]``, verifiers.v1 ``AgentConfig``), is not the taskset's."""
    task = getattr(getattr(taskset, "config", None), "task", None)
    value = getattr(task, "max_turns", None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@_uses(V1, "Task.hooks")
def wrap_task_hooks(task: Any, wrap: Callable[[Callable], Callable]) -> None:
    """Make ``task.score`` call ``wrap(f)`` instead of each reward and metric function ``f``."""
    original = task.hooks
    cache: dict[str, list] = {}

    def hooks(attr: str):
        if attr not in ("reward", "metric"):
            return original(attr)
        if attr not in cache:  # wrapping costs a signature inspection: once per task
            cache[attr] = [wrap(fn) for fn in original(attr)]
        return cache[attr]

    task.hooks = hooks  # instance attribute: Task.score() reads self.hooks(...)


@_uses(V1, "Task.hooks")
def plain_task(task: Any) -> Any:
    """A shallow copy of a task whose hooks are its class's own (no ``wrap_task_hooks``)."""
    clone = copy.copy(task)
    clone.__dict__.pop("hooks", None)
    return clone


@_uses(V1, "Task.hooks", "@vf.reward weight (_vf_weight)")
def task_rewards(task: Any) -> list[tuple[str, float]]:
    """(name, weight) of each ``@vf.reward`` function of a task, in scoring order."""
    return [(h.__name__, float(getattr(h, "_vf_weight", 1.0))) for h in task.hooks("reward")]


@functools.lru_cache(maxsize=1)
def _message_adapter():
    """Validates plain message dicts into v1 message models (building one costs milliseconds)."""
    from pydantic import TypeAdapter
    from verifiers.v1 import types as v1types

    return TypeAdapter(v1types.Message)


@_uses(V1, "verifiers.v1.types.Message")
def v1_messages(messages: list[dict]) -> list[Any]:
    adapter = _message_adapter()
    return [adapter.validate_python(m) for m in messages]


@_uses(V1, "TraceTask(type, data, key, hash)", "verifiers.v1.state.state_cls", "AgentInfo(config, name, trainable)")
def trace_parts(task: Any, agent_name: str) -> tuple[Any, Any]:
    """The task and agent records a trace of ``task`` carries (compute once per task: hashing costs)."""
    import verifiers.v1 as vf

    return (
        vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        vf.AgentInfo(config=vf.AgentConfig(), name=agent_name, trainable=False),
    )


class NeedsContainer(Exception):
    """The task names an image or NEEDS_CONTAINER: vf-validate refuses the local runtime for it too."""


@_uses(
    V1,
    "verifiers.v1.runtimes.make_runtime",
    "verifiers.v1.utils.compile.resolve_runtime_config",
    "verifiers.v1.utils.decorators.invoke",
)
async def validate_in_runtime(task: Any, timeout: float) -> bool | None:
    """``task.validate(runtime)`` as ``vf-validate --runtime.type subprocess`` runs it (verifiers 0.4.0
    ``cli/validate.py`` ``_run_check``, the gold check): a fresh local runtime with the task's runtime
    environment, a trace, ``task.setup``, then ``validate``; the runtime stopped whatever happens."""
    import uuid

    import verifiers.v1 as vf
    from verifiers.v1.runtimes import make_runtime
    from verifiers.v1.utils.compile import resolve_runtime_config
    from verifiers.v1.utils.decorators import invoke

    if getattr(type(task), "NEEDS_CONTAINER", False) or getattr(task.data, "image", None):
        raise NeedsContainer("needs a container runtime (vf-validate --runtime.type docker or prime); not run here")
    config = vf.SubprocessConfig()
    runtime = make_runtime(resolve_runtime_config(config, task), name=f"vlab-validate-{uuid.uuid4().hex[:12]}")
    try:
        runtime.env = dict(task.runtime_env())
        trace_task, _ = trace_parts(task, "validate")
        agent = vf.AgentInfo(config=vf.AgentConfig(runtime=config), name="validate", trainable=False)
        trace = new_trace("validate", task, (trace_task, agent), [], [])
        await runtime.start()
        await asyncio.wait_for(invoke(task.setup, {"trace": trace, "runtime": runtime}), timeout)
        return await asyncio.wait_for(task.validate(runtime), timeout)
    finally:
        await runtime.stop()


@_uses(V1, "Trace(id, task, state, agent)", "verifiers.v1.state.state_cls", "MessageNode(parent, message, sampled)")
def new_trace(trace_id: str, task: Any, parts: tuple[Any, Any], prompt: list[Any], completion: list[Any]) -> Any:
    """A trace holding ``prompt`` then ``completion`` (v1 message models); assistant turns of
    the completion are marked as sampled, as a rollout would record them."""
    import verifiers.v1 as vf
    from verifiers.v1.state import state_cls

    trace_task, agent = parts
    trace = vf.Trace(id=trace_id, task=trace_task, state=state_cls(type(task))(), agent=agent)
    for i, msg in enumerate(prompt + completion):
        sampled = i >= len(prompt) and msg.role == "assistant"
        trace.nodes.append(vf.MessageNode(parent=i - 1 if i else None, message=msg, sampled=sampled))
    return trace


@_uses(V1, "Trace.rewards")
def trace_rewards(trace: Any) -> dict[str, float | None]:
    """{reward name: score} written into a trace by ``task.score``."""
    return {name: (r.score if r is not None else None) for name, r in trace.rewards.items()}


@_uses(V1, "Trace.metrics")
def trace_metrics(trace: Any) -> dict[str, float]:
    """{metric name: value} written into a trace by ``task.score`` (``@vf.metric`` methods; numbers only)."""
    return {
        name: float(value)
        for name, value in (trace.metrics or {}).items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


@_uses(V1, "Trace.reward")
def trace_total(trace: Any) -> float:
    """The weighted total of a scored trace (a computed property, not stored)."""
    return trace.reward


def scoring_trace(task: Any, prompt: list[dict], completion: list[dict], trace_id: str = "vlab") -> Any:
    """A trace ready for ``task.score``: plain message dicts in (tests and benchmarks use it)."""
    return new_trace(trace_id, task, trace_parts(task, "vlab"), v1_messages(prompt), v1_messages(completion))


@_uses(V1, "Task.hooks")
def task_stops(task: Any) -> list[Callable]:
    """The task's ``@vf.stop`` functions (plugged ones included), in the order verifiers checks them."""
    return list(task.hooks("stop"))


@_uses(V1, "Task.toolsets(config) / Toolset.register(MCPServer) / Toolset.server_name")
def task_tool_servers(task: Any) -> list[tuple[str, Any]]:
    """(advertised prefix, in-process MCP server) for each toolset the task launches per rollout.

    verifiers runs each toolset as its own MCP server process and advertises its tools as
    ``<server_name>_<tool>`` (bare when the prefix is empty); here the same registration runs
    in-process, so tool calls execute the toolset's own functions with MCP's argument checks.
    """
    toolsets = type(task).toolsets(task.config)
    if not toolsets:
        return []
    try:  # mcp 2.x (verifiers 0.4)
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # mcp 1.x (verifiers 0.3.1's v1): the same registration on FastMCP
        from mcp.server.fastmcp import FastMCP as MCPServer

    servers = []
    for toolset in toolsets:
        server = MCPServer(toolset.server_name or type(toolset).__name__)
        toolset.register(server)
        servers.append((toolset.server_name, server))
    return servers


@_uses(V1, "MCPServer.list_tools (Tool.name/description/input_schema or inputSchema)")
async def tool_definitions(servers: list[tuple[str, Any]]) -> tuple[list[dict], dict[str, tuple[Any, str]]]:
    """The tool definitions a model is offered ({name, description, parameters}) and the dispatch
    map advertised name -> (server, tool name), as verifiers' chat harness builds them."""
    defs, dispatch = [], {}
    for prefix, server in servers:
        for tool in await server.list_tools():
            full = f"{prefix}_{tool.name}" if prefix else tool.name
            schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {}
            defs.append({"name": full, "description": tool.description or "", "parameters": schema})
            dispatch[full] = (server, tool.name)
    return defs, dispatch


@_uses(V1, "MCPServer.call_tool -> CallToolResult.content (mcp 1.x: content blocks or (blocks, structured))")
async def call_tool(server: Any, name: str, arguments: dict) -> str:
    """Run one tool call in-process; its text content as the model would read it. Exceptions
    propagate (the MCP server wraps them as ``Error executing tool ...``)."""
    result = await server.call_tool(name, arguments)
    if isinstance(result, tuple):  # mcp 1.x: (content blocks, structured output)
        result = result[0]
    blocks = result.content if hasattr(result, "content") else result
    parts = []
    for block in blocks or []:
        parts.append(getattr(block, "text", None) or str(block))
    return "\n".join(parts)
