"""Short answers with aliases (Natural Questions, TriviaQA, WebQuestions, SQuAD style) as a verifiers v1 taskset.

Each row has a question and its answer: one text, or a list of aliases any one of which is right (a JSON or
Arrow list, a list written as text, TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}: ``answer_list``).
The model puts its final answer in \\boxed{...}. The reward is 1.0 when that answer equals one of the aliases
after the usual QA normalisation (``normalise``: lower case, punctuation and the articles a/an/the dropped,
spaces collapsed, \\text{} unwrapped; a decimal point between digits kept, so 3.5 is never 35), else 0.0. The
token F1 against the best alias is a metric, never the reward; a second metric records whether a \\boxed{} answer
was given. `validate` checks every row has an alias a reply can match, so `vf-validate` catches empty answers.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import ast
import json
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: which dataset columns hold the question and the answer (one text, or a list of aliases).
# QUESTION_COLUMN may be a list of columns (e.g. ["context", "question"]): joined in order.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = (
    "Answer the question. Think briefly if you need to, then give only the final answer, a few words, inside \\boxed{}."
)

# Keys of an answer held as a record, in the order read: TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}.
_ANSWER_KEYS = ("value", "text", "answer", "aliases", "answers")


def answer_list(raw) -> list[str]:
    """Every answer a cell holds, as text, in order: a list (JSON or Arrow, or written as text: '["a", "b"]' or
    "['a', 'b']"; a list of texts only, so '[0, 3)' and '[1, 3]' stay one answer), a record of answers
    (TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}), or one value; [] for none. Repeats are kept."""
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if text[:1] == "[" and text[-1:] == "]":
            for read in (json.loads, ast.literal_eval):
                try:
                    listed = read(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(listed, list) and all(isinstance(item, str) for item in listed):
                    return answer_list(listed)
        return [text] if text else []
    if isinstance(raw, dict):
        return answer_list([raw[key] for key in _ANSWER_KEYS if raw.get(key) not in (None, "", [])])
    if hasattr(raw, "tolist") and not isinstance(raw, (int, float)):  # a NumPy array (pandas, Parquet)
        raw = raw.tolist()
    if isinstance(raw, (list, tuple)):
        return [text for item in raw for text in answer_list(item)]
    return answer_list(str(raw))


_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|textrm|texttt|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_PUNCTUATION = set(string.punctuation)


def normalise(text) -> str:
    """An answer as QA exact match compares it (SQuAD's rule): lower case, punctuation dropped, the articles a,
    an and the dropped, spaces collapsed. \\text{...} is unwrapped first, and a decimal point between two digits
    is kept (3.5 is not 35)."""
    text = _LATEX_TEXT.sub(r"\1", str(text or "")).casefold()
    text = _DECIMAL_POINT.sub("\0", text)
    text = "".join(ch for ch in text if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P"))
    text = _ARTICLES.sub(" ", text.replace("\0", "."))
    return " ".join(text.split())


def aliases_of(raw) -> list[str]:
    """The row's aliases: every answer the cell holds, each once (by its normalised form), in the data's order."""
    seen: dict[str, str] = {}
    for alias in answer_list(raw):
        seen.setdefault(normalise(alias) or alias, alias)
    return list(seen.values())


def given_answer(reply: str | None) -> str:
    """The reply's final answer: its last \\boxed{} after any reasoning block ('' for none, or an unclosed <think>)."""
    if not reply or ("<think>" in reply and "</think>" not in reply):
        return ""
    return (vf.extract_boxed_answer(reply.rsplit("</think>", 1)[-1], strict=True) or "").strip()


def matches(given: str, aliases: list[str]) -> bool:
    """The answer equals one of the aliases, both normalised (an empty answer never does). An alias normalising
    leaves nothing of ('A+', ')', 'The') is compared as written instead, case and spacing aside."""
    said = normalise(given)
    if said:
        return said in {normalise(alias) for alias in aliases}
    written = _as_written(given)
    return bool(written) and written in {_as_written(alias) for alias in aliases if not normalise(alias)}


def _as_written(text) -> str:
    """An answer with only its case, its spacing and \\text{} set aside."""
    return " ".join(_LATEX_TEXT.sub(r"\1", str(text or "")).casefold().split())


def best_token_f1(given: str, aliases: list[str]) -> float:
    """The best token F1 of the answer against any alias (SQuAD's metric), 0.0 for an empty answer."""
    got = normalise(given).split()
    best = 0.0
    for alias in aliases:
        want = normalise(alias).split()
        same = sum((Counter(got) & Counter(want)).values())
        if same:
            precision, recall = same / len(got), same / len(want)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


# The dataset's own id column, when it has one, is the task id (else the row's position).
ID_COLUMNS = ("id", "ID", "task_id", "Id", "uid")


def own_id(row: dict) -> str | None:
    """The row's own id: the first of ID_COLUMNS it has with a value; None when it has none."""
    return next((str(row[c]) for c in ID_COLUMNS if row.get(c) not in (None, "")), None)


def prompt_text(row: dict) -> str:
    """The prompt: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_short_answer_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_short_answer_data")
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


def read_rows(config: V1ShortAnswerConfig) -> Iterator[dict]:
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
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1ShortAnswerData(vf.TaskData):
    answer: str
    """The first alias (the answer reports show)."""
    aliases: list[str]
    """Every accepted answer, as the data writes it: any one of them is right."""


class V1ShortAnswerTask(vf.Task[V1ShortAnswerData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        """1.0 when the boxed answer equals one of the aliases (both normalised), else 0.0."""
        return 1.0 if matches(given_answer(trace.last_reply), self.data.aliases) else 0.0

    @vf.metric
    async def token_f1(self, trace: vf.Trace) -> float:
        """The boxed answer's best token F1 against the aliases (partial overlap; never the reward)."""
        return best_token_f1(given_answer(trace.last_reply), self.data.aliases)

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if given_answer(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The row must have an alias a reply can match (one that is not empty)."""
        return any(_as_written(alias) for alias in self.data.aliases)


class V1ShortAnswerConfig(vf.TasksetConfig):
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1ShortAnswerTaskset(vf.Taskset[V1ShortAnswerTask, V1ShortAnswerConfig]):
    def load(self) -> Iterator[V1ShortAnswerTask]:
        for i, row in enumerate(read_rows(self.config)):
            aliases = aliases_of(row[ANSWER_COLUMN])
            yield V1ShortAnswerTask(
                V1ShortAnswerData(
                    id=own_id(row) or str(i),
                    prompt=prompt_text(row),
                    system_prompt=SYSTEM_PROMPT,
                    answer=aliases[0] if aliases else "",
                    aliases=aliases,
                ),
                self.config.task,
            )


__all__ = ["V1ShortAnswerTaskset"]
