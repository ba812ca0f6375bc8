"""Samplers: turn prompt token ids into completions, keeping the completion token
ids and the logprob of each sampled token under softmax(logits / temperature) —
the distribution the trainer's importance ratio is measured against.

Two implementations behind one interface:
- `HFSampler`: the training model itself (CPU or GPU), through the decode loop of
  `vlab.train.decode` (preallocated KV cache, batched prefill, finished rows dropped;
  on CUDA one replayed graph a step, `vlab.train.graphs`) or transformers' `generate`; no weight sync is needed because
  it *is* the trained model. Logprobs are gathered per step, never kept as logits.
- `VLLMSampler`: an in-process vLLM engine (GPU, optional extra). After each
  optimizer step the trainer's weights are pushed with
  `collective_rpc("reload_weights", ...)` and the prefix cache is reset, so the
  next rollouts come from the updated policy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import torch

from vlab.core.result import PrerequisiteError
from vlab.train.config import SamplerConfig, SamplingConfig
from vlab.train.model import eval_mode


@dataclass
class Sample:
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]  # one per completion id
    finish_reason: str  # "stop" (eos) or "length"
    text: str = ""
    extra: dict = field(default_factory=dict)


class Sampler(Protocol):
    name: str

    def generate(
        self,
        prompts: list[list[int]],
        sampling: SamplingConfig,
        seed: int | None = None,
        seeds: list[int] | None = None,
    ) -> list[Sample]:
        """`seed`: the batch's seed; `seeds`: one per prompt, each row's sample independent of the batch."""
        ...

    def sync_weights(self, model) -> None: ...


class HFSampler:
    """Sampling on the training model itself, batched with left padding.

    By default a decode loop with a preallocated KV cache (`vlab.train.decode`); models it
    cannot drive (and `static_cache=False`) go through transformers' `generate`. Either
    way the chosen token's logprob is gathered at each step: the full-vocabulary logits of
    every generated token are never kept.
    """

    name = "hf"

    def __init__(
        self,
        model,
        tokenizer,
        max_batch: int = 0,
        autocast=None,
        static_cache: bool = True,
        cuda_graphs: bool = False,
    ):
        self.model = model
        self.autocast = autocast  # the trainer's mixed-precision context factory: same numerics as the loss
        self.tokenizer = tokenizer
        self.max_batch = max_batch  # 0: one batch for all prompts
        self.static_cache = static_cache
        self.cuda_graphs = cuda_graphs
        self._graphs = None  # vlab.train.graphs.GraphDecoder, made at the first CUDA call
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.eos_ids = _eos_ids(model, tokenizer)

    def sync_weights(self, model) -> None:  # the sampler shares the trained module
        self.model = model

    @property
    def uses_decode_loop(self) -> bool:
        from vlab.train import decode

        return self.static_cache and decode.supported(self.model)

    @torch.no_grad()
    def generate(
        self,
        prompts: list[list[int]],
        sampling: SamplingConfig,
        seed: int | None = None,
        greedy: bool = False,
        seeds: list[int] | None = None,
    ) -> list[Sample]:
        loop = self.uses_decode_loop
        if seeds is not None and not loop:  # transformers' generate takes one generator: seed the batch
            seed, seeds = hash(tuple(seeds)) % (2**31 - 1), None
        if seed is not None:
            torch.manual_seed(seed)
        chunk = self.max_batch or len(prompts)
        out: list[Sample] = []
        with eval_mode(self.model):
            for i in range(0, len(prompts), chunk):
                batch = prompts[i : i + chunk]
                with self.autocast() if self.autocast else contextlib.nullcontext():
                    if loop:
                        tokens, logps = self._decode(batch, sampling, greedy, seeds and seeds[i : i + chunk])
                    else:
                        tokens, logps = self._hf_generate(batch, sampling, greedy)
                out.extend(self._samples(batch, tokens, logps))
        return out

    def _decode(self, prompts, sampling: SamplingConfig, greedy: bool, seeds: list[int] | None = None):
        from vlab.train.decode import decode
        from vlab.train.model import lm_parts

        decoder, head = lm_parts(self.model)
        config = getattr(self.model, "config", None)
        device = head.weight.device
        mask_dtype = (
            torch.get_autocast_dtype(device.type) if torch.is_autocast_enabled(device.type) else head.weight.dtype
        )
        kwargs = dict(
            pad_id=self.pad_id,
            eos_ids=self.eos_ids,
            max_new_tokens=sampling.max_completion_tokens,
            temperature=sampling.temperature,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
            greedy=greedy,
            eager_attention=getattr(config, "_attn_implementation", "sdpa") == "eager",
            mask_dtype=mask_dtype,
            row_seeds=seeds,
        )
        if self.cuda_graphs and device.type == "cuda":
            try:
                return self.graph_decoder(decoder, head)(prompts, **kwargs)
            except Exception as err:  # noqa: BLE001 - eager steps give the same tokens, only slower
                import warnings

                warnings.warn(
                    f"sampler.cuda_graphs: capture failed, decoding eagerly ({type(err).__name__}: {err})", stacklevel=2
                )
                self.cuda_graphs, self._graphs = False, None
        return decode(decoder, head, prompts, **kwargs)

    def graph_decoder(self, decoder, head):
        """The CUDA-graph decode loop for this model, kept across calls (its buffers and graphs)."""
        from vlab.train.graphs import GraphDecoder

        if self._graphs is None or self._graphs.decoder is not decoder or self._graphs.head is not head:
            self._graphs = GraphDecoder(decoder, head)
        return self._graphs

    def _hf_generate(self, prompts, sampling: SamplingConfig, greedy: bool):
        from transformers import GenerationConfig, LogitsProcessorList

        device = next(self.model.parameters()).device
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):  # left padding: generation continues at the right edge
            input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attention[row, width - len(ids) :] = 1
        gen_cfg = GenerationConfig(
            do_sample=not greedy,
            temperature=sampling.temperature if not greedy else None,
            top_p=sampling.top_p if not greedy else None,
            top_k=(sampling.top_k or None) if not greedy else None,
            max_new_tokens=sampling.max_completion_tokens,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            bos_token_id=None,
            return_dict_in_generate=True,
        )
        recorder = _LogprobRecorder(sampling.temperature)
        res = self.model.generate(
            input_ids=input_ids.to(device),
            attention_mask=attention.to(device),
            generation_config=gen_cfg,
            logits_processor=LogitsProcessorList([recorder]),
        )
        new_tokens = res.sequences[:, width:]
        return new_tokens.cpu(), recorder.result(new_tokens).cpu()

    def _samples(self, prompts, tokens: torch.Tensor, logps: torch.Tensor) -> list[Sample]:
        eos = set(self.eos_ids)
        samples = []
        for row, ids in enumerate(prompts):
            toks = tokens[row].tolist()
            n, finish = len(toks), "length"
            for j, t in enumerate(toks):
                if t in eos:
                    n, finish = j + 1, "stop"  # the eos token is trained too: the model learns to stop
                    break
            comp = toks[:n]
            samples.append(
                Sample(
                    prompt_ids=list(ids),
                    completion_ids=comp,
                    logprobs=logps[row, :n].tolist(),
                    finish_reason=finish,
                    text=self.tokenizer.decode(comp, skip_special_tokens=True),
                )
            )
        return samples


class _LogprobRecorder:
    """A logits processor for `generate` that keeps only the sampled tokens' logprobs.

    It runs before the sampling warpers, so it sees the raw logits of step t; the token
    chosen at step t is visible at step t + 1 (or in the final sequences), so one step's
    log-softmax is kept until then.
    """

    def __init__(self, temperature: float):
        self.temperature = temperature
        self.prev: torch.Tensor | None = None
        self.steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.prev is not None:
            self._take(input_ids[:, -1])
        self.prev = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def _take(self, tokens: torch.Tensor) -> None:
        self.steps.append(self.prev.gather(-1, tokens[:, None]).squeeze(-1))
        self.prev = None

    def result(self, new_tokens: torch.Tensor) -> torch.Tensor:
        if self.prev is not None and new_tokens.shape[1] > len(self.steps):
            self._take(new_tokens[:, len(self.steps)])
        if not self.steps:
            return torch.zeros(new_tokens.shape, dtype=torch.float32)
        return torch.stack(self.steps, dim=1)


def _eos_ids(model, tokenizer) -> list[int]:
    ids: list[int] = []
    gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for v in (tokenizer.eos_token_id, gen_eos):
        if v is None:
            continue
        for i in v if isinstance(v, (list, tuple)) else [v]:
            if i not in ids:
                ids.append(int(i))
    return ids


def _request_seed(seed: int | None, seeds: list[int] | None, i: int) -> int | None:
    """vLLM's seed for request `i`: its own (`seeds`), or one per request from the batch's seed (a shared
    seed would give every rollout of a group the same sample: zero advantage everywhere, nothing learned)."""
    if seeds is not None:
        return seeds[i] % (2**31 - 1)
    return None if seed is None else (seed * 100_003 + i) % (2**31 - 1)


class VLLMSampler:
    """In-process vLLM (GPU). Logprobs are the processed ones (after temperature)."""

    name = "vllm"

    def __init__(
        self,
        model_path: str,
        tokenizer,
        cfg: SamplerConfig,
        dtype: str,
        seed: int = 0,
        max_model_len: int | None = None,
    ):
        try:
            from vllm import LLM  # noqa: F401
        except ImportError as err:
            raise PrerequisiteError(
                "sampler.type = 'vllm' needs vLLM, which is not installed",
                hint="pip install 'verifiers-lab[vllm]' on a CUDA machine, or use sampler.type = 'hf'",
            ) from err
        import os

        # The engine must live in this process: weight sync hands it tensors, not pickles.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")  # stdout is for the JSON result
        from vllm import LLM

        self.tokenizer = tokenizer
        with _stdout_to_stderr():
            self.llm = LLM(
                model=model_path,
                dtype=dtype,
                seed=seed,
                gpu_memory_utilization=cfg.gpu_memory_utilization,
                enforce_eager=cfg.enforce_eager,
                enable_prefix_caching=True,
                max_model_len=max_model_len,
                logprobs_mode="processed_logprobs",
            )

    def generate(
        self,
        prompts: list[list[int]],
        sampling: SamplingConfig,
        seed: int | None = None,
        seeds: list[int] | None = None,
    ) -> list[Sample]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        params = [
            SamplingParams(
                n=1,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k or -1,
                max_tokens=sampling.max_completion_tokens,
                logprobs=0,
                seed=_request_seed(seed, seeds, i),
            )
            for i in range(len(prompts))
        ]
        with _stdout_to_stderr():
            outs = self.llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        samples = []
        for prompt, out in zip(prompts, outs):
            comp = out.outputs[0]
            ids = list(comp.token_ids)
            logps = [float(step[tok].logprob) for step, tok in zip(comp.logprobs or [], ids)]
            samples.append(
                Sample(
                    prompt_ids=list(prompt),
                    completion_ids=ids,
                    logprobs=logps,
                    finish_reason="length" if comp.finish_reason == "length" else "stop",
                    text=self.tokenizer.decode(ids, skip_special_tokens=True),
                )
            )
        return samples

    def sync_weights(self, model) -> None:
        from vlab.train.model import export_weights

        weights: Iterable[tuple[str, torch.Tensor]] = export_weights(model)
        with _stdout_to_stderr():
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": list(_materialise(weights))})
        # Cached KV blocks were computed with the old weights.
        self.llm.reset_prefix_cache()


def _materialise(weights: Iterable[tuple[str, torch.Tensor]]) -> Iterator[tuple[str, torch.Tensor]]:
    for name, tensor in weights:
        yield name, tensor.detach()


@contextlib.contextmanager
def _stdout_to_stderr():
    """Route file descriptor 1 to stderr while vLLM runs: it prints from C++ and worker code too."""
    import os
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
