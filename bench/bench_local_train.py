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

GPU: `--device cuda --model-shape qwen2.5-0.5b` builds a random Qwen2.5-0.5B-shaped model
(float32 weights, bf16 autocast, vocab 151936) and reports generation/training tokens/s and
peak memory; defaults there: 5 steps of 64 rollouts x 256 tokens (reward is meaningless, so
zero-advantage groups are trained anyway to time the update). Not measured here yet (no GPU).

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

SHAPES = {
    "toy": dict(hidden_size=64, layers=2, heads=4),
    # Qwen2.5-0.5B: hidden 896, 24 layers, 14 heads (2 KV), MLP 4864, vocab 151936, tied embeddings.
    "qwen2.5-0.5b": dict(hidden_size=896, layers=24, heads=14, kv_heads=2, intermediate_size=4864, vocab_size=151936),
}


def settings(args) -> dict:
    return {"steps": args.steps, "batch_size": args.batch_size, "group_size": args.group_size,
            "max_completion_tokens": args.max_tokens, "lr": args.lr, "temperature": 1.0, "seed": args.seed,
            "device": args.device, "model_shape": args.model_shape, "threads": args.threads}


def build_model(shape: str, seed: int, device: str):
    import torch
    from train_fixtures import make_model, make_tokenizer

    spec = dict(SHAPES[shape])
    tok = make_tokenizer(spec.get("vocab_size"))
    if "vocab_size" in spec:
        from transformers import Qwen2Config, Qwen2ForCausalLM

        cfg = Qwen2Config(vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
                          intermediate_size=spec["intermediate_size"], num_hidden_layers=spec["layers"],
                          num_attention_heads=spec["heads"], num_key_value_heads=spec["kv_heads"],
                          max_position_embeddings=4096, tie_word_embeddings=True,
                          pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None)
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(cfg)
    else:
        model = make_model(tok, hidden_size=spec["hidden_size"], layers=spec["layers"], heads=spec["heads"], seed=seed)
    # float32 master weights; a GPU run computes in bf16 under autocast (as local_train does)
    return model.to(device), tok


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
    model, tok = build_model(s["model_shape"], s["seed"], s["device"])
    out = tempfile.mkdtemp(prefix="bench-lt-")
    cfg = load_config(None, [(["max_steps"], s["steps"]), (["batch_size"], s["batch_size"]),
                             (["group_size"], s["group_size"]), (["seed"], s["seed"]),
                             (["sampling", "max_completion_tokens"], s["max_completion_tokens"]),
                             (["optim", "lr"], s["lr"]), (["output_dir"], out),
                             # a random real-sized model scores 0 everywhere: train anyway, to time the update
                             (["filter_zero_advantages"], s["model_shape"] == "toy")])
    source = FunctionSource(TOY_PROMPTS, lambda text, conv: share_of_a(text), env_id="toy")
    times: list[tuple[float, float]] = []
    if s["device"] == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    device = torch.device(s["device"])
    mixed = (lambda: autocast(device, torch.float32, torch.bfloat16)) if device.type == "cuda" else None
    trainer = Trainer(cfg, model, tok, source, device, autocast=mixed,
                      on_step=lambda m: times.append((time.perf_counter() - t0, m["reward_mean"])))
    hist = trainer.train()
    wall = time.perf_counter() - t0
    gen_tok = sum(m["gen_tokens"] for m in hist)
    gen_s = sum(m["gen_s"] for m in hist)
    train_tok = sum(m.get("train_tokens") or 0 for m in hist)
    train_s = sum(m["train_s"] for m in hist)
    res = {"wall_s": wall, "time_to_0.8_s": first_reaching(times, 0.8), "reward_first": hist[0]["reward_mean"],
           "reward_last": hist[-1]["reward_mean"], "rewards": [round(r, 3) for _, r in times],
           "gen_tokens_per_s": gen_tok / gen_s if gen_s else None,
           "train_tokens_per_s": train_tok / train_s if train_s else None,
           "completion_tokens_per_s": gen_tok / wall}
    if s["device"] == "cuda":
        res["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return res


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
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": TOY_PROMPTS[i % len(TOY_PROMPTS)]}]}
                              for i in range(max(prompts_needed, len(TOY_PROMPTS)))])

    def share_of_a_reward(completions, **kwargs):
        return [share_of_a(c[-1]["content"] if isinstance(c, list) else c) for c in completions]

    out = tempfile.mkdtemp(prefix="bench-trl-")
    args = GRPOConfig(
        output_dir=out, max_steps=s["steps"], per_device_train_batch_size=s["batch_size"],
        num_generations=s["group_size"], max_completion_length=s["max_completion_tokens"],
        learning_rate=s["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, max_grad_norm=1.0,
        beta=0.0, epsilon=0.2, epsilon_high=0.28, loss_type="dapo", scale_rewards="none", temperature=1.0,
        top_k=0, top_p=1.0, num_iterations=1, logging_steps=1, report_to="none", save_strategy="no",
        use_cpu=s["device"] == "cpu", bf16=s["device"] == "cuda", seed=s["seed"], dataloader_num_workers=0,
        disable_tqdm=True, num_completions_to_print=0,
    )
    times: list[tuple[float, float]] = []
    t0 = [0.0]

    class Clock(TrainerCallback):
        def on_train_begin(self, *a, **k):
            t0[0] = time.perf_counter()

        def on_log(self, a, state, control, logs=None, **k):
            if logs and "reward" in logs:
                times.append((time.perf_counter() - t0[0], float(logs["reward"])))

    trainer = GRPOTrainer(model=model, reward_funcs=share_of_a_reward, args=args, train_dataset=data,
                          processing_class=tok, callbacks=[Clock()])
    if s["device"] == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    comp_tokens = s["steps"] * s["batch_size"] * s["max_completion_tokens"]  # upper bound (eos ends early)
    res = {"wall_s": wall, "time_to_0.8_s": first_reaching(times, 0.8),
           "reward_first": times[0][1] if times else None, "reward_last": times[-1][1] if times else None,
           "rewards": [round(r, 3) for _, r in times], "completion_tokens_per_s_upper_bound": comp_tokens / wall}
    if s["device"] == "cuda":
        res["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return res


def in_subprocess(python: str, worker: str, s: dict, timeout: float = 1800) -> dict:
    """Each run in a fresh interpreter: no shared caches or thread pools between the two trainers."""
    if not Path(python).exists():
        return {"error": f"no interpreter at {python}"}
    proc = subprocess.run([python, __file__, "--worker", worker, "--settings", json.dumps(s)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"{worker} run failed (rc {proc.returncode}): {proc.stderr.strip().splitlines()[-3:]}"}
    return json.loads(lines[-1])


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=12)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--model-shape", choices=sorted(SHAPES), default="toy")
    p.add_argument("--trl-python", default=str(ROOT / ".venv" / "bench" / "bin" / "python"))
    p.add_argument("--no-trl", action="store_true")
    p.add_argument("--repeats", type=int, default=3, help="runs of each trainer, interleaved (medians reported)")
    p.add_argument("--worker", choices=("trl", "ours"), help=argparse.SUPPRESS)
    p.add_argument("--settings", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        s = json.loads(args.settings)
        print(json.dumps(run_trl(s) if args.worker == "trl" else run_ours(s)))
        return 0
    if args.model_shape != "toy":  # throughput settings unless given
        args.steps = 5 if args.steps == 20 else args.steps
        args.max_tokens = 256 if args.max_tokens == 12 else args.max_tokens
        args.batch_size = 64 if args.batch_size == 32 else args.batch_size
    s = settings(args)
    import statistics

    ours_runs, trl_runs = [], []
    for _ in range(args.repeats):  # interleaved, so machine load hits both alike
        ours_runs.append(in_subprocess(sys.executable, "ours", s))
        if not args.no_trl:
            trl_runs.append(in_subprocess(args.trl_python, "trl", s))

    def med(runs, key):
        vals = [r[key] for r in runs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    ours = {k: med(ours_runs, k) for k in ("wall_s", "time_to_0.8_s", "gen_tokens_per_s", "train_tokens_per_s",
                                           "completion_tokens_per_s", "peak_memory_gib")}
    ours["runs"] = ours_runs
    result = {"bench": "local_train", "settings": s, "ours": ours}
    if trl_runs:
        trl = {k: med(trl_runs, k) for k in ("wall_s", "time_to_0.8_s", "completion_tokens_per_s_upper_bound",
                                             "peak_memory_gib")}
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
