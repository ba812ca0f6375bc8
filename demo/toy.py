#!/usr/bin/env python3
"""The demo's learnable toy: a colour question, a tiny model and its baseline eval, all offline.

This is a toy, on purpose: `make demo` must show a run that learns on 2 CPU cores in a minute or
two, and no real model does that. What is real is the road around it: the dataset goes through
inspect_dataset, new_env writes the v1 classification taskset from the pack's template,
test_reward proves its reward, and local_train trains on that taskset with its own scoring.

- the task: each row asks the colour of one of three things ("Q1. What colour is this: fire fire ...?"),
  named eight times (a model this small reads a prompt mostly as the average of its characters); the
  label is the thing's colour (fire red, lawn green, sky blue). The rows cycle through the things, so
  the classes are balanced and answering one colour every time scores 1/3. The taskset's reward (the
  pack's v1-classification template) is 1 when the reply's \\boxed{} label is the row's colour.
- the model: a ~0.1M-parameter Qwen2-shaped model with a character tokenizer, built in code
  (`vlab.train.tiny`, plus the backslash the template's \\boxed{} needs). A random model never
  writes \\boxed{...}, so a warm-up is unavoidable: a few seconds of supervised steps on the
  taskset's prompts whose replies box either the thing the question names (so the model learns to
  read it) or a colour drawn at random (the labels' spelling), drawn whatever the thing is: the warm-up carries nothing
  about which colour is right. Its
  answers are then below chance (about 1 in 6 right: half its replies box the thing); RL has to
  learn which colour each thing is.
- the eval: the base model's rollouts through the taskset's own scoring, written in vf-eval's
  results.jsonl + metadata.json shape (what `vf-eval` would write against an endpoint serving
  this model), for check_reward_distribution.

    python demo/toy.py data OUT.jsonl [N]
    python demo/toy.py base-model FOLDER --env ENV --env-args JSON [--steps N]
    python demo/toy.py eval --model FOLDER --env ENV --env-args JSON --output-dir DIR [-n N] [-r R]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "skills" / "verifiers-lab" / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

COLOURS = ["red", "green", "blue"]  # the three classes, one third of the rows each
# The lookup the policy has to learn: the thing the question names decides the colour (none of them
# starts with its colour's letter, so the answer is not a copy of the input).
THINGS = {"fire": "red", "lawn": "green", "sky": "blue"}
# The thing is named eight times: a 0.1M-parameter model reads a prompt mostly as the average of its
# characters, and one word in the template's long system prompt would be too faint a signal to learn in a
# minute or two; repeated, it is most of the user's message.
FORM = "Q{i}. What colour is this: {t}?"
REPEAT = 8
MAX_COMPLETION_TOKENS = 16  # "\boxed{green}" is 13 characters, then the end-of-turn token
TEMPERATURE = 1.0  # the baseline eval, the training and its final eval sample alike


def make_rows(n: int) -> list[dict]:
    """`n` rows {"text", "label"}: a question about one of THINGS and its colour; the things cycle, so
    each colour is the answer of one row in three (answering one colour every time scores 1/3)."""
    things = list(THINGS)
    rows = []
    for i in range(n):
        thing = things[i % len(things)]
        rows.append({"text": FORM.format(i=i + 1, t=" ".join([thing] * REPEAT)), "label": THINGS[thing]})
    return rows


def write_rows(path: Path, n: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in make_rows(n)), encoding="utf-8")
    return path


def make_tokenizer():
    """`vlab.train.tiny`'s character tokenizer with every printable ASCII character (the template's
    prompt and \\boxed{} use a backslash, which the smoke-test model's alphabet lacks)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from vlab.train import tiny

    chars = list(dict.fromkeys([*tiny.CHARS, *(chr(i) for i in range(32, 127))]))
    tokens = tiny.SPECIALS + [tiny._byte_level(c) for c in chars]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=[], unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<|pad|>",
        eos_token="<|im_end|>",
        bos_token=None,
        unk_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = tiny.CHAT_TEMPLATE
    return fast


def _prompts(env: str, env_args: dict) -> list[list[int]]:
    """The taskset's own prompts (system prompt and all), rendered to token ids."""
    from vlab.train.envsource import VerifiersSource

    source = VerifiersSource.load(env, env_args)
    try:
        rows = [source.row(i) for i in range(source.num_examples)]
        return [(row.prompt, row.answer) for row in rows]
    finally:
        close = getattr(source.env, "close", None)
        if close:
            close()


def _thing(prompt: list[dict]) -> str:
    """The thing the row's question names (its last user message holds one of THINGS)."""
    text = prompt[-1]["content"]
    return next(t for t in THINGS if t in text)


COPY_SHARE = 0.5


def build_base_model(folder: Path, env: str, env_args: dict, steps: int = 120, seed: int = 0) -> dict:
    """Write the base model to `folder`: a tiny random model taught the \\boxed{<colour>} format on
    the taskset's prompts, boxing the thing named or a colour drawn at random (the format and reading, not the task)."""
    import torch

    from vlab.train import tiny
    from vlab.train.rollout import render_chat

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # a 0.1M-parameter model: more threads only contend
    rng = random.Random(seed)
    tok = make_tokenizer()
    model = tiny.make_model(tok, hidden_size=64, layers=2, heads=4, seed=seed)
    prompts = [(render_chat(tok, p), _thing(p)) for p, _label in _prompts(env, env_args)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    losses = []
    for _ in range(steps):
        ids, labels = [], []
        for p, thing in rng.sample(prompts, min(16, len(prompts))):
            # half the replies box the thing the question names (the model learns to read it), half a colour
            # drawn at random whatever the thing is (the labels' spelling): nothing about which colour is right
            word = thing if rng.random() < COPY_SHARE else rng.choice(COLOURS)
            target = tok.encode("\\boxed{" + word + "}", add_special_tokens=False) + [tok.eos_token_id]
            ids.append(p + target)
            labels.append([-100] * len(p) + target)
        width = max(map(len, ids))
        pad = tok.pad_token_id
        input_ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids])
        label_ids = torch.tensor([y + [-100] * (width - len(y)) for y in labels])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
        loss = model(input_ids=input_ids, attention_mask=mask, labels=label_ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return {"model": str(folder), "steps": steps, "losses": [round(x, 3) for x in losses[::5]] + [round(losses[-1], 3)]}


def baseline_eval(model_dir: Path, env: str, env_args: dict, output_dir: Path, n: int, r: int, seed: int = 0) -> dict:
    """The base model's rollouts (n examples x r), scored by the taskset, written like vf-eval's output."""
    import time

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from vlab.core.installed import verifiers_info
    from vlab.train.config import SamplingConfig
    from vlab.train.envsource import VerifiersSource
    from vlab.train.results import write_eval_results
    from vlab.train.rollout import ChatPolicy
    from vlab.train.sampler import HFSampler

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    sampling = SamplingConfig(max_completion_tokens=MAX_COMPLETION_TOKENS, temperature=TEMPERATURE)
    policy = ChatPolicy(HFSampler(model, tok), tok, sampling)
    source = VerifiersSource.load(env, env_args)
    t0 = time.perf_counter()
    with torch.no_grad():
        rollouts = source.run_groups(list(range(min(n, source.num_examples))), r, policy, seed, eval=True)
    folder = write_eval_results(
        output_dir,
        env,
        env_args,
        model_dir.name,
        rollouts,
        r,
        {"max_tokens": MAX_COMPLETION_TOKENS, "temperature": TEMPERATURE, "top_p": 1.0},
        time.perf_counter() - t0,
        verifiers_info().version,
    )
    avg = sum(x.reward for x in rollouts) / max(1, len(rollouts))
    return {"results_dir": str(folder), "avg_reward": avg, "num_rollouts": len(rollouts)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data", help="write the toy dataset")
    d.add_argument("out", type=Path)
    d.add_argument("n", type=int, nargs="?", default=120)
    for name in ("base-model", "eval"):
        p = sub.add_parser(name)
        p.add_argument("--env", required=True)
        p.add_argument("--env-args", type=json.loads, default={})
        if name == "base-model":
            p.add_argument("folder", type=Path)
            p.add_argument("--steps", type=int, default=120)
        else:
            p.add_argument("--model", type=Path, required=True)
            p.add_argument("--output-dir", type=Path, required=True)
            p.add_argument("-n", type=int, default=20)
            p.add_argument("-r", type=int, default=4)
    args = parser.parse_args(argv)
    if args.cmd == "data":
        write_rows(args.out, args.n)
        out = {"rows": args.n, "path": str(args.out)}
    elif args.cmd == "base-model":
        out = build_base_model(args.folder, args.env, args.env_args, args.steps)
    else:
        out = baseline_eval(args.model, args.env, args.env_args, args.output_dir, args.n, args.r)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
