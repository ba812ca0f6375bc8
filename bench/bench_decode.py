#!/usr/bin/env python3
"""Benchmark: local_train's decode step on a GPU (issue 39), every loop on the same model in one run.

For each shape (random weights of a real shape, built on the GPU; float32 master weights under bf16
autocast as local_train runs them, or LoRA on a bf16 base): ms a step at batch 64 (eos off, every row
runs the whole length) for the CUDA-graph loop (`vlab.train.graphs`), the eager decode loop and
transformers' `generate` (first shape only), against the weight-bandwidth limit (bf16 weights read once a step). With
`--profile`, where a graph step's time goes: the CUDA kernels of 32 replayed steps, by total time.

    python bench/bench_decode.py --shapes qwen2.5-0.5b qwen2.5-1.5b:lora --profile

Prints one JSON object; the profile table goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "skills" / "verifiers-lab" / "scripts")]

BANDWIDTH = {"H100": 3.35e12, "H200": 4.8e12, "A100": 2.0e12}


def build(shape: str, lora: bool):
    import torch

    from vlab.train.config import load_config
    from vlab.train.model import apply_lora
    from vlab.train.tiny import make_shaped_model

    with torch.device("cuda"):
        model, tok = make_shaped_model(shape)
    if lora:
        model = apply_lora(model.to(torch.bfloat16), load_config(None, [(["lora", "enabled"], True)]))
    return model, tok


def timed(sampler, prompts, steps: int, warm: bool) -> float:
    import torch

    from vlab.train.config import SamplingConfig

    sampling = SamplingConfig(max_completion_tokens=steps)
    if warm:  # the same call once first: the graphs of its buckets are captured there
        sampler.generate(prompts, sampling, seed=0)
    else:
        sampler.generate(prompts[:2], SamplingConfig(max_completion_tokens=4), seed=0)
    torch.cuda.synchronize()
    t = time.perf_counter()
    sampler.generate(prompts, sampling, seed=1)
    torch.cuda.synchronize()
    return 1000 * (time.perf_counter() - t) / steps


def profile(sampler, prompts) -> list[dict]:
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from vlab.train.config import SamplingConfig

    sampling = SamplingConfig(max_completion_tokens=32)
    sampler.generate(prompts, sampling, seed=0)
    torch.cuda.synchronize()
    with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        sampler.generate(prompts, sampling, seed=1)
        torch.cuda.synchronize()
    rows = sorted(prof.key_averages(), key=lambda e: e.device_time_total, reverse=True)
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=25), file=sys.stderr)
    return [{"name": e.key[:80], "cuda_ms": round(e.device_time_total / 1000, 3), "calls": e.count} for e in rows[:15]]


def run_shape(spec: str, batch: int, steps: int, with_generate: bool, with_profile: bool, with_eager: bool) -> dict:
    import torch
    from train_fixtures import TOY_PROMPTS

    from vlab.train.model import autocast
    from vlab.train.rollout import render_chat
    from vlab.train.sampler import HFSampler

    shape, _, kind = spec.partition(":")
    model, tok = build(shape, kind == "lora")
    weights = next(p for p in model.parameters() if not p.requires_grad or kind != "lora").dtype
    mixed = lambda: autocast(torch.device("cuda"), weights, torch.bfloat16)  # noqa: E731
    prompts = [render_chat(tok, TOY_PROMPTS[i % len(TOY_PROMPTS)]) for i in range(batch)]

    def sampler(**kw):
        s = HFSampler(model, tok, autocast=mixed, **kw)
        s.eos_ids = [10**9]  # no row stops early
        return s

    graphs = sampler(cuda_graphs=True)
    out = {"shape": spec, "batch": batch, "steps": steps, "params": sum(p.numel() for p in model.parameters())}
    out["graph_ms_per_step"] = timed(graphs, prompts, steps, warm=True)
    out["graph_stats"] = dict(graphs._graphs.stats) if graphs._graphs else None
    if with_eager:
        out["eager_loop_ms_per_step"] = timed(sampler(), prompts, steps, warm=False)
    if with_generate:
        out["hf_generate_ms_per_step"] = timed(sampler(static_cache=False), prompts, steps, warm=False)
    name = torch.cuda.get_device_name()
    bw = next((v for k, v in BANDWIDTH.items() if k in name), None)
    if bw:
        out["weight_bandwidth_limit_ms"] = 1000 * 2 * out["params"] / bw
    if with_profile:
        out["profile_top_kernels"] = profile(graphs, prompts)
    out["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["qwen2.5-0.5b"], help="SHAPE or SHAPE:lora")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=256)
    p.add_argument(
        "--graphs-only", action="store_true", help="only the graph loop (the eager loop and generate are slow)"
    )
    p.add_argument("--profile", action="store_true", help="kernel profile of the first shape's graph steps")
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(json.dumps({"skipped": "needs a CUDA GPU"}))
        return 0
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "shapes": []}
    for i, spec in enumerate(args.shapes):
        first = i == 0  # generate and the profile on the first shape only (generate is slow)
        res["shapes"].append(
            run_shape(
                spec,
                args.batch,
                args.steps,
                first and not args.graphs_only,
                first and args.profile,
                not args.graphs_only,
            )
        )
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
