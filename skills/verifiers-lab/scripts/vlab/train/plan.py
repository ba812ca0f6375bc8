"""The memory plan of a builtin run: the model's shape (from its config, before any weight
loads, or from the loaded model), the device's free memory, and `vlab.train.memory`'s
estimate -> the micro-batch token budget, the generation batch, gradient checkpointing;
or a refusal up front (exit 3) that names the knob to turn.

`model.memory_budget_gib` (`--memory-budget`) plans for less than the device has: the plan is
made for min(free, budget) and compared with the plan without it, so the result names what the
budget gave up (smaller micro-batches, a smaller generation batch, checkpointing turned on);
on CUDA `enforce_budget` caps the process's allocator there.

`local_train --dry-run` prints the plan and loads nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from vlab.core.result import EXIT_PREREQ, PrerequisiteError, Result
from vlab.train import memory
from vlab.train.config import TrainConfig


@dataclass
class Plan:
    shape: memory.ModelShape
    precision: memory.Precision
    trainable: int
    device: str
    free: int  # bytes free on the device when planned
    budget: int  # bytes the plan may use
    estimate: memory.Estimate
    fits: bool
    lora: bool
    memory_budget: int = 0  # bytes asked for (model.memory_budget_gib; 0: off)
    unbudgeted: memory.Estimate | None = None  # the plan without the budget, when one is asked for

    @property
    def checkpointing(self) -> bool:
        return self.estimate.checkpointing

    @property
    def micro_batch_tokens(self) -> int:
        return self.estimate.micro_batch_tokens

    @property
    def generation_batch(self) -> int:
        return self.estimate.generation_batch

    @property
    def lm_head_chunk(self) -> int:
        return self.estimate.lm_head_chunk

    def describe(self) -> str:
        e = self.estimate
        g = memory.GIB
        return (
            f"estimated peak {e.peak / g:.2f} GiB of {self.budget / g:.2f} GiB usable on {self.device} "
            f"(update {e.update_peak / g:.2f}: weights {e.weights / g:.2f}, grads {e.grads / g:.2f}, "
            f"AdamW {e.optimizer / g:.2f}, activations {e.activations / g:.2f} for {e.micro_batch_tokens} "
            f"tokens a micro-batch, logits chunk {e.logits_chunk / g:.2f}; generation {e.generation_peak / g:.2f}: "
            f"KV cache {e.kv_cache / g:.2f} for {e.generation_batch} x {e.seq_len} tokens); "
            f"gradient checkpointing {'on' if e.checkpointing else 'off'}"
        ) + (f"; {self.describe_budget()}" if self.memory_budget else "")

    def given_up(self) -> list[str]:
        """What the memory budget cost against the plan without it (empty: nothing)."""
        e, u = self.estimate, self.unbudgeted
        if not self.memory_budget or u is None:
            return []
        out = []
        if e.micro_batch_tokens < u.micro_batch_tokens:
            out.append(f"smaller micro-batches ({e.micro_batch_tokens} tokens, not {u.micro_batch_tokens})")
        if e.generation_batch < u.generation_batch:
            out.append(f"a smaller generation batch ({e.generation_batch}, not {u.generation_batch})")
        if e.checkpointing and not u.checkpointing:
            out.append("gradient checkpointing turned on (about a third more compute)")
        return out

    def describe_budget(self) -> str:
        e, g = self.estimate, memory.GIB
        head = (
            f"memory budget {asked_gib(self.memory_budget)} GiB (asked): micro-batches of {e.micro_batch_tokens} tokens, "
            f"generation batch {e.generation_batch}, gradient checkpointing {'on' if e.checkpointing else 'off'}"
        )
        lost = self.given_up()
        if lost:
            return head + "; it trades speed for memory, against the plan without it: " + ", ".join(lost)
        if self.memory_budget >= self.free:
            return head + f"; the device has only {self.free / g:.2f} GiB free, so the budget changes nothing"
        return head + ", the same as without it: nothing given up"

    def to_dict(self) -> dict:
        return {
            "device": self.device,
            "free_gib": round(self.free / memory.GIB, 3),
            "budget_gib": round(self.budget / memory.GIB, 3),
            "fits": self.fits,
            "params": self.shape.params,
            "trainable_params": self.trainable,
            "precision": {
                "compute": self.precision.compute,
                "weights": self.precision.weights,
                "optimization": self.precision.optimization,
            },
            "seq_len": self.estimate.seq_len,
            "micro_batch_tokens": self.micro_batch_tokens,
            "generation_batch": self.generation_batch,
            "lm_head_chunk": self.lm_head_chunk,
            "gradient_checkpointing": self.checkpointing,
            "estimate_gib": self.estimate.gib(),
            "memory_budget_gib": round(self.memory_budget / memory.GIB, 3),
            **(self._budget_dict() if self.memory_budget and self.unbudgeted is not None else {}),
        }

    def _budget_dict(self) -> dict:
        u = self.unbudgeted
        assert u is not None
        return {
            "without_budget": {
                "micro_batch_tokens": u.micro_batch_tokens,
                "generation_batch": u.generation_batch,
                "gradient_checkpointing": u.checkpointing,
                "peak_gib": round(u.peak / memory.GIB, 3),
            },
            "given_up": self.given_up(),
        }


def asked_gib(n: int) -> str:
    """A memory budget in GiB as the user wrote it (24, 23.5, 0.001), not its rounding to bytes."""
    return f"{n / memory.GIB:.4g}"


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).split(".")[-1]


def free_memory(device: torch.device) -> int:
    """Bytes free on the device now: the GPU's free memory, or the machine's available RAM."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * memory.GIB


def seq_len(cfg: TrainConfig) -> int:
    return cfg.model.seq_len or cfg.sampling.max_completion_tokens + memory.DEFAULT_PROMPT_TOKENS


def _lora_params(model, cfg: TrainConfig) -> int:
    """LoRA adapter parameters: rank x (in + out) for every targeted linear layer."""
    targets = set(cfg.lora.target_modules)
    n = 0
    for name, mod in model.named_modules():
        if name.split(".")[-1] in targets and hasattr(mod, "in_features") and hasattr(mod, "out_features"):
            n += cfg.lora.rank * (mod.in_features + mod.out_features)
    return n


def _meta_model(cfg: TrainConfig):
    from transformers import AutoModelForCausalLM

    from vlab.train.tiny import TINY_MODEL_NAME, make_model

    if cfg.model.name == TINY_MODEL_NAME:
        with torch.device("meta"):
            return make_model()
    from vlab.train.model import model_config

    config = model_config(cfg.model.name, cfg.model.trust_remote_code)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config, trust_remote_code=cfg.model.trust_remote_code)


def _precision(cfg: TrainConfig, compute: torch.dtype, weights: torch.dtype) -> memory.Precision:
    from vlab.train.model import optimization_dtype

    return memory.Precision(
        compute=dtype_name(compute),
        weights=dtype_name(weights),
        optimization=dtype_name(optimization_dtype(cfg, compute)),
    )


def make_plan(
    cfg: TrainConfig,
    device: torch.device,
    precision: memory.Precision,
    shape: memory.ModelShape,
    trainable: int,
    already_loaded: int = 0,
    free: int | None = None,
) -> Plan:
    """The plan on `free` bytes (default: what the device has free now). With model.memory_budget_gib
    the plan is made for at most that much, the whole process's share (the weights `already_loaded`
    count against it), and the plan without it rides along to name what the budget gave up."""
    free = free_memory(device) if free is None else free
    vllm = cfg.sampler.type == "vllm"
    if vllm and device.type == "cuda":  # the in-process engine takes its share of the GPU for itself
        free = int(free * max(0.0, 1.0 - cfg.sampler.gpu_memory_utilization))
    asked = int(cfg.model.memory_budget_gib * memory.GIB)
    args = (cfg, device, precision, shape, trainable, already_loaded)
    if not asked:
        return _plan(*args, free)
    plan = _plan(*args, min(free, max(0, asked - already_loaded)))
    plan.free, plan.memory_budget, plan.unbudgeted = free, asked, _plan(*args, free).estimate
    return plan


def _plan(
    cfg: TrainConfig,
    device: torch.device,
    precision: memory.Precision,
    shape: memory.ModelShape,
    trainable: int,
    already_loaded: int,
    free: int,
) -> Plan:
    vllm = cfg.sampler.type == "vllm"
    budget = memory.budget_bytes(free, device.type == "cuda", already_loaded)
    ckpt = cfg.model.gradient_checkpointing
    kwargs = dict(
        budget=budget,
        trainable=trainable,
        rollouts=cfg.batch_size,
        seq_len=seq_len(cfg),
        checkpointing=None if ckpt == "auto" else bool(ckpt),
        reference_model=cfg.loss.ref_kl_tau > 0 and not cfg.lora.enabled,
        lm_head_chunk=cfg.model.fused_lm_head_token_chunk_size,
    )
    est, fits = memory.fit(shape, precision, micro_batch_tokens=cfg.micro_batch_tokens, **kwargs)
    by_count = cfg.micro_batch_size * seq_len(cfg)
    if cfg.micro_batch_size and not cfg.micro_batch_tokens and by_count < est.micro_batch_tokens:
        kwargs["checkpointing"] = est.checkpointing
        est, fits = memory.fit(shape, precision, micro_batch_tokens=by_count, **kwargs)
    if vllm:  # generation happens in vLLM's own memory
        est.kv_cache = est.generation_logits = 0
        est.generation_batch = cfg.batch_size
    return Plan(
        shape, precision, trainable, str(device), free, budget, est, fits and est.peak <= budget, cfg.lora.enabled
    )


def plan_before_load(
    cfg: TrainConfig, device: torch.device, compute: torch.dtype, weights: torch.dtype, dry_run: bool = False
) -> Plan:
    """The plan from the model's config alone (a meta-device model: no weights read).

    A real run on CPU refuses a GPU-sized model first (the plan is moot there); a dry run
    still prints it."""
    from vlab.train.model import check_cpu_size, require_model_name

    require_model_name(cfg)
    meta = _meta_model(cfg)
    params = sum(p.numel() for p in meta.parameters())
    if not dry_run:
        check_cpu_size(cfg, device, params)
    shape = memory.ModelShape.from_config(meta.config, params)
    trainable = _lora_params(meta, cfg) if cfg.lora.enabled else params
    return make_plan(cfg, device, _precision(cfg, compute, weights), shape, trainable)


def plan_for_model(cfg: TrainConfig, model, device: torch.device, compute: torch.dtype) -> Plan:
    """The plan for a model already on `device` (its weights count as already loaded)."""
    from vlab.train.model import is_peft

    base = model.get_base_model() if is_peft(model) else model
    params = [p for p in model.parameters()]
    trainable = sum(p.numel() for p in params if p.requires_grad)
    frozen = [p for p in params if not p.requires_grad]
    weights = frozen[0].dtype if frozen else params[0].dtype
    shape = memory.ModelShape.from_config(base.config, sum(p.numel() for p in params) - (trainable if frozen else 0))
    precision = memory.Precision(
        compute=dtype_name(compute),
        weights=dtype_name(weights),
        optimization=dtype_name(next(p.dtype for p in params if p.requires_grad)),
    )
    loaded = sum(p.numel() * p.element_size() for p in params)  # already out of the free memory
    return make_plan(cfg, device, precision, shape, trainable, already_loaded=loaded)


def refusal(plan: Plan) -> PrerequisiteError:
    e, g = plan.estimate, memory.GIB
    phase = "the update" if e.update_peak >= e.generation_peak else "generation"
    of = f"{plan.free / g:.1f} GiB free"
    knobs = memory.knobs(e, plan.precision, plan.lora)
    if plan.memory_budget:
        asked = asked_gib(plan.memory_budget)
        of = f"the {asked} GiB memory budget (asked; {of})"
        knobs += f"; a larger model.memory_budget_gib (--memory-budget, now {asked})"
    return PrerequisiteError(
        f"this run does not fit on {plan.device}: {phase} needs about {e.peak / g:.1f} GiB "
        f"(update {e.update_peak / g:.1f}, generation {e.generation_peak / g:.1f}), "
        f"{plan.budget / g:.1f} GiB usable of {of}",
        hint="turn one of: " + knobs,
    )


def require_fit(plan: Plan) -> None:
    if not plan.fits:
        raise refusal(plan)


def enforce_budget(plan: Plan, device: torch.device, result: Result) -> None:
    """Hold a CUDA run to its memory budget: the process's caching allocator capped at budget / the
    device's total memory (`torch.cuda.set_per_process_memory_fraction`). On CPU the budget is planned for only."""
    if not plan.memory_budget:
        return
    g, asked = memory.GIB, f"memory budget {asked_gib(plan.memory_budget)} GiB (asked)"
    if device.type != "cuda":
        result.passed("memory_budget", f"{asked}: planned for; only a CUDA device enforces it, not {device}")
        return
    total = int(torch.cuda.get_device_properties(device).total_memory)
    if plan.memory_budget >= total:
        result.warn(
            "memory_budget",
            f"{asked} is not below {device}'s {total / g:.1f} GiB: nothing capped",
            hint="a budget below the device's memory makes the run hold to it",
        )
        return
    fraction = plan.memory_budget / total
    torch.cuda.set_per_process_memory_fraction(fraction, device)
    result.passed(
        "memory_budget",
        f"{asked}: this process's CUDA allocations capped at {fraction:.3f} of {device}'s {total / g:.1f} GiB "
        f"(torch.cuda.set_per_process_memory_fraction)",
    )


def dry_run(cfg: TrainConfig, result: Result) -> dict:
    """`local_train --dry-run` for the builtin engine: the plan, nothing loaded or written."""
    from vlab.train.model import param_dtype, resolve_device, resolve_dtype

    device = resolve_device(cfg.model.device)
    compute = resolve_dtype(cfg.model.dtype, device)
    plan = plan_before_load(cfg, device, compute, param_dtype(cfg, compute), dry_run=True)
    data = {"engine": "builtin", "dry_run": True, "model": cfg.model.name, "memory": plan.to_dict()}
    if plan.fits:
        result.passed("memory", plan.describe())
        result.summary = f"dry run: fits, estimated peak {plan.estimate.peak / memory.GIB:.2f} GiB on {device}"
    else:
        err = refusal(plan)
        result.fail("memory", err.message, hint=err.hint, exit_code=EXIT_PREREQ)
        result.summary = f"dry run: does not fit on {device}"
    result.data.update(data)
    return data
