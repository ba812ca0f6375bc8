"""Config deltas: for each finding, changes in the config's own current keys (old -> new, why, evidence).

Two flavours of keys: prime-rl / Hosted Training (``trainer.optim.lr``, ``orchestrator.group_size``,
...; one schema, ``vlab.hosted``) and local_train's (``optim.lr``, ``group_size``, ...;
``vlab.train.config``). Old values come from ``--config``, else from the run's own config
(prime-rl's ``configs/rl.json``, the hosted run's record), else from what the run logged
(local_train logs ``lr`` and the batch), else the documented default, and each delta says which.
``write_config`` applies the deltas to ``--config`` with tomlkit (comments and order kept) and
validates the result with the schema submit_training uses (or local_train's own loader).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlab.core.invocation import command
from vlab.core.result import Check, UsageError
from vlab.diagnose.signatures import Finding
from vlab.hosted.builder import get_path

# knob -> key path, per flavour ("hosted" uses the prime-rl keys).
KEYS: dict[str, dict[str, str]] = {
    "prime-rl": {
        "lr": "trainer.optim.lr",
        "batch_size": "orchestrator.batch_size",
        "group_size": "orchestrator.group_size",
        "max_tokens": "orchestrator.train.sampling.max_completion_tokens",
        "temperature": "orchestrator.train.sampling.temperature",
        "kl_tau": "trainer.loss.kl_tau",
        "mask": "trainer.loss.dppo_mask_low",
        "max_norm": "trainer.optim.max_norm",
        "filter_zero": "orchestrator.train.filter_zero_advantages",
        "max_off_policy": "orchestrator.max_off_policy_steps",
        "max_steps": "max_steps",
        "seq_len": "seq_len",
    },
    "local": {
        "lr": "optim.lr",
        "batch_size": "batch_size",
        "group_size": "group_size",
        "max_tokens": "sampling.max_completion_tokens",
        "temperature": "sampling.temperature",
        "kl_tau": "loss.kl_tau",
        "mask": "loss.dppo_mask_low",
        "max_norm": "optim.max_norm",
        "filter_zero": "filter_zero_advantages",
        "max_steps": "max_steps",
    },
}
# Where else a resolved prime-rl config (configs/rl.json) keeps a shared value.
FALLBACK_KEYS = {"max_steps": ["orchestrator.max_steps"], "seq_len": ["orchestrator.seq_len", "trainer.model.seq_len"]}


def _defaults(flavour: str) -> dict[str, Any]:
    if flavour == "local":
        from vlab.train.config import TrainConfig

        c = TrainConfig()
        return {
            "lr": c.optim.lr,
            "batch_size": c.batch_size,
            "group_size": c.group_size,
            "max_tokens": c.sampling.max_completion_tokens,
            "temperature": c.sampling.temperature,
            "kl_tau": c.loss.kl_tau,
            "mask": c.loss.dppo_mask_low,
            "max_norm": c.optim.max_norm,
            "filter_zero": c.filter_zero_advantages,
            "max_steps": c.max_steps,
        }
    from vlab.hosted.document import PRIME_RL_DEFAULT_SEQ_LEN

    # prime-rl's own defaults (packages/prime-rl-configs, the commit vlab.hosted.schema follows)
    return {
        "lr": 1e-6,
        "temperature": 1.0,
        "kl_tau": 1e-3,
        "mask": 0.2,
        "max_norm": 1.0,
        "filter_zero": True,
        "max_off_policy": 8,
        "seq_len": PRIME_RL_DEFAULT_SEQ_LEN,
    }


def current_value(cfg: dict | None, flavour: str, knob: str) -> tuple[Any, str]:
    """(value, where it came from) for a knob: the config, else the documented default, else unknown."""
    key = KEYS["local" if flavour == "local" else "prime-rl"].get(knob)
    if key is None:
        return None, "n/a"
    if cfg:
        for k in [key, *FALLBACK_KEYS.get(knob, [])]:
            v = get_path(cfg, k)
            if v is not None:
                return v, "config"
    d = _defaults("local" if flavour == "local" else "prime-rl")
    if knob in d:
        return d[knob], "default"
    return None, "unknown"


@dataclass
class Delta:
    key: str
    old: Any
    new: Any
    reason: str
    finding: str
    evidence: str
    old_from: str  # config | run config | logged | default | unknown
    also: list[str] = field(default_factory=list)  # other findings that asked for this key

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "old": self.old,
            "new": self.new,
            "old_from": self.old_from,
            "reason": self.reason,
            "finding": self.finding,
            "evidence": self.evidence,
            **({"also_wanted_by": self.also} if self.also else {}),
        }

    def text(self) -> str:
        old = "unset" if self.old is None else _show(self.old)
        src = "" if self.old_from == "config" else f" ({self.old_from})"
        return f"{self.key}: {old}{src} -> {_show(self.new)}: {self.reason}"


def _show(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v).lower() if isinstance(v, bool) else str(v)


# finding id -> [(knob, op, argument, reason)]; op: div, div_sudden, mul, mul_if_truncated, raise_to, at_most,
# on, best_eval, converged_at (see _apply)
RULES: dict[str, list[tuple[str, str, Any, str]]] = {
    "non-finite": [
        ("lr", "div", 10, "NaN/inf values usually mean the update was too large: cut the learning rate 10x"),
        ("max_norm", "at_most", 1.0, "clip gradients so one bad batch cannot blow up the weights"),
    ],
    "reward-collapse": [
        ("lr", "div", 4, "the reward rose then collapsed: the policy stepped too far; a smaller learning rate"),
        ("kl_tau", "raise_to", 1e-2, "a stronger KL term keeps the policy near where it learned"),
        ("mask", "div", 2, "tighter trainer/sampler ratio masking drops the most off-policy tokens"),
    ],
    "reward-unstable": [
        ("lr", "div", 2, "swings beyond the group noise: a smaller learning rate"),
        ("batch_size", "mul", 2, "more rollouts per step average out the update"),
        ("max_off_policy", "div", 2, "fewer steps of staleness (async level) between sampler and trainer"),
    ],
    "entropy-collapse": [
        ("lr", "div_sudden", 4, "the policy became near-deterministic without gaining reward: a smaller learning rate"),
        ("temperature", "raise_to", 1.0, "sample at temperature 1.0 (the policy's own distribution)"),
        ("kl_tau", "raise_to", 1e-2, "a stronger KL term keeps the policy from collapsing onto few tokens"),
    ],
    "grad-spikes": [
        ("max_norm", "at_most", 1.0, "clip gradient norms at 1.0"),
        ("lr", "div", 2, "spikes precede divergence: a smaller learning rate"),
    ],
    "reward-flat-low": [
        ("group_size", "mul", 2, "more rollouts per prompt give a rare success a chance to appear in a group"),
        ("max_tokens", "mul_if_truncated", 2, "truncated rollouts usually score 0: allow longer completions"),
    ],
    "reward-saturated": [
        ("group_size", "mul", 2, "a larger group is likelier to hold one of the rare failures, so it carries signal"),
        ("filter_zero", "on", True, "groups that all pass teach nothing: drop them from the batch"),
    ],
    "zero-advantage": [
        ("group_size", "mul", 2, "a larger group is likelier to hold both a success and a failure"),
        ("filter_zero", "on", True, "drop groups whose rewards are all equal (they teach nothing)"),
    ],
    "truncation": [
        ("max_tokens", "mul", 2, "rollouts run out of tokens: allow longer completions"),
    ],
    "length-explode": [
        ("lr", "div", 2, "completions grow without bound: slow the drift down"),
        ("kl_tau", "raise_to", 1e-2, "a stronger KL term holds the length near the start"),
    ],
    "length-collapse": [
        ("kl_tau", "raise_to", 1e-2, "completions shrink: keep the policy near the start while you check the reward"),
    ],
    "eval-divergence": [
        ("max_steps", "best_eval", None, "eval reward peaked earlier: stop at the best eval step"),
        ("lr", "div", 2, "train reward rises without eval: learn more slowly"),
    ],
    "converged": [
        ("max_steps", "converged_at", None, "the reward stops improving here; later steps cost without teaching"),
    ],
}
NEXT_STEPS = {
    "reward-flat-low": f"{command('test_reward')} ENV --json  # prove the reward fires on a correct answer "
    "(and --completions on this run's rollouts) before changing hyperparameters",
    "reward-saturated": "use harder data (or a smaller model): check_reward_distribution on a fresh eval "
    "should show a pass rate between 10% and 80%",
    "zero-advantage": "difficulty filtering: per-source curriculum (advantage_range) or pre-filter prompts the "
    "baseline solves 10%-90% of the time",
    "rollout-errors": "read the environment's errors (prime train logs RUN_ID --env NAME, or the rollouts' error "
    "field) and reproduce them with test_reward; no config change fixes them",
    "judge-errors": "read the failed rollouts' judge replies (the error field: refusal or no verdict line); check the "
    f"judge model, prompt and verdict format with {command('test_reward')} ENV --judge stub, then against the real "
    "judge (--judge-base-url); no training config change fixes them",
    "throughput-drop": "read the logs for retries, timeouts or a slow environment (prime train logs RUN_ID); "
    "no config change is implied",
    "turn-limit": "rollouts ran out of turns: raise the environment's max_turns (--env-arg max_turns=N) if the model "
    "needs more tool calls, or fix the tool or prompt that keeps it calling; seq_len must hold the extra turns",
    "length-collapse": "check the reward does not pay for short or empty answers: "
    f"{command('test_reward')} ENV --json (its hacking probes)",
    "length-explode": "check the reward does not pay for length (test_reward's probes)",
}


def _apply(op: str, arg: Any, old: Any, finding: Finding, ctx: dict) -> Any:
    num = isinstance(old, (int, float)) and not isinstance(old, bool)
    if op == "div_sudden":  # a one-step collapse: a 10x smaller rate, else 4x
        op, arg = "div", 10 if finding.evidence.get("sudden_drops") else arg
    if op == "div" and num:
        new = old / arg
        return int(max(1, round(new))) if isinstance(old, int) else float(f"{new:.3g}")
    if op in ("mul", "mul_if_truncated") and num:
        if op == "mul_if_truncated" and not ctx.get("truncated"):
            return None
        return int(old * arg) if isinstance(old, int) else old * arg
    if op == "raise_to":
        return arg if (not num or old < arg) else None
    if op == "at_most":
        return arg if (old is None or not num or old <= 0 or old > arg) else None
    if op == "on":
        return True if old is not True else None
    if op == "best_eval":  # only when the eval peaked after its first point
        best, first = finding.evidence.get("best_eval_step"), (finding.evidence.get("eval_steps") or [None])[0]
        return best if best is not None and best != first else None
    if op == "converged_at":
        step = finding.steps[0] if finding.steps else None
        return int(math.ceil((step + 2) / 5) * 5) if step else None
    return None


def propose(
    findings: list[Finding], flavour: str, cfg: dict | None, logged: dict[str, Any], cfg_from: str = "config"
) -> list[Delta]:
    """Deltas for the findings, most fundamental cause first; one delta per key."""
    keys = KEYS["local" if flavour == "local" else "prime-rl"]
    ctx = {"truncated": any(f.id == "truncation" and f.status in ("fail", "warn") for f in findings)}
    by_key: dict[str, Delta] = {}
    for f in findings:
        if f.follows or (f.status == "pass" and f.id != "converged"):
            continue
        for knob, op, arg, reason in RULES.get(f.id, []):
            key = keys.get(knob)
            if key is None:
                continue
            if key in by_key:
                if f.id not in by_key[key].also and by_key[key].finding != f.id:
                    by_key[key].also.append(f.id)
                continue
            old, src = current_value(cfg, flavour, knob)
            if src == "config":
                src = cfg_from
            if knob in logged and (src in ("default", "unknown")):
                old, src = logged[knob], "logged"
            new = _apply(op, arg, old, f, ctx)
            if new is None or new == old:
                continue
            by_key[key] = Delta(key, old, new, reason, f.id, f.message, src)
    _keep_batch_divisible(by_key, keys, flavour, cfg, logged, cfg_from)
    return list(by_key.values())


def _keep_batch_divisible(by_key, keys, flavour, cfg, logged, cfg_from) -> None:
    """A larger group keeps the prompts per step: batch_size grows with it (and stays divisible)."""
    gk, bk = keys["group_size"], keys["batch_size"]
    group = by_key.get(gk)
    old_b, src = current_value(cfg, flavour, "batch_size")
    if src in ("default", "unknown") and "batch_size" in logged:
        old_b, src = logged["batch_size"], "logged"
    elif src == "config":
        src = cfg_from
    if not isinstance(old_b, int):
        return
    if group is not None and isinstance(group.old, int) and isinstance(group.new, int):
        want = old_b * group.new // max(1, group.old)
        if bk in by_key and isinstance(by_key[bk].new, int):
            want = max(want, by_key[bk].new)
        want = int(math.ceil(want / group.new) * group.new)
        if want != old_b:
            reason = f"keeps {old_b // max(1, group.old)} prompts per step with group_size {group.new} (divisible)"
            by_key[bk] = Delta(bk, old_b, want, reason, group.finding, group.evidence, src)


def logged_values(series) -> dict[str, Any]:
    """What the run logged about its own settings (local_train logs lr and the rollouts per step)."""
    out: dict[str, Any] = {}
    lr = series.col("lr")
    if np.isfinite(lr).any():
        out["lr"] = float(lr[np.isfinite(lr)][-1])
    if isinstance(series.info.get("batch_size"), int):
        out["batch_size"] = series.info["batch_size"]
    for knob in ("group_size", "max_steps"):
        if isinstance(series.info.get(knob), int):
            out[knob] = series.info[knob]
    return out


# -- reading and writing the config ---------------------------------------------------------------


def read_config(path: str) -> tuple[str, dict, str]:
    """(text, plain dict, flavour) of a --config TOML."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"--config {path} does not exist or is not a file")
    try:
        text = p.read_text(encoding="utf-8")
        plain = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"--config {path} is not readable TOML: {err}") from err
    return text, plain, flavour_of(plain)


def flavour_of(plain: dict) -> str:
    """prime-rl (Hosted Training, `uv run rl`) or local (local_train)."""
    if any(k in plain for k in ("orchestrator", "trainer", "deployment", "inference")):
        return "prime-rl"
    return "local"


def apply_deltas(text: str, deltas: list[Delta]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    for d in deltas:
        if not isinstance(d.new, (int, float, bool)):
            continue
        parts = d.key.split(".")
        node = doc
        for part in parts[:-1]:
            if part not in node:
                node[part] = tomlkit.table()
            node = node[part]
        node[parts[-1]] = d.new
        if d.key.endswith("sampling.max_completion_tokens"):  # per-source overrides too
            for src in get_path(doc, "orchestrator.train.source") or []:
                samp = src.get("sampling") if hasattr(src, "get") else None
                if samp is not None and "max_completion_tokens" in samp:
                    samp["max_completion_tokens"] = d.new
    out = tomlkit.dumps(doc)
    return out if out.endswith("\n") else out + "\n"


def validate_written(text: str, flavour: str, target: str, path: Path) -> list[Check]:
    """The same checks submit_training runs (offline), or local_train's loader for its configs."""
    if flavour == "local":
        from vlab.train.config import load_config

        try:
            load_config(path)
        except UsageError as err:
            return [Check("config-valid", "fail", f"{path}: local_train rejects it: {err.message}", err.hint)]
        return [Check("config-valid", "pass", f"{path} loads as a local_train config")]
    from vlab.hosted.validate import validate_document

    checks = validate_document(tomllib.loads(text), text=text, target=target, online=False)
    out = []
    for c in checks:
        if c.status == "skip" or c.id in ("model-available", "env-hub"):
            continue  # offline: nothing looked up
        out.append(Check(f"config:{c.id}", c.status, c.message, c.hint, c.exit_code))
    return out
