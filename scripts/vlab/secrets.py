"""Keep secrets out of everything the pack prints or writes.

Every script's output passes through :func:`redact` before it reaches stdout,
stderr or a file, so a key that leaks into an error message from a library or
a subprocess is still masked.
"""

from __future__ import annotations

import os
import re

# Environment variables whose values are secrets wherever they show up.
SECRET_ENV_VARS = (
    "PRIME_API_KEY",
    "WANDB_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
)

# Shapes of well-known tokens; conservative so ordinary text is left alone.
_TOKEN_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI-style
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(r"\bpit_[A-Za-z0-9_\-]{16,}"),  # Prime Intellect
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{16,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"']?)[A-Za-z0-9._\-]{12,}"),
]

MASK = "****"


def mask(value: str) -> str:
    """Mask a secret for display: only its length is shown."""
    return f"{MASK} ({len(value)} chars)" if value else ""


def looks_like_secret(value: str) -> bool:
    return any(p.search(value) for p in _TOKEN_PATTERNS)


def redact(text: str) -> str:
    """Replace secret values (from the environment and known token shapes) with a mask."""
    if not text:
        return text
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name, "")
        if len(value) >= 6:
            text = text.replace(value, MASK)
    for pattern in _TOKEN_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + MASK, text)
        else:
            text = pattern.sub(MASK, text)
    return text
