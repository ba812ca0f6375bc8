#!/usr/bin/env python3
"""Benchmark: local_train's update on packed rows against padded rows, same run (issue 39).

One training update (forward, backward, AdamW) over the same sequences, timed in turn: padded
micro-batches (`rollout.micro_batches`, similar lengths together) and packed ones
(`rollout.packed_micro_batches`: sequences end to end in rows as wide as the longest). The
sequences have RL's spread of lengths: prompts of 40-160 tokens, completions drawn from a
log-normal (median ~150) cut at `--max-completion`. Reports each mode's seconds an update
(median of `--rounds`, interleaved), token slots (real tokens plus padding) and the losses,
which must agree.

    python bench/bench_packing.py                 # CPU: a small random Qwen2
    python bench/bench_packing.py --device cuda --shape qwen2.5-0.5b

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "skills" / "verifiers-lab" / "scripts")]


class _NoStep:
    """Leaves the weights as they are, so every round updates the same model."""

    def step(self):
        pass

    def zero_grad(self, set_to_none=True):
        pass


def sequences(n: int, max_completion: int, vocab: int, seed: int):
    from vlab.train.rollout import Sequence

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        prompt = rng.randint(40, 160)
        done = max(1, min(max_completion, int(rng.lognormvariate(5.0, 0.7))))
        ids = [rng.randrange(4, vocab) for _ in range(prompt + done)]
        lps = [-rng.random() * 2 for _ in range(done)]
        out.append(Sequence(ids, [0] * prompt + [1] * done, [0.0] * prompt + lps))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--shape", default="small", help="small (CPU) or a tiny.SHAPES name, e.g. qwen2.5-0.5b")
    ap.add_argument("--sequences", type=int, default=64)
    ap.add_argument("--max-completion", type=int, default=512)
    ap.add_argument("--micro-batch-tokens", type=int, default=16384)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    args = ap.parse_args(argv)

    import torch
    from train_fixtures import TOY_PROMPTS, make_model, make_tokenizer

    from vlab.train.config import load_config
    from vlab.train.rollout import FunctionSource
    from vlab.train.tiny import make_shaped_model
    from vlab.train.trainer import Trainer

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.shape == "small":
        tok = make_tokenizer(4096)
        model = make_model(tok, hidden_size=256, layers=4, heads=4)
    else:
        with device:  # random init where it runs (a 0.5B model on the CPU first takes a while)
            model, tok = make_shaped_model(args.shape)
    model = model.to(device)
    vocab = model.get_input_embeddings().num_embeddings
    seqs = sequences(args.sequences, args.max_completion, vocab, seed=0)
    advs = [((i % 5) - 2) / 2 for i in range(len(seqs))]
    with tempfile.TemporaryDirectory() as out:
        cfg = load_config(None, [(["micro_batch_tokens"], args.micro_batch_tokens), (["output_dir"], out)])
        source = FunctionSource(TOY_PROMPTS, lambda t, c: 0.0)
        mixed = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda" else None
        trainers = {
            mode: Trainer(cfg, model, tok, source, device, autocast=mixed, pack_sequences=mode == "packed")
            for mode in ("padded", "packed")
        }
        for t in trainers.values():
            t.optimizer = _NoStep()
        seconds: dict[str, list[float]] = {m: [] for m in trainers}
        stats: dict[str, dict] = {}
        for r in range(args.rounds + 1):  # the first round warms up, untimed
            for mode, trainer in trainers.items():
                if device.type == "cuda":
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                stats[mode] = trainer._update(seqs, advs)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                if r:
                    seconds[mode].append(time.perf_counter() - t0)
    tokens = sum(len(s.input_ids) for s in seqs)
    result = {
        "bench": "packing",
        "settings": {**vars(args), "tokens": tokens, "torch": torch.__version__, "threads": torch.get_num_threads()},
    }
    for mode in trainers:
        s = stats[mode]
        result[mode] = {
            "update_s": statistics.median(seconds[mode]),
            "rounds_s": [round(x, 4) for x in seconds[mode]],
            "slots": s["slots"],
            "padding_frac": round(1 - s["train_tokens"] / s["slots"], 4),
            "micro_batches": s["micro_batches"],
            "loss": s["loss"],
        }
    result["speedup"] = result["padded"]["update_s"] / result["packed"]["update_s"]
    # float32 on the CPU: the same to rounding; bf16 autocast on CUDA: other kernels, a few percent
    tol = 1e-3 if device.type == "cpu" else 5e-2
    result["same_loss"] = abs(result["padded"]["loss"] - result["packed"]["loss"]) <= tol * max(
        1e-2, abs(result["padded"]["loss"])
    )
    print(json.dumps(result))
    return 0 if result["same_loss"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
