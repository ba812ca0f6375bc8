#!/usr/bin/env python3
"""The demo's learnable toy: a colour question, a tiny model and its baseline eval, all offline.

This is a toy, on purpose: `make demo` must show a run that learns on 2 CPU cores in a minute or
two, and no real model does that. What is real is the road around it: the dataset goes through
inspect_dataset, new_env writes the v1 classification taskset from the pack's template,
test_reward proves its reward, and local_train trains on that taskset with its own scoring.

- the task: each row asks the colour of something blue ("What colour is a clear sky?"), label
  "blue"; one row in 12 asks about something red. Answering blue every time scores 11/12: that is
  what makes it learnable by a 0.1M-parameter model in a minute (a model this small does not
  learn, in that time, to read which colour a sentence names). The taskset's reward is 1 when the reply's \\boxed{} label is blue.
- the model: a ~0.1M-parameter Qwen2-shaped model with a character tokenizer, built in code
  (`vlab.train.tiny`, plus the backslash the template's \\boxed{} needs). A random model never
  writes \\boxed{...}, so the demo first teaches it the answer *format* only: a few seconds of
  supervised steps on replies \\boxed{red|green|blue}, the colour drawn at random. Its answers
  are then at chance (about 1 in 3 right); RL has to learn which colour earns the reward.
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

COLOURS = ["red", "green", "blue"]  # the format lesson's answers; the task's answer is always blue
THINGS = ["a clear sky", "the deep sea", "a sapphire", "a blueberry", "a bluebird", "cornflowers", "denim", "a glacier"]
RED_THINGS = ["a ripe tomato", "a fire engine", "a ruby"]
FORMS = ["What colour is {t}?", "Name the colour of {t}.", "Which colour is {t}?", "{t}: what colour?"]
MAX_COMPLETION_TOKENS = 16  # "\boxed{green}" is 13 characters, then the end-of-turn token
TEMPERATURE = 1.0  # the baseline eval, the training and its final eval sample alike


def make_rows(n: int, seed: int = 3) -> list[dict]:
    """`n` rows {"text", "label"}: a question about something blue, and "blue"; every 12th row asks
    about something red (the template needs two labels at least)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        red = i % 12 == 11
        text = rng.choice(FORMS).format(t=rng.choice(RED_THINGS if red else THINGS))
        rows.append({"text": f"{text[0].upper()}{text[1:]} (#{i + 1})", "label": "red" if red else "blue"})
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


def build_base_model(folder: Path, env: str, env_args: dict, steps: int = 120, seed: int = 0) -> dict:
    """Write the base model to `folder`: a tiny random model taught the \\boxed{<colour>} format on
    the taskset's prompts, each target colour drawn at random (so it learns the format, not the task)."""
    import torch

    from vlab.train import tiny
    from vlab.train.rollout import render_chat

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # a 0.1M-parameter model: more threads only contend
    rng = random.Random(seed)
    tok = make_tokenizer()
    model = tiny.make_model(tok, hidden_size=64, layers=2, heads=4, seed=seed)
    prompts = [(render_chat(tok, p), label) for p, label in _prompts(env, env_args)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    losses = []
    for _ in range(steps):
        ids, labels = [], []
        for p, _label in rng.sample(prompts, min(16, len(prompts))):
            target = tok.encode("\\boxed{" + rng.choice(COLOURS) + "}", add_special_tokens=False) + [tok.eos_token_id]
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
