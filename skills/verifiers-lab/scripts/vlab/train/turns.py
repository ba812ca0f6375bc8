"""Multi-turn budget: does ``seq_len`` hold the turns an environment's rollouts may take?

A tool or multi-turn rollout is trained as one sequence: the prompt, then every model turn and
every tool output (or environment reply) in between. Its turn limit is an environment argument
(classic ``load_environment(max_turns=...)``, v1 ``task.max_turns`` or ``max_turns``), else the
environment's own default (``declared``: read by ``envargs.declared_turn_limit`` before loading, or
``Capabilities.max_turns`` of a loaded environment). The one home of this arithmetic: ``Budget``
holds a rollout's numbers (seq_len, tokens per model turn, the turn limit, the prompt and tool
reply sizes) and writes the sum every verdict names; three verdicts read it:

- ``check_turn_budget`` (local_train and the prime-rl hand-off): assumed prompt and tool output
  sizes, warns when ``seq_len`` cannot hold the turn limit's worth of turns;
- ``check_token_budget`` (test_reward ``--seq-len``): sizes measured on the scripted conversations;
  fails when ``seq_len`` cannot hold even one tool call and an answer, warns when it cannot hold the
  turn limit's worth of turns;
- ``check_config_budget`` (submit_training, ``hosted.tokens``): a config's own seq_len and tokens per
  turn, the prompt measured by the rehearsal; fails when ``seq_len`` cannot hold the turn limit's
  worth of turns (a config for a run whose long rollouts are cut is not written); where the user named no
  seq_len, submit_training sets ``Budget.fitting_seq_len`` instead (the sum rounded up to a multiple of 1024).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlab.core.result import Result
from vlab.train.memory import DEFAULT_PROMPT_TOKENS

TOOL_OUTPUT_TOKENS = 64  # a short tool reply between two model turns (a calculator's number, an error line)
SEQ_LEN_STEP = 1024  # a seq_len the pack chooses is a multiple of this (every power of two from 1024 is one)


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


def round_seq_len(tokens: int) -> int:
    """``tokens`` rounded up to a multiple of ``SEQ_LEN_STEP``: 3328 -> 4096, 5000 -> 5120."""
    return max(1, -(-tokens // SEQ_LEN_STEP)) * SEQ_LEN_STEP


@dataclass(frozen=True)
class Budget:
    """One rollout that uses every turn, against ``seq_len``: the numbers each verdict reads and names."""

    seq_len: int
    turn_tokens: int  # tokens per model turn (max_tokens / max_completion_tokens)
    turns: int | None  # the turn limit; None: the environment has none
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    output_tokens: int = TOOL_OUTPUT_TOKENS  # a tool output or environment reply between two turns

    def needed(self, turns: int | None = None) -> int:
        """Tokens a rollout of ``turns`` (default: the turn limit) needs."""
        n = self.turns if turns is None else turns
        return tokens_needed(n or 1, self.turn_tokens, self.prompt_tokens, self.output_tokens)

    @property
    def fit(self) -> int:
        """How many full turns fit in ``seq_len``."""
        return turns_that_fit(self.seq_len, self.turn_tokens, self.prompt_tokens, self.output_tokens)

    def holds(self, turns: int | None = None) -> bool:
        return self.needed(turns) <= self.seq_len

    def fitting_seq_len(self) -> int:
        """The seq_len the pack chooses when none was named: the sum rounded up to a multiple of 1024."""
        return round_seq_len(self.needed())

    def sum(self, turns: int | None = None) -> str:
        """``6 turns x 512 tokens + prompt 180 + 5 tool replies x 64 = 3572 tokens``: the arithmetic, written out."""
        n = (self.turns if turns is None else turns) or 1
        text = f"{n} turn{'s' if n > 1 else ''} x {self.turn_tokens} tokens + prompt {self.prompt_tokens}"
        if n > 1:
            text += f" + {n - 1} tool repl{'ies' if n > 2 else 'y'} x {self.output_tokens}"
        return f"{text} = {self.needed(n)} tokens"


def check_turn_budget(
    args: dict[str, Any], completion_tokens: int, seq_len: int, result: Result, declared: int | None = None
) -> None:
    """Warn when a rollout that uses every turn cannot fit in ``seq_len``; say so when it fits."""
    turns, named = turn_limit(args, declared)
    if turns is None or turns <= 1:
        return
    budget = Budget(seq_len, completion_tokens, turns)
    need = budget.needed()
    if not budget.holds():
        result.warn(
            "turn_budget",
            f"seq_len {seq_len} cannot hold {named} turns of up to {completion_tokens} tokens "
            f"(about {budget.sum()} with an assumed prompt and tool replies; about {max(1, budget.fit)} turn(s) fit): "
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
    budget = Budget(seq_len, turn_tokens, turns, m.prompt_tokens, m.output_tokens)
    least = budget.needed(2)
    fit = budget.fit
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
    need = budget.needed()
    if need > seq_len:
        result.warn(
            "token_budget",
            f"seq_len {seq_len} cannot hold {limit} (about {need} tokens: {sizes}); "
            f"about {fit} turn(s) fit: long rollouts are cut before their final answer",
            f"raise seq_len to {need} or more, or lower max_turns to {max(2, fit)} or the tokens per turn",
        )
    else:
        result.passed("token_budget", f"seq_len {seq_len} holds {limit} (about {need} tokens: {sizes})")


def check_config_budget(
    result: Result, where: str, budget: Budget, limit: str, sizes: str, fix: tuple[str, str, str]
) -> None:
    """submit_training: a config whose ``seq_len`` cannot hold the turn limit's worth of turns fails.

    ``where``: the source (and environment) the numbers are its; ``limit``: whose turn limit it is;
    ``sizes``: how the prompt and tool replies were sized; ``fix``: how the user sets seq_len, the
    tokens per turn and the turn limit in this config (flag or key)."""
    seq_key, tokens_key, turns_key = fix
    if budget.holds():
        result.passed(
            "token-budget", f"{where}: seq_len {budget.seq_len} holds {limit} (about {budget.sum()}; {sizes})"
        )
        return
    fit, need = budget.fit, budget.needed()
    turns = f"the turn limit ({turns_key}; {fit} fit)" if fit >= 1 and (budget.turns or 1) > 1 else ""
    result.fail(
        "token-budget",
        f"{where}: seq_len {budget.seq_len} cannot hold {limit}: {budget.sum()} ({sizes}); "
        + (f"about {fit} turn(s) fit" if fit else "not one turn fits")
        + ": long rollouts would be cut before their final answer",
        f"raise seq_len to {need} ({seq_key} {need}), or lower the tokens per turn ({tokens_key})"
        + (f" or {turns} " if turns else " ")
        + "until the sum fits",
    )
