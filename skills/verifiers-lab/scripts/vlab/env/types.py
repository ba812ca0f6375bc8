"""Plain data the environment interface takes and returns (no verifiers objects).

Everything here can be copied, compared and sent between processes: rows, replies,
scores, rollout results, format hints and the environment's capabilities.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Capabilities:
    """What an environment can do; callers decide on these, never on the generation."""

    generation: str  # label for reports: "classic" (verifiers <= 0.3.x) or "v1" (tasksets)
    multi_turn: bool = False  # a rollout may take several model turns (env responses, tools)
    group_rewards: bool = False  # some reward function scores a whole group of rollouts at once
    tools: bool = False  # the model is offered tool definitions
    # Rollouts go through the environment's own loop (state setup, stop conditions, turn
    # metrics) even for a single turn; otherwise a rollout is one model reply then scoring.
    rollout_loop: bool = False
    # The framework itself swallows an exception inside a reward function and scores 0.0
    # (the classic Rubric); otherwise the whole scoring fails.
    silent_reward_errors: bool = False
    # The environment's own turn limit (model turns per rollout): classic ``MultiTurnEnv.max_turns``, a v1
    # taskset's ``task.max_turns``; None when it declares none (or is single-turn).
    max_turns: int | None = None


@dataclass
class Reply:
    """One model turn returned by a ``generate`` callable."""

    text: str | None = ""
    tool_calls: list[dict] | None = None  # [{"id", "name", "arguments": JSON string}]
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    completion_logprobs: list[float] | None = None
    finish_reason: str = "stop"  # "stop" | "length" | "tool_calls"


Generate = Callable[..., "Reply | str | Awaitable[Reply | str]"]

# Which rollout a ``generate`` call belongs to: (row index, rollout number in its group), set by the
# environment's ``rollout_group`` around each rollout (``messages.as_rollout``) and carried to the
# trainer's process with the call. The trainer derives each rollout's sampling seed from it, so a
# rollout's sample does not depend on which calls happened to share its sampler batch.
ROLLOUT_KEY: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("vlab_rollout_key", default=None)


@dataclass
class Row:
    index: int  # position in the dataset the trainer samples from (the example_id)
    prompt: list[dict]  # chat messages as the model sees them (system, few-shot, user)
    answer: Any  # the gold answer the reward compares against (None when the env has none)
    question: str  # the last user message's text
    # the row's data by name: a classic row's columns, a v1 task's data fields (plain values)
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class RewardFunction:
    name: str
    weight: float
    is_group: bool = False


@dataclass
class FunctionError:
    type: str
    message: str
    traceback: str  # last frames, enough to find the line


@dataclass
class Score:
    total: float | None  # weighted total as verifiers computes it (None: scoring itself failed)
    per_function: dict[str, float | None]
    errors: dict[str, FunctionError] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # per-function call time
    timed_out: list[str] = field(default_factory=list)
    # of timed_out, the functions stopped only because the machine starved them (``vlab.env.evidence``): the
    # others hung on the evidence of their own time
    starved: list[str] = field(default_factory=list)
    scoring_error: FunctionError | None = None  # the whole scoring call raised (v1 TaskError)
    metrics: dict[str, float] = field(default_factory=dict)  # v1 @vf.metric values (classic: in per_function)


@dataclass
class FormatHints:
    parser: str | None = None  # parser class name
    xml_fields: list[str] = field(default_factory=list)
    answer_field: str | None = None
    think: bool = False  # the parser expects <think>...</think> before the answer
    system_prompt: str | None = None
    # The parser's own rendering of its XML fields, each value a ``{field}`` placeholder
    # (None when the parser cannot render them).
    parser_template: str | None = None


@dataclass
class RolloutResult:
    completion: list[dict]  # the conversation after the prompt, plain dicts
    prompt: list[dict]
    score: Score
    turns: list[dict]  # per model turn: prompt_ids, completion_ids, completion_logprobs (or None)
    stop_condition: str | None
    error: str | None
    truncated: bool = False  # the environment marked the rollout truncated
    tool_errors: list[str] = field(default_factory=list)  # tool calls that raised (the model read an error)


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
