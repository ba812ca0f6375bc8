"""One field of an eval row, normalised: the reward, a score, the completion's size, the error,
the prompt's fingerprint. Both readers use these (the row reader in ``read`` and the column
reader in ``batches``), so a row gives the same figures whichever path reads it.

``msgspec`` is optional: ``msgspec`` here is the module or None, and ``MISSING_MS`` the default
msgspec structs give an absent field (``msgspec.UNSET``, or ``MISSING`` without msgspec).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

try:  # optional fast path
    import msgspec
except ImportError:  # pragma: no cover - exercised where msgspec is absent
    msgspec = None

MISSING = object()  # a field the row does not have (json path)
MISSING_MS = msgspec.UNSET if msgspec is not None else MISSING  # the same, for msgspec structs

# Stop conditions classic rows count as truncation (besides is_truncated).
CLASSIC_TRUNCATING = ("length", "max_tokens", "max_tokens_reached")


def turn_limit_stop(stop: Any, tool_calls: int, turns: int = 0, last_calls: bool = True) -> bool:
    """A rollout the environment's turn limit ended before it was over. The stop names a turn limit
    (classic ``max_turns_reached``, v1 ``max_turns``, a task's own ``@vf.stop`` on its turns) and:

    - a tool rollout (``tool_calls`` > 0): the model's last turn still called a tool. Classic
      environments check their stop conditions in name order, so a final answer given on the last
      allowed turn reads ``max_turns_reached`` too (before ``no_tools_called``): not counted.
    - a rollout without tool calls: the model took more than one turn (``turns``), a multi-turn game
      (``MultiTurnEnv``, a v1 multi-turn taskset) cut at its limit. A single-turn environment's one
      reply also ends with ``max_turns_reached``: not counted.
    """
    if not (isinstance(stop, str) and "turn" in stop.lower()):
        return False
    return last_calls if tool_calls > 0 else turns > 1


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def turn_limited(stop: Any, tool_calls: int, completion: Any) -> bool:
    """``turn_limit_stop`` of a completion, its turns counted only when they can decide (a turn-limit stop;
    a single message without tool calls, a single-turn environment's every row, is one turn at most)."""
    if not (isinstance(stop, str) and "turn" in stop.lower()):
        return False
    if not tool_calls and (not isinstance(completion, list) or len(completion) < 2):
        return False
    return turn_limit_stop(stop, tool_calls, *completion_turns(completion))


def completion_turns(completion: Any) -> tuple[int, bool]:
    """(model turns, whether the last one called a tool) of a completion: message dicts or structs
    with ``role``/``tool_calls``; a string is one turn."""
    if isinstance(completion, str):
        return 1, False
    if not isinstance(completion, list):
        return 0, False
    turns, last = 0, False
    for msg in completion:
        role = msg.get("role", "assistant") if isinstance(msg, dict) else getattr(msg, "role", None)
        if role == "assistant":
            turns += 1
            last = bool(_field(msg, "tool_calls"))
    return turns, last


def is_missing(v: Any) -> bool:
    return v is MISSING or v is MISSING_MS


def reward_value(value: Any) -> tuple[float | None, str | None]:
    """(reward, None) for a usable reward, else (None, issue): missing, null, nan, string, not-a-number."""
    if value is MISSING or (msgspec is not None and value is msgspec.UNSET):
        return None, "missing"
    if value is None:
        return None, "null"
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, (int, float)):
        v = float(value)
        return (v, None) if math.isfinite(v) else (None, "nan")
    if isinstance(value, str):
        return None, "string"
    return None, "not-a-number"


def number(value: Any) -> float | None:
    """A score as a float (NaN for a non-finite one), or None when it is not a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        return v if math.isfinite(v) else math.nan
    if isinstance(value, bool):
        return float(value)
    return None


def score_value(v: Any) -> float:
    """A score column value: the number, or NaN."""
    if type(v) is float:
        return v
    x = number(v)
    return math.nan if x is None else x


def text_length(content: Any) -> int:
    """Characters of a message content (a string or content parts), stripped."""
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content.strip())
    if isinstance(content, list):  # content parts
        n = 0
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                n += len(text.strip()) if isinstance(text, str) else (0 if part.get("type") == "text" else 1)
            elif isinstance(part, str):
                n += len(part.strip())
        return n
    return len(str(content))


def completion_size(completion: Any) -> tuple[int | None, int]:
    """(characters of assistant text, tool calls) in a classic completion (messages or a string)."""
    if completion is None or completion is MISSING:
        return None, 0
    if isinstance(completion, str):
        return len(completion.strip()), 0
    if not isinstance(completion, list):
        return None, 0
    chars = calls = 0
    for msg in completion:
        if not isinstance(msg, dict) or msg.get("role", "assistant") != "assistant":
            continue
        chars += text_length(msg.get("content"))
        tc = msg.get("tool_calls")
        if tc:
            calls += len(tc) if isinstance(tc, list) else 1
    return chars, calls


def error_text(error: Any) -> str | None:
    """A row's error as one short line, or None when it has none."""
    if error is None or error is MISSING or error == "" or error == [] or error == {}:
        return None
    if msgspec is not None and error is msgspec.UNSET:
        return None
    if isinstance(error, dict):
        kind = error.get("error") or error.get("type") or "Error"
        message = error.get("message") or ""
        return f"{kind}: {message}"[:200] if message else str(kind)[:200]
    if isinstance(error, list):
        return error_text(error[-1])
    return str(error)[:200]


def prompt_key(prompt: Any) -> int | None:
    """A fingerprint of the prompt (checks that ids identify prompts), or None without one."""
    if prompt is None or prompt is MISSING:
        return None
    if isinstance(prompt, str):
        return hash(prompt)
    if isinstance(prompt, list):
        parts = []
        for m in prompt:
            if isinstance(m, dict):
                c = m.get("content")
                parts.append((m.get("role"), c if isinstance(c, str) else json.dumps(c, sort_keys=True)))
            else:
                parts.append(repr(m))
        return hash(tuple(parts))
    return hash(json.dumps(prompt, sort_keys=True, default=str))


def example_of(row: Any) -> Any:
    """The group key of a classic row (``example_id``, else ``id``); lists and dicts as JSON text, "7" as 7."""
    ex = row.example_id
    if is_missing(ex) or ex is None:
        ex = row.id
        if is_missing(ex):
            return None
    if isinstance(ex, (list, dict)):
        return json.dumps(ex, sort_keys=True)
    # "1", 1 and 1.0 name the same example (writers differ in how they store ids)
    if isinstance(ex, str) and ex.isascii() and ex.isdigit() and (ex == "0" or ex[0] != "0"):
        return int(ex)
    if isinstance(ex, float) and ex.is_integer():
        return int(ex)
    return ex


# A rollout whose reward is an LLM judge's and whose judge failed: no verdict, or a refusal. Counted
# apart from zero rewards and from generation failures (the judge templates raise; see reward.judge).
_JUDGE = re.compile(r"judge", re.I)
_REFUSAL = re.compile(r"refus|can'?t help|cannot help|i'?m sorry|i am sorry|unable to (?:grade|assist|help)", re.I)


def judge_error_kind(error: str | None) -> str | None:
    """ "refusal" or "error" for a judge failure in a row's error text, None for any other error."""
    if not error or not _JUDGE.search(error):
        return None
    return "refusal" if _REFUSAL.search(error) else "error"
