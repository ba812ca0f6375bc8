"""Chat messages as plain dicts, and the ``generate`` seam that turns them into a Reply."""

from __future__ import annotations

import inspect
from typing import Any

from vlab.env.types import ROLLOUT_KEY, Generate, Reply


def message_dict(message: Any) -> dict:
    """A chat message (dict or pydantic model) as a plain dict without None fields."""
    if isinstance(message, dict):
        return {k: v for k, v in message.items() if v is not None}
    if hasattr(message, "model_dump"):
        return message.model_dump(exclude_none=True)
    return dict(message)


def text_of(content: Any) -> str:
    """The text of a message's content (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(getattr(part, "text", "")) for part in content
        )
    return str(content)


def last_user_text(prompt: list[dict]) -> str:
    for m in reversed(prompt):
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def completion_messages(completion: Any) -> list[dict]:
    """A completion given as text, one message or a list of messages, as a list of dicts."""
    if isinstance(completion, str):
        return [{"role": "assistant", "content": completion}]
    if isinstance(completion, dict):
        return [completion]
    return [message_dict(m) for m in completion]


async def call_generate(
    generate: Generate, messages: list[dict], sampling_args: dict, tools: list[dict] | None
) -> Reply:
    """Call a sync or async ``generate`` (with ``tools=`` when it takes them) and return a Reply."""
    try:
        wants_tools = "tools" in inspect.signature(generate).parameters
    except (TypeError, ValueError):
        wants_tools = False
    out = generate(messages, sampling_args, tools=tools) if wants_tools else generate(messages, sampling_args)
    if inspect.isawaitable(out):
        out = await out
    if isinstance(out, str):
        return Reply(text=out)
    if not isinstance(out, Reply):
        raise TypeError(f"generate() returned {type(out).__name__}; expected Reply or str")
    return out


async def as_rollout(key: tuple | None, awaitable):
    """Await `awaitable` as rollout `key` (see ``types.ROLLOUT_KEY``): its generate calls carry the key.
    Run it as its own task (``asyncio.gather`` does) so the key stays with this rollout."""
    ROLLOUT_KEY.set(key)
    return await awaitable
