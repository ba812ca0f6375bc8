"""Every local_train setting -> its prime-rl key, or why prime-rl cannot take it (the one table).

`RULES` has one entry per TrainConfig field (dotted, as `--set` writes it; a test walks the
dataclasses). A rule either carries the value to prime-rl key(s) (names from
`vlab.hosted.prime_rl_keys`, checked by the same test), or says why prime-rl has no such
setting; such a setting is refused (exit 2, every one listed) when its value would change the
run, and otherwise left out, named in the result's `not_carried`. Nothing is dropped unseen.

Facts (prime-rl `packages/prime-rl-configs`, `src/prime_rl/trainer/rl/loss.py`,
`src/prime_rl/orchestrator/algo/grpo.py`): advantages are reward minus the group mean (no std);
the trainer checkpoints activations by default (`trainer.model.ac`, mode full); the LR scheduler
is constant unless `[trainer.scheduler]` says otherwise; training sampling has only temperature
and max_completion_tokens; the trainer packs samples into `seq_len`-token micro-batches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from vlab.core.result import UsageError
from vlab.train.config import TrainConfig
from vlab.train.memory import DEFAULT_PROMPT_TOKENS

PRIME_RL_SEQ_LEN = 2048  # prime-rl's default trainer.model.seq_len

Cfg = TrainConfig
Values = dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """How one local setting reaches prime-rl.

    write: cfg -> {prime-rl key: value} (may be empty when prime-rl's default already matches).
    keys: every prime-rl key `write` may produce (checked against prime-rl's schema).
    why: for a setting prime-rl has no counterpart for: the reason, shown when refused.
    refuse_if: cfg -> True when the setting cannot be carried (default: value differs from local default).
    """

    keys: tuple[str, ...] = ()
    write: Callable[[Cfg], Values] | None = None
    why: str = ""
    refuse_if: Callable[[Cfg], bool] | None = None


def carry(key: str, get: Callable[[Cfg], Any], when: Callable[[Cfg], bool] = lambda c: True) -> Rule:
    return Rule(keys=(key,), write=lambda c: {key: get(c)} if when(c) else {})


def lone(why: str, refuse_if: Callable[[Cfg], bool] | None = None) -> Rule:
    """A builtin-only setting: refused when set to something other than its default (or `refuse_if`)."""
    return Rule(why=why, refuse_if=refuse_if)


def seq_len(c: Cfg) -> int:
    """prime-rl's shared seq_len: model.seq_len, else what the completions need (at least prime-rl's default)."""
    return c.model.seq_len or max(PRIME_RL_SEQ_LEN, c.sampling.max_completion_tokens + DEFAULT_PROMPT_TOKENS)


def _warmup(c: Cfg) -> Values:
    w = c.optim.warmup_steps
    if not w:
        return {}  # prime-rl's default scheduler is constant: no warmup, as here
    return {"trainer.scheduler.type": "linear", "trainer.scheduler.warmup_steps": w, "trainer.scheduler.decay_steps": 0}


def _eval_interval(c: Cfg) -> Values:
    if c.eval.interval:
        return {"orchestrator.eval.interval": c.eval.interval}
    if c.eval.final and c.eval.num_examples:  # prime-rl evaluates at steps divisible by the interval
        return {"orchestrator.eval.interval": c.max_steps}
    return {}


def _evaluates(c: Cfg) -> bool:
    return bool(c.eval.num_examples and (c.eval.interval or c.eval.final))


_LOSS_WHY = (
    "prime-rl's trainer has no PPO-style ratio clip: its losses are `default` (DPPO mask + kl_tau), "
    '`ipo` and custom (trainer.loss.import_path); use loss.type = "default" for a prime-rl run'
)
_BUILTIN_SAMPLER = "the builtin engine's own sampler; prime-rl samples with its vLLM server ([inference])"

RULES: dict[str, Rule] = {
    "max_steps": carry("max_steps", lambda c: c.max_steps),
    "batch_size": carry("orchestrator.batch_size", lambda c: c.batch_size),
    "group_size": carry("orchestrator.group_size", lambda c: c.group_size),
    "micro_batch_size": lone(
        "prime-rl packs samples into micro-batches of seq_len tokens, not a count: set model.seq_len"
    ),
    "micro_batch_tokens": lone("prime-rl packs samples into micro-batches of seq_len tokens: set model.seq_len"),
    "seed": carry("inference.vllm.seed", lambda c: c.seed, when=lambda c: c.seed != 0),
    "filter_zero_advantages": carry("orchestrator.train.filter_zero_advantages", lambda c: c.filter_zero_advantages),
    "output_dir": carry("output_dir", lambda c: str(Path(c.output_dir).expanduser().resolve())),
    "model.name": carry("model.name", lambda c: c.model.name),
    "model.dtype": lone("prime-rl's trainer computes in bfloat16; its master weights are model.optimization_dtype"),
    "model.device": lone("prime-rl places its processes by [deployment]: use --gpus or deployment.*"),
    "model.trust_remote_code": Rule(
        keys=("trainer.model.trust_remote_code", "inference.vllm.trust_remote_code"),
        write=lambda c: (
            {"trainer.model.trust_remote_code": True, "inference.vllm.trust_remote_code": True}
            if c.model.trust_remote_code
            else {}
        ),
    ),
    "model.allow_cpu": lone("prime-rl runs on GPUs only"),
    "model.gradient_checkpointing": Rule(
        keys=("trainer.model.ac.mode",),
        # auto and true: prime-rl checkpoints activations by default (full mode)
        write=lambda c: {"trainer.model.ac.mode": "full"} if c.model.gradient_checkpointing is True else {},
        why="prime-rl's trainer checkpoints activations by default (trainer.model.ac); a TOML file cannot unset it",
        refuse_if=lambda c: c.model.gradient_checkpointing is False,
    ),
    "model.optimization_dtype": carry(
        "trainer.model.optimization_dtype",
        lambda c: c.model.optimization_dtype,
        when=lambda c: c.model.optimization_dtype != "auto",
    ),
    "model.fused_lm_head_token_chunk_size": carry(
        "trainer.model.fused_lm_head_token_chunk_size",
        lambda c: c.model.fused_lm_head_token_chunk_size,
        when=lambda c: c.model.fused_lm_head_token_chunk_size > 0,
    ),
    "model.seq_len": carry("seq_len", seq_len),
    "model.renderer": carry(
        "orchestrator.renderer.name", lambda c: c.model.renderer, when=lambda c: c.model.renderer != "auto"
    ),
    "model.cpu_threads": lone("CPU threads of the builtin engine; prime-rl runs on GPUs"),
    "model.memory_budget_gib": lone(
        "the builtin engine's one-GPU memory plan; prime-rl sizes its trainer by seq_len and its inference by "
        "vLLM's gpu_memory_utilization"
    ),
    "sampling.max_completion_tokens": carry(
        "orchestrator.train.sampling.max_completion_tokens", lambda c: c.sampling.max_completion_tokens
    ),
    "sampling.temperature": carry("orchestrator.train.sampling.temperature", lambda c: c.sampling.temperature),
    "sampling.top_p": lone("prime-rl's training sampling has only temperature and max_completion_tokens"),
    "sampling.top_k": lone("prime-rl's training sampling has only temperature and max_completion_tokens"),
    "sampler.type": lone(_BUILTIN_SAMPLER, refuse_if=lambda c: False),  # hf or vllm: prime-rl uses vLLM either way
    "sampler.static_cache": lone(_BUILTIN_SAMPLER),
    "sampler.cuda_graphs": lone(_BUILTIN_SAMPLER),
    "sampler.gpu_memory_utilization": lone(_BUILTIN_SAMPLER + " on GPUs of its own"),
    "sampler.enforce_eager": lone(_BUILTIN_SAMPLER),
    "optim.lr": carry("trainer.optim.lr", lambda c: c.optim.lr),
    "optim.weight_decay": carry("trainer.optim.weight_decay", lambda c: c.optim.weight_decay),  # prime-rl's is 0.01
    "optim.betas": Rule(
        keys=("trainer.optim.betas1", "trainer.optim.betas2"),
        write=lambda c: {"trainer.optim.betas1": c.optim.betas[0], "trainer.optim.betas2": c.optim.betas[1]},
    ),
    "optim.max_norm": Rule(
        keys=("trainer.optim.max_norm",),
        write=lambda c: {"trainer.optim.max_norm": c.optim.max_norm} if c.optim.max_norm > 0 else {},
        why="0 turns clipping off here; prime-rl turns it off with max_norm = None, which TOML cannot write",
        refuse_if=lambda c: c.optim.max_norm <= 0,
    ),
    "optim.warmup_steps": Rule(
        keys=("trainer.scheduler.type", "trainer.scheduler.warmup_steps", "trainer.scheduler.decay_steps"),
        write=_warmup,
    ),
    "loss.type": Rule(
        keys=("trainer.loss.type",),
        write=lambda c: {"trainer.loss.type": "default"},
        why=_LOSS_WHY,
        refuse_if=lambda c: c.loss.type != "default",
    ),
    "loss.dppo_mask_low": carry("trainer.loss.dppo_mask_low", lambda c: c.loss.dppo_mask_low),
    "loss.dppo_mask_high": carry("trainer.loss.dppo_mask_high", lambda c: c.loss.dppo_mask_high),
    "loss.adv_tau": carry("trainer.loss.adv_tau", lambda c: c.loss.adv_tau),
    "loss.kl_tau": carry("trainer.loss.kl_tau", lambda c: c.loss.kl_tau),
    # ppo_clip / ratio_mask bounds: inert under type = "default" (which loss.type already checks)
    "loss.clip_low": lone(_LOSS_WHY, refuse_if=lambda c: False),
    "loss.clip_high": lone(_LOSS_WHY, refuse_if=lambda c: False),
    "loss.mask_low": lone(_LOSS_WHY, refuse_if=lambda c: False),
    "loss.mask_high": lone(_LOSS_WHY, refuse_if=lambda c: False),
    "loss.std_normalize": lone("prime-rl's advantage is the reward minus the group mean (GRPO without the std)"),
    "loss.ref_kl_tau": lone("prime-rl's default loss keeps no reference model: its kl_tau term is against the sampler"),
    "lora.enabled": Rule(
        keys=("trainer.model.lora.rank",),
        write=lambda c: {"trainer.model.lora.rank": c.lora.rank} if c.lora.enabled else {},
    ),
    "lora.rank": carry("trainer.model.lora.rank", lambda c: c.lora.rank, when=lambda c: c.lora.enabled),
    "lora.alpha": carry("trainer.model.lora.alpha", lambda c: c.lora.alpha, when=lambda c: c.lora.enabled),
    "lora.dropout": carry("trainer.model.lora.dropout", lambda c: c.lora.dropout, when=lambda c: c.lora.enabled),
    "lora.target_modules": carry(
        "trainer.model.lora.target_modules", lambda c: list(c.lora.target_modules), when=lambda c: c.lora.enabled
    ),
    "ckpt.interval": carry("ckpt.interval", lambda c: c.ckpt.interval, when=lambda c: c.ckpt.interval > 0),
    "ckpt.keep_last": carry("ckpt.keep_last", lambda c: c.ckpt.keep_last, when=lambda c: c.ckpt.interval > 0),
    "eval.interval": Rule(keys=("orchestrator.eval.interval",), write=_eval_interval),
    "eval.num_examples": carry(
        "orchestrator.eval.num_examples", lambda c: c.eval.num_examples, when=lambda c: _evaluates(c)
    ),
    "eval.rollouts_per_example": carry(
        "orchestrator.eval.group_size", lambda c: c.eval.rollouts_per_example, when=lambda c: _evaluates(c)
    ),
    "eval.final": Rule(keys=("orchestrator.eval.interval",), write=_eval_interval),
    # the environments become [[orchestrator.train.source]] / [[orchestrator.eval.source]] tables (vlab.hosted.builder)
    "env.id": Rule(keys=("orchestrator.train.source",)),
    "env.args": Rule(keys=("orchestrator.train.source",)),
    "eval.env.id": Rule(keys=("orchestrator.eval.source",)),
    "eval.env.args": Rule(keys=("orchestrator.eval.source",)),
    "wandb.enabled": carry("monitors.wandb.project", lambda c: c.wandb.project, when=lambda c: c.wandb.enabled),
    "wandb.project": carry("monitors.wandb.project", lambda c: c.wandb.project, when=lambda c: c.wandb.enabled),
    "wandb.name": carry(
        "monitors.wandb.name", lambda c: c.wandb.name, when=lambda c: c.wandb.enabled and bool(c.wandb.name)
    ),
    # the GPU plan (vlab.train.gpusplit) and the node layout write [deployment]
    "deployment.num_train_gpus": Rule(keys=("deployment.num_train_gpus", "deployment.gpus_per_node")),
    "deployment.num_infer_gpus": Rule(keys=("deployment.num_infer_gpus", "deployment.gpus_per_node")),
    "deployment.num_nodes": Rule(keys=("deployment.type", "deployment.num_train_nodes", "deployment.num_infer_nodes")),
}


def config_fields(cls: type = TrainConfig, prefix: str = "") -> list[str]:
    """Every leaf setting of the config, dotted (`optim.lr`), as `--set` names it."""
    out = []
    inst = cls()
    for f in fields(cls):
        value = getattr(inst, f.name)
        if is_dataclass(value):
            out.extend(config_fields(type(value), f"{prefix}{f.name}."))
        else:
            out.append(prefix + f.name)
    return out


def _get(cfg: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


@dataclass
class Mapping:
    values: Values  # prime-rl key -> value, for every carried setting
    not_carried: list[dict]  # settings left at a default prime-rl has no key for: {key, why}


def map_config(cfg: TrainConfig) -> Mapping:
    """The prime-rl values of `cfg`; UsageError (exit 2) naming every setting prime-rl cannot take."""
    default = TrainConfig()
    values: Values = {}
    refused, not_carried = [], []
    for name in config_fields():
        rule = RULES[name]
        value = _get(cfg, name)
        refuse = rule.refuse_if(cfg) if rule.refuse_if else (not rule.keys and value != _get(default, name))
        if refuse:
            refused.append(f"{name} = {value!r}: {rule.why}")
            continue
        if rule.write is not None:
            values.update(rule.write(cfg))
        elif not rule.keys:
            not_carried.append({"key": name, "why": rule.why})
    if refused:
        raise UsageError(
            f"--engine prime-rl cannot carry {len(refused)} setting(s):\n  " + "\n  ".join(refused),
            hint="change or remove them (the builtin engine keeps them), then run again",
        )
    return Mapping(values, not_carried)
