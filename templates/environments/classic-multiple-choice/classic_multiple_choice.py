"""Multiple-choice questions as a classic verifiers environment.

Each row has a question, a list of choices and the correct choice (a letter
"A"-"Z", a 0-based index, or the text of the correct choice). The prompt lists
the choices as A), B), ...; the model puts the letter of its choice in
\\boxed{...}. The reward is 1.0 when that letter is the correct one, else 0.0.

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset

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


def given_letter(text: str | None) -> str | None:
    """The letter the model chose: 'B', '(B)', 'B)' or 'B. text' all mean B."""
    if not text:
        return None
    cleaned = text.strip().lstrip("(").strip()
    if not cleaned:
        return None
    head = cleaned[0].upper()
    rest = cleaned[1:2]
    if head in LETTERS and (rest == "" or not rest.isalnum()):
        return head
    return None


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
    missing = [c for c in (QUESTION_COLUMN, CHOICES_COLUMN, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))

    def convert(row):
        choices = as_choices(row[CHOICES_COLUMN])
        listed = "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(choices))
        return {"question": f"{row[QUESTION_COLUMN]}\n\n{listed}",
                "answer": answer_letter(row[ANSWER_COLUMN], choices)}

    return dataset.map(convert, remove_columns=dataset.column_names)


def load_environment(
    dataset_name: str = "allenai/ai2_arc",
    dataset_config: str | None = "ARC-Challenge",
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

    def correct_choice(completion, answer, parser) -> float:
        """1.0 when the boxed letter is the correct choice."""
        return 1.0 if given_letter(parser.parse_answer(completion)) == answer else 0.0

    def boxed_answer(completion, parser) -> float:
        """Format signal (weight 0): did the reply contain a \\boxed{} answer?"""
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = vf.Rubric(funcs=[correct_choice, boxed_answer], weights=[1.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, eval_dataset=eval_dataset, system_prompt=system_prompt,
                            parser=parser, rubric=rubric)
