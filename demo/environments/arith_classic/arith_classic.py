"""Demo classic environment (verifiers 0.3.x): arithmetic word problems in GSM8K's shape.

The model answers inside ``<answer>...</answer>``; the reward is an exact numeric match of
the parsed answer against the number after ``####`` in the row's ``answer``, plus a small
format reward from the parser itself.
"""

from __future__ import annotations

import re

import verifiers as vf
from datasets import load_dataset

SYSTEM_PROMPT = """Solve the arithmetic word problem. Think step by step, \
then give only the final number inside <answer>...</answer>."""


def gold_number(answer: str) -> str:
    """The number after `####` in a GSM8K-style answer (the whole text when there is none)."""
    return answer.split("####")[-1].strip().replace(",", "")


def as_number(text: str | None) -> float | None:
    if text is None:
        return None
    cleaned = text.strip().replace(",", "").lstrip("$").rstrip(".")
    if not re.fullmatch(r"-?\d+(\.\d+)?", cleaned):
        return None
    return float(cleaned)


def load_environment(dataset_path: str = ".demo-out/arith.jsonl", num_examples: int = -1, **kwargs) -> vf.Environment:
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))
    dataset = dataset.map(lambda row: {"answer": gold_number(row["answer"])})

    parser = vf.XMLParser(["answer"], answer_field="answer")

    def correct_answer(completion, answer, parser) -> float:
        guess = as_number(parser.parse_answer(completion))
        target = as_number(answer)
        return 1.0 if guess is not None and target is not None and guess == target else 0.0

    rubric = vf.Rubric(funcs=[correct_answer, parser.get_format_reward_func()], weights=[1.0, 0.2], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=SYSTEM_PROMPT, parser=parser, rubric=rubric, **kwargs)
