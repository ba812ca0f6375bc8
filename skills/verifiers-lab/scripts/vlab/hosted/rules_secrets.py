"""Validation rules on a config's secrets: no secret value in the file, only WANDB_API_KEY / HF_TOKEN
forwarded (by name, with -e) and set here when submitting; a judge's key named by variable only, and
no loopback judge endpoint for a hosted run."""

from __future__ import annotations

import re
from typing import Any

from vlab.core.result import EXIT_PREREQ, EXIT_USAGE, Check
from vlab.core.secrets import looks_like_secret
from vlab.hosted.document import get, rule, walk_strings

SECRET_KEY_NAMES = re.compile(r"(api[_-]?key|token|secret|password|passwd)$", re.I)
# An environment's judge (the judge templates' judge_api_key_var / judge_base_url; any *_key_var, *_base_url).
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOOPBACK = re.compile(r"^\s*https?://(?:[^/@]*@)?(?:localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1\])(?:[:/]|$)", re.I)


def check_secrets(
    doc: dict, text: str | None, forward_env: list[str] | tuple[str, ...], environ: dict[str, str] | None = None
) -> list[Check]:
    from vlab.hosted.prime import FORWARDABLE_SECRETS

    checks = []
    leaks = []
    for path, value in walk_strings(doc):
        leaf = path.rsplit(".", 1)[-1]
        if (
            isinstance(value, str)
            and value
            and (looks_like_secret(value) or (SECRET_KEY_NAMES.search(leaf) and len(value) >= 8))
        ):
            leaks.append(path)
        if leaf in FORWARDABLE_SECRETS or leaf in ("PRIME_API_KEY", "OPENAI_API_KEY"):
            leaks.append(path) if path not in leaks else None
    if text is not None and not leaks and looks_like_secret(text):
        leaks.append("(a comment or a string in the file)")
    if leaks:
        checks.append(
            rule(
                "no-secrets",
                "fail",
                "secret value(s) in the config: " + ", ".join(leaks[:8]),
                "remove them; forward WANDB_API_KEY / HF_TOKEN with -e (--forward-env NAME), never in the file",
            )
        )
    else:
        checks.append(rule("no-secrets", "pass", "no secret values in the config"))
    bad = [n for n in forward_env if n not in FORWARDABLE_SECRETS]
    if bad:
        checks.append(
            rule(
                "forward-env",
                "fail",
                "only WANDB_API_KEY and HF_TOKEN can be forwarded; got " + ", ".join(bad),
                "drop the others (`prime train` refuses them)",
                EXIT_USAGE,
            )
        )
    if environ is not None:
        missing = [n for n in forward_env if n in FORWARDABLE_SECRETS and not environ.get(n)]
        if missing:
            checks.append(
                rule(
                    "forward-env",
                    "fail",
                    "asked to forward " + ", ".join(missing) + " but it is not set here",
                    "export it in this shell first (its value is read by prime, never printed)",
                    EXIT_PREREQ,
                )
            )
    if get(doc, "monitors.wandb") is not None and "WANDB_API_KEY" not in forward_env:
        checks.append(
            rule(
                "forward-env",
                "warn",
                "[monitors.wandb] is set but WANDB_API_KEY is not forwarded",
                "pass --forward-env WANDB_API_KEY (sent with `prime train -e`), or W&B logging fails in the run",
            )
        )
    elif not bad and forward_env:
        checks.append(rule("forward-env", "pass", "forwarded with -e: " + ", ".join(forward_env)))
    return checks


def key_var_names(doc: dict) -> list[str]:
    """The environment-variable NAMES an environment reads its judge's (or any) API key from."""
    return sorted({v for p, v in walk_strings(doc) if p.rsplit(".", 1)[-1].endswith("_key_var") and is_var_name(v)})


def is_var_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_VAR_NAME.fullmatch(value))


def check_judge(doc: dict, target: str) -> list[Check]:
    """A judge's key goes by variable name only; a hosted run cannot reach a judge on this machine."""
    checks = []
    named = [(p, v) for p, v in walk_strings(doc) if p.rsplit(".", 1)[-1].endswith("_key_var")]
    bad = [p for p, v in named if not is_var_name(v)]  # the value is never shown: it may be the key itself
    if bad:
        checks.append(
            rule(
                "judge-key",
                "fail",
                f"{', '.join(bad)} must name an environment variable (e.g. OPENAI_API_KEY), not hold a value",
                "pass the variable's NAME (--env-arg judge_api_key_var=NAME); the key stays in the environment",
            )
        )
    elif named:
        where = (
            "Hosted Training injects an environment's Hub secrets into the run"
            if target == "hosted"
            else "export it where the orchestrator runs"
        )
        checks.append(
            rule(
                "judge-key",
                "pass",
                f"the judge's key goes by variable name only: {', '.join(key_var_names(doc))}; {where}",
            )
        )
    local = [  # an environment's argument only (a source's env); the trainer's own clients are not judged here
        p
        for p, v in walk_strings(doc)
        if ".source[" in p and p.rsplit(".", 1)[-1].endswith("base_url") and _LOOPBACK.match(str(v))
    ]
    if local and target == "hosted":
        checks.append(
            rule(
                "judge-endpoint",
                "fail",
                f"{', '.join(local)} points at this machine (loopback): a hosted run cannot reach it",
                "give the judge's public endpoint, e.g. --env-arg judge_base_url=https://api.openai.com/v1",
            )
        )
    return checks
