"""Validation rules on a config's environments: well-formed ids (an owner for the Hub), source ratios
and names; online, that each environment is on the Environments Hub and the model is available for
Hosted Training (through a ``Lookup``, so tests and offline runs decide what answers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vlab.core.result import EXIT_EXTERNAL, EXIT_PREREQ, Check
from vlab.hosted.document import ENV_ID_RE, get, rule, source_env_ids, train_sources


@dataclass
class Lookup:
    """Answers for the online rules; each returns a vlab.hosted.prime.PrimeCall-like object (exit_code, state, message, data)."""

    env_info: Callable[[str], Any]
    train_models: Callable[[], Any]


def lookup_failure(call: Any) -> tuple[int, str]:
    """The exit code and the fix of an online lookup that got no answer, by its cause: the network or the platform
    (exit 4: retry, or --offline), or this machine's prime CLI or login (exit 3: its own fix, or --offline)."""
    fixes = {
        "no_cli": (EXIT_PREREQ, "install the prime CLI (uv tool install prime), or pass --offline to skip the lookups"),
        "no_api_key": (EXIT_PREREQ, "run `prime login` (or set PRIME_API_KEY), or pass --offline to skip the lookups"),
        "unauthorized": (
            EXIT_PREREQ,
            "the key was refused: `prime login` again, or pass --offline to skip the lookups",
        ),
    }
    if call.state in fixes:
        return fixes[call.state]
    code = call.exit_code or EXIT_EXTERNAL
    if code == EXIT_EXTERNAL:  # unreachable, timeout, platform_error, failed
        return code, "check the network (or PRIME_API_BASE_URL) and retry, or pass --offline to skip the lookups"
    return code, "run the same `prime` command yourself to see its full message, or pass --offline to skip the lookups"


def check_env_ids(doc: dict, target: str) -> list[Check]:
    checks = []
    for where, env_id in source_env_ids(doc):
        if not isinstance(env_id, str) or not env_id:
            checks.append(
                rule(
                    "env-id",
                    "fail",
                    f"{where} has no env.taskset.id",
                    f'add [{where.split("[")[0]}.env.taskset] id = "owner/name"',
                )
            )
        elif not ENV_ID_RE.match(env_id):
            checks.append(
                rule(
                    "env-id",
                    "fail",
                    f"{where}: {env_id!r} is not an environment id",
                    "use owner/name (Environments Hub) or owner/name@version",
                )
            )
        elif "/" not in env_id and target == "hosted":
            checks.append(
                rule(
                    "env-id",
                    "warn",
                    f"{where}: {env_id!r} has no owner, so the Hub cannot resolve it",
                    "use the Hub id owner/name (see `prime env info OWNER/NAME`)",
                )
            )
        else:
            checks.append(rule("env-id", "pass", f"{where}: {env_id}"))
    ratios = [s.get("ratio") for s in train_sources(doc)]
    if len(ratios) > 1 and any(r is not None and (not isinstance(r, (int, float)) or r <= 0) for r in ratios):
        checks.append(
            rule(
                "source-ratio",
                "fail",
                "a train source ratio is not a positive number",
                "ratios are relative weights > 0, e.g. 0.7 and 0.3",
            )
        )
    names = [s.get("name") for s in train_sources(doc)]
    if len(names) != len(set(names)):
        checks.append(
            rule(
                "source-names",
                "fail",
                "two train sources share a name",
                "give each [[orchestrator.train.source]] its own name",
            )
        )
    return checks


def check_online(doc: dict, lookup: Lookup | None, skip_env_ids: set[str] | None = None) -> list[Check]:
    checks = []
    if lookup is None:
        checks.append(
            rule(
                "env-hub",
                "skip",
                "offline: environments not looked up on the Hub",
                "run without --offline to confirm each environment exists",
            )
        )
        checks.append(
            rule(
                "model-available",
                "warn",
                "offline: model not checked against `prime train models`",
                "run without --offline, or check `prime train models` yourself",
            )
        )
        return checks
    skip_env_ids = skip_env_ids or set()
    for where, env_id in source_env_ids(doc):
        if not isinstance(env_id, str) or not ENV_ID_RE.match(env_id) or "/" not in env_id:
            continue
        if env_id in skip_env_ids:
            checks.append(rule("env-hub", "pass", f"{env_id} confirmed on the Hub"))
            continue
        call = lookup.env_info(env_id)
        if call.exit_code == 0:
            checks.append(rule("env-hub", "pass", f"{env_id} exists on the Environments Hub"))
        elif call.state == "not_found":
            checks.append(
                rule(
                    "env-hub",
                    "fail",
                    f"{env_id} is not on the Environments Hub ({where})",
                    "check the spelling with `prime env list`, or push it with `prime env push`",
                )
            )
        else:
            # A network or login failure says nothing about whether the environment exists.
            code, hint = lookup_failure(call)
            checks.append(rule("env-hub", "fail", f"could not look up {env_id}: {call.message}", hint, code))
    model = get(doc, "model.name")
    if isinstance(model, str) and model:
        call = lookup.train_models()
        if call.exit_code != 0:
            code, hint = lookup_failure(call)
            checks.append(
                rule("model-available", "fail", f"could not list Hosted Training models: {call.message}", hint, code)
            )
        else:
            data = call.data if isinstance(call.data, dict) else {}
            names = [m.get("name") for m in data.get("available_fft_models", []) if isinstance(m, dict)]
            if model in names:
                checks.append(rule("model-available", "pass", f"{model} is cached for Hosted Training"))
            elif data.get("on_demand"):
                checks.append(
                    rule(
                        "model-available",
                        "warn",
                        f"{model} is not among the cached models "
                        f"({len(names)} listed); an on-demand run downloads it at startup (billed time)",
                        "pick a model from `prime train models` for a warm start",
                    )
                )
            else:
                checks.append(
                    rule(
                        "model-available",
                        "fail",
                        f"{model} is not available for Hosted Training "
                        f"({len(names)} model(s) listed, no on-demand capacity)",
                        "pick one from `prime train models`",
                    )
                )
    return checks
