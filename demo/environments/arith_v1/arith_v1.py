"""Demo v1 taskset (verifiers.v1, 0.3.1+ and 0.4.x): arithmetic word problems in GSM8K's shape.

The same task as ``arith_classic``: the model answers inside ``<answer>...</answer>``; the
reward is an exact numeric match against the number after ``####``, plus a small format reward.
The dataset path comes from the taskset config (``--env.taskset.dataset_path``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import verifiers.v1 as vf

SYSTEM_PROMPT = "Solve the arithmetic word problem. Think step by step, then give only the final number inside <answer>...</answer>."
ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL)


def as_number(text: str | None) -> float | None:
    if text is None:
        return None
    cleaned = text.strip().replace(",", "").lstrip("$").rstrip(".")
    if not re.fullmatch(r"-?\d+(\.\d+)?", cleaned):
        return None
    return float(cleaned)


class ArithData(vf.TaskData):
    answer: str
    """The gold number (the text after `####`)."""


class ArithTask(vf.Task[ArithData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        found = ANSWER_TAG.findall(trace.last_reply)
        guess = as_number(found[-1]) if found else None
        return 1.0 if guess is not None and guess == as_number(self.data.answer) else 0.0

    @vf.reward(weight=0.2)
    async def answer_format(self, trace: vf.Trace) -> float:
        return 1.0 if len(ANSWER_TAG.findall(trace.last_reply)) == 1 else 0.0


class ArithConfig(vf.TasksetConfig):
    dataset_path: str = ".demo-out/arith.jsonl"
    """JSON Lines file with `question` and `answer` (ending `#### N`)."""
    num_examples: int = -1
    """How many rows to load (-1: all)."""


class ArithTaskset(vf.Taskset[ArithTask, ArithConfig]):
    def load(self) -> list[ArithTask]:
        lines = Path(self.config.dataset_path).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        if self.config.num_examples > 0:
            rows = rows[: self.config.num_examples]
        return [
            ArithTask(
                ArithData(
                    prompt=row["question"],
                    system_prompt=SYSTEM_PROMPT,
                    answer=row["answer"].split("####")[-1].strip().replace(",", ""),
                ),
                self.config.task,
            )
            for row in rows
        ]


__all__ = ["ArithTaskset"]
