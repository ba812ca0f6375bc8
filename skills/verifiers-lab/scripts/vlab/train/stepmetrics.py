"""What one training step logs (a line of `logs/metrics.jsonl`): from the rollouts, the generation and the
update's statistics. diagnose_run reads these names (`vlab.diagnose.series`)."""

from __future__ import annotations

import numpy as np

from vlab.catalog import JUDGE_ERROR_METRIC
from vlab.evals.fields import completion_size, turn_limited
from vlab.train.rollout import Rollout


def turn_limited_share(rollouts: list) -> float:
    """Share of rollouts the turn limit ended before they were over (``evals.fields.turn_limited``); when every
    rollout ran to the limit without a tool call, a conversation of fixed length, none (as check_reward_distribution)."""
    calls = [completion_size(r.completion)[1] for r in rollouts]
    limited = [turn_limited(r.stop_condition, c, r.completion) for r, c in zip(rollouts, calls)]
    if limited and all(limited) and not any(calls):
        return 0.0
    return sum(limited) / max(1, len(rollouts))


def entropy_estimate(rollouts: list[Rollout]) -> float | None:
    """Monte-Carlo estimate of the policy's per-token entropy: E[-log p(token)] over the sampled tokens."""
    logprobs = [lp for r in rollouts for t in r.turns for lp in t.logprobs]
    return float(-np.mean(logprobs)) if logprobs else None


def step_metrics(step, rollouts: list[Rollout], rewards, zero, n_seqs, gen_s, gen_tokens, train_s, st) -> dict:
    """One step's metrics line: the rollouts (rewards, groups, lengths, the environment's metrics), generation,
    and the update's statistics `st` (None: no update)."""
    m: dict = {
        "step": step,
        "reward_mean": float(rewards.mean()),
        "reward_std": float(rewards.std(unbiased=False)),
        "zero_adv_group_frac": float(zero.float().mean()),
        # of those, groups that all pass (every rollout at 1, the top of verifiers' 0-1 correctness scale) and
        # all fail (every rollout at 0 or below): diagnose_run tells learning the task from a lost signal by them
        "solved_all_frac": float((rewards.view(zero.numel(), -1).min(dim=1).values >= 1.0).float().mean()),
        "solved_none_frac": float((rewards.view(zero.numel(), -1).max(dim=1).values <= 0.0).float().mean()),
        "num_rollouts": len(rollouts),
        "num_train_sequences": n_seqs,
        "errors": sum(1 for r in rollouts if r.error),
        "truncated_frac": sum(1 for r in rollouts if r.is_truncated) / max(1, len(rollouts)),
        # rollouts the environment's turn limit ended before they were over (still calling tools, a game cut short)
        "turn_limited_frac": turn_limited_share(rollouts),
        "completion_len_mean": float(np.mean([sum(len(t.completion_ids) for t in r.turns) for r in rollouts]))
        if rollouts
        else 0.0,
        # Per-token entropy of the sampling policy, estimated as the mean -log p of the sampled tokens.
        "entropy": entropy_estimate(rollouts),
        "gen_tokens": gen_tokens,
        "gen_s": round(gen_s, 4),
        "gen_tokens_per_s": gen_tokens / gen_s if gen_s > 0 else None,
        "train_s": round(train_s, 4),
    }
    if any(JUDGE_ERROR_METRIC in r.metrics for r in rollouts):  # a judge template: its failures apart from zeros
        m["judge_error_frac"] = sum(r.metrics.get(JUDGE_ERROR_METRIC, 0.0) > 0 for r in rollouts) / len(rollouts)
    names = sorted({k for r in rollouts for k in r.metrics})
    for name in names:
        vals = np.array([r.metrics.get(name, np.nan) for r in rollouts], dtype=float)
        m[f"metrics/{name}/mean"] = float(np.nanmean(vals))
        m[f"metrics/{name}/std"] = float(np.nanstd(vals))
    if st is not None:
        n = max(1.0, st["tokens"])
        m.update(
            {
                "loss": st["loss"],
                "grad_norm": st["grad_norm"],
                "lr": st["lr"],
                "train_tokens": st["train_tokens"],
                "train_tokens_per_s": st["train_tokens"] / train_s if train_s > 0 else None,
                "ratio_mean": st["ratio_sum"] / n,
                "ratio_max": st["ratio_max"],
                "ratio_min": st["ratio_min"],
                "clipped_frac": st["clipped"] / n,
                "kl": st["kl_sum"] / n,
                "logprob_diff_max": st["lp_diff_max"],
                "logprob_diff_mean": st["lp_diff_sum"] / n,
                "micro_batches": st["micro_batches"],
                "packed_sequences": st["packed_sequences"],
                # the update's token slots that held padding (packed: only rows' tails)
                "padding_frac": 1.0 - st["train_tokens"] / max(1, st["slots"]),
            }
        )
    else:
        m.update({"loss": None, "skipped_update": True})
    return m
