#!/usr/bin/env python3
"""Benchmark: local_train's builtin GRPO trainer against TRL's GRPOTrainer, same run.

Default (CPU, the issue's toy): a random ~0.1M-parameter Qwen2 with a character-level
tokenizer (tests/train_fixtures.py), prompts -> reward = share of 'a' in the completion,
20 steps of 32 rollouts (4 prompts x group 8), 12 completion tokens, lr 1e-2, no KL,
DAPO token averaging, no std scaling, clip 0.2/0.28, temperature 1, top_k off, 1 CPU thread
for both (tiny models run ~10x faster single-threaded on a busy 2-core machine).
Reports wall time to reach mean reward 0.8, total wall, tokens/s, and TRL/ours ratios.
Target: >= 1.5x faster than TRL on CPU.

TRL is not a dependency of the pack: it runs in the Python given by --trl-python
(default .venv/bench/bin/python, made with `python3 -m venv .venv/bench &&
.venv/bench/bin/pip install torch==2.13.0 && .venv/bench/bin/pip install trl`).

GPU: `--device cuda --model-shape qwen2.5-0.5b` (or qwen2.5-1.5b, `--lora` for LoRA) builds a
random Qwen2.5-shaped model (float32 master weights, bf16 autocast, vocab 151936) and reports
generation and training tokens/s, decode ms per step against the weight-bandwidth limit, the
update's MFU, peak memory and wall per step; defaults there: 5 steps of 64 rollouts x 256
tokens (reward is meaningless, so zero-advantage groups are trained anyway to time the
update). Flags given explicitly always win over these defaults.

`--profile-steps N` times each phase of N steps of the classic-environment path instead
(local_train's Trainer over the toy classic verifiers environment of tests/train_fixtures.py):
wall, generation, sampler, update and garbage-collector pauses per step; `--no-gc-freeze`
runs it without the trainer's frozen heap, for the before/after comparison.

Prints one JSON line. One file of ~550 lines on purpose: each worker (ours, TRL, the step
profile) re-runs this same file in its own interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "skills" / "verifiers-lab" / "scripts")]

from vlab.train.tiny import SHAPES as REAL_SHAPES  # noqa: E402

SHAPES = {"toy": dict(hidden_size=64, layers=2, heads=4)}
SHAPES.update(REAL_SHAPES)
# Defaults per mode; a flag given on the command line always wins.
CPU_DEFAULTS = {"steps": 20, "batch_size": 32, "max_tokens": 12, "lr": 1e-2}
GPU_DEFAULTS = {"steps": 5, "batch_size": 64, "max_tokens": 256, "lr": 1e-6}
# Peak dense bf16 FLOP/s and memory bandwidth by device name (for MFU and the decode limit).
DEVICE_PEAKS = {
    "H100": (989e12, 3.35e12),
    "H200": (989e12, 4.8e12),
    "A100": (312e12, 2.0e12),
}


def settings(args) -> dict:
    return {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "group_size": args.group_size,
        "max_completion_tokens": args.max_tokens,
        "lr": args.lr,
        "temperature": 1.0,
        "seed": args.seed,
        "device": args.device,
        "model_shape": args.model_shape,
        "threads": args.threads,
        "lora": args.lora,
        "memory_budget": args.memory_budget,
        "quick_decode": args.quick_decode,
    }


def build_model(shape: str, seed: int, device: str):
    from train_fixtures import make_model, make_tokenizer

    from vlab.train.tiny import make_shaped_model

    if shape in REAL_SHAPES:
        model, tok = make_shaped_model(shape, seed)
    else:
        spec = SHAPES[shape]
        tok = make_tokenizer()
        model = make_model(tok, hidden_size=spec["hidden_size"], layers=spec["layers"], heads=spec["heads"], seed=seed)
    # float32 master weights; a GPU run computes in bf16 under autocast (as local_train does)
    return model.to(device), tok


def device_peaks(device: str) -> tuple[float | None, float | None]:
    import torch

    if device != "cuda":
        return None, None
    name = torch.cuda.get_device_name()
    for key, peaks in DEVICE_PEAKS.items():
        if key in name:
            return peaks
    return None, None


def first_reaching(history: list[tuple[float, float]], target: float) -> float | None:
    for t, r in history:
        if r >= target:
            return t
    return None


# -- ours -------------------------------------------------------------------------------


def run_ours(s: dict) -> dict:
    import torch
    from train_fixtures import TOY_PROMPTS, share_of_a

    from vlab.train.config import load_config
    from vlab.train.model import autocast
    from vlab.train.rollout import FunctionSource
    from vlab.train.trainer import Trainer

    if s["device"] == "cpu":
        torch.set_num_threads(s["threads"])
    budget = s.get("memory_budget") or 0.0
    if budget and s["device"] == "cuda":  # a smaller card: the allocator capped before any weight loads
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, budget * 2**30 / total), 0)
    model, tok = build_model(s["model_shape"], s["seed"], s["device"])
    out = tempfile.mkdtemp(prefix="bench-lt-")
    lora = [(["lora", "enabled"], True)] if s.get("lora") else []
    cfg = load_config(
        None,
        [
            (["max_steps"], s["steps"]),
            (["batch_size"], s["batch_size"]),
            (["group_size"], s["group_size"]),
            (["seed"], s["seed"]),
            (["sampling", "max_completion_tokens"], s["max_completion_tokens"]),
            (["optim", "lr"], s["lr"]),
            (["output_dir"], out),
            # a random real-sized model scores 0 everywhere: train anyway, to time the update
            (["filter_zero_advantages"], s["model_shape"] == "toy"),
            (["model", "memory_budget_gib"], budget),
            *lora,
        ],
    )
    if s.get("lora"):
        from vlab.train.model import apply_lora

        model = apply_lora(model.to(torch.bfloat16) if s["device"] == "cuda" else model, cfg)
    source = FunctionSource(TOY_PROMPTS, lambda text, conv: share_of_a(text), env_id="toy")
    times: list[tuple[float, float]] = []
    if s["device"] == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    device = torch.device(s["device"])
    weights = next(model.parameters()).dtype
    mixed = (lambda: autocast(device, weights, torch.bfloat16)) if device.type == "cuda" else None
    trainer = Trainer(
        cfg,
        model,
        tok,
        source,
        device,
        autocast=mixed,
        on_step=lambda m: times.append((time.perf_counter() - t0, m["reward_mean"])),
    )
    hist = trainer.train()
    wall = time.perf_counter() - t0
    gen_tok = sum(m["gen_tokens"] for m in hist)
    gen_s = sum(m["gen_s"] for m in hist)
    train_tok = sum(m.get("train_tokens") or 0 for m in hist)
    train_s = sum(m["train_s"] for m in hist)
    res = {
        "wall_s": wall,
        "time_to_0.8_s": first_reaching(times, 0.8),
        "reward_first": hist[0]["reward_mean"],
        "reward_last": hist[-1]["reward_mean"],
        "rewards": [round(r, 3) for _, r in times],
        "gen_tokens_per_s": gen_tok / gen_s if gen_s else None,
        "train_tokens_per_s": train_tok / train_s if train_s else None,
        "completion_tokens_per_s": gen_tok / wall,
        "wall_per_step_s": wall / max(1, len(hist)),
        "micro_batches": [m.get("micro_batches") for m in hist],
        "padding_frac": [round(m["padding_frac"], 3) for m in hist if "padding_frac" in m],
        "memory_plan": trainer.plan.to_dict(),
    }
    flops, bandwidth = device_peaks(s["device"])
    n_params = sum(p.numel() for p in model.parameters())
    if train_s and flops:  # 6 N flops a trained token (forward + backward), attention left out
        res["update_mfu"] = 6 * n_params * train_tok / train_s / flops
    res.update(decode_figures(trainer, n_params, bandwidth, s))
    if s["device"] == "cuda":
        res["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return res


def decode_figures(trainer, n_params: int, bandwidth: float | None, s: dict) -> dict:
    """Decode ms per step at the run's batch: one timed generate of batch_size prompts with
    eos disabled (every row runs max_tokens steps), for our decode loop and for transformers'
    generate on the same model, against the weight-read limit."""
    import torch
    from train_fixtures import TOY_PROMPTS

    from vlab.train.config import SamplingConfig
    from vlab.train.rollout import render_chat
    from vlab.train.sampler import HFSampler

    prompts = [render_chat(trainer.tokenizer, TOY_PROMPTS[i % len(TOY_PROMPTS)]) for i in range(s["batch_size"])]
    steps = s["max_completion_tokens"]

    def timed(sampler) -> float:
        sampler.eos_ids = [10**9]  # no row stops early
        warm = prompts if sampler.cuda_graphs else prompts[:2]  # the graphs are captured in the same call's shape
        sampler.generate(warm, SamplingConfig(max_completion_tokens=steps if sampler.cuda_graphs else 4), seed=0)
        if s["device"] == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        sampler.generate(prompts, SamplingConfig(max_completion_tokens=steps), seed=1)
        if s["device"] == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t

    ours = trainer.sampler
    kw = dict(max_batch=ours.max_batch, autocast=ours.autocast)
    loop = timed(HFSampler(trainer.model, trainer.tokenizer, cuda_graphs=ours.cuda_graphs, **kw))
    out = {
        "decode_ms_per_step": 1000 * loop / steps,
        "decode_tokens_per_s": s["batch_size"] * steps / loop,
        "decode_loop": ours.uses_decode_loop,
        "decode_cuda_graphs": ours.cuda_graphs and s["device"] == "cuda",
    }
    if bandwidth:  # bf16 weights read once a step
        out["decode_bandwidth_limit_ms"] = 1000 * 2 * n_params / bandwidth
    if s.get("quick_decode"):  # the run's own loop only
        return out
    if out["decode_cuda_graphs"]:
        out["decode_eager_ms_per_step"] = 1000 * timed(HFSampler(trainer.model, trainer.tokenizer, **kw)) / steps
    generate = timed(HFSampler(trainer.model, trainer.tokenizer, static_cache=False, **kw))
    out["hf_generate_ms_per_step"] = 1000 * generate / steps
    return out


# -- the classic-environment path, phase by phase ---------------------------------------


def run_profile(s: dict) -> dict:
    """Per-step phases of local_train's classic-environment path, with garbage-collector pauses."""
    import contextlib
    import gc

    import torch
    from train_fixtures import CLASSIC_TOY, write_env_package

    from vlab.train import trainer as trainer_mod
    from vlab.train.config import load_config
    from vlab.train.envsource import VerifiersSource
    from vlab.train.model import load_tokenizer
    from vlab.train.tiny import save_tiny_model

    if s["device"] == "cpu":
        torch.set_num_threads(s["threads"])
    if not s["gc_freeze"]:
        trainer_mod.frozen_heap = contextlib.nullcontext
    tmp = Path(tempfile.mkdtemp(prefix="bench-lt-steps-"))
    env = write_env_package(tmp / "envs", "toy_classic", CLASSIC_TOY)
    model_dir = save_tiny_model(tmp / "model")
    from transformers import AutoModelForCausalLM

    cfg = load_config(
        None,
        [
            (["max_steps"], s["steps"]),
            (["batch_size"], s["batch_size"]),
            (["group_size"], s["group_size"]),
            (["sampling", "max_completion_tokens"], s["max_completion_tokens"]),
            (["optim", "lr"], s["lr"]),
            (["output_dir"], str(tmp / "run")),
            (["filter_zero_advantages"], False),  # every step trains: the phases stay comparable
        ],
    )
    source = VerifiersSource.load(str(env), {"num_examples": 64})
    model = AutoModelForCausalLM.from_pretrained(str(model_dir)).to(s["device"])
    tr = trainer_mod.Trainer(cfg, model, load_tokenizer(str(model_dir)), source, torch.device(s["device"]))

    pauses: list[tuple[int, float]] = []
    started = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], time.perf_counter() - started[0]))

    sampler_s = [0.0]
    generate = tr.sampler.generate

    def timed_generate(*a, **k):
        t = time.perf_counter()
        try:
            return generate(*a, **k)
        finally:
            sampler_s[0] += time.perf_counter() - t

    tr.sampler.generate = timed_generate
    steps = []
    last = [time.perf_counter()]

    def on_step(m):
        now = time.perf_counter()
        full = [p for g, p in pauses if g == 2]
        steps.append(
            {
                "step": m["step"],
                "wall_ms": round(1000 * (now - last[0]), 1),
                "gen_ms": round(1000 * m["gen_s"], 1),
                "sampler_ms": round(1000 * sampler_s[0], 1),
                "train_ms": round(1000 * m["train_s"], 1),
                "gc_ms": round(1000 * sum(p for _, p in pauses), 1),
                "gc_full": len(full),
                "gc_full_ms": round(1000 * sum(full), 1),
            }
        )
        pauses.clear()
        sampler_s[0] = 0.0
        last[0] = time.perf_counter()

    tr.on_step = on_step
    gc.callbacks.append(on_gc)
    last[0] = time.perf_counter()
    try:
        tr.train()
    finally:
        gc.callbacks.remove(on_gc)
    walls = sorted(x["wall_ms"] for x in steps)
    median = walls[len(walls) // 2]
    return {
        "gc_freeze": s["gc_freeze"],
        "steps": steps,
        "wall_ms_median": median,
        "slow_steps": [x["step"] for x in steps if x["wall_ms"] > 2 * median],
        "gc_full_collections": sum(x["gc_full"] for x in steps),
        "gc_full_ms_total": round(sum(x["gc_full_ms"] for x in steps), 1),
        "gc_ms_total": round(sum(x["gc_ms"] for x in steps), 1),
    }


# -- TRL (runs in its own interpreter) ---------------------------------------------------


def run_trl(s: dict) -> dict:
    import torch
    from datasets import Dataset
    from train_fixtures import TOY_PROMPTS, share_of_a
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    if s["device"] == "cpu":
        torch.set_num_threads(s["threads"])
    model, tok = build_model(s["model_shape"], s["seed"], s["device"])
    prompts_needed = s["steps"] * s["batch_size"] // s["group_size"]
    data = Dataset.from_list(
        [
            {"prompt": [{"role": "user", "content": TOY_PROMPTS[i % len(TOY_PROMPTS)]}]}
            for i in range(max(prompts_needed, len(TOY_PROMPTS)))
        ]
    )

    def share_of_a_reward(completions, **kwargs):
        return [share_of_a(c[-1]["content"] if isinstance(c, list) else c) for c in completions]

    out = tempfile.mkdtemp(prefix="bench-trl-")
    args = GRPOConfig(
        output_dir=out,
        max_steps=s["steps"],
        per_device_train_batch_size=s["batch_size"],
        num_generations=s["group_size"],
        max_completion_length=s["max_completion_tokens"],
        learning_rate=s["lr"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.28,
        loss_type="dapo",
        scale_rewards="none",
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        num_iterations=1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=s["device"] == "cpu",
        bf16=s["device"] == "cuda",
        seed=s["seed"],
        dataloader_num_workers=0,
        disable_tqdm=True,
        num_completions_to_print=0,
    )
    times: list[tuple[float, float]] = []
    t0 = [0.0]

    class Clock(TrainerCallback):
        def on_train_begin(self, *a, **k):
            t0[0] = time.perf_counter()

        def on_log(self, a, state, control, logs=None, **k):
            if logs and "reward" in logs:
                times.append((time.perf_counter() - t0[0], float(logs["reward"])))

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=share_of_a_reward,
        args=args,
        train_dataset=data,
        processing_class=tok,
        callbacks=[Clock()],
    )
    if s["device"] == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    comp_tokens = s["steps"] * s["batch_size"] * s["max_completion_tokens"]  # upper bound (eos ends early)
    res = {
        "wall_s": wall,
        "time_to_0.8_s": first_reaching(times, 0.8),
        "reward_first": times[0][1] if times else None,
        "reward_last": times[-1][1] if times else None,
        "rewards": [round(r, 3) for _, r in times],
        "completion_tokens_per_s_upper_bound": comp_tokens / wall,
    }
    if s["device"] == "cuda":
        res["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return res


def resolve_python(name: str) -> str | None:
    """A path, or an interpreter name looked up on PATH (`--trl-python python3`)."""
    if os.sep in name or Path(name).exists():
        return name if Path(name).exists() else None
    return shutil.which(name)


def in_subprocess(python: str, worker: str, s: dict, timeout: float = 1800) -> dict:
    """Each run in a fresh interpreter: no shared caches or thread pools between the two trainers."""
    found = resolve_python(python)
    if found is None:
        return {"error": f"no interpreter {python!r} (not a file, and not found on PATH)"}
    python = found
    proc = subprocess.run(
        [python, __file__, "--worker", worker, "--settings", json.dumps(s)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"},
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"{worker} run failed (rc {proc.returncode}): {proc.stderr.strip().splitlines()[-3:]}"}
    return json.loads(lines[-1])


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, help="optimizer steps (CPU 20, GPU 5)")
    p.add_argument("--batch-size", type=int, help="rollouts a step (CPU 32, GPU 64)")
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--max-tokens", type=int, help="completion tokens (CPU 12, GPU 256)")
    p.add_argument("--lr", type=float, help="learning rate (CPU 1e-2, GPU 1e-6)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--model-shape", choices=sorted(SHAPES), default="toy")
    p.add_argument(
        "--trl-python", default=str(ROOT / ".venv" / "bench" / "bin" / "python"), help="path or name on PATH"
    )
    p.add_argument("--lora", action="store_true", help="LoRA instead of full fine-tuning (ours)")
    p.add_argument("--no-trl", action="store_true")
    p.add_argument("--quick-decode", action="store_true", help="time only the run's own decode loop (GPU)")
    p.add_argument("--memory-budget", type=float, default=0.0, metavar="GIB", help="ours on a card this size (CUDA)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each trainer, interleaved (medians reported)")
    p.add_argument("--profile-steps", type=int, metavar="N", help="time N steps of the classic-environment path")
    p.add_argument("--no-gc-freeze", action="store_true", help="--profile-steps without the trainer's frozen heap")
    p.add_argument("--worker", choices=("trl", "ours", "profile"), help=argparse.SUPPRESS)
    p.add_argument("--settings", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    defaults = GPU_DEFAULTS if args.model_shape != "toy" else CPU_DEFAULTS
    for key, value in defaults.items():  # an explicit flag always wins
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.profile_steps:
        args.steps = args.profile_steps
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        s = json.loads(args.settings)
        worker = {"trl": run_trl, "ours": run_ours, "profile": run_profile}[args.worker]
        print(json.dumps(worker(s)))
        return 0
    s = settings(args)
    if args.profile_steps:
        s["gc_freeze"] = not args.no_gc_freeze
        print(json.dumps({"bench": "local_train_steps", "settings": s, **in_subprocess(sys.executable, "profile", s)}))
        return 0
    import statistics

    ours_runs, trl_runs = [], []
    for _ in range(args.repeats):  # interleaved, so machine load hits both alike
        ours_runs.append(in_subprocess(sys.executable, "ours", s))
        if not args.no_trl:
            trl_runs.append(in_subprocess(args.trl_python, "trl", s))

    def med(runs, key):
        vals = [r[key] for r in runs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    ours = {
        k: med(ours_runs, k)
        for k in (
            "wall_s",
            "time_to_0.8_s",
            "gen_tokens_per_s",
            "train_tokens_per_s",
            "completion_tokens_per_s",
            "peak_memory_gib",
            "wall_per_step_s",
            "update_mfu",
            "decode_ms_per_step",
            "decode_tokens_per_s",
            "hf_generate_ms_per_step",
            "decode_bandwidth_limit_ms",
        )
    }
    ours["runs"] = ours_runs
    result = {"bench": "local_train", "settings": s, "ours": ours}
    if trl_runs:
        trl = {
            k: med(trl_runs, k)
            for k in ("wall_s", "time_to_0.8_s", "completion_tokens_per_s_upper_bound", "peak_memory_gib")
        }
        trl["runs"] = trl_runs
        result["trl"] = trl
        result["speedup_time_to_0.8"] = ratio(trl["time_to_0.8_s"], ours["time_to_0.8_s"])
        result["speedup_wall"] = ratio(trl["wall_s"], ours["wall_s"])
        result["target_speedup"] = 1.5
        if args.device == "cpu" and args.model_shape == "toy":
            result["ok"] = bool(result["speedup_time_to_0.8"] and result["speedup_time_to_0.8"] >= 1.5)
    print(json.dumps(result))
    return 0 if result.get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
