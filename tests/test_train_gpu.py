"""The GPU tier of local_train: `pytest -m gpu` on a machine with a CUDA GPU.

Skipped without CUDA, and skipped unless `-m gpu` selects it (not part of CI's meaning):
the 0.5B shape (random weights built in code, no download) fits at default settings,
sampler and trainer logprobs agree within the bf16 tolerance, a short run raises the toy
reward, resume is exact, LoRA trains, and the decode loop's CUDA graphs give the same
tokens as eager decoding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from conftest import assert_result, run_script  # noqa: E402
from train_fixtures import TOY_PROMPTS, make_model, make_tokenizer, share_of_a  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu_tier(request):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    if "gpu" not in (request.config.option.markexpr or ""):
        pytest.skip("the GPU tier runs only when selected: pytest -m gpu")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


CUDA = torch.device("cuda") if torch.cuda.is_available() else None


def _mixed():
    from vlab.train.model import autocast

    return autocast(CUDA, torch.float32, torch.bfloat16)


def _trainer(tmp_path, model, tok, sets: dict, source=None, autocast=_mixed):
    from vlab.train.config import load_config
    from vlab.train.rollout import FunctionSource
    from vlab.train.trainer import Trainer

    cfg = load_config(None, [(k.split("."), v) for k, v in {"output_dir": str(tmp_path / "run"), **sets}.items()])
    source = source or FunctionSource(TOY_PROMPTS, lambda text, conv: share_of_a(text), env_id="toy")
    return Trainer(cfg, model, tok, source, CUDA, autocast=autocast)


def test_half_billion_shape_fits_at_default_settings_and_logprobs_agree(tmp_path):
    from vlab.train.config import load_config
    from vlab.train.plan import plan_for_model
    from vlab.train.runner import LOGPROB_TOL_LOW_PRECISION
    from vlab.train.tiny import make_shaped_model

    model, tok = make_shaped_model("qwen2.5-0.5b")
    model.to(CUDA)
    sets = {
        "max_steps": 2,
        "batch_size": 64,
        "group_size": 8,
        "sampling.max_completion_tokens": 256,
        "filter_zero_advantages": False,  # random weights score 0 everywhere: train anyway
    }
    # Not told the sequence length, the plan assumes 512-token prompts: it fits too. The toy's prompts are a
    # few tokens, so the run below tells it (else its estimate is 2.5x the peak: 91.6 vs 36.5 GiB on an H200).
    unknown = plan_for_model(
        load_config(None, [(k.split("."), v) for k, v in sets.items()]), model, CUDA, torch.bfloat16
    )
    assert unknown.fits and unknown.estimate.seq_len == 256 + 512, unknown.describe()
    trainer = _trainer(tmp_path, model, tok, {**sets, "model.seq_len": 256 + 32})
    plan = trainer.plan
    assert plan.fits, plan.describe()
    hist = trainer.train()  # default settings: micro-batches sized from free memory, no OOM
    peak = torch.cuda.max_memory_allocated()
    assert len(hist) == 2 and hist[0]["train_tokens"] > 64 * 256
    assert peak <= plan.budget, (peak / 2**30, plan.describe())
    # the estimate is an upper bound within reason: not far below, not wildly above
    assert 0.5 < plan.estimate.peak / peak < 2.5, (plan.estimate.peak / 2**30, peak / 2**30)
    assert hist[0]["logprob_diff_max"] < LOGPROB_TOL_LOW_PRECISION


def test_short_run_raises_the_toy_reward_through_the_cli(tmp_path):
    from train_fixtures import CLASSIC_TOY, save_tiny_model, write_env_package

    env = write_env_package(tmp_path / "envs", "toy_classic", CLASSIC_TOY)
    model = save_tiny_model(tmp_path / "tiny")
    r = run_script(
        "local_train",
        "--env",
        str(env),
        "--model",
        str(model),
        "--device",
        "cuda",
        "--max-steps",
        "20",
        "--output-dir",
        str(tmp_path / "run"),
        "--json",
        "--set",
        "sampling.max_completion_tokens=12",
        "--set",
        "optim.lr=1e-2",
        "--set",
        "eval.num_examples=8",
        timeout=900,
    )
    obj = assert_result(r.json, "local_train", 0)
    d = obj["data"]
    assert d["device"].startswith("cuda") and d["dtype"] == "bfloat16"
    assert d["reward_first"] < 0.3 and d["reward_last"] >= 0.8, d
    assert d["logprob_diff_max_first_step"] < 0.05


def test_resume_is_exact(tmp_path):
    torch.use_deterministic_algorithms(True, warn_only=True)
    tok = make_tokenizer()
    sets = {"max_steps": 4, "batch_size": 32, "sampling.max_completion_tokens": 12, "optim.lr": 1e-2}
    straight = _trainer(tmp_path / "a", make_model(tok).to(CUDA), tok, {**sets, "ckpt.interval": 2})
    hist = straight.train()
    resumed = _trainer(tmp_path / "b", make_model(tok).to(CUDA), tok, sets)
    resumed.load_checkpoint(tmp_path / "a" / "run" / "checkpoints" / "step_2")
    hist2 = resumed.train()
    assert [m["step"] for m in hist2] == [3, 4]
    for a, b in zip(hist[2:], hist2):
        assert (a["reward_mean"], a["loss"], a["grad_norm"]) == (b["reward_mean"], b["loss"], b["grad_norm"])
    for (n, p), (_, q) in zip(straight.model.named_parameters(), resumed.model.named_parameters()):
        assert torch.equal(p, q), n


def test_lora_trains_the_adapters_only(tmp_path):
    from vlab.train.config import load_config
    from vlab.train.model import apply_lora, autocast
    from vlab.train.tiny import make_shaped_model

    model, tok = make_shaped_model("qwen2.5-0.5b")
    cfg = load_config(None, [(["lora", "enabled"], True)])
    model = apply_lora(model.to(CUDA, torch.bfloat16), cfg)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    sets = {
        "max_steps": 2,
        "batch_size": 16,
        "sampling.max_completion_tokens": 64,
        "lora.enabled": True,
        "optim.lr": 1e-3,
        "filter_zero_advantages": False,
    }
    trainer = _trainer(tmp_path, model, tok, sets, autocast=lambda: autocast(CUDA, torch.bfloat16, torch.bfloat16))
    trainer.train()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all("lora_" in n for n in changed)
    assert (trainer.save_checkpoint() / "adapter_config.json").is_file()


def test_cuda_graph_decoding_gives_the_eager_tokens():
    from vlab.train.config import SamplingConfig
    from vlab.train.rollout import render_chat
    from vlab.train.sampler import HFSampler

    tok = make_tokenizer()
    model = make_model(tok)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():  # larger weights: greedy rows differ and some stop early
        for p in model.parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)
    model.to(CUDA)
    prompts = [render_chat(tok, p) for p in TOY_PROMPTS] * 4
    sampling = SamplingConfig(max_completion_tokens=32)
    eager = HFSampler(model, tok).generate(prompts, sampling, greedy=True)
    graphs = HFSampler(model, tok, cuda_graphs=True).generate(prompts, sampling, greedy=True)
    hf = HFSampler(model, tok, static_cache=False).generate(prompts, sampling, greedy=True)
    assert [s.completion_ids for s in graphs] == [s.completion_ids for s in eager] == [s.completion_ids for s in hf]


def test_decode_throughput_is_reported(tmp_path):
    """Not a timed assertion: records decode ms/step on the 0.5B shape at batch 64 for the log."""
    import time

    from vlab.train.config import SamplingConfig
    from vlab.train.rollout import render_chat
    from vlab.train.sampler import HFSampler
    from vlab.train.tiny import make_shaped_model

    model, tok = make_shaped_model("qwen2.5-0.5b")
    model.to(CUDA)
    sampler = HFSampler(model, tok, autocast=_mixed)
    sampler.eos_ids = []  # every row runs the full length
    prompts = [render_chat(tok, TOY_PROMPTS[i % len(TOY_PROMPTS)]) for i in range(64)]
    sampler.generate(prompts[:2], SamplingConfig(max_completion_tokens=4), seed=0)
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = sampler.generate(prompts, SamplingConfig(max_completion_tokens=128), seed=1)
    torch.cuda.synchronize()
    ms = 1000 * (time.perf_counter() - t) / 128
    Path(tmp_path / "decode_ms.txt").write_text(f"{ms:.2f}\n")
    print(f"decode: {ms:.2f} ms/step at batch 64 ({64 * 128 / (ms * 128 / 1000):.0f} tokens/s)")
    assert all(len(s.completion_ids) == 128 for s in out)
