"""A decode loop that owns its buffers, for the HF sampler (no vLLM needed).

- One preallocated KV cache per generate call ([rows, kv_heads, prompt + completion,
  head_dim] per layer, allocated at the first write in the dtype the layers produce), so
  no step reallocates or concatenates.
- The prompts are prefilled in one batched forward (left padding, explicit position ids),
  then each decode step is one forward of one token per live row.
- Sampling happens here: the chosen token's logprob under softmax(logits / T) is gathered
  at each step into a [rows, max_new_tokens] buffer; one step's logits are the only
  full-vocabulary tensor alive.
- Rows that finished (eos) stop costing compute: when a quarter of the rows are done the
  batch is compacted (KV cache and all per-row state index-selected).
- `static_shapes` runs a fixed-length cache (it returns its full length and the mask hides the
  unwritten part), the shapes `vlab.train.graphs` replays as CUDA graphs on a GPU.

Logits come from the model's (decoder, lm_head) pair (`vlab.train.model.lm_parts`), the
same the trainer's loss uses. The attention layers see a prepared 4D mask, so this works
for transformers' sdpa and eager attention; `supported()` says when to fall back to
`generate`.
"""

from __future__ import annotations

import torch

# Compact the batch once this share of its rows is still live (or fewer).
COMPACT_AT = 0.75
# Host syncs ("are all rows done?") every this many steps on a GPU; every step on CPU.
CUDA_SYNC_EVERY = 8


class KVCache:
    """The cache object transformers' attention layers call `update(key, value, layer_idx)` on."""

    is_compileable = False

    def __init__(self, max_len: int, static_shapes: bool = False):
        self.max_len = max_len
        self.static_shapes = static_shapes
        self.keys: list[torch.Tensor | None] = []
        self.values: list[torch.Tensor | None] = []
        self.length = 0  # tokens written
        self.write_pos: torch.Tensor | None = None  # device copy of `length` (static shapes)

    def _alloc(self, layer_idx: int, key: torch.Tensor, value: torch.Tensor) -> None:
        while len(self.keys) <= layer_idx:
            self.keys.append(None)
            self.values.append(None)
        b, h, _, d = key.shape
        self.keys[layer_idx] = torch.zeros((b, h, self.max_len, d), dtype=key.dtype, device=key.device)
        self.values[layer_idx] = torch.zeros(
            (b, value.shape[1], self.max_len, value.shape[-1]), dtype=value.dtype, device=value.device
        )
        if self.write_pos is None:
            self.write_pos = torch.zeros((), dtype=torch.long, device=key.device)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args, **kwargs):
        if layer_idx >= len(self.keys) or self.keys[layer_idx] is None:
            self._alloc(layer_idx, key_states, value_states)
        k, v = self.keys[layer_idx], self.values[layer_idx]
        n = key_states.shape[-2]
        if self.static_shapes:
            idx = self.write_pos + torch.arange(n, device=k.device)
            k.index_copy_(2, idx, key_states.to(k.dtype))
            v.index_copy_(2, idx, value_states.to(v.dtype))
            return k, v
        s = self.length
        k[:, :, s : s + n] = key_states
        v[:, :, s : s + n] = value_states
        return k[:, :, : s + n], v[:, :, : s + n]

    def advance(self, n: int) -> None:
        self.length += n
        if self.write_pos is not None:
            self.write_pos.add_(n)

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.length

    def get_max_length(self) -> int:
        return self.max_len

    def __len__(self) -> int:
        return len(self.keys)

    def select(self, rows: torch.Tensor) -> None:
        """Keep only these batch rows (finished rows stop costing compute)."""
        self.keys = [k.index_select(0, rows) if k is not None else None for k in self.keys]
        self.values = [v.index_select(0, rows) if v is not None else None for v in self.values]


def supported(model) -> bool:
    """Whether this loop can drive the model: a (decoder, lm_head) pair, an attention
    implementation that takes a prepared 4D mask (sdpa or eager), no sliding window, and
    a short decode that matches the model's own forward (checked once per model)."""
    from vlab.train.model import once_per_model

    return once_per_model(model, "_vlab_decode_ok", lambda: _shape_ok(model) and _self_check(model))


def _shape_ok(model) -> bool:
    from vlab.train.model import lm_parts

    if lm_parts(model) is None:
        return False
    config = model.get_base_model().config if hasattr(model, "get_base_model") else model.config
    impl = getattr(config, "_attn_implementation", None) or "eager"
    if impl not in ("sdpa", "eager"):
        return False
    if getattr(config, "use_sliding_window", False) and getattr(config, "sliding_window", None):
        return False
    layer_types = getattr(config, "layer_types", None) or []
    return all(t == "full_attention" for t in layer_types)


@torch.no_grad()
def _self_check(model) -> bool:
    """Decode two short prompts greedily and compare each step's logprob with the model's
    own forward over the finished sequence (the trainer's view)."""
    from vlab.train.model import eval_mode, lm_parts

    decoder, head = lm_parts(model)
    device = head.weight.device
    vocab = head.weight.shape[0]
    prompts = [[(7 * i + 3) % vocab for i in range(5)], [(11 * i + 5) % vocab for i in range(3)]]
    config = getattr(model, "config", None)
    with eval_mode(model):
        try:
            tokens, logps = decode(
                decoder,
                head,
                prompts,
                pad_id=0,
                eos_ids=[],
                max_new_tokens=3,
                greedy=True,
                eager_attention=getattr(config, "_attn_implementation", "sdpa") == "eager",
                mask_dtype=head.weight.dtype,
            )
            for row, prompt in enumerate(prompts):
                ids = torch.tensor([prompt + tokens[row].tolist()], device=device)
                logits = model(input_ids=ids, use_cache=False).logits[0, len(prompt) - 1 : -1].float()
                ref = torch.log_softmax(logits, dim=-1).gather(-1, ids[0, len(prompt) :, None].to(device)).squeeze(-1)
                tol = 1e-3 if head.weight.dtype == torch.float32 else 5e-2
                if not torch.allclose(ref.cpu(), logps[row], atol=tol):
                    return False
            return True
        except Exception:  # noqa: BLE001 - an architecture this loop cannot drive: use generate
            return False


def _as_mask(allowed: torch.Tensor, eager: bool, dtype: torch.dtype) -> torch.Tensor:
    """bool [B, 1, Q, K] (True: attend) -> what the attention implementation takes."""
    if not eager:
        return allowed
    zero = torch.zeros((), dtype=dtype, device=allowed.device)
    return torch.where(allowed, zero, torch.finfo(dtype).min)


def pick(
    logits: torch.Tensor,
    temperature: float,
    top_k: int = 0,
    top_p: float = 1.0,
    greedy: bool = False,
    uniform: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row and its logprob under softmax(logits / T) (the trainer's measure).

    top-k / top-p filter the distribution sampled from (as transformers' warpers do), not
    the logprob recorded: the trainer's ratio is against the untruncated distribution.
    """
    scores = logits.float() / temperature
    logp = torch.log_softmax(scores, dim=-1)
    unfiltered = scores
    if greedy:
        tok = scores.argmax(dim=-1)
    else:
        if top_k and top_k < scores.shape[-1]:
            kth = torch.topk(scores, top_k, dim=-1).values[:, -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if top_p < 1.0:
            sorted_scores, order = torch.sort(scores, descending=False, dim=-1)
            cum = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
            drop = cum <= (1 - top_p)
            drop[:, -1] = False  # always keep the most likely token
            scores = scores.masked_fill(drop.scatter(1, order, drop), float("-inf"))
        # no filter applied: the sampling probabilities are exp(logp), no second softmax
        probs = logp.exp() if scores is unfiltered else scores.softmax(dim=-1)
        if uniform is None:
            tok = torch.multinomial(probs, 1).squeeze(1)
        else:  # inverse CDF on each row's own uniform draw: a row's token does not depend on the others
            tok = inverse_cdf(probs, uniform)
    return tok, logp.gather(-1, tok[:, None]).squeeze(1)


def row_draws(row_seeds: list[int], n: int) -> torch.Tensor:
    """[rows, n] uniform draws, each row from its own generator: its tokens do not depend on its batch."""
    return torch.stack(
        [torch.rand(n, generator=torch.Generator().manual_seed(int(s) % (2**63 - 1))) for s in row_seeds]
    )


# Vocabulary positions summed together before the cumulative sum (inverse_cdf).
CDF_BLOCK = 128


def inverse_cdf(probs: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """Per row, the first token whose cumulative probability exceeds uniform * the row's total.

    Two levels, so the one pass over the vocabulary is a sum: the cumulative sum runs over the
    blocks' sums, then inside the chosen block only (a full-vocabulary cumsum was the slowest
    kernel of a GPU decode step)."""
    rows, vocab = probs.shape
    pad = -vocab % CDF_BLOCK
    blocks = (torch.nn.functional.pad(probs, (0, pad)) if pad else probs).view(rows, -1, CDF_BLOCK)
    ends = blocks.sum(dim=-1).cumsum(dim=-1)  # [rows, blocks]: the cdf at each block's end
    at = (uniform.to(ends.dtype) * ends[:, -1])[:, None].contiguous()
    block = torch.searchsorted(ends, at, right=True).clamp(max=ends.shape[-1] - 1)  # [rows, 1]
    start = torch.where(block > 0, ends.gather(1, (block - 1).clamp(min=0)), 0.0)
    mass = blocks.gather(1, block[:, :, None].expand(rows, 1, CDF_BLOCK)).squeeze(1)
    offset = torch.searchsorted(mass.cumsum(dim=-1) + start, at, right=True)
    # rounding can put the draw past the block's last token: then its last token that has any mass
    last = torch.where(mass > 0, torch.arange(CDF_BLOCK, device=probs.device), 0).amax(dim=-1, keepdim=True)
    return (block * CDF_BLOCK + torch.minimum(offset, last)).squeeze(1).clamp(max=vocab - 1)


@torch.no_grad()
def decode(
    decoder,
    head,
    prompts: list[list[int]],
    *,
    pad_id: int,
    eos_ids: list[int],
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    greedy: bool = False,
    eager_attention: bool = False,
    mask_dtype: torch.dtype = torch.float32,
    static_shapes: bool = False,
    row_seeds: list[int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generate for left-padded prompts. Returns (tokens, logprobs), each [rows, max_new_tokens]
    on CPU; a row's tokens after its first eos are padding. `static_shapes` runs a fixed-length
    cache and masks (CUDA graphs run that way: `vlab.train.graphs`). `row_seeds` (one per prompt) samples each
    row from its own generator (one uniform draw per token), so a row's tokens do not depend on which
    rows share the batch; without them the rows share torch's global generator."""
    device = head.weight.device
    b, n = len(prompts), max_new_tokens
    width = max(len(p) for p in prompts)
    total = width + n
    ids = torch.full((b, width), pad_id, dtype=torch.long)
    valid = torch.zeros((b, total), dtype=torch.bool)
    lens = torch.tensor([len(p) for p in prompts], dtype=torch.long)
    for r, p in enumerate(prompts):
        ids[r, width - len(p) :] = torch.tensor(p, dtype=torch.long)
        valid[r, width - len(p) :] = True
    ids, valid, lens = ids.to(device), valid.to(device), lens.to(device)
    pos = (torch.arange(width, device=device)[None, :] - (width - lens)[:, None]).clamp(min=0)
    cache = KVCache(total, static_shapes=static_shapes)

    # Prefill: causal over the real tokens; a padding position sees itself (no empty softmax row).
    causal = torch.ones((width, width), dtype=torch.bool, device=device).tril()
    eye = torch.eye(width, dtype=torch.bool, device=device)
    allowed = ((causal[None] & valid[:, None, :width]) | eye[None])[:, None]
    if static_shapes:  # the static cache returns all `total` positions; the unwritten ones are masked
        allowed = torch.nn.functional.pad(allowed, (0, total - width), value=False)
    hidden = decoder(
        input_ids=ids,
        attention_mask=_as_mask(allowed, eager_attention, mask_dtype),
        position_ids=pos,
        past_key_values=cache,
        use_cache=True,
    ).last_hidden_state[:, -1]
    cache.advance(width)

    tokens = torch.full((b, n), pad_id, dtype=torch.long, device=device)
    logps = torch.zeros((b, n), dtype=torch.float32, device=device)
    rows = torch.arange(b, device=device)  # original row of each live row
    done = torch.zeros(b, dtype=torch.bool, device=device)
    eos = torch.tensor(eos_ids or [-1], dtype=torch.long, device=device)
    next_pos = lens.clone()
    sync_every = CUDA_SYNC_EVERY if device.type == "cuda" else 1
    draws = None
    if row_seeds is not None and not greedy:
        draws = row_draws(row_seeds, n).to(device)
    for t in range(n):
        tok, lp = pick(head(hidden), temperature, top_k, top_p, greedy, None if draws is None else draws[rows, t])
        tok = torch.where(done, pad_id, tok)
        tokens[rows, t] = tok
        logps[rows, t] = torch.where(done, 0.0, lp)
        done |= torch.isin(tok, eos)
        if t == n - 1:
            break
        if (t + 1) % sync_every == 0:
            live = (~done).nonzero().squeeze(1)
            if live.numel() == 0:
                break
            if live.numel() <= COMPACT_AT * done.numel():
                cache.select(live)
                rows, done, next_pos, valid, tok = rows[live], done[live], next_pos[live], valid[live], tok[live]
        if cache.static_shapes:  # the cache returns every position: hide the unwritten ones
            span = torch.arange(total, device=device)
            allowed = (valid & (span[None, :] <= cache.length))[:, None, None, :]
        else:
            allowed = valid[:, None, None, : cache.length + 1]
        hidden = decoder(
            input_ids=tok[:, None],
            attention_mask=_as_mask(allowed, eager_attention, mask_dtype),
            position_ids=next_pos[:, None],
            past_key_values=cache,
            use_cache=True,
        ).last_hidden_state[:, -1]
        cache.advance(1)
        next_pos += 1
    return tokens.cpu(), logps.cpu()
