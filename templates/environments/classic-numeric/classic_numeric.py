"""Numeric-answer questions (GSM8K style) as a classic verifiers environment.

The model reasons, then puts its final number in \\boxed{...}. The reward is 1.0
when that number equals the reference answer (compared as exact numbers, so
"1,000", "1000.0" and "$1000" all match 1000), else 0.0. A second, zero-weight
metric records whether a \\boxed{} answer was given at all.

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset

# Column mapping: which dataset columns hold the question and the reference answer.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = (
    "Solve the problem step by step. Then give the final answer as a single number "
    "inside \\boxed{}, for example \\boxed{42}."
)

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?")


def parse_number(text: str | None) -> Fraction | None:
    """The number a short answer states, exactly; None if it states none or several."""
    if text is None:
        return None
    cleaned = text.replace(",", "").replace("$", "").replace("%", "").strip()
    cleaned = cleaned.removeprefix("\\(").removesuffix("\\)").strip()
    found = _NUMBER.findall(cleaned)
    if len(found) != 1:
        return None
    try:
        return Fraction(found[0])
    except (ValueError, ZeroDivisionError):
        return None


def reference_answer(raw) -> str:
    """The final number of a reference answer: GSM8K answers end with '#### N'."""
    text = str(raw)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip().replace(",", "")


def read_dataset(dataset_name: str, dataset_config: str | None, split: str, dataset_path: str | None) -> Dataset:
    """A local file (.jsonl/.json/.csv/.parquet) if dataset_path is given, else a Hub dataset."""
    if dataset_path:
        suffix = Path(dataset_path).suffix.lower()
        builder = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}.get(suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {dataset_path!r})")
        return load_dataset(builder, data_files=str(dataset_path), split="train")
    return load_dataset(dataset_name, dataset_config, split=split)


def to_rows(dataset: Dataset, num_examples: int) -> Dataset:
    missing = [c for c in (QUESTION_COLUMN, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))
    return dataset.map(
        lambda row: {"question": str(row[QUESTION_COLUMN]), "answer": reference_answer(row[ANSWER_COLUMN])},
        remove_columns=dataset.column_names,
    )


def load_environment(
    dataset_name: str = "openai/gsm8k",
    dataset_config: str | None = "main",
    dataset_split: str = "train",
    eval_split: str | None = "test",
    dataset_path: str | None = None,
    eval_path: str | None = None,
    num_examples: int = -1,
    num_eval_examples: int = -1,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.Environment:
    """Build the environment. Pass dataset_path (and eval_path) to read local files instead of the Hub."""
    dataset = to_rows(read_dataset(dataset_name, dataset_config, dataset_split, dataset_path), num_examples)
    eval_dataset = None
    if eval_path or (eval_split and not dataset_path):
        eval_dataset = to_rows(read_dataset(dataset_name, dataset_config, eval_split or dataset_split, eval_path),
                               num_eval_examples)

    parser = vf.Parser(extract_fn=lambda text: vf.extract_boxed_answer(text, strict=True))

    def correct_answer(completion, answer, parser) -> float:
        """1.0 when the boxed number equals the reference number exactly."""
        given = parse_number(parser.parse_answer(completion))
        gold = parse_number(answer)
        return 1.0 if given is not None and gold is not None and given == gold else 0.0

    def boxed_answer(completion, parser) -> float:
        """Format signal (weight 0): did the reply contain a \\boxed{} answer?"""
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = vf.Rubric(funcs=[correct_answer, boxed_answer], weights=[1.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, eval_dataset=eval_dataset, system_prompt=system_prompt,
                            parser=parser, rubric=rubric)
