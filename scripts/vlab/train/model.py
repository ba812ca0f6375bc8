"""Model side of the trainer: device and dtype choice, loading a model and its
tokenizer (offline-first), LoRA, the weights a vLLM sampler reloads, and turning
out-of-memory errors into "lower this knob" messages.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import torch

from ..result import PrerequisiteError, ToolError, UsageError
from .config import TrainConfig

# A CPU run above this size would take hours per step: refuse unless model.allow_cpu.
CPU_MAX_PARAMS = 150_000_000


def resolve_device(spec: str) -> torch.device:
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise PrerequisiteError(f"model.device = '{spec}' but torch sees no CUDA GPU "
                                    f"(torch {torch.__version__})",
                                    hint="run on a GPU machine with a CUDA build of torch, or use --device cpu "
                                         "with a tiny model")
        return torch.device(spec)
    if spec == "cpu":
        return torch.device("cpu")
    raise UsageError(f"unknown device {spec!r}", hint="use auto, cpu, cuda or cuda:N")


def resolve_dtype(spec: str, device: torch.device) -> torch.dtype:
    """The compute dtype: bf16 on a GPU that has it, float32 on CPU."""
    if spec == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[spec]


def param_dtype(cfg: TrainConfig, compute: torch.dtype) -> torch.dtype:
    """The dtype the weights are stored (and updated) in.

    Full fine-tuning keeps float32 master weights and computes in bf16 under autocast: an AdamW
    step of lr 1e-6 on a bf16 weight of size ~1e-2 is below bf16's resolution (2^-8 relative)
    and rounds away, so a pure-bf16 run would silently learn nothing. LoRA stores the frozen
    base in the compute dtype (peft keeps the adapters in float32).
    """
    if compute == torch.float32 or cfg.lora.enabled or cfg.model.dtype != "auto":
        return compute
    return torch.float32


def autocast(device: torch.device, params: torch.dtype, compute: torch.dtype):
    """Mixed precision where weights and compute dtypes differ; a no-op otherwise."""
    if params == compute:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=compute)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get("TRANSFORMERS_OFFLINE", "") not in ("", "0")


def _looks_local(name: str) -> bool:
    return name.startswith(("/", ".", "~")) or Path(name).exists() or name.count("/") > 1


def _from_pretrained(loader, name: str, **kwargs):
    """Local files first (no network); the hub only when the name is not a folder and we are online."""
    if _looks_local(name) and not Path(name).expanduser().exists():
        raise UsageError(f"model folder {name} does not exist", hint="pass an existing folder or a hub name to --model")
    try:
        return loader.from_pretrained(name, local_files_only=True, **kwargs)
    except OSError as local_err:
        if _looks_local(name) or _offline():
            raise PrerequisiteError(
                f"model '{name}' is not available offline: {str(local_err).splitlines()[0]}",
                hint="download it first on a machine with internet (huggingface-cli download NAME) "
                     "or pass a local folder to --model",
            ) from local_err
    try:
        return loader.from_pretrained(name, **kwargs)
    except OSError as err:
        raise PrerequisiteError(
            f"model '{name}' could not be loaded: {str(err).splitlines()[0]}",
            hint="check the name, your network and HF_TOKEN for gated models; or pass a local folder to --model",
        ) from err


def count_params(name: str, trust_remote_code: bool = False) -> int | None:
    """Parameter count from the config alone (no weights loaded), or None if unknown."""
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = _from_pretrained(AutoConfig, name, trust_remote_code=trust_remote_code)
        with torch.device("meta"):
            meta = AutoModelForCausalLM.from_config(config, trust_remote_code=trust_remote_code)
        return sum(p.numel() for p in meta.parameters())
    except ToolError:
        raise
    except Exception:
        return None


def load_tokenizer(name: str, trust_remote_code: bool = False):
    from transformers import AutoTokenizer

    tok = _from_pretrained(AutoTokenizer, name, trust_remote_code=trust_remote_code)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    if not getattr(tok, "chat_template", None):
        raise UsageError(f"the tokenizer of '{name}' has no chat template",
                         hint="verifiers environments speak chat messages: use an instruct/chat model")
    return tok


def load_model(cfg: TrainConfig, device: torch.device, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM

    name = cfg.model.name
    if not name:
        raise UsageError("no model given", hint="pass --model NAME_OR_FOLDER or set [model] name in the config")
    n_params = count_params(name, cfg.model.trust_remote_code)
    if device.type == "cpu" and n_params and n_params > CPU_MAX_PARAMS and not cfg.model.allow_cpu:
        raise PrerequisiteError(
            f"'{name}' has {n_params / 1e6:.0f}M parameters and no GPU was found: training it on CPU "
            "would take hours per step",
            hint="run on a CUDA GPU, use a smaller model, or set model.allow_cpu = true to insist",
        )
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # stderr stays readable: one line per step
    model = _from_pretrained(AutoModelForCausalLM, name, dtype=dtype, trust_remote_code=cfg.model.trust_remote_code)
    model.to(device)
    if cfg.model.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    return model


TINY_MODEL_PARAMS = 20_000_000


def set_cpu_threads(model, cfg: TrainConfig, device: torch.device) -> int:
    """Fewer CPU threads for tiny models: per-op thread synchronisation dominates their cost."""
    if device.type != "cpu":
        return torch.get_num_threads()
    threads = cfg.model.cpu_threads
    if threads <= 0 and sum(p.numel() for p in model.parameters()) < TINY_MODEL_PARAMS:
        threads = 1
    if threads > 0:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def apply_lora(model, cfg: TrainConfig):
    if not cfg.lora.enabled:
        return model
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as err:
        raise PrerequisiteError("lora.enabled needs peft", hint="pip install peft") from err
    present = {n.split(".")[-1] for n, _ in model.named_modules()}
    targets = [t for t in cfg.lora.target_modules if t in present]
    if not targets:
        raise UsageError(f"none of lora.target_modules {cfg.lora.target_modules} exist in this model",
                         hint="linear layer names in it include: " + ", ".join(sorted(present)[:12]))
    lcfg = LoraConfig(r=cfg.lora.rank, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=targets, task_type="CAUSAL_LM")
    return get_peft_model(model, lcfg)


def is_peft(model) -> bool:
    return hasattr(model, "peft_config")


@contextlib.contextmanager
def reference_policy(model):
    """The starting policy for the KL term: LoRA adapters switched off."""
    if is_peft(model):
        with model.disable_adapter():
            yield model
    else:  # full fine-tuning keeps a frozen copy (see Trainer.ref_model)
        yield model


def export_weights(model) -> Iterator[tuple[str, torch.Tensor]]:
    """Full-model weights under the base model's names (LoRA merged in, then unmerged)."""
    if is_peft(model):
        model.merge_adapter()
        try:
            base = model.get_base_model()
            for name, tensor in base.state_dict().items():
                if "lora_" in name:
                    continue
                yield name.replace(".base_layer.", "."), tensor
        finally:
            model.unmerge_adapter()
    else:
        yield from model.state_dict().items()


def oom_error(where: str, cfg: TrainConfig) -> ToolError:
    knobs = {
        "generation": "lower batch_size or sampling.max_completion_tokens (or use sampler.type = 'vllm')",
        "training": f"set micro_batch_size lower (now {cfg.micro_batch_size or cfg.batch_size}; gradient "
                    "accumulation keeps the effective batch), enable lora, or model.gradient_checkpointing = true",
        "eval": "lower eval.num_examples or sampling.max_completion_tokens",
    }
    return PrerequisiteError(f"out of GPU memory during {where}", hint=knobs.get(where, knobs["training"]))


def is_oom(err: BaseException) -> bool:
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom_type is not None and isinstance(err, oom_type)) or "out of memory" in str(err).lower()
