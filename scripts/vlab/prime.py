"""The `prime` CLI: finding it, its version, and whether the user is logged in.

Never reads the API key itself: `prime whoami` is the definitive check, and its
output is classified, not shown raw (it passes through redaction anyway).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .probe import CommandOutput, run_command, which
from .result import EXIT_EXTERNAL, EXIT_OK, EXIT_PREREQ, ExternalError

# Keep the CLI from phoning home for a version check on every call.
PRIME_ENV = {"PRIME_DISABLE_VERSION_CHECK": "1", "NO_COLOR": "1", "TERM": "dumb"}


def prime_path() -> str | None:
    return which("prime")


def prime_version(timeout: float = 15.0) -> str | None:
    out = run_command(["prime", "--version"], timeout=timeout, env=PRIME_ENV)
    m = re.search(r"\d+\.\d+(?:\.\d+)?\S*", out.text)
    return m.group(0) if m else None


def run_prime(args: list[str], timeout: float = 30.0) -> CommandOutput:
    return run_command(["prime", *args], timeout=timeout, env=PRIME_ENV)


@dataclass
class AuthStatus:
    exit_code: int  # 0 logged in, 3 no key / key rejected, 4 network or platform failure
    state: str  # logged_in | no_api_key | key_rejected | unreachable | timeout | unknown
    message: str
    hint: str


_NETWORK = re.compile(
    r"ConnectError|ConnectTimeout|ReadTimeout|Connection refused|Name or service not known|"
    r"Temporary failure in name resolution|Network is unreachable|Request failed|timed out|"
    r"\b50[0-9]\b|Service Unavailable|Bad Gateway",
    re.I,
)
_NO_KEY = re.compile(r"No API key|not logged in|prime login", re.I)
_REJECTED = re.compile(r"\b401\b|\b403\b|Unauthori[sz]ed|Forbidden|invalid (api )?key|expired", re.I)


def classify_whoami(out: CommandOutput) -> AuthStatus:
    text = out.text
    if out.returncode == 0:
        return AuthStatus(EXIT_OK, "logged_in", "logged in to Prime Intellect", "")
    if _NO_KEY.search(text) and not _REJECTED.search(text):
        return AuthStatus(
            EXIT_PREREQ, "no_api_key", "prime has no API key configured",
            "run `prime login` (or set PRIME_API_KEY) and re-run",
        )
    if _REJECTED.search(text):
        return AuthStatus(
            EXIT_PREREQ, "key_rejected", "the platform rejected the API key (401/403)",
            "create a new key in the Prime Intellect dashboard, then `prime login`",
        )
    if _NETWORK.search(text):
        return AuthStatus(
            EXIT_EXTERNAL, "unreachable", "could not reach the Prime Intellect API",
            "check the network (or PRIME_API_BASE_URL), or pass --offline to skip network checks",
        )
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
    return AuthStatus(
        EXIT_PREREQ, "unknown", f"`prime whoami` failed (rc {out.returncode}): {first[:200]}",
        "run `prime whoami` yourself to see the full message",
    )


def auth_status(timeout: float = 20.0) -> AuthStatus:
    try:
        out = run_prime(["whoami"], timeout=timeout)
    except ExternalError:
        return AuthStatus(
            EXIT_EXTERNAL, "timeout", f"`prime whoami` did not answer within {timeout:g} s",
            "check the network, or pass --offline to skip network checks",
        )
    return classify_whoami(out)
