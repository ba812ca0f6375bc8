"""Multiple-choice questions as a verifiers v1 taskset.

Each row has a question, a list of choices and the correct choice (a letter
"A"-"Z", a 0-based index, or the text of the correct choice). The prompt lists
the choices as A), B), ...; the model puts the letter of its choice in
\\boxed{...}. The reward is 1.0 when that letter is the correct one, else 0.0.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: question text, the list of choices, the correct choice.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
CHOICES_COLUMN = "choices"
ANSWER_COLUMN = "answer"

LETTERS = string.ascii_uppercase
SYSTEM_PROMPT = (
    "Answer the multiple-choice question. Think it through, then give only the letter "
    "of the correct choice inside \\boxed{}, for example \\boxed{B}."
)


def as_choices(raw) -> list[str]:
    """Choices as a list of strings (a list, or a JSON-encoded list in a CSV cell)."""
    if isinstance(raw, str):
        raw = json.loads(raw)
    if isinstance(raw, dict) and "text" in raw:  # {"label": [...], "text": [...]} layouts
        raw = raw["text"]
    choices = [str(c) for c in raw]
    if not 2 <= len(choices) <= len(LETTERS):
        raise ValueError(f"a question needs 2-{len(LETTERS)} choices, got {len(choices)}")
    return choices


def answer_letter(raw, choices: list[str]) -> str:
    """The correct choice's letter, from a letter, a 0-based index or the choice text."""
    if isinstance(raw, bool):
        raise ValueError(f"answer {raw!r} is not a letter, an index or a choice")
    if isinstance(raw, int):
        index = raw
    else:
        text = str(raw).strip()
        if len(text) == 1 and text.upper() in LETTERS[: len(choices)]:
            return text.upper()
        if text.isdigit():
            index = int(text)
        elif text in choices:
            index = choices.index(text)
        else:
            raise ValueError(f"answer {raw!r} is not a letter, an index or one of the choices")
    if not 0 <= index < len(choices):
        raise ValueError(f"answer index {index} is out of range for {len(choices)} choices")
    return LETTERS[index]


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


def given_letter(text: str | None) -> str | None:
    """The letter the model chose: 'B', '(B)', 'B)' or 'B. text' all mean B."""
    if not text:
        return None
    cleaned = text.strip().lstrip("(").strip()
    if not cleaned:
        return None
    head, rest = cleaned[0].upper(), cleaned[1:2]
    if head in LETTERS and (rest == "" or not rest.isalnum()):
        return head
    return None


def read_rows(config: V1MultipleChoiceConfig) -> Iterator[dict]:
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
    missing = [c for c in (QUESTION_COLUMN, CHOICES_COLUMN, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1MultipleChoiceData(vf.TaskData):
    choices: list[str]
    answer: str
    """The letter of the correct choice."""


class V1MultipleChoiceTask(vf.Task[V1MultipleChoiceData]):
    @vf.reward(weight=1.0)
    async def correct_choice(self, trace: vf.Trace) -> float:
        """1.0 when the boxed letter is the correct choice."""
        return 1.0 if given_letter(last_boxed(trace.last_reply)) == self.data.answer else 0.0

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if last_boxed(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The correct letter must name one of the listed choices."""
        return self.data.answer in LETTERS[: len(self.data.choices)]


class V1MultipleChoiceConfig(vf.TasksetConfig):
    dataset_name: str = "allenai/ai2_arc"
    dataset_config: str | None = "ARC-Challenge"
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A local .jsonl/.json/.csv/.parquet file; overrides dataset_name."""
    num_examples: int = -1


class V1MultipleChoiceTaskset(vf.Taskset[V1MultipleChoiceTask, V1MultipleChoiceConfig]):
    def load(self) -> Iterator[V1MultipleChoiceTask]:
        for i, row in enumerate(read_rows(self.config)):
            choices = as_choices(row[CHOICES_COLUMN])
            listed = "\n".join(f"{LETTERS[k]}) {c}" for k, c in enumerate(choices))
            yield V1MultipleChoiceTask(
                V1MultipleChoiceData(
                    id=str(row.get("id", i)),
                    prompt=f"{row[QUESTION_COLUMN]}\n\n{listed}",
                    system_prompt=SYSTEM_PROMPT,
                    choices=choices,
                    answer=answer_letter(row[ANSWER_COLUMN], choices),
                ),
                self.config.task,
            )


__all__ = ["V1MultipleChoiceTaskset"]
