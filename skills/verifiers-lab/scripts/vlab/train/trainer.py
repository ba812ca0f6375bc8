"""The built-in GRPO-family trainer: one process, one device.

Each step: pick `batch_size / group_size` prompts (a seeded permutation per epoch),
run `group_size` rollouts of each through the rollout source (the environment's
own loop and scoring), compute group advantages, drop groups with nothing to learn
(`filter_zero_advantages`), take one AdamW step on the clipped/masked token-level
policy loss (gradient accumulation over micro-batches, sequences packed end to end in
their rows where the model's attention keeps them apart), push the weights to the
sampler, and log one JSON line of metrics.

Every step reseeds from (seed, step), so a run resumed from a checkpoint takes
exactly the same next step as the run that wrote it.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import gc
import json
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from vlab.core import secrets
from vlab.core.files import WRITE_ERRNOS, write_fault
from vlab.core.invocation import command
from vlab.core.result import ToolError, UsageError
from vlab.train.config import TrainConfig
from vlab.train.loss import (
    group_advantages,
    policy_loss,
    token_logprobs,
    token_logprobs_from_hidden,
    zero_advantage_groups,
)
from vlab.train.model import (
    checkpointing_on,
    enable_checkpointing,
    is_oom,
    is_peft,
    lm_parts,
    oom_error,
    packs_sequences,
    reference_policy,
)
from vlab.train.rollout import Batch, ChatPolicy, Rollout, RolloutSource, Sequence, training_batches
from vlab.train.sampler import HFSampler, Sampler
from vlab.train.stepmetrics import step_metrics

CKPT_STATE = "trainer_state.pt"
# In a subfolder: a run folder's only top-level JSONL must be eval results, which is what
# check_reward_distribution --results OUTPUT_DIR looks for.
METRICS_FILE = "logs/metrics.jsonl"


def step_seed(seed: int, step: int) -> int:
    return (seed * 1_000_003 + step * 7919) % (2**31 - 1)


def example_ids_for_step(seed: int, step: int, per_step: int, num_examples: int) -> list[int]:
    """A fresh seeded permutation of the dataset each epoch; steps walk through it."""
    ids: list[int] = []
    pos = (step - 1) * per_step
    while len(ids) < per_step:
        epoch, offset = divmod(pos, num_examples)
        perm = np.random.default_rng([seed, epoch]).permutation(num_examples)
        take = min(per_step - len(ids), num_examples - offset)
        ids.extend(int(i) for i in perm[offset : offset + take])
        pos += take
    return ids


class Trainer:
    def __init__(
        self,
        cfg: TrainConfig,
        model,
        tokenizer,
        source: RolloutSource,
        device: torch.device,
        sampler: Sampler | None = None,
        on_step: Callable[[dict], None] | None = None,
        log: Callable[[str], None] | None = None,
        autocast: Callable | None = None,
        plan=None,
        pack_sequences: bool | None = None,
    ):
        self.cfg = cfg
        self.model = model
        self.tokenizer = tokenizer
        self.source = source
        self.device = device
        self.autocast = autocast or contextlib.nullcontext
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise UsageError("the model has no trainable parameters")
        # planned before the reference copy and the optimizer state exist (the plan counts them)
        self.plan = plan or self._plan()
        if self.plan.checkpointing and not checkpointing_on(model):  # counted by the plan; a ready-made model lacks it
            enable_checkpointing(model.get_base_model() if is_peft(model) else model)
        # an explicit token budget is taken as given (the plan raises it to one planned sequence)
        self.micro_batch_tokens = cfg.micro_batch_tokens or self.plan.micro_batch_tokens
        self.lm_head_chunk = self.plan.lm_head_chunk
        hf = dict(static_cache=cfg.sampler.static_cache, cuda_graphs=cfg.sampler.cuda_graphs)
        self.sampler = sampler or HFSampler(model, tokenizer, self.plan.generation_batch, self.autocast, **hf)
        self.policy = ChatPolicy(self.sampler, tokenizer, cfg.sampling)
        self.on_step = on_step
        self.log = log or (lambda m: None)
        self.out = Path(cfg.output_dir)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        fused = device.type == "cuda"
        self.optimizer = torch.optim.AdamW(
            params,
            lr=cfg.optim.lr,
            betas=cfg.optim.betas,
            weight_decay=cfg.optim.weight_decay,
            **({"fused": True} if fused else {}),
        )
        warm = max(0, cfg.optim.warmup_steps)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / warm) if warm else 1.0
        )
        self.ref_model = None
        if cfg.loss.ref_kl_tau > 0 and not is_peft(model):  # LoRA: the reference is the adapter-free base
            self.ref_model = copy.deepcopy(model).eval().requires_grad_(False)
        # None: packed when the model keeps packed sequences apart, checked at the first update
        self.pack_sequences = pack_sequences
        self.step = 0
        self.history: list[dict] = []

    def _plan(self):
        """The memory plan for the model as loaded (micro-batch tokens, logits chunk)."""
        from vlab.train.plan import plan_for_model

        dev = self.device.type
        with self.autocast():
            compute = torch.get_autocast_dtype(dev) if torch.is_autocast_enabled(dev) else None
        # no autocast: LoRA's matmuls run in the frozen base's dtype (not the float32 adapters'), else the weights'
        frozen = [p.dtype for p in self.model.parameters() if not p.requires_grad]
        compute = compute or (frozen or [next(p.dtype for p in self.model.parameters() if p.requires_grad)])[0]
        return plan_for_model(self.cfg, self.model, self.device, compute)

    # -- one step ------------------------------------------------------------
    def train_step(self) -> dict:
        cfg = self.cfg
        step = self.step + 1
        seed = step_seed(cfg.seed, step)
        torch.manual_seed(seed)
        ids = example_ids_for_step(cfg.seed, step, cfg.prompts_per_step, self.source.num_examples)

        t0 = time.perf_counter()
        tokens_before = self.policy.generated_tokens
        try:
            rollouts = self.source.run_groups(ids, cfg.group_size, self.policy, seed)
        except Exception as err:
            if is_oom(err):
                raise oom_error("generation", cfg) from err
            raise
        gen_s = time.perf_counter() - t0
        gen_tokens = self.policy.generated_tokens - tokens_before
        if len(rollouts) != len(ids) * cfg.group_size:
            raise RuntimeError(
                f"the rollout source returned {len(rollouts)} rollouts, expected {len(ids) * cfg.group_size}"
            )
        if rollouts and all(r.error for r in rollouts):
            # Every reward scored 0 because the environment failed: training on it would burn money.
            raise ToolError(
                f"every rollout of step {step} failed in the environment: {rollouts[0].error}"[:600],
                hint=f"fix the environment ({command('test_reward')} runs its reward functions "
                "on canned completions), then re-run",
            )

        rewards = torch.tensor([r.reward for r in rollouts], dtype=torch.float32)
        adv = group_advantages(rewards, cfg.group_size, cfg.loss.std_normalize)
        zero = zero_advantage_groups(rewards, cfg.group_size)
        keep_group = ~zero if cfg.filter_zero_advantages else torch.ones_like(zero)

        seqs: list[Sequence] = []
        seq_adv: list[float] = []
        for i, r in enumerate(rollouts):
            if not keep_group[i // cfg.group_size]:
                continue
            for s in r.sequences():
                if sum(s.loss_mask):
                    seqs.append(s)
                    seq_adv.append(float(adv[i]))

        t1 = time.perf_counter()
        try:
            train_stats = self._update(seqs, seq_adv) if seqs else None
        except Exception as err:
            if is_oom(err):
                raise oom_error("training", cfg) from err
            raise
        if train_stats is not None:
            self.sampler.sync_weights(self.model)
        train_s = time.perf_counter() - t1
        self.step = step

        metrics = step_metrics(step, rollouts, rewards, zero, len(seqs), gen_s, gen_tokens, train_s, train_stats)
        self.history.append(metrics)
        self._write_metrics(metrics)
        if self.on_step:
            self.on_step(metrics)
        return metrics

    def _forward_logprobs(self, model, batch: Batch) -> torch.Tensor:
        """Token logprobs of the batch; the full-vocabulary logits never exist at once
        (the lm head and the log-softmax run `lm_head_chunk` tokens at a time)."""
        targets = batch.input_ids[:, 1:]
        temperature = self.cfg.sampling.temperature
        parts = lm_parts(model)
        if batch.position_ids is not None:  # packed rows: the restarts are the mask
            inputs = dict(input_ids=batch.input_ids, position_ids=batch.position_ids, use_cache=False)
        else:
            inputs = dict(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False)
        with self.autocast():
            if parts is not None:
                decoder, head = parts
                hidden = decoder(**inputs).last_hidden_state
                return token_logprobs_from_hidden(hidden[:, :-1], head, targets, temperature, self.lm_head_chunk)
            logits = model(**inputs).logits
            return token_logprobs(logits[:, :-1], targets, temperature, self.lm_head_chunk)

    def _packs(self) -> bool:
        if self.pack_sequences is None:
            self.pack_sequences = packs_sequences(self.model, self.autocast)
            self.log(
                "training micro-batches: sequences packed end to end, no padding"
                if self.pack_sequences
                else "training micro-batches padded: this model's attention reads across packed sequences"
            )
        return self.pack_sequences

    def _update(self, seqs: list[Sequence], advs: list[float]) -> dict:
        cfg = self.cfg
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        total_tokens = sum(sum(s.loss_mask) for s in seqs)
        n_batches, batches = training_batches(
            seqs, advs, self._packs(), self.micro_batch_tokens, cfg.micro_batch_size, self.pad_id, self.device
        )
        agg = {
            "loss": 0.0,
            "tokens": 0.0,
            "ratio_sum": 0.0,
            "ratio_max": -math.inf,
            "ratio_min": math.inf,
            "clipped": 0.0,
            "kl_sum": 0.0,
            "lp_diff_max": 0.0,
            "lp_diff_sum": 0.0,
            "train_tokens": 0,
            "slots": 0,
            "micro_batches": n_batches,
            "packed_sequences": self.pack_sequences,
        }
        for batch in batches:
            ref = None
            if cfg.loss.ref_kl_tau > 0:
                with torch.no_grad():
                    if self.ref_model is not None:
                        ref = self._forward_logprobs(self.ref_model, batch)
                    else:
                        with reference_policy(self.model) as base:
                            ref = self._forward_logprobs(base, batch)
            logps = self._forward_logprobs(self.model, batch)
            loss, st = policy_loss(
                logps,
                batch.sampler_logprobs,
                batch.advantages,
                batch.loss_mask,
                cfg.loss,
                ref_logprobs=ref,
                total_tokens=total_tokens,
            )
            loss.backward()
            with torch.no_grad():
                diff = (logps.detach() - batch.sampler_logprobs).abs() * batch.loss_mask
                agg["lp_diff_max"] = max(agg["lp_diff_max"], float(diff.max()))
                agg["lp_diff_sum"] += float(diff.sum())
            agg["loss"] += float(loss.detach())
            for k in ("tokens", "ratio_sum", "clipped", "kl_sum"):
                agg[k] += float(st[k])
            agg["ratio_max"] = max(agg["ratio_max"], float(st["ratio_max"]))
            agg["ratio_min"] = min(agg["ratio_min"], float(st["ratio_min"]))
            agg["train_tokens"] += int(batch.attention_mask.sum())
            agg["slots"] += batch.attention_mask.numel()
        params = [p for p in self.model.parameters() if p.requires_grad]
        if cfg.optim.max_norm > 0:
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.optim.max_norm))
        else:
            grad_norm = float(
                torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in params if p.grad is not None]))
            )
        if not math.isfinite(agg["loss"]) or not math.isfinite(grad_norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise ToolError(
                f"the loss or gradient is not finite (loss {agg['loss']}, grad norm {grad_norm}) at step {self.step + 1}",
                hint="lower optim.lr, check the rewards for extreme values, or use a float32/bfloat16 dtype",
            )
        lr = self.scheduler.get_last_lr()[0]
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        agg["grad_norm"] = grad_norm
        agg["lr"] = lr
        return agg

    def _write_metrics(self, metrics: dict) -> None:
        path = self.out / METRICS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(metrics) + "\n")

    # -- the run -------------------------------------------------------------
    def train(self, should_stop: Callable[[], bool] | None = None) -> list[dict]:
        with frozen_heap():
            return self._train(should_stop)

    def _train(self, should_stop: Callable[[], bool] | None) -> list[dict]:
        cfg = self.cfg
        while self.step < cfg.max_steps:
            metrics = self.train_step()
            if cfg.eval.interval and self.step % cfg.eval.interval == 0 and self.step < cfg.max_steps:
                rollouts = self.evaluate()
                if rollouts:
                    metrics["eval/reward_mean"] = float(np.mean([r.reward for r in rollouts]))
                    self._write_metrics(
                        {
                            "step": self.step,
                            "eval/reward_mean": metrics["eval/reward_mean"],
                            "eval/num_rollouts": len(rollouts),
                        }
                    )
            if cfg.ckpt.interval and self.step % cfg.ckpt.interval == 0 and self.step < cfg.max_steps:
                self.save_checkpoint()
            if should_stop and should_stop():
                break
        return self.history

    # -- checkpoints ---------------------------------------------------------
    def checkpoint_dir(self, step: int) -> Path:
        return self.out / "checkpoints" / f"step_{step}"

    def save_checkpoint(self) -> Path:
        """Weights (adapter or full, loadable with from_pretrained), tokenizer, optimizer and step."""
        final = self.checkpoint_dir(self.step)
        tmp = final.with_name(final.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir(parents=True)
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            trainable = {n: p.detach().cpu() for n, p in self.model.named_parameters() if p.requires_grad}
            torch.save(
                {
                    "step": self.step,
                    "trainable": trainable,
                    "optimizer": self.optimizer.state_dict(),
                    "scheduler": self.scheduler.state_dict(),
                    "config": secrets.scrub(self.cfg.to_dict()),  # no --env-args secret in a checkpoint
                },
                tmp / CKPT_STATE,
            )
        except BaseException as err:  # a full disk mid-save: no half checkpoint, the earlier ones intact
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(err, OSError) and err.errno in WRITE_ERRNOS:
                raise write_fault(err, tmp) from None
            if isinstance(err, RuntimeError) and "No space left" in str(err):  # torch.save's own wording
                raise write_fault(OSError(errno.ENOSPC, "No space left on device"), tmp) from None
            raise
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)  # a checkpoint folder exists only once it is complete
        self._prune()
        return final

    def _prune(self) -> None:
        keep = self.cfg.ckpt.keep_last
        if keep <= 0:
            return
        root = self.out / "checkpoints"
        steps = sorted(int(p.name.split("_")[1]) for p in root.glob("step_*") if p.name.split("_")[1].isdigit())
        for s in steps[:-keep]:
            shutil.rmtree(root / f"step_{s}", ignore_errors=True)

    def load_checkpoint(self, path: Path) -> None:
        state_file = path / CKPT_STATE
        if not state_file.is_file():
            raise UsageError(
                f"{path} is not a local-train checkpoint (no {CKPT_STATE})",
                hint="pass a folder under OUTPUT_DIR/checkpoints/, or --resume latest",
            )
        state = torch.load(state_file, map_location="cpu", weights_only=False)
        named = dict(self.model.named_parameters())
        missing = [n for n in state["trainable"] if n not in named]
        if missing:
            raise UsageError(
                f"checkpoint {path} does not match this model ({len(missing)} unknown weights, e.g. {missing[0]})",
                hint="resume with the same model and lora settings",
            )
        with torch.no_grad():
            for n, t in state["trainable"].items():
                named[n].copy_(t.to(named[n].device, named[n].dtype))
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        self.sampler.sync_weights(self.model)

    # -- eval ----------------------------------------------------------------
    def evaluate(self, source=None) -> list[Rollout]:
        """The eval rollouts on `source` (default: the training environment)."""
        cfg = self.cfg
        source = source or self.source
        n = min(cfg.eval.num_examples, source.num_examples) if cfg.eval.num_examples else 0
        if n == 0:
            return []
        torch.manual_seed(step_seed(cfg.seed, 10**6 + self.step))
        try:
            return source.run_groups(
                list(range(n)),
                cfg.eval.rollouts_per_example,
                self.policy,
                step_seed(cfg.seed, 10**6 + self.step),
                eval=True,
            )
        except Exception as err:
            if is_oom(err):
                raise oom_error("eval", cfg) from err
            raise


@contextlib.contextmanager
def frozen_heap():
    """Keep everything alive before training (torch, transformers, verifiers, datasets: 350k-650k
    objects) out of the garbage collector's full collections while the steps run.

    A full (generation-2) collection walks every tracked object: 0.6-1.3 s each on the
    development machine, and one landed every 20 steps or so of the toy classic run, making
    that step 3-4x slower than its neighbours (bench/bench_local_train.py --profile-steps;
    numbers in bench/RESULTS.md). Frozen objects are skipped, so a full collection during
    the run costs milliseconds. Only the young generations are collected first (a full
    collect would itself cost one such pause); old garbage alive at this moment (25 objects
    when measured) waits until the run ends and the heap is unfrozen.
    """
    gc.collect(1)
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def latest_checkpoint(output_dir: Path) -> Path | None:
    root = Path(output_dir) / "checkpoints"
    steps = sorted(
        (int(p.name.split("_")[1]), p)
        for p in root.glob("step_*")
        if p.name.split("_")[1].isdigit() and (p / CKPT_STATE).is_file()
    )
    return steps[-1][1] if steps else None
