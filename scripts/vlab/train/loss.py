"""GRPO-family loss: group-normalised advantages, token-level importance ratio
against the sampler's logprobs (clipped or masked), DAPO token averaging, and an
optional k3 KL term against the starting policy.

Pure functions on tensors, so the unit tests can check them against numbers
worked out by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import LossConfig


def group_advantages(rewards: torch.Tensor, group_size: int, std_normalize: bool = False,
                     eps: float = 1e-6) -> torch.Tensor:
    """A_i = r_i - mean(group) (optionally divided by the group's population std + eps).

    `rewards` is flat, groups contiguous: [g0r0, g0r1, ..., g1r0, ...].
    """
    grouped = rewards.view(-1, group_size).to(torch.float64)
    adv = grouped - grouped.mean(dim=1, keepdim=True)
    if std_normalize:
        adv = adv / (grouped.std(dim=1, unbiased=False, keepdim=True) + eps)
    return adv.view(-1).to(torch.float32)


def zero_advantage_groups(rewards: torch.Tensor, group_size: int, tol: float = 1e-9) -> torch.Tensor:
    """One bool per group: True where every rollout scored the same (nothing to learn)."""
    grouped = rewards.view(-1, group_size)
    return (grouped.max(dim=1).values - grouped.min(dim=1).values) <= tol


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log p(target) under softmax(logits / temperature), per position. Shapes [B, T, V] / [B, T]."""
    logits = logits.float() / temperature
    # logsumexp + gather: the memory of one log_softmax copy is avoided for large vocabularies.
    picked = torch.gather(logits, -1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


@dataclass
class LossStats:
    loss: float
    num_tokens: int
    ratio_mean: float
    ratio_max: float
    ratio_min: float
    clipped_frac: float
    kl: float


def policy_loss(
    logprobs: torch.Tensor,  # [B, T] current policy, with grad
    sampler_logprobs: torch.Tensor,  # [B, T] from the sampler
    advantages: torch.Tensor,  # [B]
    loss_mask: torch.Tensor,  # [B, T] 1 on tokens the model generated
    cfg: LossConfig,
    ref_logprobs: torch.Tensor | None = None,  # [B, T] starting policy, for the KL term
    total_tokens: int | None = None,  # tokens in the whole step (gradient accumulation)
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Sum of per-token losses divided by the number of loss tokens in the step (DAPO).

    clip:  -min(r A, clip(r, 1-clip_low, 1+clip_high) A)
    mask:  -r A on tokens with mask_low <= r <= mask_high, 0 elsewhere
    kl:    + kl_tau * (exp(ref - logp) - (ref - logp) - 1)   (k3 estimator)
    """
    mask = loss_mask.to(logprobs.dtype)
    log_ratio = logprobs - sampler_logprobs
    ratio = torch.exp(log_ratio)
    adv = advantages.unsqueeze(-1).to(logprobs.dtype)
    if cfg.ratio_mode == "clip":
        unclipped = ratio * adv
        clipped = torch.clamp(ratio, 1.0 - cfg.clip_low, 1.0 + cfg.clip_high) * adv
        per_token = -torch.minimum(unclipped, clipped)
        outside = (clipped < unclipped).to(mask.dtype)  # tokens where the clip bound is active
    else:
        keep = ((ratio >= cfg.mask_low) & (ratio <= cfg.mask_high)).to(mask.dtype)
        per_token = -ratio * adv * keep
        outside = 1.0 - keep
    kl = torch.zeros_like(per_token)
    if cfg.kl_tau > 0 and ref_logprobs is not None:
        d = ref_logprobs - logprobs
        kl = torch.exp(d) - d - 1.0
        per_token = per_token + cfg.kl_tau * kl
    denom = float(total_tokens) if total_tokens else mask.sum().clamp(min=1.0)
    loss = (per_token * mask).sum() / denom
    with torch.no_grad():
        n = mask.sum().clamp(min=1.0)
        masked_ratio = ratio.detach()[mask.bool()]
        stats = {
            "tokens": mask.sum(),
            "ratio_sum": (ratio.detach() * mask).sum(),
            "ratio_max": masked_ratio.max() if masked_ratio.numel() else torch.tensor(1.0),
            "ratio_min": masked_ratio.min() if masked_ratio.numel() else torch.tensor(1.0),
            "clipped": (outside.detach() * mask).sum(),
            "kl_sum": (kl.detach() * mask).sum(),
            "n": n,
        }
    return loss, stats
