"""Multi-turn budget: does ``seq_len`` hold the turns an environment's rollouts may take?

A tool or multi-turn rollout is trained as one sequence: the prompt, then every model turn and
every tool output in between. Its turn limit is an environment argument (classic
``load_environment(max_turns=...)``, v1 ``task.max_turns`` or ``max_turns``), carried to
prime-rl with the rest of the environment's arguments; this module reads it from there and
warns when ``seq_len`` cannot hold that many turns of ``max_completion_tokens`` each.
"""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result
from vlab.train.memory import DEFAULT_PROMPT_TOKENS

TOOL_OUTPUT_TOKENS = 64  # a short tool reply between two model turns (a calculator's number, an error line)


def max_turns(args: dict[str, Any]) -> int | None:
    """The turn limit named in an environment's arguments (``max_turns`` or ``task.max_turns``), or None."""
    for value in (
        args.get("max_turns"),
        (args.get("task") or {}).get("max_turns") if isinstance(args.get("task"), dict) else None,
    ):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def tokens_needed(turns: int, completion_tokens: int) -> int:
    """The longest rollout: the prompt, ``turns`` completions, and a tool reply between each two."""
    return DEFAULT_PROMPT_TOKENS + turns * completion_tokens + max(0, turns - 1) * TOOL_OUTPUT_TOKENS


def check_turn_budget(args: dict[str, Any], completion_tokens: int, seq_len: int, result: Result) -> None:
    """Warn when a rollout that uses every turn cannot fit in ``seq_len``; say so when it fits."""
    turns = max_turns(args)
    if turns is None or turns <= 1:
        return
    need = tokens_needed(turns, completion_tokens)
    if need > seq_len:
        fit = max(1, (seq_len - DEFAULT_PROMPT_TOKENS + TOOL_OUTPUT_TOKENS) // (completion_tokens + TOOL_OUTPUT_TOKENS))
        result.warn(
            "turn_budget",
            f"seq_len {seq_len} cannot hold max_turns={turns} turns of up to {completion_tokens} tokens "
            f"(about {need} tokens with the prompt and tool replies; about {fit} turn(s) fit): "
            "long rollouts are cut before their final answer",
            f"raise model.seq_len to {need} or more, or lower max_turns / sampling.max_tokens",
        )
    else:
        result.passed("turn_budget", f"seq_len {seq_len} holds max_turns={turns} turns (about {need} tokens)")
