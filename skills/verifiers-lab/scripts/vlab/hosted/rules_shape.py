"""Validation rules on a config's shape: strict TOML, the current prime-rl shape (no old flat keys, no
keys prime-rl does not know, no keys `prime train` drops), the keys a run needs (model, train sources,
max_steps) and the blocks Hosted Training rejects."""

from __future__ import annotations

import tomllib

from vlab.core.result import EXIT_USAGE, Check
from vlab.hosted.document import get, rule, train_sources
from vlab.hosted.schema import FLAT_TOP_LEVEL, HOSTED_DEPRECATED_ORCHESTRATOR_KEYS, schema_info, unknown_keys


def parse_strict(text: str, where: str = "config") -> tuple[dict | None, Check]:
    """Parse with the standard library's strict TOML parser (prime's own parser is lenient)."""
    try:
        return tomllib.loads(text), rule("toml-parse", "pass", f"{where} is valid TOML")
    except tomllib.TOMLDecodeError as exc:
        return None, rule(
            "toml-parse",
            "fail",
            f"{where} is not valid TOML: {exc}",
            "fix the line named above; `prime train` would read it leniently and send something else",
            EXIT_USAGE,
        )


def check_shape(doc: dict) -> list[Check]:
    checks = []
    flat = [k for k in FLAT_TOP_LEVEL if k in doc]
    if isinstance(doc.get("model"), str):
        flat.insert(0, "model")
    if flat:
        checks.append(
            rule(
                "flat-shape",
                "fail",
                "keys of the old flat Hosted Training shape: " + ", ".join(flat),
                "convert with --from-flat OLD.toml; `prime train` rejects this shape since prime 0.13",
            )
        )
    else:
        checks.append(rule("flat-shape", "pass", 'prime-rl native shape (no flat `model = "..."` or [[env]])'))
    info = schema_info()
    unknown = [u for u in unknown_keys(doc) if u.path.split(".")[0] not in flat]
    if unknown:
        parts = [u.path + (f" (did you mean {u.suggestion}?)" if u.suggestion else "") for u in unknown[:12]]
        more = f" and {len(unknown) - 12} more" if len(unknown) > 12 else ""
        checks.append(
            rule(
                "unknown-keys",
                "fail",
                f"{len(unknown)} key(s) prime-rl {info.prime_rl_version} does not know: " + "; ".join(parts) + more,
                f"rename or remove them (schema: prime-rl {info.prime_rl_version} @ "
                f"{info.prime_rl_commit[:12]}); prime-rl rejects extra keys",
            )
        )
    else:
        checks.append(
            rule(
                "unknown-keys",
                "pass",
                f"every key is known to prime-rl {info.prime_rl_version} (@{info.prime_rl_commit[:12]})",
            )
        )
    orch = doc.get("orchestrator") if isinstance(doc.get("orchestrator"), dict) else {}
    deprecated = [k for k in HOSTED_DEPRECATED_ORCHESTRATOR_KEYS if k in orch]
    if deprecated:
        checks.append(
            rule(
                "deprecated-keys",
                "warn",
                "orchestrator keys `prime train` drops as deprecated: " + ", ".join(deprecated),
                "remove them; use orchestrator.train.filter_zero_advantages "
                "and per-source curriculum instead of [buffer]",
            )
        )
    return checks


def check_required(doc: dict, target: str) -> list[Check]:
    checks = []
    model = get(doc, "model.name")
    if isinstance(model, str) and model.strip():
        checks.append(rule("model", "pass", f"model {model}"))
    else:
        checks.append(rule("model", "fail", "no [model] name", 'set [model] name = "ORG/MODEL" (or pass --model)'))
    sources = train_sources(doc)
    if sources:
        checks.append(rule("train-sources", "pass", f"{len(sources)} train source(s)"))
    else:
        checks.append(
            rule(
                "train-sources",
                "fail",
                "no [[orchestrator.train.source]]",
                "add one per environment (or pass --env OWNER/NAME)",
            )
        )
    steps = doc.get("max_steps", get(doc, "orchestrator.max_steps"))
    if isinstance(steps, int) and steps > 0:
        checks.append(rule("max-steps", "pass", f"max_steps = {steps}"))
        if steps > 1000:
            checks.append(
                rule(
                    "first-run-size",
                    "warn",
                    f"max_steps = {steps} is long for a first run",
                    "run 20-100 steps first and check the reward rises before paying for a long run",
                )
            )
    elif steps is None:
        status = "fail" if target == "hosted" else "warn"
        checks.append(
            rule(
                "max-steps",
                status,
                "no max_steps: the run does not stop on its own",
                "set max_steps (e.g. 50 for a first run); a hosted run bills until it stops",
            )
        )
    else:
        checks.append(
            rule("max-steps", "fail", f"max_steps = {steps!r} is not a positive integer", "set max_steps = 50")
        )
    return checks


def check_hosted(doc: dict) -> list[Check]:
    checks = []
    if "k8s" in doc:
        checks.append(
            rule(
                "hosted-compat",
                "fail",
                "[k8s] is not accepted by Hosted Training",
                "remove [k8s]; the platform places the run",
            )
        )
    if doc.get("clean") is True:
        checks.append(rule("hosted-compat", "fail", "clean = true is not accepted by Hosted Training", "remove clean"))
    dep = doc.get("deployment") if isinstance(doc.get("deployment"), dict) else {}
    if dep.get("type") == "multi_node" and "slurm" not in doc:
        checks.append(
            rule(
                "deployment",
                "fail",
                "multi_node deployment without [slurm]",
                'use [deployment] type = "single_node" or add [slurm]',
            )
        )
    if not checks:
        checks.append(rule("hosted-compat", "pass", "no blocks Hosted Training rejects ([k8s], clean = true)"))
    return checks
