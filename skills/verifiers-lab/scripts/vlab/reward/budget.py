"""test_reward ``--seq-len``: does a multi-turn or tool rollout fit the training sequence length?

Measured on the scripted conversations of ``reward.conversation``: the longest probed prompt
(its messages and the tool definitions the model is offered) and the longest tool output or
environment reply the scripts met; each model turn takes ``--max-tokens`` (a real model's reply
is not what a script says). The turn limit is the number of turns the scripted never-stopping
rollout was allowed, else the environment's own (``Capabilities.max_turns``: classic ``max_turns``,
a v1 taskset's ``task.max_turns``); a rollout that never stopped has none. The arithmetic and the verdicts are ``train.turns``'.

Tokens are counted with ``--tokenizer`` when it loads offline, else estimated at
``CHARS_PER_TOKEN`` characters per token; the check says which.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from vlab.core.result import Result
from vlab.env import Row
from vlab.train.turns import Measured, check_token_budget

# BPE tokenizers give about 4 characters per token on English prose and fewer on numbers, code and
# JSON (tool calls and their outputs): 3 errs towards more tokens, so a budget that passes holds.
CHARS_PER_TOKEN = 3.0
MESSAGE_TOKENS = 4  # per message: the role and the chat template's markers
TURN_TOKENS = 256  # tokens per model turn without --max-tokens: local_train's sampling.max_completion_tokens


def token_counter(name: str | None) -> tuple[Callable[[str], int], str]:
    """(count(text) -> tokens, how they are counted): the tokenizer ``name`` loaded offline, else the estimate."""
    estimate = f"an estimate of {CHARS_PER_TOKEN:g} characters per token"
    if not name:
        return (lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)), estimate
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as err:  # noqa: BLE001 - not installed, not cached, not a tokenizer: the estimate says so
        why = str(err).splitlines()[0][:120] if str(err) else type(err).__name__
        return (
            lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)
        ), f"{estimate} (the tokenizer {name!r} is not available offline: {why})"
    return (lambda text: len(tok(text, add_special_tokens=False)["input_ids"])), f"the tokenizer {name!r}"


def _messages_tokens(messages: list[dict], count: Callable[[str], int]) -> int:
    total = 0
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content) if content else ""
        total += MESSAGE_TOKENS + count(text)
    return total


def prompt_tokens(prompts: list[list[dict]], tools: list[dict], count: Callable[[str], int]) -> int:
    """The longest prompt's tokens, the tool definitions the model is offered included (test_reward's
    scripted conversations, submit_training's rehearsal)."""
    tool_text = json.dumps(tools) if tools else ""
    longest = max((_messages_tokens(list(p), count) for p in prompts), default=0)
    return longest + (count(tool_text) if tool_text else 0)


def token_budget_check(
    result: Result, rows: list[Row], tools: list[dict], outputs: list[str], turns_seen: list, caps, opts
) -> None:
    """One ``token_budget`` check from what the scripted conversations held; skipped without --seq-len."""
    if not opts.seq_len:
        result.skip(
            "token_budget",
            "pass --seq-len N (the training sequence length) to check that a rollout's turns and tool outputs fit",
        )
        return
    count, counted_by = token_counter(opts.tokenizer)
    prompt = prompt_tokens([r.prompt for r in rows], tools, count)
    output = max((MESSAGE_TOKENS + count(t) for t in outputs), default=MESSAGE_TOKENS)
    turn_tokens = opts.max_tokens or TURN_TOKENS
    if not opts.max_tokens:
        counted_by += f"; {TURN_TOKENS} tokens per model turn (pass --max-tokens)"
    seen = max(turns_seen) if turns_seen and all(isinstance(t, int) for t in turns_seen) else None
    if turns_seen and seen is None:  # a scripted rollout never stopped: whatever it declares, there is no limit
        turns, limit = None, ""
    elif seen is not None and seen != caps.max_turns:  # what the environment does wins over what it declares
        turns, limit = seen, f"the {seen} turns the scripted rollouts were allowed"
    elif caps.max_turns is not None:
        turns, limit = caps.max_turns, f"the environment's max_turns={caps.max_turns} turns"
    else:
        turns, limit = None, ""
    check_token_budget(result, opts.seq_len, turn_tokens, turns, limit, Measured(prompt, output, counted_by))
