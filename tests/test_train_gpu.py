"""The GPU tier of local_train: `pytest -m gpu` on a machine with a CUDA GPU.

Skipped without CUDA, and skipped unless `-m gpu` selects it (not part of CI's meaning):
the 0.5B shape (random weights built in code, no download) fits at default settings,
sampler and trainer logprobs agree within the bf16 tolerance, a short run raises the toy
reward, resume is exact, LoRA trains, and the decode loop's CUDA graphs give the same
tokens as eager decoding.
"""

from __future__ import annotations

import warnings
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


# Peak dense bf16 FLOP/s by device name, for the update's MFU in the printed figures.
PEAK_FLOPS = {"H100": 989e12, "H200": 989e12, "A100": 312e12}


@pytest.mark.parametrize("shape", ["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-1.5b:lora"])
def test_each_shape_fits_at_default_settings_within_its_planned_peak(tmp_path, shape):
    """64 rollouts x 256 tokens at default settings on the card as it is: fits, the plan's estimate within
    1.3x of the measured peak either way, sampler and trainer logprobs within the bf16 tolerance. Prints the
    step's figures (one JSON line) for bench/RESULTS.md."""
    import json
    import time

    from vlab.train.config import load_config
    from vlab.train.model import apply_lora, autocast
    from vlab.train.plan import plan_for_model
    from vlab.train.runner import LOGPROB_TOL_LOW_PRECISION
    from vlab.train.tiny import make_shaped_model

    name, _, kind = shape.partition(":")
    with torch.device(CUDA):
        model, tok = make_shaped_model(name)
    sets = {
        "max_steps": 2 if name.endswith("0.5b") else 1,
        "batch_size": 64,
        "group_size": 8,
        "sampling.max_completion_tokens": 256,
        "filter_zero_advantages": False,  # random weights score 0 everywhere: train anyway
        "lora.enabled": kind == "lora",
    }
    mixed = _mixed
    if kind == "lora":
        model = apply_lora(model.to(torch.bfloat16), load_config(None, [(["lora", "enabled"], True)]))
        mixed = lambda: autocast(CUDA, torch.bfloat16, torch.bfloat16)  # noqa: E731
    # Not told the sequence length, the plan assumes 512-token prompts: it fits too. The toy's prompts are a
    # few tokens, so the run below tells it (else its estimate is 2.5x the peak: 91.6 vs 36.5 GiB on an H200).
    unknown = plan_for_model(
        load_config(None, [(k.split("."), v) for k, v in sets.items()]), model, CUDA, torch.bfloat16
    )
    assert unknown.fits and unknown.estimate.seq_len == 256 + 512, unknown.describe()
    torch.cuda.reset_peak_memory_stats()
    trainer = _trainer(tmp_path, model, tok, {**sets, "model.seq_len": 256 + 32}, autocast=mixed)
    plan = trainer.plan
    assert plan.fits, plan.describe()
    t0 = time.perf_counter()
    hist = trainer.train()  # default settings: micro-batches sized from free memory, no OOM
    wall = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated()
    flops = next((v for k, v in PEAK_FLOPS.items() if k in torch.cuda.get_device_name()), None)
    n = sum(p.numel() for p in model.parameters())
    train = sum(m["train_tokens"] for m in hist), sum(m["train_s"] for m in hist)
    figures = {
        "shape": shape,
        "estimate_gib": round(plan.estimate.peak / 2**30, 2),
        "peak_gib": round(peak / 2**30, 2),
        "ratio": round(plan.estimate.peak / peak, 3),
        "wall_per_step_s": round(wall / len(hist), 2),
        "gen_tokens_per_s": round(sum(m["gen_tokens"] for m in hist) / sum(m["gen_s"] for m in hist)),
        "train_tokens_per_s": round(train[0] / train[1]),
        "update_mfu": round(6 * n * train[0] / train[1] / flops, 3) if flops else None,
        "micro_batches": [m.get("micro_batches") for m in hist],
        "packed_sequences": hist[-1].get("packed_sequences"),
        "padding_frac": [round(m["padding_frac"], 3) for m in hist if "padding_frac" in m],
        "plan": plan.describe(),
    }
    print("figures " + json.dumps(figures))
    assert hist[0]["train_tokens"] > 64 * 256
    assert peak <= plan.budget, (peak / 2**30, plan.describe())
    assert 1 / 1.3 <= plan.estimate.peak / peak <= 1.3, figures
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
    sampling = SamplingConfig(max_completion_tokens=48)
    eager = HFSampler(model, tok).generate(prompts, sampling, greedy=True)
    sampler = HFSampler(model, tok, cuda_graphs=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "sampler.cuda_graphs: capture failed" fails the test
        graphs = sampler.generate(prompts, sampling, greedy=True)
    hf = HFSampler(model, tok, static_cache=False).generate(prompts, sampling, greedy=True)
    assert [s.completion_ids for s in graphs] == [s.completion_ids for s in eager] == [s.completion_ids for s in hf]
    loop = sampler._graphs
    assert loop is not None and loop.stats["captures"] >= 1, "the graphs were not used"
    stopped = sum(s.finish_reason == "stop" for s in graphs)
    print(f"graph decoder: {loop.stats}, {stopped} of {len(graphs)} rows stopped early")
    # seeded sampling: the same tokens as the eager loop, row by row; the graphs are reused
    seeds = list(range(len(prompts)))
    sampled = SamplingConfig(max_completion_tokens=48, temperature=0.9, top_p=0.95)
    a = HFSampler(model, tok).generate(prompts, sampled, seeds=seeds)
    b = sampler.generate(prompts, sampled, seeds=seeds)
    assert [s.completion_ids for s in a] == [s.completion_ids for s in b]
    captures = loop.stats["captures"]
    again = sampler.generate(prompts, sampled, seeds=seeds)
    assert [s.completion_ids for s in again] == [s.completion_ids for s in b]
    assert loop.stats["captures"] == captures  # the same buckets again: replayed, not captured


def test_cuda_graphs_under_autocast_keep_the_trainers_logprobs_after_the_weights_move():
    """local_train's GPU default: float32 master weights under bf16 autocast. The graphs read bf16 copies of
    the Linear weights and biases, refreshed at each call; a call after an update must still give the
    logprobs the trainer computes (a graph that read the first call's cast cache gave NaN from then on)."""
    from vlab.train.config import SamplingConfig
    from vlab.train.rollout import render_chat
    from vlab.train.runner import LOGPROB_TOL_LOW_PRECISION
    from vlab.train.sampler import HFSampler

    tok = make_tokenizer()
    model = make_model(tok).to(CUDA)
    prompts = [render_chat(tok, p) for p in TOY_PROMPTS] * 4
    sampler = HFSampler(model, tok, autocast=_mixed, cuda_graphs=True)
    sampling = SamplingConfig(max_completion_tokens=32, temperature=0.9)
    for call in range(3):
        samples = sampler.generate(prompts, sampling, seeds=list(range(len(prompts))))
        for s in samples[:8]:
            ids = torch.tensor([s.prompt_ids + s.completion_ids], device=CUDA)
            with torch.no_grad(), _mixed():
                logits = model(input_ids=ids).logits[0, len(s.prompt_ids) - 1 : -1].float() / 0.9
            ref = torch.log_softmax(logits, dim=-1).gather(-1, ids[0, len(s.prompt_ids) :, None]).squeeze(-1)
            got = torch.tensor(s.logprobs, device=CUDA)
            assert torch.isfinite(got).all(), (call, s.logprobs)
            assert (got - ref).abs().max() < LOGPROB_TOL_LOW_PRECISION, (call, (got - ref).abs().max())
        with torch.no_grad():  # an optimizer step moves the float32 weights in place
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.02)
    assert sampler._graphs is not None and sampler._graphs.copies


def test_decode_throughput_is_reported(tmp_path):
    """Not a timed assertion: records decode ms/step on the 0.5B shape at batch 64 for the log."""
    import time

    from vlab.train.config import SamplingConfig
    from vlab.train.rollout import render_chat
    from vlab.train.sampler import HFSampler
    from vlab.train.tiny import make_shaped_model

    model, tok = make_shaped_model("qwen2.5-0.5b")
    model.to(CUDA)
    sampler = HFSampler(model, tok, autocast=_mixed, cuda_graphs=True)
    sampler.eos_ids = []  # every row runs the full length
    prompts = [render_chat(tok, TOY_PROMPTS[i % len(TOY_PROMPTS)]) for i in range(64)]
    sampler.generate(prompts, SamplingConfig(max_completion_tokens=128), seed=0)  # captures the graphs
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = sampler.generate(prompts, SamplingConfig(max_completion_tokens=128), seed=1)
    torch.cuda.synchronize()
    ms = 1000 * (time.perf_counter() - t) / 128
    Path(tmp_path / "decode_ms.txt").write_text(f"{ms:.2f}\n")
    print(f"decode: {ms:.2f} ms/step at batch 64 ({64 * 128 / (ms * 128 / 1000):.0f} tokens/s)")
    assert all(len(s.completion_ids) == 128 for s in out)
