"""local_train's packed micro-batches: sequences laid end to end in a row, position ids restarting at
each one, no padding but a row's tail; the same loss and gradients as padded rows, and padded rows
for a model whose attention reads across packed sequences (CPU, offline)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from train_fixtures import TOY_PROMPTS, make_model, make_tokenizer, share_of_a  # noqa: E402

from vlab.train.config import SamplingConfig, load_config  # noqa: E402
from vlab.train.model import packs_sequences  # noqa: E402
from vlab.train.rollout import (  # noqa: E402
    FunctionSource,
    Sequence,
    collate_packed,
    micro_batches,
    packed_micro_batches,
    render_chat,
)
from vlab.train.sampler import HFSampler  # noqa: E402
from vlab.train.trainer import Trainer  # noqa: E402

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

torch.set_num_threads(1)


def test_packed_rows_hold_every_sequence_once_within_the_budget_and_waste_less_than_padding():
    lengths = [40, 7, 33, 12, 12, 3, 25, 38, 9, 20, 31, 5]
    for max_tokens, max_seqs in ((200, 0), (80, 0), (1, 0), (10_000, 3), (10_000, 0)):
        batches = packed_micro_batches(lengths, max_tokens, max_seqs)
        rows = [row for batch in batches for row in batch]
        assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
        widths = [max(lengths[i] for row in batch for i in row) for batch in batches]
        assert widths == sorted(widths, reverse=True)  # as wide as the longest left: no wider than padded rows
        for batch, width in zip(batches, widths):
            assert all(sum(lengths[i] for i in row) <= width for row in batch)
            assert len(batch) == 1 or len(batch) * width <= max_tokens
            assert not max_seqs or sum(map(len, batch)) <= max_seqs

    def slots(batches):
        return sum(len(b) * max(lengths[i] for row in b for i in row) for b in batches)

    for max_tokens in (80, 200, 10_000):
        padded = [[[i] for i in g] for g in micro_batches(lengths, max_tokens)]  # padded: a row a sequence
        assert slots(packed_micro_batches(lengths, max_tokens)) < slots(padded), max_tokens
    assert packed_micro_batches([], 100) == []


def test_a_packed_row_restarts_positions_and_never_targets_a_sequences_first_token():
    seqs = [
        Sequence([5, 6, 7], [0, 1, 1], [0.0, -1.0, -2.0]),
        Sequence([8, 9], [1, 1], [-3.0, -4.0]),  # a first token marked as the model's: still no target
        Sequence([10, 11, 12, 13], [0, 0, 1, 1], [0.0, 0.0, -5.0, -6.0]),
    ]
    batch = collate_packed(seqs, [1.0, 2.0, 3.0], [[0, 1], [2]], pad_id=0, device=torch.device("cpu"))
    assert batch.input_ids.tolist() == [[5, 6, 7, 8, 9], [10, 11, 12, 13, 0]]
    assert batch.position_ids.tolist() == [[0, 1, 2, 0, 1], [0, 1, 2, 3, 0]]  # the tail: a segment of its own
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]]
    # aligned with the targets input_ids[:, 1:]
    assert batch.loss_mask.tolist() == [[1, 1, 0, 1], [0, 1, 1, 0]]
    assert batch.sampler_logprobs.tolist() == [[-1.0, -2.0, -3.0, -4.0], [0.0, -5.0, -6.0, 0.0]]
    assert batch.advantages.tolist() == [[1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 3.0, 0.0]]


def _sequences(tok):
    """The toy prompts' sampled replies, cut to different lengths, ratios away from 1."""
    prompts = [render_chat(tok, p) for p in TOY_PROMPTS]
    samples = HFSampler(make_model(tok), tok).generate(prompts, SamplingConfig(max_completion_tokens=12), seed=0)
    seqs = []
    for k, s in enumerate(samples):
        prompt, done = s.prompt_ids[-(3 + 4 * k) :], s.completion_ids[: 2 + k]
        lps = [lp - 0.1 for lp in s.logprobs[: len(done)]]
        seqs.append(Sequence(prompt + done, [0] * len(prompt) + [1] * len(done), [0.0] * len(prompt) + lps))
    assert len({len(s.input_ids) for s in seqs}) > 4
    return seqs


class _KeepGrads:
    """An optimizer that leaves the gradients where they are, to compare them."""

    def step(self):
        pass

    def zero_grad(self, set_to_none=True):
        pass


def _update(tmp_path, tok, seqs, pack, tokens, name):
    model = make_model(tok)
    cfg = load_config(
        None,
        [
            (["micro_batch_tokens"], tokens),
            (["model", "fused_lm_head_token_chunk_size"], 7),
            (["output_dir"], str(tmp_path / name)),
            (["loss", "kl_tau"], 0.0),
        ],
    )
    source = FunctionSource(TOY_PROMPTS, lambda t, c: share_of_a(t))
    trainer = Trainer(cfg, model, tok, source, torch.device("cpu"), pack_sequences=pack)
    trainer.optimizer = _KeepGrads()
    advs = [0.5, -0.5, 1.0, -1.0, 0.25, -0.25, 0.75, -0.75]
    stats = trainer._update(seqs, advs)
    return {n: p.grad.clone() for n, p in model.named_parameters()}, stats


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)`")
def test_packed_rows_give_the_padded_rows_loss_and_gradients(tmp_path):
    tok = make_tokenizer()
    seqs = _sequences(tok)
    padded, s_padded = _update(tmp_path, tok, seqs, False, 10_000, "padded")
    for tokens in (10_000, 60):  # one micro-batch; then a row or two each
        packed, s_packed = _update(tmp_path, tok, seqs, True, tokens, f"packed{tokens}")
        assert s_packed["loss"] == pytest.approx(s_padded["loss"], abs=1e-6)
        assert s_packed["train_tokens"] == s_padded["train_tokens"]
        assert s_packed["slots"] < s_padded["slots"]  # less padding
        for name, g in padded.items():
            assert torch.allclose(g, packed[name], atol=1e-6, rtol=1e-4), (tokens, name)
    assert s_packed["micro_batches"] > 1


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)`")
def test_a_model_whose_attention_reads_across_packed_rows_trains_on_padded_rows(tmp_path, monkeypatch):
    """transformers before 5 (sdpa or eager) took position ids that restart as plain positions and
    attended across the sequences of a row: packed, every sequence after the first would train on
    logprobs conditioned on another rollout. The check sees it and the run pads, and says so."""
    import transformers.masking_utils as masking

    tok = make_tokenizer()
    assert packs_sequences(make_model(tok))
    assert packs_sequences(make_model(tok), lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    assert packs_sequences(make_model(tok).to(torch.bfloat16))

    seqs = _sequences(tok)
    padded, _ = _update(tmp_path, tok, seqs, False, 10_000, "padded")
    monkeypatch.setattr(masking, "find_packed_sequence_indices", lambda position_ids: None)
    assert not packs_sequences(make_model(tok))
    forced, _ = _update(tmp_path, tok, seqs, True, 10_000, "forced")
    assert any(not torch.allclose(g, forced[n], atol=1e-4, rtol=1e-3) for n, g in padded.items())  # the harm

    cfg = load_config(None, [(["output_dir"], str(tmp_path / "run")), (["batch_size"], 8), (["group_size"], 4)])
    said = []
    source = FunctionSource(TOY_PROMPTS, lambda t, c: share_of_a(t), env_id="toy")
    trainer = Trainer(cfg, make_model(tok), tok, source, torch.device("cpu"), log=said.append)
    m = trainer.train_step()
    assert m["packed_sequences"] is False and m["padding_frac"] >= 0
    assert said == ["training micro-batches padded: this model's attention reads across packed sequences"]
    monkeypatch.undo()
    trainer = Trainer(cfg, make_model(tok), tok, source, torch.device("cpu"), log=said.append)
    assert trainer.train_step()["packed_sequences"] is True
    assert said[-1] == "training micro-batches: sequences packed end to end, no padding"
