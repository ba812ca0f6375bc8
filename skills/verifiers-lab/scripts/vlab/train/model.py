"""Model side of the trainer: device and dtype choice, loading a model and its
tokenizer (offline-first), LoRA, the weights a vLLM sampler reloads, and turning
out-of-memory errors into "lower this knob" messages.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from vlab.core.result import PrerequisiteError, ToolError, UsageError
from vlab.train import hubmodel
from vlab.train.config import TrainConfig
from vlab.train.hubmodel import looks_local as _looks_local

# A CPU run above this size would take hours per step: refuse unless model.allow_cpu.
CPU_MAX_PARAMS = 150_000_000


def resolve_device(spec: str) -> torch.device:
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise PrerequisiteError(
                f"model.device = '{spec}' but torch sees no CUDA GPU (torch {torch.__version__})",
                hint="run on a GPU machine with a CUDA build of torch, or use --device cpu with a tiny model",
            )
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
    return DTYPES[spec]


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def param_dtype(cfg: TrainConfig, compute: torch.dtype) -> torch.dtype:
    """The dtype the weights are stored (and, for full fine-tuning, updated) in.

    Full fine-tuning keeps float32 master weights and computes in bf16 under autocast: an AdamW
    step of lr 1e-6 on a bf16 weight of size ~1e-2 is below bf16's resolution (2^-8 relative)
    and rounds away, so a pure-bf16 run would silently learn nothing. `model.optimization_dtype`
    overrides it (bfloat16 halves the weights, grads and AdamW state). LoRA stores the frozen
    base in the compute dtype (the adapters: see `optimization_dtype`).
    """
    if cfg.lora.enabled:
        return compute
    if cfg.model.optimization_dtype != "auto":
        return DTYPES[cfg.model.optimization_dtype]
    if compute == torch.float32 or cfg.model.dtype != "auto":
        return compute
    return torch.float32


def optimization_dtype(cfg: TrainConfig, compute: torch.dtype) -> torch.dtype:
    """The trainable parameters' dtype (their grads and AdamW state follow it)."""
    if cfg.model.optimization_dtype != "auto":
        return DTYPES[cfg.model.optimization_dtype]
    if cfg.lora.enabled:  # peft keeps adapters in float32 under a half-precision base
        return torch.float32
    return param_dtype(cfg, compute)


def autocast(device: torch.device, params: torch.dtype, compute: torch.dtype):
    """Mixed precision where weights and compute dtypes differ; a no-op otherwise."""
    if params == compute:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=compute)


def _from_pretrained(loader, name: str, **kwargs):
    """Local files first (no network); the hub only when the name is not a folder and we are online."""
    if _looks_local(name):
        hubmodel.require_folder(name)
    try:
        return loader.from_pretrained(name, local_files_only=True, **kwargs)
    except OSError as local_err:
        if not _looks_local(name):
            hubmodel.require_model(name)  # not cached: offline, unreachable or unknown, said at once
        if _looks_local(name) or hubmodel.offline():
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
        raise UsageError(
            f"the tokenizer of '{name}' has no chat template",
            hint="verifiers environments speak chat messages: use an instruct/chat model",
        )
    return tok


def require_model_name(cfg: TrainConfig) -> str:
    if not cfg.model.name:
        raise UsageError("no model given", hint="pass --model NAME_OR_FOLDER or set [model] name in the config")
    return cfg.model.name


def check_cpu_size(cfg: TrainConfig, device: torch.device, n_params: int | None) -> None:
    if device.type == "cpu" and n_params and n_params > CPU_MAX_PARAMS and not cfg.model.allow_cpu:
        raise PrerequisiteError(
            f"'{cfg.model.name}' has {n_params / 1e6:.0f}M parameters and no GPU was found: training it on CPU "
            "would take hours per step",
            hint="run on a CUDA GPU, use a smaller model, or set model.allow_cpu = true to insist",
        )


def load_model(cfg: TrainConfig, device: torch.device, dtype: torch.dtype, checkpointing: bool | None = None):
    """The model on `device` in `dtype`; gradient checkpointing as planned (None: only when set to true)."""
    from transformers import AutoModelForCausalLM

    name = require_model_name(cfg)
    check_cpu_size(cfg, device, count_params(name, cfg.model.trust_remote_code))
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # stderr stays readable: one line per step
    model = _from_pretrained(AutoModelForCausalLM, name, dtype=dtype, trust_remote_code=cfg.model.trust_remote_code)
    model.to(device)
    if checkpointing if checkpointing is not None else cfg.model.gradient_checkpointing is True:
        enable_checkpointing(model)
    return model


def enable_checkpointing(model) -> None:
    """Recompute each decoder layer in the backward. Non-reentrant: gradients reach LoRA
    adapters under a frozen embedding; the sampler passes use_cache itself, so generation
    keeps its KV cache (a layer checkpoints only in train mode)."""
    kwargs = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):  # transformers 5.2x's name
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def checkpointing_on(model) -> bool:
    """Whether the model (a PEFT model's base) recomputes its layers in the backward."""
    base = model.get_base_model() if is_peft(model) else model
    for name in ("is_activation_checkpointing", "is_gradient_checkpointing"):  # transformers 5.2x, older
        value = getattr(base, name, None)
        if isinstance(value, bool):
            return value
    return False


def model_config(name: str, trust_remote_code: bool = False):
    """The transformers config of a model name or folder (no weights), for the memory plan."""
    from transformers import AutoConfig

    return _from_pretrained(AutoConfig, name, trust_remote_code=trust_remote_code)


# Config attributes of models whose logits are not lm_head(last hidden state): they go the
# plain way (full logits, chunked logprobs) instead of the chunked lm-head path.
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling", "output_multiplier_scale")


_UNCHECKED = object()


def once_per_model(model, attr: str, check):
    """`check()`, answered once per model and kept on it as `attr` (None and False are answers too);
    a model that takes no attribute is checked on every call."""
    cached = getattr(model, attr, _UNCHECKED)
    if cached is not _UNCHECKED:
        return cached
    answer = check()
    try:
        object.__setattr__(model, attr, answer)
    except (AttributeError, TypeError):
        pass
    return answer


@contextlib.contextmanager
def eval_mode(model):
    """The model in eval mode for the block (no dropout), back in training mode after if it was."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        if was_training:
            model.train()


def lm_parts(model):
    """(decoder, lm_head) of a causal LM whose logits are exactly lm_head(decoder(...)), else None.

    The loss and the sampler use them to compute logits a chunk of tokens at a time. Checked
    once per model against the model's own forward on a short input.
    """

    def check():
        parts = _find_lm_parts(model)
        return parts if parts is not None and _same_logits(model, parts) else None

    return once_per_model(model, "_vlab_lm_parts", check)


def _find_lm_parts(model):
    base = model.get_base_model() if is_peft(model) else model
    if not type(base).__name__.endswith("ForCausalLM"):
        return None
    config = getattr(base, "config", None)
    for attr in _LOGIT_TRANSFORMS:
        if getattr(config, attr, None) not in (None, 0, 1, 1.0):
            return None
    try:
        decoder = base.get_decoder()
        head = base.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None
    if decoder is None or head is None or decoder is base:
        return None
    return decoder, head


@torch.no_grad()
def _same_logits(model, parts) -> bool:
    decoder, head = parts
    device = next(model.parameters()).device
    vocab = head.weight.shape[0]
    ids = (torch.arange(6, device=device).unsqueeze(0) * 7919 + 11) % vocab
    with eval_mode(model):
        try:
            full = model(input_ids=ids, use_cache=False).logits.float()
            mine = head(decoder(input_ids=ids, use_cache=False).last_hidden_state).float()
        except Exception:  # noqa: BLE001 - any surprise means the plain path
            return False
    return full.shape == mine.shape and torch.allclose(full, mine, rtol=1e-3, atol=1e-3)


def packs_sequences(model, autocast=None) -> bool:
    """Does the model keep sequences laid end to end in one row apart, given position ids that
    restart at each one and no attention_mask (`rollout.collate_packed`)? transformers 5's own
    attention does (it reads the restarts as a block-diagonal mask, or as flash attention's
    varlen boundaries); older versions under sdpa or eager, and remote code, may attend across
    them, which would train on wrong logprobs. Checked once per model, on evidence."""
    return once_per_model(
        model, "_vlab_packs", lambda: _packed_rows_kept_apart(model, autocast or contextlib.nullcontext)
    )


@torch.no_grad()
def _packed_rows_kept_apart(model, autocast) -> bool:
    """A probe sequence after two different ones: in one attended row the context moves its
    logprobs (`context`); packed, it must not move them (`leak`) and they must be the probe's
    alone (`moved`), both within a tenth of that effect: rounding (bf16 logits differ by a tenth
    of a nat across kernels) stays far below it, a leak or positions not restarted are of its size."""
    n = 8
    try:
        device = next(model.parameters()).device
        vocab = model.get_input_embeddings().num_embeddings
    except (AttributeError, StopIteration, NotImplementedError):
        return False
    ids = (torch.arange(3 * n, device=device) * 7919 + 11) % vocab
    first, other, probe, pos = ids[:n], ids[n : 2 * n], ids[2 * n :], torch.arange(n, device=device)

    def logprobs(before=None, packed=False):
        row = probe if before is None else torch.cat([before, probe])
        kw = {"position_ids": torch.cat([pos, pos])[None]} if packed else {}
        return model(input_ids=row[None], use_cache=False, **kw).logits[0, -n:].float().log_softmax(-1)

    with eval_mode(model):
        try:
            with autocast():
                context = (logprobs(first) - logprobs(other)).abs().max()
                packed = logprobs(first, packed=True)
                leak = (packed - logprobs(other, packed=True)).abs().max()
                moved = (packed - logprobs()).abs().max()
        except Exception:  # noqa: BLE001 - any surprise means padded micro-batches
            return False
    return bool(context > 1e-3 and leak <= context / 10 and moved <= context / 10)


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
        raise UsageError(
            f"none of lora.target_modules {cfg.lora.target_modules} exist in this model",
            hint="linear layer names in it include: " + ", ".join(sorted(present)[:12]),
        )
    lcfg = LoraConfig(
        r=cfg.lora.rank,
        lora_alpha=cfg.lora.alpha,
        lora_dropout=cfg.lora.dropout,
        target_modules=targets,
        task_type="CAUSAL_LM",
    )
    peft_model = get_peft_model(model, lcfg)
    if cfg.model.optimization_dtype != "auto":  # adapters (and their AdamW state) in the chosen dtype
        for p in peft_model.parameters():
            if p.requires_grad:
                p.data = p.data.to(DTYPES[cfg.model.optimization_dtype])
    return peft_model


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
        "training": f"set micro_batch_tokens lower (now {cfg.micro_batch_tokens or 'sized from free memory'}; "
        "gradient accumulation keeps the effective batch), enable lora, or model.gradient_checkpointing = true",
        "eval": "lower eval.num_examples or sampling.max_completion_tokens",
    }
    return PrerequisiteError(f"out of GPU memory during {where}", hint=knobs.get(where, knobs["training"]))


def is_oom(err: BaseException) -> bool:
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom_type is not None and isinstance(err, oom_type)) or "out of memory" in str(err).lower()
