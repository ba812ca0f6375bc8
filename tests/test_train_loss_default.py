"""prime-rl's default loss (DPPO mask by advantage sign + kl_tau * log_ratio**2) against hand-worked numbers,
and the loss vocabulary of local_train's config (prime-rl's key names and defaults)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from vlab.core.result import UsageError  # noqa: E402
from vlab.train.config import LossConfig, load_config  # noqa: E402
from vlab.train.loss import per_token_policy_loss, policy_loss  # noqa: E402

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

HALF = math.log(0.5)
PROBS = [0.8, 0.6, 0.2, 0.45]  # trainer probabilities; the sampler gave every token 0.5


def _inputs():
    logp = torch.log(torch.tensor([PROBS], dtype=torch.float64))
    return logp, torch.full((1, 4), HALF, dtype=torch.float64)


def _kl(tau):
    return tau * sum(math.log(p / 0.5) ** 2 for p in PROBS)


def test_defaults_are_prime_rl_defaults():
    c = LossConfig()
    assert (c.type, c.dppo_mask_low, c.dppo_mask_high, c.adv_tau, c.kl_tau) == ("default", 0.2, 0.2, 1.0, 1e-3)
    assert load_config(None).loss == c


def test_positive_advantage_masks_tokens_whose_probability_rose_too_much():
    logp, sampler = _inputs()
    per_token, masked = per_token_policy_loss(logp, sampler, torch.tensor([1.0]), LossConfig())
    # differences 0.3, 0.1, -0.3, -0.05: A > 0 masks only the first (> dppo_mask_high 0.2);
    # the 0.3 fall of the third is allowed for a positive advantage
    assert masked.tolist() == [[True, False, False, False]]
    ratios = [p / 0.5 for p in PROBS]
    expected = [0.0, -ratios[1], -ratios[2], -ratios[3]]
    expected = [e + 1e-3 * math.log(r) ** 2 for e, r in zip(expected, ratios)]  # the KL term on every token
    assert per_token[0].tolist() == pytest.approx(expected, abs=1e-12)
    loss, st = policy_loss(logp, sampler, torch.tensor([1.0]), torch.ones(1, 4), LossConfig())
    assert float(loss) == pytest.approx((-(1.2 + 0.4 + 0.9) + _kl(1e-3)) / 4, abs=1e-12)
    assert float(st["clipped"]) == 1


def test_negative_advantage_masks_tokens_whose_probability_fell_too_much():
    logp, sampler = _inputs()
    loss, st = policy_loss(logp, sampler, torch.tensor([-1.0]), torch.ones(1, 4), LossConfig())
    # A < 0 masks only the third token (fell by 0.3 > dppo_mask_low 0.2); the others push down
    assert float(loss) == pytest.approx(((1.6 + 1.2 + 0.9) + _kl(1e-3)) / 4, abs=1e-12)
    assert float(st["clipped"]) == 1


def test_mask_bounds_adv_tau_and_kl_tau_are_used():
    logp, sampler = _inputs()
    cfg = LossConfig(dppo_mask_high=0.35, adv_tau=0.5, kl_tau=0.0)  # nothing masked for A > 0 now
    loss, st = policy_loss(logp, sampler, torch.tensor([2.0]), torch.ones(1, 4), cfg)
    assert float(loss) == pytest.approx(-(0.5 * 2.0) * (1.6 + 1.2 + 0.4 + 0.9) / 4, abs=1e-12)
    assert float(st["clipped"]) == 0
    # zero advantage: no policy term, only the KL term (prime-rl masks with the low bound there)
    loss, _ = policy_loss(logp, sampler, torch.tensor([0.0]), torch.ones(1, 4), LossConfig(kl_tau=0.1))
    assert float(loss) == pytest.approx(_kl(0.1) / 4, abs=1e-12)


def test_loss_mask_and_gradient_on_policy():
    logp = torch.full((1, 3), HALF, dtype=torch.float64, requires_grad=True)
    sampler = torch.full((1, 3), HALF, dtype=torch.float64)
    loss, _ = policy_loss(logp, sampler, torch.tensor([3.0]), torch.tensor([[1.0, 1.0, 0.0]]), LossConfig())
    loss.backward()
    # on policy: d/dlogp of -A r = -A; the KL term's gradient is 0 at log r = 0; a padded token gets nothing
    assert logp.grad[0].tolist() == pytest.approx([-1.5, -1.5, 0.0])


def test_ppo_clip_differs_from_default_on_the_same_tokens():
    logp, sampler = _inputs()
    ppo, _ = policy_loss(logp, sampler, torch.tensor([1.0]), torch.ones(1, 4), LossConfig(type="ppo_clip", kl_tau=0))
    # -min(r, clip(r, 0.8, 1.28)) for r = 1.6, 1.2, 0.4, 0.9
    assert float(ppo) == pytest.approx(-(1.28 + 1.2 + 0.4 + 0.9) / 4, abs=1e-12)


@pytest.mark.parametrize(
    "key, value, needle",
    [
        ("type", "grpo", "loss.type"),
        ("ratio_mode", "clip", "loss.type"),  # the old key is refused with its new name
        ("dppo_mask_lo", 0.1, "unknown config key 'loss.dppo_mask_lo'"),
        ("kl_tau", -1.0, ">= 0"),
    ],
)
def test_loss_keys_are_checked(key, value, needle):
    with pytest.raises(UsageError) as err:
        load_config(None, [(["loss", key], value)])
    assert needle in err.value.message
