"""Numeric-answer questions (GSM8K style) as a verifiers v1 taskset.

The model reasons, then puts its final number in \\boxed{...}. The reward is 1.0
when that number equals the reference answer (compared as exact numbers, so
"1,000", "1000.0" and "$1000" all match 1000), else 0.0. A metric records
whether a \\boxed{} answer was given at all. `validate` checks every reference
answer is a number, so `vf-validate` catches broken rows before any model runs.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import verifiers.v1 as vf

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
    found = _NUMBER.findall(cleaned)
    if len(found) != 1:
        return None
    try:
        return Fraction(found[0])
    except (ValueError, ZeroDivisionError):
        return None


def last_boxed(text: str) -> str | None:
    """The content of the last \\boxed{...} in text (nested braces allowed), or None."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 1, start + len("\\boxed{")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j]
    return None


def reference_answer(raw) -> str:
    """The final number of a reference answer: GSM8K answers end with '#### N'."""
    text = str(raw)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip().replace(",", "")


def read_rows(config: V1NumericConfig) -> Iterator[dict]:
    """Rows of a local file (.jsonl/.json/.csv/.parquet) if dataset_path is set, else of a Hub dataset."""
    from datasets import load_dataset  # only needed when tasks are loaded

    if config.dataset_path:
        suffix = Path(config.dataset_path).suffix.lower()
        builder = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}.get(suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {config.dataset_path!r})")
        dataset = load_dataset(builder, data_files=config.dataset_path, split="train")
    else:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    missing = [c for c in (QUESTION_COLUMN, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1NumericData(vf.TaskData):
    answer: str
    """The reference answer: a single number."""


class V1NumericTask(vf.Task[V1NumericData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        """1.0 when the boxed number equals the reference number exactly."""
        given = parse_number(last_boxed(trace.last_reply))
        gold = parse_number(self.data.answer)
        return 1.0 if given is not None and gold is not None and given == gold else 0.0

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if last_boxed(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The reference answer must be a number, or no reply could ever score."""
        return parse_number(self.data.answer) is not None


class V1NumericConfig(vf.TasksetConfig):
    dataset_name: str = "openai/gsm8k"
    dataset_config: str | None = "main"
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A local .jsonl/.json/.csv/.parquet file; overrides dataset_name."""
    num_examples: int = -1


class V1NumericTaskset(vf.Taskset[V1NumericTask, V1NumericConfig]):
    def load(self) -> Iterator[V1NumericTask]:
        for i, row in enumerate(read_rows(self.config)):
            yield V1NumericTask(
                V1NumericData(
                    id=str(row.get("id", i)),
                    prompt=str(row[QUESTION_COLUMN]),
                    system_prompt=SYSTEM_PROMPT,
                    answer=reference_answer(row[ANSWER_COLUMN]),
                ),
                self.config.task,
            )


__all__ = ["V1NumericTaskset"]
