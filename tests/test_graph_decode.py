"""The CUDA-graph decode loop's logic on CPU (vlab.train.graphs, issue 39): the same step it replays on a GPU,
called instead of replayed. Its tokens and logprobs are the eager loop's, rows that finish leave for a smaller
bucket, the buffers it owns serve later calls, and its weight copies give autocast's numbers. The capture
itself is tested on a GPU (tests/test_train_gpu.py, `pytest -m gpu`)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from test_train_memory import _diverse_model  # noqa: E402
from train_fixtures import TOY_PROMPTS, make_tokenizer  # noqa: E402

from vlab.train.decode import decode  # noqa: E402
from vlab.train.graphs import BUCKETS, GraphDecoder, bucket_for, linear_weight_copies  # noqa: E402
from vlab.train.model import lm_parts  # noqa: E402
from vlab.train.rollout import render_chat  # noqa: E402

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

torch.set_num_threads(1)

PROMPTS = TOY_PROMPTS + ["a", "why?", "count to ten", "x = 1 + 2"]


@pytest.fixture(scope="module")
def parts():
    tok = make_tokenizer()
    model = _diverse_model(tok).eval()
    decoder, head = lm_parts(model)
    return tok, model, decoder, head


def _kw(tok, **over):
    return {"pad_id": tok.pad_token_id, "eos_ids": [tok.eos_token_id], "max_new_tokens": 24, **over}


def test_buckets_hold_every_batch_and_grow_past_the_table():
    assert [bucket_for(n) for n in (1, 3, 8, 9, 33, 64, 65)] == [1, 4, 8, 12, 48, 64, 96]
    top = BUCKETS[-1]
    assert bucket_for(top + 1) == 2 * top and all(bucket_for(b) == b for b in BUCKETS)


def test_greedy_tokens_and_logprobs_are_the_eager_loops_and_finished_rows_leave_the_batch(parts):
    tok, _, decoder, head = parts
    prompts = [render_chat(tok, p) for p in PROMPTS]
    loop = GraphDecoder(decoder, head)
    assert not loop.capture  # CPU: the step is called, not replayed
    kw = _kw(tok, max_new_tokens=40)  # 4 of the 12 rows stop by step 18: the other 8 then fit bucket 8
    tokens, logps = loop(prompts, greedy=True, **kw)
    ref_tokens, ref_logps = decode(decoder, head, prompts, greedy=True, **kw)
    assert torch.equal(tokens, ref_tokens)
    assert torch.allclose(logps, ref_logps, atol=1e-5)
    stopped = (tokens == tok.eos_token_id).any(dim=1)
    assert 0 < int(stopped.sum()) < len(prompts)  # rows finished apart
    # the finished rows left: fewer row-steps than every step at the first bucket
    assert loop.stats["compactions"] >= 1
    assert loop.stats["row_steps"] < loop.stats["steps"] * bucket_for(len(prompts))


def test_seeded_rows_sample_the_eager_loops_tokens_whatever_shares_their_batch(parts):
    tok, _, decoder, head = parts
    prompts = [render_chat(tok, p) for p in PROMPTS]
    seeds = [1000 + i for i in range(len(prompts))]
    kw = _kw(tok, temperature=0.9, top_k=30, top_p=0.95)
    loop = GraphDecoder(decoder, head)
    tokens, logps = loop(prompts, row_seeds=seeds, **kw)
    ref_tokens, ref_logps = decode(decoder, head, prompts, row_seeds=seeds, **kw)
    assert torch.equal(tokens, ref_tokens) and torch.allclose(logps, ref_logps, atol=1e-5)
    # the same buffers serve a later, smaller call: a row alone gets its tokens from the batch
    rows, capacity = loop.rows, loop.capacity
    alone, _ = loop(prompts[3:4], row_seeds=seeds[3:4], **kw)
    assert (loop.rows, loop.capacity) == (rows, capacity)
    assert torch.equal(alone[0], tokens[3])


def test_a_longer_call_grows_the_buffers_and_keeps_the_tokens(parts):
    tok, _, decoder, head = parts
    loop = GraphDecoder(decoder, head)
    short = [render_chat(tok, p) for p in PROMPTS[:3]]
    loop(short, greedy=True, **_kw(tok, max_new_tokens=4))
    small = (loop.rows, loop.capacity)
    prompts = [render_chat(tok, p) for p in PROMPTS]
    tokens, _ = loop(prompts, greedy=True, **_kw(tok, max_new_tokens=80))
    assert loop.rows > small[0] and loop.capacity > small[1] and loop.capacity >= 80
    ref, _ = decode(decoder, head, prompts, greedy=True, **_kw(tok, max_new_tokens=80))
    assert torch.equal(tokens, ref)


def test_weight_copies_give_autocasts_numbers(parts):
    """Float32 master weights under bf16 autocast: the loop reads bf16 copies of the Linear weights, refreshed
    each call, and gets what autocast's own casts give (the trainer's numbers)."""
    tok, model, decoder, head = parts
    assert linear_weight_copies(decoder, torch.float32) == []
    names = [n for n, _ in linear_weight_copies(decoder, torch.bfloat16)]
    # every Linear's weight, and its bias where it has one (Qwen2's q, k, v): autocast casts both
    assert {n.rsplit(".", 1)[0] for n in names} == {
        n for n, m in decoder.named_modules() if isinstance(m, torch.nn.Linear)
    }
    assert any(n.endswith(".bias") for n in names)
    prompts = [render_chat(tok, p) for p in PROMPTS[:6]]
    loop = GraphDecoder(decoder, head)
    casting = GraphDecoder(decoder, head)  # the same loop letting autocast cast the float32 weights
    casting._refresh_weights = lambda: None
    kw = _kw(tok, max_new_tokens=12)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tokens, logps = loop(prompts, greedy=True, **kw)
        cast_tokens, cast_logps = casting(prompts, greedy=True, **kw)
        ref_tokens, ref_logps = decode(decoder, head, prompts, greedy=True, **kw)
    assert loop.copies and all(c.dtype == torch.bfloat16 for c in loop.copies.values()) and not casting.copies
    assert torch.equal(tokens, cast_tokens) and torch.equal(logps, cast_logps)  # bit for bit
    # the eager loop's shorter cache sums in another order: bf16's tolerance (the runner's)
    assert torch.equal(tokens, ref_tokens) and torch.allclose(logps, ref_logps, atol=0.05)
    # a weight the trainer moved reaches the next call
    name, weight = linear_weight_copies(decoder, torch.bfloat16)[0]
    saved = weight.detach().clone()
    try:
        with torch.no_grad():
            weight.mul_(-1.0)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loop(prompts, greedy=True, **_kw(tok, max_new_tokens=2))
        assert torch.equal(loop.copies[name], weight.detach().to(torch.bfloat16))
    finally:
        with torch.no_grad():
            weight.copy_(saved)


@pytest.mark.parametrize("vocab", [91, 151936])
def test_the_two_level_inverse_cdf_picks_the_full_cumsums_token(vocab):
    """Block sums, then a cumulative sum inside one block: the token a float64 cumulative sum over the whole
    vocabulary gives, and never one the filters left without mass."""
    from vlab.train.decode import inverse_cdf

    g = torch.Generator().manual_seed(vocab)
    rows = 512 if vocab < 1000 else 32
    logits = torch.randn((rows, vocab), generator=g) * 3
    kth = torch.topk(logits, 20, dim=-1).values[:, -1:]
    probs = logits.masked_fill(logits < kth, float("-inf")).softmax(dim=-1)  # a top-k filter: most tokens 0
    uniform = torch.rand(rows, generator=g)
    tok = inverse_cdf(probs, uniform)
    cdf = probs.double().cumsum(dim=-1)
    ref = torch.searchsorted(cdf, (uniform.double() * cdf[:, -1])[:, None], right=True).squeeze(1)
    assert torch.equal(tok, ref.clamp(max=vocab - 1))
    assert bool((probs.gather(1, tok[:, None]) > 0).all())
