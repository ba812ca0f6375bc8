"""Placeholder environment ids: where the user's own Hub id goes, the owner (or name) the docs wrote.

The one list of them. SKILL.md and the references write ``owner/my-env`` and ``owner/name``; the hosted
template and the pack's hints ``OWNER/my-env`` and ``OWNER/NAME``; other docs ``your-org/``, ``<owner>/``,
``my-org/``. An owner is compared lower-cased with ``_`` read as ``-``; an owner or a name in brackets
(``<owner>``, ``{owner}``) or a shell variable (``$OWNER``) is a placeholder whatever it says.
``tests/test_placeholder_ids.py`` reads every id SKILL.md, the references and the config templates show
and checks each is caught, and that a real-looking id (``acme/color-toy``) is not.
"""

from __future__ import annotations

import re

from vlab.core.result import EXIT_FAIL, Check

PLACEHOLDER_OWNERS = frozenset(
    {
        "owner",
        "org",
        "organization",
        "namespace",
        "user",
        "username",
        "example",
        "my-org",
        "my-organization",
        "my-team",
        "my-user",
        "my-username",
        "your-org",
        "your-organization",
        "your-team",
        "your-user",
        "your-username",
        "your-name",
        "your-owner",
        "your-handle",
        "your-account",
        "your-hub-id",
        "yourname",
        "yourorg",
        "yourusername",
    }
)
PLACEHOLDER_NAMES = frozenset({"name", "env-name", "environment-name", "your-env", "your-environment"})


def _plain(part: str) -> str:
    return re.sub(r"[\s_]+", "-", part.strip().lower())


def _bracketed(part: str) -> bool:
    return part.startswith(("<", "{", "[", "$")) or part.endswith((">", "}", "]"))


def is_placeholder(env_id: str) -> bool:
    """``env_id`` (``owner/name[@version]``, or a bare name) still names a placeholder owner or name."""
    owner, _, name = env_id.strip().rpartition("/")
    name = name.split("@", 1)[0]
    if owner and (_bracketed(owner) or _plain(owner) in PLACEHOLDER_OWNERS):
        return True
    return _bracketed(name) or _plain(name) in PLACEHOLDER_NAMES


def placeholder_checks(sources: list[tuple[str, str | None]]) -> list[Check]:
    """A failed ``env-placeholder`` check for each (where, env id) whose id is still a placeholder."""
    return [
        Check(
            "env-placeholder",
            "fail",
            f"{where}: {env_id!r} is still a placeholder id (the docs' owner or name, not yours)",
            "put your environment's Hub id (owner/name, as `prime env push` printed it) in its place",
            EXIT_FAIL,
        )
        for where, env_id in sources
        if env_id and is_placeholder(env_id)
    ]
