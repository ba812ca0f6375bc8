"""Decoding on CUDA as one replayed graph a step, over buffers the loop owns (issue 39).

A `GraphDecoder` lives as long as its sampler and owns, sized for the largest batch bucket and
the longest prompt + completion it has been asked for (grown, never shrunk):
- every layer's KV cache [rows, kv_heads, capacity, head_dim] and each row's state: last token,
  position, done flag, which keys it may see, its uniform draws, its tokens and logprobs;
- a copy, in the autocast dtype, of every Linear weight autocast would cast (float32 master
  weights under bf16 autocast), refreshed at each call: a step casts nothing, the numbers are
  the trainer's (autocast rounds the same way), and the graphs read fixed addresses;
- one CUDA graph per (batch bucket, sampling settings), captured once: the decoder, the head,
  the sampling draw and the bookkeeping of a whole step in one replay.

When rows finish, the live ones move to the front and the smallest bucket holding them replays:
finished rows cost nothing past the bucket's rounding. Without capture (`capture=False`, the
CPU tests) the same step is called instead of replayed.
"""

from __future__ import annotations

import torch

from vlab.train.decode import KVCache, _as_mask, pick, row_draws

# Batch sizes a graph is captured for; above the last, multiples of it.
BUCKETS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
# Capacity (prompt + completion tokens) grows in steps of this many positions.
CAPACITY_STEP = 64
# Host syncs ("how many rows are live?") every this many steps.
SYNC_EVERY = 8


def bucket_for(rows: int) -> int:
    for b in BUCKETS:
        if rows <= b:
            return b
    top = BUCKETS[-1]
    return -(-rows // top) * top


class _RowsCache(KVCache):
    """The KV cache over the first `rows` rows of the decoder's buffers (static shapes)."""

    def __init__(self, owner: GraphDecoder, rows: int):
        super().__init__(owner.capacity, static_shapes=True)
        self.owner, self.rows = owner, rows
        self.write_pos = owner.write_pos

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args, **kwargs):
        k, v = self.owner.layer_buffers(layer_idx, key_states, value_states)
        k, v = k[: self.rows], v[: self.rows]
        idx = self.write_pos + torch.arange(key_states.shape[-2], device=k.device)
        k.index_copy_(2, idx, key_states.to(k.dtype))
        v.index_copy_(2, idx, value_states.to(v.dtype))
        return k, v

    def __len__(self) -> int:
        return len(self.owner.keys)


def linear_weight_copies(module: torch.nn.Module, dtype: torch.dtype) -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) of every float32 Linear weight and bias that autocast to `dtype` would cast at each use."""
    if dtype == torch.float32:
        return []
    out = []
    for name, mod in module.named_modules():
        for attr in ("weight", "bias"):
            param = getattr(mod, attr, None) if isinstance(mod, torch.nn.Linear) else None
            if param is not None and param.dtype == torch.float32:
                out.append((f"{name}.{attr}" if name else attr, param))
    return out


class GraphDecoder:
    def __init__(self, decoder, head, *, capture: bool = True):
        self.decoder, self.head = decoder, head
        self.device = head.weight.device
        self.capture = capture and self.device.type == "cuda"
        self.rows = self.capacity = 0
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.graphs: dict[tuple, tuple[torch.cuda.CUDAGraph, _RowsCache]] = {}
        self.pool = None
        self.dtype: torch.dtype | None = None  # the autocast dtype the weight copies are in
        self.copies: dict[str, torch.Tensor] = {}
        self.head_copy: dict[str, torch.Tensor] = {}
        self.sources: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.eos: dict[tuple[int, ...], torch.Tensor] = {}  # kept alive: the graphs read them
        self.stats = {"captures": 0, "compactions": 0, "steps": 0, "row_steps": 0}
        dev = self.device
        self.write_pos = torch.zeros((), dtype=torch.long, device=dev)
        self.t = torch.zeros(1, dtype=torch.long, device=dev)

    # -- buffers ---------------------------------------------------------------------------
    def _reserve(self, rows: int, capacity: int) -> None:
        """Grow the owned buffers (dropping the graphs, which read the old ones)."""
        if rows <= self.rows and capacity <= self.capacity:
            return
        self.rows, self.capacity = max(rows, self.rows), max(capacity, self.capacity)
        self.graphs.clear()
        self.keys, self.values = [], []
        dev, r, c = self.device, self.rows, self.capacity
        self.tok = torch.zeros(r, dtype=torch.long, device=dev)
        self.pos = torch.zeros(r, dtype=torch.long, device=dev)
        self.done = torch.ones(r, dtype=torch.bool, device=dev)
        self.valid = torch.ones((r, c), dtype=torch.bool, device=dev)
        self.draws = torch.zeros((r, c), dtype=torch.float32, device=dev)
        self.tokens = torch.zeros((r, c), dtype=torch.long, device=dev)
        self.logps = torch.zeros((r, c), dtype=torch.float32, device=dev)
        self.span = torch.arange(c, device=dev)

    def layer_buffers(self, layer_idx: int, key: torch.Tensor, value: torch.Tensor):
        while len(self.keys) <= layer_idx:  # first write (the prefill): the dtype the layers produce
            i = len(self.keys)
            if i != layer_idx:
                raise RuntimeError("layers wrote their cache out of order")
            _, h, _, d = key.shape
            self.keys.append(torch.zeros((self.rows, h, self.capacity, d), dtype=key.dtype, device=self.device))
            self.values.append(
                torch.zeros(
                    (self.rows, value.shape[1], self.capacity, value.shape[-1]), dtype=value.dtype, device=self.device
                )
            )
        return self.keys[layer_idx], self.values[layer_idx]

    def _refresh_weights(self) -> None:
        """The Linear weights in the autocast dtype (the trainer moved the float32 ones since the last call)."""
        dtype = torch.get_autocast_dtype(self.device.type) if torch.is_autocast_enabled(self.device.type) else None
        dtype = dtype or torch.float32
        if dtype != self.dtype:
            self.dtype, self.graphs, self.sources, self.copies, self.head_copy = dtype, {}, [], {}, {}
            for copies, module in ((self.copies, self.decoder), (self.head_copy, self.head)):
                for name, weight in linear_weight_copies(module, dtype):
                    copies[name] = torch.empty_like(weight, dtype=dtype)
                    self.sources.append((copies[name], weight))
        for dst, src in self.sources:
            dst.copy_(src.detach())

    # -- one step ---------------------------------------------------------------------------
    def _forward(self, cache: _RowsCache, ids, pos, allowed, eager: bool, mask_dtype):
        from torch.func import functional_call

        kwargs = dict(
            input_ids=ids,
            attention_mask=_as_mask(allowed, eager, mask_dtype),
            position_ids=pos,
            past_key_values=cache,
            use_cache=True,
        )
        out = functional_call(self.decoder, self.copies, args=(), kwargs=kwargs, strict=False, tie_weights=False)
        hidden = out.last_hidden_state[:, -1]
        if self.head_copy:
            return functional_call(self.head, self.head_copy, (hidden,), strict=False, tie_weights=False)
        return self.head(hidden)

    def _record(self, b: int, logits, sampling: tuple, pad_id: int, eos: torch.Tensor, at: torch.Tensor) -> None:
        """Pick each live row's token at column `at` and move its state on (in the graph, on device only)."""
        temperature, top_k, top_p, greedy = sampling
        done = self.done[:b]
        uniform = None if greedy else self.draws[:b].index_select(1, at).squeeze(1)
        tok, lp = pick(logits, temperature, top_k, top_p, greedy, uniform)
        tok = torch.where(done, pad_id, tok)
        self.tokens[:b].index_copy_(1, at, tok[:, None])
        self.logps[:b].index_copy_(1, at, torch.where(done, 0.0, lp)[:, None])
        done |= torch.isin(tok, eos)
        self.tok[:b].copy_(tok)

    def _step(self, b: int, cache, sampling, pad_id, eos, eager, mask_dtype) -> None:
        allowed = (self.valid[:b] & (self.span[None, :] <= self.write_pos))[:, None, None, :]
        logits = self._forward(cache, self.tok[:b, None], self.pos[:b, None], allowed, eager, mask_dtype)
        self._record(b, logits, sampling, pad_id, eos, self.t)
        self.pos[:b].add_(1)
        self.write_pos.add_(1)
        self.t.add_(1)

    def _runner(self, b: int, *args):
        """The step for `b` rows: a captured graph's replay, or the step itself without capture."""
        if not self.capture:
            cache = _RowsCache(self, b)
            return lambda: self._step(b, cache, *args)
        key = (b, *args[0], args[1], id(args[2]), args[3], args[4])
        if key not in self.graphs:
            cache = _RowsCache(self, b)
            state = [x.clone() for x in (self.write_pos, self.t, self.tok, self.pos, self.done)]
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream), self._uncached():
                for _ in range(2):  # warm-up: its writes are undone below or overwritten by the real step
                    self._step(b, cache, *args)
            torch.cuda.current_stream().wait_stream(stream)
            for x, saved in zip((self.write_pos, self.t, self.tok, self.pos, self.done), state):
                x.copy_(saved)
            self.pool = self.pool or torch.cuda.graph_pool_handle()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool), self._uncached():
                self._step(b, cache, *args)
            self.graphs[key] = (graph, cache)
            self.stats["captures"] += 1
        return self.graphs[key][0].replay

    def _uncached(self):
        """Autocast as it is, without its cast cache: a cast the copies miss is then a kernel in the graph,
        reading the live weight, not a tensor of this call's cache that a later replay would read freed."""
        kind = self.device.type
        return torch.autocast(
            kind, dtype=self.dtype or torch.float32, enabled=torch.is_autocast_enabled(kind), cache_enabled=False
        )

    # -- a call -----------------------------------------------------------------------------
    @torch.no_grad()
    def __call__(
        self,
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
        row_seeds: list[int] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens, logprobs), each [rows, max_new_tokens] on CPU, as `vlab.train.decode.decode` gives them."""
        n, count = max_new_tokens, len(prompts)
        width = max(len(p) for p in prompts)
        b = bucket_for(count)
        self._reserve(b, -(-(width + n) // CAPACITY_STEP) * CAPACITY_STEP)
        self._refresh_weights()
        sampling = (float(temperature), int(top_k), float(top_p), bool(greedy))
        eos_key = tuple(eos_ids or [-1])
        if eos_key not in self.eos:
            self.eos[eos_key] = torch.tensor(eos_key, dtype=torch.long, device=self.device)
        args = (sampling, pad_id, self.eos[eos_key], eager_attention, mask_dtype)
        logits = self._prefill(prompts, b, width, n, pad_id, eager_attention, mask_dtype, row_seeds, greedy)
        self._record(b, logits, sampling, pad_id, args[2], self.t)
        self.t.fill_(1)
        out_tokens = torch.full((count, n), pad_id, dtype=torch.long, device=self.device)
        out_logps = torch.zeros((count, n), dtype=torch.float32, device=self.device)
        slots = torch.arange(b, device=self.device)  # the prompt each slot holds (>= count: none)
        step = None
        for t in range(1, n):
            if t % SYNC_EVERY == 1 or step is None:
                live = (~self.done[:b]).nonzero().squeeze(1)
                k = int(live.numel())
                if k == 0:
                    break
                if bucket_for(k) < b or step is None:
                    if bucket_for(k) < b:
                        self._flush(b, slots, count, n, out_tokens, out_logps)
                        slots = self._compact(b, live, bucket_for(k), slots, pad_id)
                        b = bucket_for(k)
                    step = self._runner(b, *args)
            step()
            self.stats["steps"] += 1
            self.stats["row_steps"] += b
        self._flush(b, slots, count, n, out_tokens, out_logps)
        return out_tokens.cpu(), out_logps.cpu()

    def _prefill(self, prompts, b, width, n, pad_id, eager, mask_dtype, row_seeds, greedy):
        dev, count = self.device, len(prompts)
        ids = torch.full((b, width), pad_id, dtype=torch.long)
        valid = torch.ones((b, self.capacity), dtype=torch.bool)  # slots without a prompt see everything (no NaN)
        lens = torch.full((b,), width, dtype=torch.long)
        for r, p in enumerate(prompts):
            ids[r, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            valid[r, : width - len(p)] = False
            lens[r] = len(p)
        ids, lens = ids.to(dev), lens.to(dev)
        self.valid[:b].copy_(valid)
        self.done[:b] = torch.arange(b, device=dev) >= count
        self.tokens[:b].fill_(pad_id)
        self.logps[:b].zero_()
        self.pos[:b] = lens
        if not greedy:
            if row_seeds is not None:
                self.draws[:count, :n] = row_draws(row_seeds, n).to(dev)
            else:
                self.draws[:count, :n] = torch.rand((count, n), device=dev)
        self.write_pos.zero_()
        self.t.zero_()
        pos = (torch.arange(width, device=dev)[None, :] - (width - lens)[:, None]).clamp(min=0)
        causal = torch.ones((width, width), dtype=torch.bool, device=dev).tril()
        eye = torch.eye(width, dtype=torch.bool, device=dev)
        allowed = (causal[None] & self.valid[:b, None, :width]) | eye[None]
        allowed = torch.nn.functional.pad(allowed[:, None], (0, self.capacity - width), value=False)
        logits = self._forward(_RowsCache(self, b), ids, pos, allowed, eager, mask_dtype)
        self.write_pos.fill_(width)
        return logits

    def _flush(self, b, slots, count, n, out_tokens, out_logps) -> None:
        """Copy the rows the slots hold into the call's outputs (a slot without a prompt is dropped)."""
        held = (slots < count).nonzero().squeeze(1)
        out_tokens.index_copy_(0, slots[held], self.tokens[:b, :n].index_select(0, held))
        out_logps.index_copy_(0, slots[held], self.logps[:b, :n].index_select(0, held))

    def _compact(self, b: int, live: torch.Tensor, nb: int, slots: torch.Tensor, pad_id: int) -> torch.Tensor:
        """Move the live rows to the front; the slots after them up to `nb` hold no prompt."""
        k = live.numel()
        for buf in [
            *self.keys,
            *self.values,
            self.tok,
            self.pos,
            self.done,
            self.valid,
            self.draws,
            self.tokens,
            self.logps,
        ]:
            buf[:k] = buf[:b].index_select(0, live)
        self.done[k:nb], self.valid[k:nb], self.tok[k:nb] = True, True, pad_id
        self.stats["compactions"] += 1
        filler = torch.full((nb - k,), torch.iinfo(torch.long).max, dtype=torch.long, device=self.device)
        return torch.cat([slots.index_select(0, live), filler])
