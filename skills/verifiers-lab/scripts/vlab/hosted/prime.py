"""The `prime` CLI: finding it, its version, and whether the user is logged in.

Never reads the API key itself: `prime whoami` is the definitive check, and its
output is classified, not shown raw (it passes through redaction anyway).

Each failure has its own state and exit code: not installed (3), no key or a rejected key (3),
the platform unreachable or failing (4), and a `prime` that does not answer within its time
limit (`timeout`, 4: the message names the command and the limit; never "install prime").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vlab.core.installed import CommandOutput, run_command, which
from vlab.core.result import EXIT_EXTERNAL, EXIT_OK, EXIT_PREREQ, ExternalError

# Keep the CLI from phoning home for a version check on every call.
PRIME_ENV = {"PRIME_DISABLE_VERSION_CHECK": "1", "NO_COLOR": "1", "TERM": "dumb"}


def prime_path() -> str | None:
    return which("prime")


def prime_version(timeout: float = 15.0) -> str | None:
    """The CLI's version; PrerequisiteError when it is not installed, ExternalError when it hangs."""
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


# The words a command (prime, uv) prints when the network, not the request, failed: DNS on Linux, macOS and
# Windows, refused or reset connections, proxies, TLS, timeouts. The one home of this list (prime's calls, whoami,
# the rehearsal's build and install).
NETWORK_TEXT = re.compile(
    r"ConnectError|ConnectTimeout|ReadTimeout|WriteTimeout|PoolTimeout|RemoteProtocolError|ProxyError|SSLError|"
    r"Connection refused|Connection reset|Connection aborted|Server disconnected|Name or service not known|"
    r"nodename nor servname|getaddrinfo failed|No address associated with hostname|dns error|"
    r"failed to lookup address|Temporary failure in name resolution|Network is unreachable|No route to host|"
    r"error sending request|Request failed|timed out|CERTIFICATE_VERIFY_FAILED",
    re.I,
)
_NETWORK = re.compile(NETWORK_TEXT.pattern + r"|\b50[0-9]\b|Service Unavailable|Bad Gateway", re.I)
_NO_KEY = re.compile(r"No API key|not logged in|prime login", re.I)
_REJECTED = re.compile(r"\b401\b|\b403\b|Unauthori[sz]ed|Forbidden|invalid (api )?key|expired", re.I)


def classify_whoami(out: CommandOutput) -> AuthStatus:
    text = out.text
    if out.returncode == 0:
        return AuthStatus(EXIT_OK, "logged_in", "logged in to Prime Intellect", "")
    if _NO_KEY.search(text) and not _REJECTED.search(text):
        return AuthStatus(
            EXIT_PREREQ,
            "no_api_key",
            "prime has no API key configured",
            "run `prime login` (or set PRIME_API_KEY) and re-run",
        )
    if _REJECTED.search(text):
        return AuthStatus(
            EXIT_PREREQ,
            "key_rejected",
            "the platform rejected the API key (401/403)",
            "create a new key in the Prime Intellect dashboard, then `prime login`",
        )
    if _NETWORK.search(text):
        return AuthStatus(
            EXIT_EXTERNAL,
            "unreachable",
            "could not reach the Prime Intellect API",
            "check the network (or PRIME_API_BASE_URL) and retry, or pass --offline to skip network checks",
        )
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
    return AuthStatus(
        EXIT_PREREQ,
        "unknown",
        f"`prime whoami` failed (rc {out.returncode}): {first[:200]}",
        "run `prime whoami` yourself to see the full message",
    )


def auth_status(timeout: float = 20.0) -> AuthStatus:
    try:
        out = run_prime(["whoami"], timeout=timeout)
    except ExternalError:
        return AuthStatus(
            EXIT_EXTERNAL,
            "timeout",
            f"`prime whoami` did not answer within {timeout:g} s (timed out)",
            "check the network, raise --timeout, or pass --offline to skip network checks",
        )
    return classify_whoami(out)


# -- Hosted Training calls (submit_training) -----------------------------------------------

import json as _json  # noqa: E402
import os as _os  # noqa: E402
from pathlib import Path as _Path  # noqa: E402
from typing import Any as _Any  # noqa: E402

from vlab.core.result import EXIT_FAIL  # noqa: E402

DEFAULT_FRONTEND_URL = "https://app.primeintellect.ai"
# The only secrets `prime train -e` forwards (prime_cli/commands/rl.py: _collect_secrets).
FORWARDABLE_SECRETS = ("WANDB_API_KEY", "HF_TOKEN")


@dataclass
class PrimeCall:
    """A prime command's outcome, its failure classified into one of the exit codes."""

    exit_code: int  # 0 ok; 1 rejected/not found/aborted; 3 CLI or login; 4 network, platform or timeout
    # ok | not_found | rejected | unauthorized | no_api_key | unreachable | platform_error | timeout | aborted | failed
    state: str
    message: str
    data: _Any = None  # the JSON the command printed, when any

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK


_HTTP_STATUS = re.compile(r"HTTP (\d{3})")
_UNAUTHORIZED = re.compile(r"unauthori[sz]ed|\b401\b|\b403\b|forbidden|invalid api key", re.I)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # Rich wraps long errors; join the error's continuation lines back together.
    for i, line in enumerate(lines):
        if line.lower().startswith(("error", "failed")):
            return " ".join(lines[i : i + 4])[:400]
    return (lines[0] if lines else "no output")[:400]


def parse_json_output(text: str) -> _Any:
    start = text.find("{")
    if start < 0:
        return None
    try:
        return _json.loads(text[start:])
    except ValueError:
        try:
            return _json.JSONDecoder().raw_decode(text[start:])[0]
        except ValueError:
            return None


def classify_prime_call(out: CommandOutput) -> PrimeCall:
    text = out.text
    if out.returncode == 0:
        return PrimeCall(EXIT_OK, "ok", "ok", parse_json_output(out.stdout))
    line = _first_line(text)
    status = _HTTP_STATUS.search(text)
    code = int(status.group(1)) if status else None
    if _NO_KEY.search(text) and not _UNAUTHORIZED.search(text):
        return PrimeCall(EXIT_PREREQ, "no_api_key", "prime has no API key configured")
    if code in (401, 403) or _UNAUTHORIZED.search(text):
        return PrimeCall(EXIT_PREREQ, "unauthorized", f"the platform rejected the API key: {line}")
    if code == 404:
        return PrimeCall(EXIT_FAIL, "not_found", line)
    if code in (400, 409, 422):
        return PrimeCall(EXIT_FAIL, "rejected", line)
    if code is not None and code >= 500:
        return PrimeCall(EXIT_EXTERNAL, "platform_error", line)
    if NETWORK_TEXT.search(text):
        return PrimeCall(EXIT_EXTERNAL, "unreachable", f"could not reach the Prime Intellect API: {line}")
    if re.search(r"^\s*Aborted", text, re.M):
        return PrimeCall(EXIT_FAIL, "aborted", "prime asked for a confirmation and got none (Aborted)")
    return PrimeCall(EXIT_EXTERNAL, "failed", f"`prime` failed (rc {out.returncode}): {line}")


def _call(args: list[str], timeout: float) -> PrimeCall:
    """Run one prime command; PrerequisiteError (exit 3) when the CLI is not installed."""
    try:
        out = run_prime(args, timeout=timeout)
    except ExternalError as err:  # the command hung: a timeout, not a missing CLI or a refused connection
        return PrimeCall(EXIT_EXTERNAL, "timeout", err.message)
    return classify_prime_call(out)


def env_info(env_id: str, timeout: float = 30.0) -> PrimeCall:
    """`prime env info OWNER/NAME[@VERSION]`: ok when the Hub has it, not_found on 404."""
    return _call(["env", "info", env_id], timeout)


def env_inspect(env_id: str, path: str | None = None, timeout: float = 30.0) -> PrimeCall:
    """`prime env inspect OWNER/NAME[@VERSION] [PATH] -o json`: the package's source on the Hub, read in place.

    data = {kind: "directory", entries: [{name, path, is_directory, size?}]} for a folder (the root
    without PATH), {kind: "file", path, content, truncated} for a file; no_cli when prime is missing.
    """
    from vlab.core.result import PrerequisiteError

    try:
        return _call(["env", "inspect", env_id, *([path] if path else []), "-o", "json"], timeout)
    except PrerequisiteError as err:
        return PrimeCall(EXIT_PREREQ, "no_cli", err.message)


def train_models(timeout: float = 30.0) -> PrimeCall:
    """`prime train models -o json`: data = {"available_fft_models": [{name, clusters}], "on_demand"?: [...]}."""
    return _call(["train", "models", "-o", "json"], timeout)


def train_submit(
    config_path: str,
    forward_env: list[str] | tuple[str, ...] = (),
    timeout: float = 300.0,
    extra_args: list[str] | tuple[str, ...] = (),
) -> PrimeCall:
    """`prime train CONFIG -y -o json [-e NAME ...]`: data = {"run": {"runId": ...}}.

    Secrets are forwarded by name only (prime reads the value from our environment), so no
    secret ever appears on a command line.
    """
    args = ["train", str(config_path), "-y", "-o", "json"]
    for name in forward_env:
        args += ["-e", name]
    return _call([*args, *extra_args], timeout)


def train_get(run_id: str, timeout: float = 30.0) -> PrimeCall:
    return _call(["train", "get", run_id, "-o", "json"], timeout)


def train_progress(run_id: str, timeout: float = 30.0) -> PrimeCall:
    return _call(["train", "progress", run_id], timeout)


def train_metrics(
    run_id: str,
    min_step: int | None = None,
    max_step: int | None = None,
    limit: int | None = None,
    timeout: float = 60.0,
) -> PrimeCall:
    """`prime train metrics RUN_ID [--min-step N] [--max-step N] [-n LIMIT]` (always JSON): data = {"metrics": [...]}."""
    args = ["train", "metrics", run_id]
    for flag, value in (("--min-step", min_step), ("--max-step", max_step), ("--limit", limit)):
        if value is not None:
            args += [flag, str(value)]
    return _call(args, timeout)


def frontend_url() -> str:
    """The dashboard host the prime CLI links to (PRIME_FRONTEND_URL, ~/.prime/config.json, default)."""
    env_val = _os.environ.get("PRIME_FRONTEND_URL")
    if env_val:
        return env_val.rstrip("/")
    try:
        cfg = _json.loads((_Path.home() / ".prime" / "config.json").read_text())
        value = cfg.get("frontend_url") if isinstance(cfg, dict) else None
        if isinstance(value, str) and value.startswith("http"):
            return value.rstrip("/")
    except (OSError, ValueError):
        pass
    return DEFAULT_FRONTEND_URL


def dashboard_url(run_id: str) -> str:
    return f"{frontend_url()}/dashboard/training/{run_id}"
