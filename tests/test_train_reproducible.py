"""local_train's rollouts are reproducible: a rollout's sample depends on the step's seed, the rollout
(row, number in its group) and the turn, never on which other calls shared its sampler batch.

Before, the rollout-loop path (classic environments, v1 tasksets with tools) seeded each sampler batch
with `seed + batch number` and drew every row from torch's one generator: which calls made a batch
depended on timing (how soon the environment's process handed them over), so the same run gave other
samples, rewards and learning curves on a busy machine.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from conftest import SKILL_ROOT, VERIFIERS  # noqa: E402
from train_fixtures import CLASSIC_TOY, TOY_PROMPTS, make_model, make_tokenizer, write_env_package  # noqa: E402

from vlab.env.messages import as_rollout  # noqa: E402
from vlab.train.config import SamplingConfig  # noqa: E402
from vlab.train.decode import pick  # noqa: E402
from vlab.train.envsource import BatchingGenerate, VerifiersSource, rollout_seed  # noqa: E402
from vlab.train.rollout import ChatPolicy, render_chat  # noqa: E402
from vlab.train.sampler import HFSampler, Sample  # noqa: E402

SAMPLING = SamplingConfig(max_completion_tokens=12, temperature=1.0)


@pytest.fixture(scope="module")
def policy():
    torch.set_num_threads(1)
    tok = make_tokenizer()
    return ChatPolicy(HFSampler(make_model(tok), tok), tok, SAMPLING)


def _texts(samples):
    return [s.completion_ids for s in samples]


def test_a_rows_sample_does_not_depend_on_its_batch(policy):
    tok = policy.tokenizer
    prompts = [render_chat(tok, [{"role": "user", "content": p}]) for p in TOY_PROMPTS]
    seeds = [rollout_seed(7, (i, 0), 0) for i in range(len(prompts))]
    whole = policy.sampler.generate(prompts, SAMPLING, seeds=seeds)
    # the same rows, in other batches and another order (other padding widths, other compaction)
    order = [5, 2, 7, 0]
    part = policy.sampler.generate([prompts[i] for i in order], SAMPLING, seeds=[seeds[i] for i in order])
    rest = [i for i in range(len(prompts)) if i not in order]
    part2 = policy.sampler.generate([prompts[i] for i in rest], SAMPLING, seeds=[seeds[i] for i in rest])
    alone = dict(zip(order, part)) | dict(zip(rest, part2))
    assert _texts(whole) == _texts([alone[i] for i in range(len(prompts))])
    for i, s in enumerate(whole):
        assert s.logprobs == pytest.approx(alone[i].logprobs, abs=1e-5)
    # different seeds give different samples (the rows of a group must differ)
    other = policy.sampler.generate(prompts, SAMPLING, seeds=[s + 1 for s in seeds])
    assert _texts(other) != _texts(whole)


def test_inverse_cdf_draws_follow_the_distribution_and_its_filters():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])).repeat(4000, 1)
    u = torch.rand(4000, generator=torch.Generator().manual_seed(0))
    tok, lp = pick(logits, 1.0, uniform=u)
    freq = torch.bincount(tok, minlength=4).float() / 4000
    assert torch.allclose(freq, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.03), freq
    assert torch.allclose(lp, torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))[tok])
    tok2, _ = pick(logits, 1.0, top_k=2, uniform=u)  # filtered tokens are never drawn
    assert set(tok2.tolist()) == {0, 1}
    tok3, _ = pick(logits, 1.0, uniform=torch.tensor([0.0, 0.999999] * 2000))  # the edges stay in range
    assert set(tok3.tolist()) == {0, 3}


class _Recorder:
    """A policy that records the seed each conversation was sampled with and answers with it."""

    def __init__(self):
        self.batches: list[list[int]] = []

    def complete_batch(self, conversations, seed=None, sampling=None, tools=None, seeds=None):
        self.batches.append(list(seeds))
        return [Sample([1], [2], [0.0], "stop", text=str(s)) for s in seeds]


def test_batching_generate_seeds_each_call_by_its_rollout_not_its_batch():
    async def run(split: bool):
        rec = _Recorder()
        gen = BatchingGenerate(rec, seed=11)

        async def rollout(row, j):
            if split and (row + j) % 2:
                await asyncio.sleep(0.01)  # arrives after the first batch was sampled
            first = await gen([{"role": "user", "content": "same prompt"}])
            second = await gen([{"role": "user", "content": "same prompt"}, {"role": "assistant", "content": "x"}])
            return first.text, second.text

        keyed = [as_rollout((row, j), rollout(row, j)) for row in (3, 4) for j in range(3)]
        return await asyncio.gather(*keyed), rec.batches

    together, batches1 = asyncio.run(run(False))
    split, batches2 = asyncio.run(run(True))
    assert len(batches2) > len(batches1)  # the calls did reach the sampler in other batches
    assert together == split
    expect = [(str(rollout_seed(11, (r, j), 0)), str(rollout_seed(11, (r, j), 1))) for r in (3, 4) for j in range(3)]
    assert together == expect
    assert len({t for pair in together for t in pair}) == 12  # every rollout and turn its own seed


def test_calls_without_a_rollout_key_are_seeded_by_their_messages():
    async def run(order):
        rec = _Recorder()
        gen = BatchingGenerate(rec, seed=2)
        replies = await asyncio.gather(*(gen([{"role": "user", "content": m}]) for m in order))
        return {m: r.text for m, r in zip(order, replies)}

    a = asyncio.run(run(["p", "q", "r"]))
    b = asyncio.run(run(["r", "p", "q"]))
    assert a == b and len(set(a.values())) == 3


@pytest.mark.classic
def test_the_rollout_key_reaches_the_trainer_through_the_environments_process(tmp_path):
    """Classic rollouts run in the environment's worker process; each call comes back with its rollout."""
    if not VERIFIERS.classic:
        pytest.skip("a classic environment")
    env = write_env_package(tmp_path, "toy", CLASSIC_TOY)
    source = VerifiersSource.load(str(env), {})
    try:
        assert source.use_rollout_loop
        rec = _Recorder()
        rollouts = source.run_groups([5, 1, 9], 4, rec, seed=13)
    finally:
        source.env.close()
    # every rollout sampled with its own seed, and its completion (the seed, as text) paired with it
    got = [(r.example_id, r.completion[-1]["content"]) for r in rollouts]
    assert got == [(i, str(rollout_seed(13, (i, j), 0))) for i in (5, 1, 9) for j in range(4)]


@pytest.mark.classic
@pytest.mark.slow
def test_two_identical_cpu_runs_give_identical_rewards(tmp_path):
    """The same config twice, at the same time (so the machine is busy and batches split differently)."""
    if not VERIFIERS.classic:
        pytest.skip("the classic environment's rollout loop (the timing-dependent path)")
    from vlab.train.tiny import save_tiny_model

    model = save_tiny_model(tmp_path / "tiny-qwen2")
    env = write_env_package(tmp_path / "envs", "toy", CLASSIC_TOY)
    procs = []
    for name in ("a", "b"):
        argv = [str(SKILL_ROOT / "scripts" / "local_train.py"), "--env", str(env), "--model", str(model)]
        argv += ["--max-steps", "4", "--output-dir", str(tmp_path / name), "--no-progress", "--json"]
        argv += [
            "--set",
            "batch_size=32",
            "--set",
            "group_size=8",
            "--set",
            "optim.lr=1e-2",
            "--set",
            "eval.final=false",
        ]
        procs.append(
            subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode in (0, 1), err[-2000:]
    runs = []
    for name in ("a", "b"):
        lines = (tmp_path / name / "logs" / "metrics.jsonl").read_text().splitlines()
        runs.append([json.loads(x) for x in lines])
    assert len(runs[0]) == len(runs[1]) == 4
    assert [m["reward_mean"] for m in runs[0]] == [m["reward_mean"] for m in runs[1]]
    assert runs[0][-1]["reward_mean"] > runs[0][0]["reward_mean"]  # it trained, so the steps did differ
