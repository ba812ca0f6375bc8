"""Multi-turn budget: does ``seq_len`` hold the turns an environment's rollouts may take?

A tool or multi-turn rollout is trained as one sequence: the prompt, then every model turn and
every tool output (or environment reply) in between. Its turn limit is an environment argument
(classic ``load_environment(max_turns=...)``, v1 ``task.max_turns`` or ``max_turns``), else the
environment's own default (``declared``: read by ``envargs.declared_turn_limit`` before loading, or
``Capabilities.max_turns`` of a loaded environment). The one home of this arithmetic:

- ``check_turn_budget`` (local_train and the prime-rl hand-off): assumed prompt and tool output
  sizes, warns when ``seq_len`` cannot hold the turn limit's worth of turns;
- ``check_token_budget`` (test_reward ``--seq-len``): sizes measured on the scripted conversations;
  fails when ``seq_len`` cannot hold even one tool call and an answer, warns when it cannot hold the
  turn limit's worth of turns.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def turn_limit(args: dict[str, Any], declared: int | None = None) -> tuple[int | None, str]:
    """(turn limit, where it came from): the arguments' ``max_turns`` wins, else the environment's own."""
    named = max_turns(args)
    if named is not None:
        return named, f"max_turns={named}"
    if declared is not None:
        return declared, f"max_turns={declared} (the environment's default)"
    return None, ""


def tokens_needed(
    turns: int,
    completion_tokens: int,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = TOOL_OUTPUT_TOKENS,
) -> int:
    """The longest rollout: the prompt, ``turns`` completions, and a tool reply between each two."""
    return prompt_tokens + turns * completion_tokens + max(0, turns - 1) * output_tokens


def turns_that_fit(
    seq_len: int,
    completion_tokens: int,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = TOOL_OUTPUT_TOKENS,
) -> int:
    """How many full turns (each but the first after a tool reply) fit in ``seq_len``; 0 when not one."""
    room = seq_len - prompt_tokens + output_tokens
    return max(0, room // (completion_tokens + output_tokens))


def check_turn_budget(
    args: dict[str, Any], completion_tokens: int, seq_len: int, result: Result, declared: int | None = None
) -> None:
    """Warn when a rollout that uses every turn cannot fit in ``seq_len``; say so when it fits."""
    turns, named = turn_limit(args, declared)
    if turns is None or turns <= 1:
        return
    need = tokens_needed(turns, completion_tokens)
    if need > seq_len:
        fit = max(1, turns_that_fit(seq_len, completion_tokens))
        result.warn(
            "turn_budget",
            f"seq_len {seq_len} cannot hold {named} turns of up to {completion_tokens} tokens "
            f"(about {need} tokens with the prompt and tool replies; about {fit} turn(s) fit): "
            "long rollouts are cut before their final answer",
            f"raise model.seq_len to {need} or more, or lower max_turns / sampling.max_tokens",
        )
    else:
        result.passed("turn_budget", f"seq_len {seq_len} holds {named} turns (about {need} tokens)")


@dataclass(frozen=True)
class Measured:
    """What a rollout held on test_reward's scripted conversations, in tokens (``counted_by`` says how)."""

    prompt_tokens: int  # the longest probed prompt, tool definitions included
    output_tokens: int  # the longest tool output (or environment reply) seen
    counted_by: str  # "the tokenizer NAME" or "an estimate of N characters per token"


def check_token_budget(
    result: Result, seq_len: int, turn_tokens: int, turns: int | None, limit: str, m: Measured
) -> None:
    """test_reward ``--seq-len``: fail when one tool call and an answer do not fit, warn when the turn
    limit's worth of ``turns`` (``limit`` says whose) does not, pass when it does."""
    sizes = (
        f"prompt {m.prompt_tokens}, tool output or environment reply up to {m.output_tokens}, "
        f"{turn_tokens} per model turn; {m.counted_by}"
    )
    least = tokens_needed(2, turn_tokens, m.prompt_tokens, m.output_tokens)
    fit = turns_that_fit(seq_len, turn_tokens, m.prompt_tokens, m.output_tokens)
    if least > seq_len:
        result.fail(
            "token_budget",
            f"seq_len {seq_len} cannot hold one tool call (or environment reply) and an answer "
            f"(about {least} tokens: {sizes})",
            f"raise seq_len to {least} or more, or lower the tokens per turn (--max-tokens / sampling.max_tokens)",
        )
        return
    if turns is None:
        result.warn(
            "token_budget",
            f"seq_len {seq_len} holds about {fit} turn(s) ({sizes}), and the environment has no turn limit: "
            "a longer rollout is cut before its final answer",
            "set a turn limit (max_turns) that fits in seq_len",
        )
        return
    need = tokens_needed(turns, turn_tokens, m.prompt_tokens, m.output_tokens)
    if need > seq_len:
        result.warn(
            "token_budget",
            f"seq_len {seq_len} cannot hold {limit} (about {need} tokens: {sizes}); "
            f"about {fit} turn(s) fit: long rollouts are cut before their final answer",
            f"raise seq_len to {need} or more, or lower max_turns to {max(2, fit)} or the tokens per turn",
        )
    else:
        result.passed("token_budget", f"seq_len {seq_len} holds {limit} (about {need} tokens: {sizes})")
