"""Validation of a prime-rl / Hosted Training config document: every rule in the order it runs.

``validate_document`` is pure and offline; the online rules (Hub environments, available models)
take a ``Lookup`` so tests and offline runs decide what answers them. The rules live by what they
check: ``rules_shape`` (strict TOML, the current shape, required keys, blocks Hosted Training
rejects), ``rules_run`` (batch and group sizes, learning rate, completion tokens, filtering),
``rules_envs`` (environment ids, the Hub and the model online), ``rules_secrets`` (secret values,
forwarded secrets, a judge's key and endpoint); ``document`` reads the config for all of them.
"""

from __future__ import annotations

from vlab.core.result import Check
from vlab.hosted.rules_envs import Lookup, check_env_ids, check_online
from vlab.hosted.rules_run import check_batch, check_filtering, check_learning_rate, check_tokens
from vlab.hosted.rules_secrets import check_judge, check_secrets
from vlab.hosted.rules_shape import check_hosted, check_required, check_shape, parse_strict

__all__ = ["Lookup", "parse_strict", "validate_document"]


def validate_document(
    doc: dict,
    *,
    text: str | None = None,
    target: str = "hosted",
    forward_env: list[str] | tuple[str, ...] = (),
    environ: dict[str, str] | None = None,
    lookup: Lookup | None = None,
    online: bool = False,
    skip_env_ids: set[str] | None = None,
) -> list[Check]:
    """Every rule for a plain (parsed) config; ``target`` is "hosted" or "prime-rl"."""
    checks: list[Check] = []
    if text is not None:
        parsed, parse_check = parse_strict(text)
        checks.append(parse_check)
        if parsed is None:
            return checks
        doc = parsed
    shape = check_shape(doc)
    checks += shape
    if any(c.id == "flat-shape" and c.status == "fail" for c in shape):
        return checks  # the other rules would only restate that the shape is wrong
    checks += check_required(doc, target)
    checks += check_batch(doc)
    checks += check_learning_rate(doc)
    checks += check_tokens(doc)
    checks += check_env_ids(doc, target)
    checks += check_filtering(doc)
    if target == "hosted":
        checks += check_hosted(doc)
    checks += check_secrets(doc, text, forward_env, environ)
    checks += check_judge(doc, target)
    if target == "hosted" or online:
        checks += check_online(doc, lookup if online else None, skip_env_ids)
    return checks
