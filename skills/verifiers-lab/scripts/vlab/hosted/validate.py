"""Validation rules for a prime-rl / Hosted Training config document; each rule is a check with a hint.

``validate_document`` is pure and offline; the online rules (Hub environments, available models)
take a lookup object so tests and offline runs decide what answers them.

Kept as one module (about 680 lines): it is a flat list of short, independent rule functions
that ``validate_document`` runs in order over the same document accessors; the list reads best
in one place, next to the order it runs in.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from vlab.core.result import EXIT_EXTERNAL, EXIT_FAIL, EXIT_PREREQ, EXIT_USAGE, Check
from vlab.core.secrets import looks_like_secret
from vlab.hosted.schema import FLAT_TOP_LEVEL, HOSTED_DEPRECATED_ORCHESTRATOR_KEYS, schema_info, unknown_keys

# Environment id: name, or owner/name, optionally @version (the Hub's and verifiers' loader's forms).
ENV_ID_RE = re.compile(
    r"^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,99}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,99}(?:@[A-Za-z0-9][A-Za-z0-9.+_-]{0,63})?$"
)

# Usual learning-rate ranges (prime-rl examples and Hosted Training docs): full fine-tuning RL
# runs at ~1e-7..1e-5 (prime-rl default 1e-6); LoRA at ~1e-6..5e-4 (examples 1e-5..1e-4).
LR_RANGES = {"lora": (1e-6, 5e-4), "full": (1e-7, 1e-5)}
LR_DIVERGE = {"lora": 1e-2, "full": 1e-3}  # above this a run almost surely diverges: fail

PRIME_RL_DEFAULT_SEQ_LEN = 2048
SECRET_KEY_NAMES = re.compile(r"(api[_-]?key|token|secret|password|passwd)$", re.I)


@dataclass
class Lookup:
    """Answers for the online rules; each returns a vlab.hosted.prime.PrimeCall-like object (exit_code, state, message, data)."""

    env_info: Callable[[str], Any]
    train_models: Callable[[], Any]


def _c(id: str, status: str, message: str, hint: str = "", exit_code: int = EXIT_FAIL) -> Check:
    return Check(id, status, message, hint, exit_code)


def parse_strict(text: str, where: str = "config") -> tuple[dict | None, Check]:
    """Parse with the standard library's strict TOML parser (prime's own parser is lenient)."""
    try:
        return tomllib.loads(text), _c("toml-parse", "pass", f"{where} is valid TOML")
    except tomllib.TOMLDecodeError as exc:
        return None, _c(
            "toml-parse",
            "fail",
            f"{where} is not valid TOML: {exc}",
            "fix the line named above; `prime train` would read it leniently and send something else",
            EXIT_USAGE,
        )


def _get(doc: dict, dotted: str, default: Any = None) -> Any:
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def train_sources(doc: dict) -> list[dict]:
    sources = _get(doc, "orchestrator.train.source", [])
    return [s for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []


def eval_sources(doc: dict) -> list[dict]:
    sources = _get(doc, "orchestrator.eval.source", [])
    return [s for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []


def source_env_ids(doc: dict) -> list[tuple[str, Any]]:
    """(where, taskset id) for every train and eval source."""
    out = []
    for kind, sources in (("train", train_sources(doc)), ("eval", eval_sources(doc))):
        for i, s in enumerate(sources):
            out.append((f"orchestrator.{kind}.source[{i}]", _get(s, "env.taskset.id")))
    return out


def is_lora(doc: dict) -> bool:
    return isinstance(_get(doc, "trainer.model.lora"), dict)


def _walk_strings(value: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk_strings(v, f"{path}[{i}]")
    else:
        yield path, value


def check_shape(doc: dict) -> list[Check]:
    checks = []
    flat = [k for k in FLAT_TOP_LEVEL if k in doc]
    if isinstance(doc.get("model"), str):
        flat.insert(0, "model")
    if flat:
        checks.append(
            _c(
                "flat-shape",
                "fail",
                "keys of the old flat Hosted Training shape: " + ", ".join(flat),
                "convert with --from-flat OLD.toml; `prime train` rejects this shape since prime 0.13",
            )
        )
    else:
        checks.append(_c("flat-shape", "pass", 'prime-rl native shape (no flat `model = "..."` or [[env]])'))
    info = schema_info()
    unknown = [u for u in unknown_keys(doc) if u.path.split(".")[0] not in flat]
    if unknown:
        parts = [u.path + (f" (did you mean {u.suggestion}?)" if u.suggestion else "") for u in unknown[:12]]
        more = f" and {len(unknown) - 12} more" if len(unknown) > 12 else ""
        checks.append(
            _c(
                "unknown-keys",
                "fail",
                f"{len(unknown)} key(s) prime-rl {info.prime_rl_version} does not know: " + "; ".join(parts) + more,
                f"rename or remove them (schema: prime-rl {info.prime_rl_version} @ "
                f"{info.prime_rl_commit[:12]}); prime-rl rejects extra keys",
            )
        )
    else:
        checks.append(
            _c(
                "unknown-keys",
                "pass",
                f"every key is known to prime-rl {info.prime_rl_version} (@{info.prime_rl_commit[:12]})",
            )
        )
    orch = doc.get("orchestrator") if isinstance(doc.get("orchestrator"), dict) else {}
    deprecated = [k for k in HOSTED_DEPRECATED_ORCHESTRATOR_KEYS if k in orch]
    if deprecated:
        checks.append(
            _c(
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
    model = _get(doc, "model.name")
    if isinstance(model, str) and model.strip():
        checks.append(_c("model", "pass", f"model {model}"))
    else:
        checks.append(_c("model", "fail", "no [model] name", 'set [model] name = "ORG/MODEL" (or pass --model)'))
    sources = train_sources(doc)
    if sources:
        checks.append(_c("train-sources", "pass", f"{len(sources)} train source(s)"))
    else:
        checks.append(
            _c(
                "train-sources",
                "fail",
                "no [[orchestrator.train.source]]",
                "add one per environment (or pass --env OWNER/NAME)",
            )
        )
    steps = doc.get("max_steps", _get(doc, "orchestrator.max_steps"))
    if isinstance(steps, int) and steps > 0:
        checks.append(_c("max-steps", "pass", f"max_steps = {steps}"))
        if steps > 1000:
            checks.append(
                _c(
                    "first-run-size",
                    "warn",
                    f"max_steps = {steps} is long for a first run",
                    "run 20-100 steps first and check the reward rises before paying for a long run",
                )
            )
    elif steps is None:
        status = "fail" if target == "hosted" else "warn"
        checks.append(
            _c(
                "max-steps",
                status,
                "no max_steps: the run does not stop on its own",
                "set max_steps (e.g. 50 for a first run); a hosted run bills until it stops",
            )
        )
    else:
        checks.append(_c("max-steps", "fail", f"max_steps = {steps!r} is not a positive integer", "set max_steps = 50"))
    return checks


def check_batch(doc: dict) -> list[Check]:
    checks = []
    batch = _get(doc, "orchestrator.batch_size")
    group = _get(doc, "orchestrator.group_size", 1)
    if not isinstance(group, int) or isinstance(group, bool):
        return [
            _c("group-size", "fail", f"orchestrator.group_size = {group!r} is not an integer", "set group_size = 8")
        ]
    if group < 2:
        checks.append(
            _c(
                "group-size",
                "fail",
                f"group_size = {group}: a group of one has zero advantage, so nothing is learned",
                "set orchestrator.group_size = 8 (16 for long-horizon tasks)",
            )
        )
    elif group < 8:
        checks.append(
            _c(
                "group-size",
                "warn",
                f"group_size = {group} gives noisy group-relative advantages",
                "8 is the usual minimum; 16 for long-horizon or mostly-failing tasks",
            )
        )
    elif group > 16:
        checks.append(
            _c(
                "group-size",
                "warn",
                f"group_size = {group} is large for a first run",
                "rules of thumb: quick tests group 8 / batch 128; longer-horizon group 16 / batch 512",
            )
        )
    else:
        checks.append(_c("group-size", "pass", f"group_size = {group}"))
    if batch is None:
        if _get(doc, "orchestrator.token_batch_size") is None:
            checks.append(
                _c(
                    "batch-size",
                    "fail",
                    "no orchestrator.batch_size (or token_batch_size)",
                    "set orchestrator.batch_size = 128",
                )
            )
        return checks
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        checks.append(
            _c(
                "batch-size",
                "fail",
                f"orchestrator.batch_size = {batch!r} is not a positive integer",
                "set orchestrator.batch_size = 128",
            )
        )
        return checks
    groups = [("orchestrator", group)] + [
        (f"source {s.get('name', i)!r}", s["group_size"])
        for i, s in enumerate(train_sources(doc))
        if isinstance(s.get("group_size"), int)
    ]
    bad = [(w, g) for w, g in groups if g >= 1 and batch % g]
    if bad:
        checks.append(
            _c(
                "batch-divisible",
                "fail",
                "batch_size "
                + str(batch)
                + " is not divisible by group_size "
                + ", ".join(f"{g} ({w})" for w, g in bad),
                f"use a multiple, e.g. batch_size = {max(g for _, g in bad) * max(1, batch // max(g for _, g in bad))}",
            )
        )
    else:
        checks.append(_c("batch-divisible", "pass", f"batch_size {batch} = {batch // max(group, 1)} groups of {group}"))
    if batch > 512:
        checks.append(
            _c(
                "batch-size",
                "warn",
                f"batch_size = {batch} is large for a first run",
                "rules of thumb: quick tests batch 128 or lower; longer-horizon 512",
            )
        )
    return checks


def check_learning_rate(doc: dict) -> list[Check]:
    lr = _get(doc, "trainer.optim.lr")
    kind = "lora" if is_lora(doc) else "full"
    label = "LoRA" if kind == "lora" else "full fine-tuning"
    if lr is None:
        return [
            _c(
                "learning-rate",
                "pass" if kind == "full" else "warn",
                f"trainer.optim.lr unset: prime-rl's default 1e-6 ({label})",
                "" if kind == "full" else "1e-6 is low for LoRA; LoRA runs usually take 1e-5 to 1e-4",
            )
        ]
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or lr <= 0:
        return [_c("learning-rate", "fail", f"trainer.optim.lr = {lr!r} is not a positive number", "set lr = 1e-6")]
    low, high = LR_RANGES[kind]
    if lr > LR_DIVERGE[kind]:
        return [
            _c(
                "learning-rate",
                "fail",
                f"lr = {lr:g} for {label} will almost surely diverge",
                f"use {low:g} to {high:g} for {label}",
            )
        ]
    if lr < low or lr > high:
        why = " (1e-4-ish rates are LoRA rates; full fine-tuning needs ~1e-6)" if kind == "full" and lr > high else ""
        return [
            _c(
                "learning-rate",
                "warn",
                f"lr = {lr:g} is outside the usual {low:g}..{high:g} for {label}{why}",
                "a conservative first run stays inside the usual range",
            )
        ]
    return [_c("learning-rate", "pass", f"lr = {lr:g} is in the usual range for {label}")]


def check_tokens(doc: dict) -> list[Check]:
    seq_len = doc.get("seq_len", _get(doc, "orchestrator.seq_len", PRIME_RL_DEFAULT_SEQ_LEN))
    if not isinstance(seq_len, int) or seq_len < 1:
        return [
            _c("completion-tokens", "fail", f"seq_len = {seq_len!r} is not a positive integer", "set seq_len = 2048")
        ]
    found = [("orchestrator.train.sampling", _get(doc, "orchestrator.train.sampling.max_completion_tokens"))]
    found += [
        (f"orchestrator.train.source[{i}].sampling", _get(s, "sampling.max_completion_tokens"))
        for i, s in enumerate(train_sources(doc))
    ]
    found = [(w, v) for w, v in found if v is not None]
    if not found:
        return [
            _c(
                "completion-tokens",
                "warn",
                "no max_completion_tokens: completions may run to the sequence limit",
                "set [orchestrator.train.sampling] max_completion_tokens (e.g. 512)",
            )
        ]
    checks = []
    for where, value in found:
        if not isinstance(value, int) or value < 1:
            checks.append(
                _c(
                    "completion-tokens",
                    "fail",
                    f"{where}.max_completion_tokens = {value!r} is not a positive integer",
                    "set it to e.g. 512",
                )
            )
        elif value >= seq_len:
            checks.append(
                _c(
                    "completion-tokens",
                    "fail",
                    f"{where}.max_completion_tokens = {value} leaves no room for the prompt in seq_len = {seq_len}",
                    f"raise seq_len above {value} + the prompt length",
                )
            )
        elif value > 0.75 * seq_len:
            checks.append(
                _c(
                    "completion-tokens",
                    "warn",
                    f"{where}.max_completion_tokens = {value} leaves "
                    f"{seq_len - value} tokens of seq_len = {seq_len} for the prompt",
                    "check your longest prompt fits, or raise seq_len",
                )
            )
        else:
            checks.append(
                _c("completion-tokens", "pass", f"max_completion_tokens = {value} within seq_len = {seq_len}")
            )
    return checks


def check_env_ids(doc: dict, target: str) -> list[Check]:
    checks = []
    for where, env_id in source_env_ids(doc):
        if not isinstance(env_id, str) or not env_id:
            checks.append(
                _c(
                    "env-id",
                    "fail",
                    f"{where} has no env.taskset.id",
                    f'add [{where.split("[")[0]}.env.taskset] id = "owner/name"',
                )
            )
        elif not ENV_ID_RE.match(env_id):
            checks.append(
                _c(
                    "env-id",
                    "fail",
                    f"{where}: {env_id!r} is not an environment id",
                    "use owner/name (Environments Hub) or owner/name@version",
                )
            )
        elif "/" not in env_id and target == "hosted":
            checks.append(
                _c(
                    "env-id",
                    "warn",
                    f"{where}: {env_id!r} has no owner, so the Hub cannot resolve it",
                    "use the Hub id owner/name (see `prime env info OWNER/NAME`)",
                )
            )
        else:
            checks.append(_c("env-id", "pass", f"{where}: {env_id}"))
    ratios = [s.get("ratio") for s in train_sources(doc)]
    if len(ratios) > 1 and any(r is not None and (not isinstance(r, (int, float)) or r <= 0) for r in ratios):
        checks.append(
            _c(
                "source-ratio",
                "fail",
                "a train source ratio is not a positive number",
                "ratios are relative weights > 0, e.g. 0.7 and 0.3",
            )
        )
    names = [s.get("name") for s in train_sources(doc)]
    if len(names) != len(set(names)):
        checks.append(
            _c(
                "source-names",
                "fail",
                "two train sources share a name",
                "give each [[orchestrator.train.source]] its own name",
            )
        )
    return checks


def check_filtering(doc: dict) -> list[Check]:
    value = _get(doc, "orchestrator.train.filter_zero_advantages")
    if value is False:
        return [
            _c(
                "difficulty-filtering",
                "warn",
                "filter_zero_advantages = false: groups whose rollouts all score "
                "the same (all 0 or all 1) still fill the batch but teach nothing",
                "keep orchestrator.train.filter_zero_advantages = true, especially for mostly binary rewards",
            )
        ]
    return [
        _c(
            "difficulty-filtering",
            "pass",
            "groups with zero advantage are filtered out" + (" (prime-rl default)" if value is None else ""),
        )
    ]


def check_hosted(doc: dict) -> list[Check]:
    checks = []
    if "k8s" in doc:
        checks.append(
            _c(
                "hosted-compat",
                "fail",
                "[k8s] is not accepted by Hosted Training",
                "remove [k8s]; the platform places the run",
            )
        )
    if doc.get("clean") is True:
        checks.append(_c("hosted-compat", "fail", "clean = true is not accepted by Hosted Training", "remove clean"))
    dep = doc.get("deployment") if isinstance(doc.get("deployment"), dict) else {}
    if dep.get("type") == "multi_node" and "slurm" not in doc:
        checks.append(
            _c(
                "deployment",
                "fail",
                "multi_node deployment without [slurm]",
                'use [deployment] type = "single_node" or add [slurm]',
            )
        )
    if not checks:
        checks.append(_c("hosted-compat", "pass", "no blocks Hosted Training rejects ([k8s], clean = true)"))
    return checks


def check_secrets(
    doc: dict, text: str | None, forward_env: list[str] | tuple[str, ...], environ: dict[str, str] | None = None
) -> list[Check]:
    from vlab.hosted.prime import FORWARDABLE_SECRETS

    checks = []
    leaks = []
    for path, value in _walk_strings(doc):
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
            _c(
                "no-secrets",
                "fail",
                "secret value(s) in the config: " + ", ".join(leaks[:8]),
                "remove them; forward WANDB_API_KEY / HF_TOKEN with -e (--forward-env NAME), never in the file",
            )
        )
    else:
        checks.append(_c("no-secrets", "pass", "no secret values in the config"))
    bad = [n for n in forward_env if n not in FORWARDABLE_SECRETS]
    if bad:
        checks.append(
            _c(
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
                _c(
                    "forward-env",
                    "fail",
                    "asked to forward " + ", ".join(missing) + " but it is not set here",
                    "export it in this shell first (its value is read by prime, never printed)",
                    EXIT_PREREQ,
                )
            )
    if _get(doc, "monitors.wandb") is not None and "WANDB_API_KEY" not in forward_env:
        checks.append(
            _c(
                "forward-env",
                "warn",
                "[monitors.wandb] is set but WANDB_API_KEY is not forwarded",
                "pass --forward-env WANDB_API_KEY (sent with `prime train -e`), or W&B logging fails in the run",
            )
        )
    elif not bad and forward_env:
        checks.append(_c("forward-env", "pass", "forwarded with -e: " + ", ".join(forward_env)))
    return checks


def check_online(doc: dict, lookup: Lookup | None, skip_env_ids: set[str] | None = None) -> list[Check]:
    checks = []
    if lookup is None:
        checks.append(
            _c(
                "env-hub",
                "skip",
                "offline: environments not looked up on the Hub",
                "run without --offline to confirm each environment exists",
            )
        )
        checks.append(
            _c(
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
            checks.append(_c("env-hub", "pass", f"{env_id} confirmed on the Hub"))
            continue
        call = lookup.env_info(env_id)
        if call.exit_code == 0:
            checks.append(_c("env-hub", "pass", f"{env_id} exists on the Environments Hub"))
        elif call.state == "not_found":
            checks.append(
                _c(
                    "env-hub",
                    "fail",
                    f"{env_id} is not on the Environments Hub ({where})",
                    "check the spelling with `prime env list`, or push it with `prime env push`",
                )
            )
        else:
            # A network or login failure says nothing about whether the environment exists.
            checks.append(
                _c(
                    "env-hub",
                    "fail",
                    f"could not look up {env_id}: {call.message}",
                    "check the network and `prime whoami`, or pass --offline",
                    call.exit_code or EXIT_EXTERNAL,
                )
            )
    model = _get(doc, "model.name")
    if isinstance(model, str) and model:
        call = lookup.train_models()
        if call.exit_code != 0:
            checks.append(
                _c(
                    "model-available",
                    "fail",
                    f"could not list Hosted Training models: {call.message}",
                    "check the network and `prime whoami`, or pass --offline",
                    call.exit_code or EXIT_EXTERNAL,
                )
            )
        else:
            data = call.data if isinstance(call.data, dict) else {}
            names = [m.get("name") for m in data.get("available_fft_models", []) if isinstance(m, dict)]
            if model in names:
                checks.append(_c("model-available", "pass", f"{model} is cached for Hosted Training"))
            elif data.get("on_demand"):
                checks.append(
                    _c(
                        "model-available",
                        "warn",
                        f"{model} is not among the cached models "
                        f"({len(names)} listed); an on-demand run downloads it at startup (billed time)",
                        "pick a model from `prime train models` for a warm start",
                    )
                )
            else:
                checks.append(
                    _c(
                        "model-available",
                        "fail",
                        f"{model} is not available for Hosted Training "
                        f"({len(names)} model(s) listed, no on-demand capacity)",
                        "pick one from `prime train models`",
                    )
                )
    return checks


# An environment's judge (the judge templates' judge_api_key_var / judge_base_url; any *_key_var, *_base_url).
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOOPBACK = re.compile(r"^\s*https?://(?:[^/@]*@)?(?:localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1\])(?:[:/]|$)", re.I)


def key_var_names(doc: dict) -> list[str]:
    """The environment-variable NAMES an environment reads its judge's (or any) API key from."""
    return sorted({v for p, v in _walk_strings(doc) if p.rsplit(".", 1)[-1].endswith("_key_var") and _is_name(v)})


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_VAR_NAME.fullmatch(value))


def check_judge(doc: dict, target: str) -> list[Check]:
    """A judge's key goes by variable name only; a hosted run cannot reach a judge on this machine."""
    checks = []
    named = [(p, v) for p, v in _walk_strings(doc) if p.rsplit(".", 1)[-1].endswith("_key_var")]
    bad = [p for p, v in named if not _is_name(v)]  # the value is never shown: it may be the key itself
    if bad:
        checks.append(
            _c(
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
            _c(
                "judge-key",
                "pass",
                f"the judge's key goes by variable name only: {', '.join(key_var_names(doc))}; {where}",
            )
        )
    local = [  # an environment's argument only (a source's env); the trainer's own clients are not judged here
        p
        for p, v in _walk_strings(doc)
        if ".source[" in p and p.rsplit(".", 1)[-1].endswith("base_url") and _LOOPBACK.match(str(v))
    ]
    if local and target == "hosted":
        checks.append(
            _c(
                "judge-endpoint",
                "fail",
                f"{', '.join(local)} points at this machine (loopback): a hosted run cannot reach it",
                "give the judge's public endpoint, e.g. --env-arg judge_base_url=https://api.openai.com/v1",
            )
        )
    return checks


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
