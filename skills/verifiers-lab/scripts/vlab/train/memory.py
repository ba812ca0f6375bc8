"""How much device memory a local-train run needs: pure arithmetic on the model's shape.

No torch here, so the estimate is cheap to test and to print before anything loads.

The pieces (bytes):
- weights: every parameter in the weights dtype (float32 master weights under bf16
  compute for full fine-tuning, the compute dtype for a LoRA base);
- grads and AdamW state: the trainable parameters, in the optimization dtype (grads
  1x, AdamW's two moments 2x);
- the compute copy: under autocast every weight is cast to the compute dtype once per
  forward and the copies live until the backward ends;
- activations: what autograd saves per token of a micro-batch. Per decoder layer,
  measured on Qwen2 with torch's saved-tensor hooks (tests/test_train_memory.py checks
  it): 8 hidden-size float32 values (residual stream and RMSNorm) plus 4 hidden-size and
  4 MLP-size values in the compute dtype when the residual stream is float32, or 4
  float32 + 8 compute-dtype hidden-size values when it is not. With gradient
  checkpointing only each layer's input is kept, plus one layer recomputed at a time;
- the logits chunk: the loss computes token logprobs `lm_head_chunk` tokens at a time
  (never the full [tokens, vocab] float32 logits), about 14 bytes per logit in flight
  (bf16 logits, float32 copy, softmax, gradient);
- generation: the sampler's KV cache (every rollout of a generate call x prompt +
  completion tokens) and one step's logits.

Generation and the update do not overlap: the peak is the larger of the two phases on
top of what stays resident (weights, AdamW state, the KL reference model).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

GIB = 2**30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

# Bytes in flight per logit while one chunk of the loss runs (see the module docstring).
LOGIT_BYTES_IN_FLIGHT = 14
# The loss's logits chunk is sized to about this many bytes (256 tokens at Qwen's 152k vocab).
LOGITS_CHUNK_BYTES = 512 * 2**20
# Share of the free memory the plan may use, and a fixed reserve on a GPU for the CUDA
# context, cuBLAS workspaces and allocator fragmentation.
MEMORY_UTILIZATION = 0.9
CUDA_RESERVE_BYTES = 1 * GIB
# A prompt length to plan for when model.seq_len is not set (the data is not read yet).
DEFAULT_PROMPT_TOKENS = 512
# Gradient checkpointing costs about a third more compute (one extra forward). It is
# worth it when activations, not weights, decide the micro-batch: on an 80 GB GPU a
# full fine-tune at 1B+ parameters keeps 16 bytes a parameter resident (16+ GB), and
# without checkpointing its layers save about 0.2-0.4 MB a token per layer (Qwen2.5-1.5B:
# 28 layers, 4.8 MB a token), so a micro-batch would hold only a few thousand tokens,
# too few rows to keep the GPU's matmuls busy; with checkpointing it is 80 KB a token.
# Below 1B (Qwen2.5-0.5B: 2.3 MB a token) micro-batches of 20k+ tokens fit without it.
# The plan also switches it on whenever one full-length sequence would not fit without.
CHECKPOINTING_MIN_PARAMS = 1_000_000_000
# Fewer tokens than this per micro-batch wastes a GPU: checkpointing is worth its cost then.
MIN_EFFICIENT_MICRO_BATCH_TOKENS = 4096


@dataclass(frozen=True)
class ModelShape:
    params: int
    hidden: int
    layers: int
    intermediate: int
    vocab: int
    kv_heads: int
    head_dim: int

    @classmethod
    def from_config(cls, config, params: int) -> ModelShape:
        """From a transformers config (attribute names shared by Llama/Qwen/Mistral-style models)."""
        text = getattr(config, "text_config", None) or config
        hidden = int(getattr(text, "hidden_size", 0) or getattr(text, "n_embd", 0) or 0)
        heads = int(getattr(text, "num_attention_heads", 0) or getattr(text, "n_head", 0) or 1)
        kv = int(getattr(text, "num_key_value_heads", 0) or heads)
        head_dim = int(getattr(text, "head_dim", 0) or (hidden // heads if heads else 0))
        return cls(
            params=int(params),
            hidden=hidden,
            layers=int(getattr(text, "num_hidden_layers", 0) or getattr(text, "n_layer", 0) or 0),
            intermediate=int(getattr(text, "intermediate_size", 0) or 4 * hidden),
            vocab=int(getattr(text, "vocab_size", 0) or 0),
            kv_heads=kv,
            head_dim=head_dim,
        )


@dataclass(frozen=True)
class Precision:
    compute: str = "float32"  # matmuls (autocast dtype, or the weights' own)
    weights: str = "float32"  # stored parameters (master weights)
    optimization: str = "float32"  # trainable parameters, their grads and AdamW state

    @property
    def mixed(self) -> bool:
        return self.compute != self.weights


def act_bytes_per_token(shape: ModelShape, precision: Precision, checkpointing: bool) -> int:
    """Bytes autograd keeps per token of a micro-batch (see the module docstring)."""
    c = DTYPE_BYTES[precision.compute]
    res = DTYPE_BYTES[precision.weights]  # the residual stream follows the embedding's dtype
    h, i = shape.hidden, shape.intermediate
    if res == 4 and c < 4:  # float32 residual stream, bf16 matmuls
        layer = 4 * 8 * h + c * (4 * h + 4 * i)
    elif c == 4:
        layer = 4 * (12 * h + 4 * i)
    else:  # everything in the compute dtype; RMSNorm still upcasts
        layer = 4 * 4 * h + c * (8 * h + 4 * i)
    head = 4 * 4 * h  # embedding output, final norm, the hidden states the loss reads
    if checkpointing:
        return shape.layers * res * h + layer + head
    return shape.layers * layer + head


def lm_head_chunk_tokens(vocab: int, chunk: int = 0) -> int:
    """Tokens per chunk of the loss's logits (`model.fused_lm_head_token_chunk_size`; 0: sized to 512 MiB)."""
    if chunk > 0:
        return chunk
    return max(16, LOGITS_CHUNK_BYTES // max(1, vocab * LOGIT_BYTES_IN_FLIGHT))


@dataclass
class Estimate:
    """Bytes per component, the two phases' peaks, and the micro-batch/generation sizes chosen."""

    weights: int
    grads: int
    optimizer: int
    compute_copy: int
    reference: int
    activations_per_token: int
    micro_batch_tokens: int
    activations: int
    logits_chunk: int
    lm_head_chunk: int
    kv_cache_per_sequence: int
    generation_batch: int
    kv_cache: int
    generation_logits: int
    seq_len: int
    checkpointing: bool

    @property
    def resident(self) -> int:
        return self.weights + self.optimizer + self.reference

    @property
    def update_peak(self) -> int:
        return self.resident + self.grads + self.compute_copy + self.activations + self.logits_chunk

    @property
    def generation_peak(self) -> int:
        # under autocast the weights' compute-dtype copies live through a generate call too
        return self.resident + self.compute_copy + self.kv_cache + self.generation_logits

    @property
    def peak(self) -> int:
        return max(self.update_peak, self.generation_peak)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(
            resident=self.resident,
            update_peak=self.update_peak,
            generation_peak=self.generation_peak,
            peak=self.peak,
        )
        return d

    def gib(self) -> dict[str, float]:
        keys = (
            "weights",
            "grads",
            "optimizer",
            "compute_copy",
            "reference",
            "activations",
            "logits_chunk",
            "kv_cache",
            "generation_logits",
            "update_peak",
            "generation_peak",
            "peak",
        )
        d = self.to_dict()
        return {k: round(d[k] / GIB, 3) for k in keys}


def kv_bytes_per_token(shape: ModelShape, precision: Precision) -> int:
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * DTYPE_BYTES[precision.compute]


def estimate(
    shape: ModelShape,
    precision: Precision,
    *,
    trainable: int,
    rollouts: int,
    seq_len: int,
    micro_batch_tokens: int,
    checkpointing: bool,
    reference_model: bool = False,
    generation_batch: int = 0,
    lm_head_chunk: int = 0,
) -> Estimate:
    """The memory of one run: `rollouts` sequences of `seq_len` tokens per step, trained in
    micro-batches of at most `micro_batch_tokens` token slots (rows x width, padding or a packed
    row's tail included; at least one sequence).

    `trainable` below `shape.params` means LoRA: that many adapter parameters on a frozen base.
    """
    w = DTYPE_BYTES[precision.weights]
    o = DTYPE_BYTES[precision.optimization]
    c = DTYPE_BYTES[precision.compute]
    per_tok = act_bytes_per_token(shape, precision, checkpointing)
    mb_tokens = min(max(micro_batch_tokens, seq_len), rollouts * seq_len)
    chunk = min(lm_head_chunk_tokens(shape.vocab, lm_head_chunk), mb_tokens)
    gen_batch = min(generation_batch or rollouts, rollouts)
    adapters = trainable if trainable < shape.params else 0  # LoRA: the adapters come on top of the base
    return Estimate(
        weights=shape.params * w + adapters * o,
        grads=trainable * o,
        optimizer=2 * trainable * o,
        compute_copy=shape.params * c if precision.mixed else 0,
        reference=shape.params * w if reference_model else 0,
        activations_per_token=per_tok,
        micro_batch_tokens=mb_tokens,
        activations=per_tok * mb_tokens,
        logits_chunk=chunk * shape.vocab * LOGIT_BYTES_IN_FLIGHT,
        lm_head_chunk=chunk,
        kv_cache_per_sequence=kv_bytes_per_token(shape, precision) * seq_len,
        generation_batch=gen_batch,
        kv_cache=kv_bytes_per_token(shape, precision) * seq_len * gen_batch,
        generation_logits=3 * gen_batch * shape.vocab * 4,
        seq_len=seq_len,
        checkpointing=checkpointing,
    )


def budget_bytes(free: int, cuda: bool, already_loaded: int = 0) -> int:
    """What the plan may use: a share of the free memory (less a GPU reserve), plus what this
    run has already loaded (the weights, when planned after loading)."""
    usable = int(free * MEMORY_UTILIZATION) - (CUDA_RESERVE_BYTES if cuda else 0)
    return max(0, usable) + already_loaded


def fit(
    shape: ModelShape,
    precision: Precision,
    *,
    budget: int,
    trainable: int,
    rollouts: int,
    seq_len: int,
    checkpointing: bool | None,
    micro_batch_tokens: int = 0,
    reference_model: bool = False,
    lm_head_chunk: int = 0,
) -> tuple[Estimate, bool]:
    """Choose the micro-batch token budget, the generation batch and (when `checkpointing`
    is None: auto) gradient checkpointing so the run fits in `budget` bytes.

    An explicit `micro_batch_tokens` (> 0) is kept as given. Returns the estimate and whether
    it fits.
    """
    modes = [checkpointing] if checkpointing is not None else [shape.params >= CHECKPOINTING_MIN_PARAMS, True]
    best: Estimate | None = None
    for ckpt in dict.fromkeys(modes):  # auto: try the size rule first, then checkpointing
        base = estimate(
            shape,
            precision,
            trainable=trainable,
            rollouts=rollouts,
            seq_len=seq_len,
            micro_batch_tokens=seq_len,
            checkpointing=ckpt,
            reference_model=reference_model,
            lm_head_chunk=lm_head_chunk,
        )
        if micro_batch_tokens > 0:
            tokens = micro_batch_tokens
        else:
            room = budget - (base.update_peak - base.activations)
            tokens = max(seq_len, room // max(1, base.activations_per_token))
        kv_room = budget - base.resident - 3 * shape.vocab * 4
        gen_batch = max(1, min(rollouts, kv_room // max(1, base.kv_cache_per_sequence + 3 * shape.vocab * 4)))
        est = estimate(
            shape,
            precision,
            trainable=trainable,
            rollouts=rollouts,
            seq_len=seq_len,
            micro_batch_tokens=tokens,
            checkpointing=ckpt,
            reference_model=reference_model,
            generation_batch=gen_batch,
            lm_head_chunk=lm_head_chunk,
        )
        best = est
        # memory, not the user, made the micro-batch small: checkpointing buys a bigger one
        small = micro_batch_tokens <= 0 and est.micro_batch_tokens < min(
            MIN_EFFICIENT_MICRO_BATCH_TOKENS, rollouts * seq_len
        )
        if est.peak <= budget and not (checkpointing is None and not ckpt and small):
            return est, True
    assert best is not None
    return best, best.peak <= budget


def knobs(est: Estimate, precision: Precision, lora: bool) -> str:
    """The settings to turn, largest saving first, for a run that does not fit."""
    out = []
    if est.update_peak >= est.generation_peak:
        if not lora:
            out.append("lora.enabled = true (--lora)")
        if not est.checkpointing:
            out.append("model.gradient_checkpointing = true")
        if precision.optimization == "float32" and not lora:
            out.append("model.optimization_dtype = 'bfloat16' (halves weights, grads and AdamW state)")
        out.append("a smaller model.seq_len or sampling.max_completion_tokens")
        if est.micro_batch_tokens > est.seq_len:
            out.append(f"a smaller micro_batch_tokens (now {est.micro_batch_tokens})")
    else:
        out.append("a smaller batch_size or sampling.max_completion_tokens (the KV cache of generation)")
        if not lora:
            out.append("lora.enabled = true (--lora)")
    return "; ".join(out)
