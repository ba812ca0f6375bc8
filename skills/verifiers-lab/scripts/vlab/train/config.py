"""The local-train configuration: one TOML whose keys follow prime-rl's names where
they exist (`model.name`, `max_steps`, `batch_size`, `group_size`, `sampling.*`,
`optim.lr`, `lora.*`, `ckpt.*`, `eval.*`, `filter_zero_advantages`), plus CLI
overrides (`--set optim.lr=1e-5`).

Unknown keys are refused with the key's name (a typo must not silently fall back
to a default), and so are the renamed keys of older docs.
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from vlab.core.result import UsageError


@dataclass
class ModelConfig:
    name: str = ""
    dtype: str = "auto"  # auto: bfloat16 on a GPU, float32 on CPU
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    trust_remote_code: bool = False
    # Above this many parameters a CPU run is refused unless allow_cpu is set.
    allow_cpu: bool = False
    # auto: on above 1B parameters, or when a full-length sequence would not fit without it
    # (vlab.train.memory says why); true | false to insist.
    gradient_checkpointing: bool | str = "auto"
    # Master weights and AdamW state (prime-rl's trainer.model.optimization_dtype): auto keeps
    # float32 for full fine-tuning under bf16 compute; bfloat16 halves them (a 1e-6 step may round away).
    optimization_dtype: str = "auto"
    # Tokens per chunk of the loss's logits (prime-rl's name); 0: sized to ~512 MiB of logits.
    fused_lm_head_token_chunk_size: int = 0
    # Prompt + completion tokens the memory plan provisions for; 0: max_completion_tokens + 512.
    seq_len: int = 0
    # prime-rl only (orchestrator.renderer.name): "auto" picks the model's renderer; prime-rl refuses
    # models missing from its renderer map (Qwen2.5, ...) unless this is "default" (the chat template).
    renderer: str = "auto"
    # CPU intra-op threads; 0 = auto (1 for models under 20M parameters, where thread
    # synchronisation costs more than it saves, measured 10x on 2 busy cores).
    cpu_threads: int = 0
    # GiB this run may use on its device (0: off): the plan sizes micro-batches, the generation batch and
    # checkpointing to it, and on CUDA the process's allocator is capped there (a 24 GB card on a bigger one).
    memory_budget_gib: float = 0.0


@dataclass
class SamplingConfig:
    max_completion_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0: off


@dataclass
class SamplerConfig:
    type: str = "hf"  # hf | vllm
    # hf: a decode loop with a preallocated KV cache (false: transformers' generate, slower).
    static_cache: bool = True
    # hf on CUDA: each decode step one replayed CUDA graph per batch bucket (vlab.train.graphs); false: eager steps.
    cuda_graphs: bool = True
    gpu_memory_utilization: float = 0.3  # vllm only: the trainer shares the GPU
    enforce_eager: bool = True


@dataclass
class OptimConfig:
    lr: float = 1e-6
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    max_norm: float = 1.0  # gradient clipping; 0 disables
    warmup_steps: int = 0


@dataclass
class LossConfig:
    """The policy loss; `type` and the key names are prime-rl's `[trainer.loss]` (vlab.train.loss has the math).

    default:  prime-rl's DPPO+KL loss: tokens whose probability moved more than dppo_mask_high up
              (positive advantage) or dppo_mask_low down (negative advantage) since sampling are
              masked; -adv_tau * A * ratio on the rest; + kl_tau * log_ratio**2 on every token.
    ppo_clip: PPO/DAPO -min(r A, clip(r, 1-clip_low, 1+clip_high) A) (builtin only).
    ratio_mask: -r A on tokens with mask_low <= r <= mask_high (builtin only).
    """

    type: str = "default"  # default | ppo_clip | ratio_mask
    dppo_mask_low: float = 0.2
    dppo_mask_high: float = 0.2
    adv_tau: float = 1.0
    kl_tau: float = 1e-3  # weight of log(pi/pi_sampler)**2 (all types); 0 = off
    clip_low: float = 0.2  # ppo_clip
    clip_high: float = 0.28  # ppo_clip: DAPO's asymmetric "clip higher"
    mask_low: float = 0.125  # ratio_mask
    mask_high: float = 8.0  # ratio_mask
    std_normalize: bool = False  # divide group advantages by the group's std (GRPO); off = Dr. GRPO
    ref_kl_tau: float = 0.0  # builtin only: k3 KL against the starting policy (keeps a reference); 0 = off


LOSS_TYPES = ("default", "ppo_clip", "ratio_mask")


@dataclass
class LoraConfig:
    enabled: bool = False
    rank: int = 16
    alpha: float = 32.0
    dropout: float = 0.0
    target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


@dataclass
class CkptConfig:
    interval: int = 0  # 0: only at the end
    keep_last: int = 2


@dataclass
class EnvConfig:
    id: str = ""
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalConfig:
    interval: int = 0  # steps between evals logged to logs/metrics.jsonl (0: only the final eval)
    # The final eval is what check_reward_distribution judges: 20 x 4 clears its minimums (vlab.evals.verdicts).
    num_examples: int = 20
    rollouts_per_example: int = 4
    final: bool = True
    env: EnvConfig = field(default_factory=EnvConfig)  # another environment to evaluate on (id empty: [env])


@dataclass
class WandbConfig:
    enabled: bool = False
    project: str = "verifiers-lab"
    name: str = ""


@dataclass
class DeploymentConfig:
    """prime-rl engine only: how the GPUs of one node are split."""

    num_train_gpus: int = 0  # 0: derive from the GPUs found
    num_infer_gpus: int = 0
    num_nodes: int = 1


@dataclass
class TrainConfig:
    max_steps: int = 20
    batch_size: int = 32  # rollouts per step; divisible by group_size
    group_size: int = 8  # rollouts per prompt
    micro_batch_size: int = 0  # sequences per forward/backward; 0 = no limit by count
    # Token slots (rows x width, padding included) per forward/backward; 0 = sized from the device's free
    # memory and the model's shape.
    micro_batch_tokens: int = 0
    seed: int = 0
    filter_zero_advantages: bool = True
    output_dir: str = "outputs/local-train"
    model: ModelConfig = field(default_factory=ModelConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    sampler: SamplerConfig = field(default_factory=SamplerConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    lora: LoraConfig = field(default_factory=LoraConfig)
    ckpt: CkptConfig = field(default_factory=CkptConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    wandb: WandbConfig = field(default_factory=WandbConfig)
    deployment: DeploymentConfig = field(default_factory=DeploymentConfig)

    @property
    def prompts_per_step(self) -> int:
        return self.batch_size // self.group_size

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# Keys of older docs / other tools, with the key to use instead.
RENAMED = {
    "rollouts_per_example": "group_size",
    "learning_rate": "optim.lr",
    "lr": "optim.lr",
    "sampling.max_tokens": "sampling.max_completion_tokens",
    "max_tokens": "sampling.max_completion_tokens",
    "temperature": "sampling.temperature",
    "kl_coef": "loss.kl_tau",
    "beta": "loss.kl_tau",
    "model_name": "model.name",
    "lora.r": "lora.rank",
    "lora.lora_alpha": "lora.alpha",
    "epsilon": "loss.clip_low",
    "loss.ratio_mode": "loss.type",
    "num_generations": "group_size",
}


def _build(cls, data: dict[str, Any], prefix: str = ""):
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in known:
            if dotted in RENAMED:
                raise UsageError(
                    f"config key '{dotted}' is not used here: write '{RENAMED[dotted]}'",
                    hint="see templates/configs/local-train.toml for every key",
                )
            raise UsageError(
                f"unknown config key '{dotted}'",
                hint=f"known keys{' under ' + prefix.rstrip('.') if prefix else ''}: " + ", ".join(sorted(known)),
            )
        default = getattr(cls(), key)
        if is_dataclass(default):
            if not isinstance(value, dict):
                raise UsageError(f"config key '{dotted}' must be a table", hint=f"write [{dotted}] with its keys")
            kwargs[key] = _build(type(default), value, dotted + ".")
        else:
            kwargs[key] = _coerce(dotted, default, value)
    return cls(**kwargs)


def _coerce(dotted: str, default: Any, value: Any) -> Any:
    if dotted == "model.gradient_checkpointing":  # auto | true | false
        if isinstance(value, bool) or value == "auto":
            return value
        raise UsageError(f"config key '{dotted}' must be true, false or \"auto\", got {value!r}")
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise UsageError(f"config key '{dotted}' must be true or false, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise UsageError(f"config key '{dotted}' must be an integer, got {value!r}")
    if isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _finite(dotted, float(value))
        raise UsageError(f"config key '{dotted}' must be a number, got {value!r}")
    if isinstance(default, str):
        if isinstance(value, str):
            return value
        raise UsageError(f"config key '{dotted}' must be a string, got {value!r}")
    if isinstance(default, tuple):
        if (
            isinstance(value, (list, tuple))
            and len(value) == len(default)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        ):
            return tuple(_finite(dotted, float(v)) for v in value)
        raise UsageError(f"config key '{dotted}' must be a list of {len(default)} numbers, got {value!r}")
    if isinstance(default, list):
        if isinstance(value, list):
            return value
        raise UsageError(f"config key '{dotted}' must be a list, got {value!r}")
    if isinstance(default, dict):
        if isinstance(value, dict):
            return value
        raise UsageError(f"config key '{dotted}' must be a table, got {value!r}")
    return value


def _finite(dotted: str, value: float) -> float:
    """nan and inf never reach the trainer: the same refusal a numeric flag gives (exit 2)."""
    if not math.isfinite(value):
        raise UsageError(f"config key '{dotted}' must be a finite number, got {value!r}")
    return value


def parse_override(text: str) -> tuple[list[str], Any]:
    """`optim.lr=1e-5` -> (["optim", "lr"], 1e-5). Values are TOML/JSON literals, else strings."""
    if "=" not in text:
        raise UsageError(f"--set needs KEY=VALUE, got {text!r}", hint="e.g. --set optim.lr=1e-5")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise UsageError(f"--set needs KEY=VALUE, got {text!r}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
    return key.split("."), value


def merge_overrides(data: dict[str, Any], overrides: list[tuple[list[str], Any]]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for path, value in overrides:
        node = data
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UsageError(f"cannot set '{'.'.join(path)}': '{part}' is not a table")
        node[path[-1]] = value
    return data


def read_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"config file not found: {p}", hint="start from templates/configs/local-train.toml")
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"config {p} is not valid TOML: {err}") from err


def load_config(path: str | Path | None = None, overrides: list[tuple[list[str], Any]] | None = None) -> TrainConfig:
    data = read_toml(path) if path else {}
    if isinstance(data.get("model"), str):  # older flat configs: model = "X"
        raise UsageError(
            "config key 'model' must be a table: write [model] name = \"...\"",
            hint='the flat `model = "X"` form of older docs is not accepted',
        )
    data = merge_overrides(data, overrides or [])
    cfg = _build(TrainConfig, data)
    validate(cfg)
    return cfg


def validate(cfg: TrainConfig) -> None:
    def bad(msg: str, hint: str = "") -> None:
        raise UsageError(msg, hint=hint)

    if cfg.max_steps < 1:
        bad(f"max_steps must be >= 1, got {cfg.max_steps}")
    if cfg.group_size < 2:
        bad(f"group_size must be >= 2 (advantages compare rollouts of the same prompt), got {cfg.group_size}")
    if cfg.batch_size < cfg.group_size or cfg.batch_size % cfg.group_size:
        bad(
            f"batch_size ({cfg.batch_size}) must be a multiple of group_size ({cfg.group_size})",
            hint=f"e.g. batch_size = {max(1, cfg.batch_size // cfg.group_size) * cfg.group_size}",
        )
    if cfg.micro_batch_size < 0:
        bad("micro_batch_size must be >= 0")
    if cfg.micro_batch_tokens < 0:
        bad("micro_batch_tokens must be >= 0 (0: sized from free memory)")
    if cfg.model.optimization_dtype not in ("auto", "float32", "bfloat16"):
        bad(f"model.optimization_dtype must be auto, float32 or bfloat16, got {cfg.model.optimization_dtype!r}")
    if cfg.model.fused_lm_head_token_chunk_size < 0 or cfg.model.seq_len < 0:
        bad("model.fused_lm_head_token_chunk_size and model.seq_len must be >= 0 (0: auto)")
    if cfg.model.memory_budget_gib < 0:
        bad(f"model.memory_budget_gib must be >= 0 (0: off), got {cfg.model.memory_budget_gib:g}")
    if cfg.model.memory_budget_gib and cfg.sampler.type == "vllm":
        bad(
            "model.memory_budget_gib caps this process's memory, which the in-process vLLM sampler shares",
            hint="with sampler.type = 'vllm' size its share with sampler.gpu_memory_utilization instead",
        )
    if cfg.sampling.max_completion_tokens < 1:
        bad("sampling.max_completion_tokens must be >= 1")
    if cfg.sampling.temperature <= 0:
        bad("sampling.temperature must be > 0 (the loss needs the sampling distribution)")
    if not 0 < cfg.sampling.top_p <= 1:
        bad("sampling.top_p must be in (0, 1]")
    if cfg.optim.lr <= 0:
        bad("optim.lr must be > 0")
    if cfg.loss.type not in LOSS_TYPES:
        bad(f"loss.type must be one of {', '.join(LOSS_TYPES)}, got {cfg.loss.type!r}")
    if min(cfg.loss.dppo_mask_low, cfg.loss.dppo_mask_high, cfg.loss.kl_tau, cfg.loss.ref_kl_tau) < 0:
        bad("loss.dppo_mask_low, dppo_mask_high, kl_tau and ref_kl_tau must be >= 0")
    if cfg.sampler.type not in ("hf", "vllm"):
        bad(f"sampler.type must be 'hf' or 'vllm', got {cfg.sampler.type!r}")
    if cfg.model.dtype not in ("auto", "float32", "bfloat16", "float16"):
        bad(f"model.dtype must be auto, float32, bfloat16 or float16, got {cfg.model.dtype!r}")
    if cfg.lora.enabled and cfg.lora.rank < 1:
        bad("lora.rank must be >= 1")
    if cfg.eval.num_examples < 0 or cfg.eval.rollouts_per_example < 1:
        bad("eval.num_examples must be >= 0 and eval.rollouts_per_example >= 1")
