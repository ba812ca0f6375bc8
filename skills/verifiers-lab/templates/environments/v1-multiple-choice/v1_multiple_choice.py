"""Multiple-choice questions as a verifiers v1 taskset.

Each row has a question, its choices (a list column, or one column per choice) and the
correct choice: a letter "A"-"Z", an index into the choices (0-based, or 1-based when
the constant INDEX_BASE is 1) or the text of the correct choice. The prompt lists the choices as A), B),
...; choices that carry their own labels ("A) 21") are shown with one label, never "A) A) 21".
The model puts its choice in \\boxed{...}; "B", "(B)", "B)", "\\text{B}", "\\textbf{B}" and the
text of option B all name B. The reward is 1.0 when that is the correct choice, else 0.0.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: question text, the choices, the correct choice.
# QUESTION_COLUMN may be a list of columns (joined in order); CHOICES_COLUMN a list of
# columns that hold one choice each (e.g. ["A", "B", "C", "D"]).
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
CHOICES_COLUMN = "choices"
ANSWER_COLUMN = "answer"
# What a number in the answer column counts from: 0 (the first choice is 0) or 1.
INDEX_BASE = 0

LETTERS = string.ascii_uppercase
SYSTEM_PROMPT = (
    "Answer the multiple-choice question. Think it through, then give only the letter "
    "of the correct choice inside \\boxed{}, for example \\boxed{B}."
)
_OWN_LABEL = r"^\s*(?:\(\s*{letter}\s*\)|{letter}\s*[).:])\s*"
_WRAPPED = re.compile(r"^\\(?:text|textbf|textrm|mathrm|mathbf|mbox)\{(.*)\}$", re.S)


def as_choices(raw) -> list[str]:
    """Choices as a list of strings (a list, a JSON-encoded list in a CSV cell, or {"text": [...]})."""
    if isinstance(raw, str):
        raw = json.loads(raw)
    if isinstance(raw, dict) and "text" in raw:  # {"label": [...], "text": [...]} layouts
        raw = raw["text"]
    choices = [str(c) for c in raw if c is not None and str(c).strip()]
    if not 2 <= len(choices) <= len(LETTERS):
        raise ValueError(f"a question needs 2-{len(LETTERS)} choices, got {len(choices)}")
    return choices


def row_choices(row: dict) -> list[str]:
    """The row's choices: one list column, or one column per choice."""
    if isinstance(CHOICES_COLUMN, str):
        return as_choices(row[CHOICES_COLUMN])
    return as_choices([row[c] for c in CHOICES_COLUMN])


def own_labels(choices: list[str]) -> bool:
    """Every choice already starts with its own label: 'A) 21', '(B) 22', 'C. 23'."""
    return all(re.match(_OWN_LABEL.format(letter=LETTERS[i]), c) for i, c in enumerate(choices))


def option_texts(choices: list[str]) -> list[str]:
    """The choices without labels they carry themselves."""
    if not own_labels(choices):
        return [c.strip() for c in choices]
    return [re.sub(_OWN_LABEL.format(letter=LETTERS[i]), "", c, count=1).strip() for i, c in enumerate(choices)]


def listed(choices: list[str]) -> str:
    """The options as the prompt shows them: 'A) text' per line, each labelled once."""
    return "\n".join(f"{LETTERS[i]}) {text}" for i, text in enumerate(option_texts(choices)))


def answer_letter(raw, choices: list[str]) -> str:
    """The correct choice's letter, from a letter, an index (counted from INDEX_BASE) or the choice text."""
    if isinstance(raw, bool):
        raise ValueError(f"answer {raw!r} is not a letter, an index or a choice")
    texts = option_texts(choices)
    if isinstance(raw, int):
        index = raw - INDEX_BASE
    else:
        text = str(raw).strip()
        if len(text) == 1 and text.upper() in LETTERS[: len(choices)]:
            return text.upper()
        if text.isdigit():
            index = int(text) - INDEX_BASE
        elif text in choices or text in texts:
            index = choices.index(text) if text in choices else texts.index(text)
        else:
            raise ValueError(f"answer {raw!r} is not a letter, an index or one of the choices")
    if not 0 <= index < len(choices):
        raise ValueError(f"answer index {index + INDEX_BASE} is out of range for {len(choices)} choices")
    return LETTERS[index]


def given_letter(text: str | None, choices: list[str]) -> str | None:
    """The choice the model named: 'B', '(B)', 'B)', 'B. text', '\\text{B}', '\\textbf{B}' or option B's text."""
    if not text:
        return None
    cleaned = text.strip()
    while (m := _WRAPPED.match(cleaned)) is not None:
        cleaned = m.group(1).strip()
    texts = [t.lower() for t in option_texts(choices)]
    if cleaned.lower() in texts and not (len(cleaned) == 1 and cleaned.upper() in LETTERS):
        return LETTERS[texts.index(cleaned.lower())]
    cleaned = cleaned.lstrip("(").strip()
    if not cleaned:
        return None
    head, rest = cleaned[0].upper(), cleaned[1:2]
    if head in LETTERS[: len(choices)] and (rest == "" or not rest.isalnum()):
        return head
    return None


# The dataset's own id column, when it has one, is the task id (else the row's position).
ID_COLUMNS = ("id", "ID", "task_id", "Id", "uid")


def own_id(row: dict) -> str | None:
    """The row's own id: the first of ID_COLUMNS it has with a value; None when it has none."""
    return next((str(row[c]) for c in ID_COLUMNS if row.get(c) not in (None, "")), None)


def prompt_text(row: dict) -> str:
    """The question: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


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


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_multiple_choice_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_multiple_choice_data")
NO_DATASET = (
    "no dataset named: set dataset_path (a .jsonl/.json/.csv/.parquet file; a relative path is also looked up "
    "in the package's data/ folder) or dataset_name (a Hub dataset). This environment never picks one for you."
)
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def data_file(path: str) -> str:
    """A dataset file: the path as given (absolute, or relative to the current folder), else the
    same relative path in the package's data folder (data/train.jsonl and train.jsonl both name data/train.jsonl)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return str(given)
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    for folder in DATA_DIRS:
        if (folder / inside).is_file():
            return str(folder / inside)
    looked = ", ".join(str(p) for p in (Path.cwd() / given, *(folder / inside for folder in DATA_DIRS)))
    raise FileNotFoundError(f"dataset_path {path!r} not found (looked at {looked})")


def read_rows(config: V1MultipleChoiceConfig) -> Iterator[dict]:
    """Rows of a local file if dataset_path is set (.jsonl/.json/.csv/.parquet, text ones also .gz; see
    data_file), else of the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    from datasets import load_dataset  # only needed when tasks are loaded

    if config.dataset_path:
        builder = _BUILDERS.get(Path(Path(config.dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {config.dataset_path!r})")
        dataset = load_dataset(builder, data_files=data_file(config.dataset_path), split="train")
    elif config.dataset_name:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    else:
        raise ValueError(NO_DATASET)
    questions = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    options = [CHOICES_COLUMN] if isinstance(CHOICES_COLUMN, str) else list(CHOICES_COLUMN)
    missing = [c for c in (*questions, *options, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1MultipleChoiceData(vf.TaskData):
    choices: list[str]
    """The option texts, in order (their own labels removed)."""
    answer: str
    """The letter of the correct choice."""


class V1MultipleChoiceTask(vf.Task[V1MultipleChoiceData]):
    @vf.reward(weight=1.0)
    async def correct_choice(self, trace: vf.Trace) -> float:
        """1.0 when the boxed choice is the correct one."""
        return 1.0 if given_letter(last_boxed(trace.last_reply), self.data.choices) == self.data.answer else 0.0

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if last_boxed(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The correct letter must name one of the listed choices."""
        return self.data.answer in LETTERS[: len(self.data.choices)]


class V1MultipleChoiceConfig(vf.TasksetConfig):
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1MultipleChoiceTaskset(vf.Taskset[V1MultipleChoiceTask, V1MultipleChoiceConfig]):
    def load(self) -> Iterator[V1MultipleChoiceTask]:
        for i, row in enumerate(read_rows(self.config)):
            choices = row_choices(row)
            yield V1MultipleChoiceTask(
                V1MultipleChoiceData(
                    id=own_id(row) or str(i),
                    prompt=f"{prompt_text(row)}\n\n{listed(choices)}",
                    system_prompt=SYSTEM_PROMPT,
                    choices=option_texts(choices),
                    answer=answer_letter(row[ANSWER_COLUMN], choices),
                ),
                self.config.task,
            )


__all__ = ["V1MultipleChoiceTaskset"]
