#!/usr/bin/env python3
"""RL-train a verifiers environment on this machine (one GPU, or CPU with a tiny model), or hand off to prime-rl."""

from __future__ import annotations

import json

from vlab.cli import main_guard, make_parser, run
from vlab.result import UsageError

DESCRIPTION = """\
RL-train a model on a verifiers environment (classic load_environment or v1 taskset).

Engines (--engine):
  builtin   (default) a single-process GRPO-family trainer on one GPU, or on CPU with a
            tiny model: rollouts through the environment's own loop and scoring, group
            advantages, token-level clipped ratio against the sampler's logprobs, AdamW,
            LoRA or full fine-tuning, checkpoints that resume exactly, a final eval written
            in vf-eval's results.jsonl + metadata.json shape.
  prime-rl  writes a prime-rl rl.toml from the same config ([deployment] for the GPUs
            found or asked), checks --prime-rl-dir and the GPU count (2+), then runs
            `uv run rl @ rl.toml`; --dry-run only writes it and prints the commands.

Config: one TOML (see templates/configs/local-train.toml) with prime-rl's key names where
they exist: [model] name, max_steps, batch_size, group_size, [sampling], [optim] lr,
[lora], [ckpt], [eval], filter_zero_advantages, [env] id/args. Flags override it.

Outputs in --output-dir: logs/metrics.jsonl (one line per step), checkpoints/step_N/,
evals/<env>--<model>/<id>/results.jsonl + metadata.json (read by check_reward_distribution).
Progress goes to stderr.
"""

EPILOG = """\
examples:
  python scripts/local_train.py --env demo/environments/arith_classic \\
      --env-args '{"dataset_path": ".demo-out/arith.jsonl"}' --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 50
  python scripts/local_train.py templates/configs/local-train.toml --set optim.lr=1e-5 --json
  python scripts/local_train.py my.toml --resume latest
  python scripts/local_train.py my.toml --engine prime-rl --prime-rl-dir ~/prime-rl --gpus 8 --dry-run
"""


def build_parser():
    p = make_parser("local_train", DESCRIPTION, EPILOG)
    p.add_argument("config", nargs="?", help="TOML config (optional: flags alone are enough)")
    p.add_argument("--engine", choices=("builtin", "prime-rl"), default="builtin", help="trainer (default: builtin)")
    p.add_argument("--env", help="environment: module file, package folder or installed id ([env] id)")
    p.add_argument("--env-args", help="JSON object of arguments for the environment ([env] args)")
    p.add_argument("--model", help="model name or local folder ([model] name); `tiny-random`: a ~0.1M-parameter "
                                    "random model built offline, to smoke-test an environment on CPU")
    p.add_argument("--max-steps", type=int, help="optimizer steps (max_steps)")
    p.add_argument("--output-dir", help="where metrics, checkpoints and eval results go (output_dir)")
    p.add_argument("--device", help="auto, cpu, cuda or cuda:N (model.device)")
    p.add_argument("--lora", action="store_true", default=None, help="train a LoRA adapter (lora.enabled = true)")
    p.add_argument("--wandb", action="store_true", default=None, help="log to Weights & Biases (wandb.enabled)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config key, e.g. --set optim.lr=1e-5 (repeatable)")
    p.add_argument("--resume", metavar="latest|PATH", help="continue from a checkpoint of this output dir")
    p.add_argument("--force", action="store_true", help="replace a previous run in --output-dir (or rl.toml)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (one line per step on stderr)")
    g = p.add_argument_group("prime-rl engine")
    g.add_argument("--prime-rl-dir", help="a prime-rl checkout (has pyproject.toml and src/prime_rl)")
    g.add_argument("--gpus", type=int, help="GPUs per node to plan for (default: the ones torch sees)")
    g.add_argument("--nodes", type=int, help="nodes (multi-node prints the per-node commands)")
    g.add_argument("--dry-run", action="store_true", help="write rl.toml and print the commands; launch nothing")
    return p


def overrides(args) -> list:
    from vlab.train.config import parse_override

    out = [parse_override(text) for text in args.set]
    if args.env_args is not None:
        try:
            env_args = json.loads(args.env_args)
        except json.JSONDecodeError as err:
            raise UsageError(f"--env-args is not JSON: {err}", hint="e.g. --env-args '{\"num_examples\": 100}'") from err
        if not isinstance(env_args, dict):
            raise UsageError("--env-args must be a JSON object")
        out.append((["env", "args"], env_args))
    for flag, key in ((args.env, ["env", "id"]), (args.model, ["model", "name"]), (args.max_steps, ["max_steps"]),
                      (args.output_dir, ["output_dir"]), (args.device, ["model", "device"]),
                      (args.lora, ["lora", "enabled"]), (args.wandb, ["wandb", "enabled"]),
                      (args.nodes, ["deployment", "num_nodes"])):
        if flag is not None:
            out.append((key, flag))
    return out


def execute(args, result):
    from vlab.train.config import load_config

    cfg = load_config(args.config, overrides(args))
    if args.engine == "prime-rl":
        from vlab.train.primerl import run_prime_rl

        run_prime_rl(cfg, result, prime_rl_dir=args.prime_rl_dir, gpus=args.gpus, dry_run=args.dry_run,
                     force=args.force)
        return
    from vlab.train.runner import run_builtin

    run_builtin(cfg, result, resume=args.resume, force=args.force, progress=not args.no_progress)


def render(result, console):
    d = result.data
    lines = []
    if d.get("engine") == "builtin" and "steps" in d:
        lines.append(f"steps {d['steps']} on {d.get('device')} ({d.get('dtype')}, sampler {d.get('sampler')}), "
                     f"{d.get('train_wall_s')} s")
        if "reward_first" in d:
            lines.append(f"reward {d['reward_first']:.3f} -> {d['reward_last']:.3f} (max {d['reward_max']:.3f})")
        if d.get("gen_tokens_per_s"):
            lines.append(f"tokens/s: generation {d['gen_tokens_per_s']:.0f}"
                         + (f", training {d['train_tokens_per_s']:.0f}" if d.get("train_tokens_per_s") else
                            " (no update: every group had the same reward)"))
        lines.append(f"metrics: {d.get('metrics_path')}")
    if d.get("engine") == "prime-rl":
        lines.append(f"rl.toml: {d.get('rl_toml')}")
        for c in d.get("commands", []):
            lines.append(f"  $ {c}")
    for line in lines:
        if console is None:
            print(line)
        else:
            from rich.markup import escape

            console.print(escape(line))


def main(argv=None) -> int:
    return run("local_train", build_parser(), execute, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
