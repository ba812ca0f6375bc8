#!/usr/bin/env python3
"""RL-train a verifiers environment on this machine (one GPU, or CPU with a tiny model), or hand off to prime-rl."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.train.render import render
from vlab.train.request import ENGINES, LocalTrainRequest, run_local_train

DESCRIPTION = """\
RL-train a model on a verifiers environment (classic load_environment or v1 taskset).

Engines (--engine):
  builtin   (default) a single-process GRPO-family trainer on one GPU, or on CPU with a
            tiny model: rollouts through the environment's own loop and scoring, group
            advantages, prime-rl's default loss ([loss] type = "default", same keys; or
            ppo_clip / ratio_mask) against the sampler's logprobs, AdamW,
            LoRA or full fine-tuning, checkpoints that resume exactly, a final eval written
            in vf-eval's results.jsonl + metadata.json shape.
  prime-rl  writes a prime-rl rl.toml from the same config: every setting carried to its
            prime-rl key or refused (exit 2, listed); [deployment] split by model size;
            checks --prime-rl-dir, the GPU count (2+) and that the environment imports in
            the checkout's .venv (--install-env installs it), then runs `uv run rl @ rl.toml`;
            --dry-run only writes it and prints the commands. --nodes N: one rl.toml with
            [deployment] multi_node + [slurm], submitted once from the SLURM login node.

Config: one TOML (see %(templates)s/configs/local-train.toml) with prime-rl's key names where
they exist: [model] name, max_steps, batch_size, group_size, [sampling], [optim] lr,
[loss], [lora], [ckpt], [eval], filter_zero_advantages, [env] id/args. Flags override it.

Outputs in --output-dir: logs/metrics.jsonl (one line per step), checkpoints/step_N/,
evals/<env>--<model>/<id>/results.jsonl + metadata.json (read by check_reward_distribution).
Progress goes to stderr.
"""

EPILOG = """\
examples:
  %(prog)s --env environments/my_env/ \\
      --env-args '{"dataset_path": "data/train.jsonl"}' --model Qwen/Qwen2.5-0.5B-Instruct --max-steps 50
  %(prog)s %(templates)s/configs/local-train.toml --set optim.lr=1e-5 --json
  %(prog)s my.toml --resume latest
  %(prog)s my.toml --engine prime-rl --prime-rl-dir ~/prime-rl --gpus 8 --install-env --dry-run
  %(prog)s my.toml --engine prime-rl --prime-rl-dir /shared/prime-rl --nodes 4 --gpus 8
"""


def build_parser():
    p = make_parser("local_train", DESCRIPTION, EPILOG)
    p.add_argument("config", nargs="?", help="TOML config (optional: flags alone are enough)")
    p.add_argument("--engine", choices=ENGINES, default="builtin", help="trainer (default: builtin)")
    p.add_argument("--env", help="environment: module file, package folder or installed id ([env] id)")
    p.add_argument("--env-args", help="JSON object of arguments for the environment ([env] args)")
    p.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one environment argument (repeatable; dotted keys nest: task.k=2 -> {task: {k: 2}}); "
        "names are checked against the taskset's config / load_environment's signature",
    )
    p.add_argument("--eval-env", help="evaluate on this environment instead ([eval.env] id; prime-rl: eval source)")
    p.add_argument("--eval-env-args", help="JSON object of arguments for --eval-env ([eval.env] args)")
    p.add_argument("--eval-env-arg", action="append", default=[], metavar="KEY=VALUE", help="one --eval-env argument")
    p.add_argument(
        "--no-env-arg-check", action="store_true", help="do not check argument names against the environment"
    )
    p.add_argument(
        "--model",
        help="model name or local folder ([model] name); `tiny-random`: a ~0.1M-parameter "
        "random model built offline, to smoke-test an environment on CPU",
    )
    p.add_argument("--max-steps", type=numbers.integer(1), help="optimizer steps (max_steps)")
    p.add_argument("--output-dir", help="where metrics, checkpoints and eval results go (output_dir)")
    p.add_argument("--device", help="auto, cpu, cuda or cuda:N (model.device)")
    p.add_argument(
        "--memory-budget",
        type=numbers.real(0),
        metavar="GIB",
        help="builtin: plan for at most this many GiB (model.memory_budget_gib; 0: off), e.g. 24 for a 24 GB "
        "card; smaller micro-batches or checkpointing where needed, said in the result; capped there on CUDA",
    )
    p.add_argument("--lora", action="store_true", default=None, help="train a LoRA adapter (lora.enabled = true)")
    p.add_argument("--wandb", action="store_true", default=None, help="log to Weights & Biases (wandb.enabled)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any config key, e.g. --set optim.lr=1e-5 (repeatable)",
    )
    p.add_argument("--resume", metavar="latest|PATH", help="continue from a checkpoint of this output dir")
    p.add_argument("--force", action="store_true", help="replace a previous run in --output-dir (or rl.toml)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (one line per step on stderr)")
    g = p.add_argument_group("prime-rl engine")
    g.add_argument("--prime-rl-dir", help="a prime-rl checkout (has pyproject.toml and src/prime_rl)")
    g.add_argument(
        "--gpus", type=numbers.integer(1, 1024), help="GPUs per node to plan for (default: the ones torch sees)"
    )
    g.add_argument(
        "--nodes",
        type=numbers.integer(1, 1024),
        help="nodes: several write a multi_node rl.toml ([slurm]) submitted once from the SLURM login node",
    )
    g.add_argument(
        "--install-env",
        action="store_true",
        help="install the environment into the checkout's .venv (uv pip install -e / prime env install) if missing",
    )
    g.add_argument(
        "--no-rehearse",
        dest="rehearse",
        action="store_false",
        help="prime-rl: skip the rehearsal (build the environment's wheel, install it with verifiers 0.4.0 in a "
        "throwaway venv, load it from an empty folder, score the gold); the result says it was skipped",
    )
    g.add_argument(
        "--dry-run",
        action="store_true",
        help="builtin: print the estimated peak memory for the model, batch and sequence length (exit 3 if it "
        "cannot fit); prime-rl: write rl.toml and print the commands. Launches nothing",
    )
    return p


def request(args) -> LocalTrainRequest:
    return LocalTrainRequest(
        config=args.config,
        engine=args.engine,
        env=args.env,
        env_args=args.env_args,
        env_arg=tuple(args.env_arg),
        eval_env=args.eval_env,
        eval_env_args=args.eval_env_args,
        eval_env_arg=tuple(args.eval_env_arg),
        check_env_args=not args.no_env_arg_check,
        model=args.model,
        max_steps=args.max_steps,
        output_dir=args.output_dir,
        device=args.device,
        memory_budget=args.memory_budget,
        lora=args.lora,
        wandb=args.wandb,
        sets=tuple(args.set),
        resume=args.resume,
        force=args.force,
        progress=not args.no_progress,
        prime_rl_dir=args.prime_rl_dir,
        gpus=args.gpus,
        nodes=args.nodes,
        install_env=args.install_env,
        rehearse=args.rehearse,
        dry_run=args.dry_run,
    )


def main(argv=None) -> int:
    return run_request("local_train", build_parser(), request, run_local_train, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
